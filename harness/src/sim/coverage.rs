//! What one run exercised: the probes it reached, the fail points armed, reached
//! and fired, and the faults drawn and whether each took effect. A sweep's
//! ledger (`sweep::ledger`) adds these up over runs; they travel in each run's
//! record, so `merge` can add up shards too.

use crate::base::trail::{Data, Trail};
use crate::sim::faults::ArmSummary;
use faultline_api::NodeEvent;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// The run's model (the ledger judges probes per model).
    #[serde(default)]
    pub model: String,
    /// Whether the scenario had a chaos section (probes are judged only for
    /// models a sweep explored with chaos: a scripted trail reaches what it scripts).
    #[serde(default)]
    pub chaos: bool,
    /// Probes any node reported, by name (sorted, each once).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<String>,
    /// Per fail point (over every node): armings, evaluations while armed, firings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub points: BTreeMap<String, PointUse>,
    /// Per fault kind (client ops excluded): actions taken, and how many changed
    /// something (a crash of a down node, a release with nothing held did not).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub faults: BTreeMap<String, FaultUse>,
    /// Liveness invariants this run could not judge (and the scenario does
    /// not accept leaving unjudged), each with why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unjudged: BTreeMap<String, String>,
    /// The model's declared probes, carried only for a model that is not built
    /// into faultline (an external model, run by its own binary): the process
    /// that reads the run (a sweep, a merge, a report on another machine) may not
    /// have that model, and judges its probes from these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared: Vec<DeclaredProbe>,
}

pub use crate::base::models::DeclaredProbe;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointUse {
    pub armed: u64,
    pub reached: u64,
    pub fired: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultUse {
    pub drawn: u64,
    pub effective: u64,
}

impl Coverage {
    pub fn of(model: &str, chaos: bool, trail: &Trail, fail_points: &[ArmSummary]) -> Coverage {
        let mut coverage = Coverage {
            model: model.to_string(),
            chaos,
            declared: crate::base::models::carried_probes(model),
            ..Coverage::default()
        };
        for event in trail.iter() {
            if let Data::Node(NodeEvent::Probe { probe, .. }) = &event.data {
                coverage.probes.push(probe.clone());
            }
            if let Data::Action(acted) = &event.data {
                let kind = acted.action.kind();
                if kind != "client" {
                    let fault = coverage.faults.entry(kind.to_string()).or_default();
                    fault.drawn += 1;
                    fault.effective += u64::from(acted.result.took_effect());
                }
            }
        }
        coverage.probes.sort();
        coverage.probes.dedup();
        for arm in fail_points {
            let point = coverage.points.entry(arm.point.clone()).or_default();
            point.armed += 1;
            point.reached += u64::from(arm.hits);
            point.fired += u64::from(arm.fired);
        }
        coverage
    }
}
