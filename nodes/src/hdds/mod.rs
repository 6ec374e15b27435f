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
mod receiver;
mod replicas;
mod report;

use crate::api::{
    parse_json, BugInfo, Check, ClusterView, FailPoint, FailPointInfo, InvariantInfo,
    InvariantKind, Model, ModelInfo, NodeCtx, NodeView, OpInfo, ParsedOp, RoleInfo,
};
use report::Endpoint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;

/// The one UDP port of every node of this model.
const PORT: u16 = 9861;
/// Bound on the containers one datanode holds (an FCR must fit in one datagram).
const CONTAINERS_MAX: usize = 512;

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
    /// An FCR build (periodic or triggered).
    FcrBuild,
    /// Between the FCR build's ICR drop and `refreshFullReport`.
    FcrBeforeRefresh,
}

const RPC_ERRORS: &[&str] = &["drop_request", "drop_response"];

static SCM_IN_FLIGHT: FailPointInfo = FailPointInfo {
    name: "heartbeat.scm.in_flight",
    summary: "the heartbeat to SCM has taken its reports and its RPC is in flight (stall: the RPC stays in flight; other datanode work goes on)",
    errors: &[],
    stall: true,
    panic: true,
};
static RECON_IN_FLIGHT: FailPointInfo = FailPointInfo {
    name: "heartbeat.recon.in_flight",
    summary: "the heartbeat to Recon has taken its reports and its RPC is in flight (stall: the RPC stays in flight; other datanode work goes on)",
    errors: &[],
    stall: true,
    panic: true,
};
static SCM_RPC: FailPointInfo = FailPointInfo {
    name: "heartbeat.scm.rpc",
    summary: "the heartbeat RPC to SCM, after its in-flight point (drop_request: SCM never gets it; drop_response: SCM processes it, the answer is lost; both are an RPC timeout at the datanode)",
    errors: RPC_ERRORS,
    stall: false,
    panic: false,
};
static RECON_RPC: FailPointInfo = FailPointInfo {
    name: "heartbeat.recon.rpc",
    summary: "the heartbeat RPC to Recon, after its in-flight point (drop_request: Recon never gets it; drop_response: Recon processes it, the answer is lost; both are an RPC timeout at the datanode)",
    errors: RPC_ERRORS,
    stall: false,
    panic: false,
};
static FCR_BUILD: FailPointInfo = FailPointInfo {
    name: "fcr.build",
    summary: "an FCR build, before it takes the locks (stall: the build waits; error io: the container report fails after the queued ICRs were dropped, and no FCR is published)",
    errors: &["io"],
    stall: true,
    panic: true,
};
static FCR_BEFORE_REFRESH: FailPointInfo = FailPointInfo {
    name: "fcr.between_drop_and_refresh",
    summary: "an FCR build after it dropped the queued ICRs and before refreshFullReport sets the endpoints' ready flags (outside the queue lock)",
    errors: &[],
    stall: true,
    panic: true,
};

impl FailPoint for HddsPoint {
    fn info(self) -> &'static FailPointInfo {
        match self {
            HddsPoint::InFlight(Endpoint::Scm) => &SCM_IN_FLIGHT,
            HddsPoint::InFlight(Endpoint::Recon) => &RECON_IN_FLIGHT,
            HddsPoint::Rpc(Endpoint::Scm) => &SCM_RPC,
            HddsPoint::Rpc(Endpoint::Recon) => &RECON_RPC,
            HddsPoint::FcrBuild => &FCR_BUILD,
            HddsPoint::FcrBeforeRefresh => &FCR_BEFORE_REFRESH,
        }
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
    /// The datanode executes SCM's deleteBlocks command `command`; its command
    /// status report is queued for every endpoint.
    DeleteBlocks { command: u64 },
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
            HddsOp::DeleteBlocks { command } => format!("delete_blocks cmd{command}"),
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
        },
        OpInfo {
            name: "close",
            summary: "close an OPEN container (ICR CLOSED)",
            example: "{on: dn1, op: close, container: 2}",
        },
        OpInfo {
            name: "mark_unhealthy",
            summary: "mark a container UNHEALTHY (ICR UNHEALTHY)",
            example: "{on: dn1, op: mark_unhealthy, container: 1}",
        },
        OpInfo {
            name: "delete",
            summary: "delete a container (ICR DELETED)",
            example: "{on: dn1, op: delete, container: 1}",
        },
        OpInfo {
            name: "import",
            summary: "replication imports a container the datanode does not hold, CLOSED (ICR CLOSED)",
            example: "{on: dn1, op: import, container: 1}",
        },
        OpInfo {
            name: "delete_blocks",
            summary: "execute SCM's deleteBlocks command N (its command status report is queued)",
            example: "{on: dn1, op: delete_blocks, command: 7}",
        },
        OpInfo {
            name: "build_fcr",
            summary: "build a full container report now (drops the queued ICRs); trigger periodic (default) or volume_failure",
            example: "{on: dn1, op: build_fcr, trigger: volume_failure}",
        },
    ],
    fail_points: vec![
        &SCM_IN_FLIGHT,
        &SCM_RPC,
        &RECON_IN_FLIGHT,
        &RECON_RPC,
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
            name: "command_status_delivered",
            kind: InvariantKind::Safety,
            summary: "after the first successful heartbeat to SCM that follows a datanode's last event, SCM has the status of every command the datanode executed",
        },
    ],
    bugs: vec![&BUG_STALE_PUT_BACK_ICR],
    has_leader: false,
    leader_transfer: false,
}
});

impl Model for HddsReports {
    fn info(&self) -> &ModelInfo {
        &INFO
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: HddsOp = parse_json(op)?;
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
            "command_status_delivered" => check_pairs(cluster, commands_delivered),
            other => Check::Fail(format!("hdds-reports declares no invariant `{other}`")),
        }
    }
}

static MODEL: HddsReports = HddsReports;

/// The model, registered in `registry`.
pub fn model() -> Option<&'static dyn Model> {
    Some(&MODEL)
}

// ---- invariants ----

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

fn commands_delivered(_: &ClusterView, dn: &NodeView, receiver: &NodeView) -> Vec<String> {
    if receiver.role != Endpoint::Scm.role() {
        // Recon has no command status report handler.
        return Vec::new();
    }
    let executed = datanode::ids_from_fact(dn.observation.fact("commands").unwrap_or(""));
    let acked = datanode::ids_from_fact(
        receiver
            .observation
            .fact(&format!("acked.{}", dn.name))
            .unwrap_or(""),
    );
    let missing: Vec<String> = executed
        .difference(&acked)
        .map(|c| format!("cmd{c}"))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{} never got the status of {} executed on {}",
        receiver.name,
        missing.join(", "),
        dn.name
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
    use crate::api::Observation;

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

    /// dn1 holds nothing; Recon's view of dn1 is `recon_view`.
    fn cluster(recon_view: &str, synced: &str, acked: &str) -> ClusterView {
        let dn1 = [
            ("containers", ""),
            ("events", "2"),
            ("commands", "7"),
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
            ("acked.dn1", acked),
        ];
        ClusterView {
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
        let view = cluster("C1=UNHEALTHY", "2", "7");
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
        let view = cluster("C1=UNHEALTHY", "1", "");
        assert_eq!(MODEL.check("receiver_matches_datanode", &view), Check::Pass);
        assert_eq!(MODEL.check("command_status_delivered", &view), Check::Pass);
    }

    #[test]
    fn matching_views_pass() {
        let view = cluster("", "2", "7");
        assert_eq!(MODEL.check("receiver_matches_datanode", &view), Check::Pass);
        assert_eq!(MODEL.check("command_status_delivered", &view), Check::Pass);
    }

    #[test]
    fn a_lost_command_status_fails_at_scm_only() {
        let view = cluster("", "2", "");
        let Check::Fail(message) = MODEL.check("command_status_delivered", &view) else {
            panic!("expected a failure");
        };
        assert_eq!(message, "scm never got the status of cmd7 executed on dn1");
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
    }

    #[test]
    fn time_reads_in_minutes() {
        assert_eq!(fmt_ms(240_100), "4m0.1s");
        assert_eq!(fmt_ms(12_500), "12.5s");
        assert_eq!(fmt_ms(5_000_000), "1h23m20.0s");
    }
}
