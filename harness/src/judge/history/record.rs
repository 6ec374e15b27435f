//! [`History`]: every client operation of a run, recorded as it happens and
//! validated, so a checker never has to defend itself against a malformed one.

use super::event::{Event, EventType};
use super::op::{Completion, CompletionKind, Op, Stamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// Why a history (recorded, or read from a file) is not well formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryError {
    /// The event index (or op position) where it went wrong.
    pub at: u64,
    pub message: String,
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event {}: {}", self.at, self.message)
    }
}

impl std::error::Error for HistoryError {}

fn error(at: u64, message: impl Into<String>) -> HistoryError {
    HistoryError {
        at,
        message: message.into(),
    }
}

/// The ops of a run in invoke order. Every invoke and completion has a unique
/// `index` in one total order of events; a process has at most one op outstanding
/// (Jepsen's rule), and may go on after an `info`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Stored", into = "Stored")]
pub struct History {
    ops: Vec<Op>,
    next_index: u64,
    last_time_ns: u64,
    /// Process -> its outstanding op.
    pending: BTreeMap<u64, usize>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    ops: Vec<Op>,
}

impl TryFrom<Stored> for History {
    type Error = HistoryError;
    fn try_from(stored: Stored) -> Result<Self, HistoryError> {
        History::from_ops(stored.ops)
    }
}

impl From<History> for Stored {
    fn from(history: History) -> Stored {
        Stored { ops: history.ops }
    }
}

impl History {
    pub fn new() -> History {
        History::default()
    }

    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn stamp(&mut self, time_ns: u64) -> Result<Stamp, HistoryError> {
        if time_ns < self.last_time_ns {
            return Err(error(
                self.next_index,
                format!(
                    "time goes backwards ({time_ns} ns after {} ns)",
                    self.last_time_ns
                ),
            ));
        }
        let stamp = Stamp {
            index: self.next_index,
            time_ns,
        };
        self.next_index += 1;
        self.last_time_ns = time_ns;
        Ok(stamp)
    }

    /// Record an invoke; returns the op's id (its position in [`History::ops`]).
    pub fn invoke(
        &mut self,
        process: u64,
        f: &str,
        args: Value,
        node: Option<String>,
        time_ns: u64,
    ) -> Result<usize, HistoryError> {
        if let Some(&open) = self.pending.get(&process) {
            return Err(error(
                self.next_index,
                format!(
                    "process {process} invokes `{f}` while its `{}` is outstanding",
                    self.ops[open].f
                ),
            ));
        }
        let invoke = self.stamp(time_ns)?;
        self.ops.push(Op {
            process,
            f: f.to_string(),
            args,
            node,
            invoke,
            completion: None,
        });
        let id = self.ops.len() - 1;
        self.pending.insert(process, id);
        Ok(id)
    }

    /// Record the completion of op `id`.
    pub fn complete(
        &mut self,
        id: usize,
        kind: CompletionKind,
        value: Value,
        error_text: Option<String>,
        time_ns: u64,
    ) -> Result<(), HistoryError> {
        let Some(op) = self.ops.get(id) else {
            return Err(error(self.next_index, format!("no op {id} to complete")));
        };
        if op.completion.is_some() {
            return Err(error(
                self.next_index,
                format!("op {id} (`{}`) completes twice", op.f),
            ));
        }
        let process = op.process;
        let at = self.stamp(time_ns)?;
        self.ops[id].completion = Some(Completion {
            kind,
            at,
            value,
            error: error_text,
        });
        self.pending.remove(&process);
        Ok(())
    }

    /// Validate ops built elsewhere (a stored report, a test, a Jepsen file):
    /// unique, ordered indices; completions after invokes; one outstanding op
    /// per process. Times are not required to ascend: real Jepsen histories read
    /// clocks on many threads, and the order is the indices' anyway.
    pub fn from_ops(ops: Vec<Op>) -> Result<History, HistoryError> {
        let mut stamps: Vec<(Stamp, usize)> = Vec::with_capacity(ops.len() * 2);
        for (i, op) in ops.iter().enumerate() {
            stamps.push((op.invoke, i));
            if let Some(c) = &op.completion {
                if c.at.index <= op.invoke.index {
                    return Err(error(
                        c.at.index,
                        format!("op {i} completes before it is invoked"),
                    ));
                }
                stamps.push((c.at, i));
            }
            if i > 0 && ops[i - 1].invoke.index >= op.invoke.index {
                return Err(error(op.invoke.index, "ops are not in invoke order"));
            }
        }
        stamps.sort();
        for pair in stamps.windows(2) {
            let ((a, _), (b, _)) = (pair[0], pair[1]);
            if a.index == b.index {
                return Err(error(a.index, "two events share one index"));
            }
        }
        let mut pending: BTreeMap<u64, usize> = BTreeMap::new();
        let mut last_end: BTreeMap<u64, u64> = BTreeMap::new();
        for (i, op) in ops.iter().enumerate() {
            if let Some(&open) = pending.get(&op.process) {
                return Err(error(
                    op.invoke.index,
                    format!(
                        "process {} invokes op {i} while op {open} never completed",
                        op.process
                    ),
                ));
            }
            if let Some(&end) = last_end.get(&op.process) {
                if op.invoke.index < end {
                    return Err(error(
                        op.invoke.index,
                        format!(
                            "process {} invokes op {i} before its previous op completed",
                            op.process
                        ),
                    ));
                }
            }
            match &op.completion {
                Some(c) => {
                    last_end.insert(op.process, c.at.index);
                }
                None => {
                    pending.insert(op.process, i);
                }
            }
        }
        let next_index = stamps.last().map(|(s, _)| s.index + 1).unwrap_or(0);
        let last_time_ns = stamps.last().map(|(s, _)| s.time_ns).unwrap_or(0);
        Ok(History {
            ops,
            next_index,
            last_time_ns,
            pending,
        })
    }

    /// Pair a flat event sequence (in order) into ops. Indices must ascend.
    pub fn from_events(events: impl IntoIterator<Item = Event>) -> Result<History, HistoryError> {
        let mut ops: Vec<Op> = Vec::new();
        let mut open: BTreeMap<u64, usize> = BTreeMap::new();
        let mut last: Option<u64> = None;
        for event in events {
            if last.is_some_and(|l| event.index <= l) {
                return Err(error(event.index, "event indices do not ascend"));
            }
            last = Some(event.index);
            let stamp = Stamp {
                index: event.index,
                time_ns: event.time_ns,
            };
            let kind = match event.kind {
                EventType::Invoke => {
                    if open.contains_key(&event.process) {
                        return Err(error(
                            event.index,
                            format!(
                                "process {} invokes while an op is outstanding",
                                event.process
                            ),
                        ));
                    }
                    ops.push(Op {
                        process: event.process,
                        f: event.f,
                        args: event.value,
                        node: event.node,
                        invoke: stamp,
                        completion: None,
                    });
                    open.insert(event.process, ops.len() - 1);
                    continue;
                }
                EventType::Ok => CompletionKind::Ok,
                EventType::Fail => CompletionKind::Fail,
                EventType::Info => CompletionKind::Info,
            };
            let Some(id) = open.remove(&event.process) else {
                return Err(error(
                    event.index,
                    format!(
                        "process {} completes `{}` with no outstanding op",
                        event.process, event.f
                    ),
                ));
            };
            if ops[id].f != event.f {
                return Err(error(
                    event.index,
                    format!(
                        "process {} completes `{}` but invoked `{}`",
                        event.process, event.f, ops[id].f
                    ),
                ));
            }
            ops[id].completion = Some(Completion {
                kind,
                at: stamp,
                value: event.value,
                error: event.error,
            });
        }
        History::from_ops(ops)
    }

    /// Every invoke and completion as a flat event, in index order.
    pub fn events(&self) -> Vec<Event> {
        let mut events = Vec::with_capacity(self.ops.len() * 2);
        for op in &self.ops {
            events.push(Event {
                index: op.invoke.index,
                time_ns: op.invoke.time_ns,
                process: op.process,
                kind: EventType::Invoke,
                f: op.f.clone(),
                value: op.args.clone(),
                error: None,
                node: op.node.clone(),
            });
            if let Some(c) = &op.completion {
                events.push(Event {
                    index: c.at.index,
                    time_ns: c.at.time_ns,
                    process: op.process,
                    kind: EventType::completion(c.kind),
                    f: op.f.clone(),
                    value: c.value.clone(),
                    error: c.error.clone(),
                    node: op.node.clone(),
                });
            }
        }
        events.sort_by_key(|e| e.index);
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_invokes_and_completions_in_one_order() {
        let mut h = History::new();
        let a = h
            .invoke(0, "put", json!({"key": "a", "value": "1"}), None, 10)
            .unwrap();
        let b = h.invoke(1, "get", json!({"key": "a"}), None, 10).unwrap();
        h.complete(b, CompletionKind::Ok, json!("1"), None, 20)
            .unwrap();
        h.complete(a, CompletionKind::Ok, Value::Null, None, 30)
            .unwrap();
        let events = h.events();
        assert_eq!(
            events
                .iter()
                .map(|e| (e.index, e.process, e.kind))
                .collect::<Vec<_>>(),
            vec![
                (0, 0, EventType::Invoke),
                (1, 1, EventType::Invoke),
                (2, 1, EventType::Ok),
                (3, 0, EventType::Ok)
            ]
        );
        assert_eq!(History::from_events(events).unwrap(), h);
    }

    #[test]
    fn a_process_runs_one_op_at_a_time_and_may_go_on_after_info() {
        let mut h = History::new();
        let a = h.invoke(0, "put", json!({}), None, 0).unwrap();
        let e = h.invoke(0, "get", json!({}), None, 1).unwrap_err();
        assert!(e.message.contains("outstanding"), "{e}");
        h.complete(
            a,
            CompletionKind::Info,
            Value::Null,
            Some("timeout".into()),
            2,
        )
        .unwrap();
        h.invoke(0, "get", json!({}), None, 3).unwrap();
        assert!(h.ops()[0].is_indeterminate() && h.ops()[1].is_indeterminate());
    }

    #[test]
    fn bad_histories_are_refused_with_the_event_index() {
        let mut h = History::new();
        h.invoke(0, "put", json!({}), None, 5).unwrap();
        assert!(
            h.invoke(1, "put", json!({}), None, 4).is_err(),
            "time backwards"
        );
        assert!(h
            .complete(7, CompletionKind::Ok, Value::Null, None, 6)
            .is_err());
        let events = vec![Event {
            index: 0,
            time_ns: 0,
            process: 3,
            kind: EventType::Ok,
            f: "get".into(),
            value: Value::Null,
            error: None,
            node: None,
        }];
        let e = History::from_events(events).unwrap_err();
        assert_eq!(e.at, 0);
        assert!(e.message.contains("no outstanding op"), "{e}");
    }

    #[test]
    fn serde_round_trip_validates() {
        let mut h = History::new();
        let a = h
            .invoke(
                2,
                "append",
                json!({"key": "k", "value": 1}),
                Some("n1".into()),
                0,
            )
            .unwrap();
        h.complete(
            a,
            CompletionKind::Fail,
            Value::Null,
            Some("not leader".into()),
            9,
        )
        .unwrap();
        let text = serde_json::to_string(&h).unwrap();
        let back: History = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
        let broken = text.replace("\"index\":1", "\"index\":0");
        assert!(serde_json::from_str::<History>(&broken).is_err());
    }
}
