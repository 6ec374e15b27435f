//! Observed matches: a node, a key, and the tests its value must pass (`value`,
//! `contains`, `matches`, `lt`/`le`/`gt`/`ge`, or `absent`), in final expectations
//! and in `await: {observed: ...}`.

use super::names::Reader;
use crate::lang::scenario::raw;
use crate::lang::scenario::{Absence, Compare, Number, ObservedMatch, Pattern, ValueTest};
use crate::lang::yaml::{nearest, Node, Spanned, Value};
use schemars::{json_schema, Schema, SchemaGenerator};

/// Longest regular expression source accepted, and the compiled size bound: a
/// pattern is input like any other and must not cost unbounded memory.
const PATTERN_CHARS_MAX: usize = 1_000;
const PATTERN_BYTES_MAX: usize = 1 << 20;

const COMPARISONS: [(&str, Compare); 4] = [
    ("lt", Compare::Lt),
    ("le", Compare::Le),
    ("gt", Compare::Gt),
    ("ge", Compare::Ge),
];

impl Reader<'_, '_> {
    /// `observed:` of an expectation: a list of matches.
    pub(super) fn observed_list(&mut self, node: &Node) -> Vec<ObservedMatch> {
        let Value::Seq(items) = &node.value else {
            self.e.error(
                node.loc,
                format!(
                    "`observed` is a list of {{node, key, value}} matches, found {}",
                    node.kind_name()
                ),
            );
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.observed_match(item))
            .collect()
    }

    pub(super) fn observed_match(&mut self, item: &Node) -> Option<ObservedMatch> {
        let raw: raw::Observed = self.e.read(item)?;
        let node = self.target(&raw.node);
        let mut tests = Vec::new();
        let key_known = self.observed_key(&raw.key);
        let mut ok = node.is_some() && key_known;
        if let Some(value) = &raw.value {
            tests.push(ValueTest::Equals(value.clone()));
        }
        if let Some(text) = &raw.contains {
            tests.push(ValueTest::Contains(text.clone()));
        }
        if let Some(pattern) = &raw.matches {
            match compile(&pattern.value) {
                Ok(regex) => tests.push(ValueTest::Matches(Pattern(regex))),
                Err(message) => {
                    self.e.error(pattern.loc, message);
                    ok = false;
                }
            }
        }
        for (name, compare) in COMPARISONS {
            let Some(bound) = item.get(name) else {
                continue;
            };
            match number(bound) {
                Some(n) => tests.push(ValueTest::Compare(compare, n)),
                None => {
                    self.e.error(
                        bound.loc,
                        format!(
                            "`{name}` is a number (decimal, or hex like \"0x1f\"), found {}",
                            describe(bound)
                        ),
                    );
                    ok = false;
                }
            }
        }
        if let Some(absent) = item.get("absent") {
            match self.absence(absent, !tests.is_empty()) {
                Some(absence) => tests.push(ValueTest::Absent(absence)),
                None => ok = false,
            }
        }
        if tests.is_empty() && ok {
            self.e.error_hint(
                item.loc,
                "an observed match needs a test of the value",
                "one of `value`, `contains`, `matches`, `lt`, `le`, `gt`, `ge`, `absent`",
            );
            return None;
        }
        if !ok {
            return None;
        }
        Some(ObservedMatch {
            loc: item.loc,
            node: node?,
            key: raw.key.value,
            tests,
        })
    }
}

impl Reader<'_, '_> {
    /// Whether some key the model declares its nodes publish (a state key or a
    /// fact) is `key`; else an error with the nearest declared key. A model
    /// that declares none (one built into a target's binary) takes any key.
    fn observed_key(&mut self, key: &Spanned<String>) -> bool {
        let info = self.info;
        if info.observations.is_empty() || info.observations.iter().any(|o| o.matches(&key.value)) {
            return true;
        }
        let keys = info.observations.iter().map(|o| o.key);
        let list = format!("`faultline list {}` shows its keys", info.name);
        let hint = match nearest(&key.value, keys) {
            Some(best) => format!(
                "{} {list}",
                crate::base::text::did_you_mean(&key.value, best)
            ),
            None => list,
        };
        self.e.error_hint(
            key.loc,
            format!(
                "unknown observed key `{}`: no {} node publishes it as a state key or fact",
                key.value, info.name
            ),
            hint,
        );
        false
    }

    /// `absent: true | removed | never`, alone, and `removed`/`never` only for a
    /// model that reports removed keys.
    fn absence(&mut self, absent: &Node, with_other_tests: bool) -> Option<Absence> {
        let absence = match &absent.value {
            Value::Bool(true) => Absence::Either,
            Value::Str(s) if s == "removed" => Absence::Removed,
            Value::Str(s) if s == "never" => Absence::Never,
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => {
                self.e.error(
                    absent.loc,
                    format!(
                        "`absent` is `true`, `removed` or `never`, found {}",
                        describe(absent)
                    ),
                );
                return None;
            }
        };
        if absence != Absence::Either && !self.info.reports_removed {
            self.e.error_hint(
                absent.loc,
                format!(
                    "model `{}` does not report removed keys, so `absent: {}` cannot be told from `absent: true`",
                    self.info.name,
                    if absence == Absence::Removed { "removed" } else { "never" }
                ),
                "write `absent: true`",
            );
            return None;
        }
        if with_other_tests {
            self.e.error(
                absent.loc,
                "`absent` cannot be combined with a test of the value",
            );
            return None;
        }
        Some(absence)
    }
}

/// A regular expression with bounded source and compiled size.
fn compile(source: &str) -> Result<regex::Regex, String> {
    if source.chars().count() > PATTERN_CHARS_MAX {
        return Err(format!(
            "`matches` is at most {PATTERN_CHARS_MAX} characters"
        ));
    }
    regex::RegexBuilder::new(source)
        .size_limit(PATTERN_BYTES_MAX)
        .dfa_size_limit(PATTERN_BYTES_MAX)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or("").trim();
            let last = last.strip_prefix("error: ").unwrap_or(last);
            format!("`matches` is not a regular expression: {last}")
        })
}

fn number(node: &Node) -> Option<Number> {
    match &node.value {
        Value::Int(i) => Some(Number::Int(i128::from(*i))),
        Value::Float(f) if f.is_finite() => Some(Number::Float(*f)),
        Value::Str(s) => Number::parse(s),
        Value::Null | Value::Bool(_) | Value::Float(_) | Value::Seq(_) | Value::Map(_) => None,
    }
}

fn describe(node: &Node) -> String {
    match &node.value {
        Value::Str(s) => format!("`{s}`"),
        Value::Bool(b) => format!("`{b}`"),
        Value::Null | Value::Int(_) | Value::Float(_) | Value::Seq(_) | Value::Map(_) => {
            node.kind_name().to_string()
        }
    }
}

// ---- The JSON Schema of what this module reads from the tree. ----

/// The tests of a value other than the comparisons (see [`COMPARISONS`]).
const TESTS: [&str; 3] = ["value", "contains", "matches"];

/// An observed match (`await: {observed: ...}`).
pub(in crate::lang::scenario) fn observed_schema(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<raw::Observed>()
}

/// `absent:` as [`Reader::absence`] reads it.
pub(in crate::lang::scenario) fn absent_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"enum": [true, "removed", "never"]})
}

/// A bound of a comparison, as [`number`] reads it: a number, or its text.
pub(in crate::lang::scenario) fn bound_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["number", "string"]})
}

/// What [`Reader::observed_match`] asks: at least one test, and `absent` alone.
pub(in crate::lang::scenario) fn observed_shape(schema: &mut Schema) {
    let others: Vec<serde_json::Value> = TESTS
        .iter()
        .chain(COMPARISONS.iter().map(|(name, _)| name))
        .map(|name| serde_json::json!({"required": [name]}))
        .collect();
    let mut any = others.clone();
    any.push(serde_json::json!({"required": ["absent"]}));
    schema.insert("anyOf".into(), any.into());
    schema.insert(
        "dependentSchemas".into(),
        serde_json::json!({"absent": {"not": {"anyOf": others}}}),
    );
}
