//! Phase two: the steps. The one place that reads each step kind, and the kinds
//! that need no reader of their own.

use super::names::Reader;
use super::{EXPANDED_STEPS_MAX, FAULTS_MAX, REPEAT_COUNT_MAX, STEPS_MAX};
use crate::scenario::raw;
use crate::scenario::*;
use crate::yaml::{Node, Spanned, Value};
use nodes::api::FailPointInfo;
use std::collections::BTreeSet;
use std::time::Duration;

/// A step kind as files write it: its name, whether it injects a fault (bounded
/// by FAULTS_MAX), and its reader. One row per kind: the one place that names
/// and reads each (a new kind is a row here and a variant of `StepKind`).
struct KindSpec {
    name: &'static str,
    fault: bool,
    read: Read,
}

type Read = fn(&mut Reader<'_, '_>, &Node) -> Option<StepKind>;

const KINDS: &[KindSpec] = &[
    step("client", |r, body| r.client(body)),
    fault("transfer_leader", |r, body| r.transfer_leader(body)),
    fault("partition", |r, body| r.partition(body)),
    step("heal", |r, body| r.heal(body)),
    fault("hold", |r, body| r.hold(body)),
    step("release", |r, body| r.release(body)),
    fault("latency", |r, body| r.latency(body)),
    fault("crash", |r, body| {
        r.process(body, true).map(StepKind::Crash)
    }),
    fault("restart", |r, body| {
        r.process(body, true).map(StepKind::Restart)
    }),
    fault("stop", |r, body| r.process(body, true).map(StepKind::Stop)),
    step("start", |r, body| {
        r.process(body, false).map(StepKind::Start)
    }),
    fault("failpoint", |r, body| r.failpoint(body)),
    step("clear_failpoint", |r, body| r.clear_failpoint(body)),
    step("sleep", |r, body| r.sleep(body)),
    step("await", |r, body| r.await_step(body)),
    step("check", |r, body| r.check(body)),
    step("repeat", |r, body| r.repeat(body)),
    step("workload", |r, body| r.workload_step(body)),
];

/// A step kind that injects no fault.
const fn step(name: &'static str, read: Read) -> KindSpec {
    KindSpec {
        name,
        fault: false,
        read,
    }
}

/// A step kind that injects a fault.
const fn fault(name: &'static str, read: Read) -> KindSpec {
    KindSpec {
        name,
        fault: true,
        read,
    }
}

impl Reader<'_, '_> {
    pub(super) fn steps(&mut self, node: &Node) -> Vec<Step> {
        let Value::Seq(items) = &node.value else {
            self.e.error(
                node.loc,
                format!("`steps` is a list, found {}", node.kind_name()),
            );
            return Vec::new();
        };
        if items.is_empty() {
            self.e.error_hint(
                node.loc,
                "`steps` is empty: a run that tests nothing is not green",
                "add at least one step",
            );
        }
        let mut steps = Vec::new();
        // Counted over the items written, valid or not: a list of 200,000 bad
        // steps would otherwise make as many errors.
        for (i, item) in items.iter().enumerate() {
            if i >= STEPS_MAX {
                self.e
                    .error(item.loc, format!("more than {STEPS_MAX} steps in one list"));
                break;
            }
            if let Some(step) = self.step(item) {
                steps.push(step);
            }
        }
        steps
    }

    pub(super) fn step(&mut self, node: &Node) -> Option<Step> {
        let (key, body) = match &node.value {
            Value::Map(entries) if entries.len() == 1 => (&entries[0].0, &entries[0].1),
            Value::Str(kind) => {
                self.e.error_hint(
                    node.loc,
                    format!("step `{kind}` needs a value"),
                    format!("write `- {kind}: ...`"),
                );
                return None;
            }
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Seq(_)
            | Value::Map(_) => {
                self.e.error_hint(
                    node.loc,
                    "a step is a mapping with one key, the step kind",
                    "for example `- crash: n1` or `- sleep: 2s`",
                );
                return None;
            }
        };
        let name = key.as_str().unwrap_or("");
        let Some(kind) = KINDS.iter().find(|k| k.name == name) else {
            self.e
                .unknown_name(key.loc, "step kind", name, step_kind_names());
            return None;
        };
        if kind.fault {
            self.faults += 1;
            if self.faults == FAULTS_MAX + 1 {
                self.e
                    .error(key.loc, format!("more than {FAULTS_MAX} fault steps"));
            }
        }
        let kind = (kind.read)(self, body)?;
        Some(Step { loc: key.loc, kind })
    }

    /// `heal: all`: repair every partition.
    fn heal(&mut self, body: &Node) -> Option<StepKind> {
        match &body.value {
            Value::Null | Value::Bool(true) => Some(StepKind::Heal),
            Value::Map(m) if m.is_empty() => Some(StepKind::Heal),
            Value::Str(s) if s == "all" => Some(StepKind::Heal),
            Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => {
                self.e.error(
                    body.loc,
                    "`heal` repairs every partition: write `- heal: all`",
                );
                None
            }
        }
    }

    /// `hold: {between: [a, b]}`: hold the messages between two nodes.
    fn hold(&mut self, body: &Node) -> Option<StepKind> {
        let between: raw::Between = self.e.read(body)?;
        let (a, b) = self.node_pair(&between.between)?;
        Some(StepKind::Hold { a, b })
    }

    /// `latency: {between: [a, b], delay: 200ms | default}`.
    fn latency(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.e.read::<raw::Latency2>(body)?;
        let pair = self.node_pair(&raw.between);
        let delay = match raw.delay.value.as_str() {
            "default" => None,
            _ => Some(self.e.duration(&raw.delay)?),
        };
        let (a, b) = pair?;
        Some(StepKind::Latency { a, b, delay })
    }

    /// `clear_failpoint: {node, point}`.
    fn clear_failpoint(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.e.read::<raw::PointRef>(body)?;
        let node = self.target(&raw.node);
        let point = self.point(&raw.point);
        Some(StepKind::ClearFailPoint {
            node: node?,
            point: point?,
        })
    }

    /// `sleep: 2s`.
    fn sleep(&mut self, body: &Node) -> Option<StepKind> {
        let text = self.e.read::<Spanned<String>>(body)?;
        self.e.duration(&text).map(StepKind::Sleep)
    }

    /// `repeat: {count, steps}`, bounded by the expanded step limit.
    fn repeat(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.e.read::<raw::Repeat>(body)?;
        if raw.count.value == 0 || raw.count.value > REPEAT_COUNT_MAX {
            self.e
                .error(raw.count.loc, format!("`count` is 1..={REPEAT_COUNT_MAX}"));
            return None;
        }
        let steps = self.steps(body.get("steps").expect("serde checked"));
        let expanded = u64::from(raw.count.value).saturating_mul(expanded_steps(&steps));
        if expanded > EXPANDED_STEPS_MAX {
            self.e.error_hint(
                raw.count.loc,
                format!(
                    "this `repeat` runs {expanded} steps; the limit is {EXPANDED_STEPS_MAX} for a whole scenario"
                ),
                "lower `count`, or use `chaos` for long random runs",
            );
            return None;
        }
        Some(StepKind::Repeat {
            count: raw.count.value,
            steps,
        })
    }

    /// `workload: start` or `workload: stop`, of the scenario's `workload:` section.
    fn workload_step(&mut self, body: &Node) -> Option<StepKind> {
        let step = match body.as_str() {
            Some("start") => WorkloadStep::Start,
            Some("stop") => WorkloadStep::Stop,
            _ => {
                self.e.error_hint(
                    body.loc,
                    "a workload step is `workload: start` or `workload: stop`",
                    "the ops, clients and rate go in the top-level `workload:` section",
                );
                return None;
            }
        };
        if !self.has_workload {
            self.e.error_hint(
                body.loc,
                "`workload: start`/`stop` with no top-level `workload:` section",
                "add `workload: {clients: 3, every: 50ms, ops: [...]}` to the scenario",
            );
            return None;
        }
        if step == WorkloadStep::Start {
            self.workload_starts += 1;
        }
        Some(StepKind::Workload(step))
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

    pub(super) fn process(&mut self, body: &Node, leader_ok: bool) -> Option<ProcessStep> {
        let raw = match &body.value {
            Value::Str(name) => raw::Process {
                node: Spanned {
                    loc: body.loc,
                    value: name.clone(),
                },
                optional: false,
            },
            Value::Map(_) => self.e.read::<raw::Process>(body)?,
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Seq(_) => {
                self.e.error(
                    body.loc,
                    "name a node: `- crash: n1` or `- crash: {node: n1, optional: true}`",
                );
                return None;
            }
        };
        if raw.node.value == "leader" && !leader_ok {
            self.e.error(
                raw.node.loc,
                "a down node cannot be the leader: name the node to start, or write `any`",
            );
            return None;
        }
        let target = self.target(&raw.node)?;
        Some(ProcessStep {
            target,
            optional: raw.optional,
        })
    }

    pub(super) fn fault_action(
        &mut self,
        point: &'static FailPointInfo,
        action: &Spanned<raw::Action>,
    ) -> Option<FaultAction> {
        let loc = action.loc;
        match &action.value {
            raw::Action::Error(_) if point.errors.is_empty() => {
                self.e
                    .error(loc, format!("fail point `{}` raises no errors", point.name));
                None
            }
            raw::Action::Error(kind) if !point.errors.contains(&kind.as_str()) => {
                self.e
                    .unknown_name(loc, "error kind", kind, point.errors.iter().copied());
                None
            }
            raw::Action::Error(kind) => Some(FaultAction::Error(kind.clone())),
            raw::Action::Panic if point.panic => Some(FaultAction::Panic),
            raw::Action::Panic => {
                self.e
                    .error(loc, format!("fail point `{}` cannot panic", point.name));
                None
            }
            raw::Action::Stall(_) if !point.stall => {
                let message = format!(
                    "fail point `{}` cannot stall: the code it sits in runs to its end without waiting, so there is nothing to hold",
                    point.name
                );
                let mut can: Vec<&str> = vec!["{error: KIND}"];
                if point.panic {
                    can.push("panic");
                }
                let hint = format!("its actions: {}", can.join(", "));
                self.e.error_hint(loc, message, hint);
                None
            }
            raw::Action::Stall(until) if until == "release" => Some(FaultAction::StallUntilRelease),
            raw::Action::Stall(duration) => {
                let text = Spanned {
                    loc,
                    value: duration.clone(),
                };
                self.e.duration(&text).map(FaultAction::Stall)
            }
        }
    }

    pub(super) fn failpoint(&mut self, body: &Node) -> Option<StepKind> {
        let Some(raw) = self.e.read::<raw::FailPoint>(body) else {
            // The step could not be read (its action, say): its point is still
            // checked, so one pass names both mistakes.
            if let Some(point) = body.get("point").and_then(|p| {
                p.as_str().map(|name| Spanned {
                    loc: p.loc,
                    value: name.to_string(),
                })
            }) {
                self.point(&point);
            }
            return None;
        };
        let node = self.target(&raw.node);
        let point = self.point(&raw.point);
        let (node, point) = (node?, point?);
        let action = self.fault_action(point, &raw.action)?;
        if let Some(count) = &raw.count {
            if count.value == 0 {
                self.e.error(
                    count.loc,
                    "`count` is at least 1 (to disarm, use `clear_failpoint`)",
                );
            }
        }
        if let Some(p) = &raw.probability {
            if !(p.value > 0.0 && p.value <= 1.0) {
                self.e.error(p.loc, "`probability` is in (0, 1]");
            }
        }
        Some(StepKind::FailPoint {
            node,
            arm: ArmStep {
                point,
                action,
                count: raw.count.map(|c| c.value),
                probability: raw.probability.map(|p| p.value),
                optional: raw.optional,
            },
        })
    }

    pub(super) fn check(&mut self, body: &Node) -> Option<StepKind> {
        let default_within = Duration::from_secs(30);
        if body.as_str() == Some("converged") {
            return Some(StepKind::Check(CheckStep::Converged {
                within: default_within,
            }));
        }
        let raw = self.e.read::<raw::Check>(body)?;
        match (raw.converged, &raw.invariant) {
            (Some(true), None) => {
                let within = self.e.duration_or(&raw.within, default_within);
                Some(StepKind::Check(CheckStep::Converged { within }))
            }
            (None, Some(name)) => {
                let info = self.info;
                match info.invariant(&name.value) {
                    Some(inv) => Some(StepKind::Check(CheckStep::Invariant(inv.name))),
                    None => {
                        self.e.unknown_name(
                            name.loc,
                            "invariant",
                            &name.value,
                            info.invariants.iter().map(|i| i.name),
                        );
                        None
                    }
                }
            }
            _ => {
                self.e.error_hint(
                    body.loc,
                    "`check` is `converged` or {invariant: NAME}",
                    "for example `- check: converged`",
                );
                None
            }
        }
    }
}

fn step_kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.name).collect()
}

/// How many steps a list runs, with every `repeat` expanded (saturating).
pub(super) fn expanded_steps(steps: &[Step]) -> u64 {
    steps.iter().fold(0u64, |total, step| {
        let one = match &step.kind {
            StepKind::Repeat { count, steps } => {
                u64::from(*count).saturating_mul(expanded_steps(steps))
            }
            StepKind::Client(_)
            | StepKind::TransferLeader { .. }
            | StepKind::Partition(_)
            | StepKind::Heal
            | StepKind::Hold { .. }
            | StepKind::Release { .. }
            | StepKind::Latency { .. }
            | StepKind::Crash(_)
            | StepKind::Restart(_)
            | StepKind::Stop(_)
            | StepKind::Start(_)
            | StepKind::FailPoint { .. }
            | StepKind::ClearFailPoint { .. }
            | StepKind::ReleaseFailPoint { .. }
            | StepKind::Sleep(_)
            | StepKind::Await { .. }
            | StepKind::Check(_)
            | StepKind::Workload(_) => 1,
        };
        total.saturating_add(one)
    })
}
