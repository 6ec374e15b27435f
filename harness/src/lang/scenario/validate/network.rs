//! The steps that act on the network and on leadership: `partition`, `hold`,
//! `release`, `latency` and `transfer_leader` (the table of step kinds, in
//! `steps`, names their readers).

use super::names::Reader;
use crate::lang::scenario::raw;
use crate::lang::scenario::*;
use crate::lang::yaml::{Node, Spanned, Value};
use std::collections::BTreeSet;

impl Reader<'_, '_> {
    /// `hold: {between: [a, b]}`: hold the messages between two nodes.
    pub(super) fn hold(&mut self, body: &Node) -> Option<StepKind> {
        let between: raw::Between = self.e.read(body)?;
        let (a, b) = self.node_pair(&between.between)?;
        Some(StepKind::Hold { a, b })
    }

    /// `latency: {between: [a, b], delay: 200ms | default}`.
    pub(super) fn latency(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.e.read::<raw::Latency2>(body)?;
        let pair = self.node_pair(&raw.between);
        let delay = match raw.delay.value.as_str() {
            "default" => None,
            _ => Some(self.e.duration(&raw.delay)?),
        };
        let (a, b) = pair?;
        Some(StepKind::Latency { a, b, delay })
    }

    pub(super) fn transfer_leader(&mut self, body: &Node) -> Option<StepKind> {
        let info = self.info;
        if !info.leader_transfer {
            self.e.error(
                body.loc,
                format!("model `{}` does not support `transfer_leader`", info.name),
            );
            return None;
        }
        let raw = match &body.value {
            Value::Str(to) => raw::TransferLeader {
                to: Spanned {
                    loc: body.loc,
                    value: to.clone(),
                },
                timeout: None,
                optional: false,
            },
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Seq(_)
            | Value::Map(_) => self.e.read::<raw::TransferLeader>(body)?,
        };
        if raw.to.value == "leader" {
            self.e.error_hint(
                raw.to.loc,
                "leadership cannot be transferred to the leader",
                "name a node, or write `follower` (picked with the run's seed)",
            );
            return None;
        }
        let to = self.target(&raw.to)?;
        let timeout = self.e.duration_or(&raw.timeout, self.settings.op_timeout);
        Some(StepKind::TransferLeader {
            to,
            timeout,
            optional: raw.optional,
        })
    }

    pub(super) fn partition(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.e.read::<raw::Partition>(body)?;
        let forms = [
            raw.groups.is_some(),
            raw.isolate.is_some(),
            raw.from.is_some() || raw.to.is_some(),
        ];
        if forms.iter().filter(|f| **f).count() != 1 {
            self.e.error_hint(
                body.loc,
                "a partition is one of: `groups`, `isolate`, or `from` + `to` (one-way)",
                "for example `{groups: [[n1], [n2, n3]]}`, `{isolate: leader}` or `{from: n1, to: [n2]}`",
            );
            return None;
        }
        if let Some(groups) = &raw.groups {
            let mut seen = BTreeSet::new();
            let mut targets = Vec::new();
            for group in groups {
                let mut g = Vec::new();
                for name in group {
                    let target = self.target(name)?;
                    if !seen.insert(name.value.clone()) {
                        self.e
                            .error(name.loc, format!("`{}` is in two groups", name.value));
                        return None;
                    }
                    g.push(target);
                }
                if g.is_empty() {
                    self.e.error(body.loc, "a partition group is empty");
                    return None;
                }
                targets.push(g);
            }
            if targets.len() < 2 {
                self.e.error(body.loc, "`groups` needs at least two groups");
                return None;
            }
            return Some(StepKind::Partition(Partition::Groups(targets)));
        }
        if let Some(isolate) = &raw.isolate {
            if self.nodes.len() < 2 {
                self.e
                    .error(isolate.loc, "isolating the only node cuts no link");
                return None;
            }
            return Some(StepKind::Partition(Partition::Isolate(
                self.target(isolate)?,
            )));
        }
        let (Some(from), Some(to)) = (&raw.from, &raw.to) else {
            self.e
                .error(body.loc, "a one-way partition needs both `from` and `to`");
            return None;
        };
        if to.is_empty() {
            self.e.error(body.loc, "`to` names at least one node");
            return None;
        }
        let from_target = self.target(from)?;
        let mut targets = Vec::new();
        for name in to {
            if name.value == from.value {
                self.e.error(name.loc, "a node cannot be cut from itself");
                return None;
            }
            targets.push(self.target(name)?);
        }
        Some(StepKind::Partition(Partition::OneWay {
            from: from_target,
            to: targets,
        }))
    }

    pub(super) fn release(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.e.read::<raw::Release>(body)?;
        match (&raw.between, &raw.failpoint) {
            (Some(between), None) if raw.node.is_none() => {
                let (a, b) = self.node_pair(between)?;
                Some(StepKind::Release { a, b })
            }
            (None, Some(point)) => {
                let Some(node) = &raw.node else {
                    self.e
                        .error(body.loc, "releasing a fail point needs `node`");
                    return None;
                };
                let node = self.target(node);
                let point = self.point(point);
                Some(StepKind::ReleaseFailPoint {
                    node: node?,
                    point: point?,
                })
            }
            _ => {
                self.e.error_hint(
                    body.loc,
                    "`release` takes `between: [a, b]` (held messages) or `node` + `failpoint` (a stalled point)",
                    "for example `{between: [n1, n2]}` or `{node: om1, failpoint: double_buffer.flush}`",
                );
                None
            }
        }
    }
}
