//! Validation facts that the bad-input catalogue cannot show: what a valid file
//! turns into.

use super::load_str;
use crate::lang::scenario::{Scenario, StepKind};
use std::time::Duration;

fn load(text: &str) -> Scenario {
    match load_str("t.yaml", text) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

#[test]
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "a test of two step kinds: any other kind is a test failure, whatever it is"
)]
fn the_scenario_op_timeout_reaches_client_steps_and_transfers() {
    let s = load(
        "model: raftkv\nnodes: [n1, n2, n3]\ndefaults: {op_timeout: 3s}\nexpect: converged\nsteps:\n  - client: {op: put, key: a, value: \"1\"}\n  - transfer_leader: n2\n  - client: {op: put, key: a, value: \"2\", timeout: 1s}\n",
    );
    let waits: Vec<Duration> = s
        .steps
        .iter()
        .map(|step| match &step.kind {
            StepKind::Client(c) => c.timeout,
            StepKind::TransferLeader { timeout, .. } => *timeout,
            _ => panic!("unexpected step"),
        })
        .collect();
    assert_eq!(
        waits,
        [
            Duration::from_secs(3),
            Duration::from_secs(3),
            Duration::from_secs(1)
        ]
    );
}

#[test]
fn the_fault_steps_are_the_steps_that_write_the_chaos_fault_kinds() {
    use crate::lang::scenario::FaultKind;
    use std::collections::BTreeSet;
    let steps: BTreeSet<&str> = super::steps::fault_step_names().collect();
    let kinds: BTreeSet<&str> = FaultKind::ALL.iter().map(|k| k.step()).collect();
    assert_eq!(steps, kinds);
}

#[test]
fn an_auto_chaos_section_holds_its_faults_in_the_kinds_order() {
    let s = load(
        "model: raftkv\nnodes: [n1, n2, n3]\nexpect: converged\n\
         chaos: {auto: true, window: 10s, faults: {crash: 3, partition: 2}}\n",
    );
    let chaos = s.chaos.expect("a chaos section");
    let kinds: Vec<_> = chaos.faults.iter().map(|f| f.kind.kind()).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted);
    let crash = chaos.faults.iter().find(|f| f.kind.name() == "crash");
    assert_eq!(crash.map(|f| f.weight), Some(3));
}
