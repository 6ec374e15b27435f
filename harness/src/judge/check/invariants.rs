//! The model's declared invariants, each evaluated over the cluster view.
//!
//! A liveness invariant may not be judgeable from what a run saw: a leader not
//! ready for 8 s of a 30 s bound when the run ends neither passed nor failed.
//! That is never a pass: the run waits for it when it may (the heal phase), and
//! what is still undecided at judgment is reported as not judged
//! ([`Unjudged`]), in the run's result, its report and the coverage ledger.
//!
//! A node may find an invariant broken while the run goes on
//! (`NodeCtx::violation`, an oracle of what every node holds): the view carries
//! the first report of each, and a reported invariant fails with it whatever
//! the model's own check would say of the final state.

use super::{guarded, Finding};
use crate::base::outcome::Outcome;
use faultline_api::{Check, ClusterView, InvariantKind, Model};
use serde::{Deserialize, Serialize};

/// An invariant a run could not judge, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unjudged {
    /// `invariant:NAME`, as a finding would name it.
    pub checker: String,
    pub why: String,
    /// The scenario accepts leaving it unjudged (`heal: {unjudged: [...]}`):
    /// said, but it does not fail a sweep.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allowed: bool,
}

/// One invariant's judgment.
pub enum Judged {
    /// Passed (no findings) or failed.
    Findings(Vec<Finding>),
    /// Not decidable yet: `wait_ms` more of the run could tell (`None`: nothing could).
    Unjudged { why: String, wait_ms: Option<u64> },
}

/// Evaluate every invariant the model declares: the failures, and the
/// invariants that could not be judged.
pub fn check_all(model: &dyn Model, view: &ClusterView) -> (Vec<Finding>, Vec<Unjudged>) {
    let mut findings = Vec::new();
    let mut unjudged = Vec::new();
    for inv in &model.info().invariants {
        match judge(model, inv.name, view) {
            Judged::Findings(found) => findings.extend(found),
            Judged::Unjudged { why, .. } => unjudged.push(Unjudged {
                checker: format!("invariant:{}", inv.name),
                why,
                allowed: false,
            }),
        }
    }
    // A model's node reported an invariant its model does not declare: a
    // defect of the model, never a pass.
    for v in &view.violations {
        if model.info().invariant(&v.invariant).is_none() {
            findings.push(Finding::unknown(
                &format!("invariant:{}", v.invariant),
                format!(
                    "{} reported invariant `{}` broken, which model `{}` does not declare: {}",
                    v.node,
                    v.invariant,
                    model.info().name,
                    v.message
                ),
            ));
        }
    }
    (findings, unjudged)
}

/// How much longer the run would have to go on for every liveness invariant
/// to be judgeable now (`None`: each is judged, or no wait would help).
pub fn wait_for_liveness(model: &dyn Model, view: &ClusterView) -> Option<u64> {
    model
        .info()
        .invariants
        .iter()
        .filter(|i| i.kind == InvariantKind::Liveness)
        .filter_map(|i| match judge(model, i.name, view) {
            Judged::Unjudged { wait_ms, .. } => wait_ms,
            Judged::Findings(_) => None,
        })
        .min()
}

/// Evaluate one invariant: its failures (none when it holds or cannot be
/// judged yet). Safety failures are `violated`; liveness failures are `stuck`;
/// a panic is `unknown`.
pub fn check_one(model: &dyn Model, name: &str, view: &ClusterView) -> Vec<Finding> {
    match judge(model, name, view) {
        Judged::Findings(found) => found,
        Judged::Unjudged { .. } => Vec::new(),
    }
}

/// Evaluate one invariant.
pub fn judge(model: &dyn Model, name: &str, view: &ClusterView) -> Judged {
    let kind = model
        .info()
        .invariant(name)
        .map(|i| i.kind)
        .unwrap_or(InvariantKind::Safety);
    let checker = format!("invariant:{name}");
    let mut unjudged = None;
    let check = || match view.violation(name) {
        Some(reported) => Check::Fail(reported.message.clone()),
        None => model.check(name, view),
    };
    let found = guarded(&checker, || match check() {
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
        Check::Unjudged { why, wait_ms } => {
            unjudged = Some((why, wait_ms));
            Vec::new()
        }
    });
    match unjudged {
        Some((why, wait_ms)) if found.is_empty() => Judged::Unjudged { why, wait_ms },
        Some(_) | None => Judged::Findings(found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::Violation;

    fn view(violations: Vec<Violation>) -> ClusterView {
        ClusterView {
            now_ms: 1_000,
            nodes: Vec::new(),
            violations,
            link_faults: Vec::new(),
        }
    }

    fn reported(invariant: &str, message: &str) -> Violation {
        Violation {
            invariant: invariant.into(),
            node: "n2".into(),
            t_ms: 420,
            message: message.into(),
        }
    }

    /// A violation a node reported fails its invariant with the report's
    /// message, though the final state the model's check reads looks fine.
    #[test]
    fn a_reported_violation_fails_its_invariant_with_its_message() {
        let model = nodes::registry::find("raftkv").expect("raftkv is registered");
        let (findings, unjudged) = check_all(model, &view(Vec::new()));
        assert!(findings.is_empty() && unjudged.is_empty(), "{findings:?}");
        let broken = view(vec![reported(
            "applied_entries_stable",
            "index 3 replaced after it was applied",
        )]);
        let (findings, _) = check_all(model, &broken);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].checker, "invariant:applied_entries_stable");
        assert_eq!(findings[0].outcome, Some(Outcome::Violated));
        assert_eq!(
            findings[0].message,
            "applied_entries_stable: index 3 replaced after it was applied"
        );
    }

    /// A report of an invariant the model does not declare is not dropped.
    #[test]
    fn a_reported_violation_of_an_undeclared_invariant_is_unknown() {
        let model = nodes::registry::find("raftkv").expect("raftkv is registered");
        let (findings, _) = check_all(model, &view(vec![reported("made_up", "it broke")]));
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].checker, "invariant:made_up");
        assert_eq!(findings[0].outcome, Some(Outcome::Unknown));
        assert!(
            findings[0].message.contains("does not declare"),
            "{}",
            findings[0].message
        );
    }
}
