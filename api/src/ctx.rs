//! The context a node runs in: identity, seeded randomness, the harness environment,
//! its inbox of commands, its disk and its fail-point scope.

use super::disk::Disk;
use super::event::NodeEvent;
use super::faults::FailScope;
use super::model::BugSet;
use super::observe::Observation;
use super::probe::{Probe, Probes};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cell::{RefCell, RefMut};
use std::convert::Infallible;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

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
    fn fail_point(&self, node: &str, point: &'static str, payload: &str) -> Option<super::Fault>;
    /// Replace this node's published observation.
    fn publish(&self, node: &str, observation: Observation);
    /// A command from the inbox finished.
    fn complete(&self, node: &str, id: u64, result: OpResult);
    /// The node process terminates itself (a fatal error path, an injected panic).
    /// The harness stops the host after the current step, losing unsynced writes.
    fn exit(&self, node: &str, reason: &str);
    /// A clean shutdown requested by [`Command::Stop`] has finished.
    fn stopped(&self, node: &str);
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

/// Everything one incarnation of one node gets. Built by the harness on every
/// start (the first start and every restart); dropped when the host crashes.
pub struct NodeCtx {
    name: String,
    index: usize,
    nodes: Vec<NodeSpec>,
    incarnation: u32,
    bugs: BugSet,
    params: serde_json::Value,
    rng: RefCell<ChaCha8Rng>,
    env: Rc<dyn Env>,
    inbox: RefCell<Option<UnboundedReceiver<Command>>>,
    disk: Disk,
    faults: FailScope,
    probes: Probes,
}

/// Everything the harness decides about one start of one node.
/// The random stream of one incarnation of node `index`: each restart draws
/// afresh, and the harness keeps its own streams clear of these.
pub const fn node_stream(index: usize, incarnation: u32) -> u64 {
    (index as u64) << 32 | incarnation as u64
}

pub struct NodeStart {
    pub index: usize,
    pub nodes: Vec<NodeSpec>,
    pub incarnation: u32,
    pub seed: u64,
    pub bugs: BugSet,
    pub params: serde_json::Value,
}

impl NodeCtx {
    pub fn new(start: NodeStart, env: Rc<dyn Env>, inbox: UnboundedReceiver<Command>) -> Self {
        assert!(start.index < start.nodes.len(), "node index out of range");
        let name = start.nodes[start.index].name.clone();
        // Each incarnation draws from its own stream, derived from the run's seed,
        // so a restart does not replay the random choices of the previous life.
        let stream = node_stream(start.index, start.incarnation);
        let mut rng = ChaCha8Rng::seed_from_u64(start.seed);
        rng.set_stream(stream);
        let faults = FailScope::new(env.clone(), &name);
        let probes = Probes::new(&name, env.clone());
        NodeCtx {
            disk: Disk::new("/data"),
            faults,
            probes,
            name,
            index: start.index,
            nodes: start.nodes,
            incarnation: start.incarnation,
            bugs: start.bugs,
            params: start.params,
            rng: RefCell::new(rng),
            env,
            inbox: RefCell::new(Some(inbox)),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn index(&self) -> usize {
        self.index
    }
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }
    pub fn role(&self) -> &str {
        &self.nodes[self.index].role
    }
    /// Names of the other nodes with the given role, in canonical order.
    pub fn peers_with_role(&self, role: &str) -> Vec<String> {
        let me = &self.name;
        self.nodes
            .iter()
            .filter(|n| n.role == role && &n.name != me)
            .map(|n| n.name.clone())
            .collect()
    }
    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }
    pub fn bugs(&self) -> &BugSet {
        &self.bugs
    }
    /// The model's parameters for this run, already validated by `Model::parse_params`.
    pub fn params(&self) -> &serde_json::Value {
        &self.params
    }
    pub fn rng(&self) -> RefMut<'_, ChaCha8Rng> {
        self.rng.borrow_mut()
    }
    pub fn disk(&self) -> &Disk {
        &self.disk
    }
    pub fn faults(&self) -> &FailScope {
        &self.faults
    }
    pub fn env(&self) -> &Rc<dyn Env> {
        &self.env
    }
    pub fn now(&self) -> Duration {
        self.env.now()
    }
    pub fn now_ms(&self) -> u64 {
        self.env.now().as_millis() as u64
    }

    /// A ChaCha8 generator for one subsystem of this node, derived from the node's
    /// seeded stream, so subsystems do not shift each other's draws.
    pub fn rng_seed_for(&self, subsystem: &str) -> ChaCha8Rng {
        use rand::RngCore;
        let mut base = self.rng().next_u64();
        for byte in subsystem.bytes() {
            base = base.rotate_left(5) ^ u64::from(byte);
        }
        ChaCha8Rng::seed_from_u64(base)
    }

    /// How long from now until a simulated time (ms since the start of the run),
    /// for `tokio::time::sleep`; zero if it has passed.
    pub fn until(&self, at_ms: u64) -> Duration {
        Duration::from_millis(at_ms.saturating_sub(self.now_ms()))
    }

    /// Take the command inbox (once per incarnation; the node's main loop owns it).
    pub fn take_inbox(&self) -> UnboundedReceiver<Command> {
        self.inbox.borrow_mut().take().expect("inbox taken twice")
    }

    pub fn record(&self, event: NodeEvent) {
        self.env.record(&self.name, event);
    }
    /// A free-text note on the trail.
    pub fn note(&self, text: impl Into<String>) {
        self.record(NodeEvent::note(text));
    }
    /// A declared probe's condition holds here: a typed probe event on the trail,
    /// the first time in this incarnation only.
    pub fn probe(&self, probe: impl Probe) {
        self.probes.hit(probe);
    }
    /// A handle for tasks and protocol shells that report probes without the
    /// context; it shares this incarnation's record of what was reported.
    pub fn probes(&self) -> Probes {
        self.probes.clone()
    }
    pub fn publish(&self, observation: Observation) {
        self.env.publish(&self.name, observation);
    }
    pub fn complete(&self, id: u64, result: OpResult) {
        self.env.complete(&self.name, id, result);
    }
    pub fn stopped(&self) {
        self.env.stopped(&self.name);
    }

    /// Terminate this process (ExitUtils.terminate, an injected panic). Records the
    /// reason, asks the harness to stop the host, and never returns: the caller's
    /// task parks until the host is gone.
    pub async fn exit(&self, reason: &str) -> Infallible {
        self.env.record(
            &self.name,
            NodeEvent::Exit {
                reason: reason.to_string(),
            },
        );
        self.env.exit(&self.name, reason);
        std::future::pending::<Infallible>().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fault;

    /// An environment that keeps what nodes record.
    #[derive(Default)]
    struct Recorder {
        events: RefCell<Vec<(String, NodeEvent)>>,
    }

    impl Env for Recorder {
        fn run_id(&self) -> &str {
            "ctx-test"
        }
        fn now(&self) -> Duration {
            Duration::ZERO
        }
        fn record(&self, node: &str, event: NodeEvent) {
            self.events.borrow_mut().push((node.to_string(), event));
        }
        fn message(&self, _: &str, _: &str, _: &str) {}
        fn fail_point(&self, _: &str, _: &'static str, _: &str) -> Option<Fault> {
            None
        }
        fn publish(&self, _: &str, _: Observation) {}
        fn complete(&self, _: &str, _: u64, _: OpResult) {}
        fn exit(&self, _: &str, _: &str) {}
        fn stopped(&self, _: &str) {}
    }

    crate::probes! {
        enum CtxProbe {
            Window {
                name: "purge_window",
                rare: true,
                summary: "a purge applied between two flushes",
            },
            Other {
                name: "other_window",
                rare: false,
                summary: "another condition",
            },
        }
    }

    fn start(incarnation: u32) -> NodeStart {
        NodeStart {
            index: 0,
            nodes: vec![NodeSpec {
                name: "om1".into(),
                role: "om".into(),
            }],
            incarnation,
            seed: 1,
            bugs: BugSet::default(),
            params: serde_json::Value::Null,
        }
    }

    fn probe_names(env: &Recorder) -> Vec<String> {
        env.events
            .borrow()
            .iter()
            .map(|(_, event)| match event {
                NodeEvent::Probe { probe, .. } => probe.clone(),
                other @ (NodeEvent::Leader { .. }
                | NodeEvent::Apply { .. }
                | NodeEvent::Storage { .. }
                | NodeEvent::Service { .. }
                | NodeEvent::Submit { .. }
                | NodeEvent::Exit { .. }
                | NodeEvent::Note { .. }) => panic!("not a probe event: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_reported_probe_is_a_typed_event_on_the_trail() {
        let env = Rc::new(Recorder::default());
        let (_inbox, receiver) = tokio::sync::mpsc::unbounded_channel();
        let ctx = NodeCtx::new(start(0), env.clone(), receiver);
        ctx.probe(CtxProbe::Window);
        let events = env.events.borrow();
        assert_eq!(events.len(), 1);
        let (node, event) = &events[0];
        assert_eq!(node, "om1");
        let NodeEvent::Probe { probe, text } = event else {
            panic!("not a probe event: {event:?}");
        };
        assert_eq!(probe, "purge_window");
        assert_eq!(
            text,
            "probe purge_window: a purge applied between two flushes"
        );
    }

    /// A probe on a per-heartbeat path reports once per incarnation, through the
    /// context and through every handle taken from it; a restart reports again.
    #[test]
    fn a_probe_is_on_the_trail_once_per_incarnation() {
        let env = Rc::new(Recorder::default());
        let (_inbox, receiver) = tokio::sync::mpsc::unbounded_channel();
        let ctx = NodeCtx::new(start(0), env.clone(), receiver);
        let handle = ctx.probes();
        for _ in 0..3 {
            ctx.probe(CtxProbe::Window);
            handle.hit(CtxProbe::Window);
        }
        handle.hit(CtxProbe::Other);
        ctx.probe(CtxProbe::Other);
        assert_eq!(probe_names(&env), ["purge_window", "other_window"]);
        drop(ctx);
        let (_inbox, receiver) = tokio::sync::mpsc::unbounded_channel();
        let restarted = NodeCtx::new(start(1), env.clone(), receiver);
        restarted.probe(CtxProbe::Window);
        restarted.probe(CtxProbe::Window);
        handle.hit(CtxProbe::Window);
        assert_eq!(
            probe_names(&env),
            ["purge_window", "other_window", "purge_window"],
            "the new incarnation reports afresh; the old one's handle stays deduplicated"
        );
    }
}
