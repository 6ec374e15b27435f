//! The canary: with a deliberately broken model the harness must fail the run.
//! If this ever passes as converged, the harness has gone blind.

mod common;

use faultline::base::outcome::Outcome;
use faultline::sim::runner;

#[test]
fn the_canary_diverges_or_violates_with_the_defect_and_converges_without() {
    let scenario = common::bundled()
        .into_iter()
        .find(|s| s.name == "raftkv-canary-quorum")
        .unwrap();
    for seed in 1..=5 {
        let buggy = runner::run(&scenario, scenario.variant("buggy").unwrap(), seed);
        assert!(
            matches!(buggy.outcome, Outcome::Diverged | Outcome::Violated),
            "seed {seed}: the broken model ended {} ({:?})",
            buggy.outcome,
            buggy.findings
        );
        let fixed = runner::run(&scenario, scenario.variant("fixed").unwrap(), seed);
        assert_eq!(
            fixed.outcome,
            Outcome::Converged,
            "seed {seed}: {:?}",
            fixed.findings
        );
    }
}
