//! What `chaos: {auto: true}` takes from the model's chaos domain: its fault
//! kinds and fail points, its workload, the params it draws, and the texts it
//! holds (setup steps, op templates, final ops), each read as a file's would be.

use super::names::Reader;
use crate::lang::scenario::*;
use crate::lang::yaml::{Node, Spanned};
use faultline_api::{ParamChaos, ParamValue};
use std::time::Duration;

impl Reader<'_, '_> {
    /// Every fault kind the model's domain allows, at weight 1, and its fail
    /// points with every action their declarations allow, each as likely as a
    /// fault kind (a fail point is where the real system fails: a model with
    /// many of them is not tested less at each).
    pub(super) fn domain_faults(&mut self) -> Vec<ChaosFault> {
        let info = self.info;
        let domain = &info.chaos;
        let ms = Duration::from_millis;
        let mut faults = Vec::new();
        for &kind in FaultKind::ALL {
            if domain.excluded.iter().any(|(name, _)| *name == kind.name()) {
                continue;
            }
            let kind = match kind {
                FaultKind::Partition => ChaosKind::Partition,
                FaultKind::OneWay => ChaosKind::OneWay,
                FaultKind::Hold => ChaosKind::Hold,
                FaultKind::Latency => ChaosKind::Latency {
                    min: ms(domain.latency_ms.0),
                    max: ms(domain.latency_ms.1),
                },
                FaultKind::Crash => ChaosKind::Crash,
                FaultKind::Restart => ChaosKind::Restart,
                FaultKind::Stop => ChaosKind::Stop,
                FaultKind::TransferLeader if !info.leader_transfer => continue,
                FaultKind::TransferLeader => ChaosKind::TransferLeader,
                FaultKind::FailPoint => {
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
    pub(super) fn domain_workload(&mut self, loc: crate::lang::yaml::Loc) -> Option<Workload> {
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
    pub(super) fn domain_params(
        &mut self,
        loc: crate::lang::yaml::Loc,
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
        loc: crate::lang::yaml::Loc,
        what: &str,
        text: &str,
        read: impl FnOnce(&mut Self, &Node) -> T,
    ) -> Option<T> {
        let node = match crate::lang::yaml::parse(text, &crate::lang::yaml::Limits::default()) {
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
}

/// The chaos points of every fail point the model's domain allows: one per
/// error kind, one stall over its range, one panic.
pub(super) fn domain_points(info: &'static faultline_api::ModelInfo) -> Vec<ChaosPoint> {
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
