//! The cluster under test, as turmoil's `Sim` is the world: the simulation, the
//! harness's view of every node (up, incarnation, last observation, inbox) and
//! the ops in flight. It steps the simulation, starts and kills hosts and sends
//! commands; it knows nothing of scenarios, faults or limits (the nemesis changes
//! the network and fail points, the driver decides when to step).
//!
//! The host setup is shared with the bench's bare loop ([`add_hosts`]), so both
//! start the same models from the same `NodeStart`s.

use super::env::{NodeState, OpRecord, RunEnv, RunState};
use super::halt::Halt;
use crate::base::action::ActionResult;
use crate::base::panic;
use crate::base::trail::{Data, GiveUp, Trail};
use crate::lang::scenario::{NodeId, Scenario, Settings};
use crate::sim::faults::FaultTable;
use faultline_api::{
    BugSet, ClusterView, Command, Env, NodeCtx, NodeStart, NodeView, OpResult, Role,
};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use turmoil::Sim;

/// A fixed epoch: the default is the wall clock, which would leak into every run.
const EPOCH_SECS: u64 = 1_700_000_000;
/// turmoil's TCP capacity, in segments: a listener's queue of connections not
/// yet accepted and each stream's flow-control window. turmoil panics ("server
/// socket buffer full") when a SYN finds the queue full, where a kernel drops
/// it, and a hold delivers every SYN it kept at once on release: with
/// turmoil's default of 64, a node that opens a connection per RPC (the
/// openraft adapter) crashed the run after a hold of about 3 s at a 20 ms
/// heartbeat (openraft-auto, seed 120). 4,096 holds every SYN of a 10 s hold
/// from four peers at a 10 ms interval; a stream's window of 4,096 segments
/// is no tighter than a real TCP window of some megabytes.
pub(crate) const TCP_CAPACITY: usize = 4_096;

/// The simulation a scenario runs on: one seed for turmoil's world (and, with
/// `tokio_unstable`, every host runtime), a fixed epoch, the scenario's tick and latency.
pub(crate) fn sim_builder(settings: &Settings, seed: u64) -> turmoil::Builder {
    let mut builder = turmoil::Builder::new();
    builder
        .rng_seed(seed)
        .epoch(UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
        .tick_duration(settings.tick)
        .min_message_latency(settings.latency_min)
        .max_message_latency(settings.latency_max)
        .tcp_capacity(TCP_CAPACITY)
        // We step the simulation ourselves and enforce our own duration limit.
        .simulation_duration(settings.limits.duration + Duration::from_secs(1));
    if settings.random_order {
        builder.enable_random_order();
    }
    builder
}

/// Register one host per scenario node on `sim`, in the scenario's order: it fixes
/// their addresses and the per-host seeds turmoil draws from its world rng. Each
/// start of a host asks `started` for that start's incarnation, handing it the new
/// process's inbox.
pub(crate) fn add_hosts(
    sim: &mut Sim<'static>,
    scenario: &Scenario,
    bugs: &BugSet,
    params: &serde_json::Value,
    seed: u64,
    env: Rc<dyn Env>,
    started: Rc<dyn Fn(usize, UnboundedSender<Command>) -> u32>,
) {
    for index in 0..scenario.nodes.len() {
        let (env, started) = (env.clone(), started.clone());
        let model = scenario.model;
        let nodes = scenario.nodes.clone();
        let (bugs, params) = (bugs.clone(), params.clone());
        sim.host(scenario.nodes[index].name.as_str(), move || {
            let (inbox, receiver) = unbounded_channel();
            let start = NodeStart {
                index,
                nodes: nodes.clone(),
                incarnation: started(index, inbox),
                seed,
                bugs: bugs.clone(),
                params: params.clone(),
            };
            model.start(NodeCtx::new(start, env.clone(), receiver))
        });
    }
}

pub(crate) struct Cluster {
    sim: Sim<'static>,
    state: Rc<RefCell<RunState>>,
    names: Vec<String>,
    roles: Vec<String>,
    next_op: u64,
    steps: u64,
    /// Nodes whose process ended itself, in the order they went down, until
    /// the chaos window takes them ([`Cluster::take_exited`]).
    exited: Vec<NodeId>,
}

impl Cluster {
    /// A fresh simulation with every node started once. Fail points decide from
    /// `faults`, which the nemesis arms.
    pub(crate) fn new(
        scenario: &Scenario,
        bugs: &BugSet,
        params: &serde_json::Value,
        seed: u64,
        run_id: String,
        faults: Rc<RefCell<FaultTable>>,
    ) -> Cluster {
        let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
        let state = Rc::new(RefCell::new(RunState {
            trail: Trail::default(),
            nodes: names.iter().map(|name| NodeState::new(name)).collect(),
            ops: BTreeMap::new(),
            open: Default::default(),
            exits: Vec::new(),
            messages: BTreeMap::new(),
            messages_total: 0,
            now: Duration::ZERO,
            line: None,
            events_max: scenario.settings.limits.events,
            events_over: false,
            last_harness_ms: 0,
            ended: false,
            published_since_check: false,
            history: super::recorder::Recorder::new(scenario.model.info()),
            violations: Vec::new(),
        }));
        let env = Rc::new(RunEnv {
            run_id,
            state: state.clone(),
            faults,
            shared: Default::default(),
        });
        let mut sim = sim_builder(&scenario.settings, seed).build();
        let nodes = state.clone();
        let started = Rc::new(move |index: usize, inbox: UnboundedSender<Command>| {
            let mut state = nodes.borrow_mut();
            let node = &mut state.nodes[index];
            node.inbox = Some(inbox);
            node.stopped = false;
            node.incarnation += 1;
            node.incarnation - 1
        });
        add_hosts(&mut sim, scenario, bugs, params, seed, env, started);
        Cluster {
            sim,
            state,
            names,
            roles: scenario.nodes.iter().map(|n| n.role.clone()).collect(),
            next_op: 1,
            steps: 0,
            exited: Vec::new(),
        }
    }

    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    pub(crate) fn name(&self, node: NodeId) -> &str {
        &self.names[node]
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The index of a node an action names. Actions come from the scenario's own
    /// (validated) steps and nemesis; an edited action is checked with
    /// [`crate::base::action::Action::nodes`] before it is performed.
    pub(crate) fn id(&self, name: &str) -> NodeId {
        self.names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("an action names `{name}`, which is not a node"))
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.sim.elapsed()
    }

    pub(crate) fn elapsed_ms(&self) -> u64 {
        self.sim.elapsed().as_millis() as u64
    }

    /// Simulation steps taken.
    pub(crate) fn steps(&self) -> u64 {
        self.steps
    }

    /// The run's shared state: trail, node states, ops.
    pub(crate) fn state(&self) -> std::cell::Ref<'_, RunState> {
        self.state.borrow()
    }

    pub(crate) fn state_mut(&self) -> std::cell::RefMut<'_, RunState> {
        self.state.borrow_mut()
    }

    /// One simulation step (a panic in a host ends the run, crashed), then stop
    /// the hosts of nodes that terminated themselves during it.
    pub(crate) fn step(&mut self) -> Result<(), Halt> {
        let sim = &mut self.sim;
        match panic::catch(|| sim.step()) {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(Halt::Crashed(format!("the simulation failed: {error}"))),
            Err(message) => return Err(Halt::Crashed(message)),
        }
        self.steps += 1;
        let now = self.sim.elapsed();
        self.state.borrow_mut().now = now;
        super::set_sim_now(Some(now));
        self.reap_exits();
        Ok(())
    }

    fn reap_exits(&mut self) {
        let exits = std::mem::take(&mut self.state.borrow_mut().exits);
        for (node, reason) in exits {
            if self.up(node) {
                self.kill(node);
                self.event(Some(node), Data::Exited { reason });
                self.exited.push(node);
            }
        }
    }

    /// The nodes that ended themselves since the last call, in order.
    pub(crate) fn take_exited(&mut self) -> Vec<NodeId> {
        std::mem::take(&mut self.exited)
    }

    /// Messages on every link, not yet delivered.
    pub(crate) fn in_flight(&self) -> usize {
        let mut count = 0;
        self.sim.links(|links| {
            for link in links {
                count += link.count();
            }
        });
        count
    }

    /// The turmoil simulation, for the nemesis's network calls.
    pub(crate) fn sim(&self) -> &Sim<'static> {
        &self.sim
    }

    // ---- nodes ----

    pub(crate) fn up(&self, node: NodeId) -> bool {
        self.state.borrow().nodes[node].up
    }

    /// The up node that leads with the highest term.
    pub(crate) fn leader(&self) -> Option<NodeId> {
        let state = self.state.borrow();
        state
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.up && n.observation.role.as_deref() == Some(Role::Leader.name()))
            .max_by_key(|(i, n)| (n.observation.term, std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
    }

    /// Whether the node said it stopped cleanly since its last start.
    pub(crate) fn stopped(&self, node: NodeId) -> bool {
        self.state.borrow().nodes[node].stopped
    }

    /// A node started at least `max` times, if one did.
    pub(crate) fn started_over(&self, max: u32) -> Option<NodeId> {
        self.state
            .borrow()
            .nodes
            .iter()
            .position(|n| n.incarnation >= max)
    }

    /// Stop a node's host (losing its unsynced writes) and fail its ops in flight.
    pub(crate) fn kill(&mut self, node: NodeId) {
        self.sim.crash(self.names[node].as_str());
        let mut state = self.state.borrow_mut();
        assert!(state.nodes[node].up, "only an up node is killed");
        state.nodes[node].up = false;
        state.nodes[node].inbox = None;
        state.exits.retain(|(n, _)| *n != node);
        // Ops in flight on a dead process never get an answer: the client gives up.
        let name = &self.names[node];
        let lost: Vec<u64> = state
            .open
            .iter()
            .copied()
            .filter(|id| state.ops[id].node == *name)
            .collect();
        for id in lost {
            state.give_up(id, GiveUp::NodeDown);
        }
    }

    /// Start a node's host from its durable state.
    pub(crate) fn boot(&mut self, node: NodeId) {
        assert!(!self.up(node), "only a down node is started");
        self.sim.bounce(self.names[node].as_str());
        let mut state = self.state.borrow_mut();
        state.nodes[node].up = true;
        // The previous life's observation says nothing about this one (it may
        // still claim to lead); the new incarnation publishes its own.
        state.nodes[node].observation = Default::default();
        state.nodes[node].published = false;
        state.nodes[node].submitted.clear();
    }

    /// Put a command in a node's inbox as a new op; `NotAccepting` when the
    /// process has no inbox open.
    pub(crate) fn send(
        &mut self,
        node: NodeId,
        summary: String,
        admin: bool,
        make: impl FnOnce(u64) -> Command,
    ) -> ActionResult {
        let id = self.next_op;
        self.next_op += 1;
        let t_ms = self.elapsed_ms();
        let mut state = self.state.borrow_mut();
        let record = OpRecord {
            id,
            node: self.names[node].clone(),
            summary,
            invoked_ms: t_ms,
            result: None,
            completed_ms: None,
            timed_out: false,
            admin,
        };
        assert!(
            state.ops.insert(id, record).is_none(),
            "op ids are never reused"
        );
        state.open.insert(id);
        let sent = state.nodes[node]
            .inbox
            .as_ref()
            .is_some_and(|inbox| inbox.send(make(id)).is_ok());
        if sent {
            ActionResult::Sent { op: id }
        } else {
            // Nobody will answer it: the client knows at once.
            state.open.remove(&id);
            if let Some(op) = state.ops.get_mut(&id) {
                op.result = Some(OpResult::error("node not accepting commands"));
                op.completed_ms = Some(t_ms);
            }
            ActionResult::NotAccepting
        }
    }

    /// Ask a node's process to stop cleanly; false when it has no inbox open.
    pub(crate) fn request_stop(&self, node: NodeId) -> bool {
        self.state.borrow().nodes[node]
            .inbox
            .as_ref()
            .is_some_and(|i| i.send(Command::Stop).is_ok())
    }

    /// An op's answer, once it came.
    pub(crate) fn op_result(&self, id: u64) -> Option<OpResult> {
        self.state.borrow().ops[&id].result.clone()
    }

    /// The client stops waiting for an op.
    pub(crate) fn give_up(&self, id: u64, why: GiveUp) {
        self.state.borrow_mut().give_up(id, why);
    }

    /// Ops unanswered for longer than `timeout` are given up on, so that an op
    /// sent without waiting can never keep the run from quiescence.
    pub(crate) fn expire_ops(&mut self, timeout: Duration) {
        let now_ms = self.elapsed_ms();
        let timeout_ms = timeout.as_millis() as u64;
        let mut state = self.state.borrow_mut();
        let expired: Vec<u64> = state
            .open
            .iter()
            .copied()
            .filter(|id| state.ops[id].invoked_ms + timeout_ms <= now_ms)
            .collect();
        for id in expired {
            state.give_up(id, GiveUp::OpTimeout);
        }
    }

    /// Append a harness event about `node` (or the run) at the current time.
    pub(crate) fn event(&self, node: Option<NodeId>, data: Data) {
        let name = node.map(|n| self.names[n].as_str());
        self.state.borrow_mut().harness_event(name, data);
    }

    /// Up nodes agree on their applied index, none has pending work, and no op is in flight.
    /// With `with_leader`, also: every up node names the same leader. A
    /// cluster still electing has not settled, even with nothing pending. And no
    /// node has a request it submitted itself (a service's, on the trail as a
    /// typed submit with its index) still unapplied, whatever it last published.
    pub(crate) fn quiescent(&self, with_leader: bool) -> bool {
        let state = self.state.borrow();
        let mut applied = None;
        let mut leader: Option<&str> = None;
        for node in state.nodes.iter().filter(|n| n.up) {
            if node.observation.pending > 0 || !node.published || node.submit_in_flight() {
                return false;
            }
            if let Some(a) = node.observation.applied {
                if *applied.get_or_insert(a) != a {
                    return false;
                }
            }
            if with_leader {
                let Some(named) = node.observation.leader.as_deref() else {
                    return false;
                };
                if *leader.get_or_insert(named) != named {
                    return false;
                }
            }
        }
        state.open.is_empty()
    }

    /// What every node last published, with whether it is up: what checkers read.
    pub(crate) fn view(&self) -> ClusterView {
        let state = self.state.borrow();
        ClusterView {
            now_ms: self.elapsed_ms(),
            nodes: state
                .nodes
                .iter()
                .zip(&self.roles)
                .map(|(n, role)| NodeView {
                    name: n.name.clone(),
                    role: role.clone(),
                    up: n.up,
                    observation: n.observation.clone(),
                })
                .collect(),
            violations: state.violations.clone(),
            // The nemesis knows the links; the driver's view adds them.
            link_faults: Vec::new(),
        }
    }

    /// The run is over: its trail, in time order, with every event within the
    /// run's simulated time; nothing may be recorded after this.
    pub(crate) fn end(&mut self) -> Trail {
        let end_ms = self.elapsed_ms();
        let mut state = self.state.borrow_mut();
        state.ended = true;
        let mut trail = std::mem::take(&mut state.trail);
        trail.finish();
        assert!(
            trail.len() <= state.events_max,
            "the trail stays within its event limit"
        );
        if let Some(last) = trail.events.last() {
            assert!(
                last.t_ms <= end_ms,
                "no trail event after the run's end ({} ms > {end_ms} ms)",
                last.t_ms
            );
        }
        trail
    }

    /// A simulation that panicked mid-step may not drop cleanly: leak it.
    pub(crate) fn leak(self) {
        std::mem::forget(self.sim);
    }
}
