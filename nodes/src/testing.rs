//! `faulty`: a model that misbehaves on request, to test the harness itself (a
//! panic in node code, an op that never answers, a flood of events). Compiled only
//! with the `test-models` feature; the harness's tests enable it.

use crate::api::{
    parse_json, Answers, Check, ClusterView, Command, Consistency, EventKind, HistoryModel, Model,
    ModelInfo, NodeCtx, Observation, OpInfo, OpResult, ParsedOp, RoleInfo,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;

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
}

pub struct Faulty;

static INFO: LazyLock<ModelInfo> = LazyLock::new(|| ModelInfo {
    name: "faulty",
    summary: "test-only: a model that panics, hangs or floods the trail on request",
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
        },
        OpInfo {
            name: "panic",
            summary: "panic in node code",
            example: "{on: a, op: panic, message: boom}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
        },
        OpInfo {
            name: "hang",
            summary: "never answer",
            example: "{on: a, op: hang}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
        },
        OpInfo {
            name: "flood",
            summary: "append N trail events",
            example: "{on: a, op: flood, events: 1000}",
            consistency: Consistency::Unjudged,
            answers: Answers::NONE,
        },
    ],
    fail_points: vec![],
    invariants: vec![],
    bugs: vec![],
    has_leader: false,
    leader_transfer: false,
    params: Vec::new(),
    reports_removed: false,
    history: HistoryModel::None,
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
            let mut inbox = ctx.take_inbox();
            let mut state = BTreeMap::new();
            ctx.publish(Observation::default());
            while let Some(command) = inbox.recv().await {
                let Command::Op { id, op } = command else {
                    continue;
                };
                match serde_json::from_value::<FaultyOp>(op).expect("validated") {
                    FaultyOp::Set { key, value } => {
                        state.insert(key, value);
                        ctx.publish(Observation {
                            state: state.clone(),
                            ..Observation::default()
                        });
                        ctx.complete(id, OpResult::ok());
                    }
                    FaultyOp::Panic { message } => panic!("faulty model: {message}"),
                    FaultyOp::Hang => {}
                    FaultyOp::Flood { events } => {
                        for i in 0..events {
                            ctx.record(EventKind::Note, format!("flood {i}"));
                        }
                        ctx.complete(id, OpResult::ok());
                    }
                }
            }
            Ok(())
        })
    }

    fn check(&self, _invariant: &str, _cluster: &ClusterView) -> Check {
        Check::Pass
    }
}
