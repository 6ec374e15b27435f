//! The shrunk scenario's text: what of the original file it keeps ([`Template`]),
//! rendered with a candidate's actions and waits.

use crate::base::action::Timed;
use crate::base::trail::Kind;
use crate::lang::scenario::Scenario;
use crate::lang::yaml::{flow, Node, Value};
use crate::sim::runner::RunResult;
use serde_json::json;

/// When the original script ended (the heal phase began), so the shrunk scenario
/// gives the cluster as long before its heal.
fn script_end_ms(result: &RunResult) -> u64 {
    result
        .trail
        .iter()
        .find(|e| e.kind == Kind::Heal)
        .map(|e| e.t_ms)
        .unwrap_or(result.sim_elapsed_ms)
}

/// Everything of the original scenario file a shrunk scenario keeps.
pub struct Template {
    header: Vec<(String, serde_json::Value)>,
    variant: String,
    variant_body: serde_json::Value,
    end_ms: u64,
    /// Whether the run was a chaos run: its transfers were draws the nemesis
    /// skips when they cannot happen, so they replay as optional steps.
    optional_transfers: bool,
    /// The shrunk scenario's own name (never the original's: a shrunk regression
    /// saved beside its source must not collide with it).
    name: String,
}

impl Template {
    pub fn new(
        original: &Node,
        scenario: &Scenario,
        result: &RunResult,
        name: &str,
    ) -> Result<Template, String> {
        let variant = scenario
            .variant(&result.variant)
            .ok_or_else(|| format!("no variant `{}`", result.variant))?;
        Template::with_variant(original, variant, result, name)
    }

    /// As [`Template::new`], for a run of `variant` whatever the run's own variant
    /// was called (a hunt's `hunt:KEY` variants exist only in the hunt).
    pub fn with_variant(
        original: &Node,
        variant: &crate::lang::scenario::Variant,
        result: &RunResult,
        name: &str,
    ) -> Result<Template, String> {
        let Value::Map(entries) = &original.value else {
            return Err("not a mapping".into());
        };
        let mut header = Vec::new();
        for (key, value) in entries {
            let Some(k) = key.as_str() else { continue };
            match k {
                "model" | "nodes" | "heal" => header.push((k.to_string(), value.to_json())),
                "defaults" => {
                    let mut defaults = value.to_json();
                    defaults["seed"] = json!(result.seed);
                    header.push((k.to_string(), defaults));
                }
                _ => {}
            }
        }
        if !header.iter().any(|(k, _)| k == "defaults") {
            header.push(("defaults".into(), json!({ "seed": result.seed })));
        }
        // The run's own bug modes and params (a `hunt` find runs with a `--bug`
        // override, a chaos run with drawn params): the shrunk scenario keeps them.
        let run_bugs = if result.bugs.0.is_empty() {
            &variant.bugs
        } else {
            &result.bugs
        };
        let run_params = if result.params.as_object().is_some_and(|p| !p.is_empty()) {
            &result.params
        } else {
            &variant.params
        };
        let mut bugs = serde_json::Map::new();
        for (key, mode) in &run_bugs.0 {
            bugs.insert(key.clone(), serde_json::to_value(mode).expect("serializes"));
        }
        // A variant that runs on a build elsewhere is validated there, so this
        // process knows its expectation only from the run.
        let expected = if variant.expect.outcomes.is_empty() {
            &result.expected
        } else {
            &variant.expect.outcomes
        };
        let outcomes: Vec<&str> = expected.iter().map(|o| o.name()).collect();
        let mut body = json!({ "expect": outcomes });
        // A variant that runs on a build of a real system keeps its build.
        if let Some(target) = &variant.target {
            body["target"] = json!(target);
        }
        if !bugs.is_empty() {
            body["bugs"] = serde_json::Value::Object(bugs);
        }
        if run_params.as_object().is_some_and(|p| !p.is_empty()) {
            body["params"] = run_params.clone();
        }
        Ok(Template {
            header,
            variant: variant.name.clone(),
            variant_body: body,
            end_ms: script_end_ms(result),
            optional_transfers: result.coverage.chaos,
            name: name.to_string(),
        })
    }

    /// When the script ends (the heal phase begins), in simulated ms.
    pub fn end_ms(&self) -> u64 {
        self.end_ms
    }

    /// A scenario with exactly these actions, at their original times.
    pub fn render(&self, actions: &[Timed], comment: &str) -> String {
        self.render_until(actions, self.end_ms, None, comment)
    }

    /// [`Template::render`] with the script ending at `end_ms` (the heal phase
    /// begins there), and with `variants` in place of the run's own variant.
    pub fn render_until(
        &self,
        actions: &[Timed],
        end_ms: u64,
        variants: Option<&serde_json::Map<String, serde_json::Value>>,
        comment: &str,
    ) -> String {
        let mut out = String::new();
        for line in comment.lines() {
            out.push_str(&format!("# {line}\n"));
        }
        out.push_str(&format!("name: {}\n", flow(&json!(self.name))));
        for (key, value) in &self.header {
            out.push_str(&format!("{key}: {}\n", flow(value)));
        }
        out.push_str("variants:\n");
        match variants {
            Some(variants) => {
                for (name, body) in variants {
                    out.push_str(&format!("  {}: {}\n", flow(&json!(name)), flow(body)));
                }
            }
            None => out.push_str(&format!(
                "  {}: {}\n",
                flow(&json!(self.variant)),
                flow(&self.variant_body)
            )),
        }
        out.push_str("steps:\n");
        let mut now = 0u64;
        for action in actions {
            if action.t_ms > now {
                out.push_str(&format!("  - sleep: {}ms\n", action.t_ms - now));
                now = action.t_ms;
            }
            out.push_str(&format!(
                "  # {} ms: {}\n",
                action.t_ms,
                action.detail.replace('\n', " ")
            ));
            let mut step = action.action.to_step();
            if self.optional_transfers {
                if let Some(body) = step.get_mut("transfer_leader") {
                    body["optional"] = json!(true);
                }
            }
            out.push_str(&format!("  - {}\n", step_line(&step)));
        }
        if end_ms > now {
            out.push_str(&format!("  - sleep: {}ms\n", end_ms - now));
        }
        if actions.is_empty() && end_ms <= now {
            out.push_str("  - sleep: 1ms\n");
        }
        out
    }
}

/// `{"crash": "n1"}` as `crash: n1`: a step is a one-key mapping.
fn step_line(step: &serde_json::Value) -> String {
    match step.as_object() {
        Some(map) if map.len() == 1 => {
            let (kind, body) = map.iter().next().expect("one entry");
            format!("{kind}: {}", flow(body))
        }
        _ => flow(step),
    }
}
