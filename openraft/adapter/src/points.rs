//! The fail points of the openraft model: its one registry of names.
//!
//! Network points are evaluated on the node that receives the RPC, in the
//! model's RPC server: a `request` point before openraft sees the request, a
//! `response` point after openraft answered and before the answer is sent. An
//! error there loses the message (the sender's RPC runs into its deadline); a
//! stall holds it in flight. AppendEntries that carry entries and those that do
//! not (heartbeats, commit-index updates) have points of their own, so a
//! scenario can hold one follower's acknowledgements without holding its
//! heartbeats.

use faultline_api::{FailPoint, FailPointInfo, PointChaos};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    AppendRequest,
    AppendResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    VoteRequest,
    VoteResponse,
    LogRead,
    LogFlush,
    SnapshotRead,
    Apply,
}

const LOST: &[&str] = &["lost"];

static APPEND_REQUEST: FailPointInfo = FailPointInfo {
    name: "append_entries.request",
    summary: "an AppendEntries carrying entries reaches this node (error: the request is lost; stall: held in flight)",
    errors: LOST,
    stall: true,
    panic: false,
    // A lost or late message is what a network does; openraft's RPC deadline
    // and retries must survive it.
    chaos: PointChaos {
        errors: LOST,
        stall_ms: Some((5, 2_000)),
        ..PointChaos::NONE
    },
};
static APPEND_RESPONSE: FailPointInfo = FailPointInfo {
    name: "append_entries.response",
    summary: "this node answers an AppendEntries carrying entries, after openraft handled it (error: the response is lost; stall: held in flight)",
    errors: LOST,
    stall: true,
    panic: false,
    // A lost or late message is what a network does; openraft's RPC deadline
    // and retries must survive it.
    chaos: PointChaos {
        errors: LOST,
        stall_ms: Some((5, 2_000)),
        ..PointChaos::NONE
    },
};
static HEARTBEAT_REQUEST: FailPointInfo = FailPointInfo {
    name: "heartbeat.request",
    summary: "an AppendEntries without entries (heartbeat, commit update) reaches this node (error: lost; stall: held)",
    errors: LOST,
    stall: true,
    panic: false,
    // A lost or late message is what a network does; openraft's RPC deadline
    // and retries must survive it.
    chaos: PointChaos {
        errors: LOST,
        stall_ms: Some((5, 2_000)),
        ..PointChaos::NONE
    },
};
static HEARTBEAT_RESPONSE: FailPointInfo = FailPointInfo {
    name: "heartbeat.response",
    summary: "this node answers an AppendEntries without entries (error: lost; stall: held)",
    errors: LOST,
    stall: true,
    panic: false,
    // A lost or late message is what a network does; openraft's RPC deadline
    // and retries must survive it.
    chaos: PointChaos {
        errors: LOST,
        stall_ms: Some((5, 2_000)),
        ..PointChaos::NONE
    },
};
static VOTE_REQUEST: FailPointInfo = FailPointInfo {
    name: "vote.request",
    summary: "a vote or pre-vote request reaches this node (error: lost; stall: held)",
    errors: LOST,
    stall: true,
    panic: false,
    // A lost or late message is what a network does; openraft's RPC deadline
    // and retries must survive it.
    chaos: PointChaos {
        errors: LOST,
        stall_ms: Some((5, 2_000)),
        ..PointChaos::NONE
    },
};
static VOTE_RESPONSE: FailPointInfo = FailPointInfo {
    name: "vote.response",
    summary: "this node answers a vote or pre-vote request (error: lost; stall: held)",
    errors: LOST,
    stall: true,
    panic: false,
    // A lost or late message is what a network does; openraft's RPC deadline
    // and retries must survive it.
    chaos: PointChaos {
        errors: LOST,
        stall_ms: Some((5, 2_000)),
        ..PointChaos::NONE
    },
};
static LOG_READ: FailPointInfo = FailPointInfo {
    name: "log.read",
    summary: "openraft reads entries from this node's log (replication, apply) (error: io, fatal to openraft; stall: slow read)",
    errors: &["io"],
    stall: true,
    panic: true,
    // A slow disk and a process that dies here are in the domain. An io error
    // is not: openraft treats every StorageError as fatal (RaftCore stops, the
    // node must be restarted by its operator), so it tests nothing but that.
    chaos: PointChaos {
        stall_ms: Some((5, 2_000)),
        panic: true,
        ..PointChaos::NONE
    },
};
static LOG_FLUSH: FailPointInfo = FailPointInfo {
    name: "log.flush",
    summary: "before appended entries are fsynced and openraft is told they are durable (stall: a slow disk; a leader's own progress waits)",
    errors: &["io"],
    stall: true,
    panic: true,
    // A slow disk and a process that dies here are in the domain. An io error
    // is not: openraft treats every StorageError as fatal (RaftCore stops, the
    // node must be restarted by its operator), so it tests nothing but that.
    chaos: PointChaos {
        stall_ms: Some((5, 2_000)),
        panic: true,
        ..PointChaos::NONE
    },
};
static SNAPSHOT_READ: FailPointInfo = FailPointInfo {
    name: "snapshot.read",
    summary: "openraft reads this node's current snapshot (to send it to a lagging node) (error: io; stall)",
    errors: &["io"],
    stall: true,
    panic: true,
    // A slow disk and a process that dies here are in the domain. An io error
    // is not: openraft treats every StorageError as fatal (RaftCore stops, the
    // node must be restarted by its operator), so it tests nothing but that.
    chaos: PointChaos {
        stall_ms: Some((5, 2_000)),
        panic: true,
        ..PointChaos::NONE
    },
};
static APPLY: FailPointInfo = FailPointInfo {
    name: "apply",
    summary: "before the state machine applies a batch of committed entries (stall: the apply loop waits)",
    errors: &[],
    stall: true,
    panic: true,
    // A slow disk and a process that dies here are in the domain. An io error
    // is not: openraft treats every StorageError as fatal (RaftCore stops, the
    // node must be restarted by its operator), so it tests nothing but that.
    chaos: PointChaos {
        stall_ms: Some((5, 2_000)),
        panic: true,
        ..PointChaos::NONE
    },
};

impl FailPoint for Point {
    fn info(self) -> &'static FailPointInfo {
        match self {
            Point::AppendRequest => &APPEND_REQUEST,
            Point::AppendResponse => &APPEND_RESPONSE,
            Point::HeartbeatRequest => &HEARTBEAT_REQUEST,
            Point::HeartbeatResponse => &HEARTBEAT_RESPONSE,
            Point::VoteRequest => &VOTE_REQUEST,
            Point::VoteResponse => &VOTE_RESPONSE,
            Point::LogRead => &LOG_READ,
            Point::LogFlush => &LOG_FLUSH,
            Point::SnapshotRead => &SNAPSHOT_READ,
            Point::Apply => &APPLY,
        }
    }
}

pub fn all() -> Vec<&'static FailPointInfo> {
    [
        Point::AppendRequest,
        Point::AppendResponse,
        Point::HeartbeatRequest,
        Point::HeartbeatResponse,
        Point::VoteRequest,
        Point::VoteResponse,
        Point::LogRead,
        Point::LogFlush,
        Point::SnapshotRead,
        Point::Apply,
    ]
    .into_iter()
    .map(Point::info)
    .collect()
}
