//! `faulty`: a model that misbehaves on request, to test the harness itself (a
//! panic in node code, an op that never answers, a flood of events). It is in
//! every build but in no list: `faultline list`, `new` and the did-you-mean
//! never name it, and a scenario reaches it only by `model: faulty`. Being in
//! every build keeps the test build's dependency graph the same as the CLI's, so
//! one release compile serves both.

use faultline_api::{
    parse_json, Answers, ApplyResult, Check, ClusterView, Command, Consistency, HistoryModel,
    InvariantInfo, InvariantKind, Model, ModelInfo, NodeCtx, NodeEvent, Observation, OpInfo,
    OpResult, ParsedOp, RoleInfo,
};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::LazyLock;
use std::time::Duration;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum FaultyOp {
    /// Store a value (so there is state to compare).
    Set { key: String, value: String },
    /// Panic inside the node's code: an unexpected crash.
    Panic { message: String },
    /// Never answer.
    Hang,
    /// Append this many events to the trail at once.
    Flood { events: u64 },
    /// Answer at once, record an internal submit of the next log index, and
    /// apply it `apply_after_ms` later, publishing nothing in between: a model
    /// that forgets to publish its in-flight work.
    Submit { apply_after_ms: u64 },
    /// Report reaching the model's one probe.
    Probe,
    /// Add one to the run's shared counter; answers its new value.
    Count,
    /// Report `invariant` broken, with `message`.
    Violate { invariant: String, message: String },
}

faultline_api::probes! {
    /// The model's one probe, reported by the `probe` op.
    pub enum FaultyProbe {
        Reached {
            name: "faulty_reached",
            rare: false,
            summary: "the probe op ran",
        },
    }
}

pub struct Faulty;

static INFO: LazyLock<ModelInfo> = LazyLock::new(|| ModelInfo {
    name: "faulty",
    summary:
        "test-only: a model that panics, hangs, floods the trail or reports a violation on request",
    roles: vec![RoleInfo {
        name: "node",
        summary: "a node",
        count_min: 1,
        count_max: 4,
    }],
    ops: vec![
        OpInfo {
            name: "set",
            summary: "store a value",
            example: "{on: a, op: set, key: k, value: v}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "panic",
            summary: "panic in node code",
            example: "{on: a, op: panic, message: boom}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "hang",
            summary: "never answer",
            example: "{on: a, op: hang}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "flood",
            summary: "append N trail events",
            example: "{on: a, op: flood, events: 1000}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "probe",
            summary: "report reaching the model's probe",
            example: "{on: a, op: probe}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "submit",
            summary: "submit internally, apply later, publish nothing in between",
            example: "{on: a, op: submit, apply_after_ms: 50}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "count",
            summary: "add one to the run's shared counter, answer its value",
            example: "{on: a, op: count}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
        OpInfo {
            name: "violate",
            summary: "report an invariant broken",
            example: "{on: a, op: violate, invariant: reported, message: broken}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
            chaos: &[],
        },
    ],
    fail_points: vec![],
    invariants: vec![InvariantInfo {
        name: "reported",
        kind: InvariantKind::Safety,
        summary: "holds unless a `violate` op reports it broken",
    }],
    bugs: vec![],
    probes: FaultyProbe::infos(),
    index_format: faultline_api::IndexFormat::Decimal,
    has_leader: false,
    leader_transfer: false,
    params: Vec::new(),
    observations: vec![faultline_api::ObservationInfo::state(
        "<key>",
        "a key the `set` op stored",
    )],
    reports_removed: false,
    history: HistoryModel::None,
    chaos: faultline_api::ChaosDomain::DEFAULT,
});

impl Model for Faulty {
    fn info(&self) -> &ModelInfo {
        &INFO
    }

    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String> {
        let parsed: FaultyOp = parse_json(op)?;
        let summary = format!("{parsed:?}");
        Ok(ParsedOp {
            op: serde_json::to_value(parsed).expect("serializes"),
            summary,
        })
    }

    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String> {
        match params.as_object() {
            Some(map) if map.is_empty() => Ok(()),
            _ => Err("faulty takes no params".into()),
        }
    }

    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        Box::pin(async move {
            let ctx = Rc::new(ctx);
            let mut inbox = ctx.take_inbox();
            let mut state = BTreeMap::new();
            let applied = Rc::new(Cell::new(0u64));
            let observed = |applied: u64| Observation {
                applied: Some(applied),
                ..Observation::default()
            };
            ctx.publish(observed(0));
            while let Some(command) = inbox.recv().await {
                let Command::Op { id, op } = command else {
                    continue;
                };
                match serde_json::from_value::<FaultyOp>(op).expect("validated") {
                    FaultyOp::Set { key, value } => {
                        state.insert(key, value);
                        ctx.publish(Observation {
                            state: state.clone(),
                            ..observed(applied.get())
                        });
                        ctx.complete(id, OpResult::ok());
                    }
                    FaultyOp::Panic { message } => panic!("faulty model: {message}"),
                    FaultyOp::Hang => {}
                    FaultyOp::Flood { events } => {
                        for i in 0..events {
                            ctx.note(format!("flood {i}"));
                        }
                        ctx.complete(id, OpResult::ok());
                    }
                    FaultyOp::Probe => {
                        ctx.probe(FaultyProbe::Reached);
                        ctx.complete(id, OpResult::ok());
                    }
                    FaultyOp::Count => {
                        let counter = ctx.shared::<Cell<u64>>();
                        counter.set(counter.get() + 1);
                        ctx.complete(id, OpResult::value(counter.get().to_string()));
                    }
                    FaultyOp::Violate { invariant, message } => {
                        ctx.violation(&invariant, &message);
                        ctx.complete(id, OpResult::ok());
                    }
                    FaultyOp::Submit { apply_after_ms } => {
                        let index = applied.get() + 1;
                        ctx.record(NodeEvent::Submit {
                            by: "faulty".into(),
                            what: format!("entry {index}"),
                            term: Some(1),
                            index: Some(index),
                            text: format!("submit entry {index}"),
                        });
                        ctx.complete(id, OpResult::ok());
                        let (ctx, applied) = (ctx.clone(), applied.clone());
                        tokio::task::spawn_local(async move {
                            tokio::time::sleep(Duration::from_millis(apply_after_ms)).await;
                            applied.set(index);
                            ctx.record(NodeEvent::Apply {
                                term: Some(1),
                                index: Some(index),
                                what: format!("entry {index}"),
                                result: ApplyResult::Ok,
                                keys: Vec::new(),
                                text: format!("apply entry {index}"),
                            });
                            ctx.publish(observed(index));
                        });
                    }
                }
            }
            Ok(())
        })
    }

    /// `reported` is judged from what the nodes reported: the harness fails it
    /// with a `violate` op's report.
    fn check(&self, _invariant: &str, _cluster: &ClusterView) -> Check {
        Check::Pass
    }
}
