//! The scenario language at run time: ordered evidence, event awaits, observed
//! matchers, seeded node references, op placeholders, and limits on steps that
//! take no simulated time. Each test runs real raftkv clusters.

use faultline::base::outcome::Outcome;
use faultline::base::trail::Kind;
use faultline::judge::check::Finding;
use faultline::lang::scenario::load_str;
use faultline::sim::runner::{self, RunResult};

fn run_seed(text: &str, seed: u64) -> RunResult {
    let scenario = match load_str("lang.yaml", text) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    runner::run(&scenario, &scenario.variants[0], seed)
}

fn run(text: &str) -> RunResult {
    run_seed(text, 1)
}

fn expect_findings(result: &RunResult) -> Vec<&Finding> {
    result
        .findings
        .iter()
        .filter(|f| f.checker == "expect")
        .collect()
}

const HEAD: &str = "model: raftkv\nnodes: [n1, n2, n3]\nheal: false\n";

#[test]
fn a_sequence_passes_in_order_and_names_the_first_entry_out_of_order() {
    let steps = "steps:\n  - await: {leader: any, within: 5s}\n  - client: {op: put, key: a, value: \"1\"}\n  - client: {op: put, key: a, value: \"2\"}\n";
    let in_order = format!(
        "{HEAD}expect:\n  outcome: converged\n  sequence:\n    - {{kind: op_ok, contains: \"put a=1\"}}\n    - {{kind: op_ok, contains: \"put a=2\"}}\n{steps}"
    );
    let result = run(&in_order);
    assert!(expect_findings(&result).is_empty(), "{:?}", result.findings);
    // The report says where each entry matched: the event, in order, at its time.
    assert_eq!(result.sequence.len(), 2);
    let events: Vec<usize> = result.sequence.iter().map(|s| s.event.unwrap()).collect();
    assert!(events[0] < events[1], "{events:?}");
    for s in &result.sequence {
        let e = &result.trail.events[s.event.unwrap()];
        assert_eq!(e.kind, Kind::OpOk);
        assert_eq!(Some(e.t_ms), s.t_ms);
    }
    assert!(result.trail.events[events[0]].detail.contains("put a=1"));
    assert_eq!((result.sequence[1].line, result.sequence[1].col), (8, 7));
    let page = faultline::report::html::run_html(&result);
    assert!(
        page.contains(&format!(
            "<a href=\"#ev-{}\">event #{}</a>",
            events[1], events[1]
        )),
        "the page links the matched event"
    );
    let reversed = format!(
        "{HEAD}expect:\n  outcome: converged\n  sequence:\n    - {{kind: op_ok, contains: \"put a=2\"}}\n    - {{kind: op_ok, contains: \"put a=1\"}}\n    - {{kind: op_ok, contains: \"put a=3\"}}\n{steps}"
    );
    let result = run(&reversed);
    let findings = expect_findings(&result);
    assert_eq!(findings.len(), 1, "{findings:?}");
    let message = &findings[0].message;
    assert!(
        message.starts_with(
            "lang.yaml:8:7: sequence entry 2 (kind op_ok, containing \"put a=1\") is out of order"
        ),
        "{message}"
    );
    assert!(
        message.contains("not after entry 1 (kind op_ok, containing \"put a=2\", at 7:7)"),
        "{message}"
    );
    assert!(!result.passed);
    // Entry 1 matched; entry 2 has nothing after it, and so neither has entry 3.
    let matched: Vec<bool> = result.sequence.iter().map(|s| s.event.is_some()).collect();
    assert_eq!(matched, vec![true, false, false]);
}

#[test]
fn before_and_after_relations_hold_or_say_which_side_came_when() {
    let steps = "steps:\n  - await: {leader: any, within: 5s}\n  - client: {op: put, key: a, value: \"1\"}\n  - crash: n3\n";
    let good = format!(
        "{HEAD}expect:\n  outcome: converged\n  trail:\n    - {{kind: op_ok, before: {{kind: crash, node: n3}}}}\n    - {{node: n3, kind: crash, after: {{kind: op_ok}}}}\n{steps}"
    );
    let result = run(&good);
    assert!(expect_findings(&result).is_empty(), "{:?}", result.findings);
    let bad = format!(
        "{HEAD}expect:\n  outcome: converged\n  trail:\n    - {{kind: op_ok, after: {{kind: crash, node: n3}}}}\n    - {{kind: op_ok, before: {{kind: restart}}}}\n{steps}"
    );
    let result = run(&bad);
    let messages: Vec<&str> = expect_findings(&result)
        .iter()
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("lang.yaml:7:7: out of order: expected an event with kind op_ok after one with node n3, kind crash (7:28)"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("before one with kind restart (8:29), which never occurs"),
        "{}",
        messages[1]
    );
}

#[test]
fn an_event_await_waits_for_the_next_event_and_since_run_sees_earlier_ones() {
    // n1's restart is over before the awaits begin.
    let base = format!("{HEAD}expect: converged\nsteps:\n  - await: {{leader: any, within: 5s}}\n  - restart: n1\n  - sleep: 100ms\n");
    let next = format!("{base}  - await: {{event: {{node: n1, kind: restart}}, within: 2s}}\n");
    let result = run(&next);
    assert_eq!(result.outcome, Outcome::Stuck, "{:?}", result.findings);
    assert!(result.findings.iter().any(|f| f.checker == "await"
        && f.message
            .contains("await an event with node n1, kind restart missed its deadline of 2s")));
    let since_run = format!(
        "{base}  - await: {{event: {{node: n1, kind: restart}}, since: run, within: 2s}}\n"
    );
    assert_eq!(run(&since_run).outcome, Outcome::Converged);
    // A leader election that comes after the await began.
    let later = format!(
        "{base}  - crash: leader\n  - await: {{event: {{kind: leader, contains: \"leader term\"}}, within: 5s}}\n  - start: any\n"
    );
    let result = run(&later);
    assert_eq!(result.outcome, Outcome::Converged, "{:?}", result.findings);
    let reached = result
        .trail
        .events
        .iter()
        .rposition(|e| e.kind == Kind::Await && e.detail.contains("reached after"))
        .expect("the await was reached");
    let crash = result
        .trail
        .iter()
        .position(|e| e.kind == Kind::Crash)
        .expect("crash");
    assert!(crash < reached);
}

#[test]
fn observed_matchers_tell_removed_from_never_there_and_compare_numbers() {
    let text = format!(
        "{HEAD}expect:\n  outcome: converged\n  observed:\n    - {{node: n1, key: a, absent: removed}}\n    - {{node: n1, key: b, absent: never}}\n    - {{node: any, key: c, matches: \"^v[0-9]+$\"}}\n    - {{node: leader, key: commit, ge: 3, lt: 1000}}\n    - {{node: n2, key: c, contains: \"7\"}}\nsteps:\n  - await: {{leader: any, within: 5s}}\n  - client: {{op: put, key: a, value: \"1\"}}\n  - client: {{op: delete, key: a}}\n  - client: {{op: put, key: c, value: v7}}\n  - await: {{observed: {{node: n2, key: c, value: v7}}, within: 5s}}\n  - await: {{observed: {{node: follower, key: a, absent: removed}}, within: 5s}}\n"
    );
    let result = run(&text);
    assert!(result.passed, "{:?}", result.findings);
    // The same matches fail where they must, and say what the node published.
    let wrong = format!(
        "{HEAD}expect:\n  outcome: converged\n  observed:\n    - {{node: n1, key: a, absent: never}}\n    - {{node: n1, key: commit, gt: 100000}}\nsteps:\n  - await: {{leader: any, within: 5s}}\n  - client: {{op: put, key: a, value: \"1\"}}\n  - client: {{op: delete, key: a}}\n  - await: {{observed: {{node: n1, key: a, absent: removed}}, within: 5s}}\n"
    );
    let result = run(&wrong);
    let messages: Vec<&str> = expect_findings(&result)
        .iter()
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].ends_with("expected n1.a never present, observed n1 absent (removed)"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("expected n1.commit > 100000, observed n1 \""),
        "{}",
        messages[1]
    );
}

/// The node each transfer went to, in order.
fn transfer_targets(result: &RunResult) -> Vec<String> {
    result
        .trail
        .iter()
        .filter_map(|e| match e.action() {
            Some(faultline::base::action::Action::TransferLeader { to, .. }) => Some(to.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn follower_picks_come_from_the_seed_and_replay() {
    let text = "model: raftkv\nnodes: [n1, n2, n3, n4, n5]\nheal: false\nexpect: converged\nsteps:\n  - await: {leader: any, within: 5s}\n  - repeat:\n      count: 6\n      steps:\n        - transfer_leader: follower\n        - await: {leader: any, within: 5s}\n  - await: quiescent\n";
    let mut sequences = std::collections::BTreeSet::new();
    let mut targets = std::collections::BTreeSet::new();
    for seed in 1..=4 {
        let result = run_seed(text, seed);
        let picked = transfer_targets(&result);
        assert_eq!(picked.len(), 6, "{picked:?}");
        targets.extend(picked.iter().cloned());
        sequences.insert(picked);
        let again = run_seed(text, seed);
        assert_eq!(
            again.trail_digest, result.trail_digest,
            "seed {seed} replays"
        );
    }
    // Not a ping-pong between two nodes, and not the same walk for every seed.
    assert!(targets.len() >= 3, "{targets:?}");
    assert!(sequences.len() >= 2, "{sequences:?}");
}

#[test]
fn placeholders_expand_in_client_steps_from_the_seed() {
    let text = format!(
        "{HEAD}expect: converged\nsteps:\n  - await: {{leader: any, within: 5s}}\n  - repeat:\n      count: 5\n      steps:\n        - client: {{op: put, key: \"k{{1..1000}}\", value: \"v{{seq}} {{{{x}}}}\"}}\n"
    );
    let invoked = |result: &RunResult| -> Vec<String> {
        result
            .trail
            .iter()
            .filter(|e| e.kind == Kind::OpInvoke)
            .map(|e| e.detail.clone())
            .collect()
    };
    let a = run_seed(&text, 1);
    let ops = invoked(&a);
    assert_eq!(ops.len(), 5, "{ops:?}");
    for (i, op) in ops.iter().enumerate() {
        assert!(op.starts_with("put k"), "{op}");
        assert!(op.ends_with(&format!("=v{i} {{x}}")), "{op}");
        assert!(!op.contains("{1..1000}"), "{op}");
    }
    assert_eq!(invoked(&run_seed(&text, 1)), ops, "same seed, same draws");
    assert_ne!(invoked(&run_seed(&text, 2)), ops, "another seed draws anew");
}

#[test]
fn nested_repeats_of_instant_steps_end_stuck_at_a_limit() {
    // A million steps that take no simulated time: the event limit ends it.
    let text = "model: raftkv\nnodes: [n1, n2, n3]\nheal: false\nexpect: stuck\nsteps:\n  - crash: n1\n  - repeat:\n      count: 1000\n      steps:\n        - repeat:\n            count: 999\n            steps:\n              - crash: {node: n1, optional: true}\n";
    let result = run(text);
    assert_eq!(result.outcome, Outcome::Stuck);
    let limit = result
        .findings
        .iter()
        .find(|f| f.checker == "limits")
        .unwrap();
    assert!(
        limit
            .message
            .contains("trail limit of 200000 events reached"),
        "{}",
        limit.message
    );
    // With room for every event, the step limit ends it.
    let text = text.replace(
        "expect: stuck\n",
        "defaults: {limits: {steps: 5000, events: 2000000}}\nexpect: stuck\n",
    );
    let result = run(&text);
    let limit = result
        .findings
        .iter()
        .find(|f| f.checker == "limits")
        .unwrap();
    assert!(
        limit.message.contains("step limit of 5000 steps (simulation steps and scenario steps) reached while running the step at lang.yaml:"),
        "{}",
        limit.message
    );
    assert_eq!(result.sim_elapsed_ms, 0, "no simulated time passed");
}
