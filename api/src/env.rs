//! What the harness hands a node, and what it implements for the nodes: the
//! run's environment ([`Env`]), the node list, the commands of the inbox and
//! their results, what the harness decides about one start of one node, the
//! faults a fail point can be made to raise, and the state the nodes of a run
//! share. A leaf under the node's context: nothing here knows [`NodeCtx`](crate::NodeCtx).

use crate::bugs::BugSet;
use crate::event::NodeEvent;
use crate::observe::Observation;
use serde::{Deserialize, Serialize};
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::watch;

/// What the harness provides to every node of one run. One instance per run, so two
/// runs in one process never share trail, fail-point decisions or observations.
pub trait Env {
    /// Unique in the process; the prefix of every fail-point name of this run.
    fn run_id(&self) -> &str;
    /// Simulated time since the start of the run.
    fn now(&self) -> Duration;
    /// Append an event to the run's trail.
    fn record(&self, node: &str, event: NodeEvent);
    /// Count one message sent between nodes (for the space-time diagram; not in the trail).
    fn message(&self, from: &str, to: &str, kind: &str);
    /// An armed fail point was reached with `payload` (the harness's arm id). The
    /// harness decides, from the run's seed, whether it fires, records the hit, and
    /// says what to do.
    fn fail_point(&self, node: &str, point: &'static str, payload: &str) -> Option<Fault>;
    /// Replace this node's published observation.
    fn publish(&self, node: &str, observation: Observation);
    /// A command from the inbox finished.
    fn complete(&self, node: &str, id: u64, result: OpResult);
    /// The node process terminates itself (a fatal error path, an injected panic).
    /// The harness stops the host after the current step, losing unsynced writes.
    fn exit(&self, node: &str, reason: &str);
    /// A clean shutdown requested by [`Command::Stop`] has finished.
    fn stopped(&self, node: &str);
    /// What the nodes of this run share (dropped with the run).
    fn shared(&self) -> &Shared;
    /// `node` found a declared invariant of its model broken (ground truth the
    /// nodes of a run keep together, such as an oracle of what every node holds
    /// durably). The harness keeps the first violation of each invariant and
    /// fails the invariant with it; it is not a trail event.
    fn violation(&self, node: &str, invariant: &str, message: &str);
}

/// One node of the scenario, in the canonical (registration) order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub role: String,
}

/// A command from the harness to one node.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// A client operation (the model's typed op, as validated JSON).
    Op { id: u64, op: serde_json::Value },
    /// Move leadership to `to` (models that declare `leader_transfer`).
    TransferLeader { id: u64, to: String },
    /// Shut down cleanly, then call [`Env::stopped`].
    Stop,
}

/// The result of a client operation or admin command, as the client sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpResult {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl OpResult {
    pub fn ok() -> Self {
        OpResult {
            ok: true,
            value: None,
            error: None,
        }
    }
    pub fn value(value: impl Into<String>) -> Self {
        OpResult {
            ok: true,
            value: Some(value.into()),
            error: None,
        }
    }
    pub fn error(error: impl Into<String>) -> Self {
        OpResult {
            ok: false,
            value: None,
            error: Some(error.into()),
        }
    }
}

impl std::fmt::Display for OpResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.ok, &self.value, &self.error) {
            (true, Some(v), _) => write!(f, "ok {v}"),
            (true, None, _) => write!(f, "ok"),
            (false, _, Some(e)) => write!(f, "error {e}"),
            (false, _, None) => write!(f, "error"),
        }
    }
}

/// What an armed fail point does when it fires.
#[derive(Debug)]
pub enum Fault {
    /// Fail the operation with an error of this kind.
    Error(String),
    /// The process dies here.
    Panic(String),
    /// Hold this task for a simulated duration.
    Stall(Duration),
    /// Hold this task until the scenario's `release` step (or the heal phase).
    StallUntilRelease(watch::Receiver<bool>),
}

/// The random stream of one incarnation of node `index`: each restart draws
/// afresh, and the harness keeps its own streams clear of these.
pub const fn node_stream(index: usize, incarnation: u32) -> u64 {
    (index as u64) << 32 | incarnation as u64
}

/// Everything the harness decides about one start of one node.
pub struct NodeStart {
    pub index: usize,
    pub nodes: Vec<NodeSpec>,
    pub incarnation: u32,
    pub seed: u64,
    pub bugs: BugSet,
    pub params: serde_json::Value,
}

/// State the nodes of one run share, one value per type: ground truth that no
/// single node holds (an oracle of what every node has durably). The harness
/// keeps one per run, so two runs in one process never share it, and drops it
/// with the run. A node reaches it with [`NodeCtx::shared`](crate::NodeCtx::shared).
/// A shared value holds data, never a context or a handle: those hold the run's
/// environment, which holds this, and the cycle would outlive the run.
#[derive(Default)]
pub struct Shared {
    values: RefCell<BTreeMap<TypeId, Rc<dyn Any>>>,
}

impl Shared {
    /// The run's value of type `T`, created (`T::default()`) by the first node
    /// that asks.
    pub fn get<T: Default + 'static>(&self) -> Rc<T> {
        let value = self
            .values
            .borrow_mut()
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Rc::new(T::default()))
            .clone();
        value
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("a shared value is keyed by its own type"))
    }
}
