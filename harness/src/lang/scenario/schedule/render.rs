//! A scenario file that plays a given schedule: the original file's keys, in
//! its order, with its chaos section kept whole (its swarm draws and params come
//! out the same for the same seed) and `schedule:` written inline, one fault or
//! op a line. What guided search writes for a find and `faultline shrink` for a
//! shrunk run: a file that, run on its own, is that run.

use crate::lang::yaml::{flow, Node, Value};
use serde_json::{json, Value as Json};

/// The scenario `original` with `name`, these `variants` (a mapping from name
/// to body), the seed as its default, its chaos configured by `config_seed` when
/// that is given, and its chaos window playing `schedule` (a schedule
/// document); `comment` goes on top, a `#` line each.
pub fn scenario(
    original: &Node,
    name: &str,
    variants: &Json,
    seed: u64,
    config_seed: Option<u64>,
    schedule: &Json,
    comment: &str,
) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(&format!("name: {}\n", flow(&json!(name))));
    let Value::Map(entries) = &original.value else {
        return out;
    };
    let mut wrote_defaults = false;
    for (key, value) in entries {
        let Some(k) = key.as_str() else { continue };
        match k {
            "name" | "expect" => {}
            "variants" => out.push_str(&format!("variants:\n{}", block_map(variants, 1))),
            "defaults" => {
                let mut defaults = value.to_json();
                defaults["seed"] = json!(seed);
                out.push_str(&format!("defaults: {}\n", flow(&defaults)));
                wrote_defaults = true;
            }
            "steps" => {
                out.push_str("steps:\n");
                let steps = value.to_json();
                if let Json::Array(steps) = steps {
                    for step in steps {
                        out.push_str(&format!("  - {}\n", flow(&step)));
                    }
                } else {
                    out.push_str(&format!("  - {}\n", flow(&steps)));
                }
            }
            "chaos" => {
                let mut chaos = value.to_json();
                if let Some(window) = schedule.get("window") {
                    chaos["window"] = window.clone();
                }
                // The run's own configuration: a file's `config_seed` the run
                // did not use would configure the replay otherwise.
                if let Json::Object(map) = &mut chaos {
                    match config_seed {
                        Some(seed) => map.insert("config_seed".into(), json!(seed)),
                        None => map.remove("config_seed"),
                    };
                }
                out.push_str("chaos:\n");
                if let Json::Object(map) = &chaos {
                    for (k, v) in map {
                        if k != "schedule" {
                            out.push_str(&format!("  {}: {}\n", flow(&json!(k)), flow(v)));
                        }
                    }
                }
                out.push_str("  schedule:\n");
                out.push_str(&schedule_block(schedule, 2));
            }
            other => out.push_str(&format!("{other}: {}\n", flow(&value.to_json()))),
        }
    }
    if !wrote_defaults {
        out.push_str(&format!("defaults: {}\n", flow(&json!({ "seed": seed }))));
    }
    if !entries.iter().any(|(k, _)| k.as_str() == Some("variants")) {
        out.push_str(&format!("variants:\n{}", block_map(variants, 1)));
    }
    out
}

/// A schedule document as block YAML at `depth` (two spaces a level).
pub fn schedule_block(schedule: &Json, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let mut out = String::new();
    if let Some(window) = schedule.get("window") {
        out.push_str(&format!("{pad}window: {}\n", flow(window)));
    }
    for list in ["faults", "ops"] {
        let Some(Json::Array(items)) = schedule.get(list) else {
            continue;
        };
        if items.is_empty() {
            out.push_str(&format!("{pad}{list}: []\n"));
            continue;
        }
        out.push_str(&format!("{pad}{list}:\n"));
        for item in items {
            out.push_str(&format!("{pad}  - {}\n", flow(item)));
        }
    }
    out
}

fn block_map(map: &Json, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let mut out = String::new();
    if let Json::Object(entries) = map {
        for (k, v) in entries {
            out.push_str(&format!("{pad}{}: {}\n", flow(&json!(k)), flow(v)));
        }
    }
    out
}
