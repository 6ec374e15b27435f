//! The model's declared invariants, each evaluated over the cluster view.

use super::{guarded, Finding};
use crate::outcome::Outcome;
use nodes::api::{Check, ClusterView, InvariantKind, Model};

/// Evaluate every invariant the model declares.
pub fn check_all(model: &dyn Model, view: &ClusterView) -> Vec<Finding> {
    model
        .info()
        .invariants
        .iter()
        .flat_map(|inv| check_one(model, inv.name, view))
        .collect()
}

/// Evaluate one invariant. Safety failures are `violated`; liveness failures are
/// `stuck`; a panic is `unknown`.
pub fn check_one(model: &dyn Model, name: &str, view: &ClusterView) -> Vec<Finding> {
    let kind = model
        .info()
        .invariant(name)
        .map(|i| i.kind)
        .unwrap_or(InvariantKind::Safety);
    let checker = format!("invariant:{name}");
    guarded(&checker, || match model.check(name, view) {
        Check::Pass => Vec::new(),
        Check::Fail(message) => {
            let outcome = match kind {
                InvariantKind::Safety | InvariantKind::Always => Outcome::Violated,
                InvariantKind::Liveness => Outcome::Stuck,
            };
            vec![Finding::new(
                &checker,
                Some(outcome),
                format!("{name}: {message}"),
            )]
        }
    })
}
