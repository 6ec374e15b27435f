//! `hdds-reports`: datanodes that report their containers to SCM and Recon over
//! heartbeats (HDDS-17062).
//!
//! A datanode keeps a container set (durable: the container directories), a
//! `StateContext` with a queue of incremental reports per endpoint, and builds full
//! container reports (FCRs) periodically or on demand. One heartbeat task per
//! endpoint (SCM every 30 s, Recon every 60 s) takes the queued reports and sends
//! them in an RPC; a failed RPC puts the incremental reports back at the head of
//! the queue. SCM and Recon keep a replica table per datanode, apply a heartbeat's
//! FCR, then its ICRs, then its command status reports, and Recon asks a datanode
//! that was silent for 3 intervals to register again with a fresh report.
//!
//! The pure parts are [`context::StateContext`] and [`replicas::ReplicaTable`];
//! `datanode` and `receiver` are their async shells.

mod context;
mod datanode;
mod deletion;
mod observations;
mod receiver;
mod replicas;
mod report;
mod sequential;

use faultline_api::{
    parse_json, Answers, BugInfo, ChaosDomain, Check, ClusterView, Consistency, FailPoint,
    FailPointInfo, HistoryModel, InvariantInfo, InvariantKind, Model, ModelInfo, NodeCtx, NodeView,
    OpInfo, ParamChaos, ParamInfo, ParamKind, ParamValue, ParsedOp, PointChaos, RoleInfo,
    Sequential, WEEK_MS,
};
use report::Endpoint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;

/// A container event's answers: a refusal names the container (`C2: exists
/// (OPEN)`), from the state the datanode holds; a full report queue or a full
/// datanode takes nothing.
const CONTAINER_ANSWERS: Answers = Answers {
    definite: &["C"],
    refused: &["the report queue is full", "at most"],
};

/// `delete_blocks`: the log's bound refuses before anything is logged; any other
/// error (none today) would be unknown.
const DELETE_BLOCKS_ANSWERS: Answers = Answers {
    definite: &[],
    refused: &["at most", "block deletions enter at SCM"],
};

/// The one UDP port of every node of this model.
const PORT: u16 = 9861;
/// Bound on the containers one datanode holds (an FCR must fit in one datagram).
const CONTAINERS_MAX: usize = 512;
/// Bound on the transactions one command status report acknowledges (a
/// deleteBlocks command carries at most 64).
const COMMAND_TXS_MAX: usize = 64;

pub static BUG_STALE_PUT_BACK_ICR: BugInfo = BugInfo {
    key: "HDDS-17062",
    summary: "ICRs put back after a failed heartbeat are sent after the newer full container report that replaced them",
    buggy: "putBackReports returns every ICR the failed heartbeat took to the head of the queue, even when an FCR built while its RPC was in flight dropped the queue; the next heartbeat carries that FCR and then the older ICRs, and the receiver applies them on top of it",
    fixed: "StateContext marks every endpoint when an FCR build drops the queued ICRs and clears the mark when a heartbeat takes the endpoint's ICRs; putBackReports leaves the ICRs out (and still puts back the command status reports) while the endpoint is marked",
};

/// The fail points of `hdds-reports`: its one registry of names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HddsPoint {
    /// The heartbeat RPC to an endpoint is in flight: its reports are taken.
    InFlight(Endpoint),
    /// The heartbeat RPC's outcome: the request or the response is lost.
    Rpc(Endpoint),
    /// The heartbeat request has been sent (the receiver has it); the call
    /// waits for the answer.
    Sent(Endpoint),
    /// An FCR build (periodic or triggered).
    FcrBuild,
    /// Between the FCR build's ICR drop and `refreshFullReport`.
    FcrBeforeRefresh,
}

const RPC_ERRORS: &[&str] = &["drop_request", "drop_response"];

/// Every fail point of the model is on the datanode's heartbeat and report path.
const DATANODE_ONLY: PointChaos = PointChaos {
    roles: &["datanode"],
    ..PointChaos::NONE
};

static SCM_IN_FLIGHT: FailPointInfo = FailPointInfo {
    name: "heartbeat.scm.in_flight",
    summary: "the heartbeat to SCM has taken its reports and its RPC is in flight (stall: the RPC stays in flight; other datanode work goes on)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((100, 60_000)),
        panic: true,
        ..DATANODE_ONLY
    },
};
static RECON_IN_FLIGHT: FailPointInfo = FailPointInfo {
    name: "heartbeat.recon.in_flight",
    summary: "the heartbeat to Recon has taken its reports and its RPC is in flight (stall: the RPC stays in flight; other datanode work goes on)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((100, 60_000)),
        panic: true,
        ..DATANODE_ONLY
    },
};
static SCM_RPC: FailPointInfo = FailPointInfo {
    name: "heartbeat.scm.rpc",
    summary: "the heartbeat RPC to SCM, after its in-flight point (drop_request: SCM never gets it; drop_response: SCM processes it, the answer is lost; both are an RPC timeout at the datanode)",
    errors: RPC_ERRORS,
    stall: false,
    panic: false,
    chaos: PointChaos {
        errors: RPC_ERRORS,
        ..DATANODE_ONLY
    },
};
static RECON_RPC: FailPointInfo = FailPointInfo {
    name: "heartbeat.recon.rpc",
    summary: "the heartbeat RPC to Recon, after its in-flight point (drop_request: Recon never gets it; drop_response: Recon processes it, the answer is lost; both are an RPC timeout at the datanode)",
    errors: RPC_ERRORS,
    stall: false,
    panic: false,
    chaos: PointChaos {
        errors: RPC_ERRORS,
        ..DATANODE_ONLY
    },
};
static SCM_SENT: FailPointInfo = FailPointInfo {
    name: "heartbeat.scm.sent",
    summary: "the heartbeat request to SCM has been sent: SCM gets it and processes it at once (unless rpc dropped the request); a stall keeps the datanode's call in flight before it waits for the answer (with rpc drop_response: processed now, answer lost)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((100, 30_000)),
        panic: true,
        ..DATANODE_ONLY
    },
};
static RECON_SENT: FailPointInfo = FailPointInfo {
    name: "heartbeat.recon.sent",
    summary: "the heartbeat request to Recon has been sent: Recon gets it and processes it at once (unless rpc dropped the request); a stall keeps the datanode's call in flight before it waits for the answer (with rpc drop_response: processed now, answer lost)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((100, 30_000)),
        panic: true,
        ..DATANODE_ONLY
    },
};
static FCR_BUILD: FailPointInfo = FailPointInfo {
    name: "fcr.build",
    summary: "an FCR build, before it takes the locks (stall: the build waits; error io: the container report fails after the queued ICRs were dropped, and no FCR is published)",
    errors: &["io"],
    stall: true,
    panic: true,
    chaos: PointChaos {
        errors: &["io"],
        stall_ms: Some((100, 20_000)),
        panic: true,
        ..DATANODE_ONLY
    },
};
static FCR_BEFORE_REFRESH: FailPointInfo = FailPointInfo {
    name: "fcr.between_drop_and_refresh",
    summary: "an FCR build after it dropped the queued ICRs and before refreshFullReport sets the endpoints' ready flags (outside the queue lock)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((100, 20_000)),
        panic: true,
        ..DATANODE_ONLY
    },
};

impl FailPoint for HddsPoint {
    fn info(self) -> &'static FailPointInfo {
        match self {
            HddsPoint::InFlight(Endpoint::Scm) => &SCM_IN_FLIGHT,
            HddsPoint::InFlight(Endpoint::Recon) => &RECON_IN_FLIGHT,
            HddsPoint::Rpc(Endpoint::Scm) => &SCM_RPC,
            HddsPoint::Rpc(Endpoint::Recon) => &RECON_RPC,
            HddsPoint::Sent(Endpoint::Scm) => &SCM_SENT,
            HddsPoint::Sent(Endpoint::Recon) => &RECON_SENT,
            HddsPoint::FcrBuild => &FCR_BUILD,
            HddsPoint::FcrBeforeRefresh => &FCR_BEFORE_REFRESH,
        }
    }
}

faultline_api::probes! {
    /// The preconditions of the report and deletion mechanisms, checked where the
    /// datanode or the receiver decides them.
    pub enum HddsProbe {
        FailedHeartbeatWithIcrs {
            name: "hdds_failed_heartbeat_with_icrs",
            rare: false,
            summary: "a heartbeat that carried ICRs failed: they are put back, or left out as covered by a newer FCR",
        },
        FcrBuiltWithIcrsInFlight {
            name: "hdds_fcr_built_with_icrs_in_flight",
            rare: false,
            summary: "an FCR was built (dropping the queued ICRs) while a heartbeat that took ICRs was in flight",
        },
        PutBackAfterFcrBuild {
            name: "hdds_put_back_after_fcr_build",
            rare: false,
            summary: "a failed heartbeat's ICRs came back for the put-back after an FCR was built since they were taken (HDDS-17062's precondition: put back when buggy, left out when fixed)",
        },
        HeartbeatWithFcrAndIcrs {
            name: "hdds_heartbeat_with_fcr_and_icrs",
            rare: false,
            summary: "one heartbeat carried an FCR and ICRs together: the receiver applies the ICRs on top of the FCR",
        },
        FcrLostWithFailedHeartbeat {
            name: "hdds_fcr_lost_with_failed_heartbeat",
            rare: false,
            summary: "a heartbeat that carried an FCR failed: the FCR is not put back, only the next one repairs the receiver",
        },
        ReconReregisterAfterSilence {
            name: "hdds_recon_reregister_after_silence",
            rare: false,
            summary: "Recon asked a datanode to re-register after a silence of at least its outdated threshold",
        },
        ReceiverIcrOverFcr {
            name: "hdds_receiver_icr_over_fcr",
            rare: false,
            summary: "a receiver applied an ICR that says otherwise than the FCR of the same heartbeat",
        },
        DeleteBlocksRetried {
            name: "hdds_delete_blocks_retried",
            rare: false,
            summary: "a datanode got a deleteBlocks command for a transaction it had executed before (SCM sent it again)",
        },
    }
}

/// What made an FCR build run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FcrTrigger {
    /// The report publisher's periodic run: its next run is one period later.
    #[default]
    Periodic,
    /// A volume failure: an extra build; the periodic schedule is unchanged.
    VolumeFailure,
}

impl FcrTrigger {
    fn name(self) -> &'static str {
        match self {
            FcrTrigger::Periodic => "periodic",
            FcrTrigger::VolumeFailure => "volume_failure",
        }
    }
}

/// Client operations: container events and FCR builds on a datanode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum HddsOp {
    /// A new OPEN container (a client write allocated it here).
    Create { container: u64 },
    /// OPEN -> CLOSED.
    Close { container: u64 },
    /// Any state -> UNHEALTHY (e.g. the scanner found corruption).
    MarkUnhealthy { container: u64 },
    /// The container is deleted (its ICR reports DELETED).
    Delete { container: u64 },
    /// Replication imports the container as CLOSED.
    Import { container: u64 },
    /// At SCM: OM asks to delete a key's blocks. SCM logs a deleted-block
    /// transaction (durable); its block deleting service sends it to the
    /// datanodes in deleteBlocks commands until every one acknowledges it.
    DeleteBlocks {},
    /// The datanode's command status report publisher queues the status of
    /// deleteBlocks command `command` (EXECUTED, acknowledging `txs`) for every
    /// endpoint, without executing anything: e.g. the status of a command an
    /// earlier SCM incarnation sent.
    CommandStatus {
        command: u64,
        #[serde(default)]
        txs: Vec<u64>,
    },
    /// The volume holding these containers fails (`handleVolumeFailures`): they
    /// are removed from the container set (missing, no ICR), an FCR is built
    /// (dropping the queued ICRs) and a heartbeat to every endpoint is triggered.
    FailVolume { containers: Vec<u64> },
    /// Build an FCR now.
    BuildFcr {
        #[serde(default)]
        trigger: FcrTrigger,
    },
}

impl HddsOp {
    fn summary(&self) -> String {
        match self {
            HddsOp::Create { container } => format!("create C{container}"),
            HddsOp::Close { container } => format!("close C{container}"),
            HddsOp::MarkUnhealthy { container } => format!("mark_unhealthy C{container}"),
            HddsOp::Delete { container } => format!("delete C{container}"),
            HddsOp::Import { container } => format!("import C{container}"),
            HddsOp::DeleteBlocks {} => "delete_blocks".to_string(),
            HddsOp::CommandStatus { command, txs } => {
                format!("command_status cmd{command} {}", report::show_txs(txs))
            }
            HddsOp::FailVolume { containers } => {
                let ids: Vec<String> = containers.iter().map(|c| format!("C{c}")).collect();
                format!("fail_volume [{}]", ids.join(", "))
            }
            HddsOp::BuildFcr { trigger } => format!("build_fcr ({})", trigger.name()),
        }
    }
}

/// Model parameters; every interval defaults to the real configuration default.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `hdds.heartbeat.interval` (30 s).
    #[serde(default)]
    pub scm_heartbeat_interval_ms: Option<u64>,
    /// `hdds.heartbeat.recon.interval` (60 s).
    #[serde(default)]
    pub recon_heartbeat_interval_ms: Option<u64>,
    /// `hdds.heartbeat.initial-interval` (2 s): the retry interval of registers.
    #[serde(default)]
    pub initial_heartbeat_interval_ms: Option<u64>,
    /// `hdds.container.report.interval` (60 min); each datanode adds a random
    /// delay of up to the same interval, as `ContainerReportPublisher` does.
    #[serde(default)]
    pub container_report_interval_ms: Option<u64>,
    /// Recon asks for a re-register after this many Recon intervals of silence (3).
    #[serde(default)]
    pub recon_stale_intervals: Option<u64>,
    /// `ozone.scm.heartbeat.rpc-timeout` (5 s).
    #[serde(default)]
    pub rpc_timeout_ms: Option<u64>,
    /// Container ids every datanode holds CLOSED on its first start (default [1]).
    #[serde(default)]
    pub containers: Option<Vec<u64>>,
    /// `hdds.scm.block.deleting.service.interval` (60 s).
    #[serde(default)]
    pub block_deletion_interval_ms: Option<u64>,
    /// `hdds.scm.wait.time.after.safe.mode.exit` (5 min): SCM's block deleting
    /// service starts this long after SCM leaves safe mode.
    #[serde(default)]
    pub wait_after_safe_mode_exit_ms: Option<u64>,
    /// How long SCM waits for the status of a deleteBlocks command it sent before
    /// it may send the command's transactions again (`scmCommandTimeoutMs`, 300 s).
    #[serde(default)]
    pub block_deletion_command_timeout_ms: Option<u64>,
}

/// Parameters with their defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub scm_interval_ms: u64,
    pub recon_interval_ms: u64,
    pub initial_interval_ms: u64,
    pub report_interval_ms: u64,
    pub recon_stale_intervals: u64,
    pub rpc_timeout_ms: u64,
    pub containers: Vec<u64>,
    pub block_deletion_interval_ms: u64,
    pub wait_after_safe_mode_exit_ms: u64,
    pub command_timeout_ms: u64,
}

impl Config {
    pub fn from_params(params: &Params) -> Config {
        Config {
            scm_interval_ms: params.scm_heartbeat_interval_ms.unwrap_or(30_000),
            recon_interval_ms: params.recon_heartbeat_interval_ms.unwrap_or(60_000),
            initial_interval_ms: params.initial_heartbeat_interval_ms.unwrap_or(2_000),
            report_interval_ms: params.container_report_interval_ms.unwrap_or(3_600_000),
            recon_stale_intervals: params.recon_stale_intervals.unwrap_or(3),
            rpc_timeout_ms: params.rpc_timeout_ms.unwrap_or(5_000),
            containers: params.containers.clone().unwrap_or_else(|| vec![1]),
            block_deletion_interval_ms: params.block_deletion_interval_ms.unwrap_or(60_000),
            wait_after_safe_mode_exit_ms: params.wait_after_safe_mode_exit_ms.unwrap_or(300_000),
            command_timeout_ms: params.block_deletion_command_timeout_ms.unwrap_or(300_000),
        }
    }

    fn from_ctx(ctx: &NodeCtx) -> Config {
        let params: Params = parse_json(ctx.params()).unwrap_or_default();
        Config::from_params(&params)
    }

    pub fn interval_ms(&self, ep: Endpoint) -> u64 {
        match ep {
            Endpoint::Scm => self.scm_interval_ms,
            Endpoint::Recon => self.recon_interval_ms,
        }
    }

    fn validate(&self) -> Result<(), String> {
        let positive = [
            ("scm_heartbeat_interval_ms", self.scm_interval_ms),
            ("recon_heartbeat_interval_ms", self.recon_interval_ms),
            ("initial_heartbeat_interval_ms", self.initial_interval_ms),
            ("container_report_interval_ms", self.report_interval_ms),
            ("recon_stale_intervals", self.recon_stale_intervals),
            ("rpc_timeout_ms", self.rpc_timeout_ms),
            (
                "block_deletion_interval_ms",
                self.block_deletion_interval_ms,
            ),
            ("block_deletion_command_timeout_ms", self.command_timeout_ms),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(format!("{name} must be positive"));
            }
        }
        if self.containers.len() > CONTAINERS_MAX {
            return Err(format!("at most {CONTAINERS_MAX} containers"));
        }
        Ok(())
    }
}

pub struct HddsReports;

static INFO: LazyLock<ModelInfo> = LazyLock::new(|| {
    ModelInfo {
    name: "hdds-reports",
    summary: "datanodes report containers to SCM and Recon over heartbeats (ICR queue, put-back, FCR)",
    roles: vec![
        RoleInfo {
            name: "datanode",
            summary: "holds containers; heartbeats its reports to every receiver",
            count_min: 1,
            count_max: 8,
        },
        RoleInfo {
            name: "scm",
            summary: "receives reports; keeps a replica table; no silence check",
            count_min: 0,
            count_max: 1,
        },
        RoleInfo {
            name: "recon",
            summary: "receives reports; keeps a replica table; asks silent datanodes to re-register",
            count_min: 0,
            count_max: 1,
        },
    ],
    ops: vec![
        OpInfo {
            name: "create",
            summary: "a new OPEN container on the datanode (ICR OPEN)",
            example: "{on: dn1, op: create, container: 2}",
            consistency: Consistency::Linearizable,
            answers: CONTAINER_ANSWERS,
            chaos: &["{on: datanode, op: create, container: \"{1..3}\"}"],
        },
        OpInfo {
            name: "close",
            summary: "close an OPEN container (ICR CLOSED)",
            example: "{on: dn1, op: close, container: 2}",
            consistency: Consistency::Linearizable,
            answers: CONTAINER_ANSWERS,
            chaos: &["{on: datanode, op: close, container: \"{1..3}\"}"],
        },
        OpInfo {
            name: "mark_unhealthy",
            summary: "mark a container UNHEALTHY (ICR UNHEALTHY)",
            example: "{on: dn1, op: mark_unhealthy, container: 1}",
            consistency: Consistency::Linearizable,
            answers: CONTAINER_ANSWERS,
            chaos: &["{on: datanode, op: mark_unhealthy, container: \"{1..3}\"}"],
        },
        OpInfo {
            name: "delete",
            summary: "delete a container (ICR DELETED)",
            example: "{on: dn1, op: delete, container: 1}",
            consistency: Consistency::Linearizable,
            answers: CONTAINER_ANSWERS,
            chaos: &["{on: datanode, op: delete, container: \"{1..3}\"}"],
        },
        OpInfo {
            name: "import",
            summary: "replication imports a container the datanode does not hold, CLOSED (ICR CLOSED)",
            example: "{on: dn1, op: import, container: 1}",
            consistency: Consistency::Linearizable,
            answers: CONTAINER_ANSWERS,
            chaos: &["{on: datanode, op: import, container: \"{1..3}\"}"],
        },
        OpInfo {
            name: "delete_blocks",
            summary: "at SCM: log a deleted-block transaction (OM deleted a key); SCM sends it to the datanodes in deleteBlocks commands until all acknowledge it",
            example: "{on: scm, op: delete_blocks}",
            consistency: Consistency::Linearizable,
            answers: DELETE_BLOCKS_ANSWERS,
            chaos: &["{on: scm, op: delete_blocks}"],
        },
        OpInfo {
            name: "command_status",
            summary: "queue a command status report (CSR) on the datanode for every endpoint: deleteBlocks command N EXECUTED, acknowledging txs (nothing is executed; e.g. a status for an earlier SCM incarnation)",
            example: "{on: dn1, op: command_status, command: 7, txs: [3]}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: // A status for commands the datanode never ran acknowledges work
            // that was not done: a test's tool, outside what a datanode does.
            &[],
        },
        OpInfo {
            name: "fail_volume",
            summary: "the volume holding these containers fails: they leave the container set (no ICR), an FCR is built (volume_failure) and a heartbeat to every endpoint is triggered at once",
            example: "{on: dn1, op: fail_volume, containers: [1]}",
            consistency: Consistency::Linearizable,
            answers: CONTAINER_ANSWERS,
            chaos: &["{on: datanode, op: fail_volume, containers: [\"{1..3}\"]}"],
        },
        OpInfo {
            name: "build_fcr",
            summary: "build a full container report now (drops the queued ICRs); trigger periodic (default) or volume_failure",
            example: "{on: dn1, op: build_fcr, trigger: volume_failure}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &["{on: datanode, op: build_fcr, trigger: periodic}"],
        },
    ],
    fail_points: vec![
        &SCM_IN_FLIGHT,
        &SCM_RPC,
        &SCM_SENT,
        &RECON_IN_FLIGHT,
        &RECON_RPC,
        &RECON_SENT,
        &FCR_BUILD,
        &FCR_BEFORE_REFRESH,
    ],
    invariants: vec![
        InvariantInfo {
            name: "receiver_matches_datanode",
            kind: InvariantKind::Safety,
            summary: "after the first successful heartbeat that follows a datanode's last container event, each receiver's replicas of that datanode equal its container set",
        },
        InvariantInfo {
            name: "receiver_never_regresses",
            kind: InvariantKind::Always,
            summary: "checked whenever a node publishes: after each heartbeat a receiver processes, no replica it holds was set by an ICR the datanode made before the newest full report the receiver already applied, when that full report says otherwise (the receiver went back in time)",
        },
        InvariantInfo {
            name: "deletion_committed_after_execution",
            kind: InvariantKind::Safety,
            summary: "SCM removes a deleted-block transaction from its log only after every datanode has executed it",
        },
        InvariantInfo {
            name: "deletions_acknowledged",
            kind: InvariantKind::Liveness,
            summary: "at judgment SCM's deleted-block log is empty: every transaction was executed by every datanode and acknowledged in a command status report",
        },
    ],
    bugs: vec![&BUG_STALE_PUT_BACK_ICR],
    probes: HddsProbe::infos(),
    index_format: faultline_api::IndexFormat::Decimal,
    has_leader: false,
    leader_transfer: false,
    params: params_info(),
    observations: observations::observations(),
    reports_removed: false,
    history: HistoryModel::Own,
    chaos: ChaosDomain {
        // The first reports reach SCM and Recon within the initial heartbeat
        // interval (2 s by default) of a datanode's start.
        setup: &["{sleep: 30s}"],
        every_ms: 5_000,
        clients: 2,
        on: Some("datanode"),
        spacing_ms: (5_000, 60_000),
        duration_ms: (5_000, 120_000),
        latency_ms: (5, 2_000),
        op_timeout_ms: 10_000,
        tick_ms: 100,
        link_latency_ms: (1, 200),
        // What a lost report left (an FCR taken by a failed heartbeat is not
        // put back, as upstream) only the next periodic FCR repairs: up to two
        // container report intervals later (the interval plus a random delay
        // of up to the interval), 2 x 15 min at the top of the chaos range,
        // then a heartbeat (Recon's interval, <= 60 s) and its RPC (<= 30 s).
        // The heal window covers that and the settling.
        heal_within_ms: HEAL_WITHIN_MS,
        heal_settle_ms: HEAL_SETTLE_MS,
        final_ops: &[
            "{op: create, container: \"{seq}\"}",
            "{op: close, container: \"{seq}\"}",
        ],
        final_within_ms: 60_000,
        ..ChaosDomain::DEFAULT
    },
}
});

/// The top of `container_report_interval_ms`'s chaos range.
const REPORT_INTERVAL_CHAOS_MAX_MS: u64 = 900_000;
const HEAL_SETTLE_MS: u64 = 2 * 60_000;
/// Two report periods at the top of the range, a heartbeat and its RPC at the
/// top of theirs, the settling and a minute of margin: 34.5 min.
const HEAL_WITHIN_MS: u64 =
    2 * REPORT_INTERVAL_CHAOS_MAX_MS + 60_000 + 30_000 + HEAL_SETTLE_MS + 60_000;

/// Every `Params` key, declared with the real configuration's default. Intervals
/// only need to be positive; a week is the longest a scenario may run.
fn params_info() -> Vec<ParamInfo> {
    let d = Config::from_params(&Params::default());
    let ms = |name, default: u64, summary| {
        ParamInfo::duration_ms(name, (1, WEEK_MS), Some(default), summary)
    };
    vec![
        ms("scm_heartbeat_interval_ms", d.scm_interval_ms, "hdds.heartbeat.interval")
        .chaos(ParamChaos::Range { min: 3_000, max: 30_000 }),
        ms(
            "recon_heartbeat_interval_ms",
            d.recon_interval_ms,
            "hdds.heartbeat.recon.interval",
        )
        .chaos(ParamChaos::Range { min: 10_000, max: 60_000 }),
        ms(
            "initial_heartbeat_interval_ms",
            d.initial_interval_ms,
            "hdds.heartbeat.initial-interval: the retry interval of registers",
        )
        .chaos(ParamChaos::Range { min: 500, max: 5_000 }),
        ms(
            "container_report_interval_ms",
            d.report_interval_ms,
            "hdds.container.report.interval; each datanode adds a random delay of up to the same interval",
        )
        .chaos(ParamChaos::Range {
            min: 60_000,
            max: REPORT_INTERVAL_CHAOS_MAX_MS as i64,
        }),
        ParamInfo::integer(
            "recon_stale_intervals",
            (1, 1_000),
            Some(d.recon_stale_intervals as i64),
            "Recon asks for a re-register after this many Recon intervals of silence",
        )
        .chaos(ParamChaos::Range { min: 2, max: 5 }),
        ms("rpc_timeout_ms", d.rpc_timeout_ms, "ozone.scm.heartbeat.rpc-timeout")
        .chaos(ParamChaos::Range { min: 2_000, max: 30_000 }),
        ParamInfo {
            name: "containers",
            kind: ParamKind::IntegerList {
                min: 0,
                max: i64::MAX,
                len_max: CONTAINERS_MAX,
            },
            default: Some(ParamValue::Integers(&[1])),
            summary: "container ids every datanode holds CLOSED on its first start",
            chaos: ParamChaos::Fixed,
        },
        ms(
            "block_deletion_interval_ms",
            d.block_deletion_interval_ms,
            "hdds.scm.block.deleting.service.interval",
        )
        .chaos(ParamChaos::Range { min: 10_000, max: 120_000 }),
        ParamInfo::duration_ms(
            "wait_after_safe_mode_exit_ms",
            (0, WEEK_MS),
            Some(d.wait_after_safe_mode_exit_ms),
            "hdds.scm.wait.time.after.safe.mode.exit: SCM's block deleting service starts this long after safe mode",
        )
        .chaos(ParamChaos::Range { min: 0, max: 300_000 }),
        ms(
            "block_deletion_command_timeout_ms",
            d.command_timeout_ms,
            "how long SCM waits for a deleteBlocks command's status before it may send its transactions again (scmCommandTimeoutMs)",
        )
        .chaos(ParamChaos::Range { min: 30_000, max: 300_000 }),
    ]
}

impl Model for HddsReports {
    fn info(&self) -> &ModelInfo {
        &INFO
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: HddsOp = parse_json(op)?;
        match &parsed {
            HddsOp::CommandStatus { command, txs } => {
                if *command == 0 {
                    return Err("command ids start at 1".into());
                }
                if txs.len() > COMMAND_TXS_MAX {
                    return Err(format!("at most {COMMAND_TXS_MAX} transactions"));
                }
            }
            HddsOp::FailVolume { containers } => {
                if containers.len() > CONTAINERS_MAX {
                    return Err(format!("at most {CONTAINERS_MAX} containers"));
                }
            }
            HddsOp::Create { .. }
            | HddsOp::Close { .. }
            | HddsOp::MarkUnhealthy { .. }
            | HddsOp::Delete { .. }
            | HddsOp::Import { .. }
            | HddsOp::DeleteBlocks {}
            | HddsOp::BuildFcr { .. } => {}
        }
        Ok(ParsedOp {
            summary: parsed.summary(),
            op: serde_json::to_value(&parsed).expect("serializes"),
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        let params: Params = parse_json(params)?;
        Config::from_params(&params).validate()
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        match ctx.role() {
            "datanode" => Box::pin(datanode::run(ctx)),
            _ => Box::pin(receiver::run(ctx)),
        }
    }

    fn check(&self, invariant: &str, cluster: &ClusterView) -> Check {
        match invariant {
            "receiver_matches_datanode" => check_pairs(cluster, receiver_matches),
            "receiver_never_regresses" => never_regresses(cluster),
            "deletion_committed_after_execution" => check_deletions(cluster, committed_executed),
            "deletions_acknowledged" => check_deletions(cluster, log_drained),
            other => Check::Fail(format!("hdds-reports declares no invariant `{other}`")),
        }
    }

    fn sequential(&self) -> Option<&dyn Sequential> {
        Some(&sequential::Containers)
    }
}

static MODEL: HddsReports = HddsReports;

/// The model, registered in `registry`.
pub fn model() -> Option<&'static dyn Model> {
    Some(&MODEL)
}

// ---- invariants ----

/// Any receiver that recorded a regression fails, with the first one.
fn never_regresses(cluster: &ClusterView) -> Check {
    let mut failures = Vec::new();
    for receiver in cluster.nodes.iter().filter(|n| n.role != "datanode") {
        for (key, count) in &receiver.observation.facts {
            let Some(dn) = key.strip_prefix("regressions.") else {
                continue;
            };
            if count.parse::<u64>().unwrap_or(0) == 0 {
                continue;
            }
            let first = receiver
                .observation
                .fact(&format!("first_regression.{dn}"))
                .unwrap_or("?");
            failures.push(format!(
                "{}'s view of {dn} went back in time {count} time(s); first {first}",
                receiver.name
            ));
        }
    }
    if failures.is_empty() {
        Check::Pass
    } else {
        Check::Fail(failures.join("; "))
    }
}

/// Run `check` over every (datanode, receiver) pair of up nodes where the
/// receiver knows the datanode and the datanode's last event has reached it.
fn check_pairs(
    cluster: &ClusterView,
    check: fn(&ClusterView, &NodeView, &NodeView) -> Vec<String>,
) -> Check {
    let mut failures = Vec::new();
    for dn in cluster
        .nodes
        .iter()
        .filter(|n| n.up && n.role == "datanode")
    {
        for receiver in cluster
            .nodes
            .iter()
            .filter(|n| n.up && n.role != "datanode")
        {
            if synced(dn, receiver) {
                failures.extend(check(cluster, dn, receiver));
            }
        }
    }
    if failures.is_empty() {
        Check::Pass
    } else {
        Check::Fail(failures.join("; "))
    }
}

/// The datanode's last event was carried by a successful heartbeat (or register)
/// to this receiver, and the receiver has not lost the datanode since.
fn synced(dn: &NodeView, receiver: &NodeView) -> bool {
    let obs = &dn.observation;
    let events = obs.fact("events");
    let synced = obs.fact(&format!("synced.{}", receiver.role));
    let registered = receiver
        .observation
        .fact(&format!("registered.{}", dn.name))
        == Some("true");
    events.is_some() && events == synced && registered
}

fn receiver_matches(cluster: &ClusterView, dn: &NodeView, receiver: &NodeView) -> Vec<String> {
    let fact = |node: &NodeView, key: &str| {
        report::containers_from_fact(node.observation.fact(key).unwrap_or(""))
    };
    let held = fact(dn, "containers");
    let seen = fact(receiver, &format!("replicas.{}", dn.name));
    let ids: BTreeSet<u64> = held.keys().chain(seen.keys()).copied().collect();
    let mut failures = Vec::new();
    for id in ids {
        let on_dn = held.get(&id).map(|s| s.name().to_string());
        let at_receiver = seen.get(&id).map(|s| s.name().to_string());
        if on_dn != at_receiver {
            let mismatch = describe_mismatch(cluster, dn, receiver, id, on_dn, at_receiver);
            failures.push(mismatch);
        }
    }
    failures
}

fn describe_mismatch(
    cluster: &ClusterView,
    dn: &NodeView,
    receiver: &NodeView,
    id: u64,
    on_dn: Option<String>,
    at_receiver: Option<String>,
) -> String {
    let key = report::replica_key(&dn.name, id);
    let show = |s: &Option<String>| s.clone().unwrap_or_else(|| "absent".into());
    let obs = &receiver.observation;
    let heartbeats = obs
        .fact(&format!("held_heartbeats.{key}"))
        .map(|n| format!(", across {n} later heartbeats from {}", dn.name))
        .unwrap_or_default();
    let held = obs
        .fact_u64(&format!("since_ms.{key}"))
        .map(|since| {
            format!(
                " (since t={}, held {} at judgment{heartbeats})",
                fmt_ms(since),
                fmt_ms(cluster.now_ms.saturating_sub(since))
            )
        })
        .unwrap_or_default();
    let next_fcr = dn
        .observation
        .fact_u64("next_fcr_ms")
        .map(|t| {
            format!(
                "; {}'s next periodic FCR is due at t={}",
                dn.name,
                fmt_ms(t)
            )
        })
        .unwrap_or_default();
    format!(
        "{}'s view of {} differs after {}'s last event was reported: {key} is {}{held} at {}, {} on {}{next_fcr}",
        receiver.name,
        dn.name,
        dn.name,
        show(&at_receiver),
        receiver.name,
        show(&on_dn),
        dn.name
    )
}

/// Run `check` for SCM (when it is up and has published its log) against the up
/// datanodes that have published their executed transactions.
fn check_deletions(
    cluster: &ClusterView,
    check: fn(&NodeView, &[&NodeView]) -> Vec<String>,
) -> Check {
    let scm = cluster
        .nodes
        .iter()
        .find(|n| n.up && n.role == Endpoint::Scm.role() && n.observation.fact("txs").is_some());
    let Some(scm) = scm else {
        return Check::Pass;
    };
    let datanodes: Vec<&NodeView> = cluster
        .nodes
        .iter()
        .filter(|n| n.up && n.role == "datanode" && n.observation.fact("deleted_txs").is_some())
        .collect();
    let failures = check(scm, &datanodes);
    if failures.is_empty() {
        Check::Pass
    } else {
        Check::Fail(failures.join("; "))
    }
}

fn ids(node: &NodeView, key: &str) -> BTreeSet<u64> {
    datanode::ids_from_fact(node.observation.fact(key).unwrap_or(""))
}

fn show_tx_set(txs: &BTreeSet<u64>) -> String {
    let list: Vec<u64> = txs.iter().copied().collect();
    report::show_txs(&list)
}

/// SCM's committed transactions (allocated, no longer logged) were executed on
/// every datanode: a commit before that would leave the datanode's blocks behind.
fn committed_executed(scm: &NodeView, datanodes: &[&NodeView]) -> Vec<String> {
    let logged = ids(scm, "log");
    let allocated = scm.observation.fact_u64("txs").unwrap_or(0);
    let committed: BTreeSet<u64> = (1..=allocated).filter(|t| !logged.contains(t)).collect();
    let mut failures = Vec::new();
    for dn in datanodes {
        let missing: BTreeSet<u64> = committed
            .difference(&ids(dn, "deleted_txs"))
            .copied()
            .collect();
        if !missing.is_empty() {
            failures.push(format!(
                "{} committed {} although {} never executed them",
                scm.name,
                show_tx_set(&missing),
                dn.name
            ));
        }
    }
    failures
}

/// SCM's deleted-block log is empty. Names, per datanode, what stands in the way.
fn log_drained(scm: &NodeView, datanodes: &[&NodeView]) -> Vec<String> {
    let logged = ids(scm, "log");
    if logged.is_empty() {
        return Vec::new();
    }
    let obs = &scm.observation;
    let mut detail = Vec::new();
    for dn in datanodes {
        let executed: BTreeSet<u64> = logged
            .intersection(&ids(dn, "deleted_txs"))
            .copied()
            .collect();
        let fact = |key: &str| {
            obs.fact(&format!("{key}.{}", dn.name))
                .filter(|v| !v.is_empty())
                .unwrap_or("none")
                .to_string()
        };
        let executed = if executed.is_empty() {
            "none".to_string()
        } else {
            show_tx_set(&executed)
        };
        detail.push(format!(
            "{} executed {executed} of them, registered {}, commands in hand: {}",
            dn.name,
            fact("registered"),
            fact("deletion_commands")
        ));
    }
    let service = obs
        .fact_u64("block_deletion_from_ms")
        .map_or("not yet (SCM in safe mode)".to_string(), |t| {
            format!("t={}", fmt_ms(t))
        });
    vec![format!(
        "{}'s deleted-block log still holds {} at judgment ({}; block deletion runs from {service})",
        scm.name,
        show_tx_set(&logged),
        detail.join("; ")
    )]
}

/// Simulated time for the trail and messages: `4m0.1s`, `12.5s`.
fn fmt_ms(ms: u64) -> String {
    let minutes = ms / 60_000;
    let rest = ms % 60_000;
    let seconds = format!("{}.{}s", rest / 1000, (rest % 1000) / 100);
    match minutes {
        0 => seconds,
        m if m < 60 => format!("{m}m{seconds}"),
        m => format!("{}h{}m{seconds}", m / 60, m % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::Observation;

    /// The top of a param's chaos range, read off the declarations.
    fn chaos_max(name: &str) -> u64 {
        let info = params_info();
        let param = info.iter().find(|p| p.name == name).expect(name);
        match param.chaos {
            ParamChaos::Range { max, .. } => max as u64,
            ParamChaos::Fixed | ParamChaos::Choices(_) => panic!("{name} has no range"),
        }
    }

    /// A lost FCR is repaired only by the next periodic one, up to two report
    /// intervals later; then a heartbeat carries it. A heal window shorter than
    /// that fails fixed code for a repair it was still going to make (the
    /// hdds-reports-auto control, seed 632: a 14-minute interval, 15 minutes of
    /// heal).
    #[test]
    fn the_heal_window_outlasts_the_longest_repair_the_chaos_domain_can_draw() {
        let repair = 2 * chaos_max("container_report_interval_ms")
            + chaos_max("scm_heartbeat_interval_ms").max(chaos_max("recon_heartbeat_interval_ms"))
            + chaos_max("rpc_timeout_ms");
        let domain = &INFO.chaos;
        assert!(
            domain.heal_within_ms >= repair + domain.heal_settle_ms,
            "heal window {} ms, repair {} ms + settle {} ms",
            domain.heal_within_ms,
            repair,
            domain.heal_settle_ms
        );
    }

    fn node(name: &str, role: &str, facts: &[(&str, &str)]) -> NodeView {
        let mut observation = Observation::default();
        for (k, v) in facts {
            observation.facts.insert(k.to_string(), v.to_string());
        }
        NodeView {
            name: name.into(),
            role: role.into(),
            up: true,
            observation,
        }
    }

    /// dn1 holds nothing and executed `deleted_txs`; Recon's view of dn1 is
    /// `recon_view`; SCM allocated three transactions and still logs `log`.
    fn cluster(recon_view: &str, synced: &str, deleted_txs: &str, log: &str) -> ClusterView {
        let dn1 = [
            ("containers", ""),
            ("events", "2"),
            ("commands", "7"),
            ("deleted_txs", deleted_txs),
            ("synced.recon", synced),
            ("synced.scm", synced),
            ("next_fcr_ms", "5000000"),
        ];
        let recon = [
            ("registered.dn1", "true"),
            ("replicas.dn1", recon_view),
            ("since_ms.dn1/C1", "240100"),
            ("held_heartbeats.dn1/C1", "30"),
        ];
        let scm = [
            ("registered.dn1", "true"),
            ("replicas.dn1", ""),
            ("txs", "3"),
            ("log", log),
            ("deletion_commands.dn1", "cmd7 SENT [tx3]"),
            ("block_deletion_from_ms", "300100"),
        ];
        ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 2_040_000,
            nodes: vec![
                node("dn1", "datanode", &dn1),
                node("scm", "scm", &scm),
                node("recon", "recon", &recon),
            ],
        }
    }

    #[test]
    fn a_phantom_replica_after_the_last_event_was_reported_fails_with_its_age() {
        let view = cluster("C1=UNHEALTHY", "2", "1,2,3", "");
        let Check::Fail(message) = MODEL.check("receiver_matches_datanode", &view) else {
            panic!("expected a failure");
        };
        assert!(message.starts_with("recon's view of dn1"), "{message}");
        assert!(message.contains("dn1/C1 is UNHEALTHY"), "{message}");
        assert!(message.contains("held 29m59.9s at judgment"), "{message}");
        assert!(message.contains("across 30 later heartbeats"), "{message}");
        assert!(message.contains("absent on dn1"), "{message}");
        assert!(message.contains("next periodic FCR is due at t=1h23m20.0s"));
    }

    #[test]
    fn a_receiver_not_yet_told_of_the_last_event_is_not_judged() {
        let view = cluster("C1=UNHEALTHY", "1", "1,2,3", "");
        assert_eq!(MODEL.check("receiver_matches_datanode", &view), Check::Pass);
    }

    #[test]
    fn matching_views_and_a_drained_log_pass() {
        let view = cluster("", "2", "1,2,3", "");
        for invariant in INFO.invariants.iter().map(|i| i.name) {
            assert_eq!(MODEL.check(invariant, &view), Check::Pass, "{invariant}");
        }
    }

    #[test]
    fn a_transaction_still_logged_at_judgment_is_named_with_what_holds_it() {
        // tx3 was sent in cmd7 and never acknowledged.
        let view = cluster("", "2", "1,2", "3");
        assert_eq!(
            MODEL.check("deletion_committed_after_execution", &view),
            Check::Pass
        );
        let Check::Fail(message) = MODEL.check("deletions_acknowledged", &view) else {
            panic!("expected a failure");
        };
        assert_eq!(
            message,
            "scm's deleted-block log still holds [tx3] at judgment (dn1 executed none of them, registered true, commands in hand: cmd7 SENT [tx3]; block deletion runs from t=5m0.1s)"
        );
        assert_eq!(
            INFO.invariant("deletions_acknowledged").map(|i| i.kind),
            Some(InvariantKind::Liveness)
        );
    }

    #[test]
    fn a_commit_of_a_transaction_the_datanode_never_executed_is_a_violation() {
        let view = cluster("", "2", "1", "");
        let Check::Fail(message) = MODEL.check("deletion_committed_after_execution", &view) else {
            panic!("expected a failure");
        };
        assert_eq!(
            message,
            "scm committed [tx2, tx3] although dn1 never executed them"
        );
    }

    #[test]
    fn deletions_are_not_judged_without_scm_or_before_a_datanode_published() {
        let mut view = cluster("", "2", "", "3");
        view.nodes[1].up = false;
        assert_eq!(MODEL.check("deletions_acknowledged", &view), Check::Pass);
        let mut view = cluster("", "2", "", "");
        view.nodes[0].observation.facts.remove("deleted_txs");
        assert_eq!(
            MODEL.check("deletion_committed_after_execution", &view),
            Check::Pass
        );
    }

    #[test]
    fn ops_and_params_parse() {
        let op = serde_json::json!({"op": "build_fcr"});
        let parsed = MODEL.parse_op(&op).expect("parses");
        assert_eq!(parsed.summary, "build_fcr (periodic)");
        let bad = serde_json::json!({"op": "delete", "container": 1, "x": 2});
        assert!(MODEL.parse_op(&bad).is_err());
        assert!(MODEL
            .parse_params(&serde_json::json!({"rpc_timeout_ms": 0}))
            .is_err());
        assert!(MODEL
            .parse_params(&serde_json::json!({"containers": [1, 2]}))
            .is_ok());
        let delete = MODEL
            .parse_op(&serde_json::json!({"op": "delete_blocks"}))
            .expect("parses");
        assert_eq!(delete.summary, "delete_blocks");
        let old_form = serde_json::json!({"op": "delete_blocks", "command": 7});
        assert!(MODEL.parse_op(&old_form).is_err(), "commands come from SCM");
        assert!(MODEL
            .parse_params(&serde_json::json!({"block_deletion_interval_ms": 0}))
            .is_err());
        assert!(MODEL
            .parse_params(&serde_json::json!({"wait_after_safe_mode_exit_ms": 0}))
            .is_ok());
    }

    #[test]
    fn the_csr_and_volume_failure_ops_parse_and_are_bounded() {
        let csr = serde_json::json!({"op": "command_status", "command": 7, "txs": [3]});
        assert_eq!(
            MODEL.parse_op(&csr).unwrap().summary,
            "command_status cmd7 [tx3]"
        );
        let bare = serde_json::json!({"op": "command_status", "command": 7});
        assert_eq!(
            MODEL.parse_op(&bare).unwrap().summary,
            "command_status cmd7 []"
        );
        let zero = serde_json::json!({"op": "command_status", "command": 0});
        assert!(MODEL.parse_op(&zero).is_err());
        let many: Vec<u64> = (1..=65).collect();
        let long = serde_json::json!({"op": "command_status", "command": 1, "txs": many});
        assert!(MODEL.parse_op(&long).is_err());
        let volume = serde_json::json!({"op": "fail_volume", "containers": [1, 2]});
        assert_eq!(
            MODEL.parse_op(&volume).unwrap().summary,
            "fail_volume [C1, C2]"
        );
        let missing = serde_json::json!({"op": "fail_volume"});
        assert!(MODEL.parse_op(&missing).is_err());
    }

    #[test]
    fn every_fail_point_is_in_the_registry() {
        let points = Endpoint::ALL.into_iter().flat_map(|ep| {
            [
                HddsPoint::InFlight(ep),
                HddsPoint::Rpc(ep),
                HddsPoint::Sent(ep),
            ]
        });
        for point in points.chain([HddsPoint::FcrBuild, HddsPoint::FcrBeforeRefresh]) {
            let name = point.info().name;
            assert!(INFO.fail_point(name).is_some(), "{name}");
        }
        assert_eq!(INFO.fail_points.len(), 8);
    }

    #[test]
    fn time_reads_in_minutes() {
        assert_eq!(fmt_ms(240_100), "4m0.1s");
        assert_eq!(fmt_ms(12_500), "12.5s");
        assert_eq!(fmt_ms(5_000_000), "1h23m20.0s");
    }
}
