//! Conditions: how an await describes what it waits for and what it saw
//! instead, the await step itself, and mid-run `check` steps.

use super::{Driver, Halt};
use crate::base::duration::format as fmt_duration;
use crate::base::outcome::Outcome;
use crate::base::trail::{AwaitEnd, Awaited, Checked, Data};
use crate::judge::check::Finding;
use crate::lang::scenario::{CheckStep, Condition, Since, Step, Target};
use std::time::Duration;

impl Driver<'_> {
    /// A log position in the model's form (a zxid in hex).
    fn show_index(&self, index: u64) -> String {
        self.scenario.model.info().index_format.show(index)
    }

    pub(crate) fn describe_condition(&self, condition: &Condition) -> String {
        match condition {
            Condition::Leader(None) => "a leader".into(),
            Condition::Leader(Some(n)) => format!("{} leading", self.cluster.name(*n)),
            Condition::Applied { index, nodes } if nodes.is_empty() => {
                format!("every up node applied >= {}", self.show_index(*index))
            }
            Condition::Applied { index, nodes } => {
                let names: Vec<String> = nodes
                    .iter()
                    .map(|n| n.describe(self.cluster.names()))
                    .collect();
                format!(
                    "{} applied >= {}",
                    names.join(", "),
                    self.show_index(*index)
                )
            }
            Condition::Up(n) => format!("{} up", n.describe(self.cluster.names())),
            Condition::Down(n) => format!("{} down", n.describe(self.cluster.names())),
            Condition::OpsDone => "every op completed".into(),
            Condition::Quiescent => "quiescence".into(),
            Condition::Observed(m) => format!(
                "{}.{} {}",
                m.node.describe(self.cluster.names()),
                m.key,
                crate::judge::check::observed::describe(&m.tests)
            ),
            Condition::Event { event, since } => {
                let since = match since {
                    Since::Step => "",
                    Since::Run => " (since the run began)",
                };
                format!(
                    "an event with {}{since}",
                    crate::judge::check::expect::describe(event)
                )
            }
        }
    }

    /// What an `observed` await saw instead, so a miss says how far off the node was.
    fn seen(&self, condition: &Condition) -> String {
        let Condition::Observed(m) = condition else {
            return String::new();
        };
        let state = self.cluster.state();
        let seen: Vec<String> = self
            .denoted(m.node)
            .into_iter()
            .map(|n| {
                let what = crate::judge::check::observed::seen(&state.nodes[n].observation, &m.key);
                match m.node {
                    Target::Node(_) => format!("it is {what}"),
                    Target::Leader | Target::Follower | Target::Any | Target::Role(_) => {
                        format!("{} {what}", self.cluster.name(n))
                    }
                }
            })
            .collect();
        if seen.is_empty() {
            return " (no node to look at)".into();
        }
        format!(" ({})", seen.join(", "))
    }

    pub(crate) fn await_condition(
        &mut self,
        condition: &Condition,
        within: Duration,
        step: &Step,
    ) -> Result<(), Halt> {
        let what = self.describe_condition(condition);
        let start = self.cluster.elapsed();
        if self.run_until(condition, within)? {
            let took = self.cluster.elapsed() - start;
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

    pub(crate) fn check_step(&mut self, check: &CheckStep, step: &Step) -> Result<(), Halt> {
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
                let mut findings = crate::judge::check::guarded("divergence", || {
                    crate::judge::check::divergence::check(&view, format)
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
                crate::judge::check::invariants::check_one(self.scenario.model, name, &self.view())
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
}
