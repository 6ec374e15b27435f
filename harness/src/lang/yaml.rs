//! YAML loading for scenario files: the only module that touches the YAML library.
//!
//! Scenario files are parsed once into a location-annotated tree ([`Node`]); typed structs are
//! then deserialized from sub-trees with [`from_node`]. Working on a tree instead of streaming
//! straight into the final types buys us three things:
//!
//! * every error carries the `line:col` of the exact node that caused it;
//! * a caller can deserialize parts independently (e.g. each scenario step) and report *all*
//!   errors of a file instead of only the first;
//! * serde attributes such as `deny_unknown_fields` work as usual, with "did you mean" hints.
//!
//! Resource limits ([`Limits`]) are enforced while parsing, so a hostile file (huge, deeply
//! nested, or an alias bomb) is rejected before it can cost much time or memory.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Serialize, Serializer};

mod build;
mod deser;
#[cfg(test)]
mod tests;

/// A position in the source file; both numbers are 1-based (0:0 means "unknown").
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, serde::Deserialize,
)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// The value of a YAML node (YAML 1.2 core schema).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries in file order; keys are always scalars and unique (checked while parsing).
    Map(Vec<(Node, Node)>),
}

/// A YAML node with the location where it starts (for an alias: where the alias is).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub loc: Loc,
    pub value: Value,
}

/// Resource limits applied by [`parse`].
#[derive(Clone, Debug)]
pub struct Limits {
    /// Maximum file size in bytes.
    pub bytes_max: usize,
    /// Maximum nesting of sequences and mappings (the top-level collection is level 1).
    pub depth_max: usize,
    /// Maximum number of nodes, counting the copies made by alias expansion.
    pub nodes_max: usize,
    /// Maximum number of alias expansions, counting the aliases inside expanded anchors again
    /// every time they are copied (which is what makes a 'billion laughs' file blow up).
    pub alias_expansions_max: usize,
    /// Maximum bytes of scalar text in the tree, counting the copies made by alias
    /// expansion: one alias of a large anchored string copies all of it, so counting
    /// nodes alone lets a 1 MB file with 2,000 aliases of one 900 KB string ask for
    /// gigabytes.
    pub expanded_bytes_max: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            bytes_max: 1 << 20,
            depth_max: 32,
            nodes_max: 200_000,
            alias_expansions_max: 10_000,
            expanded_bytes_max: 8 << 20,
        }
    }
}

/// A parse or deserialization error at a source location.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub loc: Loc,
    pub message: String,
}

impl Error {
    pub fn new(loc: Loc, message: impl Into<String>) -> Self {
        Error {
            loc,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.loc, self.message)
    }
}

impl std::error::Error for Error {}

/// Parse one YAML document into a location-annotated tree.
///
/// Enforces `limits` with clear messages ("file is 3145728 bytes; the limit is 1048576",
/// "nesting deeper than 32 levels", "alias expansion limit reached (a 'billion laughs'
/// file?)..."). Duplicate mapping keys, non-scalar keys, an empty file ("empty document") and
/// more than one document are errors. Plain scalars resolve per the YAML 1.2 core schema
/// (`true`, `null`/`~`/empty, integers incl. `0x`/`0o`, floats incl. `.inf`/`.nan`); quoted and
/// block scalars are always strings. Only the standard `!!` tags (and `!`) are accepted.
pub fn parse(text: &str, limits: &Limits) -> Result<Node, Error> {
    build::parse(text, limits)
}

/// Deserialize `T` from `node`. On failure the error carries the location of the innermost
/// node where it failed: the value for a type error, the key for an unknown field, the
/// mapping for a missing field.
pub fn from_node<T: de::DeserializeOwned>(node: &Node) -> Result<T, Error> {
    T::deserialize(node).map_err(|e| e.or_at(node.loc))
}

impl Node {
    /// Entry `key` of a mapping whose key is the string `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key node of entry `key`, for errors that should point at the key itself.
    pub fn key_node(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(k, _)| k)
    }

    fn entry(&self, key: &str) -> Option<&(Node, Node)> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.as_str() == Some(key)),
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_) => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Seq(_)
            | Value::Map(_) => None,
        }
    }

    /// The kind of value, with an article, for messages: "expected X, found a string".
    pub fn kind_name(&self) -> &'static str {
        match self.value {
            Value::Null => "null (an empty value)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a decimal number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a sequence",
            Value::Map(_) => "a mapping",
        }
    }

    /// Convert to JSON (e.g. to pass op arguments on). Mapping keys become their text;
    /// non-finite floats, which JSON cannot hold, become the strings `.inf`, `-.inf`, `.nan`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| J::String(float_text(*f)), J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (scalar_text(&k.value).unwrap_or_default(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Text of a scalar as a string field sees it (`1` -> "1", `1.0` -> "1.0", `true` -> "true").
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("null".to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(float_text(*f)),
        Value::Str(s) => Some(s.clone()),
        Value::Seq(_) | Value::Map(_) => None,
    }
}

/// YAML spelling of a float. `Debug` keeps a `.0` on whole numbers, like the source had.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        ".nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.to_string()
    } else {
        format!("{f:?}")
    }
}

/// Magic newtype name through which [`Spanned`] asks our deserializer for the location.
const SPANNED_NAME: &str = "__faultline_yaml_spanned";

/// A value together with the location of the node it came from.
///
/// Works inside any struct deserialized by [`from_node`]. Through other deserializers, or
/// inside `#[serde(untagged)]` / `#[serde(tag = ...)]` / `#[serde(flatten)]` (which buffer
/// values in serde's own format first), the value still deserializes but `loc` is 0:0.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub loc: Loc,
    pub value: T,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(SPANNED_NAME, SpannedVisitor(PhantomData))
    }
}

/// Serializes as the bare value, so reports do not change shape when a field gets a span.
impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// Described as the bare value: the location is ours, not the file's (the
/// scenario file's JSON Schema, `crate::lang::scenario::schema`).
impl<T: schemars::JsonSchema> schemars::JsonSchema for Spanned<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

struct SpannedVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for SpannedVisitor<T> {
    type Value = Spanned<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    /// Our deserializer's private protocol: entry 1 is the packed location, entry 2 the value.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let missing = || de::Error::custom("Spanned: malformed location protocol");
        map.next_key::<IgnoredAny>()?.ok_or_else(missing)?;
        let loc = deser::unpack_loc(map.next_value::<u64>()?);
        map.next_key::<IgnoredAny>()?.ok_or_else(missing)?;
        let value = map.next_value::<T>()?;
        Ok(Spanned { loc, value })
    }

    /// Any other deserializer: no location available.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let value = T::deserialize(d)?;
        Ok(Spanned {
            loc: Loc::default(),
            value,
        })
    }
}

/// The candidate closest to `word` for a "did you mean" hint, if any is close enough.
///
/// Case-insensitive; counts insertions, deletions, substitutions and swaps of adjacent
/// letters as one edit each (optimal string alignment, from `strsim`). A candidate
/// qualifies with at most `max(2, len/3)` edits (at most half the word's length, so short
/// words need a near match), and fewer edits than the candidate has letters. Ties go to the
/// earliest candidate. Compose the hint with [`crate::base::text::did_you_mean`], which also says
/// when the word holds look-alike non-ASCII letters.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let len = word.chars().count();
    let allowed = (len / 3).max(2).min((len / 2).max(1));
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let lower = candidate.to_lowercase();
        let distance = strsim::osa_distance(&word, &lower);
        let close = distance <= allowed && distance < lower.chars().count();
        if close && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Write a JSON value as one line of flow-style YAML (`{crash: n1}`), quoting only
/// what YAML would otherwise read differently. The output always parses back to
/// the same value.
pub fn flow(value: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match value {
        J::Null => "null".into(),
        J::Bool(b) => b.to_string(),
        J::Number(n) => n.to_string(),
        J::String(s) => flow_string(s),
        J::Array(items) => format!(
            "[{}]",
            items.iter().map(flow).collect::<Vec<_>>().join(", ")
        ),
        J::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", flow_string(k), flow(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

fn flow_string(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && !matches!(
            text.to_ascii_lowercase().as_str(),
            // The YAML 1.2 core schema's special plain scalars (our parser's schema).
            "true" | "false" | "null" | ".inf" | ".nan"
        );
    if plain {
        text.to_string()
    } else {
        // A JSON string is a valid YAML double-quoted scalar.
        serde_json::to_string(text).expect("strings serialize")
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;

    #[test]
    fn flow_yaml_round_trips() {
        let value = serde_json::json!({
            "client": {"on": "n1", "op": "put", "key": "a b", "value": "1", "wait": false},
            "list": ["true", "x:y", "#c", "", "ok/path.v2", -3, 2.5, null, "null", "日本"],
        });
        let text = flow(&value);
        assert!(text.contains("on: n1"), "{text}");
        assert!(text.contains("value: \"1\""), "{text}");
        let back = parse(&text, &Limits::default()).unwrap().to_json();
        assert_eq!(back, value);
    }
}
