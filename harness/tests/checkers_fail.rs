//! A checker that cannot fail is a defect: every checker and every declared
//! invariant is shown failing here, on a real model's run or on a real run's
//! trail with one event added.

mod common;

use common::load_text;
use faultline::base::outcome::Outcome;
use faultline::base::trail::{Kind, Trail};
use faultline::judge::check::{history, Finding};
use faultline::lang::scenario::Scenario;
use faultline::sim::runner::{self, RunResult};
use faultline_api::{NodeEvent, Role};
use std::collections::BTreeSet;

fn bundled(name: &str) -> Scenario {
    common::bundled()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no bundled scenario {name}"))
}

fn run_variant(scenario: &Scenario, variant: &str) -> RunResult {
    let variant = scenario.variant(variant).expect("variant");
    runner::run(scenario, variant, scenario.settings.seed)
}

fn checkers(result: &RunResult) -> BTreeSet<String> {
    result.findings.iter().map(|f| f.checker.clone()).collect()
}

fn finding<'r>(result: &'r RunResult, checker: &str) -> &'r Finding {
    result
        .findings
        .iter()
        .find(|f| f.checker == checker)
        .unwrap_or_else(|| panic!("no `{checker}` finding in {:?}", result.findings))
}

/// Buggy variants of bundled scenarios and the checkers each must trip.
const FAILING_RUNS: &[(&str, &str, &[&str])] = &[
    (
        "raftkv-canary-quorum",
        "buggy",
        &[
            "divergence",
            "invariant:applied_entries_stable",
            // The Raft oracle, fed by the Raft shell (nodes/src/raft/shell.rs).
            "invariant:committed_on_quorum",
            "invariant:committed_entries_agree",
            "invariant:leader_completeness",
        ],
    ),
    (
        "zookeeper-4541-partition",
        "buggy",
        &["divergence", "invariant:committed_txns_durable"],
    ),
    (
        "hdds-17062-scm",
        "buggy",
        &["divergence", "invariant:receiver_matches_datanode"],
    ),
    (
        "hdds-17062-phantom-unhealthy",
        "buggy",
        &["invariant:receiver_never_regresses"],
    ),
    (
        "hdds-17603-purge-read-error",
        "buggy",
        &[
            "divergence",
            "invariant:snapshots_agree",
            "invariant:transaction_info_covers_effects",
        ],
    ),
    (
        "hdds-10798-leader-not-ready",
        "buggy",
        &["invariant:leader_ready_within_bound"],
    ),
    (
        "hdds-17670-active-store",
        "buggy",
        &["invariant:bucket_usage_matches_tables"],
    ),
];

/// Invariants shown failing by a unit test on a hand-written view in their
/// model's crate (no bundled run breaks them).
const FAILING_UNIT_TESTS: &[(&str, &str)] = &[
    // nodes/src/hdds/mod.rs: a_commit_of_a_transaction_the_datanode_never_executed_is_a_violation
    ("hdds-reports", "deletion_committed_after_execution"),
    // nodes/src/hdds/mod.rs: a_transaction_still_logged_at_judgment_is_named_with_what_holds_it
    ("hdds-reports", "deletions_acknowledged"),
    // api/src/kit/raft/tests.rs: two_leaders_of_one_term_break_election_safety_and_a_restored_leader_does_not
    // (the oracle raftkv's Raft shell feeds; the canary's leader_completeness
    // failure above shows the shell's Leader events, which this is checked on,
    // reach it)
    ("raftkv", "election_safety"),
];

/// Models whose Raft is raftkv's (the same shell, `nodes/src/raft/shell.rs`,
/// feeding the same oracle): what breaks an oracle invariant on raftkv's Raft
/// breaks it on theirs. No bug key of theirs is in the Raft, so no run of
/// theirs can show it.
const ON_RAFTKV_RAFT: &[&str] = &["ozone-om"];

#[test]
fn every_model_invariant_and_the_divergence_check_fail_on_a_buggy_run() {
    let mut proven: BTreeSet<String> = BTreeSet::new();
    for (name, variant, wanted) in FAILING_RUNS {
        let scenario = bundled(name);
        let result = run_variant(&scenario, variant);
        let found = checkers(&result);
        for checker in *wanted {
            assert!(
                found.contains(*checker),
                "{name} [{variant}]: no `{checker}` finding; found {found:?}"
            );
            let f = finding(&result, checker);
            assert!(
                matches!(
                    f.outcome,
                    Some(Outcome::Diverged | Outcome::Violated | Outcome::Stuck)
                ),
                "{f:?}"
            );
            proven.insert(format!("{}/{checker}", scenario.model.info().name));
        }
    }
    for (model, invariant) in FAILING_UNIT_TESTS {
        proven.insert(format!("{model}/invariant:{invariant}"));
    }
    for model in ON_RAFTKV_RAFT {
        for invariant in nodes::raft::invariants() {
            let on_raftkv = format!("raftkv/invariant:{}", invariant.name);
            assert!(
                proven.contains(&on_raftkv),
                "no test shows `{on_raftkv}` failing"
            );
            proven.insert(format!("{model}/invariant:{}", invariant.name));
        }
    }
    // A new invariant needs a run (or a unit test) in which it fails.
    for model in nodes::registry::models() {
        let info = model.info();
        if info.name == "faulty" {
            continue;
        }
        for invariant in &info.invariants {
            let key = format!("{}/invariant:{}", info.name, invariant.name);
            assert!(proven.contains(&key), "no test shows `{key}` failing");
        }
    }
}

/// Copy a model's own "I lead" event to another node in the same term: the
/// trail of a real run, with one real-shaped event added.
fn second_leader(trail: &Trail, other: &str) -> (Trail, u64) {
    let first = trail
        .iter()
        .position(|e| {
            matches!(
                e.node_event(),
                Some(NodeEvent::Leader {
                    role: Role::Leader,
                    ..
                })
            )
        })
        .expect("the run has a leader");
    let mut copy = trail.events[first].clone();
    assert_ne!(copy.node.as_deref(), Some(other));
    copy.node = Some(other.to_string());
    copy.t_ms += 1;
    let term = copy.field("term").and_then(|t| t.as_u64()).unwrap();
    let mut events = trail.events.clone();
    events.insert(first + 1, copy);
    (Trail { events }, term)
}

#[test]
fn election_safety_counts_and_fails_on_every_model_with_leaders() {
    for (name, variant, other) in [
        ("zookeeper-4541-partition", "buggy", "zk1"),
        ("raftkv-leader-crash", "default", "n9"),
        ("hdds-17603-purge-read-error", "buggy", "om9"),
    ] {
        let scenario = bundled(name);
        let result = run_variant(&scenario, variant);
        let announced = history::leader_announcements(&result.trail);
        let leader_events = result
            .trail
            .iter()
            .filter(|e| e.kind == Kind::Leader && e.detail.starts_with("leader term"))
            .count();
        // Before the events were typed, ZooKeeper's `leader term 1: NEWLEADER ...`
        // was skipped: 0 counted.
        assert!(announced > 0, "{name}: no leader announcement counted");
        assert_eq!(announced, leader_events, "{name}");
        assert!(history::election_safety(&result.trail).is_empty(), "{name}");
        let (trail, term) = second_leader(&result.trail, other);
        let findings = history::election_safety(&trail);
        assert_eq!(findings.len(), 1, "{name}: {findings:?}");
        assert_eq!(findings[0].outcome, Some(Outcome::Violated));
        assert!(
            findings[0].message.contains(&format!("term {term}"))
                && findings[0].message.contains(other),
            "{}",
            findings[0].message
        );
    }
}

#[test]
fn unmet_expectations_fail_the_run() {
    let text = r#"
model: raftkv
nodes: [n1, n2, n3]
expect:
  outcome: converged
  trail:
    - {kind: crash, contains: "unsynced writes lost"}
  absent:
    - {kind: op_ok, contains: "put a=1"}
  observed:
    - {node: n1, key: a, value: "2"}
steps:
  - await: {leader: any, within: 5s}
  - client: {op: put, key: a, value: "1", expect: ok}
"#;
    let result = run_one(text);
    let messages: Vec<&str> = result
        .findings
        .iter()
        .filter(|f| f.checker == "expect")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(messages.len(), 3, "{:?}", result.findings);
    assert!(
        messages[0].contains("expected at least one trail event(s) with kind crash"),
        "{messages:?}"
    );
    assert!(messages[1].contains("expected no trail event with kind op_ok"));
    assert!(
        messages[2].contains("expected n1.a") && messages[2].contains("observed n1 \"1\""),
        "{}",
        messages[2]
    );
    assert!(!result.passed);
}

fn run_one(text: &str) -> RunResult {
    let scenario = load_text("checkers-fail.yaml", text);
    runner::run(&scenario, &scenario.variants[0], 1)
}

#[test]
fn a_fault_that_had_no_effect_fails_the_run() {
    let text = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
  - failpoint: {node: n2, point: propose, action: {error: disk_full}}
  - crash: n3
  - crash: n3
  - release: {between: [n1, n2]}
"#;
    let result = run_one(text);
    let messages: Vec<&str> = result
        .findings
        .iter()
        .filter(|f| f.checker == "fault-effectiveness")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(messages.len(), 3, "{:?}", result.findings);
    assert!(messages
        .iter()
        .any(|m| m.contains("crash of n3: it is already down")));
    assert!(messages.iter().any(|m| m.contains("nothing was held")));
    assert!(messages
        .iter()
        .any(|m| m.contains("fail point `propose` on n2 was armed but never reached")));
    assert!(!result.passed);
}

#[test]
fn a_missed_await_a_wrong_answer_and_a_failed_transfer_fail_the_run() {
    let text = r#"
model: raftkv
nodes: [n1, n2, n3]
heal: false
expect: converged
steps:
  - await: {leader: any, within: 5s}
  - client: {op: get, key: missing, expect: ok}
  - crash: n2
  - await: {leader: any, within: 5s}
  - transfer_leader: {to: n2, timeout: 1s}
  - await: {observed: {node: n1, key: a, value: "1"}, within: 200ms}
"#;
    let result = run_one(text);
    let found = checkers(&result);
    for checker in ["op-expect", "transfer", "await"] {
        assert!(
            found.contains(checker),
            "no `{checker}`: {:?}",
            result.findings
        );
    }
    assert_eq!(finding(&result, "await").outcome, Some(Outcome::Stuck));
    assert_eq!(finding(&result, "transfer").outcome, Some(Outcome::Stuck));
    assert!(finding(&result, "op-expect")
        .message
        .contains("get missing expected ok, got error not found"));
    assert_eq!(result.outcome, Outcome::Stuck);
}

#[test]
fn a_mid_run_check_fails_on_replicas_that_do_not_settle() {
    // n3 is cut off for the whole check: the replicas cannot agree on an index.
    let text = r#"
model: raftkv
nodes: [n1, n2, n3]
heal: false
expect: converged
steps:
  - await: {leader: any, within: 5s}
  - partition: {isolate: n3}
  - client: {op: put, key: a, value: "1", expect: ok}
  - check: {converged: true, within: 500ms}
"#;
    let result = run_one(text);
    let checks: Vec<&Finding> = result
        .findings
        .iter()
        .filter(|f| f.message.contains("mid-run check converged"))
        .collect();
    assert!(!checks.is_empty(), "{:?}", result.findings);
    assert!(checks
        .iter()
        .all(|f| f.outcome == Some(Outcome::Stuck) || f.outcome == Some(Outcome::Diverged)));
    let check_events = result
        .trail
        .iter()
        .filter(|e| e.kind == Kind::Check)
        .filter(|e| e.field("failed").is_some())
        .count();
    assert!(check_events > 0, "the failed check is on the trail");
}
