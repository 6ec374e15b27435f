//! Quiescence and publication are right by construction: what a node has in
//! flight or has applied is what the harness sees, even when the node submits
//! from a background task or is blocked on its way out.

mod common;

use common::load_text;
use faultline::base::outcome::Outcome;
use faultline::base::trail::{AwaitEnd, Data, Event};
use faultline_api::NodeEvent;

/// The index of the first submit a node recorded, and its time.
fn first_submit(events: &[Event], node: &str) -> Option<(u64, u64)> {
    events.iter().find_map(|e| match e.node_event() {
        Some(NodeEvent::Submit {
            index: Some(index), ..
        }) if e.node.as_deref() == Some(node) => Some((*index, e.t_ms)),
        _ => None,
    })
}

/// When a node applied `index`.
fn applied_at(events: &[Event], node: &str, index: u64) -> Option<u64> {
    events.iter().find_map(|e| match e.node_event() {
        Some(NodeEvent::Apply { index: Some(i), .. })
            if *i == index && e.node.as_deref() == Some(node) =>
        {
            Some(e.t_ms)
        }
        _ => None,
    })
}

/// An interval DirectoryDeletingService run's worker stalls before its submit;
/// once released it appends its PurgeDirectories from its own task, outside the
/// main loop that publishes after every event. The await for quiescence one
/// tick later must wait for that entry to be applied: before, the harness
/// judged from om1's last publication and passed while the purge was in flight.
#[test]
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "a test that picks one kind of trail event: every other kind is skipped, whatever it is"
)]
fn a_service_submit_in_flight_keeps_the_cluster_from_quiescence() {
    let text = r#"
model: ozone-om
nodes: [om1, om2, om3]
params: {preferred_leader: om1, dds_interval_ms: 300}
heal: false
expect: converged
steps:
  - await: {leader: om1, within: 5s}
  - await: {observed: {node: om1, key: ready, value: "true"}, within: 5s}
  - client: {op: create_volume, volume: v, expect: ok}
  - client: {op: create_bucket, bucket: /v/b, expect: ok}
  - client: {op: mkdir, path: /v/b/d, expect: ok}
  - failpoint: {node: om1, point: dir_deleting.pre_submit, action: {stall: release}, count: 1}
  - client: {op: delete, path: /v/b/d, expect: ok}
  - sleep: 1s
  - release: {node: om1, failpoint: dir_deleting.pre_submit}
  - sleep: 1ms
  - await: quiescent
"#;
    let scenario = load_text("service-submit.yaml", text);
    let result = faultline::sim::runner::run(&scenario, &scenario.variants[0], 1);
    assert_eq!(result.outcome, Outcome::Converged, "{:?}", result.findings);
    let events = &result.trail.events;
    let (index, submitted_ms) = first_submit(events, "om1").expect("the worker submitted");
    let applied_ms = applied_at(events, "om1", index);
    let reached_ms = events
        .iter()
        .rev()
        .find_map(|e| match &e.data {
            Data::Await(a) if a.what == "quiescence" => match a.end {
                AwaitEnd::Reached { .. } => Some(e.t_ms),
                AwaitEnd::Missed { .. } => None,
            },
            _ => None,
        })
        .expect("quiescence was reached");
    assert!(
        submitted_ms <= reached_ms,
        "the await began after the submit ({submitted_ms} ms, reached {reached_ms} ms)"
    );
    assert!(
        applied_ms.is_some_and(|t| t <= reached_ms),
        "quiescence reached at {reached_ms} ms while om1's submit of index {index} (at {submitted_ms} ms) was in flight (applied: {applied_ms:?})"
    );
}

/// om2 applies the purge at index 11, fails it with INTERNAL_ERROR and
/// terminates before the flush (buggy, exit first). Blocked on its way out, it
/// still reports what it applied: before, its last observation said 10 while
/// the trail showed entry 11 applied.
#[test]
fn a_node_blocked_in_terminate_reports_what_it_applied() {
    let text = r#"
model: ozone-om
nodes: [om1, om2, om3]
params: {preferred_leader: om1, fault_key: /v/b/s1, exit_order: exit_first}
defaults: {seed: 1, tick: 5ms}
heal: false
variants:
  buggy:
    bugs: {HDDS-17603: buggy}
    expect:
      outcome: converged
      observed:
        - {node: om2, key: ratis_applied, value: "11"}
steps:
  - await: {leader: om1, within: 5s}
  - await: {observed: {node: om1, key: ready, value: "true"}, within: 5s}
  - client: {op: create_volume, volume: v, expect: ok}
  - client: {op: create_bucket, bucket: /v/b, expect: ok}
  - client: {op: create_snapshot, bucket: /v/b, name: s1, expect: ok}
  - client: {op: create_snapshot, bucket: /v/b, name: s2, expect: ok}
  - await: quiescent
  - failpoint: {node: om2, point: snapshot_table.read, action: {error: codec}, count: 1}
  - client: {op: purge_snapshots, snapshots: [/v/b/s2, /v/b/s1], expect: ok}
  - await: {down: om2, within: 5s}
"#;
    let scenario = load_text("terminate-publication.yaml", text);
    let result = faultline::sim::runner::run(&scenario, &scenario.variants[0], 1);
    let events = &result.trail.events;
    let last_apply = events
        .iter()
        .filter(|e| e.node.as_deref() == Some("om2"))
        .filter_map(|e| match e.node_event() {
            Some(NodeEvent::Apply { index, .. }) => *index,
            _ => None,
        })
        .max();
    assert_eq!(last_apply, Some(11), "om2's last apply on the trail");
    let om2 = result.nodes.iter().find(|n| n.name == "om2").unwrap();
    assert!(!om2.up);
    assert_eq!(om2.observation.applied, Some(11));
    assert!(result.passed, "{:?}", result.findings);
}

/// Whatever a model publishes, a request it submitted (a typed submit event
/// with its index) is in flight until the node applies that index: the `faulty`
/// model answers at once and publishes nothing until its apply, 50 ms later.
#[test]
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "a test that picks one kind of trail event: every other kind is skipped, whatever it is"
)]
fn quiescence_waits_for_a_typed_submit_even_when_the_model_forgets_to_publish() {
    let text = r#"
model: faulty
nodes: [a]
heal: false
expect: converged
steps:
  - client: {on: a, op: submit, apply_after_ms: 50, expect: ok}
  - await: quiescent
"#;
    let scenario = load_text("forgetful-submit.yaml", text);
    let result = faultline::sim::runner::run(&scenario, &scenario.variants[0], 1);
    let events = &result.trail.events;
    let (index, _) = first_submit(events, "a").expect("a submitted");
    let applied_ms = applied_at(events, "a", index).expect("a applied its entry");
    let reached = events.iter().find_map(|e| match &e.data {
        Data::Await(a) if a.what == "quiescence" => Some((e.t_ms, a.end.clone())),
        _ => None,
    });
    let Some((reached_ms, AwaitEnd::Reached { .. })) = reached else {
        panic!("quiescence not reached: {reached:?}");
    };
    assert!(
        applied_ms <= reached_ms,
        "quiescence reached at {reached_ms} ms, the submit applied at {applied_ms} ms"
    );
    assert!(result.passed, "{:?}", result.findings);
}

/// A probe a node reports lands on the trail as a typed probe event, once per
/// incarnation however often its condition holds; a restart reports it again.
#[test]
fn a_reported_probe_is_on_the_trail_with_its_name() {
    let text = r#"
model: faulty
nodes: [a]
heal: false
expect:
  outcome: converged
  trail:
    - {node: a, kind: probe, contains: "probe faulty_reached", count: 2}
steps:
  - client: {on: a, op: probe, expect: ok}
  - client: {on: a, op: probe, expect: ok}
  - restart: a
  - client: {on: a, op: probe, expect: ok}
"#;
    let scenario = load_text("probe.yaml", text);
    let result = faultline::sim::runner::run(&scenario, &scenario.variants[0], 1);
    assert!(result.passed, "{:?}", result.findings);
    let probe = result
        .trail
        .iter()
        .find(|e| e.kind == faultline::base::trail::Kind::Probe)
        .expect("a probe event");
    assert_eq!(
        probe.field("probe"),
        Some(serde_json::json!("faulty_reached"))
    );
    assert_eq!(
        scenario
            .model
            .info()
            .probe("faulty_reached")
            .map(|p| p.rare),
        Some(false)
    );
}
