//! Validation facts that the bad-input catalogue cannot show: what a valid file
//! turns into.

use super::load_str;
use crate::scenario::{Scenario, StepKind};
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
