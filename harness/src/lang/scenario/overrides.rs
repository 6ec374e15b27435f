//! Command-line overrides of what a scenario file says: `--bug KEY=MODE` and
//! `--param NAME=VALUE`, for every variant of every scenario a command loads
//! (`run`, `sweep`). Each is checked against the model as the file's own
//! values are; a param a chaos section draws is pinned to the given value.

use super::Scenario;
use faultline_api::BugMode;

/// The overrides of one command, as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `KEY=buggy|fixed`.
    pub bugs: Vec<String>,
    /// `NAME=VALUE` (VALUE read as YAML: `true`, `3`, `250`, `n1`, `[1, 2]`).
    pub params: Vec<String>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.bugs.is_empty() && self.params.is_empty()
    }

    /// The flags as a replay command takes them: ` --bug K=M --param N=V`.
    pub fn flags(&self) -> String {
        let mut out = String::new();
        for b in &self.bugs {
            out.push_str(&format!(" --bug {}", crate::base::text::shell_quote(b)));
        }
        for p in &self.params {
            out.push_str(&format!(" --param {}", crate::base::text::shell_quote(p)));
        }
        out
    }

    /// Apply every override to every variant of every scenario, or say why one
    /// cannot apply (the message names the flag and what would be accepted).
    pub fn apply(&self, scenarios: &mut [Scenario]) -> Result<(), String> {
        apply_bugs(scenarios, &self.bugs)?;
        apply_params(scenarios, &self.params)
    }
}

/// "none" or the names, comma-separated, for a message.
/// What follows an unknown `name` in the error: the nearest known one, if
/// any is near, and every known one.
fn known_list(name: &str, names: Vec<&str>) -> String {
    let known = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    match crate::lang::yaml::nearest(name, names.iter().copied()) {
        Some(best) => format!(
            "; {} (known: {known})",
            crate::base::text::did_you_mean(name, best)
        ),
        None => format!(" (known: {known})"),
    }
}

/// Read `--bug KEY=MODE` arguments: each key must be a bug of every
/// scenario's model. The modes, by key.
pub fn bug_set(scenarios: &[Scenario], bugs: &[String]) -> Result<faultline_api::BugSet, String> {
    let mut set = faultline_api::BugSet::default();
    for text in bugs {
        let Some((key, mode)) = text.split_once('=') else {
            return Err(format!(
                "cannot read `--bug {text}`; write KEY=buggy or KEY=fixed"
            ));
        };
        let mode = match mode {
            "buggy" => BugMode::Buggy,
            "fixed" => BugMode::Fixed,
            other => {
                return Err(format!(
                    "`--bug {text}`: unknown mode `{other}`; write buggy or fixed"
                ))
            }
        };
        for scenario in scenarios {
            let info = scenario.model.info();
            if info.bug(key).is_none() {
                return Err(format!(
                    "`--bug {text}`: model `{}` of {} declares no bug `{key}`{}",
                    info.name,
                    scenario.file,
                    known_list(key, info.bugs.iter().map(|b| b.key).collect())
                ));
            }
        }
        set.0.insert(key.to_string(), mode);
    }
    Ok(set)
}

/// `--bug KEY=MODE`, laid over every variant of every scenario.
pub fn apply_bugs(scenarios: &mut [Scenario], bugs: &[String]) -> Result<(), String> {
    let set = bug_set(scenarios, bugs)?;
    for scenario in scenarios.iter_mut() {
        for variant in &mut scenario.variants {
            for (key, mode) in &set.0 {
                variant.bugs.0.insert(key.clone(), *mode);
            }
        }
    }
    Ok(())
}

/// `--param NAME=VALUE`: each name must be a param of every scenario's model,
/// the value of its type; the merged params of every variant must satisfy the
/// model's own check. A chaos section that draws the param draws it no more.
pub fn apply_params(scenarios: &mut [Scenario], params: &[String]) -> Result<(), String> {
    for text in params {
        let Some((name, raw)) = text.split_once('=') else {
            return Err(format!(
                "cannot read `--param {text}`; write NAME=VALUE (e.g. `--param check_quorum=false`)"
            ));
        };
        let value = crate::lang::yaml::parse(raw, &crate::lang::yaml::Limits::default())
            .map(|node| node.to_json())
            .map_err(|e| format!("`--param {text}`: the value is not YAML: {}", e.message))?;
        for scenario in scenarios.iter_mut() {
            let info = scenario.model.info();
            if scenario.variants.iter().any(|v| v.target.is_some()) {
                return Err(format!(
                    "`--param {text}`: the variants of {} run on target builds, which read params only from the file",
                    scenario.file
                ));
            }
            let Some(param) = info.param(name) else {
                return Err(format!(
                    "`--param {text}`: model `{}` of {} has no param `{name}`{}",
                    info.name,
                    scenario.file,
                    known_list(name, info.params.iter().map(|p| p.name).collect())
                ));
            };
            let nodes: Vec<&str> = scenario.nodes.iter().map(|n| n.name.as_str()).collect();
            if let Err((_, message)) = param.kind.check_entry(&value, &nodes) {
                return Err(format!(
                    "`--param {text}`: {message} (`{name}` is {}: {})",
                    param.kind.describe(),
                    param.summary
                ));
            }
            for variant in &mut scenario.variants {
                let mut map = variant.params.as_object().cloned().unwrap_or_default();
                map.insert(name.to_string(), value.clone());
                let merged = serde_json::Value::Object(map);
                if let Err(message) = scenario.model.parse_params(&merged) {
                    return Err(format!(
                        "`--param {text}`: variant `{}` of {}: invalid params: {message}",
                        variant.name, scenario.file
                    ));
                }
                variant.params = merged;
            }
            if let Some(chaos) = &mut scenario.chaos {
                chaos.params.retain(|p| p.name != name);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::known_list;

    /// An unknown `--param` or `--bug` name gets the nearest known one.
    #[test]
    fn an_unknown_override_name_gets_a_did_you_mean() {
        let names = vec!["heartbeat_ms", "exit_order"];
        assert_eq!(
            known_list("exit_ordr", names.clone()),
            "; did you mean `exit_order`? (known: heartbeat_ms, exit_order)"
        );
        assert_eq!(
            known_list("nosuch", names),
            " (known: heartbeat_ms, exit_order)"
        );
        assert_eq!(known_list("x", Vec::new()), " (known: none)");
    }
}
