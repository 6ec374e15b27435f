//! The one dispatching `match` over step kinds. Each arm resolves its targets (the
//! leader, now) into an [`Action`] and performs it (`actions.rs`), as the chaos
//! nemesis does.

use super::pick::Want;
use super::{Driver, Halt};
use crate::action::{Action, ActionResult};
use crate::check::Finding;
use crate::duration::format as fmt_duration;
use crate::outcome::Outcome;
use crate::scenario::{
    expand_template, CheckStep, ClientOp, ClientStep, Condition, Cut, NodeId, OpExpect, Partition,
    ProcessStep, Since, Step, StepKind, Target,
};
use crate::trail::{AwaitEnd, Awaited, Checked, Data};
use nodes::api::OpResult;
use rand::Rng;
use std::time::Duration;

impl Driver<'_> {
    pub(crate) fn exec(&mut self, step: &Step) -> Result<(), Halt> {
        self.state.borrow_mut().line = Some(step.loc.line);
        self.at = step.loc;
        self.activity = format!(
            "running the step at {}:{}:{}",
            self.scenario.file, step.loc.line, step.loc.col
        );
        self.check_limits()?;
        if !matches!(step.kind, StepKind::Repeat { .. }) {
            self.script_steps += 1;
        }
        match &step.kind {
            StepKind::Client(client) => self.client(client, step),
            StepKind::TransferLeader {
                to,
                timeout,
                optional,
            } => self.transfer_leader(*to, *timeout, *optional, step),
            StepKind::Partition(partition) => self.partition(partition, step),
            StepKind::Heal => {
                self.perform(Action::Heal);
                Ok(())
            }
            StepKind::Hold { a, b } => {
                if let Some((a, b)) = self.pair(*a, *b, step)? {
                    let between = self.names_of(a, b);
                    self.perform(Action::Hold { between });
                }
                Ok(())
            }
            StepKind::Release { a, b } => {
                let Some((a, b)) = self.pair(*a, *b, step)? else {
                    return Ok(());
                };
                let between = self.names_of(a, b);
                let result = self.perform(Action::Release { between });
                if result == (ActionResult::Released { held: false }) {
                    let message = format!(
                        "release between {} and {}: nothing was held",
                        self.names[a], self.names[b]
                    );
                    self.ineffective(step, message);
                }
                Ok(())
            }
            StepKind::Latency { a, b, delay } => {
                if let Some((a, b)) = self.pair(*a, *b, step)? {
                    let between = self.names_of(a, b);
                    let delay_ms = delay.map(|d| d.as_millis() as u64);
                    self.perform(Action::Latency { between, delay_ms });
                }
                Ok(())
            }
            StepKind::Crash(p) => {
                if let Some(node) = self.process_node(p, Want::Up, step)? {
                    let crash = Action::Crash {
                        node: self.names[node].clone(),
                    };
                    if self.perform(crash) == ActionResult::NodeDown && !p.optional {
                        self.ineffective(
                            step,
                            format!("crash of {}: it is already down", self.names[node]),
                        );
                    }
                }
                Ok(())
            }
            StepKind::Restart(p) => {
                if let Some(node) = self.process_node(p, Want::Either, step)? {
                    let node = self.names[node].clone();
                    self.perform(Action::Restart { node });
                }
                Ok(())
            }
            StepKind::Stop(p) => {
                if let Some(node) = self.process_node(p, Want::Up, step)? {
                    if !self.act_stop(node)? && !p.optional {
                        self.ineffective(
                            step,
                            format!("stop of {}: it is already down", self.names[node]),
                        );
                    }
                }
                Ok(())
            }
            StepKind::Start(p) => {
                if let Some(node) = self.process_node(p, Want::Down, step)? {
                    let start = Action::Start {
                        node: self.names[node].clone(),
                    };
                    if self.perform(start) == ActionResult::NodeUp && !p.optional {
                        self.ineffective(
                            step,
                            format!("start of {}: it is already up", self.names[node]),
                        );
                    }
                }
                Ok(())
            }
            StepKind::FailPoint { node, arm } => {
                if let Some(node) = self.step_node(*node, Want::Either, step)? {
                    self.perform(Action::ArmFailPoint {
                        node: self.names[node].clone(),
                        point: arm.point.name.to_string(),
                        fault: arm.action.clone(),
                        count: arm.count,
                        probability: arm.probability,
                        optional: arm.optional,
                    });
                }
                Ok(())
            }
            StepKind::ClearFailPoint { node, point } => {
                if let Some(node) = self.step_node(*node, Want::Either, step)? {
                    self.perform(Action::ClearFailPoint {
                        node: self.names[node].clone(),
                        point: point.name.to_string(),
                    });
                }
                Ok(())
            }
            StepKind::ReleaseFailPoint { node, point } => {
                let Some(node) = self.step_node(*node, Want::Either, step)? else {
                    return Ok(());
                };
                let release = Action::ReleaseFailPoint {
                    node: self.names[node].clone(),
                    point: point.name.to_string(),
                };
                if self.perform(release) == (ActionResult::Woken { tasks: 0 }) {
                    let message = format!(
                        "release of {} on {}: no task was stalled there",
                        point.name, self.names[node]
                    );
                    self.ineffective(step, message);
                }
                Ok(())
            }
            StepKind::Sleep(duration) => {
                let ms = duration.as_millis() as u64;
                self.event(None, Data::Sleep { ms });
                self.run_for(*duration)
            }
            StepKind::Await {
                condition,
                within,
                variants,
            } => {
                if !variants.is_empty() && !variants.contains(&self.variant.name) {
                    return Ok(());
                }
                self.await_condition(condition, *within, step)
            }
            StepKind::Check(check) => self.check_step(check, step),
            StepKind::Repeat { count, steps } => {
                for _ in 0..*count {
                    for inner in steps {
                        self.exec(inner)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Two nodes by name, for a link action.
    fn names_of(&self, a: NodeId, b: NodeId) -> [String; 2] {
        [self.names[a].clone(), self.names[b].clone()]
    }

    /// A log position in the model's form (a zxid in hex).
    fn show_index(&self, index: u64) -> String {
        self.scenario.model.info().index_format.show(index)
    }

    pub(crate) fn ineffective(&mut self, step: &Step, message: String) {
        let file = &self.scenario.file;
        let message = format!(
            "{file}:{}:{}: {message}; the step had no effect",
            step.loc.line, step.loc.col
        );
        self.finding(Finding::new("fault-effectiveness", None, message));
    }

    pub(crate) fn describe_condition(&self, condition: &Condition) -> String {
        match condition {
            Condition::Leader(None) => "a leader".into(),
            Condition::Leader(Some(n)) => format!("{} leading", self.names[*n]),
            Condition::Applied { index, nodes } if nodes.is_empty() => {
                format!("every up node applied >= {}", self.show_index(*index))
            }
            Condition::Applied { index, nodes } => {
                let names: Vec<String> = nodes.iter().map(|n| n.describe(&self.names)).collect();
                format!(
                    "{} applied >= {}",
                    names.join(", "),
                    self.show_index(*index)
                )
            }
            Condition::Up(n) => format!("{} up", n.describe(&self.names)),
            Condition::Down(n) => format!("{} down", n.describe(&self.names)),
            Condition::OpsDone => "every op completed".into(),
            Condition::Quiescent => "quiescence".into(),
            Condition::Observed(m) => format!(
                "{}.{} {}",
                m.node.describe(&self.names),
                m.key,
                crate::check::observed::describe(&m.tests)
            ),
            Condition::Event { event, since } => {
                let since = match since {
                    Since::Step => "",
                    Since::Run => " (since the run began)",
                };
                format!(
                    "an event with {}{since}",
                    crate::check::expect::describe(event)
                )
            }
        }
    }

    /// What an `observed` await saw instead, so a miss says how far off the node was.
    fn seen(&self, condition: &Condition) -> String {
        let Condition::Observed(m) = condition else {
            return String::new();
        };
        let state = self.state.borrow();
        let seen: Vec<String> = self
            .denoted(m.node)
            .into_iter()
            .map(|n| {
                let what = crate::check::observed::seen(&state.nodes[n].observation, &m.key);
                match m.node {
                    Target::Node(_) => format!("it is {what}"),
                    _ => format!("{} {what}", self.names[n]),
                }
            })
            .collect();
        if seen.is_empty() {
            return " (no node to look at)".into();
        }
        format!(" ({})", seen.join(", "))
    }

    fn await_condition(
        &mut self,
        condition: &Condition,
        within: Duration,
        step: &Step,
    ) -> Result<(), Halt> {
        let what = self.describe_condition(condition);
        let start = self.sim.elapsed();
        if self.run_until(condition, within)? {
            let took = self.sim.elapsed() - start;
            let end = AwaitEnd::Reached {
                took_ms: took.as_millis() as u64,
            };
            self.event(None, Data::Await(Awaited { what, end }));
            return Ok(());
        }
        let deadline = fmt_duration(within);
        let seen = self.seen(condition);
        let message = format!(
            "{}:{}:{}: await {what} missed its deadline of {deadline}{seen}",
            self.scenario.file, step.loc.line, step.loc.col
        );
        let end = AwaitEnd::Missed {
            deadline_ms: within.as_millis() as u64,
            seen,
        };
        self.event(None, Data::Await(Awaited { what, end }));
        self.finding(Finding::new("await", Some(Outcome::Stuck), message.clone()));
        Err(Halt::Await(message))
    }

    fn check_step(&mut self, check: &CheckStep, step: &Step) -> Result<(), Halt> {
        let line = format!("{}:{}:{}", self.scenario.file, step.loc.line, step.loc.col);
        let findings = match check {
            CheckStep::Converged { within } => {
                let settle = self
                    .scenario
                    .settings
                    .heal
                    .as_ref()
                    .map(|h| h.settle)
                    .unwrap_or(Duration::from_secs(1));
                let settled = self.run_until_stable(&Condition::Quiescent, *within, settle)?;
                let view = self.view();
                let format = self.scenario.model.info().index_format;
                let mut findings = crate::check::guarded("divergence", || {
                    crate::check::divergence::check(&view, format)
                });
                if !settled && findings.is_empty() {
                    findings.push(Finding::new(
                        "check",
                        Some(Outcome::Stuck),
                        "replicas did not settle",
                    ));
                }
                findings
            }
            CheckStep::Invariant(name) => {
                crate::check::invariants::check_one(self.scenario.model, name, &self.view())
            }
        };
        let what = match check {
            CheckStep::Converged { .. } => "converged".to_string(),
            CheckStep::Invariant(name) => format!("invariant {name}"),
        };
        if findings.is_empty() {
            let what = what.clone();
            self.event(None, Data::Check(Checked { what, failed: None }));
        }
        for mut finding in findings {
            let checked = Checked {
                what: what.clone(),
                failed: Some(finding.message.clone()),
            };
            self.event(None, Data::Check(checked));
            finding.message = format!("{line}: mid-run check {what}: {}", finding.message);
            self.finding(finding);
        }
        Ok(())
    }

    // ---- resolving targets ----

    /// The node a step acts on (`leader` waits up to the op timeout); `None`,
    /// recorded as ineffective, when the reference names no node now.
    fn step_node(
        &mut self,
        target: Target,
        want: Want,
        step: &Step,
    ) -> Result<Option<usize>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let node = self.pick(target, want, &[], timeout)?;
        if node.is_none() {
            let what = self.no_node(target, want, timeout);
            self.ineffective(step, what);
        }
        Ok(node)
    }

    /// Why a reference named no node.
    fn no_node(&self, target: Target, want: Want, timeout: Duration) -> String {
        let state = match want {
            Want::Up => " up",
            Want::Down => " down",
            Want::Either => "",
        };
        match target {
            Target::Leader => format!("no leader within {}", fmt_duration(timeout)),
            Target::Follower => format!(
                "no{state} follower (and a leader within {})",
                fmt_duration(timeout)
            ),
            Target::Any | Target::Node(_) => format!("no{state} node to act on"),
        }
    }

    /// The two ends of a link, distinct.
    fn pair(&mut self, a: Target, b: Target, step: &Step) -> Result<Option<(usize, usize)>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let Some(x) = self.pick(a, Want::Either, &[], timeout)? else {
            let what = self.no_node(a, Want::Either, timeout);
            self.ineffective(step, what);
            return Ok(None);
        };
        let Some(y) = self.pick(b, Want::Either, &[x], timeout)? else {
            let what = self.no_node(b, Want::Either, timeout);
            self.ineffective(step, what);
            return Ok(None);
        };
        if x == y {
            self.ineffective(step, format!("both ends are {}", self.names[x]));
            return Ok(None);
        }
        Ok(Some((x, y)))
    }

    /// The node a process step acts on; `None` (recorded as ineffective unless
    /// the step is optional) when the reference names no node now.
    fn process_node(
        &mut self,
        p: &ProcessStep,
        want: Want,
        step: &Step,
    ) -> Result<Option<usize>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let node = self.pick(p.target, want, &[], timeout)?;
        if node.is_none() && !p.optional {
            let what = self.no_node(p.target, want, timeout);
            self.ineffective(step, what);
        }
        Ok(node)
    }

    fn client(&mut self, client: &ClientStep, step: &Step) -> Result<(), Halt> {
        let op = match &client.op {
            ClientOp::Fixed(op) => op.clone(),
            ClientOp::Template(template) => {
                let seq = self.next_seq();
                let rng = &mut self.placeholders;
                let expanded =
                    expand_template(template, &mut |lo, hi| rng.random_range(lo..=hi), seq)
                        .and_then(|json| self.scenario.model.parse_op(&json));
                match expanded {
                    Ok(op) => op,
                    Err(message) => {
                        // Checked at load with the extreme draws; a model may still
                        // refuse a value between them.
                        let invalid = Data::InvalidOp {
                            workload: false,
                            message: message.clone(),
                        };
                        self.event(None, invalid);
                        self.check_op(client, "op template", step, &OpResult::error(message));
                        return Ok(());
                    }
                }
            }
        };
        let Some(node) = self.pick(client.target, Want::Up, &[], client.timeout)? else {
            let why = self.no_node(client.target, Want::Up, client.timeout);
            let no_node = Data::NoNode {
                op: op.summary.clone(),
                why: why.clone(),
            };
            self.event(None, no_node);
            self.check_op(client, &op.summary, step, &OpResult::error(why));
            return Ok(());
        };
        let summary = op.summary.clone();
        let action = Action::Client {
            node: self.names[node].clone(),
            op,
        };
        let result = self.act_client(action, client.wait.then_some(client.timeout))?;
        if let Some(result) = result {
            self.check_op(client, &summary, step, &result);
        }
        Ok(())
    }

    /// `{seq}` of the next op template expanded in this run.
    pub(crate) fn next_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    fn check_op(&mut self, client: &ClientStep, summary: &str, step: &Step, result: &OpResult) {
        let Some(expect) = &client.expect else { return };
        let ok = match expect {
            OpExpect::Ok => result.ok,
            OpExpect::Error(None) => !result.ok,
            OpExpect::Error(Some(text)) => {
                !result.ok
                    && result
                        .error
                        .as_deref()
                        .unwrap_or("")
                        .contains(text.as_str())
            }
        };
        if !ok {
            let want = match expect {
                OpExpect::Ok => "ok".to_string(),
                OpExpect::Error(None) => "an error".to_string(),
                OpExpect::Error(Some(text)) => format!("an error containing {text:?}"),
            };
            let (file, line, col) = (&self.scenario.file, step.loc.line, step.loc.col);
            let message = format!("{file}:{line}:{col}: {summary} expected {want}, got {result}");
            self.finding(Finding::new("op-expect", None, message));
        }
    }

    fn transfer_leader(
        &mut self,
        to: Target,
        timeout: Duration,
        optional: bool,
        step: &Step,
    ) -> Result<(), Halt> {
        let Some(leader) = self.pick(Target::Leader, Want::Up, &[], timeout)? else {
            if optional {
                return Ok(());
            }
            self.ineffective(
                step,
                format!(
                    "transfer_leader: no leader within {}",
                    fmt_duration(timeout)
                ),
            );
            return Ok(());
        };
        // `follower` and `any` pick, with the seed, an up node that does not lead.
        let taken = if to == Target::Any {
            vec![leader]
        } else {
            Vec::new()
        };
        let Some(to) = self.pick(to, Want::Up, &taken, timeout)? else {
            if optional {
                return Ok(());
            }
            self.ineffective(
                step,
                "transfer_leader: no up follower to transfer to".into(),
            );
            return Ok(());
        };
        if leader == to {
            if optional {
                return Ok(());
            }
            self.ineffective(
                step,
                format!("transfer_leader: {} already leads", self.names[to]),
            );
            return Ok(());
        }
        if !self.act_transfer(leader, to, timeout)? && !optional {
            let message = format!(
                "{}:{}:{}: transfer_leader: {} did not become leader within {}",
                self.scenario.file,
                step.loc.line,
                step.loc.col,
                self.names[to],
                fmt_duration(timeout)
            );
            self.finding(Finding::new("transfer", Some(Outcome::Stuck), message));
        }
        Ok(())
    }

    /// Resolve a partition's targets (the leader, now) into groups or a one-way cut.
    fn resolve_partition(&mut self, partition: &Partition) -> Result<Option<Partitioned>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let resolved = match partition {
            Partition::Groups(groups) => {
                let mut ids: Vec<Vec<usize>> = Vec::new();
                // `any`/`follower` picks differ from every node already placed.
                let mut taken = Vec::new();
                for group in groups {
                    let mut g = Vec::new();
                    for target in group {
                        let Some(id) = self.pick(*target, Want::Either, &taken, timeout)? else {
                            return Ok(None);
                        };
                        if !g.contains(&id) {
                            g.push(id);
                        }
                        taken.push(id);
                    }
                    ids.push(g);
                }
                Partitioned::Groups(ids)
            }
            Partition::Isolate(target) => {
                let Some(id) = self.pick(*target, Want::Either, &[], timeout)? else {
                    return Ok(None);
                };
                let others = (0..self.names.len()).filter(|&o| o != id).collect();
                Partitioned::Groups(vec![vec![id], others])
            }
            Partition::OneWay { from, to } => {
                let Some(from) = self.pick(*from, Want::Either, &[], timeout)? else {
                    return Ok(None);
                };
                let mut ids = Vec::new();
                for target in to {
                    let mut taken = ids.clone();
                    taken.push(from);
                    let Some(id) = self.pick(*target, Want::Either, &taken, timeout)? else {
                        return Ok(None);
                    };
                    if id != from && !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                Partitioned::OneWay { from, to: ids }
            }
        };
        Ok(Some(resolved))
    }

    fn partition(&mut self, partition: &Partition, step: &Step) -> Result<(), Halt> {
        let Some(resolved) = self.resolve_partition(partition)? else {
            self.ineffective(
                step,
                "partition: a reference named no node (no leader?)".into(),
            );
            return Ok(());
        };
        if resolved.cuts().is_empty() {
            self.ineffective(
                step,
                "partition: it cuts no link (the leader is on both sides?)".into(),
            );
            return Ok(());
        }
        let action = resolved.action(&self.names);
        self.perform(action);
        Ok(())
    }
}

/// A partition with every target resolved to a node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Partitioned {
    Groups(Vec<Vec<usize>>),
    OneWay { from: usize, to: Vec<usize> },
}

impl Partitioned {
    pub(crate) fn cuts(&self) -> Vec<Cut> {
        match self {
            Partitioned::Groups(groups) => Cut::between_groups(groups),
            Partitioned::OneWay { from, to } => to
                .iter()
                .map(|&t| Cut {
                    from: *from,
                    to: t,
                    oneway: true,
                })
                .collect(),
        }
    }

    /// The partition as an action on named nodes.
    pub(crate) fn action(&self, names: &[String]) -> Action {
        let name = |n: &usize| names[*n].clone();
        match self {
            Partitioned::Groups(groups) => Action::Partition {
                groups: groups
                    .iter()
                    .map(|g| g.iter().map(name).collect())
                    .collect(),
            },
            Partitioned::OneWay { from, to } => Action::PartitionOneWay {
                from: name(from),
                to: to.iter().map(name).collect(),
            },
        }
    }
}
