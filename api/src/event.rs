//! What a node appends to the trail: typed fields wherever the harness, a checker
//! or a report reads them, plus the human line the model writes (its `Display`).
//!
//! The fields are the machine's view (election safety reads `role` and `term`, the
//! divergence view reads `index`, `result` and `keys`); the text is the person's
//! view, as the real system would log it, and what a scenario's `contains:`
//! matches. The text travels as the trail event's `detail`, so it is not part of
//! the serialised payload (a trail stores it once).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A node's role in leader election, as checkers read it. ZooKeeper's LOOKING is
/// `Candidate`, FOLLOWING `Follower`, LEADING `Leader`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Leader,
    Follower,
    Candidate,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Leader => "leader",
            Role::Follower => "follower",
            Role::Candidate => "candidate",
        }
    }
}

/// What applying one entry (or command) did on this node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyResult {
    /// The state machine took it.
    Ok,
    /// It ran and failed; `error` is the system's own (e.g. `KEY_NOT_FOUND ...`).
    Failed { error: String },
    /// It reached the state machine without running (a configuration or metadata
    /// entry Ozone only notes as an index).
    Skipped { reason: String },
}

impl ApplyResult {
    pub fn is_ok(&self) -> bool {
        matches!(self, ApplyResult::Ok)
    }
}

/// One event a node appends to the trail. Every variant's `text` is its
/// `Display`; build them with the constructors below or with struct syntax.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeEvent {
    /// Role, term or known leader changed.
    Leader {
        role: Role,
        /// The Raft term, the Zab epoch.
        term: u64,
        /// The leader this node now follows or is (`None`: it knows of none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        leader: Option<String>,
        #[serde(skip)]
        text: String,
    },
    /// An entry, transaction or command reached the state machine.
    Apply {
        /// Term and index of the log entry, where the model has a log (ZooKeeper:
        /// the zxid's epoch and the zxid).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        term: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u64>,
        /// What was applied, in the system's words (`CreateSnapshot /v/b/s1`).
        what: String,
        result: ApplyResult,
        /// Replicated-state keys it touched (the divergence view's evidence).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        keys: Vec<String>,
        #[serde(skip)]
        text: String,
    },
    /// Something became durable (an fsync, a flushed batch, a snapshot).
    Storage {
        /// What became durable: `txn log`, `TRANSACTION_INFO`, `snapshot`, ...
        what: String,
        /// The term and index (zxid) it is durable through, where meaningful.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        term: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u64>,
        /// The log indices whose effects it made durable (a flushed batch, an
        /// fsynced run of txns); empty when it is not about entries.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        entries: Vec<u64>,
        #[serde(skip)]
        text: String,
    },
    /// A background service or periodic task did something.
    Service {
        /// Which service (`DDS`, `KDS`, `SyncThread`, `heartbeat`).
        service: String,
        #[serde(skip)]
        text: String,
    },
    /// A request was submitted internally (not by a client).
    Submit {
        /// Who submitted it (a service run, the leader's request processor).
        by: String,
        /// What was submitted.
        what: String,
        /// Where it went into the log, when it did: it is in flight until this
        /// node applies that index.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        term: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u64>,
        #[serde(skip)]
        text: String,
    },
    /// The process terminates itself.
    Exit { reason: String },
    /// A declared probe (a code path worth knowing was reached) was hit.
    Probe {
        probe: String,
        #[serde(skip)]
        text: String,
    },
    /// Anything else worth reading in the trail.
    Note {
        #[serde(skip)]
        text: String,
    },
}

impl NodeEvent {
    /// A role change with the plain text `leader term 3`, `follower term 3 leader n1`,
    /// `candidate term 4`.
    pub fn role(role: Role, term: u64, leader: Option<String>) -> NodeEvent {
        let text = match (role, &leader) {
            (Role::Leader, _) => format!("leader term {term}"),
            (r, Some(l)) => format!("{} term {term} leader {l}", r.name()),
            (r, None) => format!("{} term {term}", r.name()),
        };
        NodeEvent::Leader {
            role,
            term,
            leader,
            text,
        }
    }

    pub fn note(text: impl Into<String>) -> NodeEvent {
        NodeEvent::Note { text: text.into() }
    }

    pub fn service(service: impl Into<String>, text: impl Into<String>) -> NodeEvent {
        NodeEvent::Service {
            service: service.into(),
            text: text.into(),
        }
    }

    /// The human line.
    pub fn text(&self) -> &str {
        match self {
            NodeEvent::Leader { text, .. }
            | NodeEvent::Apply { text, .. }
            | NodeEvent::Storage { text, .. }
            | NodeEvent::Service { text, .. }
            | NodeEvent::Submit { text, .. }
            | NodeEvent::Probe { text, .. }
            | NodeEvent::Note { text } => text,
            NodeEvent::Exit { reason } => reason,
        }
    }

    /// Move the human line out (it becomes the trail event's `detail`); an exit
    /// keeps its reason, which is a field.
    pub fn take_text(&mut self) -> String {
        match self {
            NodeEvent::Leader { text, .. }
            | NodeEvent::Apply { text, .. }
            | NodeEvent::Storage { text, .. }
            | NodeEvent::Service { text, .. }
            | NodeEvent::Submit { text, .. }
            | NodeEvent::Probe { text, .. }
            | NodeEvent::Note { text } => std::mem::take(text),
            NodeEvent::Exit { reason } => reason.clone(),
        }
    }

    /// Replicated-state keys the event touched.
    pub fn keys(&self) -> &[String] {
        match self {
            NodeEvent::Apply { keys, .. } => keys,
            NodeEvent::Leader { .. }
            | NodeEvent::Storage { .. }
            | NodeEvent::Service { .. }
            | NodeEvent::Submit { .. }
            | NodeEvent::Exit { .. }
            | NodeEvent::Probe { .. }
            | NodeEvent::Note { .. } => &[],
        }
    }
}

impl fmt::Display for NodeEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_texts_read_as_before() {
        assert_eq!(
            NodeEvent::role(Role::Leader, 3, Some("n1".into())).to_string(),
            "leader term 3"
        );
        assert_eq!(
            NodeEvent::role(Role::Follower, 3, Some("n1".into())).to_string(),
            "follower term 3 leader n1"
        );
        assert_eq!(
            NodeEvent::role(Role::Candidate, 4, None).to_string(),
            "candidate term 4"
        );
    }

    #[test]
    fn the_payload_serialises_without_its_text() {
        let mut event = NodeEvent::Apply {
            term: Some(1),
            index: Some(9),
            what: "CreateSnapshot /v/b/s1".into(),
            result: ApplyResult::Failed {
                error: "INTERNAL_ERROR".into(),
            },
            keys: vec![],
            text: "apply (t:1, i:9) CreateSnapshot /v/b/s1 -> INTERNAL_ERROR".into(),
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["apply"]["index"], 9);
        assert_eq!(json["apply"]["result"]["failed"]["error"], "INTERNAL_ERROR");
        assert!(json["apply"].get("text").is_none());
        let text = event.take_text();
        assert!(text.starts_with("apply (t:1, i:9)"));
        let back: NodeEvent = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }
}
