//! The interpreter: the one dispatching `match` over step kinds. Each step
//! resolves its targets (the leader, now) into [`Action`]s, which the nemesis
//! applies, and waits for what the step waits for. Client steps are in
//! `client.rs`, awaits and checks in `conditions.rs`, target resolution in
//! `pick.rs`.

use super::pick::Want;
use super::{Driver, Halt};
use crate::base::action::{Action, ActionResult};
use crate::base::duration::format as fmt_duration;
use crate::base::outcome::Outcome;
use crate::base::trail::Data;
use crate::judge::check::Finding;
use crate::lang::scenario::{
    ArmStep, NodeId, Partition, ProcessStep, Step, StepKind, Target, WorkloadStep,
};
use faultline_api::FailPointInfo;
use std::time::Duration;

impl Driver<'_> {
    /// Run one scenario step: resolve its targets (the leader, now) into actions,
    /// perform them, and do what the step waits for.
    pub(crate) fn exec(&mut self, step: &Step) -> Result<(), Halt> {
        self.cluster.state_mut().line = Some(step.loc.line);
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
            StepKind::Hold { a, b } => self.hold(*a, *b, step),
            StepKind::Release { a, b } => self.release(*a, *b, step),
            StepKind::Latency { a, b, delay } => self.latency(*a, *b, *delay, step),
            StepKind::Crash(p) => self.crash(p, step),
            StepKind::Restart(p) => self.restart(p, step),
            StepKind::Stop(p) => self.stop(p, step),
            StepKind::Start(p) => self.start(p, step),
            StepKind::FailPoint { node, arm } => self.arm(*node, arm, step),
            StepKind::ClearFailPoint { node, point } => self.clear_point(*node, point, step),
            StepKind::ReleaseFailPoint { node, point } => self.release_point(*node, point, step),
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
            StepKind::Workload(WorkloadStep::Start) => {
                let workload = self
                    .scenario
                    .workload
                    .as_ref()
                    .expect("validated: a workload step has a section");
                let source = super::workload::Source::Scenario;
                self.start_workload(source, workload, crate::base::streams::Stream::Workload);
                Ok(())
            }
            StepKind::Workload(WorkloadStep::Stop) => {
                self.stop_workload(super::workload::Source::Scenario);
                Ok(())
            }
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

    fn hold(&mut self, a: Target, b: Target, step: &Step) -> Result<(), Halt> {
        if let Some((a, b)) = self.pair(a, b, step)? {
            let between = self.names_of(a, b);
            self.perform(Action::Hold { between });
        }
        Ok(())
    }

    fn release(&mut self, a: Target, b: Target, step: &Step) -> Result<(), Halt> {
        let Some((a, b)) = self.pair(a, b, step)? else {
            return Ok(());
        };
        let between = self.names_of(a, b);
        let result = self.perform(Action::Release { between });
        if result == (ActionResult::Released { held: false }) {
            let message = format!(
                "release between {} and {}: nothing was held",
                self.cluster.name(a),
                self.cluster.name(b)
            );
            self.ineffective(step, message);
        }
        Ok(())
    }

    fn latency(
        &mut self,
        a: Target,
        b: Target,
        delay: Option<Duration>,
        step: &Step,
    ) -> Result<(), Halt> {
        if let Some((a, b)) = self.pair(a, b, step)? {
            let between = self.names_of(a, b);
            let delay_ms = delay.map(|d| d.as_millis() as u64);
            self.perform(Action::Latency { between, delay_ms });
        }
        Ok(())
    }

    fn crash(&mut self, p: &ProcessStep, step: &Step) -> Result<(), Halt> {
        if let Some(node) = self.process_node(p, Want::Up, step)? {
            let crash = Action::Crash {
                node: self.name(node),
            };
            if self.perform(crash) == ActionResult::NodeDown && !p.optional {
                let message = format!("crash of {}: it is already down", self.cluster.name(node));
                self.ineffective(step, message);
            }
        }
        Ok(())
    }

    fn restart(&mut self, p: &ProcessStep, step: &Step) -> Result<(), Halt> {
        if let Some(node) = self.process_node(p, Want::Either, step)? {
            let node = self.name(node);
            self.perform(Action::Restart { node });
        }
        Ok(())
    }

    fn stop(&mut self, p: &ProcessStep, step: &Step) -> Result<(), Halt> {
        if let Some(node) = self.process_node(p, Want::Up, step)? {
            if !self.act_stop(node)? && !p.optional {
                let message = format!("stop of {}: it is already down", self.cluster.name(node));
                self.ineffective(step, message);
            }
        }
        Ok(())
    }

    fn start(&mut self, p: &ProcessStep, step: &Step) -> Result<(), Halt> {
        if let Some(node) = self.process_node(p, Want::Down, step)? {
            let start = Action::Start {
                node: self.name(node),
            };
            if self.perform(start) == ActionResult::NodeUp && !p.optional {
                let message = format!("start of {}: it is already up", self.cluster.name(node));
                self.ineffective(step, message);
            }
        }
        Ok(())
    }

    fn arm(&mut self, node: Target, arm: &ArmStep, step: &Step) -> Result<(), Halt> {
        if let Some(node) = self.step_node(node, Want::Either, step)? {
            self.perform(Action::ArmFailPoint {
                node: self.name(node),
                point: arm.point.name.to_string(),
                fault: arm.action.clone(),
                count: arm.count,
                probability: arm.probability,
                optional: arm.optional,
            });
        }
        Ok(())
    }

    fn clear_point(
        &mut self,
        node: Target,
        point: &FailPointInfo,
        step: &Step,
    ) -> Result<(), Halt> {
        if let Some(node) = self.step_node(node, Want::Either, step)? {
            self.perform(Action::ClearFailPoint {
                node: self.name(node),
                point: point.name.to_string(),
            });
        }
        Ok(())
    }

    fn release_point(
        &mut self,
        node: Target,
        point: &FailPointInfo,
        step: &Step,
    ) -> Result<(), Halt> {
        let Some(node) = self.step_node(node, Want::Either, step)? else {
            return Ok(());
        };
        let release = Action::ReleaseFailPoint {
            node: self.name(node),
            point: point.name.to_string(),
        };
        if self.perform(release) == (ActionResult::Woken { tasks: 0 }) {
            let message = format!(
                "release of {} on {}: no task was stalled there",
                point.name,
                self.cluster.name(node)
            );
            self.ineffective(step, message);
        }
        Ok(())
    }

    /// Two nodes by name, for a link action.
    fn names_of(&self, a: NodeId, b: NodeId) -> [String; 2] {
        [self.name(a), self.name(b)]
    }

    pub(crate) fn ineffective(&mut self, step: &Step, message: String) {
        let file = &self.scenario.file;
        let message = format!(
            "{file}:{}:{}: {message}; the step had no effect",
            step.loc.line, step.loc.col
        );
        self.finding(Finding::new("fault-effectiveness", None, message));
    }

    fn transfer_leader(
        &mut self,
        to: Target,
        timeout: Duration,
        optional: bool,
        step: &Step,
    ) -> Result<(), Halt> {
        // An optional transfer is a replayed chaos draw: like the nemesis, it
        // does not wait for a leader or a follower to appear.
        let wait = if optional { Duration::ZERO } else { timeout };
        let Some(leader) = self.pick(Target::Leader, Want::Up, &[], wait)? else {
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
        let Some(to) = self.pick(to, Want::Up, &taken, wait)? else {
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
                format!("transfer_leader: {} already leads", self.cluster.name(to)),
            );
            return Ok(());
        }
        if !self.act_transfer(leader, to, timeout)? && !optional {
            let message = format!(
                "{}:{}:{}: transfer_leader: {} did not become leader within {}",
                self.scenario.file,
                step.loc.line,
                step.loc.col,
                self.cluster.name(to),
                fmt_duration(timeout)
            );
            self.finding(Finding::new("transfer", Some(Outcome::Stuck), message));
        }
        Ok(())
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
        let action = resolved.action(self.cluster.names());
        self.perform(action);
        Ok(())
    }
}
