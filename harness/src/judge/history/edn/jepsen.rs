//! The Jepsen mapping: a [`History`] exported as EDN in the shapes Jepsen's
//! checkers read (generic, Knossos's register, Elle's list-append), and a
//! published Jepsen history read back as a [`History`].

use super::{parse, Edn, EdnError};
use crate::judge::history::event::{Event, EventType};
use crate::judge::history::op::text;
use crate::judge::history::record::{History, HistoryError};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

/// Which of Jepsen's checkers the export is shaped for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdnShape {
    /// Every op as it is: `:f :<f>`, `:value` the arguments map on the invoke and
    /// the result on the completion.
    Generic,
    /// Knossos's register (`:read`, `:write`, `:cas`): `put`/`write` become
    /// `:write v`, `get`/`read` become `:read` (`nil` on the invoke and for an
    /// absent key: Knossos accepts a `nil` read as any value), `delete` becomes
    /// `:write nil`, `cas` keeps `[old new]`. `Some(key)`: only that key's ops,
    /// with plain values (Knossos checks one register). `None`: every key, the
    /// value as a `[key value]` tuple, the shape of `jepsen.independent`.
    Register { key: Option<String> },
    /// Elle's list-append: `append` becomes `:f :txn :value [[:append k v]]`, a
    /// read `[[:r k nil]]` on the invoke and `[[:r k [..]]]` on the completion.
    ListAppend,
}

/// Register ops by Jepsen's name.
fn register_f(f: &str) -> Option<&'static str> {
    match f {
        "read" | "get" => Some("read"),
        "write" | "put" | "delete" => Some("write"),
        "cas" => Some("cas"),
        _ => None,
    }
}

fn key_of(args: &Value) -> Option<String> {
    args.get("key").filter(|k| !k.is_null()).map(text)
}

fn key_edn(key: &str) -> Edn {
    match key.parse::<i64>() {
        Ok(i) => Edn::Int(i),
        Err(_) => Edn::Str(key.to_string()),
    }
}

/// One exported event's `:f` and `:value`, or `None` when the shape leaves it out.
fn shaped(shape: &EdnShape, event: &Event, invoke_args: &Value) -> Option<(Edn, Edn)> {
    let value_arg = || Edn::from_json(invoke_args.get("value").unwrap_or(&Value::Null));
    match shape {
        EdnShape::Generic => Some((Edn::kw(&event.f), Edn::from_json(&event.value))),
        EdnShape::Register { key } => {
            let f = register_f(&event.f)?;
            let op_key = key_of(invoke_args);
            if key.is_some() && key != &op_key {
                return None;
            }
            let plain = match (f, event.kind) {
                ("read", EventType::Invoke) => Edn::Nil,
                ("read", EventType::Ok) if event.error.is_some() => Edn::Nil,
                ("read", EventType::Ok) => Edn::from_json(&event.value),
                ("read", _) => Edn::Nil,
                ("write", _) if event.f == "delete" => Edn::Nil,
                _ => value_arg(),
            };
            let value = match (key, op_key) {
                (None, Some(k)) => Edn::Vector(vec![key_edn(&k), plain]),
                _ => plain,
            };
            Some((Edn::kw(f), value))
        }
        EdnShape::ListAppend => {
            let k = key_edn(&key_of(invoke_args)?);
            let micro = match event.f.as_str() {
                "append" => vec![Edn::kw("append"), k, value_arg()],
                "read" | "get" => {
                    let read = match event.kind {
                        EventType::Ok if event.error.is_some() => Edn::Vector(vec![]),
                        EventType::Ok => match Edn::from_json(&event.value) {
                            Edn::Nil => Edn::Vector(vec![]),
                            list @ (Edn::Bool(_)
                            | Edn::Int(_)
                            | Edn::Float(_)
                            | Edn::Str(_)
                            | Edn::Keyword(_)
                            | Edn::Symbol(_)
                            | Edn::Vector(_)
                            | Edn::List(_)
                            | Edn::Set(_)
                            | Edn::Map(_)) => list,
                        },
                        EventType::Invoke | EventType::Fail | EventType::Info => Edn::Nil,
                    };
                    vec![Edn::kw("r"), k, read]
                }
                _ => return None,
            };
            Some((Edn::kw("txn"), Edn::Vector(vec![Edn::Vector(micro)])))
        }
    }
}

/// The ops a shape has no form for (or that its key filter leaves out), by
/// their `:f`: what an export in that shape does not carry.
pub fn left_out(history: &History, shape: &EdnShape) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for op in history.ops() {
        let invoke = Event {
            index: op.invoke.index,
            time_ns: 0,
            process: op.process,
            kind: EventType::Invoke,
            f: op.f.clone(),
            value: op.args.clone(),
            error: None,
            node: None,
        };
        if shaped(shape, &invoke, &op.args).is_none() {
            *out.entry(op.f.clone()).or_default() += 1;
        }
    }
    out
}

/// The history as EDN, one event map per line, in the given shape.
pub fn to_edn(history: &History, shape: &EdnShape) -> String {
    let stride = history.ops().iter().map(|o| o.process).max().unwrap_or(0) + 1;
    // Jepsen processes never invoke again after a crash: a client's op after an
    // indeterminate one runs as process + k * stride.
    let mut generation: BTreeMap<u64, u64> = BTreeMap::new();
    let mut process_of: Vec<u64> = Vec::with_capacity(history.len());
    for op in history.ops() {
        let g = generation.entry(op.process).or_insert(0);
        process_of.push(op.process + *g * stride);
        if op.is_indeterminate() {
            *g += 1;
        }
    }
    let mut by_index: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, op) in history.ops().iter().enumerate() {
        by_index.insert(op.invoke.index, i);
        if let Some(c) = &op.completion {
            by_index.insert(c.at.index, i);
        }
    }
    let mut out = String::new();
    let mut index = 0u64;
    for event in history.events() {
        let op_id = by_index[&event.index];
        let op = &history.ops()[op_id];
        let Some((f, value)) = shaped(shape, &event, &op.args) else {
            continue;
        };
        let mut entries = vec![
            (Edn::kw("type"), Edn::kw(event.kind.name())),
            (Edn::kw("f"), f),
            (Edn::kw("value"), value),
            (Edn::kw("process"), Edn::Int(process_of[op_id] as i64)),
            (Edn::kw("time"), Edn::Int(event.time_ns as i64)),
            (Edn::kw("index"), Edn::Int(index as i64)),
        ];
        if let Some(e) = &event.error {
            entries.push((Edn::kw("error"), Edn::Str(e.clone())));
        }
        if let Some(n) = &event.node {
            entries.push((Edn::kw("node"), Edn::Str(n.clone())));
        }
        index += 1;
        let _ = writeln!(out, "{}", Edn::Map(entries));
    }
    out
}

/// Why a Jepsen history could not be read.
#[derive(Debug)]
pub enum ReadError {
    Edn(EdnError),
    /// The op at this position (0-based) is not a usable op map.
    Op(usize, String),
    History(HistoryError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Edn(e) => write!(f, "{e}"),
            ReadError::Op(i, m) => write!(f, "op {i}: {m}"),
            ReadError::History(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// A Jepsen history (a sequence of op maps, or one vector or list of them) as a
/// [`History`]. Nemesis ops (non-integer `:process`) are left out. An invoke's
/// `:value` becomes the argument `value` (and a `:key`, as in Porcupine's kv
/// histories, the argument `key`); a completion's `:value` is its result.
/// Missing `:index` and `:time` are taken from the op's position.
pub fn read_jepsen(text: &str) -> Result<History, ReadError> {
    let mut forms = parse(text).map_err(ReadError::Edn)?;
    if forms.len() == 1 && matches!(forms[0], Edn::Vector(_) | Edn::List(_)) {
        forms = match forms.pop() {
            Some(Edn::Vector(items)) | Some(Edn::List(items)) => items,
            _ => unreachable!("matched above"),
        };
    }
    let mut events = Vec::with_capacity(forms.len());
    for (i, form) in forms.iter().enumerate() {
        if !matches!(form, Edn::Map(_)) {
            return Err(ReadError::Op(i, format!("expected an op map, got {form}")));
        }
        let process = match form.get("process") {
            Some(Edn::Int(p)) if *p >= 0 => *p as u64,
            Some(Edn::Int(_)) => return Err(ReadError::Op(i, "negative :process".into())),
            Some(_) => continue, // the nemesis
            None => return Err(ReadError::Op(i, "no :process".into())),
        };
        let kind = match form.get("type") {
            Some(Edn::Keyword(k)) => match k.as_str() {
                "invoke" => EventType::Invoke,
                "ok" => EventType::Ok,
                "fail" => EventType::Fail,
                "info" => EventType::Info,
                other => return Err(ReadError::Op(i, format!("unknown :type :{other}"))),
            },
            _ => return Err(ReadError::Op(i, "no :type keyword".into())),
        };
        let f = match form.get("f") {
            Some(Edn::Keyword(k)) | Some(Edn::Str(k)) | Some(Edn::Symbol(k)) => k.clone(),
            Some(other) => other.to_string(),
            None => return Err(ReadError::Op(i, "no :f".into())),
        };
        let int = |name: &str| match form.get(name) {
            Some(Edn::Int(v)) if *v >= 0 => Ok(Some(*v as u64)),
            None => Ok(None),
            Some(other) => Err(ReadError::Op(i, format!(":{name} is {other}, not a count"))),
        };
        let index = int("index")?.unwrap_or(i as u64);
        let time_ns = int("time")?.unwrap_or(i as u64);
        let raw = form.get("value").map(Edn::to_json).unwrap_or(Value::Null);
        let value = match kind {
            EventType::Invoke => {
                let mut args = Map::new();
                if let Some(key) = form.get("key") {
                    args.insert("key".into(), key.to_json());
                }
                if !raw.is_null() {
                    args.insert("value".into(), raw);
                }
                Value::Object(args)
            }
            EventType::Ok | EventType::Fail | EventType::Info => raw,
        };
        let error = form.get("error").map(|e| match e {
            Edn::Str(s) | Edn::Keyword(s) => s.clone(),
            other @ (Edn::Nil
            | Edn::Bool(_)
            | Edn::Int(_)
            | Edn::Float(_)
            | Edn::Symbol(_)
            | Edn::Vector(_)
            | Edn::List(_)
            | Edn::Set(_)
            | Edn::Map(_)) => other.to_string(),
        });
        events.push(Event {
            index,
            time_ns,
            process,
            kind,
            f,
            value,
            error,
            node: None,
        });
    }
    History::from_events(events).map_err(ReadError::History)
}
