//! `raftkv`: a key-value store on the Raft-style log. The harness's reference
//! model: small enough to read in one sitting, real enough to break.
//!
//! Durable: the Raft log and hard state. Volatile: the map, rebuilt on restart by
//! re-applying the committed log (the state machine persists nothing of its own).

use crate::raft::{
    role_name, Config, Entry, EntryBody, ProposeError, Raft, RaftEvent, Role, Tuning,
};
use faultline_api::{
    parse_json, Answers, ApplyResult, BugInfo, ChaosDomain, Check, ClusterView, Command,
    Consistency, FailPoint, FailPointInfo, Fault, HistoryModel, InvariantInfo, InvariantKind,
    Model, ModelInfo, NodeCtx, NodeEvent, Observation, ObservationInfo, OpInfo, OpResult, ParsedOp,
    PointChaos, RoleInfo,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;

const PORT: u16 = 9000;

/// The canary defect: a leader that commits without a quorum.
pub static BUG_COMMIT_WITHOUT_QUORUM: BugInfo = BugInfo {
    key: "CANARY-QUORUM",
    summary: "canary: the leader commits an entry as soon as it appends it, without a quorum",
    buggy: "a leader cut off in a minority applies writes the majority never sees",
    fixed: "an entry commits only once a majority holds it (Raft)",
};

/// A canary only the history checker catches: stale reads from a deposed leader.
pub static BUG_STALE_READ: BugInfo = BugInfo {
    key: "CANARY-STALE-READ",
    summary: "canary: a leader answers `get` from its own state machine without confirming it still leads",
    buggy: "a deposed leader cut off in a minority still believes it leads and answers reads with values the majority has overwritten; the replicas still converge",
    fixed: "a read goes through the log like a write, so only a leader a majority still follows can answer it (Raft's linearizable reads)",
};

/// A canary only the history checker catches: writes acknowledged before a quorum has them.
pub static BUG_LOST_ACK: BugInfo = BugInfo {
    key: "CANARY-LOST-ACK",
    summary: "canary: the leader acknowledges a write once it is appended locally and durable, before a quorum has it",
    buggy: "a leader cut off in a minority acknowledges puts and appends the majority never sees; a new leader overwrites them, so an acknowledged write is lost, and the replicas still converge",
    fixed: "a write is acknowledged once it is committed (a majority holds it) and applied",
};

/// Refusals of raftkv: nothing was appended to the log.
const REFUSED: &[&str] = &[
    "not leader",
    "leadership transfer in progress",
    "write refused",
];
/// Every op but `put` can find the key absent.
const NOT_FOUND: &[&str] = &["not found"];

/// The fail points of raftkv: its one registry of names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvPoint {
    /// Before the leader appends a client write to its log.
    Propose,
    /// Before the state machine applies a committed entry.
    Apply,
}

static PROPOSE: FailPointInfo = FailPointInfo {
    name: "propose",
    summary: "before the leader appends a client write (error: the write is refused)",
    errors: &["disk_full", "io"],
    stall: false,
    panic: true,
    // A refused write and a process that dies here are both answers Raft gives.
    chaos: PointChaos {
        errors: &["disk_full", "io"],
        panic: true,
        ..PointChaos::NONE
    },
};
static APPLY: FailPointInfo = FailPointInfo {
    name: "apply",
    summary: "before the state machine applies a committed entry (stalls the apply loop)",
    errors: &[],
    stall: true,
    panic: true,
    chaos: PointChaos {
        stall_ms: Some((10, 5_000)),
        panic: true,
        ..PointChaos::NONE
    },
};

impl FailPoint for KvPoint {
    fn info(self) -> &'static FailPointInfo {
        match self {
            KvPoint::Propose => &PROPOSE,
            KvPoint::Apply => &APPLY,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum KvOp {
    Put {
        key: String,
        value: String,
    },
    Append {
        key: String,
        value: String,
    },
    Delete {
        key: String,
    },
    /// A read through the log (linearizable).
    Get {
        key: String,
    },
}

impl KvOp {
    fn summary(&self) -> String {
        match self {
            KvOp::Put { key, value } => format!("put {key}={value}"),
            KvOp::Append { key, value } => format!("append {key}+={value}"),
            KvOp::Delete { key } => format!("delete {key}"),
            KvOp::Get { key } => format!("get {key}"),
        }
    }

    fn key(&self) -> &str {
        match self {
            KvOp::Put { key, .. }
            | KvOp::Append { key, .. }
            | KvOp::Delete { key }
            | KvOp::Get { key } => key,
        }
    }
}

/// The command as it travels in the log: the op plus who asked.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct LogCommand {
    op: KvOp,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Ratis-style metadata entries after commits (default on).
    #[serde(default)]
    pub metadata_entries: Option<bool>,
    #[serde(default)]
    pub heartbeat_ms: Option<u64>,
    #[serde(default)]
    pub election_timeout_ms_min: Option<u64>,
    #[serde(default)]
    pub election_timeout_ms_max: Option<u64>,
    /// A leader that has not heard from a majority within the longest election
    /// timeout steps down (default on, as etcd's CheckQuorum).
    #[serde(default)]
    pub check_quorum: Option<bool>,
}

pub struct RaftKv;

static INFO: LazyLock<ModelInfo> = LazyLock::new(|| ModelInfo {
    name: "raftkv",
    summary: "a key-value store replicated by the Raft-style log (the reference model)",
    roles: vec![RoleInfo {
        name: "replica",
        summary: "a Raft member",
        count_min: 1,
        count_max: 9,
    }],
    ops: vec![
        OpInfo {
            name: "put",
            summary: "set a key",
            example: "{op: put, key: a, value: \"1\"}",
            consistency: Consistency::Linearizable,
            answers: Answers {
                definite: &[],
                refused: REFUSED,
            },
            chaos: &["{op: put, key: \"k{1..5}\", value: \"v{seq}\"}"],
        },
        OpInfo {
            name: "append",
            summary: "append to a key's value",
            example: "{op: append, key: a, value: x}",
            consistency: Consistency::Linearizable,
            answers: Answers {
                definite: &[],
                refused: REFUSED,
            },
            chaos: &["{op: append, key: \"k{1..5}\", value: \"+{seq}\"}"],
        },
        OpInfo {
            name: "delete",
            summary: "remove a key",
            example: "{op: delete, key: a}",
            consistency: Consistency::Linearizable,
            answers: Answers {
                definite: NOT_FOUND,
                refused: REFUSED,
            },
            chaos: &["{op: delete, key: \"k{1..5}\"}"],
        },
        OpInfo {
            name: "get",
            summary: "read a key through the log",
            example: "{op: get, key: a}",
            consistency: Consistency::Linearizable,
            answers: Answers {
                definite: NOT_FOUND,
                refused: REFUSED,
            },
            chaos: &[
                "{op: get, key: \"k{1..5}\", weight: 2}",
                // Reads sent to any node: a follower refuses them, a deposed leader must not answer.
                "{on: any, op: get, key: \"k{1..5}\"}",
            ],
        },
    ],
    fail_points: vec![&PROPOSE, &APPLY],
    invariants: [InvariantInfo {
        name: "applied_entries_stable",
        kind: InvariantKind::Safety,
        summary: "no node's log loses or replaces an entry its state machine already applied",
    }]
    .into_iter()
    // Raft's own, checked by the run's Raft oracle as the nodes' Raft reports.
    .chain(crate::raft::invariants())
    .collect(),
    bugs: vec![&BUG_COMMIT_WITHOUT_QUORUM, &BUG_STALE_READ, &BUG_LOST_ACK],
    probes: crate::raft::RaftProbe::infos(),
    index_format: faultline_api::IndexFormat::Decimal,
    has_leader: true,
    leader_transfer: true,
    params: {
        let mut params = crate::raft::tuning_params();
        params.push(faultline_api::ParamInfo::bool(
            "check_quorum",
            true,
            "a leader that hears from no majority within election_timeout_ms_max steps down; off, a leader cut off in a minority believes it leads until it hears of a newer term",
        ));
        params
    },
    observations: vec![
        ObservationInfo::state(
            "<key>",
            "a key a client put, with its value; a deleted key is gone (and listed as removed)",
        ),
        ObservationInfo::fact("commit", "the node's Raft commit index"),
        ObservationInfo::fact("last_index", "the last index of the node's Raft log"),
        ObservationInfo::fact(
            "applied_entry_replaced",
            "an applied log index whose entry now has another term (state machine safety broken)",
        ),
    ],
    reports_removed: true,
    history: HistoryModel::Register,
    chaos: ChaosDomain {
        setup: &["{await: {leader: any, within: 5s}}"],
        every_ms: 50,
        op_timeout_ms: 2_000,
        heal_within_ms: 30_000,
        final_ops: &[
            "{op: put, key: final, value: \"final-{seq}\"}",
            "{op: get, key: final}",
        ],
        final_within_ms: 10_000,
        ..ChaosDomain::DEFAULT
    },
});

impl Model for RaftKv {
    fn info(&self) -> &ModelInfo {
        &INFO
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: KvOp = parse_json(op)?;
        Ok(ParsedOp {
            summary: parsed.summary(),
            op: serde_json::to_value(&parsed).expect("serializes"),
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        let params: Params = parse_json(params)?;
        params.tuning().check()
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        Box::pin(async move { run(ctx).await })
    }

    fn check(&self, invariant: &str, cluster: &ClusterView) -> Check {
        match invariant {
            "applied_entries_stable" => {
                for node in &cluster.nodes {
                    if let Some(what) = node.observation.fact("applied_entry_replaced") {
                        return Check::Fail(format!("{}: {what}", node.name));
                    }
                }
                Check::Pass
            }
            // Checked at the moment of each change by the Raft oracle, which
            // the node that sees a violation reports.
            other if crate::raft::oracle_checks(other) => Check::Pass,
            other => Check::Fail(format!("raftkv declares no invariant `{other}`")),
        }
    }
}

/// Config for the Raft core from the model's params and bugs.
impl Params {
    fn tuning(&self) -> Tuning {
        Tuning {
            metadata_entries: self.metadata_entries,
            heartbeat_ms: self.heartbeat_ms,
            election_timeout_ms_min: self.election_timeout_ms_min,
            election_timeout_ms_max: self.election_timeout_ms_max,
        }
    }
}

pub fn raft_config(ctx: &NodeCtx) -> Config {
    let params: Params = parse_json(ctx.params()).unwrap_or_default();
    let mut config = Config::tuned(params.tuning());
    config.check_quorum = params.check_quorum.unwrap_or(config.check_quorum);
    config.bug_commit_without_quorum = ctx.bugs().buggy(&BUG_COMMIT_WITHOUT_QUORUM);
    config
}

struct Kv {
    map: BTreeMap<String, String>,
    /// Keys a delete removed and no later write put back: derived from the
    /// applied log like the map, so it is as replicated as the map is.
    removed: BTreeSet<String>,
    applied: u64,
    /// (index, term) of every applied state-machine entry, to catch a log that
    /// later replaces one (Raft's state machine safety).
    applied_terms: BTreeMap<u64, u64>,
    replaced: Option<String>,
    /// Proposals of this node awaiting apply: index -> (command id, term).
    waiting: BTreeMap<u64, (u64, u64)>,
    role: Role,
    term: u64,
    leader: Option<String>,
}

async fn run(ctx: NodeCtx) -> turmoil::Result {
    let peers: Vec<String> = ctx.nodes().iter().map(|n| n.name.clone()).collect();
    let (raft, mut events) = Raft::start(&ctx, raft_config(&ctx), peers, PORT, 0).await?;
    let mut inbox = ctx.take_inbox();
    let mut kv = Kv {
        map: BTreeMap::new(),
        removed: BTreeSet::new(),
        applied: 0,
        applied_terms: BTreeMap::new(),
        replaced: None,
        waiting: BTreeMap::new(),
        role: Role::Follower,
        term: raft.term(),
        leader: None,
    };
    publish(&ctx, &raft, &kv);
    loop {
        tokio::select! {
            biased;
            Some(event) = events.recv() => {
                if matches!(event, RaftEvent::Apply(_)) {
                    // Stalls hold the apply loop in simulated time; a panic ends the process.
                    let _ = ctx.faults().hit(KvPoint::Apply).await;
                }
                on_event(&ctx, &raft, &mut kv, event)
            }
            Some(command) = inbox.recv() => {
                if let Command::Op { id, .. } = &command {
                    match ctx.faults().eval(KvPoint::Propose) {
                        Some(Fault::Error(kind)) => {
                            ctx.complete(*id, OpResult::error(format!("write refused: {kind}")));
                            continue;
                        }
                        Some(fault) => {
                            let _ = ctx.faults().act(fault).await;
                        }
                        None => {}
                    }
                }
                on_command(&ctx, &raft, &mut kv, command)
            }
            else => return Ok(()),
        }
        check_log(&raft, &mut kv);
        publish(&ctx, &raft, &kv);
    }
}

fn on_event(ctx: &NodeCtx, raft: &Raft, kv: &mut Kv, event: RaftEvent) {
    match event {
        RaftEvent::Apply(entry) => apply(ctx, kv, entry),
        RaftEvent::Role { role, term, leader } => {
            if role != Role::Leader {
                // Our proposals may or may not commit under the next leader: the
                // client cannot know, so it hears "indeterminate".
                for (_, (id, _)) in std::mem::take(&mut kv.waiting) {
                    ctx.complete(
                        id,
                        OpResult::error("indeterminate: leadership lost before commit"),
                    );
                }
            }
            kv.role = role;
            kv.term = term;
            kv.leader = leader;
            let _ = raft;
        }
        // The main loop publishes after every event.
        RaftEvent::LogChanged { .. } => {}
    }
}

fn apply(ctx: &NodeCtx, kv: &mut Kv, entry: Entry) {
    assert_eq!(entry.index, kv.applied + 1, "entries are applied in order");
    kv.applied = entry.index;
    kv.applied_terms.insert(entry.index, entry.term);
    let EntryBody::Sm(text) = &entry.body else {
        return;
    };
    let command: LogCommand = serde_json::from_str(text).expect("the log holds valid commands");
    let result = execute(&mut kv.map, &mut kv.removed, &command.op);
    let summary = command.op.summary();
    let applied = match &result.error {
        Some(error) => ApplyResult::Failed {
            error: error.clone(),
        },
        None => ApplyResult::Ok,
    };
    let keys = match &command.op {
        KvOp::Get { .. } => Vec::new(),
        KvOp::Put { key, .. } | KvOp::Append { key, .. } | KvOp::Delete { key } => {
            vec![key.clone()]
        }
    };
    ctx.record(NodeEvent::Apply {
        term: Some(entry.term),
        index: Some(entry.index),
        what: summary.clone(),
        result: applied,
        keys,
        text: format!(
            "apply (t:{}, i:{}) {summary} -> {result}",
            entry.term, entry.index
        ),
    });
    if let Some((id, term)) = kv.waiting.remove(&entry.index) {
        let answer = if term == entry.term {
            result
        } else {
            OpResult::error("indeterminate: entry replaced")
        };
        ctx.complete(id, answer);
    }
}

fn execute(
    map: &mut BTreeMap<String, String>,
    removed: &mut BTreeSet<String>,
    op: &KvOp,
) -> OpResult {
    match op {
        KvOp::Put { key, value } => {
            removed.remove(key);
            map.insert(key.clone(), value.clone());
            OpResult::ok()
        }
        KvOp::Append { key, value } => {
            removed.remove(key);
            map.entry(key.clone()).or_default().push_str(value);
            OpResult::ok()
        }
        KvOp::Delete { key } => match map.remove(key) {
            Some(_) => {
                removed.insert(key.clone());
                OpResult::ok()
            }
            None => OpResult::error("not found"),
        },
        KvOp::Get { key } => match map.get(key) {
            Some(value) => OpResult::value(value.clone()),
            None => OpResult::error("not found"),
        },
    }
}

fn on_command(ctx: &NodeCtx, raft: &Raft, kv: &mut Kv, command: Command) {
    match command {
        Command::Op { id, op } => {
            let op: KvOp = serde_json::from_value(op).expect("validated by parse_op");
            let _ = op.key();
            if let KvOp::Get { key } = &op {
                if raft.is_leader() && ctx.bugs().buggy(&BUG_STALE_READ) {
                    // The canary: the local state machine, with no check that a
                    // majority still follows this leader.
                    let answer = match kv.map.get(key) {
                        Some(value) => OpResult::value(value.clone()),
                        None => OpResult::error("not found"),
                    };
                    ctx.complete(id, answer);
                    return;
                }
            }
            // Blind writes: their answer does not depend on the state, so the
            // canary can give it before applying.
            let write = matches!(op, KvOp::Put { .. } | KvOp::Append { .. });
            let text = serde_json::to_string(&LogCommand { op }).expect("serializes");
            match raft.propose(text) {
                Ok(_) if write && ctx.bugs().buggy(&BUG_LOST_ACK) => {
                    // The canary: appended and durable here, not yet on a quorum.
                    ctx.complete(id, OpResult::ok());
                }
                Ok(index) => {
                    kv.waiting.insert(index, (id, raft.term()));
                }
                Err(ProposeError::NotLeader { leader }) => {
                    let hint = raft.leader_hint(leader).unwrap_or_else(|| "unknown".into());
                    ctx.complete(id, OpResult::error(format!("not leader (leader: {hint})")));
                }
                Err(ProposeError::TransferInProgress) => {
                    ctx.complete(id, OpResult::error("leadership transfer in progress"));
                }
            }
        }
        Command::TransferLeader { id, to } => match raft.transfer_leadership(&to) {
            Ok(()) => ctx.complete(id, OpResult::ok()),
            Err(e) => ctx.complete(id, OpResult::error(format!("transfer refused: {e:?}"))),
        },
        // Everything durable is already synced by the Raft shell.
        Command::Stop => ctx.stopped(),
    }
}

/// Raft's state machine safety, checked where it can break: an applied index whose
/// log entry now has another term was overwritten after being applied.
fn check_log(raft: &Raft, kv: &mut Kv) {
    if kv.replaced.is_some() {
        return;
    }
    let last = raft.last_index();
    for (&index, &term) in kv.applied_terms.range(..=last).rev().take(64) {
        match raft.entry_term(index) {
            Some(now) if now != term => {
                kv.replaced = Some(format!(
                    "applied index {index} (term {term}) now holds a term-{now} entry"
                ));
                return;
            }
            _ => {}
        }
    }
}

fn publish(ctx: &NodeCtx, raft: &Raft, kv: &Kv) {
    let mut facts = BTreeMap::new();
    facts.insert("commit".to_string(), raft.commit_index().to_string());
    facts.insert("last_index".to_string(), raft.last_index().to_string());
    if let Some(what) = &kv.replaced {
        facts.insert("applied_entry_replaced".to_string(), what.clone());
    }
    ctx.publish(Observation {
        role: Some(role_name(kv.role).to_string()),
        term: Some(kv.term),
        leader: kv.leader.clone(),
        applied: Some(kv.applied),
        state: kv.map.clone(),
        facts,
        pending: kv.waiting.len() as u64,
        removed: kv.removed.clone(),
        ..Default::default()
    });
}
