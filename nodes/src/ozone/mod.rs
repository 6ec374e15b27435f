//! `ozone-om`: three Ozone Managers on the Raft-style log, with the parts of the
//! OM that HDDS-17603, HDDS-10798 and HDDS-17670 turn on: the apply path (table
//! cache, double buffer, flush to a durable DB with TRANSACTION_INFO, the
//! applied-index bookkeeping and leader readiness), the snapshot info table and
//! chain, FSO bucket usage, and the deleting services.
//!
//! Plain state machines (unit-tested without a simulator): [`db`] (the RocksDB
//! stand-in), [`buffer`] (the double buffer), [`applied`] (notify bookkeeping and
//! readiness), [`chain`] (the snapshot chain), [`request`] (the requests'
//! `validateAndUpdateCache`). [`node`] is the async shell that runs them.

pub mod applied;
pub mod buffer;
pub mod chain;
pub mod db;
mod invariants;
mod node;
mod observations;
pub mod request;
mod sequential;
mod services;
pub mod types;

use faultline_api::{
    parse_json, Answers, BugInfo, ChaosDomain, Check, ClusterView, Consistency, FailPoint,
    FailPointInfo, HistoryModel, InvariantInfo, InvariantKind, Model, ModelInfo, NodeCtx, OpInfo,
    ParamChaos, ParamInfo, ParamValue, ParsedOp, PerNode, PointChaos, RoleInfo, Sequential,
    WEEK_MS,
};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use types::split_path;

pub static BUG_17603: BugInfo = BugInfo {
    key: "HDDS-17603",
    summary: "OM persists the index of a write that fails with INTERNAL_ERROR or METADATA_ERROR before it terminates, so after restart it never applies that write",
    buggy: "every response is added to the double buffer; the flush writes TRANSACTION_INFO at the failed index before processResponse's terminate takes the process down",
    fixed: "a response on which the OM terminates (isCriticalError, shared with processResponse) is not added to the double buffer, so the restarted OM applies the entry again",
};

pub static BUG_10798: BugInfo = BugInfo {
    key: "HDDS-10798",
    summary: "a new OM leader stays not ready when an entry is still in the double buffer as its startup entry is notified",
    buggy: "updateLastAppliedTermIndex compares the old applied index with lastSkippedIndex (HDDS-10546 code)",
    fixed: "it compares the new index with lastSkippedIndex, so the flush moves the applied index up to lastNotified",
};

pub static BUG_17670: BugInfo = BugInfo {
    key: "HDDS-17670",
    summary: "a DirectoryDeletingService run that outlives a lost and regained OM leadership purges directories again and reduces bucket usage twice",
    buggy: "a run checks leader readiness once at its start; its workers submit PurgeDirectories (and the snapshot task SetSnapshotProperty) whenever the OM is leader at submit time",
    fixed: "a run records the Raft term before its leader check and hands it to its workers; a submit is skipped (the worker stops) once the term has changed",
};

/// The fail points of the OM model: its one registry of names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OmPoint {
    SnapshotTableRead,
    KeyTableRead,
    SnapshotChainLoad,
    ApplyUnchecked,
    DoubleBufferFlush,
    DirDeletingPostTermRead,
    DirDeletingPreSubmit,
    DirDeletingPostTermCheck,
}

static SNAPSHOT_TABLE_READ: FailPointInfo = FailPointInfo {
    name: "snapshot_table.read",
    summary: "a snapshot info table read that misses the table cache and reaches the DB (narrow it to one key with the `fault_key` param): codec -> INTERNAL_ERROR, rocksdb -> METADATA_ERROR",
    errors: &["codec", "rocksdb"],
    stall: false,
    panic: false,
    chaos: PointChaos::errors(&["codec", "rocksdb"]),
};
static KEY_TABLE_READ: FailPointInfo = FailPointInfo {
    name: "key_table.read",
    summary: "a file (key) table read that misses the table cache and reaches the DB (narrow it with `fault_key`): codec -> INTERNAL_ERROR, rocksdb -> METADATA_ERROR",
    errors: &["codec", "rocksdb"],
    stall: false,
    panic: false,
    chaos: PointChaos::errors(&["codec", "rocksdb"]),
};
static SNAPSHOT_CHAIN_LOAD: FailPointInfo = FailPointInfo {
    name: "snapshot_chain.load",
    summary: "the snapshot info table iterator while the chain is loaded at OM start: the chain is marked corrupted",
    errors: &["codec", "rocksdb"],
    stall: false,
    panic: false,
    chaos: PointChaos::errors(&["codec", "rocksdb"]),
};
static APPLY_UNCHECKED: FailPointInfo = FailPointInfo {
    name: "apply.unchecked",
    summary: "a RuntimeException inside a request: runCommand terminates the OM before anything is buffered (both modes)",
    errors: &["runtime"],
    stall: false,
    panic: true,
    chaos: PointChaos {
        errors: &["runtime"],
        panic: true,
        ..PointChaos::NONE
    },
};
static DOUBLE_BUFFER_FLUSH: FailPointInfo = FailPointInfo {
    name: "double_buffer.flush",
    summary: "the flush task before it swaps the buffers (a stall holds only the flush task)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((10, 3_000)),
        panic: true,
        ..PointChaos::NONE
    },
};

static DIR_DELETING_POST_TERM_READ: FailPointInfo = FailPointInfo {
    name: "dir_deleting.post_term_read",
    summary: "a DirectoryDeletingService run after it read the Raft term (the fix records it) and before its leader check (a stall holds only that run: a leader change inside it fails the fix's comparison instead of becoming the run's term)",
    errors: &[],
    stall: true,
    panic: true,
    // DirectoryDeletingService runs on the leader only (shouldRun), so its
    // points are reached there; a worker may be held from a moment to half a
    // minute (a long RocksDB iteration, a GC pause).
    chaos: PointChaos {
        stall_ms: Some((100, 30_000)),
        panic: true,
        leader: true,
        ..PointChaos::NONE
    },
};
static DIR_DELETING_PRE_SUBMIT: FailPointInfo = FailPointInfo {
    name: "dir_deleting.pre_submit",
    summary: "a DirectoryDeletingService worker with its PurgeDirectories built, before the fix's term check and the submit (a stall holds only that worker task)",
    errors: &[],
    stall: true,
    panic: true,
    // DirectoryDeletingService runs on the leader only (shouldRun), so its
    // points are reached there; a worker may be held from a moment to half a
    // minute (a long RocksDB iteration, a GC pause).
    chaos: PointChaos {
        stall_ms: Some((100, 30_000)),
        panic: true,
        leader: true,
        ..PointChaos::NONE
    },
};
static DIR_DELETING_POST_TERM_CHECK: FailPointInfo = FailPointInfo {
    name: "dir_deleting.post_term_check",
    summary: "a DirectoryDeletingService worker after the fix's term check, before the submit (the window the fix leaves open)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: // A stall here opens the window the HDDS-17670 fix knowingly leaves
    // (HDDS-16794's in KDS; docs/models/ozone.md): outside the domain. A
    // process that dies here is inside it.
    PointChaos {
        panic: true,
        leader: true,
        ..PointChaos::NONE
    },
};

impl FailPoint for OmPoint {
    fn info(self) -> &'static FailPointInfo {
        match self {
            OmPoint::SnapshotTableRead => &SNAPSHOT_TABLE_READ,
            OmPoint::KeyTableRead => &KEY_TABLE_READ,
            OmPoint::SnapshotChainLoad => &SNAPSHOT_CHAIN_LOAD,
            OmPoint::ApplyUnchecked => &APPLY_UNCHECKED,
            OmPoint::DoubleBufferFlush => &DOUBLE_BUFFER_FLUSH,
            OmPoint::DirDeletingPostTermRead => &DIR_DELETING_POST_TERM_READ,
            OmPoint::DirDeletingPreSubmit => &DIR_DELETING_PRE_SUBMIT,
            OmPoint::DirDeletingPostTermCheck => &DIR_DELETING_POST_TERM_CHECK,
        }
    }
}

faultline_api::probes! {
    /// The preconditions of the OM model's mechanisms, checked where the OM
    /// decides them (the Raft core's own are in [`crate::raft::RaftProbe`]).
    pub enum OmProbe {
        LeaderWithUnflushedBuffer {
            name: "om_leader_with_unflushed_buffer",
            rare: true,
            summary: "an OM became leader while its double buffer held entries not yet flushed (HDDS-10798's precondition)",
        },
        StartupNotifiedWithLag {
            name: "om_startup_entry_notified_with_applied_lag",
            rare: false,
            summary: "a leader's startup entry was notified while ozoneApplied lagged more than one index behind it, so the notify rule left ozoneApplied alone",
        },
        FlushBelowNotified {
            name: "om_flush_below_last_notified",
            rare: false,
            summary: "a flush's updateLastAppliedIndex ran with its index below lastNotified (C1 held; C2 decides, the HDDS-10798 comparison)",
        },
        FlushKeptBelowNotified {
            name: "om_flush_kept_applied_below_notified",
            rare: false,
            summary: "a flush's updateLastAppliedIndex found C1 true and C2 false: ozoneApplied stayed below lastNotified",
        },
        CriticalErrorTerminates {
            name: "om_critical_error_terminates",
            rare: false,
            summary: "a request failed with INTERNAL_ERROR or METADATA_ERROR and the OM terminates (HDDS-17603's precondition)",
        },
        SnapshotPurgeReadFromDb {
            name: "om_snapshot_purge_read_from_db",
            rare: false,
            summary: "a SnapshotPurge read a snapshot info row that missed the table cache and came from the DB",
        },
        RestartAboveTransactionInfo {
            name: "om_restart_log_above_transaction_info",
            rare: false,
            summary: "an OM restarted with Raft log entries above TRANSACTION_INFO, which Raft applies again",
        },
        DdsSubmitInLaterTerm {
            name: "om_dds_submit_in_later_term",
            rare: true,
            summary: "a DirectoryDeletingService worker reached a submit in a later Raft term than the one its batch was scanned in (the run's leader check), leading or not",
        },
        DdsSubmitAfterTermChange {
            name: "om_dds_submit_after_term_change",
            rare: true,
            summary: "a DirectoryDeletingService worker reached a submit in a later Raft term than the one its batch was scanned in, with the OM leading again (HDDS-17670's precondition)",
        },
    }
}

/// Client operations. Paths are absolute: `/volume/bucket/dir/file`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum OmOp {
    CreateVolume {
        volume: String,
    },
    CreateBucket {
        bucket: String,
        #[serde(default)]
        quota_namespace: Option<i64>,
    },
    SetQuota {
        bucket: String,
        namespace: i64,
    },
    Mkdir {
        path: String,
    },
    PutFile {
        path: String,
        #[serde(default)]
        size: i64,
    },
    Delete {
        path: String,
        #[serde(default)]
        recursive: bool,
    },
    CreateSnapshot {
        bucket: String,
        name: String,
    },
    DeleteSnapshot {
        bucket: String,
        name: String,
    },
    /// The SnapshotPurge request SnapshotDeletingService submits, by table keys.
    PurgeSnapshots {
        snapshots: Vec<String>,
    },
    /// Read the bucket as the client sees it (totals, quota).
    GetBucket {
        bucket: String,
    },
    ListSnapshots {
        bucket: String,
    },
    /// Trigger a DirectoryDeletingService run on this OM (`on: omN`).
    RunDds {},
    /// Trigger a KeyDeletingService run on this OM (`on: omN`).
    RunKds {},
}

impl OmOp {
    fn summary(&self) -> String {
        match self {
            OmOp::CreateVolume { volume } => format!("create_volume /{volume}"),
            OmOp::CreateBucket {
                bucket,
                quota_namespace,
            } => match quota_namespace {
                Some(q) => format!("create_bucket {bucket} quota_namespace={q}"),
                None => format!("create_bucket {bucket}"),
            },
            OmOp::SetQuota { bucket, namespace } => {
                format!("set_quota {bucket} namespace={namespace}")
            }
            OmOp::Mkdir { path } => format!("mkdir {path}"),
            OmOp::PutFile { path, size } => format!("put_file {path} size={size}"),
            OmOp::Delete { path, recursive } => {
                format!("delete {path}{}", if *recursive { " -r" } else { "" })
            }
            OmOp::CreateSnapshot { bucket, name } => format!("create_snapshot {bucket}/{name}"),
            OmOp::DeleteSnapshot { bucket, name } => format!("delete_snapshot {bucket}/{name}"),
            OmOp::PurgeSnapshots { snapshots } => {
                format!("purge_snapshots [{}]", snapshots.join(", "))
            }
            OmOp::GetBucket { bucket } => format!("get_bucket {bucket}"),
            OmOp::ListSnapshots { bucket } => format!("list_snapshots {bucket}"),
            OmOp::RunDds {} => "run_dds".to_string(),
            OmOp::RunKds {} => "run_kds".to_string(),
        }
    }

    fn validate(&self) -> Result<(), String> {
        let bucket_path = |b: &str| match split_path(b) {
            Some((_, _, rest)) if rest.is_empty() => Ok(()),
            _ => Err(format!("`{b}` is not a bucket path like /vol/bucket")),
        };
        let key_path = |p: &str| match split_path(p) {
            Some((_, _, rest))
                if !rest.is_empty() && !rest.ends_with('/') && !rest.contains("//") =>
            {
                Ok(())
            }
            _ => Err(format!(
                "`{p}` is not a path inside a bucket like /vol/bucket/dir"
            )),
        };
        let name = |n: &str| {
            if n.is_empty() || n.contains('/') || n.contains('#') || n.contains('|') {
                Err(format!("`{n}` is not a plain name"))
            } else {
                Ok(())
            }
        };
        match self {
            OmOp::CreateVolume { volume } => name(volume),
            OmOp::CreateBucket { bucket, .. }
            | OmOp::SetQuota { bucket, .. }
            | OmOp::GetBucket { bucket }
            | OmOp::ListSnapshots { bucket } => bucket_path(bucket),
            OmOp::Mkdir { path } | OmOp::Delete { path, .. } => key_path(path),
            OmOp::PutFile { path, size } => {
                key_path(path)?;
                if *size < 0 {
                    return Err("size must not be negative".into());
                }
                Ok(())
            }
            OmOp::CreateSnapshot { bucket, name: n } | OmOp::DeleteSnapshot { bucket, name: n } => {
                bucket_path(bucket)?;
                name(n)
            }
            OmOp::PurgeSnapshots { snapshots } => {
                if snapshots.is_empty() || snapshots.len() > 64 {
                    return Err("purge 1..=64 snapshots".into());
                }
                snapshots.iter().try_for_each(|s| key_path(s))
            }
            OmOp::RunDds {} | OmOp::RunKds {} => Ok(()),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitOrder {
    /// The flush woken by the failed entry completes before the process exits
    /// (what the report observed: 20/20 unit runs, always on a mini cluster).
    #[default]
    FlushFirst,
    /// The process is gone before that flush writes anything (the race's other side).
    ExitFirst,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Ratis metadata entries after commits (default on).
    #[serde(default)]
    pub metadata_entries: Option<bool>,
    #[serde(default)]
    pub heartbeat_ms: Option<u64>,
    #[serde(default)]
    pub election_timeout_ms_min: Option<u64>,
    #[serde(default)]
    pub election_timeout_ms_max: Option<u64>,
    /// This node campaigns first (a shorter election timeout, like a Ratis priority).
    #[serde(default)]
    pub preferred_leader: Option<String>,
    /// Termination ordering after a critical error (default flush_first), for
    /// every OM or per OM (`{om2: exit_first}`).
    #[serde(default)]
    pub exit_order: PerNode<ExitOrder>,
    /// Narrow `snapshot_table.read` and `key_table.read` to reads of this key,
    /// on every OM or per OM (`{om2: /v/b/s1, om3: /v/b/s2}`).
    #[serde(default)]
    pub fault_key: Option<PerNode<String>>,
    /// The bound of `leader_ready_within_bound` (default 60000).
    #[serde(default)]
    pub leader_ready_bound_ms: Option<u64>,
    /// DirectoryDeletingService interval; unset: runs only when a step triggers it.
    #[serde(default)]
    pub dds_interval_ms: Option<u64>,
    /// KeyDeletingService interval; unset: runs only when a step triggers it.
    #[serde(default)]
    pub kds_interval_ms: Option<u64>,
    /// Worker tasks per DDS store task (default 1).
    #[serde(default)]
    pub dds_workers: Option<usize>,
    /// Paths one DDS store task may process per run (default 1000).
    #[serde(default)]
    pub dds_path_limit: Option<usize>,
    /// Snapshot deep cleaning by DDS (default on, as in Ozone).
    #[serde(default)]
    pub dds_deep_clean: Option<bool>,
}

/// 30 s: longer than any unreadiness the chaos domain's faults cause on their
/// own (a flush stalled for at most 3 s, re-armed for at most 10 s), and short
/// enough for a run's heal phase (60 s) to reach: a leader that stays unready
/// for 30 s after a failover is an outage.
pub const LEADER_READY_BOUND_MS_DEFAULT: u64 = 30_000;

impl Params {
    pub fn of(ctx: &NodeCtx) -> Params {
        parse_json(ctx.params()).expect("validated by parse_params")
    }

    /// This OM's termination ordering: its own entry, else the default.
    pub fn exit_order_of(&self, node: &str) -> ExitOrder {
        self.exit_order.get(node).copied().unwrap_or_default()
    }

    /// The key this OM's read fail points are narrowed to, if any.
    pub fn fault_key_of(&self, node: &str) -> Option<&str> {
        self.fault_key.as_ref()?.get(node).map(String::as_str)
    }
}

pub struct OzoneOm;

static INFO: LazyLock<ModelInfo> = LazyLock::new(|| {
    ModelInfo {
    name: "ozone-om",
    summary: "Ozone Managers on the Raft-style log: table cache, double buffer, TRANSACTION_INFO, applied-index bookkeeping, leader readiness, snapshot chain, FSO bucket usage, directory and key deleting services",
    roles: vec![RoleInfo {
        name: "om",
        summary: "an Ozone Manager (a Raft member with its own DB)",
        count_min: 3,
        count_max: 3,
    }],
    ops: vec![
        OpInfo {
            name: "create_volume",
            summary: "create a volume",
            example: "{op: create_volume, volume: v}",
            consistency: Consistency::Linearizable,
            answers: Answers {
                definite: &["VOLUME_ALREADY_EXISTS"],
                refused: &NOT_PROPOSED,
            },
            chaos: &[],
        },
        OpInfo {
            name: "create_bucket",
            summary: "create an FSO bucket (optional namespace quota)",
            example: "{op: create_bucket, bucket: /v/b}",
            consistency: Consistency::Linearizable,
            answers: Answers {
                definite: &["BUCKET_ALREADY_EXISTS"],
                refused: &[
                    NOT_PROPOSED[0],
                    NOT_PROPOSED[1],
                    NOT_PROPOSED[2],
                    "VOLUME_NOT_FOUND",
                ],
            },
            chaos: &[],
        },
        unjudged(
            "set_quota",
            "set the bucket's namespace quota (-1: none)",
            "{op: set_quota, bucket: /v/b, namespace: 1}",
        )
        .with_chaos(&["{op: set_quota, bucket: /v/b, namespace: \"{20..200}\"}", "{op: set_quota, bucket: /v/b, namespace: -1}"]),
        op("mkdir", "create a directory (its parent must exist)", "{op: mkdir, path: /v/b/d1}")
        .with_chaos(&["{op: mkdir, path: \"/v/b/d{1..6}\", weight: 3}", "{op: mkdir, path: \"/v/b/d{1..6}/e{1..2}\", weight: 2}"]),
        op(
            "put_file",
            "create a file of a size (no overwrite)",
            "{op: put_file, path: /v/b/d2/f, size: 1024}",
        )
        .with_chaos(&["{op: put_file, path: \"/v/b/d{1..6}/f{1..3}\", size: \"{1..4096}\", weight: 3}", "{op: put_file, path: \"/v/b/d{1..6}/e{1..2}/g{1..2}\", size: \"{1..4096}\", weight: 2}", "{op: put_file, path: \"/v/b/f{1..6}\", size: \"{1..4096}\"}"]),
        op(
            "delete",
            "delete a file or a directory (recursive for a non-empty one)",
            "{op: delete, path: /v/b/d2, recursive: true}",
        )
        .with_chaos(&["{op: delete, path: \"/v/b/d{1..6}\", recursive: true, weight: 3}", "{op: delete, path: \"/v/b/f{1..6}\"}"]),
        unjudged(
            "create_snapshot",
            "create a bucket snapshot (it takes over the bucket's deleted rows)",
            "{op: create_snapshot, bucket: /v/b, name: s1}",
        )
        .with_chaos(&["{op: create_snapshot, bucket: /v/b, name: \"s{1..8}\"}"]),
        unjudged(
            "delete_snapshot",
            "mark a snapshot deleted",
            "{op: delete_snapshot, bucket: /v/b, name: s1}",
        )
        .with_chaos(&["{op: delete_snapshot, bucket: /v/b, name: \"s{1..8}\"}"]),
        unjudged(
            "purge_snapshots",
            "a SnapshotPurge request for these snapshot keys, in order",
            "{op: purge_snapshots, snapshots: [/v/b/s2, /v/b/s1]}",
        )
        .with_chaos(&["{op: purge_snapshots, snapshots: [\"/v/b/s{1..8}\"]}"]),
        unjudged(
            "get_bucket",
            "read the bucket's usage as the client sees it (totals) on the leader",
            "{op: get_bucket, bucket: /v/b}",
        )
        .with_chaos(&["{op: get_bucket, bucket: /v/b}"]),
        unjudged(
            "list_snapshots",
            "list a bucket's snapshots on the leader",
            "{op: list_snapshots, bucket: /v/b}",
        )
        .with_chaos(&["{op: list_snapshots, bucket: /v/b}"]),
        unjudged(
            "run_dds",
            "run DirectoryDeletingService on this OM now; answers when the run ends",
            "{on: om1, op: run_dds, wait: false}",
        )
        .with_chaos(&["{on: any, op: run_dds}"]),
        unjudged(
            "run_kds",
            "run KeyDeletingService on this OM now; answers when the run ends",
            "{on: om1, op: run_kds}",
        )
        .with_chaos(&["{on: any, op: run_kds}"]),
    ],
    fail_points: vec![
        &SNAPSHOT_TABLE_READ,
        &KEY_TABLE_READ,
        &SNAPSHOT_CHAIN_LOAD,
        &APPLY_UNCHECKED,
        &DOUBLE_BUFFER_FLUSH,
        &DIR_DELETING_POST_TERM_READ,
        &DIR_DELETING_PRE_SUBMIT,
        &DIR_DELETING_POST_TERM_CHECK,
    ],
    invariants: [
        InvariantInfo {
            name: invariants::SNAPSHOTS_AGREE,
            kind: InvariantKind::Safety,
            summary: "up OMs at a common applied index have equal snapshot info tables and snapshot chains",
        },
        InvariantInfo {
            name: invariants::TXINFO_COVERS_EFFECTS,
            kind: InvariantKind::Safety,
            summary: "TRANSACTION_INFO never covers an index whose effects are not in the DB (a flushed entry that failed with a terminating status)",
        },
        InvariantInfo {
            name: invariants::LEADER_READY,
            kind: InvariantKind::Liveness,
            summary: "a leader is ready (OM applied index >= its startup entry) within leader_ready_bound_ms of Raft applying that entry",
        },
        InvariantInfo {
            name: invariants::USAGE_MATCHES_TABLES,
            kind: InvariantKind::Safety,
            summary: "every bucket's usedBytes/usedNamespace/snapshotUsedBytes/snapshotUsedNamespace equal a recomputation from its tables (as quota repair would compute them), none is negative, and up OMs at a common applied index agree",
        },
    ]
    .into_iter()
    // Raft's own, checked by the run's Raft oracle as the OMs' Raft reports.
    .chain(crate::raft::invariants())
    .collect(),
    bugs: vec![&BUG_17603, &BUG_10798, &BUG_17670],
    probes: OmProbe::infos()
        .into_iter()
        .chain(crate::raft::RaftProbe::infos())
        .collect(),
    index_format: faultline_api::IndexFormat::Decimal,
    has_leader: true,
    leader_transfer: true,
    params: params_info(),
    observations: observations::observations(),
    reports_removed: false,
    history: HistoryModel::Own,
    chaos: ChaosDomain {
        setup: &[
            "{await: {leader: any, within: 10s}}",
            // A new leader is ready once it has applied its startup entry.
            "{sleep: 1s}",
            "{client: {op: create_volume, volume: v, expect: ok}}",
            "{client: {op: create_bucket, bucket: /v/b, expect: ok}}",
        ],
        concurrent_max: 3,
        final_ops: &[
            "{op: create_volume, volume: \"final{seq}\"}",
            "{op: get_bucket, bucket: /v/b}",
        ],
        ..ChaosDomain::DEFAULT
    },
}
});

/// Every `Params` key, declared (the model's tests check that none is missing).
fn params_info() -> Vec<ParamInfo> {
    let mut params = crate::raft::tuning_params();
    params.extend([
        ParamInfo::node(
            "preferred_leader",
            "this OM campaigns first (a shorter election timeout, like a Ratis priority); unset: none is preferred",
        ),
        ParamInfo::per_node(ParamInfo::choice(
            "exit_order",
            &["flush_first", "exit_first"],
            "flush_first",
            "after a critical error: the woken flush completes before the exit (as observed upstream), or the process is gone first; for every OM, or per OM ({om2: exit_first}: the others flush first)",
        ))
        .chaos(ParamChaos::Choices(&[
            ParamValue::Text("flush_first"),
            ParamValue::Text("exit_first"),
        ])),
        ParamInfo::per_node(ParamInfo::text(
            "fault_key",
            "narrow snapshot_table.read and key_table.read to reads of this table key, on every OM or per OM ({om2: /v/b/s1}); unset (or an OM left out): every read",
        )),
        ParamInfo::duration_ms(
            "leader_ready_bound_ms",
            (1, WEEK_MS),
            Some(LEADER_READY_BOUND_MS_DEFAULT),
            "the bound of leader_ready_within_bound",
        ),
        ParamInfo::duration_ms(
            "dds_interval_ms",
            (1, WEEK_MS),
            None,
            "DirectoryDeletingService interval; unset: it runs only when a step triggers it",
        )
        .chaos(ParamChaos::Range {
            min: 100,
            max: 10_000,
        }),
        ParamInfo::duration_ms(
            "kds_interval_ms",
            (1, WEEK_MS),
            None,
            "KeyDeletingService interval; unset: it runs only when a step triggers it",
        )
        .chaos(ParamChaos::Range {
            min: 100,
            max: 10_000,
        }),
        ParamInfo::integer(
            "dds_workers",
            (1, 8),
            Some(1),
            "worker tasks per DirectoryDeletingService store task",
        )
        .chaos(ParamChaos::Range { min: 1, max: 4 }),
        ParamInfo::integer(
            "dds_path_limit",
            (1, 100_000),
            Some(1000),
            "paths one DirectoryDeletingService store task may process per run",
        )
        .chaos(ParamChaos::Range { min: 1, max: 1000 }),
        ParamInfo::bool(
            "dds_deep_clean",
            true,
            "snapshot deep cleaning by DirectoryDeletingService (on in Ozone)",
        )
        .chaos(ParamChaos::Choices(&[
            ParamValue::Bool(true),
            ParamValue::Bool(false),
        ])),
    ]);
    params
}

/// Refused before anything was proposed: a follower, a leader not ready yet, a
/// leader handing over.
const NOT_PROPOSED: [&str; 3] = [
    "OMNotLeaderException",
    "OMLeaderNotReadyException",
    "leadership transfer in progress",
];

/// A path op's answers: the namespace said no (definite), or it failed on
/// something outside its path (a missing bucket, the quota) and changed nothing.
/// A DB error (`INTERNAL_ERROR`, `METADATA_ERROR`) terminates the OM with the
/// entry in its log, to be applied again on restart: unknown.
const PATH_ANSWERS: Answers = Answers {
    definite: &[
        "DIRECTORY_ALREADY_EXISTS",
        "FILE_ALREADY_EXISTS",
        "DIRECTORY_NOT_FOUND",
        "KEY_NOT_FOUND",
        "DIRECTORY_NOT_EMPTY",
    ],
    refused: &[
        NOT_PROPOSED[0],
        NOT_PROPOSED[1],
        NOT_PROPOSED[2],
        "BUCKET_NOT_FOUND",
        "VOLUME_NOT_FOUND",
        "QUOTA_EXCEEDED",
    ],
};

/// A key or directory op, judged linearizable by the namespace specification.
fn op(name: &'static str, summary: &'static str, example: &'static str) -> OpInfo {
    OpInfo {
        name,
        summary,
        example,
        consistency: Consistency::Linearizable,
        answers: PATH_ANSWERS,
        chaos: &[],
    }
}

/// An op the history records but does not judge: snapshots (a purge may remove a
/// deleted one at any time), quotas, reads of derived totals, service triggers.
fn unjudged(name: &'static str, summary: &'static str, example: &'static str) -> OpInfo {
    OpInfo {
        name,
        summary,
        example,
        consistency: Consistency::Unjudged,
        answers: Answers::NONE,
        chaos: &[],
    }
}

impl Model for OzoneOm {
    fn info(&self) -> &ModelInfo {
        &INFO
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: OmOp = parse_json(op)?;
        parsed.validate()?;
        Ok(ParsedOp {
            summary: parsed.summary(),
            op: serde_json::to_value(&parsed).expect("serializes"),
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        let params: Params = parse_json(params)?;
        crate::raft::Tuning {
            metadata_entries: params.metadata_entries,
            heartbeat_ms: params.heartbeat_ms,
            election_timeout_ms_min: params.election_timeout_ms_min,
            election_timeout_ms_max: params.election_timeout_ms_max,
        }
        .check()?;
        if params.leader_ready_bound_ms == Some(0) {
            return Err("leader_ready_bound_ms must be positive".into());
        }
        if params.dds_interval_ms == Some(0) || params.kds_interval_ms == Some(0) {
            return Err("service intervals must be positive".into());
        }
        if params.dds_workers.is_some_and(|w| !(1..=8).contains(&w)) {
            return Err("dds_workers is 1..=8".into());
        }
        if params
            .dds_path_limit
            .is_some_and(|l| !(1..=100_000).contains(&l))
        {
            return Err("dds_path_limit is 1..=100000".into());
        }
        Ok(())
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        Box::pin(async move { node::run(ctx).await })
    }

    fn check(&self, invariant: &str, cluster: &ClusterView) -> Check {
        invariants::check(invariant, cluster)
    }

    fn sequential(&self) -> Option<&dyn Sequential> {
        Some(&sequential::Namespace)
    }
}

static MODEL: OzoneOm = OzoneOm;

/// The model, registered.
pub fn model() -> Option<&'static dyn Model> {
    Some(&MODEL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(value: serde_json::Value) -> Params {
        OzoneOm.parse_params(&value).expect("valid params");
        parse_json(&value).unwrap()
    }

    #[test]
    fn exit_order_and_fault_key_apply_to_every_om_or_per_om() {
        let all = params(json!({"exit_order": "exit_first", "fault_key": "/v/b/s1"}));
        for om in ["om1", "om2", "om3"] {
            assert_eq!(all.exit_order_of(om), ExitOrder::ExitFirst);
            assert_eq!(all.fault_key_of(om), Some("/v/b/s1"));
        }
        let each = params(json!({
            "exit_order": {"om2": "exit_first"},
            "fault_key": {"om2": "/v/b/s1", "om3": "/v/b/s2"},
        }));
        assert_eq!(each.exit_order_of("om2"), ExitOrder::ExitFirst);
        assert_eq!(
            each.exit_order_of("om1"),
            ExitOrder::FlushFirst,
            "the default"
        );
        assert_eq!(each.fault_key_of("om3"), Some("/v/b/s2"));
        assert_eq!(each.fault_key_of("om1"), None, "every read");
        let none = params(json!({}));
        assert_eq!(none.exit_order_of("om1"), ExitOrder::FlushFirst);
        assert_eq!(none.fault_key_of("om1"), None);
        assert!(OzoneOm
            .parse_params(&json!({"exit_order": {"om2": "later"}}))
            .is_err());
    }

    #[test]
    fn the_per_node_params_are_declared_per_node() {
        for name in ["exit_order", "fault_key"] {
            let info = INFO.param(name).expect("declared");
            assert!(
                matches!(
                    info.kind,
                    faultline_api::ParamKind::PerNode { single: true, .. }
                ),
                "{name}"
            );
        }
    }
}
