//! A pure Raft-style replicated-log core, standing in for Apache Ratis.
//!
//! [`RaftCore`] is a plain state machine: the caller feeds it time, messages and
//! proposals, and drains [`Output`]s (persist, send, apply, role changes) that it
//! must execute in order. There is no I/O, no clock and no async here, and all
//! randomness comes from a seeded `ChaCha8Rng`, so the same inputs always give
//! the same outputs. An async shell drives it over a simulated network.

mod core;
mod log;
mod shell;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use self::core::RaftCore;
pub use self::shell::{api_role, invariants, oracle_checks, role_name, Raft, RaftEvent};

faultline_api::probes! {
    /// The preconditions of the Raft core's mechanisms. The core collects them
    /// apart from its outputs ([`RaftCore::drain_probes`]); the shell reports them.
    /// Every model on the log declares them.
    pub enum RaftProbe {
        CheckQuorumStepDown {
            name: "raft_check_quorum_step_down",
            rare: false,
            summary: "a leader heard from no majority within the election timeout and stepped down (check-quorum)",
        },
        TruncatedConflict {
            name: "raft_follower_truncated_conflict",
            rare: false,
            summary: "a follower dropped a suffix of its log that conflicts with the leader's entries",
        },
        CommittedEarlierTerm {
            name: "raft_committed_earlier_term_entries",
            rare: false,
            summary: "a leader's commit advanced over entries of an earlier term, through an entry of its own term",
        },
        TransferTimedOut {
            name: "raft_transfer_timed_out",
            rare: false,
            summary: "a leadership transfer ran out of time and the leader took proposals again",
        },
        VoteWithheld {
            name: "raft_vote_withheld_for_live_leader",
            rare: false,
            summary: "a follower that heard from its leader within the minimum election timeout ignored a vote request (leader stickiness)",
        },
    }
}

/// Index into the peer list; the cluster is `0..n`.
pub type NodeId = usize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntryBody {
    /// A state-machine entry carrying an opaque command (JSON text of a model op).
    Sm(String),
    /// The configuration entry a new leader appends at the start of its term
    /// (Ratis STARTUP_ENTRY, CONF type). It reaches the state machine only as an
    /// index notification, never as a write.
    Conf,
    /// Ratis metadata entry recording the leader's commit index.
    Meta { commit: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub term: u64,
    pub index: u64,
    pub body: EntryBody,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HardState {
    pub term: u64,
    pub voted_for: Option<NodeId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Message {
    RequestVote {
        term: u64,
        last_log_index: u64,
        last_log_term: u64,
        /// Sent because of a leadership transfer: bypasses leader stickiness.
        transfer: bool,
    },
    VoteResponse {
        term: u64,
        granted: bool,
    },
    AppendEntries {
        term: u64,
        prev_index: u64,
        prev_term: u64,
        entries: Vec<Entry>,
        leader_commit: u64,
    },
    AppendResponse {
        term: u64,
        success: bool,
        /// On success: the last index this append verified on the follower.
        /// On failure: a hint, the highest index the leader should retry after.
        match_index: u64,
    },
    TimeoutNow {
        term: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Persist (write + fsync) before any later Send in the same batch is sent.
    PersistHardState(HardState),
    /// Persist: drop every log entry with index >= from, then append `entries`
    /// (may be empty). fsync.
    PersistLog {
        truncate_from: Option<u64>,
        entries: Vec<Entry>,
    },
    Send {
        to: NodeId,
        msg: Message,
    },
    /// A committed entry, handed out in index order exactly once per core instance.
    Apply(Entry),
    /// Role, term or known leader changed.
    RoleChanged {
        role: Role,
        term: u64,
        leader: Option<NodeId>,
    },
}

#[derive(Clone, Debug)]
pub struct Config {
    pub election_timeout_ms_min: u64,
    /// Each election timeout is drawn uniformly from `[min, max]` with the core's rng.
    /// Keep a real spread: with `min == max`, nodes started together split the
    /// vote forever.
    pub election_timeout_ms_max: u64,
    pub heartbeat_ms: u64,
    /// Bounds the number of entries in one AppendEntries (message size).
    pub entries_per_append_max: usize,
    /// Ratis-style `Meta { commit }` entries after every commit advance.
    pub metadata_entries: bool,
    /// The leader steps down if it has not heard from a majority within
    /// `election_timeout_ms_max`.
    pub check_quorum: bool,
    /// Give up a leadership transfer after this.
    pub transfer_timeout_ms: u64,
    /// Canary defect: when true, the leader treats an entry as committed as soon
    /// as it appends it locally (no quorum). Used to prove that the harness
    /// catches divergence.
    pub bug_commit_without_quorum: bool,
}

/// The Raft settings a model lets a scenario tune through its `params` (each
/// `None` keeps the default), so every model on the log reads them the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    pub metadata_entries: Option<bool>,
    pub heartbeat_ms: Option<u64>,
    pub election_timeout_ms_min: Option<u64>,
    pub election_timeout_ms_max: Option<u64>,
}

/// Bounds of the Raft timings a scenario may set. The core needs positive
/// timings; elections need at least a few ticks, and a minute-long timeout
/// already outlasts most runs. `Tuning::check` adds the rules between them.
pub const HEARTBEAT_MS_BOUNDS: (u64, u64) = (1, 10_000);
pub const ELECTION_TIMEOUT_MS_BOUNDS: (u64, u64) = (10, 60_000);

/// The `params` every model on the log accepts for its Raft timings.
pub fn tuning_params() -> Vec<faultline_api::ParamInfo> {
    use faultline_api::{ParamChaos, ParamInfo, ParamValue};
    let d = Config::default();
    vec![
        ParamInfo::bool(
            "metadata_entries",
            d.metadata_entries,
            "Ratis-style metadata entries after every commit advance",
        )
        .chaos(ParamChaos::Choices(&[
            ParamValue::Bool(true),
            ParamValue::Bool(false),
        ])),
        // The chaos ranges never conflict (every heartbeat below every
        // shortest timeout, every shortest below every longest), so any draw
        // is a Raft that can keep a leader.
        ParamInfo::duration_ms(
            "heartbeat_ms",
            HEARTBEAT_MS_BOUNDS,
            Some(d.heartbeat_ms),
            "leader heartbeat interval; must be below election_timeout_ms_min",
        )
        .chaos(ParamChaos::Range { min: 20, max: 100 }),
        ParamInfo::duration_ms(
            "election_timeout_ms_min",
            ELECTION_TIMEOUT_MS_BOUNDS,
            Some(d.election_timeout_ms_min),
            "shortest randomized election timeout; at most election_timeout_ms_max",
        )
        .chaos(ParamChaos::Range { min: 150, max: 500 }),
        ParamInfo::duration_ms(
            "election_timeout_ms_max",
            ELECTION_TIMEOUT_MS_BOUNDS,
            Some(d.election_timeout_ms_max),
            "longest randomized election timeout (also the leader's check-quorum window)",
        )
        .chaos(ParamChaos::Range {
            min: 500,
            max: 1_500,
        }),
    ]
}

impl Tuning {
    /// The tuning with defaults applied must be a Raft that can keep a leader:
    /// min <= max, and heartbeats more often than the shortest election timeout.
    pub fn check(&self) -> Result<(), String> {
        let c = Config::tuned(*self);
        if c.election_timeout_ms_min > c.election_timeout_ms_max {
            return Err(format!(
                "election_timeout_ms_min ({}) is greater than election_timeout_ms_max ({})",
                c.election_timeout_ms_min, c.election_timeout_ms_max
            ));
        }
        if c.heartbeat_ms >= c.election_timeout_ms_min {
            return Err(format!(
                "heartbeat_ms ({}) must be below election_timeout_ms_min ({}), or no leader lasts",
                c.heartbeat_ms, c.election_timeout_ms_min
            ));
        }
        Ok(())
    }
}

impl Config {
    /// The defaults with a scenario's tuning laid over them.
    pub fn tuned(tuning: Tuning) -> Config {
        let defaults = Config::default();
        Config {
            metadata_entries: tuning.metadata_entries.unwrap_or(defaults.metadata_entries),
            heartbeat_ms: tuning.heartbeat_ms.unwrap_or(defaults.heartbeat_ms),
            election_timeout_ms_min: tuning
                .election_timeout_ms_min
                .unwrap_or(defaults.election_timeout_ms_min),
            election_timeout_ms_max: tuning
                .election_timeout_ms_max
                .unwrap_or(defaults.election_timeout_ms_max),
            ..defaults
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            election_timeout_ms_min: 150,
            election_timeout_ms_max: 300,
            heartbeat_ms: 50,
            entries_per_append_max: 64,
            metadata_entries: true,
            check_quorum: true,
            transfer_timeout_ms: 1_000,
            bug_commit_without_quorum: false,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum ProposeError {
    NotLeader { leader: Option<NodeId> },
    TransferInProgress,
}

#[derive(Debug, PartialEq, Eq)]
pub enum TransferError {
    NotLeader,
    UnknownTarget,
    SelfTarget,
    AlreadyInProgress,
}
