//! Fail points are scoped to their run and node: two runs on two threads of one
//! process never see each other's configuration, even with the same node names.

mod common;

use faultline::base::trail::Kind;
use faultline::sim::runner::{self, RunResult};

const ARMED: &str = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
  - failpoint: {node: n1, point: propose, action: {error: disk_full}}
  - repeat:
      count: 20
      steps:
        - client: {on: n1, op: put, key: k, value: v}
        - sleep: 10ms
"#;

const UNARMED: &str = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
  - repeat:
      count: 20
      steps:
        - client: {on: n1, op: put, key: k, value: v}
        - sleep: 10ms
"#;

fn run(text: &str) -> RunResult {
    let scenario = common::load_text("isolation.yaml", text);
    runner::run(&scenario, &scenario.variants[0], 3)
}

fn hits(result: &RunResult) -> usize {
    result
        .trail
        .iter()
        .filter(|e| e.kind == Kind::FailPointHit)
        .count()
}

#[test]
fn parallel_runs_never_see_each_others_fail_points() {
    let armed_alone = run(ARMED);
    let unarmed_alone = run(UNARMED);
    assert_eq!(
        hits(&armed_alone),
        20,
        "every put on n1 hits the armed point"
    );
    assert_eq!(hits(&unarmed_alone), 0);
    for _ in 0..4 {
        let armed = std::thread::spawn(|| (0..5).map(|_| run(ARMED)).collect::<Vec<_>>());
        let unarmed = std::thread::spawn(|| (0..5).map(|_| run(UNARMED)).collect::<Vec<_>>());
        for r in armed.join().unwrap() {
            assert_eq!(hits(&r), 20);
            assert_eq!(
                r.trail_digest, armed_alone.trail_digest,
                "an armed run was disturbed"
            );
        }
        for r in unarmed.join().unwrap() {
            assert_eq!(
                hits(&r),
                0,
                "an unarmed run saw a fail point of the other thread"
            );
            assert_eq!(
                r.trail_digest, unarmed_alone.trail_digest,
                "an unarmed run was disturbed"
            );
        }
    }
}

#[test]
fn a_finished_run_leaves_nothing_in_the_fail_registry() {
    // Its own scenario name, so that the other test's runs in flight in this
    // process (whose points are armed right now) cannot be mistaken for leftovers.
    let text = ARMED.replacen("model: raftkv", "name: registry-check\nmodel: raftkv", 1);
    let scenario = common::load_text("registry-check.yaml", &text);
    let result = runner::run(&scenario, &scenario.variants[0], 3);
    assert_eq!(hits(&result), 20, "the points were armed and fired");
    let leftover: Vec<String> = fail::list()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|n| n.starts_with("registry-check-"))
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
}
