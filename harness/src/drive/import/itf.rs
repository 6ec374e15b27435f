//! Model-checker traces: the Informal Trace Format (ITF) of Apalache and Quint, and
//! TLC's `-dumpTrace json`, read into one [`Trace`].
//!
//! ITF (<https://apalache-mc.org/docs/adr/015adr-trace.html>) is JSON: `#meta`,
//! `vars`, `states` (each with `#meta.index`), and values in which integers are
//! `{"#bigint": "9"}` (or plain JSON integers), sets `{"#set": [..]}`, maps
//! `{"#map": [[k, v], ..]}`, tuples `{"#tup": [..]}`, values the checker could not
//! write `{"#unserializable": "..."}`, lists JSON arrays and records JSON objects.
//! Quint's `--mbt` adds `mbt::actionTaken` and `mbt::nondetPicks` to every state.
//!
//! TLC writes its counterexample with `-dumpTrace json FILE` as the record
//! `CounterExample` of its TLCExt module: `{"state": [[1, {vars}], ..], "action":
//! [[[i, {pre}], {"name": .., "context": {..}}, [j, {post}]], ..]}`, values in plain
//! JSON. The action record names the action that led to state `j`; its `context`
//! (the action's parameters) plays the part of Quint's nondet picks. Older TLC
//! versions write only the list of state records (`ToTrace`), without action names.
//!
//! Every error names the JSON path of the offending value (`$.states[3].x`).

use serde_json::Value as J;
use std::fmt;

/// Largest trace file read, and most states: a counterexample is short; a file
/// beyond these is not one.
pub const FILE_BYTES_MAX: usize = 16 * 1024 * 1024;
pub const STATES_MAX: usize = 5_000;

/// Metadata variables Quint's `--mbt` adds to every state; they are not spec variables.
pub const ACTION_TAKEN: &str = "mbt::actionTaken";
pub const NONDET_PICKS: &str = "mbt::nondetPicks";

/// A value of a trace, decoded from its JSON encoding.
///
/// Sets are sorted and maps sorted by key when read, so a value prints the same
/// however the checker ordered its elements.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    Bool(bool),
    Int(i128),
    Str(String),
    List(Vec<Value>),
    Set(Vec<Value>),
    Tup(Vec<Value>),
    Map(Vec<(Value, Value)>),
    /// Fields in file order. A sum type's value is a record `{tag, value}`.
    Record(Vec<(String, Value)>),
    /// A value the checker could not write; its text says what it was.
    Unserializable(String),
}

impl Value {
    /// The kind, with an article, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Str(_) => "a string",
            Value::List(_) => "a list",
            Value::Set(_) => "a set",
            Value::Tup(_) => "a tuple",
            Value::Map(_) => "a map",
            Value::Record(_) => "a record",
            Value::Unserializable(_) => "an unserializable value",
        }
    }

    /// A sum type's value (`{"tag": "Some", "value": 3}`) as (tag, value).
    pub fn as_variant(&self) -> Option<(&str, &Value)> {
        let Value::Record(fields) = self else {
            return None;
        };
        match fields.as_slice() {
            [(t, Value::Str(tag)), (v, value)] if t == "tag" && v == "value" => Some((tag, value)),
            [(v, value), (t, Value::Str(tag))] if t == "tag" && v == "value" => Some((tag, value)),
            _ => None,
        }
    }
}

/// One state of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The trace's own number for the state: ITF `#meta.index` (from 0), TLC's
    /// ordinal (from 1); else its position.
    pub index: u64,
    /// JSON path of the state, for messages.
    pub path: String,
    /// The action that led to this state, when the trace says.
    pub action: Option<String>,
    /// Where the action name was read, for messages.
    pub action_path: String,
    /// Nondeterministic choices of that action (Quint `mbt::nondetPicks`, the
    /// `Some` ones; TLC the action's `context`), in file order.
    pub picks: Vec<(String, Value)>,
    /// Spec variables, in file order, without the `mbt::` metadata.
    pub vars: Vec<(String, Value)>,
}

impl State {
    pub fn var(&self, name: &str) -> Option<&Value> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn pick(&self, name: &str) -> Option<&Value> {
        self.picks.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Itf,
    Tlc,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Itf => "ITF",
            Format::Tlc => "TLC -dumpTrace json",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub format: Format,
    /// Spec variables, as the trace declares them (ITF `vars`; TLC: the first
    /// state's), without the `mbt::` metadata.
    pub vars: Vec<String>,
    pub states: Vec<State>,
}

/// An error in a trace: the JSON path of the value and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub path: String,
    pub message: String,
}

impl TraceError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        TraceError {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// `$.states[3]` + `x` -> `$.states[3].x`; keys that are not plain names are quoted.
pub fn path_key(base: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{base}.{key}")
    } else {
        format!(
            "{base}[{}]",
            serde_json::to_string(key).expect("strings serialize")
        )
    }
}

fn path_index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// Read a trace from its text, ITF or TLC, whichever the top level shows.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
pub fn parse(text: &str) -> Result<Trace, TraceError> {
    if text.len() > FILE_BYTES_MAX {
        return Err(TraceError::new(
            "$",
            format!(
                "file is {} bytes; the limit is {FILE_BYTES_MAX}",
                text.len()
            ),
        ));
    }
    let json: J = serde_json::from_str(text).map_err(|e| {
        TraceError::new(
            "$",
            format!("not JSON (line {}, column {}): {e}", e.line(), e.column()),
        )
    })?;
    match &json {
        J::Object(top) if top.contains_key("states") => read_itf(&json),
        J::Object(top) if top.contains_key("state") => read_tlc_counterexample(&json),
        J::Array(_) => read_tlc_states(&json),
        J::Object(_) => Err(TraceError::new(
            "$",
            "neither an ITF trace (`vars`, `states`) nor a TLC trace (`state`, `action`)",
        )),
        other => Err(TraceError::new(
            "$",
            format!("a trace is a JSON object, found {}", json_kind(other)),
        )),
    }
}

fn json_kind(value: &J) -> &'static str {
    match value {
        J::Null => "null",
        J::Bool(_) => "a boolean",
        J::Number(_) => "a number",
        J::String(_) => "a string",
        J::Array(_) => "an array",
        J::Object(_) => "an object",
    }
}

fn read_itf(json: &J) -> Result<Trace, TraceError> {
    let vars = match json.get("vars") {
        None => return Err(TraceError::new("$", "ITF trace has no `vars`")),
        Some(J::Array(names)) => {
            let mut out = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let J::String(name) = name else {
                    return Err(TraceError::new(
                        &path_index("$.vars", i),
                        format!("a variable name is a string, found {}", json_kind(name)),
                    ));
                };
                if !name.starts_with("mbt::") {
                    out.push(name.clone());
                }
            }
            out
        }
        Some(other) => {
            return Err(TraceError::new(
                "$.vars",
                format!("`vars` is an array, found {}", json_kind(other)),
            ))
        }
    };
    let Some(J::Array(states)) = json.get("states") else {
        return Err(TraceError::new("$.states", "`states` is an array"));
    };
    check_states_len(states.len())?;
    let mut out = Vec::new();
    for (i, state) in states.iter().enumerate() {
        let path = path_index("$.states", i);
        let J::Object(fields) = state else {
            return Err(TraceError::new(
                &path,
                format!("a state is an object, found {}", json_kind(state)),
            ));
        };
        let index = match fields.get("#meta").and_then(|m| m.get("index")) {
            None => i as u64,
            Some(J::Number(n)) if n.is_u64() => n.as_u64().expect("checked"),
            Some(other) => {
                return Err(TraceError::new(
                    &format!("{path}[\"#meta\"].index"),
                    format!(
                        "a state index is a whole number, found {}",
                        json_kind(other)
                    ),
                ))
            }
        };
        let action_path = path_key(&path, ACTION_TAKEN);
        let action = match fields.get(ACTION_TAKEN) {
            None => None,
            Some(J::String(name)) => Some(name.clone()),
            Some(other) => {
                return Err(TraceError::new(
                    &action_path,
                    format!("an action name is a string, found {}", json_kind(other)),
                ))
            }
        };
        let picks = match fields.get(NONDET_PICKS) {
            None => Vec::new(),
            Some(picks) => read_picks(picks, &path_key(&path, NONDET_PICKS))?,
        };
        let mut values = Vec::new();
        for name in &vars {
            let var_path = path_key(&path, name);
            let value = fields.get(name).ok_or_else(|| {
                TraceError::new(
                    &path,
                    format!("state {index} has no value for the variable `{name}` (the trace's `vars` lists it)"),
                )
            })?;
            values.push((name.clone(), decode(value, &var_path)?));
        }
        for key in fields.keys() {
            if key != "#meta" && !key.starts_with("mbt::") && !vars.contains(key) {
                return Err(TraceError::new(
                    &path_key(&path, key),
                    format!("`{key}` is not among the trace's `vars`"),
                ));
            }
        }
        out.push(State {
            index,
            path,
            action,
            action_path,
            picks,
            vars: values,
        });
    }
    Ok(Trace {
        format: Format::Itf,
        vars,
        states: out,
    })
}

fn check_states_len(len: usize) -> Result<(), TraceError> {
    if len == 0 {
        return Err(TraceError::new("$.states", "the trace has no states"));
    }
    if len > STATES_MAX {
        return Err(TraceError::new(
            "$.states",
            format!("the trace has {len} states; the limit is {STATES_MAX}"),
        ));
    }
    Ok(())
}

/// Quint writes every nondet of the spec in every state: `Some(v)` for the ones the
/// action used, `None` for the rest. Plain values (other writers) are taken as is.
fn read_picks(picks: &J, path: &str) -> Result<Vec<(String, Value)>, TraceError> {
    let J::Object(fields) = picks else {
        return Err(TraceError::new(
            path,
            format!("nondet picks are a record, found {}", json_kind(picks)),
        ));
    };
    let mut out = Vec::new();
    for (name, value) in fields {
        let value = decode(value, &path_key(path, name))?;
        match value.as_variant() {
            Some(("None", _)) => {}
            Some(("Some", inner)) => out.push((name.clone(), inner.clone())),
            _ => out.push((name.clone(), value)),
        }
    }
    Ok(out)
}

#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn read_tlc_counterexample(json: &J) -> Result<Trace, TraceError> {
    let Some(J::Array(states)) = json.get("state") else {
        return Err(TraceError::new("$.state", "`state` is an array"));
    };
    check_states_len(states.len())?;
    let mut out = Vec::new();
    for (i, entry) in states.iter().enumerate() {
        let path = path_index("$.state", i);
        let (ordinal, vars) = match entry {
            J::Array(pair) if pair.len() == 2 => (&pair[0], &pair[1]),
            other => {
                return Err(TraceError::new(
                    &path,
                    format!(
                        "a TLC state is [ordinal, {{variables}}], found {}",
                        json_kind(other)
                    ),
                ))
            }
        };
        let index = ordinal.as_u64().ok_or_else(|| {
            TraceError::new(&path_index(&path, 0), "a state's ordinal is a whole number")
        })?;
        out.push(tlc_state(index, vars, &path_index(&path, 1))?);
    }
    out.sort_by_key(|s| s.index);
    // The action record of each step names the action that led to its post state.
    if let Some(actions) = json.get("action") {
        let J::Array(actions) = actions else {
            return Err(TraceError::new("$.action", "`action` is an array"));
        };
        for (i, step) in actions.iter().enumerate() {
            let path = path_index("$.action", i);
            let (record, post) = match step {
                J::Array(triple) if triple.len() == 3 => (&triple[1], &triple[2]),
                _ => {
                    return Err(TraceError::new(
                        &path,
                        "a TLC action is [[i, {pre}], {action}, [j, {post}]]",
                    ))
                }
            };
            let post = post
                .get(0)
                .and_then(J::as_u64)
                .ok_or_else(|| TraceError::new(&path_index(&path, 2), "no post-state ordinal"))?;
            let name_path = path_key(&path_index(&path, 1), "name");
            let name = record.get("name").and_then(J::as_str).ok_or_else(|| {
                TraceError::new(&name_path, "an action record has a string `name`")
            })?;
            let picks = match record.get("context") {
                None => Vec::new(),
                Some(context) => {
                    record_fields(context, &path_key(&path_index(&path, 1), "context"))?
                }
            };
            let state = out.iter_mut().find(|s| s.index == post).ok_or_else(|| {
                TraceError::new(
                    &path_index(&path, 2),
                    format!("the action leads to state {post}, which `state` does not have"),
                )
            })?;
            state.action = Some(name.to_string());
            state.action_path = name_path;
            state.picks = picks;
        }
    }
    // The initial state has no action record.
    if let Some(first) = out.first_mut() {
        if first.action.is_none() {
            first.action = Some("init".to_string());
        }
    }
    let vars = out[0].vars.iter().map(|(n, _)| n.clone()).collect();
    Ok(Trace {
        format: Format::Tlc,
        vars,
        states: out,
    })
}

/// `ToTrace(CounterExample)`: only the states' variables, numbered from 1.
fn read_tlc_states(json: &J) -> Result<Trace, TraceError> {
    let J::Array(states) = json else {
        unreachable!("called on arrays")
    };
    check_states_len(states.len()).map_err(|e| TraceError::new("$", e.message))?;
    let mut out = Vec::new();
    for (i, vars) in states.iter().enumerate() {
        out.push(tlc_state(i as u64 + 1, vars, &path_index("$", i))?);
    }
    let vars = out[0].vars.iter().map(|(n, _)| n.clone()).collect();
    Ok(Trace {
        format: Format::Tlc,
        vars,
        states: out,
    })
}

fn tlc_state(index: u64, vars: &J, path: &str) -> Result<State, TraceError> {
    Ok(State {
        index,
        path: path.to_string(),
        action: None,
        action_path: path.to_string(),
        picks: Vec::new(),
        vars: record_fields(vars, path)?,
    })
}

fn record_fields(json: &J, path: &str) -> Result<Vec<(String, Value)>, TraceError> {
    let J::Object(fields) = json else {
        return Err(TraceError::new(
            path,
            format!("expected a record, found {}", json_kind(json)),
        ));
    };
    fields
        .iter()
        .map(|(k, v)| Ok((k.clone(), decode(v, &path_key(path, k))?)))
        .collect()
}

/// Decode one ITF value; `path` names it in errors.
pub fn decode(json: &J, path: &str) -> Result<Value, TraceError> {
    match json {
        J::Bool(b) => Ok(Value::Bool(*b)),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Ok(Value::Int(i.into())),
            (None, Some(u)) => Ok(Value::Int(u.into())),
            _ => Err(TraceError::new(
                path,
                format!("{n} is not an integer (traces hold no fractional numbers)"),
            )),
        },
        J::String(s) => Ok(Value::Str(s.clone())),
        J::Array(items) => Ok(Value::List(decode_all(items, path)?)),
        J::Null => Err(TraceError::new(path, "null is not a trace value")),
        J::Object(fields) => {
            let special: Vec<&String> = fields.keys().filter(|k| k.starts_with('#')).collect();
            match special.as_slice() {
                [] => Ok(Value::Record(
                    fields
                        .iter()
                        .map(|(k, v)| Ok((k.clone(), decode(v, &path_key(path, k))?)))
                        .collect::<Result<_, TraceError>>()?,
                )),
                [key] if fields.len() == 1 => decode_special(key, &fields[*key], path),
                _ => Err(TraceError::new(
                    path,
                    format!(
                        "an encoded value has exactly one `#` key, found {}",
                        fields.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                )),
            }
        }
    }
}

fn decode_all(items: &[J], path: &str) -> Result<Vec<Value>, TraceError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| decode(item, &path_index(path, i)))
        .collect()
}

#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn decode_special(key: &str, body: &J, path: &str) -> Result<Value, TraceError> {
    let inner = path_key(path, key);
    match key {
        "#bigint" => {
            let text = body.as_str().ok_or_else(|| {
                TraceError::new(&inner, "`#bigint` holds a string of decimal digits")
            })?;
            let digits = text.strip_prefix('-').unwrap_or(text);
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(TraceError::new(
                    &inner,
                    format!("`#bigint` holds decimal digits, found {text:?}"),
                ));
            }
            text.parse::<i128>().map(Value::Int).map_err(|_| {
                TraceError::new(&inner, format!("{text} is out of range (|n| < 2^127)"))
            })
        }
        "#set" => {
            let J::Array(items) = body else {
                return Err(TraceError::new(&inner, "`#set` holds an array"));
            };
            let mut items = decode_all(items, &inner)?;
            items.sort();
            items.dedup();
            Ok(Value::Set(items))
        }
        "#tup" => {
            let J::Array(items) = body else {
                return Err(TraceError::new(&inner, "`#tup` holds an array"));
            };
            Ok(Value::Tup(decode_all(items, &inner)?))
        }
        "#map" => {
            let J::Array(entries) = body else {
                return Err(TraceError::new(
                    &inner,
                    "`#map` holds an array of [key, value]",
                ));
            };
            let mut out = Vec::new();
            for (i, entry) in entries.iter().enumerate() {
                let entry_path = path_index(&inner, i);
                match entry {
                    J::Array(pair) if pair.len() == 2 => out.push((
                        decode(&pair[0], &path_index(&entry_path, 0))?,
                        decode(&pair[1], &path_index(&entry_path, 1))?,
                    )),
                    _ => {
                        return Err(TraceError::new(
                            &entry_path,
                            "a `#map` entry is a [key, value] pair",
                        ))
                    }
                }
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            if let Some(w) = out.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(TraceError::new(
                    &inner,
                    format!("the map has the key {:?} twice", w[0].0),
                ));
            }
            Ok(Value::Map(out))
        }
        "#unserializable" => Ok(Value::Unserializable(
            body.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| body.to_string()),
        )),
        other => Err(TraceError::new(
            &inner,
            format!(
                "unknown ITF encoding `{other}` (known: #bigint, #set, #map, #tup, #unserializable)"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dec(value: J) -> Result<Value, TraceError> {
        decode(&value, "$.x")
    }

    #[test]
    fn decodes_every_itf_encoding() {
        assert_eq!(dec(json!({"#bigint": "-12"})), Ok(Value::Int(-12)));
        assert_eq!(
            dec(json!({"#bigint": "170141183460469231731687303715884105727"})),
            Ok(Value::Int(i128::MAX))
        );
        assert_eq!(dec(json!(7)), Ok(Value::Int(7)));
        assert_eq!(dec(json!(true)), Ok(Value::Bool(true)));
        assert_eq!(dec(json!("a")), Ok(Value::Str("a".into())));
        assert_eq!(
            dec(json!([{"#bigint": "2"}, "x"])),
            Ok(Value::List(vec![Value::Int(2), Value::Str("x".into())]))
        );
        // Sets are sorted and deduplicated: the writer's order does not matter.
        assert_eq!(
            dec(json!({"#set": [{"#bigint": "3"}, {"#bigint": "1"}, {"#bigint": "3"}]})),
            Ok(Value::Set(vec![Value::Int(1), Value::Int(3)]))
        );
        assert_eq!(
            dec(json!({"#tup": [{"#bigint": "1"}, "a"]})),
            Ok(Value::Tup(vec![Value::Int(1), Value::Str("a".into())]))
        );
        assert_eq!(
            dec(json!({"#map": [[{"#bigint": "2"}, "CLOSED"], [{"#bigint": "1"}, "OPEN"]]})),
            Ok(Value::Map(vec![
                (Value::Int(1), Value::Str("OPEN".into())),
                (Value::Int(2), Value::Str("CLOSED".into())),
            ]))
        );
        assert_eq!(
            dec(json!({"c": {"#bigint": "1"}, "st": "DELETED"})),
            Ok(Value::Record(vec![
                ("c".into(), Value::Int(1)),
                ("st".into(), Value::Str("DELETED".into())),
            ]))
        );
        assert_eq!(
            dec(json!({"#unserializable": "Nat"})),
            Ok(Value::Unserializable("Nat".into()))
        );
        let some = dec(json!({"tag": "Some", "value": {"#bigint": "4"}})).unwrap();
        assert_eq!(some.as_variant(), Some(("Some", &Value::Int(4))));
    }

    #[test]
    fn bad_encodings_name_their_path() {
        let err = |v: J| dec(v).unwrap_err().to_string();
        assert_eq!(
            err(json!({"a": [{"#bigint": "1x"}]})),
            "$.x.a[0][\"#bigint\"]: `#bigint` holds decimal digits, found \"1x\""
        );
        assert_eq!(
            err(json!({"#bigint": "1000000000000000000000000000000000000000000"})),
            "$.x[\"#bigint\"]: 1000000000000000000000000000000000000000000 is out of range (|n| < 2^127)"
        );
        assert!(err(json!({"#sett": []})).contains("unknown ITF encoding `#sett`"));
        assert!(err(json!({"#map": [[1]]})).starts_with("$.x[\"#map\"][0]: "));
        assert!(err(json!({"#map": [[1, 2], [1, 3]]})).contains("the key Int(1) twice"));
        assert!(err(json!(1.5)).contains("not an integer"));
        assert!(err(json!(null)).contains("null is not a trace value"));
        assert!(err(json!({"#set": [], "x": 1})).contains("exactly one `#` key"));
    }

    #[test]
    fn reads_an_itf_trace_with_mbt_metadata() {
        let text = r##"{"#meta": {"format": "ITF"},
            "vars": ["m::x", "mbt::actionTaken", "mbt::nondetPicks"],
            "states": [
              {"#meta": {"index": 0}, "m::x": {"#bigint": "0"}, "mbt::actionTaken": "init",
               "mbt::nondetPicks": {"c": {"tag": "None", "value": {"#tup": []}}}},
              {"#meta": {"index": 1}, "m::x": {"#bigint": "2"}, "mbt::actionTaken": "add",
               "mbt::nondetPicks": {"c": {"tag": "Some", "value": {"#bigint": "2"}}}}]}"##;
        let trace = parse(text).unwrap();
        assert_eq!(trace.format, Format::Itf);
        assert_eq!(trace.vars, vec!["m::x".to_string()]);
        assert_eq!(trace.states.len(), 2);
        let s1 = &trace.states[1];
        assert_eq!((s1.index, s1.action.as_deref()), (1, Some("add")));
        assert_eq!(s1.pick("c"), Some(&Value::Int(2)));
        assert_eq!(trace.states[0].pick("c"), None);
        assert_eq!(s1.var("m::x"), Some(&Value::Int(2)));
        assert_eq!(s1.path, "$.states[1]");
        assert_eq!(s1.action_path, "$.states[1][\"mbt::actionTaken\"]");
    }

    #[test]
    fn a_state_without_a_declared_variable_is_an_error() {
        let text = r#"{"vars": ["x", "y"], "states": [{"x": 1, "y": 2}, {"x": 1}]}"#;
        let err = parse(text).unwrap_err();
        assert_eq!(err.path, "$.states[1]");
        assert!(
            err.message.contains("no value for the variable `y`"),
            "{err}"
        );
    }

    #[test]
    fn reads_a_tlc_counterexample() {
        let text = r#"{
          "state": [[1, {"x": 0, "s": ["a"]}], [2, {"x": 1, "s": ["a", "b"]}]],
          "action": [[[1, {"x": 0, "s": ["a"]}],
                      {"name": "Add", "context": {"v": "b"}, "location": {"module": "M"}},
                      [2, {"x": 1, "s": ["a", "b"]}]]]}"#;
        let trace = parse(text).unwrap();
        assert_eq!(trace.format, Format::Tlc);
        assert_eq!(trace.vars, vec!["x".to_string(), "s".to_string()]);
        assert_eq!(trace.states[0].action.as_deref(), Some("init"));
        assert_eq!(trace.states[1].action.as_deref(), Some("Add"));
        assert_eq!(trace.states[1].index, 2);
        assert_eq!(trace.states[1].pick("v"), Some(&Value::Str("b".into())));
        assert_eq!(trace.states[1].action_path, "$.action[0][1].name");
    }

    #[test]
    fn reads_tlc_states_without_actions() {
        let trace = parse(r#"[{"x": 0}, {"x": 1}]"#).unwrap();
        assert_eq!(trace.format, Format::Tlc);
        assert_eq!(trace.states[1].index, 2);
        assert_eq!(trace.states[1].action, None);
    }

    #[test]
    fn not_a_trace() {
        assert!(parse("{").unwrap_err().message.starts_with("not JSON"));
        assert!(parse(r#"{"a": 1}"#)
            .unwrap_err()
            .message
            .contains("neither an ITF"));
        assert!(parse(r#"{"vars": [], "states": []}"#)
            .unwrap_err()
            .message
            .contains("no states"));
    }
}
