//! A register per key: `put`/`write`, `get`/`read` (of an absent key too),
//! `delete`, `cas` and `append` (text concatenation, as raftkv and Porcupine's kv
//! store do it). Linearizable.

use super::appends::{self, AppendOp, Appends};
use super::spec::{Decided, Entry, Scope, Spec, Values};
use super::texts::Texts;
use super::zones::{self, Timed, ZoneOp, Zones};
use crate::judge::history::{text, Op};
use serde_json::Value;

/// Error texts that answer "the key is absent".
pub const ABSENT: [&str; 4] = ["not found", "not_found", "NoNode", "absent"];

pub fn is_absent(error: &str) -> bool {
    ABSENT.contains(&error)
}

/// What a `nil` read (`null` value, no error) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NilRead {
    /// The key was absent (our models, Porcupine's etcd model).
    Absent,
    /// Nothing: Knossos's registers accept a `nil` read as any value.
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterOp {
    /// `None`: absent. `Any`: matches every state (see [`NilRead::Any`]).
    Read(ReadValue),
    Write(u32),
    /// `existed`: the answer was ok rather than "not found".
    Delete {
        existed: bool,
    },
    Cas {
        expect: u32,
        new: u32,
        swapped: bool,
    },
    Append(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadValue {
    Absent,
    Value(u32),
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegisterState {
    Absent,
    Value(u32),
    /// After an `append`: the concatenated text, in [`Texts`].
    Text(u32),
}

#[derive(Debug)]
pub struct Register {
    values: Values,
    texts: Texts,
    initial: RegisterState,
    nil_read: NilRead,
    /// Whether keys whose writes all differ are decided by zones (`zones.rs`),
    /// and keys only appends change by the order their reads show
    /// (`appends.rs`); off, the search decides every key (to compare).
    zones: bool,
}

impl Default for Register {
    fn default() -> Self {
        Register::new(None, NilRead::Absent)
    }
}

impl Register {
    /// `initial`: the value every key starts with (`None`: absent; Porcupine's
    /// kv store starts every key at `""`).
    pub fn new(initial: Option<Value>, nil_read: NilRead) -> Register {
        let mut values = Values::default();
        let texts = Texts::default();
        let initial = match initial {
            None => RegisterState::Absent,
            Some(Value::String(s)) => RegisterState::Text(texts.append(None, &s)),
            Some(v) => RegisterState::Value(values.id(&v)),
        };
        Register {
            values,
            texts,
            initial,
            nil_read,
            zones: true,
        }
    }

    /// The same register with every key left to the search.
    pub fn search_only(self) -> Register {
        Register {
            zones: false,
            ..self
        }
    }

    fn holds(&self, state: &RegisterState, read: &ReadValue) -> bool {
        match (state, read) {
            (_, ReadValue::Any) => true,
            (RegisterState::Absent, ReadValue::Absent) => true,
            (RegisterState::Value(a), ReadValue::Value(b)) => a == b,
            (RegisterState::Text(t), ReadValue::Value(b)) => {
                matches!(self.values.value(*b), Value::String(s) if self.texts.equals(*t, s))
            }
            (RegisterState::Absent, ReadValue::Value(_))
            | (RegisterState::Value(_) | RegisterState::Text(_), ReadValue::Absent) => false,
        }
    }

    fn show(&self, state: &RegisterState) -> String {
        match state {
            RegisterState::Absent => "absent".into(),
            RegisterState::Value(v) => self.values.value(*v).to_string(),
            RegisterState::Text(t) => format!("{:?}", self.texts.text(*t)),
        }
    }
}

/// The object an op of a key-value model touches: its `key` (a history without
/// keys is one register).
pub fn key_scope(op: &Op) -> Scope {
    Scope::Objects(vec![op.arg_text("key").unwrap_or_default()])
}

impl Spec for Register {
    type State = RegisterState;
    type Op = RegisterOp;

    fn name(&self) -> &'static str {
        "register"
    }

    fn interpret(&mut self, op: &Op) -> Result<(Scope, RegisterOp), String> {
        let done = op.ok();
        let answer_error = done.and_then(|c| c.error.as_deref());
        let value_arg = |values: &mut Values| {
            op.arg("value")
                .map(|v| values.id(v))
                .ok_or_else(|| format!("`{}` has no `value` argument", op.f))
        };
        let interpreted = match op.f.as_str() {
            "read" | "get" => RegisterOp::Read(match done {
                None => ReadValue::Any,
                Some(c) => match (&c.error, &c.value) {
                    (Some(e), _) if is_absent(e) => ReadValue::Absent,
                    (Some(e), _) => return Err(format!("a read answered `{e}`")),
                    (None, Value::Null) => match self.nil_read {
                        NilRead::Absent => ReadValue::Absent,
                        NilRead::Any => ReadValue::Any,
                    },
                    (None, v) => ReadValue::Value(self.values.id(v)),
                },
            }),
            "write" | "put" => {
                if let Some(e) = answer_error {
                    return Err(format!("a write answered `{e}`"));
                }
                RegisterOp::Write(value_arg(&mut self.values)?)
            }
            "delete" => RegisterOp::Delete {
                existed: match answer_error {
                    None => true,
                    Some(e) if is_absent(e) => false,
                    Some(e) => return Err(format!("a delete answered `{e}`")),
                },
            },
            "cas" => {
                let (expect, new) = match op.arg("value") {
                    Some(Value::Array(pair)) if pair.len() == 2 => (&pair[0], &pair[1]),
                    _ => match (op.arg("expect"), op.arg("new")) {
                        (Some(a), Some(b)) => (a, b),
                        _ => return Err("`cas` needs `value: [old, new]`".into()),
                    },
                };
                RegisterOp::Cas {
                    expect: self.values.id(expect),
                    new: self.values.id(new),
                    swapped: !matches!(done.map(|c| &c.value), Some(Value::Bool(false))),
                }
            }
            "append" => RegisterOp::Append(
                op.arg("value")
                    .map(text)
                    .ok_or("`append` has no `value` argument")?,
            ),
            other => return Err(format!("the register model has no op `{other}`")),
        };
        Ok((key_scope(op), interpreted))
    }

    fn init(&self, _: &[Entry<RegisterOp>]) -> RegisterState {
        self.initial.clone()
    }

    fn step(&self, state: &RegisterState, entry: &Entry<RegisterOp>) -> Option<RegisterState> {
        let known = entry.determinate();
        match &entry.op {
            RegisterOp::Read(read) => (!known || self.holds(state, read)).then(|| state.clone()),
            RegisterOp::Write(v) => Some(RegisterState::Value(*v)),
            RegisterOp::Delete { existed } => {
                let present = *state != RegisterState::Absent;
                (!known || present == *existed).then_some(RegisterState::Absent)
            }
            RegisterOp::Cas {
                expect,
                new,
                swapped,
            } => {
                let equal = self.holds(state, &ReadValue::Value(*expect));
                if known && equal != *swapped {
                    return None;
                }
                Some(if equal {
                    RegisterState::Value(*new)
                } else {
                    state.clone()
                })
            }
            RegisterOp::Append(suffix) => Some(RegisterState::Text(match state {
                RegisterState::Absent => self.texts.append(None, suffix),
                RegisterState::Value(v) => {
                    let base = self.texts.append(None, &text(self.values.value(*v)));
                    self.texts.append(Some(base), suffix)
                }
                RegisterState::Text(t) => self.texts.append(Some(*t), suffix),
            })),
        }
    }

    fn prepare(&self, entries: Vec<Entry<RegisterOp>>) -> Vec<Entry<RegisterOp>> {
        // An indeterminate op is left out when no op that stays could tell that
        // it happened: its absence only widens the search's choices. A write is
        // seen by a read of its value (or a cas expecting it), and by anything
        // that observes presence; a delete by anything that observes absence.
        // What stays can itself see more (a kept cas expects a value), so this
        // runs to a fixpoint.
        let mut keep: Vec<bool> = entries.iter().map(|e| e.determinate()).collect();
        loop {
            let mut seen = std::collections::BTreeSet::new();
            let (mut presence, mut absence) = (false, false);
            for (e, _) in entries.iter().zip(&keep).filter(|(_, k)| **k) {
                let known = e.determinate();
                match &e.op {
                    RegisterOp::Read(ReadValue::Value(v)) => {
                        seen.insert(*v);
                    }
                    RegisterOp::Read(ReadValue::Absent) => absence = true,
                    RegisterOp::Read(ReadValue::Any) | RegisterOp::Write(_) => {}
                    RegisterOp::Delete { existed } if known => {
                        if *existed {
                            presence = true
                        } else {
                            absence = true
                        }
                    }
                    RegisterOp::Delete { .. } => {}
                    RegisterOp::Cas {
                        expect, swapped, ..
                    } => {
                        seen.insert(*expect);
                        if known && !swapped {
                            (presence, absence) = (true, true);
                        }
                    }
                    RegisterOp::Append(_) => (presence, absence) = (true, true),
                }
            }
            let next: Vec<bool> = entries
                .iter()
                .map(|e| {
                    e.determinate()
                        || match &e.op {
                            RegisterOp::Read(_) => false,
                            RegisterOp::Write(v) => presence || seen.contains(v),
                            RegisterOp::Delete { .. } => absence,
                            RegisterOp::Cas { new, .. } => presence || seen.contains(new),
                            RegisterOp::Append(_) => true,
                        }
                })
                .collect();
            if next == keep {
                break;
            }
            keep = next;
        }
        entries
            .into_iter()
            .zip(keep)
            .filter_map(|(e, k)| k.then_some(e))
            .collect()
    }

    fn decide(&self, entries: &[Entry<RegisterOp>]) -> Option<Decided> {
        if !self.zones {
            return None;
        }
        if entries
            .iter()
            .any(|e| matches!(e.op, RegisterOp::Append(_)))
        {
            return self.decide_appends(entries);
        }
        // Absent is a value of its own here: no op writes it without `delete`.
        let absent = u32::try_from(self.values.len()).ok()?;
        let initial = match self.initial {
            RegisterState::Absent => absent,
            RegisterState::Value(v) => v,
            RegisterState::Text(_) => return None,
        };
        // The zones' ops, and the entry each one is.
        let mut timed = Vec::with_capacity(entries.len());
        let mut position = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let op = match &e.op {
                RegisterOp::Write(v) => ZoneOp::Write(*v),
                RegisterOp::Read(_) if !e.determinate() => continue,
                RegisterOp::Read(ReadValue::Value(v)) => ZoneOp::Read(*v),
                RegisterOp::Read(ReadValue::Absent) => ZoneOp::Read(absent),
                // A nil read of Knossos's kind, and ops that change state in ways
                // the zones do not model: the search decides.
                RegisterOp::Read(ReadValue::Any)
                | RegisterOp::Delete { .. }
                | RegisterOp::Cas { .. }
                | RegisterOp::Append(_) => return None,
            };
            timed.push(Timed {
                op,
                call: e.call,
                ret: e.ret,
            });
            position.push(i);
        }
        match zones::decide(&timed, Some(initial)) {
            Zones::Linearizable => Some(Decided::Linearizable),
            Zones::Violation(ops) => Some(Decided::Violation(
                ops.into_iter().map(|k| position[k]).collect(),
            )),
            Zones::NotUnique => None,
        }
    }

    fn shrink_rank(&self, op: &RegisterOp) -> u8 {
        match op {
            RegisterOp::Read(_) => 0,
            RegisterOp::Delete { .. } | RegisterOp::Cas { .. } | RegisterOp::Append(_) => 1,
            RegisterOp::Write(_) => 2,
        }
    }

    fn describe(&self, entry: &Entry<RegisterOp>) -> String {
        let known = entry.determinate();
        let show = |id: &u32| self.values.value(*id).to_string();
        match &entry.op {
            RegisterOp::Read(_) if !known => "read -> ?".into(),
            RegisterOp::Read(ReadValue::Absent) => "read -> absent".into(),
            RegisterOp::Read(ReadValue::Any) => "read -> nil".into(),
            RegisterOp::Read(ReadValue::Value(v)) => format!("read -> {}", show(v)),
            RegisterOp::Write(v) => format!("write {}", show(v)),
            RegisterOp::Delete { .. } if !known => "delete -> ?".into(),
            RegisterOp::Delete { existed } => {
                format!("delete -> {}", if *existed { "ok" } else { "not found" })
            }
            RegisterOp::Cas {
                expect,
                new,
                swapped,
            } => format!(
                "cas {} -> {} {}",
                show(expect),
                show(new),
                if !known {
                    "?"
                } else if *swapped {
                    "ok"
                } else {
                    "refused"
                }
            ),
            RegisterOp::Append(s) => format!("append {s:?}"),
        }
    }
}

impl Register {
    /// A key that starts absent and only appends change (`appends.rs`).
    fn decide_appends(&self, entries: &[Entry<RegisterOp>]) -> Option<Decided> {
        if self.initial != RegisterState::Absent {
            return None;
        }
        let mut timed = Vec::with_capacity(entries.len());
        let mut position = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let op = match &e.op {
                RegisterOp::Append(text) => AppendOp::Append(text),
                RegisterOp::Read(_) if !e.determinate() => continue,
                RegisterOp::Read(ReadValue::Absent) => AppendOp::ReadAbsent,
                RegisterOp::Read(ReadValue::Value(v)) => match self.values.value(*v) {
                    Value::String(text) => AppendOp::Read(text),
                    Value::Null
                    | Value::Bool(_)
                    | Value::Number(_)
                    | Value::Array(_)
                    | Value::Object(_) => AppendOp::ReadOther,
                },
                RegisterOp::Read(ReadValue::Any)
                | RegisterOp::Write(_)
                | RegisterOp::Delete { .. }
                | RegisterOp::Cas { .. } => return None,
            };
            timed.push(appends::Timed {
                op,
                call: e.call,
                ret: e.ret,
            });
            position.push(i);
        }
        match appends::decide(&timed) {
            Appends::Linearizable => Some(Decided::Linearizable),
            Appends::Violation(ops) => Some(Decided::Violation(
                ops.into_iter().map(|k| position[k]).collect(),
            )),
            Appends::Undecided => None,
        }
    }

    /// A state as text, for reports.
    pub fn state_text(&self, state: &RegisterState) -> String {
        self.show(state)
    }
}
