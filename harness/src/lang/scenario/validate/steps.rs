//! Phase two: the steps. The one place that reads each step kind, and the kinds
//! that need no reader of their own.
//!
//! Each kind's row in the table carries the JSON Schema of its value beside its
//! reader, so that the two cannot part; the readers of the network's and
//! leadership's steps are `network`'s.

use super::names::Reader;
use super::{EXPANDED_STEPS_MAX, FAULTS_MAX, REPEAT_COUNT_MAX, STEPS_MAX};
use crate::lang::scenario::raw;
use crate::lang::scenario::*;
use crate::lang::yaml::{Node, Spanned, Value};
use faultline_api::FailPointInfo;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use std::borrow::Cow;
use std::time::Duration;

/// A step kind as files write it: its name, whether it injects a fault (bounded
/// by FAULTS_MAX), its reader, and the JSON Schema of its value with a line
/// about it (for editors). One row per kind: the one place that names, reads
/// and describes each (a new kind is a row here and a variant of `StepKind`).
struct KindSpec {
    name: &'static str,
    fault: bool,
    read: Read,
    about: &'static str,
    schema: Describe,
}

type Read = fn(&mut Reader<'_, '_>, &Node) -> Option<StepKind>;
type Describe = fn(&mut SchemaGenerator) -> Schema;

const KINDS: &[KindSpec] = &[
    step(
        "client",
        "A client operation of the model: `op` and its arguments, with `on`, `wait`, `timeout`, `expect`.",
        super::client::client_schema,
        |r, body| r.client(body),
    ),
    fault(
        "transfer_leader",
        "Hand leadership to a node (a node reference, or `{to, timeout, optional}`).",
        one_of_name_or::<raw::TransferLeader>,
        |r, body| r.transfer_leader(body),
    ),
    fault(
        "partition",
        "Cut links: `{groups}`, `{isolate}`, or one-way `{from, to}`.",
        |g| g.subschema_for::<raw::Partition>(),
        |r, body| r.partition(body),
    ),
    step(
        "heal",
        "Repair every partition: `heal: all`.",
        |_| json_schema!({"anyOf": [{"const": "all"}, {"const": true}, {"type": "null"}, {"type": "object", "maxProperties": 0}]}),
        |r, body| r.heal(body),
    ),
    fault(
        "hold",
        "Hold the messages between two nodes until `release`.",
        |g| g.subschema_for::<raw::Between>(),
        |r, body| r.hold(body),
    ),
    step(
        "release",
        "Deliver held messages (`{between}`) or wake a stalled fail point (`{node, failpoint}`).",
        |g| g.subschema_for::<raw::Release>(),
        |r, body| r.release(body),
    ),
    fault(
        "latency",
        "Set a link's delay: `{between: [a, b], delay: 200ms | default}`.",
        |g| g.subschema_for::<raw::Latency2>(),
        |r, body| r.latency(body),
    ),
    fault(
        "crash",
        "Kill a node's process; unsynced writes are lost (a node reference, or `{node, optional}`).",
        one_of_name_or::<raw::Process>,
        |r, body| r.process(body, true).map(StepKind::Crash),
    ),
    fault(
        "restart",
        "Crash a node (if up), then start it from durable state.",
        one_of_name_or::<raw::Process>,
        |r, body| r.process(body, true).map(StepKind::Restart),
    ),
    fault(
        "stop",
        "Stop a node cleanly (the model's own shutdown).",
        one_of_name_or::<raw::Process>,
        |r, body| r.process(body, true).map(StepKind::Stop),
    ),
    step(
        "start",
        "Start a down node from durable state.",
        one_of_name_or::<raw::Process>,
        |r, body| r.process(body, false).map(StepKind::Start),
    ),
    fault(
        "failpoint",
        "Arm a fail point of the model: `{node, point, action, count, probability, optional}`.",
        |g| g.subschema_for::<raw::FailPoint>(),
        |r, body| r.failpoint(body),
    ),
    step(
        "clear_failpoint",
        "Disarm a fail point: `{node, point}`.",
        |g| g.subschema_for::<raw::PointRef>(),
        |r, body| r.clear_failpoint(body),
    ),
    step(
        "sleep",
        "Let simulated time pass.",
        crate::base::duration::schema,
        |r, body| r.sleep(body),
    ),
    step(
        "await",
        "Wait for a condition: `leader`, `ops_done`, `quiescent`, or a mapping with one condition and `within`.",
        super::conditions::await_body_schema,
        |r, body| r.await_step(body),
    ),
    step(
        "check",
        "Check now: `converged`, `{converged: true, within}` or `{invariant: NAME}`.",
        |g| {
            let full = g.subschema_for::<raw::Check>();
            json_schema!({"anyOf": [{"const": "converged"}, full]})
        },
        |r, body| r.check(body),
    ),
    step(
        "repeat",
        "Run `steps` `count` times.",
        |g| g.subschema_for::<raw::Repeat>(),
        |r, body| r.repeat(body),
    ),
    step(
        "workload",
        "Start or stop the top-level `workload:`.",
        |_| json_schema!({"enum": ["start", "stop"]}),
        |r, body| r.workload_step(body),
    ),
];

/// A step kind that injects no fault.
const fn step(name: &'static str, about: &'static str, schema: Describe, read: Read) -> KindSpec {
    KindSpec {
        name,
        fault: false,
        read,
        about,
        schema,
    }
}

/// A step kind that injects a fault.
const fn fault(name: &'static str, about: &'static str, schema: Describe, read: Read) -> KindSpec {
    KindSpec {
        name,
        fault: true,
        read,
        about,
        schema,
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

/// The step kinds that inject a fault.
#[cfg(test)]
pub(super) fn fault_step_names() -> impl Iterator<Item = &'static str> {
    KINDS.iter().filter(|k| k.fault).map(|k| k.name)
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

// ---- The JSON Schema of steps, from the table above. ----

/// A node reference, or the mapping `T` (`crash: n1`, `crash: {node: n1}`).
fn one_of_name_or<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let full = generator.subschema_for::<T>();
    json_schema!({"anyOf": [{"type": "string", "description": "A node reference: a node name, `leader`, `follower` or `any`."}, full]})
}

/// One step: a mapping with one key, the step kind (a definition of its own,
/// `$defs/Step`, since `repeat` holds steps).
struct StepSchema;

impl JsonSchema for StepSchema {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let properties: serde_json::Map<String, serde_json::Value> = KINDS
            .iter()
            .map(|kind| (kind.name.to_string(), described(generator, kind)))
            .collect();
        json_schema!({
            "description": "A step: a mapping with one key, the step kind.",
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "properties": properties,
            "additionalProperties": false,
        })
    }
}

/// A kind's schema with its line about it.
fn described(generator: &mut SchemaGenerator, kind: &KindSpec) -> serde_json::Value {
    let mut schema = (kind.schema)(generator);
    schema.insert("description".into(), kind.about.into());
    schema.to_value()
}

/// `steps:` as [`Reader::steps`] reads it (also `repeat.steps`).
pub(in crate::lang::scenario) fn steps_schema(generator: &mut SchemaGenerator) -> Schema {
    let step = generator.subschema_for::<StepSchema>();
    json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": STEPS_MAX,
        "items": step,
    })
}

/// The step kinds that inject a fault, each with its schema: what a schedule's
/// fault entry may be.
pub(super) fn fault_kind_schemas(
    generator: &mut SchemaGenerator,
) -> Vec<(&'static str, serde_json::Value)> {
    KINDS
        .iter()
        .filter(|kind| kind.fault)
        .map(|kind| (kind.name, described(generator, kind)))
        .collect()
}

/// A fail point action's `stall:` as [`Reader::fault_action`] reads it.
pub(in crate::lang::scenario) fn stall_schema(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({"anyOf": [{"const": "release"}, crate::base::duration::schema(generator)]})
}

/// A latency step's `delay:` as [`Reader::latency`] reads it.
pub(in crate::lang::scenario) fn delay_schema(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({"anyOf": [{"const": "default"}, crate::base::duration::schema(generator)]})
}

/// What [`Reader::partition`] asks: exactly one form, `from` with `to`.
pub(in crate::lang::scenario) fn partition_shape(schema: &mut Schema) {
    schema.insert(
        "oneOf".into(),
        serde_json::json!([
            {"required": ["groups"]},
            {"required": ["isolate"]},
            {"anyOf": [{"required": ["from"]}, {"required": ["to"]}]},
        ]),
    );
    schema.insert(
        "dependentRequired".into(),
        serde_json::json!({"from": ["to"], "to": ["from"]}),
    );
}

/// What [`Reader::release`] asks: `between` alone, or `node` with `failpoint`.
pub(in crate::lang::scenario) fn release_shape(schema: &mut Schema) {
    schema.insert(
        "oneOf".into(),
        serde_json::json!([
            {"required": ["between"], "not": {"anyOf": [{"required": ["node"]}, {"required": ["failpoint"]}]}},
            {"required": ["node", "failpoint"], "not": {"required": ["between"]}},
        ]),
    );
}

/// What [`Reader::check`] asks of a mapping: `converged: true` or `invariant`, not both.
pub(in crate::lang::scenario) fn check_shape(schema: &mut Schema) {
    schema.insert(
        "oneOf".into(),
        serde_json::json!([
            {"required": ["converged"], "properties": {"converged": {"const": true}}, "not": {"required": ["invariant"]}},
            {"required": ["invariant"], "not": {"required": ["converged"]}},
        ]),
    );
}
