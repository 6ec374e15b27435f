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

/// Which map of an [`Observation`] a declared key is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationKind {
    /// [`Observation::state`]: replicated, compared between replicas.
    State,
    /// [`Observation::facts`]: node-local.
    Fact,
}

impl ObservationKind {
    pub fn name(self) -> &'static str {
        match self {
            ObservationKind::State => "state",
            ObservationKind::Fact => "fact",
        }
    }
}

/// One key (or family of keys) a model's nodes publish, for `faultline list`,
/// for `observed:` in scenarios, and for the test that holds a model to it.
#[derive(Debug, PartialEq, Eq)]
pub struct ObservationInfo {
    /// The key, where `<word>` stands for any non-empty text: `ratis_applied`,
    /// `chain.<bucket>`, `held.<datanode>/C<container>`.
    pub key: &'static str,
    pub kind: ObservationKind,
    pub summary: &'static str,
}

impl ObservationInfo {
    pub const fn new(key: &'static str, kind: ObservationKind, summary: &'static str) -> Self {
        ObservationInfo { key, kind, summary }
    }

    pub const fn state(key: &'static str, summary: &'static str) -> Self {
        Self::new(key, ObservationKind::State, summary)
    }

    pub const fn fact(key: &'static str, summary: &'static str) -> Self {
        Self::new(key, ObservationKind::Fact, summary)
    }

    /// Whether `key` is this declaration's key (each `<word>` matching any
    /// non-empty text).
    pub fn matches(&self, key: &str) -> bool {
        pattern_matches(self.key, key)
    }

    /// The key's fixed text before its first `<word>` (all of it when it has none).
    pub fn prefix(&self) -> &'static str {
        self.key.split('<').next().unwrap_or(self.key)
    }
}

/// Whether `key` matches `pattern`, where `<word>` matches one or more characters.
pub fn pattern_matches(pattern: &str, key: &str) -> bool {
    let Some(open) = pattern.find('<') else {
        return pattern == key;
    };
    let Some(close) = pattern[open..].find('>').map(|c| open + c) else {
        return pattern == key;
    };
    let (literal, rest) = (&pattern[..open], &pattern[close + 1..]);
    let Some(tail) = key.strip_prefix(literal) else {
        return false;
    };
    // The placeholder takes at least one character; try every length.
    (1..=tail.len())
        .filter(|&end| tail.is_char_boundary(end))
        .any(|end| pattern_matches(rest, &tail[end..]))
}

#[cfg(test)]
mod tests {
    use super::pattern_matches;

    #[test]
    fn a_placeholder_matches_any_non_empty_text() {
        assert!(pattern_matches("ratis_applied", "ratis_applied"));
        assert!(!pattern_matches("ratis_applied", "ratis_applie"));
        assert!(pattern_matches("chain.<bucket>", "chain./v/b"));
        assert!(!pattern_matches("chain.<bucket>", "chain."));
        assert!(pattern_matches("held.<dn>/C<n>", "held.dn1/C12"));
        assert!(pattern_matches("held.<dn>/C<n>", "held.a/C/C1"));
        assert!(!pattern_matches("held.<dn>/C<n>", "held.dn1/C"));
        assert!(!pattern_matches("held.<dn>/C<n>", "since_ms.dn1/C1"));
        assert!(pattern_matches("<key>", "a"));
        assert!(!pattern_matches("<key>", ""));
        assert!(pattern_matches(
            "bucket.<b>.usedBytes",
            "bucket./v/b.usedBytes"
        ));
        assert!(!pattern_matches(
            "bucket.<b>.usedBytes",
            "bucket./v/b.usedBytesX"
        ));
    }
}
