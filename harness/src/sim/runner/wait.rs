//! Stepping the simulation under the run's limits: every way the driver lets
//! simulated time pass goes through [`Driver::advance`], which checks the
//! duration, step, event and in-flight limits, reaps exited nodes and evaluates
//! the `always` invariants.

use super::{Driver, Halt};
use crate::base::streams::INCARNATIONS_MAX;
use crate::base::trail::Data;
use crate::judge::check::{expect, invariants};
use crate::lang::scenario::{Condition, Since};
use std::time::Duration;

/// How often (in simulation steps) the in-flight message count is checked.
const IN_FLIGHT_CHECK_STEPS: u64 = 256;

impl Driver<'_> {
    /// The duration, step and event limits: checked before every simulation step
    /// and before every scenario step (which may take no simulated time at all).
    pub(crate) fn check_limits(&mut self) -> Result<(), Halt> {
        let limits = &self.scenario.settings.limits;
        if self.cluster.elapsed() >= limits.duration {
            return Err(self.limit(format!(
                "simulated duration limit of {} reached",
                crate::base::duration::format(limits.duration)
            )));
        }
        if self.cluster.steps().saturating_add(self.script_steps) >= limits.steps {
            return Err(self.limit(format!(
                "step limit of {} steps (simulation steps and scenario steps) reached",
                limits.steps
            )));
        }
        if self.cluster.state().events_over {
            return Err(self.limit(format!("trail limit of {} events reached", limits.events)));
        }
        if let Some(node) = self.cluster.started_over(INCARNATIONS_MAX) {
            let message = format!(
                "{} was started {INCARNATIONS_MAX} times, the most one run may start a node",
                self.cluster.name(node)
            );
            return Err(self.limit(message));
        }
        Ok(())
    }

    /// One simulation step, with every limit checked.
    pub(crate) fn advance(&mut self) -> Result<(), Halt> {
        self.check_limits()?;
        self.tick_workloads()?;
        self.cluster.step()?;
        self.check_always();
        let limits = &self.scenario.settings.limits;
        if self.cluster.state().events_over {
            return Err(self.limit(format!("trail limit of {} events reached", limits.events)));
        }
        if self.cluster.steps().is_multiple_of(IN_FLIGHT_CHECK_STEPS) {
            self.cluster.expire_ops(self.scenario.settings.op_timeout);
            let in_flight = self.cluster.in_flight();
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
        if !std::mem::take(&mut self.cluster.state_mut().published_since_check) {
            return;
        }
        let info = self.scenario.model.info();
        let pending: Vec<&'static str> = info
            .invariants
            .iter()
            .filter(|i| i.kind == faultline_api::InvariantKind::Always)
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
                let checked = crate::base::trail::Checked {
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

    /// Run for a simulated duration.
    pub(crate) fn run_for(&mut self, duration: Duration) -> Result<(), Halt> {
        let until = self.cluster.elapsed() + duration;
        while self.cluster.elapsed() < until {
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
        let deadline = self.cluster.elapsed() + within;
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
            } => self.cluster.state().trail.len(),
            Condition::Event {
                since: Since::Run, ..
            }
            | Condition::Leader(_)
            | Condition::Applied { .. }
            | Condition::Up(_)
            | Condition::Down(_)
            | Condition::OpsDone
            | Condition::Quiescent
            | Condition::Observed(_) => 0,
        };
        loop {
            let holds = match condition {
                Condition::Event { event, .. } => {
                    let state = self.cluster.state();
                    let events = &state.trail.events[next_event..];
                    next_event = state.trail.len();
                    events.iter().any(|e| expect::matches(event, e))
                }
                Condition::Leader(_)
                | Condition::Applied { .. }
                | Condition::Up(_)
                | Condition::Down(_)
                | Condition::OpsDone
                | Condition::Quiescent
                | Condition::Observed(_) => self.holds(condition),
            };
            if holds {
                return Ok(true);
            }
            if self.cluster.elapsed() >= deadline {
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
        let deadline = self.cluster.elapsed() + within;
        let mut since: Option<Duration> = None;
        loop {
            let now = self.cluster.elapsed();
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

    pub(crate) fn holds(&self, condition: &Condition) -> bool {
        match condition {
            Condition::Leader(None) => self.leader().is_some(),
            Condition::Leader(Some(node)) => self.leader() == Some(*node),
            Condition::Applied { index, nodes } => {
                let applied = |i: usize| {
                    let state = self.cluster.state();
                    state.nodes[i].up && state.nodes[i].observation.applied.unwrap_or(0) >= *index
                };
                if nodes.is_empty() {
                    (0..self.cluster.len()).all(|i| !self.up(i) || applied(i))
                } else {
                    nodes
                        .iter()
                        .all(|&t| self.denoted(t).into_iter().any(applied))
                }
            }
            Condition::Up(target) => self.denoted(*target).into_iter().any(|n| self.up(n)),
            Condition::Down(target) => self.denoted(*target).into_iter().any(|n| !self.up(n)),
            Condition::OpsDone => self.cluster.state().open.is_empty(),
            Condition::Quiescent => self.quiescent(),
            Condition::Observed(m) => {
                let state = self.cluster.state();
                self.denoted(m.node).into_iter().any(|n| {
                    crate::judge::check::observed::passes(
                        &m.tests,
                        &state.nodes[n].observation,
                        &m.key,
                    )
                })
            }
            // Outside an await (which reads only new events), any event of the run.
            Condition::Event { event, .. } => self
                .cluster
                .state()
                .trail
                .iter()
                .any(|e| expect::matches(event, e)),
        }
    }
}
