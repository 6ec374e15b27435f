//! `chaos: {schedule: ...}`: the faults (and ops) a chaos window plays instead
//! of drawing them, inline or in a file of their own. Each fault is a fault step
//! of the scenario language with `at:` (from the window's start), `for:` (how
//! long a lasting fault lasts) and `pick:` (which candidate `follower` and `any`
//! resolve to), so a schedule is validated by the step readers, every error at
//! file:line:col of the file that holds it.

use super::errors::{map_filtered, Errors};
use super::names::Reader;
use crate::lang::scenario::raw;
use crate::lang::scenario::schedule::{Fault, Planned, PlannedOp, Schedule, FAULTS_MAX, OPS_MAX};
use crate::lang::scenario::{FaultAction, StepKind};
use crate::lang::yaml::{Node, Spanned, Value};
use schemars::{json_schema, Schema, SchemaGenerator};
use std::path::Path;
use std::time::Duration;

/// Most bytes of a schedule file.
pub const SCHEDULE_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// The keys of a schedule entry besides its step.
const ENTRY_KEYS: [&str; 3] = ["at", "for", "pick"];

impl Reader<'_, '_> {
    /// `schedule: FILE` (relative to the scenario's directory) or the schedule
    /// itself.
    pub(super) fn schedule_ref(&mut self, node: &Node) -> Option<Schedule> {
        let Value::Str(path) = &node.value else {
            return self.schedule(node);
        };
        let resolved = Path::new(self.e.file)
            .parent()
            .map_or_else(|| Path::new(path).to_path_buf(), |dir| dir.join(path));
        let shown = crate::base::text::printable(&resolved.display().to_string()).into_owned();
        let text = match crate::base::fsio::read_capped(&resolved, SCHEDULE_BYTES_MAX) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => {
                    self.e
                        .error(node.loc, format!("schedule file {shown} is not UTF-8"));
                    return None;
                }
            },
            Err(e) => {
                self.e
                    .error(node.loc, format!("cannot read schedule file {shown}: {e}"));
                return None;
            }
        };
        let limits = crate::lang::yaml::Limits {
            bytes_max: SCHEDULE_BYTES_MAX as usize,
            ..crate::lang::yaml::Limits::default()
        };
        let root = match crate::lang::yaml::parse(&text, &limits) {
            Ok(root) => root,
            Err(e) => {
                let mut file_errors = Errors::new(&shown);
                file_errors.yaml_error(e);
                self.e.diags.0.extend(file_errors.diags.0);
                return None;
            }
        };
        // The file's errors name the file and its lines.
        let mut file_errors = Errors::new(&shown);
        let schedule = Reader::new(
            &mut file_errors,
            self.model,
            self.nodes,
            self.settings,
            self.variant_names,
        )
        .schedule(&root);
        let failed = !file_errors.is_empty();
        self.e.diags.0.extend(file_errors.diags.0);
        if failed {
            return None;
        }
        schedule
    }

    /// A schedule: `{window: 30s, faults: [...], ops: [...]}`.
    pub(super) fn schedule(&mut self, node: &Node) -> Option<Schedule> {
        let raw: raw::Schedule = self.e.read(node)?;
        let window = self.e.duration(&raw.window)?;
        if window.is_zero() {
            self.e
                .error(raw.window.loc, "a schedule's `window` is longer than 0s");
            return None;
        }
        let faults_node = node.get("faults").expect("serde checked");
        let Value::Seq(items) = &faults_node.value else {
            self.e.error(
                faults_node.loc,
                "`faults` is a list of faults, e.g. [{at: 1s, for: 2s, crash: n1}]",
            );
            return None;
        };
        if items.len() > FAULTS_MAX {
            self.e.error(
                faults_node.loc,
                format!("more than {FAULTS_MAX} faults in one schedule"),
            );
            return None;
        }
        let counted = self.faults;
        let mut faults = Vec::new();
        let mut ok = true;
        for item in items {
            match self.scheduled_fault(item, window) {
                Some(fault) => faults.push(fault),
                None => ok = false,
            }
        }
        // A schedule's faults are bounded by its own limit, not the steps'.
        self.faults = counted;
        let ops = match node.get("ops") {
            Some(ops) => Some(self.scheduled_ops(ops, window)?),
            None => None,
        };
        if !ok {
            return None;
        }
        let mut schedule = Schedule {
            window,
            faults,
            ops,
        };
        schedule.sort();
        Some(schedule)
    }

    fn entry_time(&mut self, item: &Node, key: &str) -> Option<Option<Duration>> {
        let Some(value) = item.get(key) else {
            return Some(None);
        };
        let text: Spanned<String> = self.e.read(value)?;
        self.e.duration(&text).map(Some)
    }

    fn scheduled_fault(&mut self, item: &Node, window: Duration) -> Option<Planned> {
        if !matches!(item.value, Value::Map(_)) {
            self.e.error_hint(
                item.loc,
                "a scheduled fault is a mapping: a fault step with `at` (and `for`)",
                "e.g. {at: 1200ms, for: 3s, crash: leader}",
            );
            return None;
        }
        let at = self.entry_time(item, "at");
        let lasts = self.entry_time(item, "for");
        let pick = match item.get("pick") {
            Some(p) => Some(self.e.read::<u32>(p)?),
            None => Some(0),
        };
        let step_node = map_filtered(item, |k| !ENTRY_KEYS.contains(&k));
        let step = self.step(&step_node)?;
        let (at, lasts, pick) = (at?, lasts?, pick?);
        let Some(at) = at else {
            self.e.error_hint(
                item.loc,
                "a scheduled fault has no `at`",
                "say when it begins, from the window's start: `at: 1200ms`",
            );
            return None;
        };
        if at >= window {
            let loc = item.get("at").map_or(item.loc, |n| n.loc);
            self.e.error(
                loc,
                format!(
                    "`at` is {} but the window lasts {}: the fault would never begin",
                    crate::base::duration::format(at),
                    crate::base::duration::format(window)
                ),
            );
            return None;
        }
        let fault = self.fault_of(step.loc, step.kind)?;
        let lasts = match (fault.lasting(), lasts) {
            (true, Some(lasts)) if !lasts.is_zero() => Some(lasts),
            (true, _) => {
                self.e.error_hint(
                    item.loc,
                    format!("a scheduled `{}` lasts: say how long", fault.kind()),
                    "add `for: 2s`",
                );
                return None;
            }
            (false, None) => None,
            (false, Some(_)) => {
                let loc = item.get("for").map_or(item.loc, |n| n.loc);
                self.e.error(
                    loc,
                    format!(
                        "a `{}` is over once it takes effect: it has no `for`",
                        fault.kind()
                    ),
                );
                return None;
            }
        };
        Some(Planned {
            at,
            lasts,
            pick,
            fault,
        })
    }

    /// The fault a step injects; a step that injects none cannot be scheduled.
    fn fault_of(&mut self, loc: crate::lang::yaml::Loc, kind: StepKind) -> Option<Fault> {
        Some(match kind {
            StepKind::Partition(p) => Fault::Partition(p),
            StepKind::Hold { a, b } => Fault::Hold { a, b },
            StepKind::Latency {
                a,
                b,
                delay: Some(delay),
            } => Fault::Latency { a, b, delay },
            StepKind::Latency { delay: None, .. } => {
                self.e.error(
                    loc,
                    "a scheduled `latency` names its delay (it is undone by putting the link back)",
                );
                return None;
            }
            StepKind::Crash(p) => Fault::Crash(p.target),
            StepKind::Restart(p) => Fault::Restart(p.target),
            StepKind::Stop(p) => Fault::Stop(p.target),
            StepKind::TransferLeader { to, .. } => Fault::TransferLeader { to },
            StepKind::FailPoint { node, mut arm } => {
                if arm.action == FaultAction::StallUntilRelease {
                    self.e.error(
                        loc,
                        "a scheduled stall has a length (`stall: 2s`): nothing in a schedule releases it",
                    );
                    return None;
                }
                // Like the nemesis's own armings: one that never fires is
                // recorded, not a failure of the run.
                arm.optional = true;
                Fault::FailPoint { node, arm }
            }
            StepKind::Client(_)
            | StepKind::Heal
            | StepKind::Release { .. }
            | StepKind::Start(_)
            | StepKind::ClearFailPoint { .. }
            | StepKind::ReleaseFailPoint { .. }
            | StepKind::Sleep(_)
            | StepKind::Await { .. }
            | StepKind::Check(_)
            | StepKind::Repeat { .. }
            | StepKind::Workload(_) => {
                self.e.error_hint(
                    loc,
                    "a schedule holds faults; this step is not one",
                    "faults: partition, hold, latency, crash, restart, stop, transfer_leader, failpoint",
                );
                return None;
            }
        })
    }

    fn scheduled_ops(&mut self, node: &Node, window: Duration) -> Option<Vec<PlannedOp>> {
        let Value::Seq(items) = &node.value else {
            self.e.error(
                node.loc,
                "`ops` is a list of ops, e.g. [{at: 100ms, on: leader, op: {op: put, key: a, value: \"1\"}}]",
            );
            return None;
        };
        if items.len() > OPS_MAX {
            self.e
                .error(node.loc, format!("more than {OPS_MAX} ops in one schedule"));
            return None;
        }
        let mut ops = Vec::new();
        let mut ok = true;
        for item in items {
            match self.scheduled_op(item, window) {
                Some(op) => ops.push(op),
                None => ok = false,
            }
        }
        ok.then_some(ops)
    }

    fn scheduled_op(&mut self, item: &Node, window: Duration) -> Option<PlannedOp> {
        let raw: raw::ScheduleOp = self.e.read(item)?;
        let at = self.e.duration(&raw.at)?;
        if at >= window {
            self.e.error(
                raw.at.loc,
                "the op is at or after the window's end: it would never be sent",
            );
            return None;
        }
        let on = self.target(&raw.on)?;
        let op_node = item.get("op").expect("serde checked");
        let name = op_node.get("op").and_then(Node::as_str).unwrap_or("");
        if self.info.op(name).is_none() {
            let loc = op_node.get("op").map_or(op_node.loc, |n| n.loc);
            let info = self.info;
            self.e
                .unknown_name(loc, "op", name, info.ops.iter().map(|o| o.name));
            return None;
        }
        let op = match self.model.parse_op(&op_node.to_json()) {
            Ok(op) => op,
            Err(message) => {
                let loc = super::errors::locate_field(op_node, &message).unwrap_or(op_node.loc);
                self.e.error(loc, format!("scheduled op: {message}"));
                return None;
            }
        };
        Some(PlannedOp {
            at,
            on,
            pick: raw.pick.unwrap_or(0),
            op,
        })
    }
}

// ---- The JSON Schema of what this module reads from the tree. ----

/// `chaos.schedule:` as [`Reader::schedule_ref`] reads it.
pub(in crate::lang::scenario) fn schedule_ref_schema(generator: &mut SchemaGenerator) -> Schema {
    let schedule = generator.subschema_for::<raw::Schedule>();
    json_schema!({
        "anyOf": [
            {"type": "string", "description": "A schedule file, relative to the scenario's directory."},
            schedule,
        ],
    })
}

/// A schedule's `faults:` as [`Reader::scheduled_fault`] reads them: a fault
/// step with the [`ENTRY_KEYS`].
pub(in crate::lang::scenario) fn scheduled_faults_schema(
    generator: &mut SchemaGenerator,
) -> Schema {
    let duration = crate::base::duration::schema(generator).to_value();
    let mut properties = serde_json::Map::new();
    let about = [
        ("When it begins, from the window's start.", duration.clone()),
        ("How long a lasting fault lasts.", duration),
        (
            "The number that decides a `follower` or `any`.",
            serde_json::json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
        ),
    ];
    for (key, (text, mut schema)) in ENTRY_KEYS.iter().zip(about) {
        schema["description"] = text.into();
        properties.insert(key.to_string(), schema);
    }
    let mut one = Vec::new();
    for (kind, schema) in super::steps::fault_kind_schemas(generator) {
        one.push(serde_json::json!({"required": [kind]}));
        properties.insert(kind.to_string(), schema);
    }
    json_schema!({
        "type": "array",
        "maxItems": FAULTS_MAX,
        "items": {
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
            "required": ["at"],
            "oneOf": one,
        },
    })
}

/// A schedule's `ops:` as [`Reader::scheduled_ops`] reads them.
pub(in crate::lang::scenario) fn scheduled_ops_schema(generator: &mut SchemaGenerator) -> Schema {
    let op = generator.subschema_for::<raw::ScheduleOp>();
    json_schema!({"type": "array", "maxItems": OPS_MAX, "items": op})
}

/// A scheduled op's `op:`: the op and its arguments, which the model checks.
pub(in crate::lang::scenario) fn op_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "properties": {"op": {"type": "string", "description": "One of the model's ops."}},
        "required": ["op"],
    })
}
