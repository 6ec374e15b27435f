//! A list per key: `append` adds one element, `get`/`read` returns the whole
//! list (an absent key reads as the empty list), `delete` empties it.
//! Linearizable. Elle's list-append workload, checked per key.

use super::register::{is_absent, key_scope};
use super::spec::{Entry, Scope, Spec, Values};
use crate::history::Op;
use serde_json::Value;
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListOp {
    Append(u32),
    Read(Vec<u32>),
    Delete { existed: bool },
}

#[derive(Clone, Debug, Default)]
pub struct ListAppend {
    values: Values,
}

impl Spec for ListAppend {
    type State = Vec<u32>;
    type Op = ListOp;

    fn name(&self) -> &'static str {
        "list-append"
    }

    fn interpret(&mut self, op: &Op) -> Result<(Scope, ListOp), String> {
        let done = op.ok();
        let interpreted = match op.f.as_str() {
            "append" => {
                if let Some(e) = done.and_then(|c| c.error.as_deref()) {
                    return Err(format!("an append answered `{e}`"));
                }
                let value = op.arg("value").ok_or("`append` has no `value` argument")?;
                ListOp::Append(self.values.id(value))
            }
            "read" | "get" => ListOp::Read(match done {
                None => Vec::new(),
                Some(c) => match (&c.error, &c.value) {
                    (Some(e), _) if is_absent(e) => Vec::new(),
                    (Some(e), _) => return Err(format!("a read answered `{e}`")),
                    (None, Value::Null) => Vec::new(),
                    (None, Value::Array(items)) => {
                        items.iter().map(|v| self.values.id(v)).collect()
                    }
                    (None, other) => {
                        return Err(format!("a list read returned {other}, not a list"))
                    }
                },
            }),
            "delete" => ListOp::Delete {
                existed: match done.and_then(|c| c.error.as_deref()) {
                    None => true,
                    Some(e) if is_absent(e) => false,
                    Some(e) => return Err(format!("a delete answered `{e}`")),
                },
            },
            other => return Err(format!("the list-append model has no op `{other}`")),
        };
        Ok((key_scope(op), interpreted))
    }

    fn init(&self, _: &[Entry<ListOp>]) -> Vec<u32> {
        Vec::new()
    }

    fn step(&self, state: &Vec<u32>, entry: &Entry<ListOp>) -> Option<Vec<u32>> {
        let known = entry.determinate();
        match &entry.op {
            ListOp::Append(v) => {
                let mut next = state.clone();
                next.push(*v);
                Some(next)
            }
            ListOp::Read(list) => (!known || list == state).then(|| state.clone()),
            ListOp::Delete { existed } => (!known || *existed != state.is_empty()).then(Vec::new),
        }
    }

    fn prepare(&self, entries: Vec<Entry<ListOp>>) -> Vec<Entry<ListOp>> {
        // An indeterminate append whose element no determinate read contains is
        // dominated by its absence; an indeterminate read constrains nothing.
        let mut seen = BTreeSet::new();
        let mut deletes = false;
        for e in entries.iter().filter(|e| e.determinate()) {
            match &e.op {
                ListOp::Read(list) => seen.extend(list.iter().copied()),
                ListOp::Delete { existed } => deletes |= *existed,
                ListOp::Append(_) => {}
            }
        }
        entries
            .into_iter()
            .filter(|e| {
                e.determinate()
                    || match &e.op {
                        ListOp::Read(_) => false,
                        ListOp::Append(v) => deletes || seen.contains(v),
                        ListOp::Delete { .. } => true,
                    }
            })
            .collect()
    }

    fn shrink_rank(&self, op: &ListOp) -> u8 {
        match op {
            ListOp::Read(_) => 0,
            ListOp::Delete { .. } => 1,
            ListOp::Append(_) => 2,
        }
    }

    fn describe(&self, entry: &Entry<ListOp>) -> String {
        let show = |id: &u32| self.values.value(*id).to_string();
        match &entry.op {
            ListOp::Append(v) => format!("append {}", show(v)),
            ListOp::Read(_) if !entry.determinate() => "read -> ?".into(),
            ListOp::Read(list) => format!(
                "read -> [{}]",
                list.iter().map(show).collect::<Vec<_>>().join(" ")
            ),
            ListOp::Delete { .. } if !entry.determinate() => "delete -> ?".into(),
            ListOp::Delete { existed } => {
                format!("delete -> {}", if *existed { "ok" } else { "not found" })
            }
        }
    }
}
