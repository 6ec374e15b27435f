//! `faultline list [MODEL] [--scenarios DIR] [--json]`: the models (their
//! roles, params, ops, fail points, invariants, bugs, probes and published
//! keys), then the bundled scenarios.

use super::exit;
use super::term;
use crate::base::text::printable;
use crate::lang::scenario;
use faultline_api::ModelInfo;
use std::path::{Path, PathBuf};

/// One scenario file as `list` shows it.
struct Listed {
    file: String,
    /// `None`: the file does not load.
    model: Option<String>,
    variants: Vec<String>,
    /// (variant, the command that builds its target), for each one not built.
    unbuilt: Vec<(String, String)>,
}

fn list_scenarios(files: Vec<PathBuf>) -> Vec<Listed> {
    files
        .into_iter()
        .map(|file| {
            let shown = file.display().to_string();
            match scenario::load(&file) {
                Ok(s) => Listed {
                    file: shown,
                    model: Some(s.model.info().name.to_string()),
                    variants: s.variants.iter().map(|v| v.name.clone()).collect(),
                    unbuilt: s
                        .variants
                        .iter()
                        .filter_map(|v| {
                            let build = crate::lang::targets::resolve(&s.file, v.target.as_deref())
                                .ok()??;
                            build.check().err().map(|_| (v.name.clone(), build.build))
                        })
                        .collect(),
                },
                Err(_) => Listed {
                    file: shown,
                    model: None,
                    variants: Vec::new(),
                    unbuilt: Vec::new(),
                },
            }
        })
        .collect()
}

/// `faultline list [MODEL] [--scenarios DIR] [--json]`: the models (or one),
/// then the scenarios under DIR (of that model).
pub fn list(scenarios_dir: Option<&Path>, only: Option<&str>, json: bool) -> u8 {
    let models: Vec<&'static dyn faultline_api::Model> = crate::base::models::all()
        .into_iter()
        .filter(|m| only.is_none_or(|name| m.info().name == name))
        .collect();
    let dir = scenarios_dir.unwrap_or(Path::new("scenarios"));
    let listed = if dir.is_dir() {
        match scenario::scenario_files(&[dir.to_path_buf()]) {
            Ok(files) => Some(list_scenarios(files)),
            Err(message) => {
                term::error(message);
                return exit::BAD_INPUT;
            }
        }
    } else if scenarios_dir.is_none() {
        None
    } else {
        term::error(format!(
            "{}: not a directory of scenarios",
            printable(&dir.display().to_string())
        ));
        return exit::BAD_INPUT;
    };
    // With a model named, only its scenarios (a file that does not load is
    // shown either way: it might be one).
    let listed: Option<Vec<Listed>> = listed.map(|all| {
        all.into_iter()
            .filter(|l| only.is_none() || l.model.is_none() || l.model.as_deref() == only)
            .collect()
    });
    if let Some(name) = only {
        // A model of a target build is known here only by its scenarios.
        let in_scenarios = listed
            .iter()
            .flatten()
            .any(|l| l.model.as_deref() == Some(name));
        if models.is_empty() && !in_scenarios {
            let known: Vec<&str> = crate::base::models::all()
                .into_iter()
                .map(|m| m.info().name)
                .collect();
            term::error(format!(
                "no model named `{}`; the models are: {}",
                printable(name),
                known.join(", ")
            ));
            return exit::BAD_INPUT;
        }
    }
    if json {
        println!("{}", list_json(&models, listed.as_deref()));
        return exit::OK;
    }
    for model in &models {
        print_model(model.info());
    }
    let Some(listed) = listed else {
        // The default: running elsewhere than a checkout is fine; say why nothing follows.
        term::warning("no `scenarios` directory here; pass --scenarios DIR to list scenarios");
        return exit::OK;
    };
    println!(
        "bundled scenarios ({}):",
        printable(&dir.display().to_string())
    );
    for l in &listed {
        println!("{}", scenario_line(l));
    }
    exit::OK
}

/// `list --json`: the models' declarations and the scenarios found.
fn list_json(
    models: &[&'static dyn faultline_api::Model],
    listed: Option<&[Listed]>,
) -> serde_json::Value {
    serde_json::json!({
        "models": models.iter().map(|m| model_json(m.info())).collect::<Vec<_>>(),
        "scenarios": listed.iter().copied().flatten().map(|l| serde_json::json!({
            "file": l.file,
            "model": l.model,
            "valid": l.model.is_some(),
            "variants": l.variants,
            "not_built": l.unbuilt.iter().map(|(v, build)| serde_json::json!({
                "variant": v,
                "build": build,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// One scenario's line: its file, model and variants, and those not built.
fn scenario_line(l: &Listed) -> String {
    let shown = printable(&l.file).into_owned();
    let Some(model) = &l.model else {
        return format!("  {shown} (invalid: run `faultline validate` on it)");
    };
    let names: Vec<String> = l
        .variants
        .iter()
        .map(|v| printable(v).into_owned())
        .collect();
    let mut line = format!("  {shown} [{model}] variants: {}", names.join(", "));
    if !l.unbuilt.is_empty() {
        let names: Vec<String> = l
            .unbuilt
            .iter()
            .map(|(v, _)| printable(v).into_owned())
            .collect();
        let commands: std::collections::BTreeSet<String> =
            l.unbuilt.iter().map(|(_, c)| format!("`{c}`")).collect();
        let commands: Vec<String> = commands.into_iter().collect();
        line.push_str(&format!(
            " (not built: {}; build with {})",
            names.join(", "),
            commands.join(", ")
        ));
    }
    line
}

/// One model's declaration, as `list` prints it.
fn print_model(info: &ModelInfo) {
    println!("model {}: {}", info.name, info.summary);
    let roles: Vec<String> = info
        .roles
        .iter()
        .map(|r| format!("{} ({}..={})", r.name, r.count_min, r.count_max))
        .collect();
    println!("  roles: {}", roles.join(", "));
    println!("  params:");
    for p in &info.params {
        let default = p
            .default
            .as_ref()
            .map(|d| format!("default {d}"))
            .unwrap_or_else(|| "no default".into());
        println!(
            "    {:<32} {} ({default}): {}",
            p.name,
            p.kind.describe(),
            p.summary
        );
    }
    println!(
        "  ops (history judged as {}):",
        history_model_name(info.history)
    );
    for op in &info.ops {
        println!("    {:<20} {}  e.g. {}", op.name, op.summary, op.example);
        let mut promise = format!("      {}", op.consistency.name());
        if !op.answers.definite.is_empty() {
            promise.push_str(&format!(
                "; definite answers: {}",
                op.answers.definite.join(", ")
            ));
        }
        if !op.answers.refused.is_empty() {
            promise.push_str(&format!("; not applied: {}", op.answers.refused.join(", ")));
        }
        println!("{promise}");
    }
    print_checks(info);
    print_observations(info);
    println!();
}

/// A model's fail points, invariants, bugs and probes.
fn print_checks(info: &ModelInfo) {
    println!("  fail points:");
    for p in &info.fail_points {
        let mut actions = Vec::new();
        if !p.errors.is_empty() {
            actions.push(format!("error: {}", p.errors.join("|")));
        }
        if p.stall {
            actions.push("stall".into());
        }
        if p.panic {
            actions.push("panic".into());
        }
        println!("    {:<28} {} [{}]", p.name, p.summary, actions.join(", "));
    }
    println!("  invariants:");
    for i in &info.invariants {
        println!("    {:<28} ({:?}) {}", i.name, i.kind, i.summary);
    }
    println!("  bugs:");
    for b in &info.bugs {
        println!("    {:<16} {}", b.key, b.summary);
    }
    println!("  probes:");
    for p in &info.probes {
        // A sweep fails when a probe that is not rare is never hit.
        let rare = if p.rare { " [rare]" } else { "" };
        println!("    {:<44} {}{rare}", p.name, p.summary);
    }
}

/// The keys a model's nodes publish: what `observed:` can match.
fn print_observations(info: &ModelInfo) {
    if info.observations.is_empty() {
        return;
    }
    println!("  observed keys (`observed:` matches a state key, else a fact; <...> is any text):");
    for o in &info.observations {
        println!("    {:<44} {:<5} {}", o.key, o.kind.name(), o.summary);
    }
}

/// A model's declaration as `list --json` prints it.
fn model_json(info: &ModelInfo) -> serde_json::Value {
    serde_json::json!({
        "name": info.name,
        "summary": info.summary,
        "roles": info.roles.iter().map(|r| serde_json::json!({
            "name": r.name, "summary": r.summary, "count_min": r.count_min, "count_max": r.count_max,
        })).collect::<Vec<_>>(),
        "params": info.params,
        "history": history_model_name(info.history),
        "ops": info.ops.iter().map(|op| serde_json::json!({
            "name": op.name,
            "summary": op.summary,
            "example": op.example,
            "consistency": op.consistency.name(),
            "definite": op.answers.definite,
            "refused": op.answers.refused,
        })).collect::<Vec<_>>(),
        "fail_points": info.fail_points.iter().map(|p| serde_json::json!({
            "name": p.name, "summary": p.summary, "errors": p.errors, "stall": p.stall, "panic": p.panic,
        })).collect::<Vec<_>>(),
        "invariants": info.invariants.iter().map(|i| serde_json::json!({
            "name": i.name, "kind": format!("{:?}", i.kind).to_lowercase(), "summary": i.summary,
        })).collect::<Vec<_>>(),
        "bugs": info.bugs.iter().map(|b| serde_json::json!({
            "key": b.key, "summary": b.summary,
        })).collect::<Vec<_>>(),
        "probes": info.probes.iter().map(|p| serde_json::json!({
            "name": p.name, "summary": p.summary, "rare": p.rare,
        })).collect::<Vec<_>>(),
        "observations": info.observations.iter().map(|o| serde_json::json!({
            "key": o.key, "kind": o.kind.name(), "summary": o.summary,
        })).collect::<Vec<_>>(),
    })
}

fn history_model_name(model: faultline_api::HistoryModel) -> &'static str {
    match model {
        faultline_api::HistoryModel::None => "nothing",
        faultline_api::HistoryModel::Register => "a register per key",
        faultline_api::HistoryModel::ZooKeeper => "ZooKeeper's guarantees",
        faultline_api::HistoryModel::Own => "the model's own specification",
    }
}
