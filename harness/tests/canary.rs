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

/// The Raft oracle (the adapter kit's, fed by the models' Raft shell) judges the
/// canary at the moment its leader commits: the buggy leader's commit is held by
/// a minority, and no oracle invariant fails on the fixed model.
#[test]
fn the_raft_oracle_catches_the_canary_commit_when_it_happens() {
    let scenario = common::bundled()
        .into_iter()
        .find(|s| s.name == "raftkv-canary-quorum")
        .unwrap();
    let oracle = [
        "invariant:committed_on_quorum",
        "invariant:committed_entries_agree",
        "invariant:leader_completeness",
        "invariant:election_safety",
    ];
    for seed in 1..=5 {
        let buggy = runner::run(&scenario, scenario.variant("buggy").unwrap(), seed);
        let quorum = buggy
            .findings
            .iter()
            .find(|f| f.checker == "invariant:committed_on_quorum")
            .unwrap_or_else(|| panic!("seed {seed}: {:?}", buggy.findings));
        assert!(
            quorum.message.contains("not a majority"),
            "seed {seed}: {}",
            quorum.message
        );
        let fixed = runner::run(&scenario, scenario.variant("fixed").unwrap(), seed);
        let judged: Vec<&str> = fixed.findings.iter().map(|f| f.checker.as_str()).collect();
        assert!(
            judged.iter().all(|c| !oracle.contains(c)),
            "seed {seed}: {judged:?}"
        );
    }
}
