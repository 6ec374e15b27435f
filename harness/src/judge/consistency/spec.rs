//! A sequential specification: what one object (a key, a subtree) does when its
//! ops run one at a time. The search (`search.rs`) asks it whether an op,
//! with the result the history recorded, can come next.

use super::hasher::FixedMap;
use crate::judge::history::{History, Op};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

/// Which objects an op touches: P-compositionality checks each connected group
/// of objects on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Objects(Vec<String>),
    /// Every object (ZooKeeper's `sync` catches a server up on everything).
    Everywhere,
}

/// One op as the search sees it.
#[derive(Clone, Debug)]
pub struct Entry<O> {
    pub op: O,
    /// Position in the history's ops.
    pub source: usize,
    pub process: u64,
    /// Invoke event index.
    pub call: u64,
    /// Completion event index; `None` when the op is indeterminate (it may take
    /// effect at any time after its invoke, or never).
    pub ret: Option<u64>,
    /// False when the witness search made a determinate op indeterminate.
    pub as_recorded: bool,
}

impl<O> Entry<O> {
    pub fn determinate(&self) -> bool {
        self.ret.is_some()
    }
}

/// Values interned to small integers: states compare and hash cheaply. Ids go
/// in order of first appearance; the hash maps are only looked up.
#[derive(Clone, Debug, Default)]
pub struct Values {
    ints: FixedMap<i64, u32>,
    strings: FixedMap<String, u32>,
    others: BTreeMap<String, u32>,
    values: Vec<Value>,
}

impl Values {
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
    )]
    pub fn id(&mut self, value: &Value) -> u32 {
        let next = self.values.len() as u32;
        let id = match value {
            Value::Number(n) if n.as_i64().is_some() => *self
                .ints
                .entry(n.as_i64().unwrap_or_default())
                .or_insert(next),
            Value::String(s) => match self.strings.get(s.as_str()) {
                Some(&id) => id,
                None => {
                    self.strings.insert(s.clone(), next);
                    next
                }
            },
            other => *self.others.entry(other.to_string()).or_insert(next),
        };
        if id == next {
            self.values.push(value.clone());
        }
        id
    }

    pub fn value(&self, id: u32) -> &Value {
        &self.values[id as usize]
    }

    /// How many distinct values there are (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A group decided without the search ([`Spec::decide`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decided {
    Linearizable,
    /// Positions of entries that cannot be linearized together.
    Violation(Vec<usize>),
}

pub trait Spec {
    type State: Clone + Eq + Hash + Debug;
    type Op: Clone + Debug;

    /// The model's name in reports (`register`, `list-append`, `zookeeper`).
    fn name(&self) -> &'static str;

    /// Look at the whole history once, before any op is interpreted: what no
    /// single op shows (ZooKeeper: which znodes exist from before every op under
    /// them until the end, so the ops under them fall into independent groups).
    fn survey(&mut self, _history: &History) {}

    /// Read one op of the history (never a `fail` one: those did not happen).
    /// An error means the op is not one this model knows how to judge.
    fn interpret(&mut self, op: &Op) -> Result<(Scope, Self::Op), String>;

    /// The state before the group's first op (`entries` is the group, prepared).
    fn init(&self, entries: &[Entry<Self::Op>]) -> Self::State;

    /// The state after `entry` runs in `state`, or `None` when the result it
    /// recorded is impossible there. An indeterminate entry's result is unknown.
    fn step(&self, state: &Self::State, entry: &Entry<Self::Op>) -> Option<Self::State>;

    /// Ready one group's entries for the search: leave out indeterminate ops
    /// whose absence cannot change the verdict (a read; a write no one could
    /// have seen) and annotate what the steps need. Run again after the witness
    /// search weakens ops, so it must not depend on having run before.
    fn prepare(&self, entries: Vec<Entry<Self::Op>>) -> Vec<Entry<Self::Op>>;

    /// Decide one prepared group without the search, where this model knows a
    /// faster procedure for it (a register whose writes all differ: `zones.rs`).
    /// `None` leaves the group to the search. A violation names the entries
    /// (positions in `entries`) that cannot be linearized together, for the
    /// witness; the checker confirms it with the search.
    fn decide(&self, _entries: &[Entry<Self::Op>]) -> Option<Decided> {
        None
    }

    /// The order in which the witness search tries to weaken ops, lowest first:
    /// reads (0), then ops that observe and change (a delete, a cas: 1), then
    /// plain writes (2). Weakened early, observers take the writes only they could
    /// see with them, which keeps every later search small.
    fn shrink_rank(&self, op: &Self::Op) -> u8;

    /// Roughly what a state holds on the heap, for the memo's memory bound
    /// (states that are plain values hold nothing there).
    fn state_heap_bytes(&self, _state: &Self::State) -> usize {
        0
    }

    /// One op for a report: `put(a, 3)`, `get(a) -> 3`.
    fn describe(&self, entry: &Entry<Self::Op>) -> String;
}
