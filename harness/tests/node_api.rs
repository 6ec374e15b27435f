//! The node API's per-run services, end to end through the runner: the state a
//! run's nodes share (`NodeCtx::shared`) and the violations they report
//! (`NodeCtx::violation`), with the test-only `faulty` model.

mod common;

use common::load_text;
use faultline::base::outcome::Outcome;
use faultline::base::trail::{Data, OpEndKind};
use faultline::sim::runner::{self, RunResult};

fn run(text: &str) -> RunResult {
    let scenario = load_text("node-api.yaml", text);
    runner::run(&scenario, &scenario.variants[0], 1)
}

/// The values the run's ops answered, in order.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "a test that picks the op answers from the trail: every other kind is skipped"
)]
fn answers(result: &RunResult) -> Vec<String> {
    result
        .trail
        .events
        .iter()
        .filter_map(|e| match &e.data {
            Data::OpEnd(end) => match &end.end {
                OpEndKind::Answered { result, .. } => result.value.clone(),
                OpEndKind::GaveUp(_) => None,
            },
            _ => None,
        })
        .collect()
}

const COUNT: &str = "model: faulty
nodes: [a, b]
expect: converged
steps:
  - client: {on: a, op: count}
  - client: {on: b, op: count}
  - restart: a
  - client: {on: a, op: count}
";

/// Every node of a run, and a restarted node, count on one counter; the next
/// run in the same process starts from a fresh one.
#[test]
fn the_nodes_of_a_run_share_one_value_and_the_next_run_a_fresh_one() {
    let first = run(COUNT);
    assert_eq!(first.outcome, Outcome::Converged, "{:?}", first.findings);
    assert_eq!(answers(&first), ["1", "2", "3"]);
    let second = run(COUNT);
    assert_eq!(answers(&second), ["1", "2", "3"], "a run of its own");
}

/// A violation a node reports fails its invariant with the node's message,
/// the first report of each invariant; it is neither a trail event nor a fact.
#[test]
fn a_reported_violation_fails_the_run_with_the_first_report() {
    let result = run("model: faulty
nodes: [a, b]
expect: violated
steps:
  - client: {on: b, op: violate, invariant: reported, message: \"n2 lost entry 7\"}
  - client: {on: a, op: violate, invariant: reported, message: \"a later report\"}
");
    assert_eq!(result.outcome, Outcome::Violated, "{:?}", result.findings);
    let found: Vec<(&str, &str)> = result
        .findings
        .iter()
        .map(|f| (f.checker.as_str(), f.message.as_str()))
        .collect();
    assert_eq!(found, [("invariant:reported", "reported: n2 lost entry 7")]);
    assert!(
        !result
            .trail
            .events
            .iter()
            .any(|e| e.node_event().is_some() && e.detail.contains("lost entry")),
        "a violation is not a node's trail event"
    );
    assert!(result.nodes.iter().all(|n| n.observation.facts.is_empty()));
}

/// Without a report, the same run passes its invariant.
#[test]
fn without_a_report_the_invariant_holds() {
    let result = run("model: faulty
nodes: [a]
expect: converged
steps:
  - client: {on: a, op: set, key: k, value: v}
");
    assert_eq!(result.outcome, Outcome::Converged, "{:?}", result.findings);
    assert!(result.findings.is_empty(), "{:?}", result.findings);
}
