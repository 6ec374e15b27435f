//! The `chaos` section: its window and pacing, fault kinds with weights, fail
//! points, and the params it draws. What `auto` takes from the model is
//! `domain`'s; the workload is `workload`'s.

use super::names::Reader;
use crate::lang::scenario::raw;
use crate::lang::scenario::*;
use crate::lang::yaml::{Node, Spanned, Value};
use faultline_api::FailPointInfo;
use schemars::{json_schema, Schema, SchemaGenerator};
use std::time::Duration;

impl Reader<'_, '_> {
    pub(super) fn range(
        &mut self,
        range: &Option<raw::Range>,
        default: (Duration, Duration),
    ) -> (Duration, Duration) {
        let Some(range) = range else { return default };
        let min = self.e.duration(&range.min).unwrap_or(default.0);
        let max = self.e.duration(&range.max).unwrap_or(default.1);
        if min > max {
            self.e.error(range.min.loc, "`min` is greater than `max`");
        }
        (min, max)
    }

    pub(super) fn chaos(&mut self, node: &Node, base: Option<&serde_json::Value>) -> Option<Chaos> {
        let raw = self.e.read::<raw::Chaos>(node)?;
        let auto = raw.auto.as_ref().is_some_and(|a| a.value);
        let domain = &self.info.chaos;
        let ms = Duration::from_millis;
        let schedule_node = node.get("schedule");
        let schedule = schedule_node.and_then(|s| self.schedule_ref(s));
        let window = match (&raw.window, &schedule) {
            (Some(w), _) => self.e.duration(w)?,
            (None, Some(schedule)) => schedule.window,
            // The schedule's own errors are reported.
            (None, None) if schedule_node.is_some() => return None,
            (None, None) => {
                self.e.error_hint(
                    node.loc,
                    "the chaos section has no `window`",
                    "say how long faults are injected, e.g. `window: 30s`",
                );
                return None;
            }
        };
        if window.is_zero() {
            let loc = raw.window.as_ref().map_or(node.loc, |w| w.loc);
            self.e
                .error(loc, "the chaos `window` must be longer than 0s");
        }
        let (concurrent_max, spacing, duration) = self.pacing(&raw, auto);
        let named = node.get("faults").map(|f| self.chaos_faults(f, auto));
        let faults = if auto {
            let mut faults = self.domain_faults();
            for (kind, fault) in named.into_iter().flatten() {
                faults.retain(|f| f.kind.kind() != kind);
                faults.extend(fault);
            }
            // Keep the table's order whatever the section names first.
            faults.sort_by_key(|f| f.kind.kind());
            faults
        } else {
            named.into_iter().flatten().filter_map(|(_, f)| f).collect()
        };
        let workload = match node.get("workload") {
            Some(w) => self.workload(w),
            None if auto => self.domain_workload(node.loc),
            None => None,
        };
        let mut params = if auto {
            self.domain_params(node.loc, base)
        } else {
            Vec::new()
        };
        if let Some(p) = node.get("params") {
            for param in self.chaos_params(p, base) {
                params.retain(|q: &ChaosParam| q.name != param.name);
                params.push(param);
            }
        }
        let restart_exited = match node.get("restart_exited") {
            Some(n) => self.restart_exited(n),
            None if auto => domain.restart_exited_ms.map(|(a, b)| (ms(a), ms(b))),
            None => None,
        };
        if faults.is_empty() && workload.is_none() && schedule.is_none() {
            self.e.error(
                node.loc,
                "chaos with no fault kinds and no workload tests nothing",
            );
        }
        Some(Chaos {
            loc: node.loc,
            window,
            swarm: raw.swarm.unwrap_or(auto),
            config_seed: raw.config_seed,
            concurrent_max,
            spacing,
            duration,
            faults,
            workload,
            params,
            schedule,
            auto,
            restart_exited,
        })
    }

    /// `concurrent_max`, `spacing` and `duration`, each with its default (the
    /// model domain's with `auto`).
    fn pacing(
        &mut self,
        raw: &raw::Chaos,
        auto: bool,
    ) -> (usize, (Duration, Duration), (Duration, Duration)) {
        let domain = &self.info.chaos;
        let ms = Duration::from_millis;
        let default_max = if auto {
            domain.concurrent_max as u32
        } else {
            2
        };
        let concurrent_max = raw
            .concurrent_max
            .as_ref()
            .map(|c| c.value)
            .unwrap_or(default_max);
        if concurrent_max == 0 {
            self.e.error(
                raw.concurrent_max.as_ref().expect("given").loc,
                "`concurrent_max` is at least 1",
            );
        }
        let (spacing, duration) = if auto {
            (
                (ms(domain.spacing_ms.0), ms(domain.spacing_ms.1)),
                (ms(domain.duration_ms.0), ms(domain.duration_ms.1)),
            )
        } else {
            (
                (Duration::from_millis(200), Duration::from_secs(2)),
                (Duration::from_millis(500), Duration::from_secs(5)),
            )
        };
        let spacing = self.range(&raw.spacing, spacing);
        let duration = self.range(&raw.duration, duration);
        (concurrent_max as usize, spacing, duration)
    }

    /// `restart_exited: {min, max}` (the supervisor's delay) or `false`.
    fn restart_exited(&mut self, node: &Node) -> Option<(Duration, Duration)> {
        if let serde_json::Value::Bool(on) = node.to_json() {
            if on {
                self.e.error_hint(
                    node.loc,
                    "`restart_exited: true` does not say how long the supervisor waits",
                    "give the delay's range, e.g. `restart_exited: {min: 1s, max: 30s}`, or `false`",
                );
            }
            return None;
        }
        let range = self.e.read::<raw::Range>(node)?;
        let zero = (Duration::ZERO, Duration::ZERO);
        Some(self.range(&Some(range), zero))
    }

    /// `params: {name: {min: A, max: B}, other: [x, y]}`: each must be a param the
    /// model accepts at every extreme, laid over the scenario's own params.
    fn chaos_params(&mut self, node: &Node, base: Option<&serde_json::Value>) -> Vec<ChaosParam> {
        let Value::Map(entries) = &node.value else {
            self.e.error_hint(
                node.loc,
                "chaos `params` maps model params to what to draw",
                "e.g. {heartbeat_ms: {min: 20, max: 200}, metadata_entries: [true, false]}",
            );
            return Vec::new();
        };
        let mut params = Vec::new();
        for (key, body) in entries {
            let name = key.as_str().unwrap_or("").to_string();
            if self.info.param(&name).is_none() {
                self.e.unknown_name(
                    key.loc,
                    "param",
                    &name,
                    self.info.params.iter().map(|p| p.name),
                );
                continue;
            }
            let draw = match &body.value {
                Value::Seq(items) if !items.is_empty() => {
                    ParamDraw::Choices(items.iter().map(|i| i.to_json()).collect())
                }
                Value::Map(_) => {
                    let Some(range) = self.e.read::<raw::IntRange>(body) else {
                        continue;
                    };
                    if range.min.value > range.max.value {
                        self.e.error(range.min.loc, "`min` is greater than `max`");
                        continue;
                    }
                    ParamDraw::Range {
                        min: range.min.value,
                        max: range.max.value,
                    }
                }
                Value::Null
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Str(_)
                | Value::Seq(_) => {
                    self.e.error_hint(
                        body.loc,
                        format!("cannot draw param `{name}` from this"),
                        "write a range {min: A, max: B} or a non-empty list of choices [x, y]",
                    );
                    continue;
                }
            };
            let ok = match self.check_draw(&name, &draw, base) {
                Ok(()) => true,
                Err(message) => {
                    self.e
                        .error(key.loc, format!("chaos param `{name}` = {message}"));
                    false
                }
            };
            if ok {
                params.push(ChaosParam {
                    name,
                    loc: key.loc,
                    draw,
                });
            }
        }
        params
    }

    /// Whether the model accepts every extreme of a draw laid over `base`; the
    /// error names the value it refused.
    fn check_draw(
        &self,
        name: &str,
        draw: &ParamDraw,
        base: Option<&serde_json::Value>,
    ) -> Result<(), String> {
        let samples: Vec<serde_json::Value> = match draw {
            ParamDraw::Range { min, max } => vec![(*min).into(), (*max).into()],
            ParamDraw::Choices(choices) => choices.clone(),
        };
        for sample in samples {
            let mut merged = match base {
                Some(serde_json::Value::Object(map)) => map.clone(),
                _ => serde_json::Map::new(),
            };
            merged.insert(name.to_string(), sample.clone());
            if let Err(message) = self.model.parse_params(&serde_json::Value::Object(merged)) {
                return Err(format!("{sample}: invalid params: {message}"));
            }
        }
        Ok(())
    }

    /// Each kind the section names, with its fault (`None`: weight 0, which
    /// switches a kind of the domain off).
    pub(super) fn chaos_faults(
        &mut self,
        node: &Node,
        auto: bool,
    ) -> Vec<(FaultKind, Option<ChaosFault>)> {
        let Value::Map(entries) = &node.value else {
            self.e.error(
                node.loc,
                "`faults` maps fault kinds to weights, e.g. {partition: 2, crash: 1}",
            );
            return Vec::new();
        };
        let mut faults = Vec::new();
        for (key, body) in entries {
            let name = key.as_str().unwrap_or("");
            let Some(kind) = FaultKind::from_name(name) else {
                self.e
                    .unknown_name(key.loc, "chaos fault kind", name, FaultKind::names());
                continue;
            };
            let Some(spec) = self.fault_spec(body) else {
                continue;
            };
            if spec.weight.value == 0 {
                faults.push((kind, None));
                continue;
            }
            let Some(chaos_kind) = self.chaos_kind(kind, key, body, &spec, auto) else {
                continue;
            };
            faults.push((
                kind,
                Some(ChaosFault {
                    kind: chaos_kind,
                    weight: spec.weight.value,
                }),
            ));
        }
        faults
    }

    /// A fault kind's value: a weight, or `{weight, delay, points}`.
    fn fault_spec(&mut self, body: &Node) -> Option<raw::ChaosFault> {
        match &body.value {
            Value::Int(w) => match u32::try_from(*w) {
                Ok(value) => Some(raw::ChaosFault {
                    weight: Spanned {
                        loc: body.loc,
                        value,
                    },
                    delay: None,
                    points: None,
                }),
                Err(_) => {
                    self.e.error_hint(
                        body.loc,
                        format!(
                            "a fault weight is a whole number in 0..={}, found {w}",
                            u32::MAX
                        ),
                        "e.g. `crash: 2` (twice as likely as a weight of 1); 0 switches the kind off",
                    );
                    None
                }
            },
            Value::Null
            | Value::Bool(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => self.e.read::<raw::ChaosFault>(body),
        }
    }

    /// A kind the section switches on, with its options.
    fn chaos_kind(
        &mut self,
        kind: FaultKind,
        key: &Node,
        body: &Node,
        spec: &raw::ChaosFault,
        auto: bool,
    ) -> Option<ChaosKind> {
        let info = self.info;
        Some(match kind {
            FaultKind::Partition => ChaosKind::Partition,
            FaultKind::OneWay => ChaosKind::OneWay,
            FaultKind::Hold => ChaosKind::Hold,
            FaultKind::Latency => {
                let (min, max) = self.range(
                    &spec.delay,
                    (Duration::from_millis(20), Duration::from_millis(500)),
                );
                ChaosKind::Latency { min, max }
            }
            FaultKind::Crash => ChaosKind::Crash,
            FaultKind::Restart => ChaosKind::Restart,
            FaultKind::Stop => ChaosKind::Stop,
            FaultKind::TransferLeader if !info.leader_transfer => {
                self.e.error(
                    key.loc,
                    format!("model `{}` does not support `transfer_leader`", info.name),
                );
                return None;
            }
            FaultKind::TransferLeader => ChaosKind::TransferLeader,
            FaultKind::FailPoint => {
                let points = match (body.get("points"), auto) {
                    (Some(points), _) => self.chaos_points(points),
                    (None, true) => super::domain::domain_points(info),
                    (None, false) => {
                        self.e.error_hint(
                            body.loc,
                            "`failpoint` needs `points`",
                            "e.g. {weight: 1, points: [{point: P, action: {error: K}}]}",
                        );
                        return None;
                    }
                };
                ChaosKind::FailPoint(points)
            }
        })
    }

    /// A chaos section's `points: [...]`, each read with its action.
    fn chaos_points(&mut self, node: &Node) -> Vec<ChaosPoint> {
        let Value::Seq(items) = &node.value else {
            self.e.error(
                node.loc,
                "`points` is a list of {point: P, action: A} entries",
            );
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.chaos_point(item))
            .collect()
    }

    pub(super) fn chaos_point(&mut self, item: &Node) -> Option<ChaosPoint> {
        let raw: Spanned<raw::ChaosPoint> = self.e.read(item)?;
        let point = self.point(&raw.value.point)?;
        let action_node = item.get("action").expect("serde checked");
        let action = self.point_action(point, action_node)?;
        let mut nodes = Vec::new();
        for name in raw.value.nodes.iter().flatten() {
            nodes.push(self.target(name)?);
        }
        let weight = match &raw.value.weight {
            Some(w) if w.value == 0 => {
                self.e.error(
                    w.loc,
                    "a point's `weight` is at least 1 (leave the point out instead)",
                );
                return None;
            }
            Some(w) => w.value,
            None => 1,
        };
        let count = match &raw.value.count {
            Some(c) if c.value == 0 => {
                self.e.error(
                    c.loc,
                    "a point's `count` is at least 1 (leave `count` out to fire on every hit)",
                );
                return None;
            }
            Some(c) => Some(c.value),
            None => None,
        };
        Some(ChaosPoint {
            point,
            action,
            nodes,
            weight,
            count,
        })
    }

    /// A chaos point's action: one as in a `failpoint` step, or a stall drawn
    /// from a range per arming (`{stall: {min: 10ms, max: 5s}}`).
    fn point_action(&mut self, point: &'static FailPointInfo, node: &Node) -> Option<PointAction> {
        let range = node
            .get("stall")
            .filter(|s| matches!(s.value, Value::Map(_)));
        if let Some(range) = range {
            if !point.stall {
                let message = format!(
                    "fail point `{}` cannot stall: no task waits there",
                    point.name
                );
                self.e.error(range.loc, message);
                return None;
            }
            let raw: raw::Range = self.e.read(range)?;
            let (min, max) = self.range(&Some(raw), (Duration::ZERO, Duration::ZERO));
            if max.is_zero() {
                self.e.error(range.loc, "a stall range ends above 0s");
                return None;
            }
            return Some(PointAction::Stall { min, max });
        }
        let action: Spanned<raw::Action> = self.e.read(node)?;
        self.fault_action(point, &action).map(PointAction::Fixed)
    }
}

// ---- The JSON Schema of what this module reads from the tree. ----

/// `chaos:` as [`Reader::chaos`] reads it.
pub(in crate::lang::scenario) fn chaos_schema(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<raw::Chaos>()
}
/// `faults:` as [`Reader::chaos_faults`] reads it: kind -> weight or `{weight, ...}`.
pub(in crate::lang::scenario) fn chaos_faults_schema(generator: &mut SchemaGenerator) -> Schema {
    let full = generator.subschema_for::<raw::ChaosFault>();
    let kind = json_schema!({
        "anyOf": [
            {"type": "integer", "minimum": 0, "maximum": u32::MAX, "description": "The weight (0 switches the kind off)."},
            full,
        ],
    });
    let properties: serde_json::Map<String, serde_json::Value> = FaultKind::names()
        .map(|name| (name.to_string(), kind.clone().to_value()))
        .collect();
    json_schema!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    })
}

/// `chaos.params:` as [`Reader::chaos_params`] reads it.
pub(in crate::lang::scenario) fn chaos_params_schema(generator: &mut SchemaGenerator) -> Schema {
    let range = generator.subschema_for::<raw::IntRange>();
    json_schema!({
        "type": "object",
        "additionalProperties": {"anyOf": [range, {"type": "array", "minItems": 1}]},
    })
}

/// `restart_exited:` as [`Reader::restart_exited`] reads it: the supervisor's
/// delay range, or `false`.
pub(in crate::lang::scenario) fn restart_exited_schema(generator: &mut SchemaGenerator) -> Schema {
    let range = generator.subschema_for::<raw::Range>();
    json_schema!({
        "description": "Start a node whose process ended itself in the window again after a delay drawn from this range (a supervisor), or `false` (it stays down until the heal phase).",
        "anyOf": [range, {"const": false}],
    })
}

/// A chaos point's `action:` as [`Reader::point_action`] reads it.
pub(in crate::lang::scenario) fn point_action_schema(generator: &mut SchemaGenerator) -> Schema {
    let fixed = generator.subschema_for::<raw::Action>();
    let range = generator.subschema_for::<raw::Range>();
    json_schema!({
        "anyOf": [
            fixed,
            {"type": "object", "properties": {"stall": range}, "required": ["stall"], "additionalProperties": false},
        ],
    })
}
