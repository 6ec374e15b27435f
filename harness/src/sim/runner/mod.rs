//! One run: a scenario variant and a seed on a fresh turmoil simulation.
//!
//! The parts, after turmoil's `Sim` and Jepsen's nemesis: the [`cluster`] owns
//! the simulation, what the harness knows of each node and the ops in flight;
//! the [`nemesis`] owns what the run did to the network and the fail points and
//! applies every [`crate::base::action::Action`]; the interpreter (`interpret.rs`)
//! turns scenario steps into actions, the chaos window (`chaos.rs`) asks its
//! fault sources for them. The driver here is the conductor: it steps the
//! simulation under the run's limits (`wait.rs`), performs actions with the
//! waits that belong to them (`actions.rs`), and ends with the heal phase
//! (repair the network, clear fail points, restart down nodes, wait for the
//! replicas to settle) and the checkers.

mod actions;
mod chaos;
pub mod child;
mod client;
mod cluster;
mod conditions;
pub mod env;
mod halt;
mod interpret;
mod nemesis;
pub mod net;
mod pick;
pub mod recorder;
mod result;
pub mod swarm;
pub mod target;
mod verify;
mod wait;
mod workload;

pub use halt::Halt;
pub use result::CauseCheck;
pub use result::{replay_command, FinalNode, MessageCount, RunResult, REPORT_SCHEMA_VERSION};
pub use verify::confirm_causes;

pub(crate) use cluster::{add_hosts, sim_builder};

use crate::base::outcome::Outcome;
use crate::base::panic;
use crate::base::streams::Stream;
use crate::base::trail::{Data, HealStep, Trail};
use crate::judge::check::{self, cause, divergence, expect, history, invariants, Finding};
use crate::judge::consistency::judge;
use crate::judge::history::ClientHistory;
use crate::lang::scenario::{Condition, Heal, Scenario, Variant};
use crate::lang::yaml::Loc;
use crate::sim::faults::FaultTable;
use cluster::Cluster;
use faultline_api::ClusterView;
use nemesis::Nemesis;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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

fn set_sim_now(now: Option<Duration>) {
    SIM_NOW.with(|t| t.set(now));
}

/// Run one variant of a scenario with one seed: here, or in the process its
/// target or its model asks for (`child`).
pub fn run(scenario: &Scenario, variant: &Variant, seed: u64) -> RunResult {
    run_with(scenario, variant, seed, &Inputs::default())
}

/// What a run takes besides its scenario, variant and seed.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The chaos window's schedule instead of the one the seed draws (an
    /// edited or shrunk run, a replay of one).
    pub schedule: Option<crate::lang::scenario::schedule::Schedule>,
    /// Record the workload's ops in the result's schedule even when they were
    /// drawn from the seed (what a shrink of the ops starts from).
    pub record_ops: bool,
    /// Bug modes laid over the variant's (`faultline run --bug KEY=MODE`). The
    /// result records them and its replay command passes them again.
    pub bugs: faultline_api::BugSet,
    /// The seed whose draw configures the chaos section (swarm weights,
    /// pacing, drawn params) instead of the run's own: a derived run of guided
    /// search runs under its parent's configuration. The result records it
    /// (`swarm.config_seed`) and a replay passes it again.
    pub config_seed: Option<u64>,
}

/// [`run`] with more inputs.
pub fn run_with(scenario: &Scenario, variant: &Variant, seed: u64, inputs: &Inputs) -> RunResult {
    let overlaid;
    let variant = if inputs.bugs.0.is_empty() {
        variant
    } else {
        let mut v = variant.copy();
        v.bugs
            .0
            .extend(inputs.bugs.0.iter().map(|(k, m)| (k.clone(), *m)));
        overlaid = v;
        &overlaid
    };
    let mut result = match child::placement(scenario, variant) {
        Ok(None) => run_here(scenario, variant, seed, inputs),
        Ok(Some(binary)) => {
            let mut result = child::run(&binary, scenario, variant, seed, inputs);
            // The child judged the variant as its file has it; the known
            // defects are this variant's (hunt's arms have none).
            if variant.expect.known.is_empty() && !result.known_defects.is_empty() {
                result.known_defects.clear();
                result.passed = false;
            }
            result
        }
        Err(message) => child::not_placed(scenario, variant, seed, message),
    };
    result.bug_overrides = inputs.bugs.clone();
    result.replay = replay_command(&result.file, &result.variant, seed, &inputs.bugs);
    result
}

/// Where a failed run departs from its fixed twins: for each bug key the run had
/// `buggy` (its own mode, or its build's), the same seed and inputs with that
/// key fixed (another build, for a key switched by build), and the first trail
/// event where the two differ (`check::differential`). One more run per key.
pub fn differential(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    inputs: &Inputs,
    result: &RunResult,
) -> Vec<crate::judge::check::differential::Departure> {
    use faultline_api::BugMode;
    if result.passed {
        return Vec::new();
    }
    // Each twin with the inputs it runs with: the key's override, if it has
    // one, is fixed too.
    let mut twins: Vec<(String, Variant, Inputs)> = Vec::new();
    if variant.target.is_some() {
        let own = crate::lang::targets::bugs_of(
            std::path::Path::new(&scenario.file),
            variant.target.as_deref(),
        );
        for (key, _) in own.0.iter().filter(|(_, m)| **m == BugMode::Buggy) {
            let fixed = scenario.variants.iter().find(|v| {
                crate::lang::targets::bugs_of(
                    std::path::Path::new(&scenario.file),
                    v.target.as_deref(),
                )
                .0
                .get(key)
                    == Some(&BugMode::Fixed)
            });
            if let Some(v) = fixed {
                twins.push((key.clone(), v.copy(), inputs.clone()));
            }
        }
    } else {
        for (key, _) in result.bugs.0.iter().filter(|(_, m)| **m == BugMode::Buggy) {
            let mut twin = variant.copy();
            twin.bugs = result.bugs.clone();
            twin.bugs.0.insert(key.clone(), BugMode::Fixed);
            let mut twin_inputs = inputs.clone();
            if let Some(mode) = twin_inputs.bugs.0.get_mut(key) {
                *mode = BugMode::Fixed;
            }
            twins.push((key.clone(), twin, twin_inputs));
        }
    }
    twins
        .into_iter()
        .filter_map(|(key, twin, inputs)| {
            let fixed = run_with(scenario, &twin, seed, &inputs);
            crate::judge::check::differential::departure(
                &key,
                &result.trail,
                &fixed.trail,
                fixed.passed,
            )
        })
        .collect()
}

fn run_here(scenario: &Scenario, variant: &Variant, seed: u64, inputs: &Inputs) -> RunResult {
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: the run's wall time, reported, never in the trail"
    )]
    let wall = std::time::Instant::now(); // wall-clock ok: timing only, never in a trail
    let span = tracing::info_span!("run", scenario = %scenario.name, variant = %variant.name, seed);
    let _entered = span.enter();
    set_sim_now(Some(Duration::ZERO));
    panic::reset();
    tracing::info!("start");
    let plan = swarm::plan(
        scenario,
        variant,
        seed,
        inputs.config_seed,
        inputs.schedule.as_ref(),
    );
    let mut driver = Driver::new(scenario, variant, seed, &plan);
    driver.schedule_given = inputs.schedule.is_some();
    driver.record_ops = inputs.record_ops;
    let halt = match driver.script() {
        Ok(()) => driver.heal(),
        // A missed await ends the script, not the run: heal and judge as usual.
        Err(Halt::Await(message)) => Some(driver.heal().unwrap_or(Halt::Await(message))),
        Err(other) => Some(other),
    };
    driver.finish(halt, wall.elapsed())
}

pub(crate) struct Driver<'s> {
    scenario: &'s Scenario,
    variant: &'s Variant,
    seed: u64,
    cluster: Cluster,
    nemesis: Nemesis,
    findings: Vec<Finding>,
    /// Scenario steps executed (each counts against the step limit too, so that
    /// steps that take no simulated time cannot loop past every limit).
    script_steps: u64,
    /// What the run is doing, for a limit's message ("waiting for a leader").
    activity: String,
    /// The chaos section as this seed configured it (swarm), if there is one.
    chaos: Option<crate::lang::scenario::Chaos>,
    /// What the seed drew for it.
    pub(crate) swarm: Option<swarm::SwarmDraw>,
    /// The chaos window's schedule, until the window plays it.
    schedule: Option<crate::lang::scenario::schedule::Schedule>,
    /// The schedule the window played (with its ops when they were given).
    pub(crate) played: Option<crate::lang::scenario::schedule::Schedule>,
    /// Whether the schedule was the run's input ([`Inputs::schedule`]).
    pub(crate) schedule_given: bool,
    /// [`Inputs::record_ops`].
    record_ops: bool,
    /// `always` invariants that already failed during the run.
    always_failed: BTreeSet<&'static str>,
    /// Invariants the final judgment could not decide.
    pub(crate) unjudged: Vec<invariants::Unjudged>,
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
    /// Workloads sending ops, or waiting for their last ops' answers.
    workloads: Vec<workload::Running>,
}

impl<'s> Driver<'s> {
    fn new(scenario: &'s Scenario, variant: &'s Variant, seed: u64, plan: &swarm::Plan) -> Self {
        let run_id = format!(
            "{}-{}-{seed}-{}",
            scenario.name,
            variant.name,
            RUN_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let faults = Rc::new(RefCell::new(FaultTable::new(&run_id, seed)));
        let nemesis = Nemesis::new(scenario.model, &scenario.settings, faults.clone());
        let cluster = Cluster::new(scenario, &variant.bugs, &plan.params, seed, run_id, faults);
        Driver {
            scenario,
            variant,
            seed,
            cluster,
            nemesis,
            findings: Vec::new(),
            script_steps: 0,
            activity: "starting".into(),
            chaos: plan.chaos.clone(),
            swarm: plan.draw.clone(),
            schedule: plan.schedule.clone(),
            played: None,
            schedule_given: false,
            record_ops: false,
            always_failed: Default::default(),
            unjudged: Vec::new(),
            params: plan.params.clone(),
            at: Loc::default(),
            picks: Stream::Picks.rng(seed),
            placeholders: Stream::Placeholders.rng(seed),
            seq: 0,
            workloads: Vec::new(),
        }
    }

    /// The scripted steps, in order, then the chaos window if there is one. A
    /// workload still running when they end stops there.
    fn script(&mut self) -> Result<(), Halt> {
        for step in &self.scenario.steps {
            self.exec(step)?;
        }
        if let Some(chaos) = self.chaos.take() {
            self.chaos(&chaos)?;
        }
        self.stop_workloads();
        Ok(())
    }

    // ---- the cluster as the harness sees it ----

    /// A node's name, for an action.
    pub(crate) fn name(&self, node: usize) -> String {
        self.cluster.name(node).to_string()
    }

    pub(crate) fn up(&self, node: usize) -> bool {
        self.cluster.up(node)
    }

    /// The up node that leads with the highest term.
    pub(crate) fn leader(&self) -> Option<usize> {
        self.cluster.leader()
    }

    fn quiescent(&self) -> bool {
        self.cluster
            .quiescent(self.scenario.model.info().has_leader)
    }

    pub(crate) fn view(&self) -> ClusterView {
        ClusterView {
            link_faults: self.nemesis.link_faults(&self.cluster),
            ..self.cluster.view()
        }
    }

    pub(crate) fn event(&mut self, node: Option<usize>, data: Data) {
        self.cluster.event(node, data);
    }

    pub(crate) fn finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    // ---- heal and judge ----

    /// The heal phase, when the scenario has one; `Some` when it hit a limit.
    fn heal(&mut self) -> Option<Halt> {
        let heal = self.scenario.settings.heal.clone()?;
        self.heal_phase(&heal).err()
    }

    fn heal_phase(&mut self, heal: &Heal) -> Result<(), Halt> {
        self.cluster.state_mut().line = None;
        self.activity = "waiting for the replicas to settle in the heal phase".into();
        let mut began = self.nemesis.remove_all(&self.cluster);
        let down: Vec<usize> = (0..self.cluster.len()).filter(|&n| !self.up(n)).collect();
        if let HealStep::Began { starting, .. } = &mut began {
            starting.extend(down.iter().map(|&n| self.cluster.name(n).to_string()));
        }
        self.event(None, Data::Heal(began));
        for node in down {
            self.cluster.boot(node);
            self.event(Some(node), Data::Heal(HealStep::Start));
        }
        let deadline = self.cluster.elapsed() + heal.within;
        let settled = self.run_until_stable(&Condition::Quiescent, heal.within, heal.settle)?;
        self.event(None, Data::Heal(HealStep::Ended { settled }));
        if heal.final_ops && !self.scenario.finale.is_empty() {
            self.final_ops()?;
            // The final ops are entries of their own: settle again before judging.
            let left = deadline
                .saturating_sub(self.cluster.elapsed())
                .max(heal.settle);
            self.run_until_stable(&Condition::Quiescent, left, heal.settle)?;
        }
        self.await_liveness(deadline)
    }

    /// The final generator (Jepsen's): after the heal, the model's final ops (a
    /// write, then a read of it) go out in order, each retried until it gets an
    /// answer that says it ran, within the model's deadline; one that does not
    /// makes the run `stuck`, naming it. A cluster that converged but cannot
    /// serve is not healthy.
    fn final_ops(&mut self) -> Result<(), Halt> {
        let finale = self.scenario.finale.clone();
        if finale.is_empty() {
            return Ok(());
        }
        let info = self.scenario.model.info();
        let within = Duration::from_millis(info.chaos.final_within_ms);
        let deadline = self.cluster.elapsed() + within;
        self.activity = "sending the final ops".into();
        // One `{seq}` for all of them: the read names what the write wrote.
        let seq = self.next_seq();
        for op in &finale {
            let parsed = crate::lang::scenario::expand_template(&op.template, &mut |lo, _| lo, seq)
                .and_then(|json| self.scenario.model.parse_op(&json));
            let parsed = match parsed {
                Ok(parsed) => parsed,
                Err(message) => {
                    self.event(
                        None,
                        Data::InvalidOp {
                            workload: false,
                            message: format!("final op: {message}"),
                        },
                    );
                    continue;
                }
            };
            let target = op.target.unwrap_or(if info.has_leader {
                crate::lang::scenario::Target::Leader
            } else {
                crate::lang::scenario::Target::Any
            });
            if let Some(why) = self.final_op(&parsed, target, deadline)? {
                self.finding(Finding::new(
                    "final",
                    Some(Outcome::Stuck),
                    format!(
                        "the final op `{}` did not complete within {} of the heal: {why}",
                        parsed.summary,
                        crate::base::duration::format(within)
                    ),
                ));
                // The ops after it depend on it.
                break;
            }
        }
        Ok(())
    }

    /// Send one final op until it runs; why it did not, if it never did.
    fn final_op(
        &mut self,
        op: &faultline_api::ParsedOp,
        target: crate::lang::scenario::Target,
        deadline: Duration,
    ) -> Result<Option<String>, Halt> {
        let name = op.op.get("op").and_then(|o| o.as_str()).unwrap_or("");
        let answers = self.scenario.model.info().op(name).map(|o| o.answers);
        let retry = Duration::from_millis(100);
        let mut last = String::from("no node to send it to");
        while self.cluster.elapsed() < deadline {
            let left = deadline - self.cluster.elapsed();
            let node = self.pick(target, pick::Want::Up, &[], left)?;
            let Some(node) = node else {
                let until = (self.cluster.elapsed() + retry).min(deadline);
                while self.cluster.elapsed() < until {
                    self.advance()?;
                }
                continue;
            };
            let action = crate::base::action::Action::Client {
                node: self.name(node),
                op: op.clone(),
            };
            let wait = self.scenario.settings.op_timeout.min(left);
            let answer = match self.act_client_as(recorder::SCRIPT, action, Some(wait))? {
                actions::Sent::Refused(r) | actions::Sent::Answered(r) => r,
                actions::Sent::Pending(_) => continue,
            };
            let kind = answers.map(|a| a.classify(&answer));
            if kind == Some(faultline_api::AnswerKind::Ok) || (answers.is_none() && answer.ok) {
                return Ok(None);
            }
            last = format!("its last answer was `{answer}`");
            let until = (self.cluster.elapsed() + retry).min(deadline);
            while self.cluster.elapsed() < until {
                self.advance()?;
            }
        }
        Ok(Some(last))
    }

    /// A liveness invariant that is not decided yet (a leader not ready, its
    /// bound not yet passed) is waited for, up to the heal phase's bound: a
    /// bound the run could reach is never left unjudged for want of time.
    fn await_liveness(&mut self, deadline: Duration) -> Result<(), Halt> {
        let model = self.scenario.model;
        while let Some(wait) = invariants::wait_for_liveness(model, &self.view()) {
            let now = self.cluster.elapsed();
            if now >= deadline {
                break;
            }
            let until = (now + Duration::from_millis(wait)).min(deadline);
            self.activity = "waiting for a liveness invariant's bound".into();
            while self.cluster.elapsed() < until {
                self.advance()?;
            }
        }
        Ok(())
    }

    fn judge(&mut self, view: &ClusterView, trail: &Trail) -> Vec<Finding> {
        let model = self.scenario.model;
        let mut findings = std::mem::take(&mut self.findings);
        findings.extend(check::guarded(divergence::CHECKER, || {
            divergence::check(view, model.info().index_format)
        }));
        // An `always` invariant that failed during the run is reported once.
        let (failed, mut unjudged) = invariants::check_all(model, view);
        let allowed = self
            .scenario
            .settings
            .heal
            .as_ref()
            .map(|h| h.allow_unjudged.as_slice())
            .unwrap_or_default();
        for u in &mut unjudged {
            u.allowed = allowed
                .iter()
                .any(|name| u.checker == format!("invariant:{name}"));
        }
        self.unjudged = unjudged;
        findings.extend(failed.into_iter().filter(|f| {
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
        // Name the cause where the run failed (judgment output, not trail).
        cause::annotate(&mut findings, trail, model.info().index_format);
        findings
    }

    /// What clients saw, judged by the consistency checker (docs/history.md).
    fn judge_history(&self, history: &ClientHistory) -> judge::Judged {
        let settings = &self.scenario.settings.history;
        let workload = history.lanes.iter().any(|l| l.client != recorder::SCRIPT);
        let mut judged = judge::Judged::default();
        let findings = check::guarded(crate::judge::consistency::CHECKER, || {
            let (model, params) = (self.scenario.model, &self.params);
            judged = judge::judge(model, history, params, settings, workload);
            std::mem::take(&mut judged.findings)
        });
        judged.findings = findings;
        judged
    }

    /// A fail point armed but never fired tested nothing: the run fails, saying so.
    fn ineffective_fail_points(&self) -> Vec<Finding> {
        let file = &self.scenario.file;
        self.nemesis.arms(|arms| {
            arms.iter()
                .filter(|arm| arm.fired == 0 && !arm.optional)
                .map(|arm| {
                    let reached = if arm.hits == 0 { "never reached" } else { "reached but never fired" };
                    Finding::new(
                        "fault-effectiveness",
                        None,
                        format!(
                            "{file}:{}:{}: fail point `{}` on {} was armed but {reached}; the run tested nothing there (mark the step `optional: true` if that is expected)",
                            arm.loc.line, arm.loc.col, arm.point, arm.node
                        ),
                    )
                })
                .collect()
        })
    }

    fn finish(mut self, halt: Option<Halt>, wall: Duration) -> RunResult {
        set_sim_now(None);
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
        let trail = self.cluster.end();
        let mut findings = self.judge(&view, &trail);
        let history = {
            let fresh = recorder::Recorder::new(self.scenario.model.info());
            std::mem::replace(&mut self.cluster.state_mut().history, fresh).finish()
        };
        let judged = self.judge_history(&history);
        findings.extend(judged.findings);
        let file = &self.scenario.file;
        let checker = self.variant.expect.checker.as_ref();
        let decided = expect::decided_by(file, checker, &findings);
        findings.extend(decided);
        let clients = result::Clients {
            history,
            consistency: judged.report,
        };
        let result = RunResult::build(&self, view, trail, findings, clients, wall);
        // The fail registry is process-global: disarm this run's points now.
        self.nemesis.clear_fail_points();
        if matches!(halt, Some(Halt::Crashed(_))) {
            self.cluster.leak();
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use crate::base::outcome::Outcome;
    use crate::lang::scenario::load_str;

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
            .any(|e| e.kind == crate::base::trail::Kind::OpTimeout
                && e.detail == "put a=1 -> no answer: the node went down"));
    }
}
