//! The context a node runs in: identity, seeded randomness, its inbox of
//! commands, its disk, its fail-point scope, and the narrow ways it reports to
//! the harness (the trail, observations, messages, answers, violations, the
//! state the run's nodes share). The node sees no [`Env`]: the harness hands it
//! in, and only the context and its handles use it.

use crate::bugs::BugSet;
use crate::disk::Disk;
use crate::env::{node_stream, Command, Env, NodeSpec, NodeStart, OpResult};
use crate::event::NodeEvent;
use crate::faults::FailScope;
use crate::observe::Observation;
use crate::probe::{Probe, Probes};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::{RefCell, RefMut};
use std::convert::Infallible;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

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
    pub fn now(&self) -> Duration {
        self.env.now()
    }
    pub fn now_ms(&self) -> u64 {
        self.env.now().as_millis() as u64
    }

    /// The run's value of type `T`, shared by every node of the run and every
    /// incarnation of each: created (`T::default()`) by the first node that
    /// asks, dropped with the run. For ground truth no single node holds (an
    /// oracle of what every node has durably); never for steering a node.
    pub fn shared<T: Default + 'static>(&self) -> Rc<T> {
        self.env.shared().get::<T>()
    }

    /// This node found `invariant` (one its model declares) broken: the harness
    /// fails the invariant with `message` (the first one reported for it). Not
    /// on the trail; a model that wants it there notes it too.
    pub fn violation(&self, invariant: &str, message: &str) {
        self.env.violation(&self.name, invariant, message);
    }

    /// Count one message sent to `to` (for the space-time diagram; not in the trail).
    pub fn message(&self, to: &str, kind: &str) {
        self.env.message(&self.name, to, kind);
    }

    /// A handle for tasks and protocol shells that report without the context:
    /// the time, trail events and messages, as this node.
    pub fn handle(&self) -> NodeHandle {
        NodeHandle {
            node: self.name.as_str().into(),
            env: self.env.clone(),
        }
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

/// What a node's tasks and protocol shells report through, without the context
/// (which one task owns): the time, trail events and messages sent, as the node
/// it was taken from. Cheap to clone.
#[derive(Clone)]
pub struct NodeHandle {
    node: Rc<str>,
    env: Rc<dyn Env>,
}

impl NodeHandle {
    pub fn name(&self) -> &str {
        &self.node
    }
    pub fn now(&self) -> Duration {
        self.env.now()
    }
    pub fn now_ms(&self) -> u64 {
        self.env.now().as_millis() as u64
    }
    /// Append an event to the run's trail, as this node.
    pub fn record(&self, event: NodeEvent) {
        self.env.record(&self.node, event);
    }
    /// Count one message sent to `to` (for the space-time diagram; not in the trail).
    pub fn message(&self, to: &str, kind: &str) {
        self.env.message(&self.node, to, kind);
    }
    /// This node found `invariant` broken, as [`NodeCtx::violation`].
    pub fn violation(&self, invariant: &str, message: &str) {
        self.env.violation(&self.node, invariant, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testenv::TestEnv;

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

    fn probe_names(env: &TestEnv) -> Vec<String> {
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
        let env = TestEnv::new("ctx-1");
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
        let env = TestEnv::new("ctx-2");
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

    fn ctx_of(env: &Rc<TestEnv>, index: usize, incarnation: u32) -> NodeCtx {
        let (_inbox, receiver) = tokio::sync::mpsc::unbounded_channel();
        let nodes = ["n1", "n2"].map(|name| NodeSpec {
            name: name.into(),
            role: "voter".into(),
        });
        let start = NodeStart {
            index,
            nodes: nodes.to_vec(),
            incarnation,
            seed: 1,
            bugs: BugSet::default(),
            params: serde_json::Value::Null,
        };
        NodeCtx::new(start, env.clone(), receiver)
    }

    /// Every node of a run, and every incarnation of each, gets the one value
    /// of a type; another run (another environment) gets its own.
    #[test]
    fn shared_state_is_one_value_per_type_per_run() {
        let run = TestEnv::new("ctx-3");
        let n1 = ctx_of(&run, 0, 0);
        let n2 = ctx_of(&run, 1, 0);
        n1.shared::<RefCell<Vec<u64>>>().borrow_mut().push(7);
        assert_eq!(*n2.shared::<RefCell<Vec<u64>>>().borrow(), [7]);
        assert_eq!(
            *n2.shared::<RefCell<u64>>().borrow(),
            0,
            "another type, another value"
        );
        drop(n1);
        let restarted = ctx_of(&run, 0, 1);
        assert_eq!(*restarted.shared::<RefCell<Vec<u64>>>().borrow(), [7]);
        let other_run = TestEnv::new("ctx-4");
        let elsewhere = ctx_of(&other_run, 0, 0);
        assert!(elsewhere.shared::<RefCell<Vec<u64>>>().borrow().is_empty());
    }

    /// A violation reaches the environment typed, as the node that found it,
    /// and not as a trail event; messages go out as the node, from the context
    /// and from a handle.
    #[test]
    fn violations_and_messages_reach_the_environment_as_the_node() {
        let env = TestEnv::new("ctx-5");
        let ctx = ctx_of(&env, 1, 0);
        ctx.violation("leader_completeness", "n2 became leader without 1-3");
        assert_eq!(
            *env.violations.borrow(),
            [(
                "n2".to_string(),
                "leader_completeness".to_string(),
                "n2 became leader without 1-3".to_string()
            )]
        );
        assert!(
            env.events.borrow().is_empty(),
            "a violation is not a trail event"
        );
        ctx.message("n1", "vote");
        let handle = ctx.handle();
        drop(ctx);
        handle.message("n1", "append");
        handle.record(NodeEvent::note("from a task"));
        let sent: Vec<String> = env
            .messages
            .borrow()
            .iter()
            .map(|(from, to, kind)| format!("{from}->{to} {kind}"))
            .collect();
        assert_eq!(sent, ["n2->n1 vote", "n2->n1 append"]);
        assert_eq!(env.events.borrow()[0].0, "n2");
    }
}
