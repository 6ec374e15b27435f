//! `await` steps: the conditions a script waits for.

use super::names::Reader;
use crate::scenario::raw;
use crate::scenario::{Condition, StepKind};
use crate::yaml::{Node, Value};
use std::time::Duration;

impl Reader<'_, '_> {
    pub(super) fn await_step(&mut self, body: &Node) -> Option<StepKind> {
        let default_within = Duration::from_secs(30);
        if let Value::Str(word) = &body.value {
            let condition = match word.as_str() {
                "leader" => Condition::Leader(None),
                "ops_done" => Condition::OpsDone,
                "quiescent" => Condition::Quiescent,
                other => {
                    self.e.unknown_name(
                        body.loc,
                        "await condition",
                        other,
                        ["leader", "ops_done", "quiescent"],
                    );
                    return None;
                }
            };
            if condition == Condition::Leader(None) && !self.info.has_leader {
                self.e.error(body.loc, "this model has no leader to await");
                return None;
            }
            return Some(StepKind::Await {
                condition,
                within: default_within,
                variants: Vec::new(),
            });
        }
        let raw = self.e.read::<raw::Await>(body)?;
        let given = [
            raw.leader.is_some(),
            raw.applied.is_some(),
            raw.up.is_some(),
            raw.down.is_some(),
            raw.ops_done.is_some(),
            raw.quiescent.is_some(),
            raw.observed.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            self.e.error_hint(
                body.loc,
                "`await` needs exactly one condition",
                "one of `leader`, `applied`, `up`, `down`, `ops_done`, `quiescent`, `observed`",
            );
            return None;
        }
        let within = self.e.duration_or(&raw.within, default_within);
        let condition = if let Some(leader) = &raw.leader {
            if !self.info.has_leader {
                self.e
                    .error(leader.loc, "this model has no leader to await");
                return None;
            }
            if leader.value == "any" {
                Condition::Leader(None)
            } else {
                Condition::Leader(Some(self.node_ref(leader)?))
            }
        } else if let Some(applied) = &raw.applied {
            let mut nodes = Vec::new();
            for name in raw.nodes.iter().flatten() {
                nodes.push(self.node_ref(name)?);
            }
            Condition::Applied {
                index: applied.value,
                nodes,
            }
        } else if let Some(up) = &raw.up {
            Condition::Up(self.node_ref(up)?)
        } else if let Some(down) = &raw.down {
            Condition::Down(self.node_ref(down)?)
        } else if raw.ops_done.is_some() {
            Condition::OpsDone
        } else if raw.quiescent.is_some() {
            Condition::Quiescent
        } else {
            let observed = raw.observed.as_ref().expect("one condition given");
            let node = self.node_ref(&observed.value.node)?;
            Condition::Observed {
                node,
                key: observed.value.key.clone(),
                value: observed.value.value.clone(),
            }
        };
        let variants = match &raw.variants {
            None => Vec::new(),
            Some(names) if names.is_empty() => {
                self.e.error_hint(
                    body.loc,
                    "`variants: []` names no variant, so the step would never run",
                    "leave `variants` out to run it in every variant",
                );
                return None;
            }
            Some(names) => self.step_variants(names)?,
        };
        Some(StepKind::Await {
            condition,
            within,
            variants,
        })
    }
}
