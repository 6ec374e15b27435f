//! What a node publishes for checkers and reports.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A node's latest self-description. Nodes publish a fresh one whenever it changes;
/// the harness keeps the last one per node (also across a crash, marked down).
///
/// `state` is the replicated state as a per-key view: replicas that agree have equal
/// maps at an equal `applied` index. `facts` are node-local values shown in reports
/// (indices, flags, queue lengths) and read by model invariants, never compared
/// between replicas.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// "leader", "follower", "candidate", or a model-specific role ("datanode").
    pub role: Option<String>,
    pub term: Option<u64>,
    /// The leader this node believes in, if any.
    pub leader: Option<String>,
    /// The index up to which `state` reflects the replicated log; `None` when the
    /// model has no log (then replicas are compared at quiescence).
    pub applied: Option<u64>,
    pub state: BTreeMap<String, String>,
    pub facts: BTreeMap<String, String>,
    /// Work the node still has in hand (queued requests, unflushed buffers). Zero on
    /// every up node is part of quiescence.
    pub pending: u64,
    /// State keys this node held and has removed since (not put back), for models
    /// that declare `reports_removed`: "removed" then differs from "never there".
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub removed: BTreeSet<String>,
    /// State key prefixes this node cannot vouch for: a derived, in-memory index
    /// it knows to be invalid and refuses to serve until it rebuilds it (an OM's
    /// snapshot chain after a failed load, which every snapshot request meets
    /// as an error). Replicas are not compared with this node on keys under
    /// them; the nodes that vouch for those keys still are, among themselves.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub unvouched: BTreeSet<String>,
}

impl Observation {
    /// Whether this node vouches for `key` (it is under none of `unvouched`).
    pub fn vouches(&self, key: &str) -> bool {
        !self
            .unvouched
            .iter()
            .any(|prefix| key.starts_with(prefix.as_str()))
    }

    pub fn fact(&self, key: &str) -> Option<&str> {
        self.facts.get(key).map(String::as_str)
    }

    pub fn fact_u64(&self, key: &str) -> Option<u64> {
        self.fact(key).and_then(|v| v.parse().ok())
    }

    pub fn fact_i64(&self, key: &str) -> Option<i64> {
        self.fact(key).and_then(|v| v.parse().ok())
    }
}
