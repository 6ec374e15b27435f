//! Exit codes: the one place they are defined, and the one place a verdict becomes
//! one. 0, 1 and 2 keep their meaning for every command; a single run (the replay
//! command of a failure, say) exits with the code of its failing class, as
//! TigerBeetle's VOPR does, so a script can tell a divergence from a hang without
//! parsing output. The table is printed by `--help` and kept in the README.

use crate::base::outcome::Outcome;
use crate::report::RunRecord;

/// Every run met its expectation.
pub const OK: u8 = 0;
/// Of several runs, at least one did not meet its expectation.
pub const FAILED: u8 = 1;
/// Bad input or usage: nothing was judged.
pub const BAD_INPUT: u8 = 2;
/// A command that did not cover every run it was asked for (a sweep's time
/// budget, a missing shard, unreadable records, a variant whose target is not
/// built: `run`, `sweep`, `hunt`, `validate`). It outranks the runs' verdict: the
/// runs that happened are reported, but the set is not green. A sweep stopped
/// by `--fail-fast` exits with its failure's code instead: the failure is the
/// verdict.
pub const INCOMPLETE: u8 = 3;
/// A rerun of the same scenario and seed gave another trail.
pub const NONDETERMINISM: u8 = 4;
/// A sweep (unsharded) or merge whose runs all met their expectations, but
/// never reached a probe its model does not mark rare, or had runs that could
/// not judge a liveness invariant: it tested less than it claims
/// (FoundationDB's rule for code probes).
pub const UNREACHED: u8 = 5;
/// One run that missed its expectation without a failing outcome: it converged
/// where a failure was expected, or evidence (trail, observed state, a fail point
/// that fired) was missing.
pub const EXPECTATION_UNMET: u8 = 10;
/// One run whose replicas diverged, unexpectedly.
pub const DIVERGED: u8 = 11;
/// One run that violated a safety invariant, unexpectedly.
pub const VIOLATED: u8 = 12;
/// One run that got stuck (a deadline or limit), unexpectedly.
pub const STUCK: u8 = 13;
/// One run that crashed (a panic in a node or the harness), unexpectedly.
pub const CRASHED: u8 = 14;
/// One run that a checker could not judge (it panicked or ran out of budget).
pub const UNKNOWN: u8 = 15;
/// A sweep stopped by SIGINT or SIGTERM (after saving what it had).
pub const INTERRUPTED: u8 = 130;

/// Every code with its meaning, for `--help` and the README.
pub const TABLE: &[(u8, &str)] = &[
    (OK, "every run met its expectation"),
    (
        FAILED,
        "several runs, and at least one missed its expectation",
    ),
    (BAD_INPUT, "bad input or usage; nothing was judged"),
    (
        INCOMPLETE,
        "not every requested run was done (a sweep's time budget, a missing shard, a target not built); the rest were judged",
    ),
    (
        NONDETERMINISM,
        "a rerun of the same seed gave another trail",
    ),
    (
        UNREACHED,
        "a sweep or merge passed but never reached a declared (not rare) probe, or a run could not judge a liveness invariant",
    ),
    (
        EXPECTATION_UNMET,
        "one run missed its expectation without a failing outcome",
    ),
    (DIVERGED, "one run diverged unexpectedly"),
    (VIOLATED, "one run violated an invariant unexpectedly"),
    (STUCK, "one run got stuck unexpectedly"),
    (CRASHED, "one run crashed unexpectedly"),
    (UNKNOWN, "one run could not be judged"),
    (INTERRUPTED, "a sweep was stopped by SIGINT or SIGTERM"),
];

/// The table as `--help` shows it.
pub fn help() -> String {
    let mut text = String::from("Exit codes:\n");
    for (code, meaning) in TABLE {
        text.push_str(&format!("  {code:>3}  {meaning}\n"));
    }
    text
}

/// The failing class of one run that did not meet its expectation.
pub fn of_failed_run(r: &RunRecord) -> u8 {
    if r.nondeterminism.is_some() {
        return NONDETERMINISM;
    }
    if r.expected.contains(&r.outcome) {
        return EXPECTATION_UNMET;
    }
    match r.outcome {
        Outcome::Converged => EXPECTATION_UNMET,
        Outcome::Diverged => DIVERGED,
        Outcome::Violated => VIOLATED,
        Outcome::Stuck => STUCK,
        Outcome::Crashed => CRASHED,
        Outcome::Unknown => UNKNOWN,
    }
}

/// The code of a set of finished runs: OK when all passed; the run's class when
/// there was exactly one; NONDETERMINISM when any failure was one (a harness
/// defect outranks a model's); FAILED otherwise.
pub fn of_runs<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> u8 {
    let records: Vec<&RunRecord> = records.into_iter().collect();
    let failed: Vec<&RunRecord> = records.iter().copied().filter(|r| !r.passed).collect();
    match (records.len(), failed.first()) {
        (_, None) => OK,
        (1, Some(r)) => of_failed_run(r),
        _ if failed.iter().any(|r| r.nondeterminism.is_some()) => NONDETERMINISM,
        _ => FAILED,
    }
}

/// A sweep or merge: interrupted first, then lost coverage, then the runs.
pub fn of_sweep<'a>(
    interrupted: bool,
    complete: bool,
    records: impl IntoIterator<Item = &'a RunRecord>,
) -> u8 {
    if interrupted {
        INTERRUPTED
    } else if !complete {
        INCOMPLETE
    } else {
        of_runs(records)
    }
}

/// `of_sweep`, then: a sweep that passed but left a judged probe unreached.
pub fn of_covered_sweep<'a>(
    interrupted: bool,
    complete: bool,
    records: impl IntoIterator<Item = &'a RunRecord>,
    coverage: Option<&crate::drive::sweep::meta::CoverageReport>,
) -> u8 {
    let code = of_sweep(interrupted, complete, records);
    let unreached = coverage.is_some_and(|c| {
        c.judged && !(c.verdict.unreached.is_empty() && c.verdict.not_judged.is_empty())
    });
    if code == OK && unreached {
        UNREACHED
    } else {
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(outcome: Outcome, expected: Outcome, passed: bool) -> RunRecord {
        RunRecord {
            schema_version: crate::report::RECORD_SCHEMA_VERSION,
            scenario: "s".into(),
            file: "s.yaml".into(),
            variant: "v".into(),
            seed: 1,
            outcome,
            expected: vec![expected],
            passed,
            ..RunRecord::default()
        }
    }

    #[test]
    fn each_failing_class_of_a_single_run_has_its_own_code() {
        use Outcome::*;
        let cases = [
            (Diverged, DIVERGED),
            (Violated, VIOLATED),
            (Stuck, STUCK),
            (Crashed, CRASHED),
            (Unknown, UNKNOWN),
        ];
        for (outcome, code) in cases {
            assert_eq!(of_runs([&run(outcome, Converged, false)]), code);
        }
        assert_eq!(
            of_runs([&run(Converged, Diverged, false)]),
            EXPECTATION_UNMET
        );
        assert_eq!(
            of_runs([&run(Diverged, Diverged, false)]),
            EXPECTATION_UNMET
        );
        let mut nondet = run(Converged, Converged, false);
        nondet.nondeterminism = Some("differs".into());
        assert_eq!(of_runs([&nondet]), NONDETERMINISM);
        assert_eq!(of_runs([&run(Converged, Converged, true)]), OK);
        let codes: std::collections::BTreeSet<u8> = TABLE.iter().map(|(c, _)| *c).collect();
        assert_eq!(codes.len(), TABLE.len(), "codes are distinct");
    }

    #[test]
    fn several_runs_keep_1_and_sweeps_rank_interruption_and_lost_coverage_first() {
        let pass = run(Outcome::Converged, Outcome::Converged, true);
        let fail = run(Outcome::Diverged, Outcome::Converged, false);
        assert_eq!(of_runs([&pass, &fail]), FAILED);
        assert_eq!(of_runs([&pass, &pass]), OK);
        assert_eq!(of_sweep(true, false, [&fail]), INTERRUPTED);
        assert_eq!(of_sweep(false, false, [&pass]), INCOMPLETE);
        assert_eq!(of_sweep(false, true, [&pass, &fail]), FAILED);
    }
}
