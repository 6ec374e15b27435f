//! The fail points of the openraft model: its one registry of names.
//!
//! Network points are evaluated on the node that receives the RPC, in the
//! kit's RPC server: a `request` point before openraft sees the request, a
//! `response` point after openraft answered and before the answer is sent. An
//! error there loses the message (the sender's RPC fails, openraft retries); a
//! stall holds it in flight. AppendEntries that carry entries and those that do
//! not (heartbeats, commit-index updates) have points of their own, so a
//! scenario can hold one follower's acknowledgements without holding its
//! heartbeats. A lost or late message is what a network does; openraft's RPC
//! deadline and retries must survive it, so chaos does both
//! (`faultline_api::kit::message_point`).
//!
//! `log.read` and `log.flush` are the kit's durable log's (`kit::LogPoint`,
//! declared there); the log's `log.write` is not exposed here. On the disk points
//! chaos stalls (a slow disk) and panics (the process dies there), never errors:
//! openraft treats every StorageError as fatal (RaftCore stops, the node must be
//! restarted by its operator), so an error tests nothing but that.

use faultline_api::kit::{LogPoint, disk_point, message_point};
use faultline_api::{FailPoint, FailPointInfo};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    AppendRequest,
    AppendResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    VoteRequest,
    VoteResponse,
    SnapshotRead,
    Apply,
}

static APPEND_REQUEST: FailPointInfo = message_point(
    "append_entries.request",
    "an AppendEntries carrying entries reaches this node (error: the request is lost; stall: held in flight)",
);
static APPEND_RESPONSE: FailPointInfo = message_point(
    "append_entries.response",
    "this node answers an AppendEntries carrying entries, after openraft handled it (error: the response is lost; stall: held in flight)",
);
static HEARTBEAT_REQUEST: FailPointInfo = message_point(
    "heartbeat.request",
    "an AppendEntries without entries (heartbeat, commit update) reaches this node (error: lost; stall: held)",
);
static HEARTBEAT_RESPONSE: FailPointInfo = message_point(
    "heartbeat.response",
    "this node answers an AppendEntries without entries (error: lost; stall: held)",
);
static VOTE_REQUEST: FailPointInfo = message_point(
    "vote.request",
    "a vote or pre-vote request reaches this node (error: lost; stall: held)",
);
static VOTE_RESPONSE: FailPointInfo = message_point(
    "vote.response",
    "this node answers a vote or pre-vote request (error: lost; stall: held)",
);
static SNAPSHOT_READ: FailPointInfo = disk_point(
    "snapshot.read",
    "openraft reads this node's current snapshot (to send it to a lagging node) (error: io; stall)",
    &["io"],
);
static APPLY: FailPointInfo = disk_point(
    "apply",
    "before the state machine applies a batch of committed entries (stall: the apply loop waits)",
    &[],
);

impl FailPoint for Point {
    fn info(self) -> &'static FailPointInfo {
        match self {
            Point::AppendRequest => &APPEND_REQUEST,
            Point::AppendResponse => &APPEND_RESPONSE,
            Point::HeartbeatRequest => &HEARTBEAT_REQUEST,
            Point::HeartbeatResponse => &HEARTBEAT_RESPONSE,
            Point::VoteRequest => &VOTE_REQUEST,
            Point::VoteResponse => &VOTE_RESPONSE,
            Point::SnapshotRead => &SNAPSHOT_READ,
            Point::Apply => &APPLY,
        }
    }
}

/// The registry, in the order chaos draws from.
pub fn all() -> Vec<&'static FailPointInfo> {
    let network = [
        Point::AppendRequest,
        Point::AppendResponse,
        Point::HeartbeatRequest,
        Point::HeartbeatResponse,
        Point::VoteRequest,
        Point::VoteResponse,
    ];
    let log = [LogPoint::Read, LogPoint::Flush];
    let rest = [Point::SnapshotRead, Point::Apply];
    let network = network.into_iter().map(Point::info);
    let rest = rest.into_iter().map(Point::info);
    network.chain(log.map(LogPoint::info)).chain(rest).collect()
}
