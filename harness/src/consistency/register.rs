//! A register per key: `put`/`write`, `get`/`read` (of an absent key too),
//! `delete`, `cas` and `append` (text concatenation, as raftkv and Porcupine's kv
//! store do it). Linearizable.

use super::spec::{Entry, Scope, Spec, Values};
use crate::history::{text, Op};
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
    /// After an `append`: the concatenated text.
    Text(String),
}

#[derive(Clone, Debug)]
pub struct Register {
    values: Values,
    initial: RegisterState,
    nil_read: NilRead,
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
        let initial = match initial {
            None => RegisterState::Absent,
            Some(Value::String(s)) => RegisterState::Text(s),
            Some(v) => RegisterState::Value(values.id(&v)),
        };
        Register {
            values,
            initial,
            nil_read,
        }
    }

    fn holds(&self, state: &RegisterState, read: &ReadValue) -> bool {
        match (state, read) {
            (_, ReadValue::Any) => true,
            (RegisterState::Absent, ReadValue::Absent) => true,
            (RegisterState::Value(a), ReadValue::Value(b)) => a == b,
            (RegisterState::Text(t), ReadValue::Value(b)) => {
                matches!(self.values.value(*b), Value::String(s) if s == t)
            }
            (RegisterState::Absent, ReadValue::Value(_))
            | (RegisterState::Value(_) | RegisterState::Text(_), ReadValue::Absent) => false,
        }
    }

    fn show(&self, state: &RegisterState) -> String {
        match state {
            RegisterState::Absent => "absent".into(),
            RegisterState::Value(v) => self.values.value(*v).to_string(),
            RegisterState::Text(t) => format!("{t:?}"),
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

    fn init(&self) -> RegisterState {
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
                RegisterState::Absent => suffix.clone(),
                RegisterState::Value(v) => text(self.values.value(*v)) + suffix,
                RegisterState::Text(t) => format!("{t}{suffix}"),
            })),
        }
    }

    fn prepare(&self, entries: Vec<Entry<RegisterOp>>) -> Vec<Entry<RegisterOp>> {
        // An indeterminate op is left out when no determinate op could tell that
        // it happened: its absence only widens the search's choices. A write is
        // seen by a read of its value (or a cas expecting it), and by anything
        // that observes presence; a delete by anything that observes absence.
        let mut seen = std::collections::BTreeSet::new();
        let (mut presence, mut absence) = (false, false);
        for e in entries.iter().filter(|e| e.determinate()) {
            match &e.op {
                RegisterOp::Read(ReadValue::Value(v)) => {
                    seen.insert(*v);
                }
                RegisterOp::Read(ReadValue::Absent) => absence = true,
                RegisterOp::Read(ReadValue::Any) | RegisterOp::Write(_) => {}
                RegisterOp::Delete { existed: true } => presence = true,
                RegisterOp::Delete { existed: false } => absence = true,
                RegisterOp::Cas {
                    expect, swapped, ..
                } => {
                    seen.insert(*expect);
                    if !swapped {
                        (presence, absence) = (true, true);
                    }
                }
                RegisterOp::Append(_) => (presence, absence) = (true, true),
            }
        }
        entries
            .into_iter()
            .filter(|e| {
                e.determinate()
                    || match &e.op {
                        RegisterOp::Read(_) => false,
                        RegisterOp::Write(v) => presence || seen.contains(v),
                        RegisterOp::Delete { .. } => absence,
                        RegisterOp::Cas { new, .. } => presence || seen.contains(new),
                        RegisterOp::Append(_) => true,
                    }
            })
            .collect()
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
    /// A state as text, for reports.
    pub fn state_text(&self, state: &RegisterState) -> String {
        self.show(state)
    }
}
