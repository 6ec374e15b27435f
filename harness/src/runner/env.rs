//! The harness's implementation of the node API's [`Env`]: one per run.

use crate::faults::FaultTable;
use crate::trail::{Event, Kind, Trail};
use nodes::api::{Command, Env, Fault, NodeEvent, Observation, OpResult};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// Messages between nodes are counted per 100 ms bucket for the space-time diagram.
pub const MESSAGE_BUCKET_MS: u64 = 100;
/// Bound on the message buckets kept per run.
pub const MESSAGE_BUCKETS_MAX: usize = 200_000;

pub struct NodeState {
    pub name: String,
    pub up: bool,
    pub incarnation: u32,
    pub observation: Observation,
    pub inbox: Option<UnboundedSender<Command>>,
    /// Set when the node acknowledged a clean stop.
    pub stopped: bool,
    /// Whether this incarnation has published an observation yet: a node that just
    /// started says nothing about its state, so it is never quiescent.
    pub published: bool,
}

/// A client operation or admin command the harness sent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpRecord {
    pub id: u64,
    pub node: String,
    pub summary: String,
    pub invoked_ms: u64,
    pub result: Option<OpResult>,
    pub completed_ms: Option<u64>,
    /// The step stopped waiting for it.
    pub timed_out: bool,
    /// An admin command (transfer) rather than a client op.
    pub admin: bool,
}

pub struct RunState {
    pub trail: Trail,
    pub nodes: Vec<NodeState>,
    pub ops: BTreeMap<u64, OpRecord>,
    /// Ops with no answer that the client has not given up on: kept apart so that
    /// the per-step quiescence check does not scan every op of the run.
    pub open: std::collections::BTreeSet<u64>,
    /// Nodes that asked to terminate, in order, not yet acted on.
    pub exits: Vec<(usize, String)>,
    pub faults: FaultTable,
    /// (bucket start ms, from, to, kind) -> count.
    pub messages: BTreeMap<(u64, String, String, String), u32>,
    pub messages_total: u64,
    /// Simulated time as the driver last saw it (outside any host).
    pub now: Duration,
    /// Scenario line of the step being executed, for harness events.
    pub line: Option<u32>,
    pub events_max: usize,
    pub events_over: bool,
    /// What clients saw: every client op as an invoke and a completion.
    pub history: super::recorder::Recorder,
}

impl RunState {
    /// The client gives up on an op (timeout, or its node went down).
    pub fn give_up(&mut self, id: u64, why: &str) {
        if !self.open.remove(&id) {
            return;
        }
        let Some(op) = self.ops.get_mut(&id) else {
            return;
        };
        op.timed_out = true;
        let (node, detail) = (op.node.clone(), format!("{} -> {why}", op.summary));
        self.harness_event(Some(&node), Kind::OpTimeout, detail);
        let now = self.now;
        self.history.give_up(id, why, now);
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Append a harness event at the driver's current time.
    pub fn harness_event(&mut self, node: Option<&str>, kind: Kind, detail: impl Into<String>) {
        self.harness_action(node, kind, detail, None);
    }

    /// Append a harness event that is an action, with its step payload.
    pub fn harness_action(
        &mut self,
        node: Option<&str>,
        kind: Kind,
        detail: impl Into<String>,
        step: Option<serde_json::Value>,
    ) {
        let event = Event {
            t_ms: self.now.as_millis() as u64,
            node: node.map(str::to_string),
            kind,
            detail: detail.into(),
            keys: Vec::new(),
            line: self.line,
            step,
        };
        self.push(event);
    }

    pub fn push(&mut self, event: Event) {
        tracing::debug!(
            target: "faultline::trail",
            t_ms = event.t_ms,
            node = event.node.as_deref().unwrap_or("-"),
            kind = %event.kind.name(),
            "{}",
            event.detail
        );
        if self.trail.len() >= self.events_max {
            self.events_over = true;
            return;
        }
        self.trail.push(event);
    }
}

pub struct RunEnv {
    pub run_id: String,
    pub state: Rc<RefCell<RunState>>,
}

impl RunEnv {
    fn now_ms(&self) -> u64 {
        self.now().as_millis() as u64
    }
}

impl Env for RunEnv {
    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn now(&self) -> Duration {
        // Inside a host, its own clock (exact within a tick); outside, the driver's.
        turmoil::sim_elapsed().unwrap_or_else(|| self.state.borrow().now)
    }

    fn record(&self, node: &str, event: NodeEvent) {
        let t_ms = self.now_ms();
        self.state.borrow_mut().push(Event {
            t_ms,
            node: Some(node.to_string()),
            kind: Kind::from_node(event.kind),
            detail: event.detail,
            keys: event.keys,
            line: None,
            step: None,
        });
    }

    fn message(&self, from: &str, to: &str, kind: &str) {
        let bucket = self.now_ms() / MESSAGE_BUCKET_MS * MESSAGE_BUCKET_MS;
        let mut state = self.state.borrow_mut();
        state.messages_total += 1;
        let key = (bucket, from.to_string(), to.to_string(), kind.to_string());
        if state.messages.len() < MESSAGE_BUCKETS_MAX || state.messages.contains_key(&key) {
            *state.messages.entry(key).or_insert(0) += 1;
        }
    }

    fn fail_point(&self, node: &str, point: &'static str, payload: &str) -> Option<Fault> {
        let t_ms = self.now_ms();
        let mut state = self.state.borrow_mut();
        let decision = state.faults.decide(node, point, payload)?;
        state.push(Event {
            t_ms,
            node: Some(node.to_string()),
            kind: Kind::FailPointHit,
            detail: decision.description,
            keys: Vec::new(),
            line: None,
            step: None,
        });
        decision.fault
    }

    fn publish(&self, node: &str, observation: Observation) {
        let mut state = self.state.borrow_mut();
        if let Some(i) = state.node_index(node) {
            state.nodes[i].observation = observation;
            state.nodes[i].published = true;
        }
    }

    fn complete(&self, node: &str, id: u64, result: OpResult) {
        let now = self.now();
        let t_ms = now.as_millis() as u64;
        let mut state = self.state.borrow_mut();
        state.open.remove(&id);
        let Some(op) = state.ops.get_mut(&id) else {
            return;
        };
        if op.result.is_some() {
            return;
        }
        let kind = if result.ok { Kind::OpOk } else { Kind::OpError };
        let late = if op.timed_out {
            " (after the step timed out)"
        } else {
            ""
        };
        let detail = format!("{} -> {result}{late}", op.summary);
        let admin = op.admin;
        if !admin {
            state.history.answer(id, &result, now);
        }
        let Some(op) = state.ops.get_mut(&id) else {
            return;
        };
        op.result = Some(result);
        op.completed_ms = Some(t_ms);
        let kind = if op.admin { Kind::Transfer } else { kind };
        state.push(Event {
            t_ms,
            node: Some(node.to_string()),
            kind,
            detail,
            keys: Vec::new(),
            line: None,
            step: None,
        });
    }

    fn exit(&self, node: &str, reason: &str) {
        let mut state = self.state.borrow_mut();
        if let Some(i) = state.node_index(node) {
            if !state.exits.iter().any(|(n, _)| *n == i) {
                state.exits.push((i, reason.to_string()));
            }
        }
    }

    fn stopped(&self, node: &str) {
        let mut state = self.state.borrow_mut();
        if let Some(i) = state.node_index(node) {
            state.nodes[i].stopped = true;
        }
    }
}
