//! `faultline new MODEL`: a commented starting scenario, written from the model's
//! own declarations (roles, ops and their examples, fail points and the actions
//! they accept, bug keys, params, chaos domain), so it fits every model this
//! process knows, built in or registered by another binary. Nothing here is
//! written for one model by name.
//!
//! The scenario has the nodes, the model's setup (a leader, whatever its chaos
//! domain's setup creates), one client op from an op's example, one fault (a
//! restart, or a fail point when the model's domain leaves restarts out), a
//! `buggy`/`fixed` pair when the model has bug keys, and `chaos: {auto: true}`.
//! The caller validates the text before writing it.

use crate::lang::yaml::flow;
use faultline_api::{Consistency, FailPointInfo, ModelInfo, ParamKind};
use serde_json::Value;
use std::fmt::Write;
use std::time::Duration;

/// The starting scenario for `info`, named `name`. A model that is a build of a
/// real system (`release`: `0.10.0-alpha.37`) gets `target: NAME@RELEASE` on
/// each variant, so the file runs from any faultline binary that can reach the
/// build (`faultline-targets.yaml`), not only from the build's own.
pub fn scenario(info: &ModelInfo, release: Option<&str>, name: &str) -> String {
    let nodes = plan_nodes(info);
    let mut out = String::new();
    header(&mut out, info, name);
    nodes_section(&mut out, info, &nodes);
    params_section(&mut out, info, &nodes);
    variants_section(&mut out, info, release);
    steps_section(&mut out, info, &nodes);
    chaos_section(&mut out, info);
    out
}

/// One node of the scenario.
#[derive(Debug, Clone, PartialEq)]
struct Planned {
    name: String,
    role: &'static str,
}

/// Node names come from the names the model's op examples use (`on: dn1`,
/// `on: scm`, `node: n4`), matched to a role by name or abbreviation (`dn`
/// for `datanode`); a role no example names is `n` (the first role) or its
/// own name. The first role gets three nodes (within its bounds), every other
/// role its minimum, or one when an example sends an op to it.
fn plan_nodes(info: &ModelInfo) -> Vec<Planned> {
    let named = example_node_names(info);
    let stems: Vec<(String, bool)> = named
        .iter()
        .map(|n| {
            let stem = n.trim_end_matches(|c: char| c.is_ascii_digit());
            (stem.to_string(), stem.len() < n.len())
        })
        .collect();
    let mut role_stems: Vec<Option<(String, bool)>> = info
        .roles
        .iter()
        .map(|role| {
            stems
                .iter()
                .find(|(stem, _)| stem == role.name || abbreviates(stem, role.name))
                .cloned()
        })
        .collect();
    // A stem no role claims (`zk` for ZooKeeper's `server`) is the first role's.
    if let Some(first) = role_stems.first_mut() {
        if first.is_none() {
            *first = stems
                .iter()
                .find(|(stem, numbered)| {
                    *numbered
                        && !stem.is_empty()
                        && !info.roles.iter().any(|r| r.name == stem.as_str())
                })
                .cloned();
        }
    }
    let mut nodes = Vec::new();
    for (i, role) in info.roles.iter().enumerate() {
        let referenced = role_stems[i].is_some();
        let count = if i == 0 {
            3.clamp(role.count_min, role.count_max)
        } else if referenced {
            role.count_min.max(1).min(role.count_max)
        } else {
            role.count_min
        };
        let (stem, numbered) = role_stems[i].clone().unwrap_or_else(|| {
            if i == 0 {
                ("n".to_string(), true)
            } else {
                (role.name.to_string(), role.count_max > 1)
            }
        });
        for k in 1..=count {
            let name = if numbered || count > 1 {
                format!("{stem}{k}")
            } else {
                stem.clone()
            };
            nodes.push(Planned {
                name,
                role: role.name,
            });
        }
    }
    nodes
}

/// `dn` abbreviates `datanode`: same first letter, the rest in order.
fn abbreviates(stem: &str, role: &str) -> bool {
    let mut letters = role.chars();
    let mut stem_chars = stem.chars();
    match (stem_chars.next(), letters.next()) {
        (Some(a), Some(b)) if a == b => {}
        _ => return false,
    }
    stem_chars.all(|c| letters.any(|r| r == c))
}

/// The node names the op examples send to or name (`on:`, `node:`), in order.
fn example_node_names(info: &ModelInfo) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for op in &info.ops {
        let Some(Value::Object(map)) = parse_flow(op.example) else {
            continue;
        };
        for key in ["on", "node"] {
            if let Some(Value::String(name)) = map.get(key) {
                let word = matches!(name.as_str(), "leader" | "follower" | "any" | "all");
                if !word && !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
    }
    names
}

fn parse_flow(text: &str) -> Option<Value> {
    let node = crate::lang::yaml::parse(text, &crate::lang::yaml::Limits::default()).ok()?;
    crate::lang::yaml::from_node::<Value>(&node).ok()
}

/// `text` as `#` comment lines of at most 80 columns, indented by `indent`.
fn comment(out: &mut String, indent: usize, text: &str) {
    let pad = " ".repeat(indent);
    for line in wrap(text, 78usize.saturating_sub(indent).max(40)) {
        let _ = writeln!(out, "{pad}# {line}");
    }
}

/// A scalar as YAML writes it (quoted only when it must be).
fn scalar(text: &str) -> String {
    flow(&Value::String(text.to_string()))
}

fn header(out: &mut String, info: &ModelInfo, name: &str) {
    let model = info.name;
    comment(
        out,
        0,
        &format!(
            "A starting scenario for the `{model}` model, written by `faultline new \
             {model}`. Check it with `faultline validate FILE` and run it with \
             `faultline run FILE`. docs/scenario-format.md explains every key; \
             `faultline list {model}` shows the model's ops, fail points, \
             invariants, bug keys and params."
        ),
    );
    out.push('\n');
    comment(
        out,
        0,
        "The scenario's name in reports (default: the file name without `.yaml`).",
    );
    let _ = writeln!(out, "name: {}", scalar(name));
    comment(
        out,
        0,
        "Free text for reports: what this scenario tests, and why.",
    );
    let _ = writeln!(out, "description: |");
    let summary = format!(
        "A first scenario for {model}: {}. One client op and one fault, then a chaos \
         window over the model's whole domain. Say here what yours tests.",
        info.summary
    );
    for line in wrap(&summary, 76) {
        let _ = writeln!(out, "  {line}");
    }
    comment(out, 0, "The model that runs on every node.");
    let _ = writeln!(out, "model: {}", scalar(model));
}

fn nodes_section(out: &mut String, info: &ModelInfo, nodes: &[Planned]) {
    let roles: Vec<String> = info
        .roles
        .iter()
        .map(|r| format!("`{}` ({}..={})", r.name, r.count_min, r.count_max))
        .collect();
    let mut text = format!(
        "The nodes, by name. The model's roles, with how many nodes each takes: {}.",
        roles.join(", ")
    );
    let left_out: Vec<String> = info
        .roles
        .iter()
        .filter(|r| !nodes.iter().any(|n| n.role == r.name))
        .map(|r| format!("`{}`", r.name))
        .collect();
    if !left_out.is_empty() {
        text.push_str(&format!(
            " Left out here: {} (add `{{name: NAME, role: ROLE}}`).",
            left_out.join(", ")
        ));
    }
    let first = info.roles.first().map(|r| r.name);
    let one_role = nodes.iter().all(|n| Some(n.role) == first);
    if one_role && info.roles.len() > 1 {
        text.push_str(&format!(
            " A node given by name only has the first role, `{}`.",
            info.roles[0].name
        ));
    }
    comment(out, 0, &text);
    if one_role {
        let names: Vec<String> = nodes.iter().map(|n| scalar(&n.name)).collect();
        let _ = writeln!(out, "nodes: [{}]", names.join(", "));
    } else {
        let _ = writeln!(out, "nodes:");
        for n in nodes {
            let _ = writeln!(
                out,
                "  - {{name: {}, role: {}}}",
                scalar(&n.name),
                scalar(n.role)
            );
        }
    }
}

fn params_section(out: &mut String, info: &ModelInfo, nodes: &[Planned]) {
    if info.params.is_empty() {
        return;
    }
    comment(
        out,
        0,
        &format!(
            "Model parameters, laid over the model's defaults (a variant may lay its \
             own over these). Each one below shows its default; uncomment a line and \
             change it (`faultline list {}` says what each does).",
            info.name
        ),
    );
    let width = info.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &info.params {
        let line = match &p.default {
            Some(d) => format!("{:<width$}  {d}", format!("{}:", p.name), width = width + 1),
            None => {
                let first = nodes.first().map(|n| n.name.as_str()).unwrap_or("n1");
                let example = example_value(&p.kind, first);
                format!(
                    "{:<width$}  {example}    (no default: unset has a meaning of its own)",
                    format!("{}:", p.name),
                    width = width + 1
                )
            }
        };
        let _ = writeln!(out, "#   {line}");
    }
    let _ = writeln!(out, "params: {{}}");
}

/// A value of `kind` to show beside a param without a default.
fn example_value(kind: &ParamKind, node: &str) -> String {
    match kind {
        ParamKind::Bool => "true".into(),
        ParamKind::Integer { min, .. } => min.to_string(),
        ParamKind::DurationMs { min, .. } => min.to_string(),
        ParamKind::Text => "\"...\"".into(),
        ParamKind::Node => node.to_string(),
        ParamKind::Choice { choices } => choices.first().copied().unwrap_or("...").to_string(),
        ParamKind::IntegerList { min, .. } => format!("[{min}]"),
        ParamKind::PerNode { value, .. } => format!("{{{node}: {}}}", example_value(value, node)),
    }
}

fn variants_section(out: &mut String, info: &ModelInfo, release: Option<&str>) {
    let target = release.map(|r| target_text(info, r));
    let target = target.as_deref();
    if let (None, Some(_)) = (info.bugs.first(), target) {
        comment(
            out,
            0,
            "One variant: the build. `converged` means that after the heal phase \
             every replica agrees and every invariant holds (the others: diverged, \
             violated, stuck, crashed).",
        );
        let _ = writeln!(out, "variants:");
        let _ = writeln!(out, "  build:");
        target_note(out, target);
        let _ = writeln!(out, "    expect: converged");
        return;
    }
    let Some(bug) = info.bugs.first() else {
        comment(
            out,
            0,
            &format!(
                "What the run must end as: `converged` means that after the heal phase \
                 every replica agrees and every invariant holds (the others: diverged, \
                 violated, stuck, crashed). `{}` has no bug keys, so the scenario has one \
                 variant; `expect:` may also list outcomes or assert the trail.",
                info.name
            ),
        );
        let _ = writeln!(out, "expect: converged");
        return;
    };
    comment(
        out,
        0,
        "Variants run the same steps, each with its own bug modes and expectation; \
         a bug key a variant does not name runs `fixed`. The model's bug keys:",
    );
    for b in &info.bugs {
        for (i, line) in wrap(&format!("{}: {}", b.key, b.summary), 72)
            .into_iter()
            .enumerate()
        {
            let pad = if i == 0 { "" } else { "  " };
            let _ = writeln!(out, "#   {pad}{line}");
        }
    }
    bug_variants(out, bug, target);
}

/// `NAME@RELEASE` as the file writes it: `openraft@0.10.0-alpha.37` needs no
/// quotes (an `@` inside a plain scalar is only text), and the bundled files
/// write it so.
fn target_text(info: &ModelInfo, release: &str) -> String {
    let target = format!("{}@{release}", info.name);
    let plain = target.starts_with(|c: char| c.is_ascii_alphabetic())
        && target
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c));
    if plain {
        target
    } else {
        scalar(&target)
    }
}

/// A variant's `target:` line and its comment, when the scenario has a build.
fn target_note(out: &mut String, target: Option<&str>) {
    if let Some(target) = target {
        comment(
            out,
            4,
            "The build this variant runs (`faultline-targets.yaml` says which \
             binary has it); give each release you test a variant of its own.",
        );
        let _ = writeln!(out, "    target: {target}");
    }
}

/// The two variants of the model's first bug key: buggy and fixed.
fn bug_variants(out: &mut String, bug: &faultline_api::BugInfo, target: Option<&str>) {
    let key = scalar(bug.key);
    let _ = writeln!(out, "variants:");
    comment(
        out,
        2,
        &format!("`{}` buggy, the reported behaviour: {}", bug.key, bug.buggy),
    );
    let _ = writeln!(out, "  buggy:");
    target_note(out, target);
    let _ = writeln!(out, "    bugs: {{{key}: buggy}}");
    comment(
        out,
        4,
        "What the bug does to these steps is yours to say: they were not written to \
         reach it, so for now every outcome but `crashed` passes. Once your steps \
         reach the bug, keep the outcome it causes (diverged, violated or stuck) and \
         assert its mechanism with `trail:` entries (docs/scenario-format.md, \
         \"Variants and expectations\").",
    );
    let _ = writeln!(out, "    expect: [converged, diverged, violated, stuck]");
    comment(
        out,
        2,
        &format!("`{}` fixed, the fix: {}", bug.key, bug.fixed),
    );
    let _ = writeln!(out, "  fixed:");
    target_note(out, target);
    let _ = writeln!(out, "    bugs: {{{key}: fixed}}");
    comment(
        out,
        4,
        "`converged`: after the heal phase every replica agrees and every invariant \
         holds.",
    );
    let _ = writeln!(out, "    expect: converged");
}

fn steps_section(out: &mut String, info: &ModelInfo, nodes: &[Planned]) {
    comment(
        out,
        0,
        "The script, run in simulated time. A step that waits has a deadline \
         (`within`); one that misses it ends the script, and the run is `stuck`.",
    );
    let _ = writeln!(out, "steps:");
    // The model's own setup (what its chaos domain runs before a workload), with
    // a leader first for a model that has leaders.
    let setup: Vec<(&str, Value)> = info
        .chaos
        .setup
        .iter()
        .filter_map(|s| Some((*s, parse_flow(s)?)))
        .collect();
    let awaits_leader = |v: &Value| match v.get("await") {
        Some(Value::String(s)) => s == "leader",
        Some(Value::Object(m)) => m.contains_key("leader"),
        _ => false,
    };
    if info.has_leader && !setup.iter().any(|(_, v)| awaits_leader(v)) {
        comment(out, 2, "Wait until some node leads.");
        let _ = writeln!(out, "  - await: {{leader: any, within: 10s}}");
    }
    if !setup.is_empty() {
        comment(
            out,
            2,
            "The model's own setup (from its chaos domain): what a fresh cluster \
             needs before clients can work.",
        );
    }
    for (text, _) in &setup {
        let _ = writeln!(out, "  - {}", step_text(text));
    }
    client_step(out, info, nodes);
    fault_step(out, info, nodes);
}

/// A declared step in flow form, `{await: {leader: any, within: 5s}}`, as a
/// list item writes it: `await: {leader: any, within: 5s}` (the declaration's
/// own text, when it parses as a one-key mapping).
fn step_text(text: &str) -> String {
    let trimmed = text.trim();
    let one_key = matches!(parse_flow(trimmed), Some(Value::Object(m)) if m.len() == 1);
    match trimmed.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        Some(inner) if one_key => inner.trim().to_string(),
        _ => trimmed.to_string(),
    }
}

/// The op: the first whose history the checker judges and that the chaos
/// workload sends (so it works once the setup has run), else the first the
/// workload sends, else the first op. It is the op's example, as declared, with
/// `expect: ok` (and `on:` for a model without leaders whose example has none).
fn client_step(out: &mut String, info: &ModelInfo, nodes: &[Planned]) {
    let op = info
        .ops
        .iter()
        .find(|o| !o.chaos.is_empty() && o.consistency != Consistency::Unjudged)
        .or_else(|| info.ops.iter().find(|o| !o.chaos.is_empty()))
        .or_else(|| info.ops.first());
    let Some(op) = op else {
        return;
    };
    let Some(Value::Object(map)) = parse_flow(op.example) else {
        return;
    };
    let Some(inner) = op
        .example
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .map(str::trim)
    else {
        return;
    };
    let mut fields = Vec::new();
    let first = nodes.first().map(|n| n.name.clone()).unwrap_or_default();
    let names_a_node = |on: &str| {
        nodes.iter().any(|n| n.name == on)
            || on == "any"
            || (info.has_leader && (on == "leader" || on == "follower"))
    };
    let target = match map.get("on") {
        Some(Value::String(on)) if names_a_node(on) => {
            fields.push(inner.to_string());
            format!("to `{on}`")
        }
        Some(_) => {
            // The example names a node these nodes do not have: send it to the
            // first one, with the example's other fields as they are.
            fields.push(format!("on: {}", scalar(&first)));
            fields.extend(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "on")
                    .map(|(k, v)| format!("{}: {}", scalar(k), flow(v))),
            );
            format!("to `{first}`")
        }
        None if info.has_leader => {
            fields.push(inner.to_string());
            "to the leader (a step without `on:` goes there)".to_string()
        }
        None => {
            fields.push(format!("on: {}", scalar(&first)));
            fields.push(inner.to_string());
            format!("to `{first}`")
        }
    };
    let expect = if map.contains_key("expect") {
        ""
    } else {
        fields.push("expect: ok".into());
        " `expect: ok` fails the run on any other answer."
    };
    comment(
        out,
        2,
        &format!(
            "One client op, `{}` ({}), sent {target}; the step waits for the \
             answer.{expect} `faultline list {}` shows every op with an example.",
            op.name, op.summary, info.name
        ),
    );
    let _ = writeln!(out, "  - client: {{{}}}", fields.join(", "));
}

fn fault_step(out: &mut String, info: &ModelInfo, nodes: &[Planned]) {
    let excluded = |kind: &str| info.chaos.excluded.iter().any(|(k, _)| *k == kind);
    let restart = !excluded("restart") && !excluded("crash");
    let point = fail_point_step(info, nodes);
    let point_note = "`count: 1` fires it once; `optional: true` lets it never fire \
                      (an armed point that never fires fails the run otherwise).";
    if restart {
        let (who, what) = if info.has_leader {
            ("leader".to_string(), "the node that leads now".to_string())
        } else {
            let first = nodes.first().map(|n| n.name.clone()).unwrap_or_default();
            (first.clone(), format!("`{first}`"))
        };
        comment(
            out,
            2,
            &format!(
                "One fault: kill {what} (writes it had not synced are lost) and start \
                 it again from its durable state. Other faults: `crash`, `stop`, \
                 `start`, `partition`, `hold`, `latency`, `failpoint`."
            ),
        );
        let _ = writeln!(out, "  - restart: {}", scalar(&who));
        if let Some((line, why)) = &point {
            comment(
                out,
                2,
                &format!("Or fault inside the node's code (uncomment): {why}. {point_note}"),
            );
            let _ = writeln!(out, "  # - {line}");
        }
    } else if let Some((line, why)) = &point {
        comment(
            out,
            2,
            &format!("One fault, inside the node's code: {why}. {point_note}"),
        );
        let _ = writeln!(out, "  - {line}");
    }
    if info.has_leader {
        comment(out, 2, "The cluster has a leader again.");
        let _ = writeln!(out, "  - await: {{leader: any, within: 10s}}");
    }
}

/// A fail point step for the first point the model's chaos domain may arm (the
/// model survives it), on a node that reaches it: the step, and what it does.
fn fail_point_step(info: &ModelInfo, nodes: &[Planned]) -> Option<(String, String)> {
    let reaches = |p: &FailPointInfo| -> Option<String> {
        if p.chaos.leader && info.has_leader {
            return Some("leader".into());
        }
        nodes
            .iter()
            .find(|n| p.chaos.roles.is_empty() || p.chaos.roles.contains(&n.role))
            .map(|n| n.name.clone())
    };
    let point = info
        .fail_points
        .iter()
        .copied()
        .find(|p| p.chaos.in_domain() && reaches(p).is_some())?;
    let node = reaches(point)?;
    let (action, what) = if let Some(kind) = point.chaos.errors.first() {
        (
            format!("{{error: {}}}", scalar(kind)),
            format!("make it fail with `{kind}`"),
        )
    } else if let Some((min, max)) = point.chaos.stall_ms {
        let text = crate::base::duration::format(Duration::from_millis(500.clamp(min, max)));
        (
            format!("{{stall: {text}}}"),
            format!("stall it for {text} of simulated time"),
        )
    } else {
        ("panic".to_string(), "kill the process there".to_string())
    };
    let step = format!(
        "failpoint: {{node: {}, point: {}, action: {action}, count: 1, optional: true}}",
        scalar(&node),
        scalar(point.name)
    );
    let on = if node == "leader" {
        "the leader".to_string()
    } else {
        format!("`{node}`")
    };
    let summary = point.summary.trim_end_matches('.');
    let why = format!(
        "arm `{}` on {on} to {what}; the point: {summary}",
        point.name
    );
    Some((step, why))
}

fn chaos_section(out: &mut String, info: &ModelInfo) {
    // Twenty times the longest spacing the domain declares between two faults:
    // some tens of faults (raftkv: 1 m; hdds-reports, whose heartbeats take
    // seconds: 20 m).
    let window = Duration::from_millis(info.chaos.spacing_ms.1.max(1) * 20);
    comment(
        out,
        0,
        "After the steps, chaos: for `window` of simulated time a nemesis injects \
         random faults from the model's whole chaos domain (every fault kind, fail \
         point, op and param it declares, with swarm testing) while a workload sends \
         ops; then the heal phase, the model's final ops and the checkers. Every \
         draw comes from the seed: `faultline sweep FILE --seeds 1..100` runs 100 of \
         them. A key named here overrides the domain (`faults`, `params`, \
         `workload`, ...); delete the section for a scripted run only.",
    );
    let _ = writeln!(
        out,
        "chaos: {{auto: true, window: {}}}",
        crate::base::duration::format(window)
    );
}

/// `text` in lines of at most `width` characters (a longer word stays whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_match_roles() {
        assert!(abbreviates("dn", "datanode"));
        assert!(abbreviates("om", "om"));
        assert!(!abbreviates("zk", "server"));
        assert!(!abbreviates("", "server"));
    }

    #[test]
    fn every_built_in_model_gets_a_scenario_that_loads() {
        for model in nodes::registry::models() {
            let info = model.info();
            let text = scenario(info, None, &format!("{}-start", info.name));
            if let Err(e) = crate::lang::scenario::load_text("new.yaml", &text) {
                panic!("{}: {e:?}\n{text}", info.name);
            }
        }
    }

    /// A build of a real system: every variant names its target.
    #[test]
    fn a_build_names_its_target_in_every_variant() {
        let raftkv = nodes::registry::find("raftkv").unwrap().info();
        let text = scenario(raftkv, Some("1.2.3"), "x");
        assert_eq!(
            text.matches("\n    target: raftkv@1.2.3\n").count(),
            2,
            "{text}"
        );
        let faulty = nodes::registry::find("faulty").unwrap().info();
        let text = scenario(faulty, Some("1.2.3"), "x");
        assert!(text.contains("variants:\n  build:\n"), "{text}");
        assert!(
            text.contains("    target: faulty@1.2.3\n    expect: converged\n"),
            "{text}"
        );
    }
}
