//! The openraft type configuration and the key-value commands in the log.
//!
//! Leader ids are openraft's `leader_id_std` (one leader per term), so the
//! harness's election-safety check, "at most one leader per term", is exactly
//! the property openraft promises in this mode.

use serde::{Deserialize, Serialize};
use std::io::Cursor;

/// The runtime: openraft's tokio runtime (single-threaded: turmoil runs every
/// host on one thread) with its RNG replaced by a seeded one, and timers that
/// fire slightly late ([`crate::runtime`]). openraft draws its election timeouts
/// from the runtime's `thread_rng`; the seeded wrapper draws them from a
/// task-local seed that the node sets from the run's seed.
pub type Runtime = crate::runtime::LateTimers<crate::runtime::Seeded>;

/// The snapshot data: the map's JSON in memory.
pub type SnapshotData = Cursor<Vec<u8>>;

#[cfg(not(feature = "snapshot-data-on-state-machine"))]
openraft::declare_raft_types!(
    /// The type configuration of the model.
    pub Kv:
        D = Request,
        R = Response,
        NodeId = u64,
        Node = openraft::impls::EmptyNode,
        LeaderId = openraft::impls::leader_id_std::LeaderId<u64, u64>,
        SnapshotData = SnapshotData,
        AsyncRuntime = Runtime,
);

// alpha.37: the snapshot data type is the state machine's and the network's
// (`RaftStateMachine::SnapshotData`, `RaftNetworkV2::SnapshotData`), not the
// type configuration's.
#[cfg(feature = "snapshot-data-on-state-machine")]
openraft::declare_raft_types!(
    /// The type configuration of the model.
    pub Kv:
        D = Request,
        R = Response,
        NodeId = u64,
        Node = openraft::impls::EmptyNode,
        LeaderId = openraft::impls::leader_id_std::LeaderId<u64, u64>,
        AsyncRuntime = Runtime,
);

/// A snapshot with its data.
#[cfg(not(feature = "snapshot-data-on-state-machine"))]
pub type Snapshot = openraft::alias::SnapshotOf<Kv>;
#[cfg(feature = "snapshot-data-on-state-machine")]
pub type Snapshot = openraft::alias::SnapshotOf<Kv, SnapshotData>;

pub type Raft = openraft::Raft<Kv, crate::sm::StateMachine>;
pub type LogId = openraft::alias::LogIdOf<Kv>;
pub type Entry = openraft::alias::EntryOf<Kv>;
pub type Vote = openraft::alias::VoteOf<Kv>;
/// The run's Raft oracle (`faultline_api::kit::raft`), shared by its nodes.
pub type Oracle = std::cell::RefCell<faultline_api::kit::RaftOracle<LogId>>;

/// A command in the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Put {
        key: String,
        value: String,
    },
    /// A read that goes through the log: linearizable by construction.
    Get {
        key: String,
    },
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Request::Put { key, value } => write!(f, "put {key}={value}"),
            Request::Get { key } => write!(f, "get {key}"),
        }
    }
}

/// What applying a command returned: the key's value after it (`None`: absent).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    pub value: Option<String>,
}

/// Node ids are the node's position in the scenario plus one (openraft's id 0
/// is a valid id, but 1-based ids read better next to n1, n2, ...).
pub fn node_id(index: usize) -> u64 {
    index as u64 + 1
}

pub fn node_index(id: u64) -> usize {
    (id - 1) as usize
}
