//! A model's parameters, declared: what `faultline list` shows, what the harness
//! checks a scenario's `params` against (with file:line:col), and what an explorer
//! may draw from. Bounds are the range in which the model is valid, not a guess.

use serde::Serialize;

/// A week, the longest duration a scenario may ask for (and so the top of most
/// interval bounds).
pub const WEEK_MS: u64 = 7 * 24 * 3600 * 1000;

#[derive(Debug, PartialEq, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The value the model uses when the scenario leaves the parameter out;
    /// `None` when leaving it out has a meaning of its own (the summary says which).
    pub default: Option<ParamValue>,
    pub summary: &'static str,
}

/// The type of a parameter, with its bounds (both inclusive).
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ParamKind {
    Bool,
    Integer {
        min: i64,
        max: i64,
    },
    /// A duration in milliseconds (the name ends in `_ms`).
    DurationMs {
        min: u64,
        max: u64,
    },
    Text,
    /// The name of one of the scenario's nodes.
    Node,
    /// One of these words.
    Choice {
        choices: &'static [&'static str],
    },
    /// A list of integers, each within `min..=max`, at most `len_max` long.
    IntegerList {
        min: i64,
        max: i64,
        len_max: usize,
    },
}

#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Integer(i64),
    Text(&'static str),
    Integers(&'static [i64]),
}

/// Declarations, one line each in a model's `ModelInfo`.
impl ParamInfo {
    pub fn bool(name: &'static str, default: bool, summary: &'static str) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Bool,
            default: Some(ParamValue::Bool(default)),
            summary,
        }
    }

    pub fn integer(
        name: &'static str,
        (min, max): (i64, i64),
        default: Option<i64>,
        summary: &'static str,
    ) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Integer { min, max },
            default: default.map(ParamValue::Integer),
            summary,
        }
    }

    pub fn duration_ms(
        name: &'static str,
        (min, max): (u64, u64),
        default: Option<u64>,
        summary: &'static str,
    ) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::DurationMs { min, max },
            default: default.map(|d| ParamValue::Integer(d as i64)),
            summary,
        }
    }

    pub fn text(name: &'static str, summary: &'static str) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Text,
            default: None,
            summary,
        }
    }

    pub fn node(name: &'static str, summary: &'static str) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Node,
            default: None,
            summary,
        }
    }

    pub fn choice(
        name: &'static str,
        choices: &'static [&'static str],
        default: &'static str,
        summary: &'static str,
    ) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Choice { choices },
            default: Some(ParamValue::Text(default)),
            summary,
        }
    }
}

impl ParamKind {
    /// The type and bounds as `faultline list` shows them.
    pub fn describe(&self) -> String {
        match self {
            ParamKind::Bool => "bool".into(),
            ParamKind::Integer { min, max } => format!("integer {min}..={max}"),
            ParamKind::DurationMs { min, max } => format!("duration (ms) {min}..={max}"),
            ParamKind::Text => "text".into(),
            ParamKind::Node => "node name".into(),
            ParamKind::Choice { choices } => format!("one of {}", choices.join("|")),
            ParamKind::IntegerList { min, max, len_max } => {
                format!("list of <= {len_max} integers {min}..={max}")
            }
        }
    }

    /// Check a value given in a scenario; the message says what was expected.
    pub fn check(&self, value: &serde_json::Value, nodes: &[&str]) -> Result<(), String> {
        use serde_json::Value as J;
        let int = |v: &J| v.as_i64().or_else(|| v.as_u64().map(|_| i64::MAX));
        match (self, value) {
            (ParamKind::Bool, J::Bool(_)) => Ok(()),
            (ParamKind::Integer { min, max }, v) if v.is_i64() || v.is_u64() => {
                let n = int(v).unwrap_or(i64::MAX);
                in_range(n, *min, *max, "")
            }
            (ParamKind::DurationMs { min, max }, v) if v.is_i64() || v.is_u64() => {
                let n = int(v).unwrap_or(i64::MAX);
                in_range(n, *min as i64, *max as i64, " ms")
            }
            (ParamKind::Text, J::String(_)) => Ok(()),
            (ParamKind::Node, J::String(name)) if nodes.contains(&name.as_str()) => Ok(()),
            (ParamKind::Node, J::String(name)) => Err(format!(
                "`{name}` is not a node of this scenario (nodes: {})",
                nodes.join(", ")
            )),
            (ParamKind::Choice { choices }, J::String(word))
                if choices.contains(&word.as_str()) =>
            {
                Ok(())
            }
            (ParamKind::IntegerList { min, max, len_max }, J::Array(items)) => {
                if items.len() > *len_max {
                    return Err(format!("at most {len_max} entries, found {}", items.len()));
                }
                for item in items {
                    match int(item) {
                        Some(n) => in_range(n, *min, *max, "")?,
                        None => return Err(format!("entries are integers, found {item}")),
                    }
                }
                Ok(())
            }
            (kind, v) => Err(format!("expected {}, found {v}", kind.describe())),
        }
    }
}

fn in_range(n: i64, min: i64, max: i64, unit: &str) -> Result<(), String> {
    if (min..=max).contains(&n) {
        Ok(())
    } else {
        Err(format!("{n}{unit} is outside {min}..={max}{unit}"))
    }
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Integer(i) => write!(f, "{i}"),
            ParamValue::Text(t) => write!(f, "{t}"),
            ParamValue::Integers(list) => {
                let items: Vec<String> = list.iter().map(i64::to_string).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_check_type_and_bounds() {
        let ms = ParamKind::DurationMs { min: 10, max: 100 };
        assert_eq!(ms.check(&json!(50), &[]), Ok(()));
        assert_eq!(
            ms.check(&json!(5), &[]),
            Err("5 ms is outside 10..=100 ms".into())
        );
        assert!(ms
            .check(&json!("50"), &[])
            .unwrap_err()
            .contains("expected duration (ms)"));
        assert!(ms.check(&json!(u64::MAX), &[]).is_err());
        let node = ParamKind::Node;
        assert_eq!(node.check(&json!("om1"), &["om1", "om2"]), Ok(()));
        assert!(node
            .check(&json!("om9"), &["om1"])
            .unwrap_err()
            .contains("not a node"));
        let choice = ParamKind::Choice {
            choices: &["a", "b"],
        };
        assert!(choice.check(&json!("c"), &[]).is_err());
        let list = ParamKind::IntegerList {
            min: 1,
            max: 9,
            len_max: 2,
        };
        assert_eq!(list.check(&json!([1, 9]), &[]), Ok(()));
        assert!(list.check(&json!([1, 2, 3]), &[]).is_err());
        assert!(list.check(&json!([0]), &[]).is_err());
        assert!(ParamKind::Bool.check(&json!(1), &[]).is_err());
    }
}
