//! The `chaos` section: fault kinds with weights, fail points, and the workload.

use super::errors::locate_field;
use super::names::Reader;
use super::templates::expand_template;
use crate::scenario::raw;
use crate::scenario::*;
use crate::yaml::{Node, Spanned, Value};
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
        let window = self.e.duration(&raw.window)?;
        if window.is_zero() {
            self.e
                .error(raw.window.loc, "the chaos `window` must be longer than 0s");
        }
        let concurrent_max = raw.concurrent_max.as_ref().map(|c| c.value).unwrap_or(2);
        if concurrent_max == 0 {
            self.e.error(
                raw.concurrent_max.as_ref().expect("given").loc,
                "`concurrent_max` is at least 1",
            );
        }
        let spacing = self.range(
            &raw.spacing,
            (Duration::from_millis(200), Duration::from_secs(2)),
        );
        let duration = self.range(
            &raw.duration,
            (Duration::from_millis(500), Duration::from_secs(5)),
        );
        let faults = self.chaos_faults(node.get("faults").expect("serde checked"));
        let workload = node.get("workload").and_then(|w| self.workload(w));
        let params = node
            .get("params")
            .map(|p| self.chaos_params(p, base))
            .unwrap_or_default();
        if faults.is_empty() && workload.is_none() {
            self.e.error(
                node.loc,
                "chaos with no fault kinds and no workload tests nothing",
            );
        }
        Some(Chaos {
            loc: node.loc,
            window,
            swarm: raw.swarm,
            concurrent_max: concurrent_max as usize,
            spacing,
            duration,
            faults,
            workload,
            params,
        })
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
            let samples: Vec<serde_json::Value> = match &draw {
                ParamDraw::Range { min, max } => vec![(*min).into(), (*max).into()],
                ParamDraw::Choices(choices) => choices.clone(),
            };
            let mut ok = true;
            for sample in samples {
                let mut merged = match base {
                    Some(serde_json::Value::Object(map)) => map.clone(),
                    _ => serde_json::Map::new(),
                };
                merged.insert(name.clone(), sample.clone());
                if let Err(message) = self.model.parse_params(&serde_json::Value::Object(merged)) {
                    self.e.error(
                        key.loc,
                        format!("chaos param `{name}` = {sample}: invalid params: {message}"),
                    );
                    ok = false;
                    break;
                }
            }
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

    pub(super) fn chaos_faults(&mut self, node: &Node) -> Vec<ChaosFault> {
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
            if !raw::CHAOS_FAULT_KINDS.contains(&name) {
                self.e.unknown_name(
                    key.loc,
                    "chaos fault kind",
                    name,
                    raw::CHAOS_FAULT_KINDS.iter().copied(),
                );
                continue;
            }
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
                    let Some(points) = &spec.points else {
                        self.e.error_hint(
                            body.loc,
                            "`failpoint` needs `points`",
                            "e.g. {weight: 1, points: [{point: P, action: {error: K}}]}",
                        );
                        continue;
                    };
                    ChaosKind::FailPoint(
                        points.iter().filter_map(|p| self.chaos_point(p)).collect(),
                    )
                }
            };
            faults.push(ChaosFault {
                kind,
                weight: spec.weight.value,
            });
        }
        faults
    }

    pub(super) fn chaos_point(&mut self, raw: &Spanned<raw::ChaosPoint>) -> Option<ChaosPoint> {
        let point = self.point(&raw.value.point)?;
        let action = self.fault_action(point, &raw.value.action)?;
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
