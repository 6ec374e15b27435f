//! A list per key: `append` adds one element, `get`/`read` returns the whole
//! list (an absent key reads as the empty list), `delete` empties it.
//! Linearizable. Elle's list-append workload, checked per key.

use super::chains::{hash, Chains};
use super::register::{is_absent, key_scope};
use super::spec::{Entry, Scope, Spec, Values};
use crate::judge::history::Op;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListOp {
    Append(u32),
    /// The list read, and its hash.
    Read(Vec<u32>, u64),
    Delete {
        existed: bool,
    },
}

#[derive(Debug, Default)]
pub struct ListAppend {
    values: Values,
    chains: Chains,
}

impl Spec for ListAppend {
    /// The list's last link in [`Chains`]; `None`: empty.
    type State = Option<u32>;
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
            "read" | "get" => read(match done {
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

    fn init(&self, _: &[Entry<ListOp>]) -> Option<u32> {
        None
    }

    fn step(&self, state: &Option<u32>, entry: &Entry<ListOp>) -> Option<Option<u32>> {
        let known = entry.determinate();
        match &entry.op {
            ListOp::Append(v) => Some(Some(self.chains.append(*state, *v))),
            ListOp::Read(list, h) => {
                (!known || self.chains.equals(*state, list, *h)).then_some(*state)
            }
            ListOp::Delete { existed } => (!known || *existed == state.is_some()).then_some(None),
        }
    }

    fn prepare(&self, entries: Vec<Entry<ListOp>>) -> Vec<Entry<ListOp>> {
        // An indeterminate append whose element no determinate read contains is
        // dominated by its absence; an indeterminate read constrains nothing.
        let mut seen = vec![false; self.values.len()];
        let mut deletes = false;
        for e in entries.iter().filter(|e| e.determinate()) {
            match &e.op {
                ListOp::Read(list, _) => {
                    for &v in list {
                        seen[v as usize] = true;
                    }
                }
                ListOp::Delete { existed } => deletes |= *existed,
                ListOp::Append(_) => {}
            }
        }
        entries
            .into_iter()
            .filter(|e| {
                e.determinate()
                    || match &e.op {
                        ListOp::Read(..) => false,
                        ListOp::Append(v) => deletes || seen[*v as usize],
                        ListOp::Delete { .. } => true,
                    }
            })
            .collect()
    }

    fn shrink_rank(&self, op: &ListOp) -> u8 {
        match op {
            ListOp::Read(..) => 0,
            ListOp::Delete { .. } => 1,
            ListOp::Append(_) => 2,
        }
    }

    fn describe(&self, entry: &Entry<ListOp>) -> String {
        let show = |id: &u32| self.values.value(*id).to_string();
        match &entry.op {
            ListOp::Append(v) => format!("append {}", show(v)),
            ListOp::Read(..) if !entry.determinate() => "read -> ?".into(),
            ListOp::Read(list, _) => format!(
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

fn read(list: Vec<u32>) -> ListOp {
    let h = hash(&list);
    ListOp::Read(list, h)
}
