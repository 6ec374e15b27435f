//! One run: a scenario variant and a seed on a fresh turmoil simulation.
//!
//! The scenario's steps run outside the simulation, between its steps (only `Sim`
//! can crash and bounce hosts). After the scripted steps, the heal phase repairs
//! the network, clears fail points and restarts down nodes, waits for the replicas
//! to settle, and the checkers judge.

mod actions;
mod chaos;
pub mod env;
mod interpret;
pub mod net;
mod pick;
mod result;
pub mod swarm;

pub use result::{replay_command, FinalNode, MessageCount, RunResult, REPORT_SCHEMA_VERSION};

use crate::check::{self, divergence, expect, history, invariants, Finding};
use crate::faults::FaultTable;
use crate::outcome::Outcome;
use crate::panic;
use crate::scenario::{Condition, Heal, Scenario, Since, Variant};
use crate::trail::{Data, GiveUp, HealStep, Trail};
use crate::yaml::Loc;
use env::{NodeState, RunEnv, RunState};
use net::NetState;
use nodes::api::{ClusterView, NodeCtx, NodeStart, NodeView};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};
use tokio::sync::mpsc::unbounded_channel;
use turmoil::Sim;

/// A fixed epoch: the default is the wall clock, which would leak into every run.
const EPOCH_SECS: u64 = 1_700_000_000;
/// How often (in simulation steps) the in-flight message count is checked.
const IN_FLIGHT_CHECK_STEPS: u64 = 256;

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The simulated time of the run on this thread, for log lines written outside
    /// any host (inside a host, `turmoil::sim_elapsed` knows).
    static SIM_NOW: std::cell::Cell<Option<Duration>> = const { std::cell::Cell::new(None) };
}

/// Simulated time for log lines: the current host's clock, else the run's.
pub fn sim_time() -> Option<Duration> {
    turmoil::sim_elapsed().or_else(|| SIM_NOW.with(|t| t.get()))
}

/// Why the scripted steps stopped early.
#[derive(Clone, Debug, PartialEq)]
pub enum Halt {
    /// An await missed its deadline: the rest of the script is meaningless.
    Await(String),
    /// A limit was hit: the run ends here.
    Limit(String),
    /// A panic in the simulation: the run ends here.
    Crashed(String),
}

/// Run one variant of a scenario with one seed.
pub fn run(scenario: &Scenario, variant: &Variant, seed: u64) -> RunResult {
    let wall = std::time::Instant::now(); // wall-clock ok: reported, never in the trail
    let span = tracing::info_span!("run", scenario = %scenario.name, variant = %variant.name, seed);
    let _entered = span.enter();
    SIM_NOW.with(|t| t.set(Some(Duration::ZERO)));
    panic::reset();
    tracing::info!("start");
    let plan = swarm::plan(scenario, variant, seed);
    let mut driver = Driver::new(scenario, variant, seed, &plan);
    let halt = driver.script();
    let halt = match halt {
        Ok(()) | Err(Halt::Await(_)) => match &scenario.settings.heal {
            Some(heal) => driver.heal(heal).err().or(halt.err()),
            None => halt.err(),
        },
        Err(other) => Some(other),
    };
    driver.finish(halt, wall.elapsed())
}

pub(crate) struct Driver<'s> {
    sim: Sim<'static>,
    scenario: &'s Scenario,
    variant: &'s Variant,
    seed: u64,
    state: Rc<RefCell<RunState>>,
    names: Vec<String>,
    net: NetState,
    findings: Vec<Finding>,
    next_op: u64,
    sim_steps: u64,
    /// Scenario steps executed (each counts against the step limit too, so that
    /// steps that take no simulated time cannot loop past every limit).
    script_steps: u64,
    /// What the run is doing, for a limit's message ("waiting for a leader").
    activity: String,
    /// The chaos section as this seed configured it (swarm), if there is one.
    chaos: Option<crate::scenario::Chaos>,
    /// What the seed drew for it.
    pub(crate) swarm: Option<swarm::SwarmDraw>,
    /// `always` invariants that already failed during the run.
    always_failed: std::collections::BTreeSet<&'static str>,
    /// The params the nodes started with (drawn ones included).
    pub(crate) params: serde_json::Value,
    /// Where in the scenario the current step (or the chaos window) is.
    at: Loc,
    /// `follower`/`any` picks of actions, from their own stream of the seed.
    picks: ChaCha8Rng,
    /// `{A..B}` draws of scripted client ops, from their own stream.
    placeholders: ChaCha8Rng,
    /// `{seq}`: op templates expanded so far in this run (scripted and workload).
    seq: u64,
}

impl<'s> Driver<'s> {
    fn new(scenario: &'s Scenario, variant: &'s Variant, seed: u64, plan: &swarm::Plan) -> Self {
        let run_id = format!(
            "{}-{}-{seed}-{}",
            scenario.name,
            variant.name,
            RUN_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
        let state = Rc::new(RefCell::new(RunState {
            trail: Trail::default(),
            nodes: names.iter().map(|name| NodeState::new(name)).collect(),
            ops: BTreeMap::new(),
            open: Default::default(),
            exits: Vec::new(),
            faults: FaultTable::new(&run_id, seed),
            messages: BTreeMap::new(),
            messages_total: 0,
            now: Duration::ZERO,
            line: None,
            events_max: scenario.settings.limits.events,
            events_over: false,
            published_since_check: false,
        }));
        let env = Rc::new(RunEnv {
            run_id,
            state: state.clone(),
        });
        let sim = build_sim(scenario, variant, &plan.params, seed, &state, env);
        Driver {
            sim,
            scenario,
            variant,
            seed,
            state,
            names,
            net: NetState::default(),
            findings: Vec::new(),
            next_op: 1,
            sim_steps: 0,
            script_steps: 0,
            activity: "starting".into(),
            chaos: plan.chaos.clone(),
            swarm: plan.draw.clone(),
            always_failed: Default::default(),
            params: plan.params.clone(),
            at: Loc::default(),
            picks: crate::streams::rng(seed, crate::streams::PICKS),
            placeholders: crate::streams::rng(seed, crate::streams::PLACEHOLDERS),
            seq: 0,
        }
    }

    /// The scripted steps, in order, then the chaos window if there is one.
    fn script(&mut self) -> Result<(), Halt> {
        for step in &self.scenario.steps {
            self.exec(step)?;
        }
        if let Some(chaos) = self.chaos.take() {
            self.chaos(&chaos)?;
        }
        Ok(())
    }

    // ---- time ----

    /// The duration, step and event limits: checked before every simulation step
    /// and before every scenario step (which may take no simulated time at all).
    pub(crate) fn check_limits(&mut self) -> Result<(), Halt> {
        let limits = &self.scenario.settings.limits;
        if self.sim.elapsed() >= limits.duration {
            return Err(self.limit(format!(
                "simulated duration limit of {} reached",
                crate::duration::format(limits.duration)
            )));
        }
        if self.sim_steps.saturating_add(self.script_steps) >= limits.steps {
            return Err(self.limit(format!(
                "step limit of {} steps (simulation steps and scenario steps) reached",
                limits.steps
            )));
        }
        if self.state.borrow().events_over {
            return Err(self.limit(format!("trail limit of {} events reached", limits.events)));
        }
        Ok(())
    }

    /// One simulation step, with every limit checked.
    pub(crate) fn advance(&mut self) -> Result<(), Halt> {
        self.check_limits()?;
        let limits = &self.scenario.settings.limits;
        let sim = &mut self.sim;
        match panic::catch(|| sim.step()) {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(Halt::Crashed(format!("the simulation failed: {error}"))),
            Err(message) => return Err(Halt::Crashed(message)),
        }
        self.sim_steps += 1;
        self.state.borrow_mut().now = self.sim.elapsed();
        SIM_NOW.with(|t| t.set(Some(self.sim.elapsed())));
        self.reap_exits();
        self.check_always();
        if self.state.borrow().events_over {
            return Err(self.limit(format!("trail limit of {} events reached", limits.events)));
        }
        if self.sim_steps.is_multiple_of(IN_FLIGHT_CHECK_STEPS) {
            self.expire_ops();
            let in_flight = self.in_flight();
            if in_flight > limits.messages_in_flight {
                return Err(self.limit(format!(
                    "{in_flight} messages in flight, over the limit of {}",
                    limits.messages_in_flight
                )));
            }
        }
        Ok(())
    }

    /// Evaluate the model's `always` invariants when a node published something
    /// new; each one that fails is reported once, with the time it first failed.
    fn check_always(&mut self) {
        if !std::mem::take(&mut self.state.borrow_mut().published_since_check) {
            return;
        }
        let info = self.scenario.model.info();
        let pending: Vec<&'static str> = info
            .invariants
            .iter()
            .filter(|i| i.kind == nodes::api::InvariantKind::Always)
            .map(|i| i.name)
            .filter(|name| !self.always_failed.contains(name))
            .collect();
        if pending.is_empty() {
            return;
        }
        let view = self.view();
        for name in pending {
            let found = invariants::check_one(self.scenario.model, name, &view);
            if found.is_empty() {
                continue;
            }
            self.always_failed.insert(name);
            let t_ms = view.now_ms;
            for mut finding in found {
                finding.message = format!("at {t_ms} ms: {}", finding.message);
                let checked = crate::trail::Checked {
                    what: format!("always invariant {name}"),
                    failed: Some(finding.message.clone()),
                };
                self.event(None, Data::Check(checked));
                self.findings.push(finding);
            }
        }
    }

    fn limit(&mut self, message: String) -> Halt {
        let message = format!("{message} while {}", self.activity);
        let limit = Data::Limit {
            message: message.clone(),
        };
        self.event(None, limit);
        Halt::Limit(message)
    }

    fn in_flight(&self) -> usize {
        let mut count = 0;
        self.sim.links(|links| {
            for link in links {
                count += link.count();
            }
        });
        count
    }

    /// Stop the hosts of nodes that terminated themselves during the last step.
    fn reap_exits(&mut self) {
        let exits = std::mem::take(&mut self.state.borrow_mut().exits);
        for (node, reason) in exits {
            if self.state.borrow().nodes[node].up {
                self.kill(node);
                self.event(Some(node), Data::Exited { reason });
            }
        }
    }

    /// Run for a simulated duration.
    pub(crate) fn run_for(&mut self, duration: Duration) -> Result<(), Halt> {
        let until = self.sim.elapsed() + duration;
        while self.sim.elapsed() < until {
            self.advance()?;
        }
        Ok(())
    }

    /// Step until `condition` holds, or `within` passes. Ok(false) on timeout.
    pub(crate) fn run_until(
        &mut self,
        condition: &Condition,
        within: Duration,
    ) -> Result<bool, Halt> {
        let deadline = self.sim.elapsed() + within;
        let waiting = format!("waiting for {}", self.describe_condition(condition));
        let before = std::mem::replace(&mut self.activity, waiting);
        let reached = self.run_until_inner(condition, deadline);
        self.activity = before;
        reached
    }

    fn run_until_inner(&mut self, condition: &Condition, deadline: Duration) -> Result<bool, Halt> {
        // An event await reads only the events appended since it last looked.
        let mut next_event = match condition {
            Condition::Event {
                since: Since::Step, ..
            } => self.state.borrow().trail.len(),
            _ => 0,
        };
        loop {
            let holds = match condition {
                Condition::Event { event, .. } => {
                    let state = self.state.borrow();
                    let events = &state.trail.events[next_event..];
                    next_event = state.trail.len();
                    events.iter().any(|e| expect::matches(event, e))
                }
                _ => self.holds(condition),
            };
            if holds {
                return Ok(true);
            }
            if self.sim.elapsed() >= deadline {
                return Ok(false);
            }
            self.advance()?;
        }
    }

    /// Step until `condition` has held for `settle` without a break, or `within` passes.
    pub(crate) fn run_until_stable(
        &mut self,
        condition: &Condition,
        within: Duration,
        settle: Duration,
    ) -> Result<bool, Halt> {
        let deadline = self.sim.elapsed() + within;
        let mut since: Option<Duration> = None;
        loop {
            let now = self.sim.elapsed();
            if self.holds(condition) {
                let start = *since.get_or_insert(now);
                if now - start >= settle {
                    return Ok(true);
                }
            } else {
                since = None;
            }
            if now >= deadline {
                return Ok(false);
            }
            self.advance()?;
        }
    }

    // ---- the cluster as the harness sees it ----

    pub(crate) fn up(&self, node: usize) -> bool {
        self.state.borrow().nodes[node].up
    }

    /// The up node that leads with the highest term.
    pub(crate) fn leader(&self) -> Option<usize> {
        let state = self.state.borrow();
        state
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.up && n.observation.role.as_deref() == Some("leader"))
            .max_by_key(|(i, n)| (n.observation.term, std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
    }

    pub(crate) fn holds(&self, condition: &Condition) -> bool {
        match condition {
            Condition::Leader(None) => self.leader().is_some(),
            Condition::Leader(Some(node)) => self.leader() == Some(*node),
            Condition::Applied { index, nodes } => {
                let applied = |i: usize| {
                    let state = self.state.borrow();
                    state.nodes[i].up && state.nodes[i].observation.applied.unwrap_or(0) >= *index
                };
                if nodes.is_empty() {
                    (0..self.names.len()).all(|i| !self.up(i) || applied(i))
                } else {
                    nodes
                        .iter()
                        .all(|&t| self.denoted(t).into_iter().any(applied))
                }
            }
            Condition::Up(target) => self.denoted(*target).into_iter().any(|n| self.up(n)),
            Condition::Down(target) => self.denoted(*target).into_iter().any(|n| !self.up(n)),
            Condition::OpsDone => self.state.borrow().open.is_empty(),
            Condition::Quiescent => self.quiescent(),
            Condition::Observed(m) => {
                let state = self.state.borrow();
                self.denoted(m.node).into_iter().any(|n| {
                    crate::check::observed::passes(&m.tests, &state.nodes[n].observation, &m.key)
                })
            }
            // Outside an await (which reads only new events), any event of the run.
            Condition::Event { event, .. } => self
                .state
                .borrow()
                .trail
                .iter()
                .any(|e| expect::matches(event, e)),
        }
    }

    /// Up nodes agree on their applied index, none has pending work, and no op is in flight.
    /// For models with leaders, also: every up node names the same leader. A
    /// cluster still electing has not settled, even with nothing pending. And no
    /// node has a request it submitted itself (a service's, on the trail as a
    /// typed submit with its index) still unapplied, whatever it last published.
    fn quiescent(&self) -> bool {
        let state = self.state.borrow();
        let with_leader = self.scenario.model.info().has_leader;
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

    pub(crate) fn view(&self) -> ClusterView {
        let state = self.state.borrow();
        ClusterView {
            now_ms: self.sim.elapsed().as_millis() as u64,
            nodes: state
                .nodes
                .iter()
                .zip(&self.scenario.nodes)
                .map(|(n, spec)| NodeView {
                    name: n.name.clone(),
                    role: spec.role.clone(),
                    up: n.up,
                    observation: n.observation.clone(),
                })
                .collect(),
        }
    }

    // ---- acting on nodes ----

    pub(crate) fn event(&mut self, node: Option<usize>, data: Data) {
        let name = node.map(|n| self.names[n].clone());
        self.state.borrow_mut().harness_event(name.as_deref(), data);
    }

    /// Stop a node's host (losing its unsynced writes) and fail its ops in flight.
    pub(crate) fn kill(&mut self, node: usize) {
        self.sim.crash(self.names[node].as_str());
        let mut state = self.state.borrow_mut();
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

    /// Ops unanswered for longer than the op timeout are given up on, so that an op
    /// sent without waiting can never keep the run from quiescence.
    fn expire_ops(&mut self) {
        let now_ms = self.sim.elapsed().as_millis() as u64;
        let timeout_ms = self.scenario.settings.op_timeout.as_millis() as u64;
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

    /// Start a node's host from its durable state.
    pub(crate) fn boot(&mut self, node: usize) {
        self.sim.bounce(self.names[node].as_str());
        let mut state = self.state.borrow_mut();
        state.nodes[node].up = true;
        // The previous life's observation says nothing about this one (it may
        // still claim to lead); the new incarnation publishes its own.
        state.nodes[node].observation = Default::default();
        state.nodes[node].published = false;
        state.nodes[node].submitted.clear();
    }

    pub(crate) fn finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    // ---- heal and judge ----

    fn heal(&mut self, heal: &Heal) -> Result<(), Halt> {
        self.state.borrow_mut().line = None;
        self.activity = "waiting for the replicas to settle in the heal phase".into();
        let names = self.names.clone();
        let cuts = self.net.repair_all(&self.sim, &names);
        let holds = self.net.release_all(&self.sim, &names);
        let settings = &self.scenario.settings;
        let latencies = self.net.reset_latencies(
            &self.sim,
            &names,
            settings.latency_min,
            settings.latency_max,
        );
        let cleared = self.state.borrow_mut().faults.clear_all();
        let down: Vec<usize> = (0..names.len()).filter(|&n| !self.up(n)).collect();
        let began = HealStep::Began {
            cuts,
            holds,
            latencies,
            cleared: cleared.iter().map(|(n, p)| format!("{n}/{p}")).collect(),
            starting: down.iter().map(|&n| names[n].clone()).collect(),
        };
        self.event(None, Data::Heal(began));
        for node in down {
            self.boot(node);
            self.event(Some(node), Data::Heal(HealStep::Start));
        }
        let settled = self.run_until_stable(&Condition::Quiescent, heal.within, heal.settle)?;
        self.event(None, Data::Heal(HealStep::Ended { settled }));
        Ok(())
    }

    fn judge(&mut self, view: &ClusterView, trail: &Trail) -> Vec<Finding> {
        let model = self.scenario.model;
        let mut findings = std::mem::take(&mut self.findings);
        findings.extend(check::guarded(divergence::CHECKER, || {
            divergence::check(view, model.info().index_format)
        }));
        // An `always` invariant that failed during the run is reported once.
        findings.extend(invariants::check_all(model, view).into_iter().filter(|f| {
            !self
                .always_failed
                .iter()
                .any(|name| f.checker == format!("invariant:{name}"))
        }));
        if model.info().has_leader {
            findings.extend(check::guarded(history::ELECTION_SAFETY, || {
                history::election_safety(trail)
            }));
        }
        findings.extend(self.ineffective_fail_points());
        let expect = &self.variant.expect;
        let file = &self.scenario.file;
        findings.extend(expect::trail_present(file, &expect.trail, trail));
        findings.extend(expect::trail_absent(file, &expect.absent, trail));
        findings.extend(expect::trail_order(file, &expect.trail, trail));
        findings.extend(expect::trail_sequence(file, &expect.sequence, trail));
        findings.extend(expect::observed(self.scenario, &expect.observed, view));
        findings
    }

    /// A fail point armed but never fired tested nothing: the run fails, saying so.
    fn ineffective_fail_points(&self) -> Vec<Finding> {
        let state = self.state.borrow();
        state
            .faults
            .arms()
            .iter()
            .filter(|arm| arm.fired == 0 && !arm.optional)
            .map(|arm| {
                let reached = if arm.hits == 0 { "never reached" } else { "reached but never fired" };
                Finding::new(
                    "fault-effectiveness",
                    None,
                    format!(
                        "{}:{}:{}: fail point `{}` on {} was armed but {reached}; the run tested nothing there (mark the step `optional: true` if that is expected)",
                        self.scenario.file, arm.loc.line, arm.loc.col, arm.point, arm.node
                    ),
                )
            })
            .collect()
    }

    fn finish(mut self, halt: Option<Halt>, wall: Duration) -> RunResult {
        SIM_NOW.with(|t| t.set(None));
        match &halt {
            Some(Halt::Crashed(message)) => self.findings.push(Finding::new(
                "panic",
                Some(Outcome::Crashed),
                format!("unexpected panic: {message}"),
            )),
            Some(Halt::Limit(message)) => self.findings.push(Finding::new(
                "limits",
                Some(Outcome::Stuck),
                message.clone(),
            )),
            Some(Halt::Await(_)) | None => {}
        }
        let view = self.view();
        let mut trail = std::mem::take(&mut self.state.borrow_mut().trail);
        trail.finish();
        let findings = self.judge(&view, &trail);
        let crashed = matches!(halt, Some(Halt::Crashed(_)));
        let result = RunResult::build(&self, view, trail, findings, wall);
        // The fail registry is process-global: disarm this run's points now.
        self.state.borrow_mut().faults.clear_all();
        if crashed {
            // A simulation that panicked mid-step may not drop cleanly; leak it.
            std::mem::forget(self.sim);
        }
        result
    }
}

/// The simulation a scenario runs on: one seed for turmoil's world (and, with
/// `tokio_unstable`, every host runtime), a fixed epoch, the scenario's tick and latency.
pub(crate) fn sim_builder(settings: &crate::scenario::Settings, seed: u64) -> turmoil::Builder {
    let mut builder = turmoil::Builder::new();
    builder
        .rng_seed(seed)
        .epoch(UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
        .tick_duration(settings.tick)
        .min_message_latency(settings.latency_min)
        .max_message_latency(settings.latency_max)
        // We step the simulation ourselves and enforce our own duration limit.
        .simulation_duration(settings.limits.duration + Duration::from_secs(1));
    if settings.random_order {
        builder.enable_random_order();
    }
    builder
}

fn build_sim(
    scenario: &Scenario,
    variant: &Variant,
    params: &serde_json::Value,
    seed: u64,
    state: &Rc<RefCell<RunState>>,
    env: Rc<RunEnv>,
) -> Sim<'static> {
    let mut sim = sim_builder(&scenario.settings, seed).build();
    // Hosts are registered in the scenario's order: it fixes their addresses and
    // the per-host seeds turmoil draws from its world rng.
    for (index, spec) in scenario.nodes.iter().enumerate() {
        let state = state.clone();
        let env = env.clone();
        let model = scenario.model;
        let nodes = scenario.nodes.clone();
        let bugs = variant.bugs.clone();
        let params = params.clone();
        sim.host(spec.name.as_str(), move || {
            let (inbox, receiver) = unbounded_channel();
            let incarnation = {
                let mut state = state.borrow_mut();
                let node = &mut state.nodes[index];
                node.inbox = Some(inbox);
                node.stopped = false;
                node.incarnation += 1;
                node.incarnation - 1
            };
            let start = NodeStart {
                index,
                nodes: nodes.clone(),
                incarnation,
                seed,
                bugs: bugs.clone(),
                params: params.clone(),
            };
            model.start(NodeCtx::new(start, env.clone(), receiver))
        });
    }
    sim
}

#[cfg(test)]
mod tests {
    use crate::outcome::Outcome;
    use crate::scenario::load_str;

    #[test]
    fn an_op_in_flight_on_a_crashed_node_fails_and_does_not_block_quiescence() {
        // The op reaches n1's inbox, but n1 is killed before it runs: nobody will
        // ever answer it.
        let text = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
  - client: {on: n1, op: put, key: a, value: "1", wait: false}
  - crash: n1
  - start: n1
  - check: {converged: true, within: 5s}
"#;
        let scenario = load_str("inflight.yaml", text).expect("valid scenario");
        let result = super::run(&scenario, &scenario.variants[0], 1);
        assert_eq!(result.outcome, Outcome::Converged, "{:?}", result.findings);
        let op = &result.ops[0];
        assert!(
            op.result.is_none() && op.timed_out,
            "the client gave up on it: {op:?}"
        );
        assert!(result
            .trail
            .iter()
            .any(|e| e.kind == crate::trail::Kind::OpTimeout
                && e.detail == "put a=1 -> no answer: the node went down"));
    }
}
