//! The one dispatching `match` over step kinds. Each arm calls one function.

use super::{Driver, Halt};
use crate::check::Finding;
use crate::duration::format as fmt_duration;
use crate::faults::describe;
use crate::outcome::Outcome;
use crate::scenario::{
    ArmStep, CheckStep, ClientStep, Condition, Cut, OpExpect, Partition, ProcessStep, Step,
    StepKind, Target,
};
use crate::trail::Kind;
use nodes::api::{Command, OpResult};
use std::time::Duration;

/// How long a clean `stop` may take before the node is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

impl Driver<'_> {
    pub(crate) fn exec(&mut self, step: &Step) -> Result<(), Halt> {
        self.state.borrow_mut().line = Some(step.loc.line);
        match &step.kind {
            StepKind::Client(client) => self.client(client, step),
            StepKind::TransferLeader { to, timeout } => self.transfer_leader(*to, *timeout, step),
            StepKind::Partition(partition) => self.partition(partition, step),
            StepKind::Heal => {
                let names = self.names.clone();
                let repaired = self.net.repair_all(&self.sim, &names);
                self.event(
                    None,
                    Kind::Network,
                    format!("heal: repaired {repaired} cut link(s)"),
                );
                Ok(())
            }
            StepKind::Hold { a, b } => {
                let names = self.names.clone();
                self.net.hold(&self.sim, &names, *a, *b);
                self.event(
                    None,
                    Kind::Network,
                    format!("hold messages between {} and {}", names[*a], names[*b]),
                );
                Ok(())
            }
            StepKind::Release { a, b } => {
                let names = self.names.clone();
                let held = self.net.release(&self.sim, &names, *a, *b);
                if !held {
                    self.ineffective(
                        step,
                        format!(
                            "release between {} and {}: nothing was held",
                            names[*a], names[*b]
                        ),
                    );
                }
                self.event(
                    None,
                    Kind::Network,
                    format!("release messages between {} and {}", names[*a], names[*b]),
                );
                Ok(())
            }
            StepKind::Latency { a, b, delay } => {
                let names = self.names.clone();
                self.net.set_latency(&self.sim, &names, *a, *b, *delay);
                let detail = format!(
                    "latency {} between {} and {}",
                    fmt_duration(*delay),
                    names[*a],
                    names[*b]
                );
                self.event(None, Kind::Network, detail);
                Ok(())
            }
            StepKind::Crash(p) => match self.process_node(p, step)? {
                Some(node) => {
                    self.crash(node, p.optional, step);
                    Ok(())
                }
                None => Ok(()),
            },
            StepKind::Restart(p) => match self.process_node(p, step)? {
                Some(node) => {
                    self.restart(node);
                    Ok(())
                }
                None => Ok(()),
            },
            StepKind::Stop(p) => match self.process_node(p, step)? {
                Some(node) => self.stop(node, p.optional, step),
                None => Ok(()),
            },
            StepKind::Start(p) => match self.process_node(p, step)? {
                Some(node) => {
                    self.start(node, p.optional, step);
                    Ok(())
                }
                None => Ok(()),
            },
            StepKind::FailPoint(arm) => {
                self.arm(arm, step);
                Ok(())
            }
            StepKind::ClearFailPoint { node, point } => {
                let cleared = self
                    .state
                    .borrow_mut()
                    .faults
                    .clear(&self.names[*node], point.name);
                let detail = if cleared { "cleared" } else { "was not armed" };
                self.event(
                    Some(*node),
                    Kind::FailPointClear,
                    format!("{}: {detail}", point.name),
                );
                Ok(())
            }
            StepKind::ReleaseFailPoint { node, point } => {
                let woken = self
                    .state
                    .borrow_mut()
                    .faults
                    .release(&self.names[*node], point.name);
                if woken == 0 {
                    self.ineffective(
                        step,
                        format!(
                            "release of {} on {}: no task was stalled there",
                            point.name, self.names[*node]
                        ),
                    );
                }
                self.event(
                    Some(*node),
                    Kind::FailPointRelease,
                    format!("{}: released {woken} stalled task(s)", point.name),
                );
                Ok(())
            }
            StepKind::Sleep(duration) => {
                self.event(
                    None,
                    Kind::Sleep,
                    format!("sleep {}", fmt_duration(*duration)),
                );
                self.run_for(*duration)
            }
            StepKind::Await { condition, within } => self.await_condition(condition, *within, step),
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

    fn ineffective(&mut self, step: &Step, message: String) {
        let file = &self.scenario.file;
        let message = format!(
            "{file}:{}:{}: {message}; the step had no effect",
            step.loc.line, step.loc.col
        );
        self.finding(Finding::new("fault-effectiveness", None, message));
    }

    fn describe_condition(&self, condition: &Condition) -> String {
        match condition {
            Condition::Leader(None) => "a leader".into(),
            Condition::Leader(Some(n)) => format!("{} leading", self.names[*n]),
            Condition::Applied { index, nodes } if nodes.is_empty() => {
                format!("every up node applied >= {index}")
            }
            Condition::Applied { index, nodes } => {
                let names: Vec<&str> = nodes.iter().map(|n| self.names[*n].as_str()).collect();
                format!("{} applied >= {index}", names.join(", "))
            }
            Condition::Up(n) => format!("{} up", self.names[*n]),
            Condition::Down(n) => format!("{} down", self.names[*n]),
            Condition::OpsDone => "every op completed".into(),
            Condition::Quiescent => "quiescence".into(),
            Condition::Observed { node, key, value } => {
                format!("{}.{key} = {value:?}", self.names[*node])
            }
        }
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
            self.event(
                None,
                Kind::Await,
                format!("await {what}: reached after {}", fmt_duration(took)),
            );
            return Ok(());
        }
        let message = format!(
            "{}:{}:{}: await {what} missed its deadline of {}",
            self.scenario.file,
            step.loc.line,
            step.loc.col,
            fmt_duration(within)
        );
        self.event(
            None,
            Kind::Await,
            format!(
                "await {what}: missed its deadline of {}",
                fmt_duration(within)
            ),
        );
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
                let mut findings =
                    crate::check::guarded("divergence", || crate::check::divergence::check(&view));
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
            self.event(None, Kind::Check, format!("check {what}: pass"));
        }
        for mut finding in findings {
            self.event(
                None,
                Kind::Check,
                format!("check {what}: {}", finding.message),
            );
            finding.message = format!("{line}: mid-run check {what}: {}", finding.message);
            self.finding(finding);
        }
        Ok(())
    }

    // ---- client operations ----

    fn resolve(&mut self, target: Target, timeout: Duration) -> Result<Option<usize>, Halt> {
        match target {
            Target::Node(n) => Ok(Some(n)),
            Target::Leader => {
                self.run_until(&Condition::Leader(None), timeout)?;
                Ok(self.leader())
            }
        }
    }

    /// Send a command to a node's inbox; returns the op id.
    fn send(
        &mut self,
        node: usize,
        summary: String,
        admin: bool,
        make: impl FnOnce(u64) -> Command,
    ) -> Option<u64> {
        let id = self.next_op;
        self.next_op += 1;
        let t_ms = self.sim.elapsed().as_millis() as u64;
        let mut state = self.state.borrow_mut();
        let record = super::env::OpRecord {
            id,
            node: self.names[node].clone(),
            summary,
            invoked_ms: t_ms,
            result: None,
            completed_ms: None,
            timed_out: false,
            admin,
        };
        state.ops.insert(id, record);
        let sent = state.nodes[node]
            .inbox
            .as_ref()
            .map(|inbox| inbox.send(make(id)).is_ok())
            .unwrap_or(false);
        sent.then_some(id)
    }

    fn client(&mut self, client: &ClientStep, step: &Step) -> Result<(), Halt> {
        let summary = client.op.summary.clone();
        let Some(node) = self.resolve(client.target, client.timeout)? else {
            self.event(
                None,
                Kind::OpError,
                format!(
                    "{summary} -> error no leader within {}",
                    fmt_duration(client.timeout)
                ),
            );
            self.check_op(client, step, &OpResult::error("no leader"));
            return Ok(());
        };
        if !self.up(node) {
            self.event(
                Some(node),
                Kind::OpError,
                format!("{summary} -> error node down"),
            );
            self.check_op(client, step, &OpResult::error("node down"));
            return Ok(());
        }
        self.event(Some(node), Kind::OpInvoke, summary.clone());
        let op = client.op.op.clone();
        let Some(id) = self.send(node, summary.clone(), false, |id| Command::Op { id, op }) else {
            self.event(
                Some(node),
                Kind::OpError,
                format!("{summary} -> error node not accepting commands"),
            );
            return Ok(());
        };
        if !client.wait {
            return Ok(());
        }
        let deadline = self.sim.elapsed() + client.timeout;
        while self.state.borrow().ops[&id].result.is_none() && self.sim.elapsed() < deadline {
            self.advance()?;
        }
        let result = self.state.borrow().ops[&id].result.clone();
        match result {
            Some(result) => self.check_op(client, step, &result),
            None => {
                self.state
                    .borrow_mut()
                    .ops
                    .get_mut(&id)
                    .expect("recorded")
                    .timed_out = true;
                self.event(
                    Some(node),
                    Kind::OpTimeout,
                    format!(
                        "{summary} -> no answer within {}",
                        fmt_duration(client.timeout)
                    ),
                );
                self.check_op(client, step, &OpResult::error("timeout"));
            }
        }
        Ok(())
    }

    fn check_op(&mut self, client: &ClientStep, step: &Step, result: &OpResult) {
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
            let message = format!(
                "{}:{}:{}: {} expected {want}, got {result}",
                self.scenario.file, step.loc.line, step.loc.col, client.op.summary
            );
            self.finding(Finding::new("op-expect", None, message));
        }
    }

    fn transfer_leader(
        &mut self,
        to: Option<usize>,
        timeout: Duration,
        step: &Step,
    ) -> Result<(), Halt> {
        let Some(leader) = self.resolve(Target::Leader, timeout)? else {
            let message = format!(
                "transfer_leader: no leader within {}",
                fmt_duration(timeout)
            );
            self.ineffective(step, message);
            return Ok(());
        };
        let follower = (0..self.names.len()).find(|&n| n != leader && self.up(n));
        let Some(to) = to.or(follower) else {
            self.ineffective(
                step,
                "transfer_leader: no up follower to transfer to".into(),
            );
            return Ok(());
        };
        if leader == to {
            self.ineffective(
                step,
                format!("transfer_leader: {} already leads", self.names[to]),
            );
            return Ok(());
        }
        let target = self.names[to].clone();
        let summary = format!("transfer leadership {} -> {target}", self.names[leader]);
        self.event(Some(leader), Kind::Transfer, summary.clone());
        let sent = self.send(leader, summary, true, |id| Command::TransferLeader {
            id,
            to: target.clone(),
        });
        if sent.is_none() {
            self.ineffective(
                step,
                format!(
                    "transfer_leader: {} is not accepting commands",
                    self.names[leader]
                ),
            );
            return Ok(());
        }
        if !self.run_until(&Condition::Leader(Some(to)), timeout)? {
            let message = format!(
                "{}:{}:{}: transfer_leader: {target} did not become leader within {}",
                self.scenario.file,
                step.loc.line,
                step.loc.col,
                fmt_duration(timeout)
            );
            self.finding(Finding::new("transfer", Some(Outcome::Stuck), message));
        }
        Ok(())
    }

    // ---- network ----

    /// Resolve the partition's targets (the leader, now) into the links it cuts.
    fn cuts(&mut self, partition: &Partition) -> Result<Option<Vec<Cut>>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let resolve = |driver: &mut Self, target: Target| driver.resolve(target, timeout);
        let mut cuts = Vec::new();
        match partition {
            Partition::Groups(groups) => {
                let mut ids: Vec<Vec<usize>> = Vec::new();
                for group in groups {
                    let mut g = Vec::new();
                    for target in group {
                        let Some(id) = resolve(self, *target)? else {
                            return Ok(None);
                        };
                        g.push(id);
                    }
                    ids.push(g);
                }
                for (i, a) in ids.iter().enumerate() {
                    for b in &ids[i + 1..] {
                        for &x in a {
                            for &y in b.iter().filter(|&&y| y != x) {
                                cuts.push(Cut {
                                    from: x,
                                    to: y,
                                    oneway: false,
                                });
                            }
                        }
                    }
                }
            }
            Partition::Isolate(target) => {
                let Some(id) = resolve(self, *target)? else {
                    return Ok(None);
                };
                cuts.extend((0..self.names.len()).filter(|&o| o != id).map(|o| Cut {
                    from: id,
                    to: o,
                    oneway: false,
                }));
            }
            Partition::OneWay { from, to } => {
                let Some(from) = resolve(self, *from)? else {
                    return Ok(None);
                };
                for target in to {
                    let Some(id) = resolve(self, *target)? else {
                        return Ok(None);
                    };
                    if id != from {
                        cuts.push(Cut {
                            from,
                            to: id,
                            oneway: true,
                        });
                    }
                }
            }
        }
        Ok(Some(cuts))
    }

    fn partition(&mut self, partition: &Partition, step: &Step) -> Result<(), Halt> {
        let Some(cuts) = self.cuts(partition)? else {
            self.ineffective(step, "partition: no leader to cut".into());
            return Ok(());
        };
        if cuts.is_empty() {
            self.ineffective(
                step,
                "partition: it cuts no link (the leader is on both sides?)".into(),
            );
            return Ok(());
        }
        let names = self.names.clone();
        for cut in &cuts {
            self.net.cut(&self.sim, &names, *cut);
        }
        let shown: Vec<String> = cuts
            .iter()
            .map(|c| {
                format!(
                    "{}{}{}",
                    names[c.from],
                    if c.oneway { " -/-> " } else { " <-/-> " },
                    names[c.to]
                )
            })
            .collect();
        self.event(
            None,
            Kind::Network,
            format!("partition {}", shown.join(", ")),
        );
        Ok(())
    }

    // ---- processes ----

    /// The node a process step acts on; `None` (recorded as ineffective) when it
    /// names the leader and there is none.
    fn process_node(&mut self, p: &ProcessStep, step: &Step) -> Result<Option<usize>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let node = self.resolve(p.target, timeout)?;
        if node.is_none() && !p.optional {
            self.ineffective(
                step,
                format!("no leader within {} to act on", fmt_duration(timeout)),
            );
        }
        Ok(node)
    }

    fn crash(&mut self, node: usize, optional: bool, step: &Step) {
        if !self.up(node) {
            if !optional {
                self.ineffective(
                    step,
                    format!("crash of {}: it is already down", self.names[node]),
                );
            }
            self.event(Some(node), Kind::Crash, "crash: already down");
            return;
        }
        self.kill(node);
        self.event(Some(node), Kind::Crash, "crash (unsynced writes lost)");
    }

    fn restart(&mut self, node: usize) {
        let was_up = self.up(node);
        if was_up {
            self.kill(node);
        }
        self.boot(node);
        let detail = if was_up {
            "restart: crash, then start from durable state"
        } else {
            "restart: start from durable state (was down)"
        };
        self.event(Some(node), Kind::Restart, detail);
    }

    fn stop(&mut self, node: usize, optional: bool, step: &Step) -> Result<(), Halt> {
        if !self.up(node) {
            if !optional {
                self.ineffective(
                    step,
                    format!("stop of {}: it is already down", self.names[node]),
                );
            }
            return Ok(());
        }
        self.event(Some(node), Kind::Stop, "stop: clean shutdown requested");
        let sent = self.state.borrow().nodes[node]
            .inbox
            .as_ref()
            .map(|i| i.send(Command::Stop).is_ok())
            .unwrap_or(false);
        let deadline = self.sim.elapsed() + STOP_TIMEOUT;
        while sent
            && !self.state.borrow().nodes[node].stopped
            && self.up(node)
            && self.sim.elapsed() < deadline
        {
            self.advance()?;
        }
        let clean = self.state.borrow().nodes[node].stopped;
        if self.up(node) {
            self.kill(node);
        }
        let detail = if clean {
            "stopped cleanly"
        } else {
            "did not stop cleanly within 10s; killed"
        };
        self.event(Some(node), Kind::Stop, detail);
        Ok(())
    }

    fn start(&mut self, node: usize, optional: bool, step: &Step) {
        if self.up(node) {
            if !optional {
                self.ineffective(
                    step,
                    format!("start of {}: it is already up", self.names[node]),
                );
            }
            return;
        }
        self.boot(node);
        self.event(Some(node), Kind::Start, "start from durable state");
    }

    // ---- fail points ----

    fn arm(&mut self, arm: &ArmStep, step: &Step) {
        let node = self.names[arm.node].clone();
        let mut detail = format!("{}: {}", arm.point.name, describe(&arm.action));
        if let Some(count) = arm.count {
            detail.push_str(&format!(", {count} time(s)"));
        }
        if let Some(p) = arm.probability {
            detail.push_str(&format!(", p={p}"));
        }
        self.state.borrow_mut().faults.arm(
            &node,
            arm.point.name,
            arm.action.clone(),
            arm.count,
            arm.probability,
            arm.optional,
            step.loc,
        );
        self.event(Some(arm.node), Kind::FailPointArm, detail);
    }
}
