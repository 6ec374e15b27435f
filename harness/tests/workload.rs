//! Chaos workload ops may name their own node (`on:`): one workload can drive
//! several nodes (e.g. container events on a datanode, block deletions at SCM).

use faultline::lang::scenario::{load_str, Target};

const SCENARIO: &str = r#"
model: hdds-reports
nodes:
  - {name: dn1, role: datanode}
  - {name: dn2, role: datanode}
expect: converged
steps:
  - sleep: 1s
chaos:
  window: 1m
  faults: {crash: 1}
  workload:
    every: 10s
    on: dn1
    ops:
      - {op: create, container: "{1..3}"}
      - {on: dn2, op: close, container: "{1..3}"}
"#;

#[test]
fn an_op_with_its_own_node_goes_there_and_the_rest_to_the_workloads() {
    let scenario = load_str("workload.yaml", SCENARIO).expect("loads");
    let workload = scenario.chaos.expect("chaos").workload.expect("workload");
    assert_eq!(workload.target, Some(Target::Node(0)));
    assert_eq!(workload.ops[0].target, None);
    assert_eq!(workload.ops[1].target, Some(Target::Node(1)));
    // `on` is the target, not an op argument.
    assert_eq!(
        workload.ops[1].template,
        serde_json::json!({"op": "close", "container": "{1..3}"})
    );
}

#[test]
fn with_every_op_naming_its_node_the_workload_needs_none() {
    let text = SCENARIO
        .replace("    on: dn1\n", "")
        .replace("{op: create", "{on: dn1, op: create");
    let scenario = load_str("workload.yaml", &text).expect("loads");
    let workload = scenario.chaos.expect("chaos").workload.expect("workload");
    assert_eq!(workload.target, None);
    assert_eq!(workload.ops[0].target, Some(Target::Node(0)));
}
