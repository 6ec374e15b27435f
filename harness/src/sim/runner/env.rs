//! The harness's implementation of the node API's [`Env`]: one per run.

use crate::base::trail::{Data, Event, GiveUp, OpEnd, OpEndKind, Trail};
use crate::sim::faults::FaultTable;
use faultline_api::{
    Command, Env, Fault, NodeEvent, Observation, ObservationKind, OpResult, Role, Shared, Violation,
};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// Messages between nodes are counted per 100 ms bucket for the space-time diagram.
pub const MESSAGE_BUCKET_MS: u64 = 100;
/// Bound on the message buckets kept per run.
pub const MESSAGE_BUCKETS_MAX: usize = 200_000;

/// A published key: which map, and the key.
pub type PublishedKey = (ObservationKind, String);

thread_local! {
    /// Every key published on this thread while [`published_keys`] collects.
    static PUBLISHED: RefCell<Option<BTreeSet<PublishedKey>>> = const { RefCell::new(None) };
}

/// Run `f`, and return with its result every state key and fact a node
/// published in the runs it made on this thread (not in child processes): what
/// the test of the models' key declarations holds them to.
pub fn published_keys<T>(f: impl FnOnce() -> T) -> (T, BTreeSet<PublishedKey>) {
    let outer = PUBLISHED.with(|p| p.borrow_mut().replace(BTreeSet::new()));
    let value = f();
    let keys = PUBLISHED.with(|p| std::mem::replace(&mut *p.borrow_mut(), outer));
    (value, keys.unwrap_or_default())
}

fn collect_keys(observation: &Observation) {
    PUBLISHED.with(|p| {
        let mut p = p.borrow_mut();
        let Some(keys) = p.as_mut() else {
            return;
        };
        let state = observation
            .state
            .keys()
            .map(|k| (ObservationKind::State, k));
        let facts = observation.facts.keys().map(|k| (ObservationKind::Fact, k));
        keys.extend(state.chain(facts).map(|(kind, key)| (kind, key.clone())));
    });
}

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
    /// Log indices of requests this incarnation submitted itself (typed submit
    /// events) that it has not applied yet: in flight, whatever the node last
    /// published. Emptied as its applied index passes them, when it stops
    /// leading (its proposals are no longer its own to wait for) and on restart.
    pub submitted: BTreeSet<u64>,
}

impl NodeState {
    pub fn new(name: &str) -> NodeState {
        NodeState {
            name: name.to_string(),
            up: true,
            incarnation: 0,
            observation: Observation::default(),
            inbox: None,
            stopped: false,
            published: false,
            submitted: BTreeSet::new(),
        }
    }

    /// A submitted request is still in flight on this node.
    pub fn submit_in_flight(&self) -> bool {
        !self.submitted.is_empty()
    }

    /// Track what a node's own event says about its in-flight submits.
    fn track(&mut self, event: &NodeEvent) {
        match event {
            NodeEvent::Submit {
                index: Some(index), ..
            } => {
                if self.observation.applied.is_none_or(|a| a < *index) {
                    self.submitted.insert(*index);
                }
            }
            NodeEvent::Leader { role, .. } if *role != Role::Leader => self.submitted.clear(),
            NodeEvent::Submit { index: None, .. }
            | NodeEvent::Leader { .. }
            | NodeEvent::Apply { .. }
            | NodeEvent::Storage { .. }
            | NodeEvent::Service { .. }
            | NodeEvent::Exit { .. }
            | NodeEvent::Probe { .. }
            | NodeEvent::Note { .. } => {}
        }
    }
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
    pub open: BTreeSet<u64>,
    /// Nodes that asked to terminate, in order, not yet acted on.
    pub exits: Vec<(usize, String)>,
    /// (bucket start ms, from, to, kind) -> count.
    pub messages: BTreeMap<(u64, String, String, String), u32>,
    pub messages_total: u64,
    /// Simulated time as the driver last saw it (outside any host).
    pub now: Duration,
    /// Scenario line of the step being executed, for harness events.
    pub line: Option<u32>,
    pub events_max: usize,
    pub events_over: bool,
    /// The time of the last harness event: the driver's clock never goes back.
    pub last_harness_ms: u64,
    /// The run is over and its trail taken: nothing more may be recorded.
    pub ended: bool,
    /// A node published since the `always` invariants were last evaluated.
    pub published_since_check: bool,
    /// What clients saw: every client op as an invoke and a completion.
    pub history: super::recorder::Recorder,
    /// Invariants nodes reported broken ([`Env::violation`]), the first of
    /// each, in the order found: what the invariant checker fails them with.
    pub violations: Vec<Violation>,
}

impl RunState {
    /// The client gives up on an op (timeout, or its node went down).
    pub fn give_up(&mut self, id: u64, why: GiveUp) {
        let reason = why.reason();
        if !self.open.remove(&id) {
            return;
        }
        let Some(op) = self.ops.get_mut(&id) else {
            return;
        };
        op.timed_out = true;
        let end = OpEnd {
            op: id,
            summary: op.summary.clone(),
            admin: op.admin,
            end: OpEndKind::GaveUp(why),
        };
        let node = op.node.clone();
        self.harness_event(Some(&node), Data::OpEnd(end));
        let now = self.now;
        self.history.give_up(id, &reason, now);
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Append a harness event at the driver's current time, tagged with the line
    /// of the step being run.
    pub fn harness_event(&mut self, node: Option<&str>, data: Data) {
        let t_ms = self.now.as_millis() as u64;
        assert!(
            t_ms >= self.last_harness_ms,
            "harness events never go back in time ({t_ms} ms after {} ms)",
            self.last_harness_ms
        );
        self.last_harness_ms = t_ms;
        let event = Event::new(t_ms, node, self.line, data);
        self.push(event);
    }

    pub fn push(&mut self, event: Event) {
        tracing::debug!(
            // A stable log target (README), whatever module records the trail.
            target: "faultline::trail",
            t_ms = event.t_ms,
            node = event.node.as_deref().unwrap_or("-"),
            kind = %event.kind.name(),
            "{}",
            event.detail
        );
        assert!(!self.ended, "no trail event after the run's end");
        if self.trail.len() >= self.events_max {
            self.events_over = true;
            return;
        }
        self.trail.push(event);
        assert!(self.trail.len() <= self.events_max);
    }
}

pub struct RunEnv {
    pub run_id: String,
    pub state: Rc<RefCell<RunState>>,
    /// The nemesis arms these; nodes reaching a fail point ask them.
    pub faults: Rc<RefCell<FaultTable>>,
    /// What the run's nodes share ([`Env::shared`]), dropped with the run.
    pub shared: Shared,
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
        let mut state = self.state.borrow_mut();
        if let Some(i) = state.node_index(node) {
            state.nodes[i].track(&event);
        }
        state.push(Event::new(t_ms, Some(node), None, Data::Node(event)));
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
        let decision = self.faults.borrow_mut().decide(node, point, payload)?;
        self.state.borrow_mut().push(Event::new(
            t_ms,
            Some(node),
            None,
            Data::FailPointHit(decision.hit),
        ));
        decision.fault
    }

    fn publish(&self, node: &str, observation: Observation) {
        collect_keys(&observation);
        let mut state = self.state.borrow_mut();
        if let Some(i) = state.node_index(node) {
            let node = &mut state.nodes[i];
            if let Some(applied) = observation.applied {
                node.submitted.retain(|index| *index > applied);
            }
            node.observation = observation;
            node.published = true;
            state.published_since_check = true;
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
        let end = OpEnd {
            op: id,
            summary: op.summary.clone(),
            admin: op.admin,
            end: OpEndKind::Answered {
                result: result.clone(),
                late: op.timed_out,
            },
        };
        let admin = op.admin;
        op.result = Some(result.clone());
        op.completed_ms = Some(t_ms);
        state.push(Event::new(t_ms, Some(node), None, Data::OpEnd(end)));
        if !admin {
            state.history.answer(id, &result, now);
        }
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

    fn shared(&self) -> &Shared {
        &self.shared
    }

    fn violation(&self, node: &str, invariant: &str, message: &str) {
        let t_ms = self.now_ms();
        let mut state = self.state.borrow_mut();
        if state.violations.iter().any(|v| v.invariant == invariant) {
            return;
        }
        state.violations.push(Violation {
            invariant: invariant.to_string(),
            node: node.to_string(),
            t_ms,
            message: message.to_string(),
        });
    }
}
