//! The `chaos` section: fault kinds with weights, fail points, and the workload.
//!
//! Over 800 lines for a reason: the JSON Schema of what these readers take from
//! the tree (the end of the file) stays beside them, so that the two are read
//! and changed together.

use super::errors::locate_field;
use super::names::Reader;
use super::templates::expand_template;
use crate::scenario::raw;
use crate::scenario::*;
use crate::yaml::{Node, Spanned, Value};
use faultline_api::{FailPointInfo, ParamChaos, ParamValue};
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
        let named = node.get("faults").map(|f| self.chaos_faults(f, auto));
        let faults = if auto {
            let mut faults = self.domain_faults();
            for (name, fault) in named.into_iter().flatten() {
                faults.retain(|f| f.kind.name() != name);
                faults.extend(fault);
            }
            // Keep the table's order whatever the section names first.
            faults.sort_by_key(|f| {
                raw::CHAOS_FAULT_KINDS
                    .iter()
                    .position(|k| *k == f.kind.name())
            });
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
            concurrent_max: concurrent_max as usize,
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

    /// Every fault kind the model's domain allows, at weight 1, and its fail
    /// points with every action their declarations allow, each as likely as a
    /// fault kind (a fail point is where the real system fails: a model with
    /// many of them is not tested less at each).
    fn domain_faults(&mut self) -> Vec<ChaosFault> {
        let info = self.info;
        let domain = &info.chaos;
        let ms = Duration::from_millis;
        let mut faults = Vec::new();
        for &name in raw::CHAOS_FAULT_KINDS {
            if domain.excluded.iter().any(|(kind, _)| *kind == name) {
                continue;
            }
            let kind = match name {
                "partition" => ChaosKind::Partition,
                "oneway" => ChaosKind::OneWay,
                "hold" => ChaosKind::Hold,
                "latency" => ChaosKind::Latency {
                    min: ms(domain.latency_ms.0),
                    max: ms(domain.latency_ms.1),
                },
                "crash" => ChaosKind::Crash,
                "restart" => ChaosKind::Restart,
                "stop" => ChaosKind::Stop,
                "transfer_leader" if !info.leader_transfer => continue,
                "transfer_leader" => ChaosKind::TransferLeader,
                _ => {
                    let points = domain_points(info);
                    if points.is_empty() {
                        continue;
                    }
                    let weight = points.len() as u32;
                    faults.push(ChaosFault {
                        kind: ChaosKind::FailPoint(points),
                        weight,
                    });
                    continue;
                }
            };
            faults.push(ChaosFault { kind, weight: 1 });
        }
        faults
    }

    /// The model's workload generators, validated as a section's would be; an
    /// error is the model's (reported at `auto`).
    fn domain_workload(&mut self, loc: crate::yaml::Loc) -> Option<Workload> {
        let info = self.info;
        let domain = &info.chaos;
        let mut ops = Vec::new();
        for template in info.ops.iter().flat_map(|op| op.chaos.iter()) {
            let parsed = self.domain_text(loc, "op", template, |r, node| r.workload_op(node));
            if let Some(mut op) = parsed.flatten() {
                op.index = ops.len();
                ops.push(op);
            }
        }
        if ops.is_empty() {
            return None;
        }
        let target = match domain.on {
            Some(on) => {
                let on = Spanned {
                    loc,
                    value: on.to_string(),
                };
                self.target(&on)?
            }
            None if info.has_leader => Target::Leader,
            None => {
                self.e.error(
                    loc,
                    format!(
                        "model `{}`'s chaos domain names no node for its ops (`on`), and the model has no leader",
                        info.name
                    ),
                );
                return None;
            }
        };
        Some(Workload {
            loc,
            every: Duration::from_millis(domain.every_ms),
            clients: Some(domain.clients),
            target: Some(target),
            ops,
        })
    }

    /// Every param whose declaration says what chaos may draw.
    fn domain_params(
        &mut self,
        loc: crate::yaml::Loc,
        base: Option<&serde_json::Value>,
    ) -> Vec<ChaosParam> {
        let mut params = Vec::new();
        for param in &self.info.params {
            let draw = match &param.chaos {
                ParamChaos::Fixed => continue,
                ParamChaos::Range { min, max } => ParamDraw::Range {
                    min: *min,
                    max: *max,
                },
                ParamChaos::Choices(values) => {
                    ParamDraw::Choices(values.iter().map(param_value).collect())
                }
            };
            // A value the scenario sets itself is the scenario's.
            if base.and_then(|b| b.get(param.name)).is_some() {
                continue;
            }
            params.push(ChaosParam {
                name: param.name.to_string(),
                loc,
                draw,
            });
        }
        // The domain's ranges are drawn together: every low end together and
        // every high end together must be params the model accepts.
        for (end, pick) in [("low", 0usize), ("high", 1)] {
            let mut merged = match base {
                Some(serde_json::Value::Object(map)) => map.clone(),
                _ => serde_json::Map::new(),
            };
            for p in &params {
                let value: serde_json::Value = match &p.draw {
                    ParamDraw::Range { min, max } => [*min, *max][pick].into(),
                    ParamDraw::Choices(c) => c[if pick == 0 { 0 } else { c.len() - 1 }].clone(),
                };
                merged.insert(p.name.clone(), value);
            }
            if let Err(message) = self.model.parse_params(&serde_json::Value::Object(merged)) {
                self.e.error(
                    loc,
                    format!(
                        "model `{}`'s chaos domain: its params at their {end} ends are invalid: {message}",
                        self.info.name
                    ),
                );
                return Vec::new();
            }
        }
        params
    }

    /// Read a text of the model's chaos domain (a step, an op template) as if the
    /// file held it; its errors are the model's, reported at `loc`.
    pub(super) fn domain_text<T>(
        &mut self,
        loc: crate::yaml::Loc,
        what: &str,
        text: &str,
        read: impl FnOnce(&mut Self, &Node) -> T,
    ) -> Option<T> {
        let node = match crate::yaml::parse(text, &crate::yaml::Limits::default()) {
            Ok(node) => node,
            Err(e) => {
                self.e.error(
                    loc,
                    format!(
                        "model `{}`'s chaos domain has an unreadable {what} `{text}`: {}",
                        self.info.name, e.message
                    ),
                );
                return None;
            }
        };
        let mut scratch = super::errors::Errors::new(self.e.file);
        std::mem::swap(self.e, &mut scratch);
        let out = read(self, &node);
        std::mem::swap(self.e, &mut scratch);
        if let Some(first) = scratch.diags.0.first() {
            self.e.error(
                loc,
                format!(
                    "model `{}`'s chaos domain has an invalid {what} `{text}`: {}",
                    self.info.name, first.message
                ),
            );
            return None;
        }
        Some(out)
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
    ) -> Vec<(&'static str, Option<ChaosFault>)> {
        let info = self.info;
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
            let Some(&name) = raw::CHAOS_FAULT_KINDS.iter().find(|k| **k == name) else {
                self.e.unknown_name(
                    key.loc,
                    "chaos fault kind",
                    name,
                    raw::CHAOS_FAULT_KINDS.iter().copied(),
                );
                continue;
            };
            let spec = match &body.value {
                Value::Int(w) => match u32::try_from(*w) {
                    Ok(value) => raw::ChaosFault {
                        weight: Spanned {
                            loc: body.loc,
                            value,
                        },
                        delay: None,
                        points: None,
                    },
                    Err(_) => {
                        self.e.error_hint(
                            body.loc,
                            format!(
                                "a fault weight is a whole number in 0..={}, found {w}",
                                u32::MAX
                            ),
                            "e.g. `crash: 2` (twice as likely as a weight of 1); 0 switches the kind off",
                        );
                        continue;
                    }
                },
                Value::Null
                | Value::Bool(_)
                | Value::Float(_)
                | Value::Str(_)
                | Value::Seq(_)
                | Value::Map(_) => match self.e.read::<raw::ChaosFault>(body) {
                    Some(spec) => spec,
                    None => continue,
                },
            };
            if spec.weight.value == 0 {
                faults.push((name, None));
                continue;
            }
            let kind = match name {
                "partition" => ChaosKind::Partition,
                "oneway" => ChaosKind::OneWay,
                "hold" => ChaosKind::Hold,
                "latency" => {
                    let (min, max) = self.range(
                        &spec.delay,
                        (Duration::from_millis(20), Duration::from_millis(500)),
                    );
                    ChaosKind::Latency { min, max }
                }
                "crash" => ChaosKind::Crash,
                "restart" => ChaosKind::Restart,
                "stop" => ChaosKind::Stop,
                "transfer_leader" if !info.leader_transfer => {
                    self.e.error(
                        key.loc,
                        format!("model `{}` does not support `transfer_leader`", info.name),
                    );
                    continue;
                }
                "transfer_leader" => ChaosKind::TransferLeader,
                _ => {
                    let points = match (body.get("points"), auto) {
                        (Some(points), _) => self.chaos_points(points),
                        (None, true) => domain_points(info),
                        (None, false) => {
                            self.e.error_hint(
                                body.loc,
                                "`failpoint` needs `points`",
                                "e.g. {weight: 1, points: [{point: P, action: {error: K}}]}",
                            );
                            continue;
                        }
                    };
                    ChaosKind::FailPoint(points)
                }
            };
            faults.push((
                name,
                Some(ChaosFault {
                    kind,
                    weight: spec.weight.value,
                }),
            ));
        }
        faults
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

    pub(super) fn workload(&mut self, node: &Node) -> Option<Workload> {
        let info = self.info;
        let raw = self.e.read::<raw::Workload>(node)?;
        let every = self.e.duration(&raw.every)?;
        if every.is_zero() {
            self.e.error(
                raw.every.loc,
                "the workload's `every` must be longer than 0s",
            );
            return None;
        }
        let ops_node = node.get("ops").expect("serde checked");
        let Value::Seq(items) = &ops_node.value else {
            self.e
                .error(ops_node.loc, "`ops` is a list of op templates");
            return None;
        };
        let mut ops = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let mut op = self.workload_op(item)?;
            op.index = index;
            ops.push(op);
        }
        if ops.is_empty() {
            self.e
                .error(ops_node.loc, "the workload needs at least one op");
            return None;
        }
        let clients = match &raw.clients {
            None => None,
            Some(c) if (1..=super::CLIENTS_MAX).contains(&c.value) => Some(c.value as usize),
            Some(c) => {
                self.e.error(
                    c.loc,
                    format!("`clients` is 1..={}, found {}", super::CLIENTS_MAX, c.value),
                );
                return None;
            }
        };
        let target = match &raw.on {
            Some(on) => Some(self.target(on)?),
            None if info.has_leader => Some(Target::Leader),
            None if ops.iter().all(|op| op.target.is_some()) => None,
            None => {
                self.e.error_hint(
                    node.loc,
                    format!("model `{}` has no leader: say which node", info.name),
                    "add `on: NODE` to the workload or to each op",
                );
                return None;
            }
        };
        Some(Workload {
            loc: node.loc,
            every,
            clients,
            target,
            ops,
        })
    }

    /// One op template; its own `on` (reserved by the client step, so never an op
    /// argument) sends it elsewhere than the workload's `on`.
    pub(super) fn workload_op(&mut self, item: &Node) -> Option<WorkloadOp> {
        let target = match item.get("on") {
            Some(on) => {
                let on: Spanned<String> = self.e.read(on)?;
                Some(self.target(&on)?)
            }
            None => None,
        };
        let weight = match item.get("weight") {
            Some(w) => {
                let w: Spanned<u32> = self.e.read(w)?;
                if w.value == 0 {
                    self.e.error(
                        w.loc,
                        "an op's `weight` is at least 1 (leave the op out instead)",
                    );
                    return None;
                }
                w.value
            }
            None => 1,
        };
        let op_node = super::errors::map_filtered(item, |k| k != "on" && k != "weight");
        // The op's name, at the name (a name with a placeholder is left to the
        // checks of its draws).
        if let Some(name) = op_node
            .get("op")
            .filter(|n| !n.as_str().unwrap_or("").contains('{'))
        {
            let info = self.info;
            let text = name.as_str().unwrap_or("");
            if info.op(text).is_none() {
                self.e
                    .unknown_name(name.loc, "op", text, info.ops.iter().map(|o| o.name));
                return None;
            }
        }
        if let Err((loc, message)) = super::templates::placeholders(&op_node) {
            self.e.error(loc, message);
            return None;
        }
        let template = op_node.to_json();
        // Check the template with the smallest and the largest draws.
        for pick in [Pick::Low, Pick::High] {
            let sample = match expand_template(
                &template,
                &mut |lo, hi| if pick == Pick::Low { lo } else { hi },
                0,
            ) {
                Ok(sample) => sample,
                Err(message) => {
                    self.e.error(item.loc, message);
                    return None;
                }
            };
            if let Err(message) = self.model.parse_op(&sample) {
                let loc = locate_field(item, &message).unwrap_or(item.loc);
                self.e.error(loc, format!("workload op: {message}"));
                return None;
            }
        }
        Some(WorkloadOp {
            target,
            template,
            weight,
            index: 0,
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Pick {
    Low,
    High,
}

/// The chaos points of every fail point the model's domain allows: one per
/// error kind, one stall over its range, one panic.
fn domain_points(info: &'static faultline_api::ModelInfo) -> Vec<ChaosPoint> {
    let ms = Duration::from_millis;
    let mut points = Vec::new();
    for &point in &info.fail_points {
        let chaos = &point.chaos;
        let nodes: Vec<Target> = if chaos.leader {
            vec![Target::Leader]
        } else {
            chaos.roles.iter().map(|r| Target::Role(r)).collect()
        };
        let mut add = |action: PointAction, count: Option<u32>| {
            points.push(ChaosPoint {
                point,
                action,
                nodes: nodes.clone(),
                weight: 1,
                count,
            })
        };
        for &kind in chaos.errors {
            add(
                PointAction::Fixed(FaultAction::Error(kind.to_string())),
                chaos.count,
            );
        }
        if let Some((min, max)) = chaos.stall_ms {
            add(
                PointAction::Stall {
                    min: ms(min),
                    max: ms(max),
                },
                chaos.count,
            );
        }
        if chaos.panic {
            add(PointAction::Fixed(FaultAction::Panic), None);
        }
    }
    points
}

/// A declared param value as the params JSON holds it.
fn param_value(value: &ParamValue) -> serde_json::Value {
    match value {
        ParamValue::Bool(b) => (*b).into(),
        ParamValue::Integer(i) => (*i).into(),
        ParamValue::Text(t) => (*t).into(),
        ParamValue::Integers(list) => list.to_vec().into(),
    }
}

// ---- The JSON Schema of what this module reads from the tree. ----

/// `chaos:` as [`Reader::chaos`] reads it.
pub(in crate::scenario) fn chaos_schema(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<raw::Chaos>()
}

/// A workload (top-level or chaos), as [`Reader::workload`] reads it.
pub(in crate::scenario) fn workload_schema(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<raw::Workload>()
}

/// `faults:` as [`Reader::chaos_faults`] reads it: kind -> weight or `{weight, ...}`.
pub(in crate::scenario) fn chaos_faults_schema(generator: &mut SchemaGenerator) -> Schema {
    let full = generator.subschema_for::<raw::ChaosFault>();
    let kind = json_schema!({
        "anyOf": [
            {"type": "integer", "minimum": 0, "maximum": u32::MAX, "description": "The weight (0 switches the kind off)."},
            full,
        ],
    });
    let properties: serde_json::Map<String, serde_json::Value> = raw::CHAOS_FAULT_KINDS
        .iter()
        .map(|name| (name.to_string(), kind.clone().to_value()))
        .collect();
    json_schema!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    })
}

/// `chaos.params:` as [`Reader::chaos_params`] reads it.
pub(in crate::scenario) fn chaos_params_schema(generator: &mut SchemaGenerator) -> Schema {
    let range = generator.subschema_for::<raw::IntRange>();
    json_schema!({
        "type": "object",
        "additionalProperties": {"anyOf": [range, {"type": "array", "minItems": 1}]},
    })
}

/// `restart_exited:` as [`Reader::restart_exited`] reads it: the supervisor's
/// delay range, or `false`.
pub(in crate::scenario) fn restart_exited_schema(generator: &mut SchemaGenerator) -> Schema {
    let range = generator.subschema_for::<raw::Range>();
    json_schema!({
        "description": "Start a node whose process ended itself in the window again after a delay drawn from this range (a supervisor), or `false` (it stays down until the heal phase).",
        "anyOf": [range, {"const": false}],
    })
}

/// A chaos point's `action:` as [`Reader::point_action`] reads it.
pub(in crate::scenario) fn point_action_schema(generator: &mut SchemaGenerator) -> Schema {
    let fixed = generator.subschema_for::<raw::Action>();
    let range = generator.subschema_for::<raw::Range>();
    json_schema!({
        "anyOf": [
            fixed,
            {"type": "object", "properties": {"stall": range}, "required": ["stall"], "additionalProperties": false},
        ],
    })
}

/// A workload's `ops:` as [`Reader::workload`] and [`Reader::workload_op`]
/// read them: op templates, each with its own `on` and `weight`.
pub(in crate::scenario) fn workload_ops_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "properties": {
                "op": {"type": "string", "description": "One of the model's ops; its arguments (which may hold placeholders `{A..B}`, `{seq}`) are keys beside it."},
                "on": {"type": "string", "description": "A node reference (default: the workload's `on`)."},
                "weight": {"type": "integer", "minimum": 1, "maximum": u32::MAX, "description": "Relative frequency (default 1)."},
            },
            "required": ["op"],
        },
    })
}
