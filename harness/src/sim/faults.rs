//! The harness side of fail points: arming through the `fail` crate, deciding from
//! the run's seed whether an armed point fires, stalls in simulated time, releases,
//! and the record of what fired (fault effectiveness).
//!
//! Only `return(<arm id>)` is ever configured in the `fail` crate. Its `p%` uses an
//! unseeded RNG and its `sleep`/`delay`/`pause` block the one simulation thread.

use crate::base::action::FaultAction;
use crate::base::trail::Hit;
use crate::lang::yaml::Loc;
use faultline_api::{fail_point_name, Fault};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tokio::sync::watch;

/// One `failpoint` step's arming, and what became of it.
pub struct Arm {
    pub id: u64,
    pub node: String,
    pub point: &'static str,
    pub action: FaultAction,
    pub remaining: Option<u32>,
    pub probability: Option<f64>,
    pub optional: bool,
    pub loc: Loc,
    /// Evaluations while armed.
    pub hits: u32,
    /// Evaluations that fired.
    pub fired: u32,
    pub active: bool,
    /// Wakes tasks stalled "until release"; replaced after each release.
    release: watch::Sender<bool>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArmSummary {
    pub node: String,
    pub point: String,
    pub action: String,
    pub line: u32,
    pub hits: u32,
    pub fired: u32,
    pub optional: bool,
}

pub struct FaultTable {
    run_id: String,
    rng: ChaCha8Rng,
    arms: Vec<Arm>,
    /// (node, point) -> index of the active arm in `arms`.
    active: BTreeMap<(String, &'static str), usize>,
}

/// What happened when a node reached an armed point.
pub struct Decision {
    pub fault: Option<Fault>,
    /// The trail's record of it.
    pub hit: Hit,
}

impl FaultTable {
    pub fn new(run_id: &str, seed: u64) -> Self {
        // A stream of its own, so fault draws never shift the simulator's.
        let rng = crate::base::streams::Stream::Faults.rng(seed);
        FaultTable {
            run_id: run_id.to_string(),
            rng,
            arms: Vec::new(),
            active: BTreeMap::new(),
        }
    }

    fn name(&self, node: &str, point: &str) -> String {
        fail_point_name(&self.run_id, node, point)
    }

    /// Arm a point (replacing an earlier arm of the same point on the same node).
    #[allow(
        clippy::too_many_arguments,
        reason = "one field per column of a `failpoint` step"
    )]
    pub fn arm(
        &mut self,
        node: &str,
        point: &'static str,
        action: FaultAction,
        count: Option<u32>,
        probability: Option<f64>,
        optional: bool,
        loc: Loc,
    ) {
        self.clear(node, point);
        let id = self.arms.len() as u64 + 1;
        fail::cfg(self.name(node, point), &format!("return({id})"))
            .expect("a return action always parses");
        let (release, _) = watch::channel(false);
        self.arms.push(Arm {
            id,
            node: node.to_string(),
            point,
            action,
            remaining: count,
            probability,
            optional,
            loc,
            hits: 0,
            fired: 0,
            active: true,
            release,
        });
        self.active
            .insert((node.to_string(), point), self.arms.len() - 1);
    }

    /// Disarm a point; tasks stalled on it go on. Returns whether it was armed.
    pub fn clear(&mut self, node: &str, point: &'static str) -> bool {
        let Some(index) = self.disarm(node, point) else {
            return false;
        };
        let _ = self.arms[index].release.send(true);
        true
    }

    /// Disarm a point without waking its stalled tasks: a `count` that runs out
    /// must not release the stall it just started (only `release`, `clear_failpoint`
    /// or the heal phase do).
    fn disarm(&mut self, node: &str, point: &'static str) -> Option<usize> {
        let index = self.active.remove(&(node.to_string(), point))?;
        fail::remove(self.name(node, point));
        self.arms[index].active = false;
        Some(index)
    }

    /// Let tasks stalled "until release" on this point go on. Returns how many were waiting.
    pub fn release(&mut self, node: &str, point: &'static str) -> usize {
        let mut woken = 0;
        for arm in self
            .arms
            .iter_mut()
            .filter(|a| a.node == node && a.point == point)
        {
            woken += arm.release.receiver_count();
            let _ = arm.release.send(true);
            // Later firings of the same arm stall again until the next release.
            let (fresh, _) = watch::channel(false);
            arm.release = fresh;
        }
        woken
    }

    /// Disarm everything and wake every stalled task (the heal phase).
    pub fn clear_all(&mut self) -> Vec<(String, &'static str)> {
        let keys: Vec<(String, &'static str)> = self.active.keys().cloned().collect();
        for (node, point) in &keys {
            self.clear(node, point);
        }
        for arm in &mut self.arms {
            let _ = arm.release.send(true);
        }
        keys
    }

    /// A node reached an armed point with `payload` (the arm id).
    pub fn decide(&mut self, node: &str, point: &'static str, payload: &str) -> Option<Decision> {
        let index = *self.active.get(&(node.to_string(), point))?;
        let arm = &mut self.arms[index];
        assert!(
            arm.active && arm.node == node && arm.point == point,
            "the active table names only active arms, under their own node and point"
        );
        if payload != arm.id.to_string() {
            return None;
        }
        arm.hits += 1;
        if arm.remaining == Some(0) {
            return None;
        }
        if let Some(p) = arm.probability {
            if !self.rng.random_bool(p) {
                return Some(Decision {
                    fault: None,
                    hit: Hit {
                        point: point.to_string(),
                        fired: None,
                        probability: Some(p),
                    },
                });
            }
        }
        arm.fired += 1;
        assert!(arm.fired <= arm.hits, "an arm fires only when reached");
        if let Some(left) = arm.remaining.as_mut() {
            *left -= 1;
        }
        let fault = match &arm.action {
            FaultAction::Error(kind) => Fault::Error(kind.clone()),
            FaultAction::Panic => Fault::Panic(format!("fail point {point}")),
            FaultAction::Stall(d) => Fault::Stall(*d),
            FaultAction::StallUntilRelease => Fault::StallUntilRelease(arm.release.subscribe()),
        };
        let hit = Hit {
            point: point.to_string(),
            fired: Some(arm.action.clone()),
            probability: arm.probability,
        };
        if arm.remaining == Some(0) {
            self.disarm(node, point);
        }
        Some(Decision {
            fault: Some(fault),
            hit,
        })
    }

    pub fn summaries(&self) -> Vec<ArmSummary> {
        self.arms
            .iter()
            .map(|a| ArmSummary {
                node: a.node.clone(),
                point: a.point.to_string(),
                action: a.action.to_string(),
                line: a.loc.line,
                hits: a.hits,
                fired: a.fired,
                optional: a.optional,
            })
            .collect()
    }

    pub fn arms(&self) -> &[Arm] {
        &self.arms
    }
}

impl Drop for FaultTable {
    /// The `fail` registry is global to the process: leave nothing of this run in it.
    fn drop(&mut self) {
        for (node, point) in self.active.keys() {
            fail::remove(fail_point_name(&self.run_id, node, point));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Loc {
        Loc { line: 1, col: 1 }
    }

    #[test]
    fn a_counted_stall_until_release_holds_until_the_release() {
        let mut table = FaultTable::new("faults-test-counted-stall", 1);
        let action = FaultAction::StallUntilRelease;
        table.arm("n1", "p", action, Some(1), None, false, loc());
        let decision = table.decide("n1", "p", "1").expect("armed");
        let Some(Fault::StallUntilRelease(released)) = decision.fault else {
            panic!("expected a stall until release");
        };
        // The count ran out and disarmed the point, but the stall it began goes on.
        assert!(
            !*released.borrow(),
            "the exhausted count released the stall"
        );
        assert!(
            table.decide("n1", "p", "1").is_none(),
            "disarmed after one firing"
        );
        assert_eq!(table.release("n1", "p"), 1);
        assert!(*released.borrow());
    }

    #[test]
    fn clearing_a_point_wakes_its_stalled_tasks() {
        let mut table = FaultTable::new("faults-test-clear-wakes", 1);
        table.arm(
            "n1",
            "p",
            FaultAction::StallUntilRelease,
            None,
            None,
            false,
            loc(),
        );
        let decision = table.decide("n1", "p", "1").expect("armed");
        let Some(Fault::StallUntilRelease(released)) = decision.fault else {
            panic!("expected a stall until release");
        };
        assert!(table.clear("n1", "p"));
        assert!(*released.borrow());
    }
}
