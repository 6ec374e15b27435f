//! faultline's foca model: an unmodified foca release (caio/foca, SWIM
//! membership) on turmoil UDP, driven through the node API. Each build crate
//! (`../v0_11`, `../v0_12`, `../v2_0`) pins one release and calls [`main`].
//! docs/models/foca.md describes the model.

mod id;
mod node;
mod oracle;
mod points;

use faultline_api::{
    Answers, ChaosDomain, Check, ClusterView, Consistency, HistoryModel, IndexFormat,
    InvariantInfo, InvariantKind, Model, ModelInfo, NodeCtx, ObservationInfo, OpInfo, ParamChaos,
    ParamInfo, ParamValue, ParsedOp, RoleInfo, parse_json,
};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// A client operation: the only one reads a node's view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Op {
    /// The members this node sees Alive.
    Members,
}

/// foca's `Config` and the node's own timing, per scenario or variant.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    probe_period_ms: Option<u64>,
    probe_rtt_ms: Option<u64>,
    suspect_to_down_ms: Option<u64>,
    gossip_ms: Option<u64>,
    notify_down_members: Option<bool>,
    announce_ms: Option<u64>,
    merge_within_ms: Option<u64>,
}

impl Params {
    fn probe_period_ms(&self) -> u64 {
        self.probe_period_ms.unwrap_or(500)
    }
    fn probe_rtt_ms(&self) -> u64 {
        self.probe_rtt_ms.unwrap_or(200)
    }
    fn suspect_to_down_ms(&self) -> u64 {
        self.suspect_to_down_ms.unwrap_or(1_500)
    }
    fn gossip_ms(&self) -> u64 {
        self.gossip_ms.unwrap_or(200)
    }
    fn announce_ms(&self) -> u64 {
        self.announce_ms.unwrap_or(1_000)
    }
    fn merge_within_ms(&self) -> u64 {
        self.merge_within_ms.unwrap_or(10_000)
    }
}

pub struct FocaModel {
    release: &'static str,
    info: ModelInfo,
}

fn params() -> Vec<ParamInfo> {
    vec![
        ParamInfo::duration_ms("probe_period_ms", (10, 600_000), Some(500), "foca's probe_period")
            .chaos(ParamChaos::Range { min: 300, max: 1_000 }),
        ParamInfo::duration_ms("probe_rtt_ms", (1, 600_000), Some(200), "foca's probe_rtt")
            // foca: probe_rtt strictly below probe_period, preferably under half.
            .chaos(ParamChaos::Range { min: 50, max: 150 }),
        ParamInfo::duration_ms(
            "suspect_to_down_ms",
            (1, 600_000),
            Some(1_500),
            "foca's suspect_to_down_after",
        )
        .chaos(ParamChaos::Range { min: 300, max: 3_000 }),
        ParamInfo::duration_ms("gossip_ms", (10, 600_000), Some(200), "foca's periodic_gossip frequency (3 members)")
            .chaos(ParamChaos::Range { min: 50, max: 1_000 }),
        ParamInfo::bool(
            "notify_down_members",
            true,
            "foca's notify_down_members (on in new_lan/new_wan): a member learns it was declared Down",
        )
        // Off, a healed partition never merges on any release (nothing tells a
        // side it is Down): foca's documented remedy is this notification.
        .chaos(ParamChaos::Choices(&[ParamValue::Bool(true)])),
        ParamInfo::duration_ms(
            "announce_ms",
            (10, 600_000),
            Some(1_000),
            "the node announces to each scenario node it does not see Alive this often",
        )
        .chaos(ParamChaos::Range { min: 200, max: 2_000 }),
        ParamInfo::duration_ms(
            "merge_within_ms",
            (100, 600_000),
            Some(10_000),
            "members_merge's bound: from first contact (or the last datagram of either that a fault lost, or the last network fault on their link) to seeing the peer Alive",
        ),
    ]
}

fn info() -> ModelInfo {
    ModelInfo {
        name: "foca",
        summary: "SWIM cluster membership on an unmodified foca release (caio/foca), one build per release",
        roles: vec![RoleInfo {
            name: "member",
            summary: "a foca member; every node announces to the others it does not see",
            count_min: 2,
            count_max: 8,
        }],
        ops: vec![OpInfo {
            name: "members",
            summary: "the members this node sees Alive",
            example: "{op: members}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &["{op: members}"],
        }],
        fail_points: points::all(),
        invariants: vec![
            InvariantInfo {
                name: oracle::DOWN_NOT_ALIVE,
                kind: InvariantKind::Safety,
                summary: "no node sees a member Alive whose identity stopped running longer ago than the detection bound (probe rounds + suspicion)",
            },
            InvariantInfo {
                name: oracle::MEMBERS_MERGE,
                kind: InvariantKind::Liveness,
                summary: "every up node sees every other up node's current identity Alive within merge_within_ms of hearing from it",
            },
        ],
        bugs: Vec::new(),
        probes: points::FocaProbe::infos(),
        index_format: IndexFormat::Decimal,
        has_leader: false,
        leader_transfer: false,
        params: params(),
        observations: vec![
            ObservationInfo::fact(
                "identity",
                "the node's current foca identity, `n1:START.BUMP`",
            ),
            ObservationInfo::fact("alive", "the identities the node sees Alive"),
            ObservationInfo::fact("down", "how many identities the node holds Down"),
            ObservationInfo::fact(oracle::FACT_MERGE_WITHIN, "members_merge's bound"),
            ObservationInfo::fact(oracle::FACT_RETRY, "the announce period"),
            ObservationInfo::fact(
                "heard_lacking.<node>",
                "when the node first heard from <node> while not seeing it Alive",
            ),
            ObservationInfo::fact(
                oracle::FACT_LOST,
                "when a send or receive fault last lost one of the node's datagrams",
            ),
        ],
        reports_removed: false,
        history: HistoryModel::None,
        chaos: ChaosDomain {
            setup: &["{sleep: 3s}"],
            every_ms: 500,
            clients: 1,
            on: Some("any"),
            // Faults long enough for a side to declare the other Down
            // (several probe periods plus the suspicion period).
            spacing_ms: (200, 4_000),
            duration_ms: (100, 12_000),
            concurrent_max: 2,
            heal_within_ms: 40_000,
            heal_settle_ms: 1_000,
            excluded: &[("transfer_leader", "foca has no leader")],
            ..ChaosDomain::DEFAULT
        },
    }
}

impl FocaModel {
    pub fn new(release: &'static str) -> Self {
        FocaModel {
            release,
            info: info(),
        }
    }
}

impl Model for FocaModel {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: Op = parse_json(op)?;
        Ok(ParsedOp {
            summary: "members".into(),
            op: serde_json::to_value(&parsed).map_err(|e| e.to_string())?,
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        let p: Params = parse_json(params)?;
        if p.probe_rtt_ms() >= p.probe_period_ms() {
            return Err(format!(
                "probe_rtt_ms ({}) must be below probe_period_ms ({}), as foca's Config requires",
                p.probe_rtt_ms(),
                p.probe_period_ms()
            ));
        }
        Ok(())
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        Box::pin(node::run(ctx))
    }

    fn check(&self, invariant: &str, cluster: &ClusterView) -> Check {
        if invariant == oracle::MEMBERS_MERGE {
            return oracle::members_merge(cluster);
        }
        if invariant == oracle::DOWN_NOT_ALIVE {
            // Checked by the nodes as the run goes (`NodeCtx::violation`);
            // the harness fails it with their report.
            return Check::Pass;
        }
        Check::Fail(format!("foca declares no invariant `{invariant}`"))
    }

    fn release(&self) -> Option<&'static str> {
        Some(self.release)
    }
}

/// The faultline command line with this build's foca model registered.
pub fn main(release: &'static str) -> std::process::ExitCode {
    let model: &'static FocaModel = Box::leak(Box::new(FocaModel::new(release)));
    faultline::cli::main_with_models(&[model])
}
