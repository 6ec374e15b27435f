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
    /// What a chaos run may draw for it (`Fixed`: nothing).
    #[serde(skip)]
    pub chaos: ParamChaos,
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
    /// A value per node: a mapping from node names to values of `value`'s kind
    /// (a model reads it with [`PerNode`]). With `single`, one plain value for
    /// every node is accepted too. `every_node`: the mapping names each node of
    /// the scenario; `distinct`: no two nodes share a value (server ids).
    PerNode {
        value: Box<ParamKind>,
        single: bool,
        every_node: bool,
        distinct: bool,
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

/// What chaos may draw for one model param (distinct from what validation
/// accepts: the range a real deployment is configured in).
#[derive(Debug, PartialEq)]
pub enum ParamChaos {
    /// Left at the scenario's value (or the default).
    Fixed,
    /// An integer in `min..=max`, uniform; log-uniform when `max` is ten or more
    /// times `min` (timeouts and intervals span orders of magnitude).
    Range { min: i64, max: i64 },
    /// One of these values.
    Choices(&'static [ParamValue]),
}

/// Declarations, one line each in a model's `ModelInfo`.
impl ParamInfo {
    pub fn bool(name: &'static str, default: bool, summary: &'static str) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Bool,
            default: Some(ParamValue::Bool(default)),
            summary,
            chaos: ParamChaos::Fixed,
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
            chaos: ParamChaos::Fixed,
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
            chaos: ParamChaos::Fixed,
        }
    }

    pub fn text(name: &'static str, summary: &'static str) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Text,
            default: None,
            summary,
            chaos: ParamChaos::Fixed,
        }
    }

    pub fn node(name: &'static str, summary: &'static str) -> Self {
        ParamInfo {
            name,
            kind: ParamKind::Node,
            default: None,
            summary,
            chaos: ParamChaos::Fixed,
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
            chaos: ParamChaos::Fixed,
        }
    }
}

impl ParamInfo {
    /// The same declaration, with what chaos may draw for it.
    pub fn chaos(self, chaos: ParamChaos) -> Self {
        ParamInfo { chaos, ..self }
    }

    /// The same declaration, per node: one value for every node or a map from
    /// node names to values (nodes left out take the default).
    pub fn per_node(inner: ParamInfo) -> Self {
        ParamInfo {
            kind: ParamKind::PerNode {
                value: Box::new(inner.kind),
                single: true,
                every_node: false,
                distinct: false,
            },
            ..inner
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
            ParamKind::PerNode {
                value,
                single,
                every_node,
                distinct,
            } => {
                let inner = value.describe();
                let mut text = if *single {
                    format!("{inner}, or a map node -> {inner}")
                } else {
                    format!("a map node -> {inner}")
                };
                if *every_node {
                    text.push_str(", naming every node");
                }
                if *distinct {
                    text.push_str(", no value twice");
                }
                text
            }
        }
    }

    /// As [`ParamKind::check`], and for a per-node map, which node's entry is
    /// wrong (`None`: the map as a whole), so that the error can point at it.
    pub fn check_entry(
        &self,
        value: &serde_json::Value,
        nodes: &[&str],
    ) -> Result<(), (Option<String>, String)> {
        match (self, value) {
            (
                ParamKind::PerNode {
                    value,
                    every_node,
                    distinct,
                    ..
                },
                serde_json::Value::Object(map),
            ) => check_per_node(value, map, nodes, *every_node, *distinct),
            _ => self.check(value, nodes).map_err(|e| (None, e)),
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
            (
                ParamKind::PerNode {
                    value,
                    every_node,
                    distinct,
                    ..
                },
                J::Object(map),
            ) => check_per_node(value, map, nodes, *every_node, *distinct).map_err(|(_, e)| e),
            (ParamKind::PerNode { value, single, .. }, v) if *single => value.check(v, nodes),
            (kind, v) => Err(format!("expected {}, found {v}", kind.describe())),
        }
    }
}

/// A node map: every key a node of the scenario (when the nodes are known), every
/// value of the inner kind, and the map's own rules. An error names the entry it
/// is about (`None`: the map as a whole).
fn check_per_node(
    value: &ParamKind,
    map: &serde_json::Map<String, serde_json::Value>,
    nodes: &[&str],
    every_node: bool,
    distinct: bool,
) -> Result<(), (Option<String>, String)> {
    for (node, v) in map {
        if !nodes.is_empty() && !nodes.contains(&node.as_str()) {
            let message = format!(
                "`{node}` is not a node of this scenario (nodes: {})",
                nodes.join(", ")
            );
            return Err((Some(node.clone()), message));
        }
        value
            .check(v, nodes)
            .map_err(|e| (Some(node.clone()), format!("{node}: {e}")))?;
    }
    if every_node {
        let missing: Vec<&str> = nodes
            .iter()
            .copied()
            .filter(|n| !map.contains_key(*n))
            .collect();
        if !missing.is_empty() {
            return Err((None, format!("names no value for {}", missing.join(", "))));
        }
    }
    if distinct {
        let mut seen: Vec<(&serde_json::Value, &str)> = Vec::new();
        for (node, v) in map {
            if let Some((_, first)) = seen.iter().find(|(w, _)| *w == v) {
                let message = format!("{first} and {node} both have {v}");
                return Err((Some(node.clone()), message));
            }
            seen.push((v, node));
        }
    }
    Ok(())
}

/// A per-node parameter as a model reads it: one value for every node, or a
/// value per node name (nodes left out of the map get `None`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(untagged)]
pub enum PerNode<T> {
    All(T),
    Each(std::collections::BTreeMap<String, T>),
}

impl<T> PerNode<T> {
    /// The value for `node`, if the parameter gives it one.
    pub fn get(&self, node: &str) -> Option<&T> {
        match self {
            PerNode::All(value) => Some(value),
            PerNode::Each(map) => map.get(node),
        }
    }
}

impl<T: Default> Default for PerNode<T> {
    fn default() -> Self {
        PerNode::All(T::default())
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

    #[test]
    fn per_node_values_name_nodes_and_follow_their_rules() {
        let exit = ParamKind::PerNode {
            value: Box::new(ParamKind::Choice {
                choices: &["a", "b"],
            }),
            single: true,
            every_node: false,
            distinct: false,
        };
        let nodes = ["om1", "om2", "om3"];
        assert_eq!(exit.check(&json!("a"), &nodes), Ok(()));
        assert_eq!(exit.check(&json!({"om2": "b"}), &nodes), Ok(()));
        assert_eq!(
            exit.check(&json!({"om2": "c"}), &nodes),
            Err("om2: expected one of a|b, found \"c\"".into())
        );
        assert!(exit
            .check(&json!({"om9": "a"}), &nodes)
            .unwrap_err()
            .contains("`om9` is not a node"));
        assert_eq!(exit.describe(), "one of a|b, or a map node -> one of a|b");
        let sid = ParamKind::PerNode {
            value: Box::new(ParamKind::Integer { min: 1, max: 255 }),
            single: false,
            every_node: true,
            distinct: true,
        };
        let zk = ["zk1", "zk2", "zk3"];
        assert_eq!(
            sid.check(&json!({"zk1": 2, "zk2": 1, "zk3": 3}), &zk),
            Ok(())
        );
        assert_eq!(
            sid.check(&json!({"zk1": 2, "zk2": 1}), &zk),
            Err("names no value for zk3".into())
        );
        assert_eq!(
            sid.check(&json!({"zk1": 2, "zk2": 2, "zk3": 3}), &zk),
            Err("zk1 and zk2 both have 2".into())
        );
        assert!(sid
            .check(&json!(3), &zk)
            .unwrap_err()
            .contains("expected a map"));
        assert!(sid
            .check(&json!({"zk1": 0, "zk2": 1, "zk3": 3}), &zk)
            .unwrap_err()
            .starts_with("zk1: 0 is outside"));
    }

    #[test]
    fn a_per_node_param_reads_one_value_or_a_map() {
        let all: PerNode<String> = serde_json::from_value(json!("x")).unwrap();
        assert_eq!(all.get("om1").map(String::as_str), Some("x"));
        let each: PerNode<String> = serde_json::from_value(json!({"om2": "y"})).unwrap();
        assert_eq!(each.get("om2").map(String::as_str), Some("y"));
        assert_eq!(each.get("om1"), None);
    }
}
