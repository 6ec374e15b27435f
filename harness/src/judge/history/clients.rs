//! What clients saw in one run, as a history of processes grouped into the
//! run's clients (lanes), with each op's session. The runner records it
//! (`runner/recorder.rs`); the consistency checker judges it; the report shows
//! and exports it.

use super::History;
use serde::{Deserialize, Serialize};

/// One process of the history and the client it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    pub process: u64,
    /// `script`, `workload client 2`, `chaos client 0`.
    pub client: String,
}

/// What clients saw in one run: the history, which client each process is, and
/// each op's session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientHistory {
    pub history: History,
    /// One per process, in process order.
    pub lanes: Vec<Lane>,
    /// Each op's session (by op position): its client's connection to one start
    /// of the node it was sent to. Session reads (ZooKeeper) are judged per session.
    pub sessions: Vec<u64>,
    /// Set when an event could not be recorded (a defect of the harness): the
    /// history is then incomplete and judging it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken: Option<String>,
}
