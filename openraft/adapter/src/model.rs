//! The openraft model as faultline sees it: roles, ops, params, fail points and
//! invariants, and the run of a node.

use faultline_api::{Answers, Consistency, HistoryModel};
use faultline_api::{ChaosDomain, ParamChaos, ParamInfo, ParamValue};
use faultline_api::{
    Check, ClusterView, IndexFormat, Model, ModelInfo, NodeCtx,
    ObservationInfo, OpInfo, ParsedOp, RoleInfo, parse_json,
};
use faultline_api::kit::raft;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// A client operation, as a scenario writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    Put {
        key: String,
        value: String,
    },
    /// A read through the log.
    Get {
        key: String,
    },
    /// A linearizable read: openraft's read index (`ensure_linearizable`), then
    /// the local state machine.
    Read {
        key: String,
    },
    /// `Raft::add_learner`, not waiting for the learner to catch up.
    AddLearner {
        node: String,
    },
    /// `Raft::change_membership` to exactly these voters; `retain` keeps removed
    /// voters as learners.
    ChangeMembership {
        voters: Vec<String>,
        #[serde(default)]
        retain: bool,
    },
    /// `Raft::trigger().transfer_leader(to)` on this node, answered when `to`
    /// leads or refuses (openraft 0.10.0-alpha.25 and later can refuse).
    TransferLeader {
        to: String,
    },
}

impl Op {
    fn summary(&self) -> String {
        match self {
            Op::Put { key, value } => format!("put {key}={value}"),
            Op::Get { key } => format!("get {key}"),
            Op::Read { key } => format!("read {key}"),
            Op::AddLearner { node } => format!("add_learner {node}"),
            Op::ChangeMembership { voters, retain } => format!(
                "change_membership [{}]{}",
                voters.join(","),
                if *retain { " retain" } else { "" }
            ),
            Op::TransferLeader { to } => format!("transfer_leader {to}"),
        }
    }
}

/// Tuning of openraft's `Config`, per scenario or variant.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub heartbeat_ms: Option<u64>,
    pub election_timeout_ms_min: Option<u64>,
    pub election_timeout_ms_max: Option<u64>,
    /// Build a snapshot after this many applied entries.
    pub snapshot_every: Option<u64>,
    /// Entries kept in the log after a snapshot.
    pub keep_after_snapshot: Option<u64>,
    /// openraft's `enable_leader_restore` (its default: on): a restarted leader
    /// whose vote is committed resumes leading without an election.
    pub leader_restore: Option<bool>,
}

pub struct OpenraftModel {
    release: &'static str,
    info: ModelInfo,
}

impl OpenraftModel {
    pub fn new(release: &'static str) -> Self {
        OpenraftModel {
            release,
            info: info(),
        }
    }
}

/// A read's answers: an absent key is a definite answer. Every openraft error is
/// unknown, for writes too: `ForwardToLeader` can come after the entry was
/// appended (a leader that stepped down, its log later kept or reverted), so no
/// error of `client_write` proves the write will never apply.
const READ_ANSWERS: Answers = Answers {
    definite: &["not found"],
    refused: &[],
};

fn info() -> ModelInfo {
    ModelInfo {
        name: "openraft",
        summary: "a key-value store on an unmodified openraft release (databendlabs/openraft), one build per release",
        roles: vec![
            RoleInfo {
                name: "voter",
                summary: "a voter of the initial membership (the first one bootstraps the cluster)",
                count_min: 1,
                count_max: 7,
            },
            RoleInfo {
                name: "learner",
                summary: "a node outside the initial membership, waiting for add_learner",
                count_min: 0,
                count_max: 4,
            },
        ],
        ops: vec![
            OpInfo {
                name: "put",
                summary: "Raft::client_write of a put",
                example: "{op: put, key: a, value: \"1\"}",
                consistency: Consistency::Linearizable,
                answers: Answers::NONE,
            chaos: &["{op: put, key: \"k{1..5}\", value: \"v{seq}\"}"],
            },
            OpInfo {
                name: "get",
                summary: "a read through the log (client_write)",
                example: "{op: get, key: a}",
                consistency: Consistency::Linearizable,
                answers: READ_ANSWERS,
            chaos: &["{op: get, key: \"k{1..5}\"}"],
            },
            OpInfo {
                name: "read",
                summary: "a linearizable read (ensure_linearizable with ReadIndex)",
                example: "{op: read, key: a}",
                consistency: Consistency::Linearizable,
                answers: READ_ANSWERS,
            chaos: &["{op: read, key: \"k{1..5}\"}"],
            },
            OpInfo {
                name: "add_learner",
                summary: "Raft::add_learner (not blocking)",
                example: "{op: add_learner, node: n4}",
                consistency: Consistency::Unjudged,
                answers: Answers::NONE,
            // Membership and leadership are the nemesis's (transfer_leader), not the workload's.
            chaos: &[],
            },
            OpInfo {
                name: "change_membership",
                summary: "Raft::change_membership to exactly these voters",
                example: "{op: change_membership, voters: [n1, n2, n3, n4]}",
                consistency: Consistency::Unjudged,
                answers: Answers::NONE,
            // Membership and leadership are the nemesis's (transfer_leader), not the workload's.
            chaos: &[],
            },
            OpInfo {
                name: "transfer_leader",
                summary: "Raft::trigger().transfer_leader; ok when the target leads, the refusal as an error",
                example: "{op: transfer_leader, to: n2}",
                consistency: Consistency::Unjudged,
                answers: Answers::NONE,
            chaos: &[],
            },
        ],
        fail_points: crate::points::all(),
        invariants: raft::declare(&[
            raft::COMMITTED_ON_QUORUM,
            raft::COMMITTED_AGREE,
            raft::LEADER_COMPLETENESS,
            raft::LEADER_MEMBERSHIP,
            raft::LOG_CONTIGUOUS,
            raft::MEMBERSHIP_IN_LOG,
        ]),
        bugs: Vec::new(),
        probes: crate::probes::OpenraftProbe::infos(),
        index_format: IndexFormat::Decimal,
        has_leader: true,
        leader_transfer: true,
        // The chaos ranges never conflict (Config::validate: every heartbeat
        // below every shortest election timeout, every shortest below every
        // longest), so any draw is a Raft that can keep a leader.
        params: vec![
            ParamInfo::duration_ms(
                "heartbeat_ms",
                (1, 60_000),
                Some(100),
                "openraft's heartbeat_interval (also its AppendEntries deadline)",
            )
            .chaos(ParamChaos::Range { min: 20, max: 150 }),
            ParamInfo::duration_ms(
                "election_timeout_ms_min",
                (1, 600_000),
                Some(400),
                "openraft's election_timeout_min",
            )
            .chaos(ParamChaos::Range { min: 300, max: 600 }),
            ParamInfo::duration_ms(
                "election_timeout_ms_max",
                (2, 600_000),
                Some(800),
                "openraft's election_timeout_max",
            )
            .chaos(ParamChaos::Range { min: 700, max: 1_500 }),
            ParamInfo::integer(
                "snapshot_every",
                (1, 1_000_000),
                Some(64),
                "build a snapshot after this many applied entries",
            )
            .chaos(ParamChaos::Range { min: 8, max: 200 }),
            ParamInfo::integer(
                "keep_after_snapshot",
                (0, 1_000_000),
                Some(8),
                "entries kept in the log after a snapshot",
            )
            .chaos(ParamChaos::Range { min: 0, max: 16 }),
            ParamInfo::bool(
                "leader_restore",
                true,
                "openraft's enable_leader_restore: a restarted leader with a committed vote resumes leading",
            )
            // Pinned off in chaos: with it on, every release up to alpha.37
            // has the unfixed leader-restore defect (docs/models/openraft.md,
            // "Leader restore"), which a chaos run finds often
            // enough to hide every other finding and to fail each all-fixed
            // control. A scenario that sets it on still runs it.
            .chaos(ParamChaos::Choices(&[ParamValue::Bool(false)])),
        ],
        // What `Node::publish_metrics` publishes. Not held to the registry
        // test of the harness (that test runs only the models built with it).
        observations: vec![
            ObservationInfo::state("<key>", "a key a client put, with its value"),
            ObservationInfo::fact("committed", "the node's committed log index"),
            ObservationInfo::fact("committed_log_id", "the committed log id, `TERM-INDEX`"),
            ObservationInfo::fact("last_log", "the last log index"),
            ObservationInfo::fact("durable", "the last log index flushed to storage"),
            ObservationInfo::fact("snapshot", "the index of the last snapshot"),
            ObservationInfo::fact("vote", "the node's vote"),
            ObservationInfo::fact(
                "membership",
                "the membership, `voters [n1,n2,n3] learners [n4]`",
            ),
        ],
        reports_removed: false,
        // put, get and read are judged as a register per key.
        history: HistoryModel::Register,
        chaos: ChaosDomain {
            // The first voter bootstraps; the initial membership's entry
            // (index 1) is the first applied, and waiting for it everywhere
            // also waits out alpha.37's lease: it takes writes only once a
            // quorum acknowledged the new leader's first entry.
            setup: &["{await: {leader: any, within: 10s}}", "{await: {applied: 1, within: 10s}}"],
            every_ms: 30,
            // Fault timings scaled to openraft's timers, as hdds-reports scales
            // its own to its heartbeats: a fault lasts from below the shortest
            // heartbeat the domain draws (20 ms) to over three of its longest
            // election timeouts (1.5 s), so it can cost a follower one
            // AppendEntries or the cluster its leader; faults start 20 ms..1 s
            // apart, within an election timeout of each other, so they overlap;
            // and up to four at once on five nodes. The harness default
            // (100 ms..10 s, 200 ms..3 s apart, two at once) is sized for
            // systems with timers of seconds.
            spacing_ms: (20, 1_000),
            duration_ms: (10, 5_000),
            concurrent_max: 4,
            op_timeout_ms: 2_000,
            heal_within_ms: 30_000,
            final_ops: &[
                "{op: put, key: final, value: \"final-{seq}\"}",
                "{op: read, key: final}",
            ],
            final_within_ms: 10_000,
            ..ChaosDomain::DEFAULT
        },
    }
}

impl Model for OpenraftModel {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: Op = parse_json(op)?;
        Ok(ParsedOp {
            summary: parsed.summary(),
            op: serde_json::to_value(&parsed).expect("serializes"),
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        let params: Params = parse_json(params)?;
        if let (Some(min), Some(max)) = (
            params.election_timeout_ms_min,
            params.election_timeout_ms_max,
        ) {
            if min >= max {
                return Err("election_timeout_ms_min must be below election_timeout_ms_max".into());
            }
        }
        if params.heartbeat_ms == Some(0) || params.snapshot_every == Some(0) {
            return Err("heartbeat_ms and snapshot_every are at least 1".into());
        }
        Ok(())
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        Box::pin(crate::node::run(ctx))
    }

    fn check(&self, invariant: &str, _cluster: &ClusterView) -> Check {
        if self.info.invariant(invariant).is_none() {
            return Check::Fail(format!("openraft declares no invariant `{invariant}`"));
        }
        // The oracle checks at the moment of the change and the node that finds
        // a violation reports it (`NodeCtx::violation`): the harness fails the
        // invariant with that report. Nothing else breaks these invariants.
        Check::Pass
    }

    fn release(&self) -> Option<&'static str> {
        Some(self.release)
    }

    /// `futures_util::select!`, which openraft's replication and heartbeat loops
    /// use, draws from a thread-local RNG seeded from a process-wide counter: the
    /// first run on a thread replays, a second one would not.
    fn one_run_per_process(&self) -> bool {
        true
    }
}
