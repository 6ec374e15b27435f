//! `zookeeper`: a three-server ZooKeeper ensemble — FastLeaderElection, Zab's
//! discovery/sync/broadcast over learner connections, a follower pipeline with a
//! sequential sync thread (append, fsync, ACK) and a commit processor that applies
//! committed txns whether or not they are logged yet — and ZOOKEEPER-4541: a sync
//! thread that dies on a null learner socket, losing a committed txn from the log of
//! a follower that already applied it.
//!
//! Pure cores with unit tests: [`election`] (vote order, FLE rounds), [`sync_queue`]
//! (the sync thread's queue), [`zab`] (quorum commits, the commit processor,
//! DIFF/TRUNC/SNAP), [`tree`] (the data tree), [`checks`] (the invariant). The async
//! shell: [`server`] (peer loop, election, commands, observations), [`follower`],
//! [`leader`], [`sync_thread`], over [`wire`] (TCP frames) and [`storage`] (disk).

pub mod checks;
pub mod election;
mod follower;
mod leader;
mod observations;
mod server;
pub mod storage;
pub mod sync_queue;
mod sync_thread;
pub mod tree;
pub mod wire;
pub mod zab;
pub mod zxid;

use faultline_api::{
    parse_json, Answers, BugInfo, ChaosDomain, Check, ClusterView, Consistency, FailPoint,
    FailPointInfo, HistoryModel, InvariantInfo, InvariantKind, Model, ModelInfo, NodeCtx, OpInfo,
    ParamChaos, ParamInfo, ParamKind, ParsedOp, PointChaos, RoleInfo,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::time::Duration;

/// The defect, switchable per scenario variant.
pub static BUG_4541: BugInfo = BugInfo {
    key: "ZOOKEEPER-4541",
    summary: "a follower's sync thread dies on a null learner socket and the learner's shutdown does not stop it: a committed txn the follower applied never reaches its txn log",
    buggy: "SendAckRequestProcessor answers a failed ACK with `if (!learner.sock.isClosed()) learner.sock.close()`; once closeSocket() nulled the field this throws NullPointerException and the sync thread dies with everything still queued; Learner.shutdown() calls zk.shutdown(boolean), which LearnerZooKeeperServer does not override, so the sync thread is neither stopped nor drained before LOOKING (release-3.7.1)",
    fixed: "a failed ACK calls learner.closeSocket(), a no-op on a closed socket, and the thread goes on; the learner's shutdown first drains the sync thread (request of death, join, flush: append and fsync) and only then fast-forwards and looks for a leader (ZOOKEEPER-4409, ZOOKEEPER-4712)",
};

/// The fail points of the zookeeper model: its one registry of names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZkPoint {
    /// The sync thread's fsync of the txn log.
    Fsync,
    /// Taking a snapshot of the data tree.
    SnapshotTake,
    /// The leader's tick: a clean shutdown from inside.
    LeaderShutdown,
}

static FSYNC: FailPointInfo = FailPointInfo {
    name: "sync.fsync",
    summary: "the sync thread's fsync of the txn log, before it ACKs the batch (stall: a slow disk: the thread and every request queued behind it wait; error: the fsync throws and the sync thread dies)",
    errors: &["io"],
    stall: true,
    panic: true,
    chaos: // One fsync that fails, then a disk that recovers: an fsync error that
    // keeps failing while appends succeed loses committed txns in ZooKeeper
    // as in the model (docs/models/zookeeper.md, "An fsync that keeps
    // failing"), which ZooKeeper does not promise to survive.
    PointChaos {
        errors: &["io"],
        count: Some(1),
        stall_ms: Some((5, 3_000)),
        panic: true,
        ..PointChaos::NONE
    },
};
static SNAPSHOT_TAKE: FailPointInfo = FailPointInfo {
    name: "snapshot.take",
    summary: "taking a snapshot: a new leader's (Leader.lead -> loadData), a SNAP/TRUNC learner's at NEWLEADER, or the sync thread's after snap_count txns (stall: a slow snapshot; error: \"Severe unrecoverable error\", the process exits)",
    errors: &["io"],
    stall: true,
    panic: true,
    chaos: PointChaos {
        errors: &["io"],
        count: Some(1),
        stall_ms: Some((5, 3_000)),
        panic: true,
        ..PointChaos::NONE
    },
};
static LEADER_SHUTDOWN: FailPointInfo = FailPointInfo {
    name: "leader.shutdown",
    summary: "the leader's tick (every tick/2) shuts the leader down cleanly: `error: process` = QuorumPeer.shutdown on JVM exit (learner sockets closed, own sync thread drained, process exits); `error: leader` = Leader.shutdown only (back to LOOKING); panic: the process dies (learners see a reset)",
    errors: &["process", "leader"],
    stall: false,
    panic: true,
    chaos: PointChaos {
        errors: &["process", "leader"],
        panic: true,
        ..PointChaos::NONE
    },
};

impl FailPoint for ZkPoint {
    fn info(self) -> &'static FailPointInfo {
        match self {
            ZkPoint::Fsync => &FSYNC,
            ZkPoint::SnapshotTake => &SNAPSHOT_TAKE,
            ZkPoint::LeaderShutdown => &LEADER_SHUTDOWN,
        }
    }
}

faultline_api::probes! {
    /// The preconditions of the ensemble's mechanisms (ZOOKEEPER-4541's among
    /// them), checked where a server decides them.
    pub enum ZkProbe {
        SyncBusyAtFollowerShutdown {
            name: "zk_sync_thread_busy_at_follower_shutdown",
            rare: false,
            summary: "a follower shut down while its sync thread held requests (an fsync in progress or a non-empty queue)",
        },
        AckAfterSocketClosed {
            name: "zk_ack_after_learner_socket_closed",
            rare: false,
            summary: "the sync thread's ACK write found the learner socket already closed (nulled by closeSocket)",
        },
        AppliedBeforeLogged {
            name: "zk_follower_applied_before_logged",
            rare: false,
            summary: "a follower applied a committed txn that its own txn log did not yet hold durably",
        },
        SyncThreadDied {
            name: "zk_sync_thread_died",
            rare: false,
            summary: "an exception ended a sync thread (\"SyncRequestProcessor exited!\") with what it held",
        },
        EmptyDiff {
            name: "zk_learner_synced_by_empty_diff",
            rare: false,
            summary: "a leader synced a learner that had processed txns with an empty DIFF (its last zxid equals the leader's)",
        },
        ElectionTieBySid {
            name: "zk_election_tie_broken_by_sid",
            rare: false,
            summary: "a server elected another whose vote had its own epoch and last zxid (past the first txn): the server id decided",
        },
        RestartReplaysLog {
            name: "zk_restart_replays_txn_log",
            rare: false,
            summary: "a restarted server rebuilt its tree from its snapshot plus txn log records to replay",
        },
    }
}

/// Client operations. Writes go to the leader (`on: leader` is the default);
/// `get` reads the local tree of the server it is sent to, as ZooKeeper reads do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ZkOp {
    Create {
        path: String,
        #[serde(default)]
        data: String,
        /// Make the node ephemeral, owned by this open session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ephemeral: Option<String>,
    },
    Delete {
        path: String,
    },
    SetData {
        path: String,
        data: String,
    },
    Get {
        path: String,
    },
    OpenSession {
        session: String,
    },
    /// Closes the session: its ephemeral nodes go with it.
    CloseSession {
        session: String,
    },
    /// Take a snapshot of this server's data tree now (the `snapshot` admin
    /// command, `ZooKeeperServer.takeSnapshot`).
    Snapshot {},
}

impl ZkOp {
    fn summary(&self) -> String {
        match self {
            ZkOp::Create {
                path,
                data,
                ephemeral: Some(owner),
            } => format!("create {path}={data:?} ephemeral({owner})"),
            ZkOp::Create { path, data, .. } => format!("create {path}={data:?}"),
            ZkOp::Delete { path } => format!("delete {path}"),
            ZkOp::SetData { path, data } => format!("set_data {path}={data:?}"),
            ZkOp::Get { path } => format!("get {path}"),
            ZkOp::OpenSession { session } => format!("open_session {session}"),
            ZkOp::CloseSession { session } => format!("close_session {session}"),
            ZkOp::Snapshot {} => "snapshot".to_string(),
        }
    }

    /// The txn a write becomes; `None` for reads.
    pub fn txn(&self) -> Option<tree::Txn> {
        use tree::Txn;
        match self.clone() {
            ZkOp::Create {
                path,
                data,
                ephemeral,
            } => Some(Txn::Create {
                path,
                data,
                ephemeral,
            }),
            ZkOp::Delete { path } => Some(Txn::Delete { path }),
            ZkOp::SetData { path, data } => Some(Txn::SetData { path, data }),
            ZkOp::OpenSession { session } => Some(Txn::CreateSession { session }),
            ZkOp::CloseSession { session } => Some(Txn::CloseSession { session }),
            ZkOp::Get { .. } | ZkOp::Snapshot {} => None,
        }
    }

    fn check(&self) -> Result<(), String> {
        let path = match self {
            ZkOp::Create { path, .. }
            | ZkOp::Delete { path }
            | ZkOp::SetData { path, .. }
            | ZkOp::Get { path } => Some(path),
            ZkOp::OpenSession { .. } | ZkOp::CloseSession { .. } | ZkOp::Snapshot {} => None,
        };
        if let Some(path) = path {
            tree::check_path(path).map_err(|_| {
                format!("`{path}` is not a znode path (`/a/b`: no trailing `/`, not the root)")
            })?;
        }
        Ok(())
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// ZooKeeper's tickTime (default 200 ms here; 2000 ms in zoo.cfg samples).
    #[serde(default)]
    pub tick_ms: Option<u64>,
    /// Ticks a learner may take to connect and sync (initLimit, default 10).
    #[serde(default)]
    pub init_limit: Option<u64>,
    /// Ticks without a packet before a learner or the leader gives up (syncLimit, default 5).
    #[serde(default)]
    pub sync_limit: Option<u64>,
    /// Txns between the sync thread's snapshots (snapCount, default 100000: none
    /// in a scenario unless lowered).
    #[serde(default)]
    pub snap_count: Option<u64>,
    /// Server ids by node name (`myid`; FLE breaks ties by it). Unset: position
    /// in `nodes`, from 1.
    #[serde(default)]
    pub sid: Option<BTreeMap<String, u64>>,
}

/// Server ids accepted (`myid`, 1..=255 as the ZooKeeper admin guide asks).
pub const SID_BOUNDS: (i64, i64) = (1, 255);

/// Each node's server id, in node order: the `sid` param's, or the position
/// from 1. `Err` names a node the map leaves out or an id given twice.
pub fn server_ids(
    names: &[String],
    sids: Option<&BTreeMap<String, u64>>,
) -> Result<Vec<u64>, String> {
    let Some(map) = sids else {
        return Ok((1..=names.len() as u64).collect());
    };
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        let id = *map
            .get(name)
            .ok_or_else(|| format!("sid names no server id for {name}"))?;
        if ids.contains(&id) {
            return Err(format!("sid {id} is given twice"));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// The effective configuration of a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub tick_ms: u64,
    pub init_limit: u64,
    pub sync_limit: u64,
    pub snap_count: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tick_ms: 200,
            init_limit: 10,
            sync_limit: 5,
            snap_count: 100_000,
        }
    }
}

impl Config {
    pub fn from_params(params: &Params) -> Config {
        let d = Config::default();
        Config {
            tick_ms: params.tick_ms.unwrap_or(d.tick_ms),
            init_limit: params.init_limit.unwrap_or(d.init_limit),
            sync_limit: params.sync_limit.unwrap_or(d.sync_limit),
            snap_count: params.snap_count.unwrap_or(d.snap_count),
        }
    }

    /// The learner socket's timeout while connecting and syncing.
    pub fn init_timeout(&self) -> Duration {
        Duration::from_millis(self.tick_ms * self.init_limit)
    }

    /// The learner socket's timeout once synced (a lost leader is noticed after it).
    pub fn sync_timeout(&self) -> Duration {
        Duration::from_millis(self.tick_ms * self.sync_limit)
    }

    pub fn half_tick(&self) -> Duration {
        Duration::from_millis(self.tick_ms / 2)
    }
}

pub struct ZooKeeper;

/// A write's answers: ZooKeeper's error codes are definite (the leader checked
/// the txn against its outstanding view, or applied it, and said no); a server
/// that does not lead, or a leader out of proposal slots, proposes nothing. A
/// lost connection is unknown.
const WRITE_ANSWERS: Answers = Answers {
    definite: &[
        "NoNode",
        "NodeExists",
        "NotEmpty",
        "NoChildrenForEphemerals",
        "SessionExpired",
        "SessionExists",
        "BadArguments",
    ],
    refused: &["not leader", "throttled"],
};

static MODEL: ZooKeeper = ZooKeeper;

pub const INVARIANT_DURABLE: &str = "committed_txns_durable";

static INFO: LazyLock<ModelInfo> = LazyLock::new(|| {
    ModelInfo {
    name: "zookeeper",
    summary: "a ZooKeeper ensemble: FastLeaderElection, Zab over learner TCP connections, a follower sync thread (append, fsync, ACK) and commit processor, DIFF/TRUNC/SNAP sync, snapshots + txn log on disk",
    roles: vec![RoleInfo {
        name: "server",
        summary: "a voting ZooKeeper server (server id = position in `nodes` from 1, or the `sid` param)",
        count_min: 3,
        count_max: 7,
    }],
    ops: vec![
        OpInfo {
            name: "create",
            summary: "create a znode (parent must exist); `ephemeral: <session>` ties it to an open session",
            example: "{op: create, path: /k, data: v}",
            consistency: Consistency::Linearizable,
            answers: WRITE_ANSWERS,
            chaos: &[
                "{op: create, path: \"/c/n{1..12}\", data: \"v{seq}\"}",
                "{op: create, path: \"/c/e{1..6}\", data: e, ephemeral: \"s{1..3}\"}",
            ],
        },
        OpInfo {
            name: "delete",
            summary: "delete a znode without children",
            example: "{op: delete, path: /k}",
            consistency: Consistency::Linearizable,
            answers: WRITE_ANSWERS,
            chaos: &["{op: delete, path: \"/c/n{1..12}\"}"],
        },
        OpInfo {
            name: "set_data",
            summary: "replace a znode's data",
            example: "{op: set_data, path: /k, data: v2}",
            consistency: Consistency::Linearizable,
            answers: WRITE_ANSWERS,
            chaos: &["{op: set_data, path: \"/c/n{1..12}\", data: \"w{seq}\"}"],
        },
        OpInfo {
            name: "get",
            summary: "read a znode from the local tree of the server the op is sent to; a server that is not serving (looking, syncing) refuses",
            example: "{on: zk1, op: get, path: /k}",
            consistency: Consistency::SessionMonotonic,
            answers: Answers {
                definite: &["NoNode"],
                refused: &[server::NOT_SERVING],
            },
            chaos: &["{on: any, op: get, path: \"/c/n{1..12}\", weight: 2}"],
        },
        OpInfo {
            name: "open_session",
            summary: "open a session (createSession txn); the name stands for the session id",
            example: "{op: open_session, session: s1}",
            consistency: Consistency::Linearizable,
            answers: WRITE_ANSWERS,
            chaos: &["{op: open_session, session: \"s{1..3}\"}"],
        },
        OpInfo {
            name: "close_session",
            summary: "close a session (closeSession txn): its ephemeral nodes are deleted",
            example: "{op: close_session, session: s1}",
            consistency: Consistency::Linearizable,
            answers: WRITE_ANSWERS,
            chaos: &["{op: close_session, session: \"s{1..3}\"}"],
        },
        OpInfo {
            name: "snapshot",
            summary: "take a snapshot of this server's data tree now (the snapshot admin command); answers its zxid; a server that is not serving (looking, syncing) refuses",
            example: "{on: zk1, op: snapshot}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &["{on: any, op: snapshot}"],
        },
    ],
    fail_points: vec![&FSYNC, &SNAPSHOT_TAKE, &LEADER_SHUTDOWN],
    invariants: vec![InvariantInfo {
        name: INVARIANT_DURABLE,
        kind: InvariantKind::Safety,
        summary: "every committed txn a server has applied is in its durable txn log or covered by its snapshot (no applied txn lost by a dead sync thread; at quiescence no hole against the leader's log)",
    }],
    bugs: vec![&BUG_4541],
    probes: ZkProbe::infos(),
    index_format: faultline_api::IndexFormat::Hex,
    has_leader: true,
    leader_transfer: false,
    params: params_info(),
    observations: observations::observations(),
    reports_removed: false,
    history: HistoryModel::ZooKeeper,
    chaos: ChaosDomain {
        setup: &[
            "{await: {leader: any, within: 10s}}",
            "{client: {op: create, path: /c, data: root, expect: ok}}",
        ],
        every_ms: 50,
        spacing_ms: (300, 3_000),
        duration_ms: (100, 5_000),
        op_timeout_ms: 5_000,
        tick_ms: 5,
        link_latency_ms: (1, 3),
        final_ops: &[
            "{op: create, path: \"/final{seq}\", data: done}",
            "{op: get, path: \"/final{seq}\"}",
        ],
        ..ChaosDomain::DEFAULT
    },
}
});

/// Bounds the model accepts (`parse_params` checks the same ones).
const TICK_MS_BOUNDS: (u64, u64) = (10, 10_000);
const LIMIT_TICKS_BOUNDS: (i64, i64) = (1, 100);
const SNAP_COUNT_BOUNDS: (i64, i64) = (2, 1_000_000_000);

/// Every `Params` key, declared.
fn params_info() -> Vec<ParamInfo> {
    let d = Config::default();
    vec![
        ParamInfo::duration_ms(
            "tick_ms",
            TICK_MS_BOUNDS,
            Some(d.tick_ms),
            "ZooKeeper's tickTime (2000 ms in zoo.cfg samples; shorter here so runs are short)",
        )
        .chaos(ParamChaos::Range { min: 100, max: 400 }),
        ParamInfo::integer(
            "init_limit",
            LIMIT_TICKS_BOUNDS,
            Some(d.init_limit as i64),
            "initLimit: ticks a learner may take to connect and sync",
        ),
        ParamInfo::integer(
            "sync_limit",
            LIMIT_TICKS_BOUNDS,
            Some(d.sync_limit as i64),
            "syncLimit: ticks without a packet before a learner or the leader gives up",
        )
        .chaos(ParamChaos::Range { min: 2, max: 10 }),
        ParamInfo::integer(
            "snap_count",
            SNAP_COUNT_BOUNDS,
            Some(d.snap_count as i64),
            "snapCount: txns between the sync thread's snapshots (the default takes none in a scenario)",
        )
        .chaos(ParamChaos::Range {
            min: 20,
            max: 2_000,
        }),
        ParamInfo {
            name: "sid",
            kind: ParamKind::PerNode {
                value: Box::new(ParamKind::Integer {
                    min: SID_BOUNDS.0,
                    max: SID_BOUNDS.1,
                }),
                single: false,
                every_node: true,
                distinct: true,
            },
            default: None,
            summary: "server ids (myid) by node: {zk1: 2, zk2: 1, zk3: 3}; FLE breaks equal votes by the higher id; unset: position in nodes, from 1",
            chaos: ParamChaos::Fixed,
        },
    ]
}

impl Model for ZooKeeper {
    fn info(&self) -> &ModelInfo {
        &INFO
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: ZkOp = parse_json(op)?;
        parsed.check()?;
        Ok(ParsedOp {
            summary: parsed.summary(),
            op: serde_json::to_value(&parsed).expect("serializes"),
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        let params: Params = parse_json(params)?;
        let config = Config::from_params(&params);
        let (lo, hi) = TICK_MS_BOUNDS;
        if !(lo..=hi).contains(&config.tick_ms) {
            return Err(format!("tick_ms must be within {lo}..={hi}"));
        }
        let (lo, hi) = LIMIT_TICKS_BOUNDS;
        let ticks = lo as u64..=hi as u64;
        if !ticks.contains(&config.init_limit) || !ticks.contains(&config.sync_limit) {
            return Err(format!(
                "init_limit and sync_limit must be within {lo}..={hi} ticks"
            ));
        }
        let (lo, hi) = SNAP_COUNT_BOUNDS;
        if !(lo as u64..=hi as u64).contains(&config.snap_count) {
            return Err(format!("snap_count must be within {lo}..={hi}"));
        }
        if let Some(sids) = &params.sid {
            let (lo, hi) = SID_BOUNDS;
            let mut seen = BTreeMap::new();
            for (node, id) in sids {
                if !(lo as u64..=hi as u64).contains(id) {
                    return Err(format!("sid of {node} must be within {lo}..={hi}"));
                }
                if let Some(first) = seen.insert(*id, node) {
                    return Err(format!("{first} and {node} both have sid {id}"));
                }
            }
        }
        Ok(())
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        Box::pin(server::run(ctx))
    }

    fn check(&self, invariant: &str, cluster: &ClusterView) -> Check {
        match invariant {
            INVARIANT_DURABLE => checks::committed_txns_durable(cluster),
            other => Check::Fail(format!("zookeeper declares no invariant `{other}`")),
        }
    }
}

/// The model, registered.
pub fn model() -> Option<&'static dyn Model> {
    Some(&MODEL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names() -> Vec<String> {
        ["zk1", "zk2", "zk3"].map(String::from).to_vec()
    }

    #[test]
    fn server_ids_are_positions_unless_the_sid_param_names_them() {
        assert_eq!(server_ids(&names(), None), Ok(vec![1, 2, 3]));
        let sids: BTreeMap<String, u64> =
            [("zk1".into(), 2), ("zk2".into(), 1), ("zk3".into(), 3)].into();
        assert_eq!(server_ids(&names(), Some(&sids)), Ok(vec![2, 1, 3]));
        let partial: BTreeMap<String, u64> = [("zk1".into(), 2)].into();
        assert_eq!(
            server_ids(&names(), Some(&partial)),
            Err("sid names no server id for zk2".into())
        );
        let twice: BTreeMap<String, u64> =
            [("zk1".into(), 2), ("zk2".into(), 2), ("zk3".into(), 3)].into();
        assert_eq!(
            server_ids(&names(), Some(&twice)),
            Err("sid 2 is given twice".into())
        );
    }

    #[test]
    fn the_sid_param_is_checked_and_the_snapshot_op_parses() {
        let ok = json!({"sid": {"zk1": 2, "zk2": 1, "zk3": 3}});
        assert_eq!(MODEL.parse_params(&ok), Ok(()));
        let twice = json!({"sid": {"zk1": 2, "zk2": 2}});
        assert_eq!(
            MODEL.parse_params(&twice),
            Err("zk1 and zk2 both have sid 2".into())
        );
        assert!(MODEL.parse_params(&json!({"sid": {"zk1": 256}})).is_err());
        let op = MODEL.parse_op(&json!({"op": "snapshot"})).expect("parses");
        assert_eq!(op.summary, "snapshot");
        assert!(MODEL
            .parse_op(&json!({"op": "snapshot", "path": "/k"}))
            .is_err());
    }
}
