//! Shrinking a chaos run as a schedule: the same scenario, seed and chaos
//! section, with fewer faults, fewer ops, shorter faults and an earlier end of
//! the window, inside the chaos window and with the same workload timing (the
//! ops are the run's own, at their own times), never as a different scripted
//! scenario. A candidate counts when it ends with the same finding: the same
//! outcome, checker and (for a divergence or a history) the same key.

use super::{ddmin, Target};
use crate::base::action::FaultAction;
use crate::lang::scenario::schedule::{Fault, Schedule};
use crate::lang::scenario::{Scenario, Variant};
use crate::sim::runner::{self, Inputs};
use std::time::Duration;

/// Halvings of one fault's length tried, at most.
const HALVINGS_MAX: usize = 3;
/// Bisection steps of the window's end, at most (a millisecond in 4,000 s).
const BISECTIONS_MAX: usize = 22;

/// What a schedule shrink kept.
pub struct Kept {
    pub schedule: Schedule,
    pub faults_before: usize,
    pub ops_before: usize,
    pub window_before: Duration,
    pub runs: usize,
    pub exhausted: bool,
}

impl Kept {
    pub fn describe(&self) -> String {
        format!(
            "{} of {} fault(s), {} of {} op(s), window {} of {} ({} run(s){})",
            self.schedule.faults.len(),
            self.faults_before,
            self.schedule.ops.as_ref().map_or(0, Vec::len),
            self.ops_before,
            crate::base::duration::format(self.schedule.window),
            crate::base::duration::format(self.window_before),
            self.runs,
            if self.exhausted {
                ", budget exhausted: it may shrink further with a larger --budget"
            } else {
                ""
            }
        )
    }
}

/// The candidate runs of one shrink, within its budget.
struct Tries<'s> {
    scenario: &'s Scenario,
    variant: &'s Variant,
    seed: u64,
    target: &'s Target,
    /// The run's inputs besides its schedule (its configuration's seed, ...):
    /// every try plays them with its own schedule.
    inputs: &'s Inputs,
    budget: usize,
    runs: usize,
    exhausted: bool,
}

impl Tries<'_> {
    fn left(&self) -> usize {
        self.budget.saturating_sub(self.runs)
    }

    /// Whether `s` still ends with the finding (`false`, and exhausted, once
    /// the budget is spent).
    fn fails(&mut self, s: &Schedule) -> bool {
        if self.runs >= self.budget {
            self.exhausted = true;
            return false;
        }
        self.runs += 1;
        let inputs = Inputs {
            schedule: Some(s.clone()),
            record_ops: false,
            ..self.inputs.clone()
        };
        let result = runner::run_with(self.scenario, self.variant, self.seed, &inputs);
        self.target.met_by(&result)
    }
}

/// Shrink a run of `variant` (with the run's bug modes) under `seed` and its
/// other `inputs` (every try replaces only the schedule): `played` is its
/// schedule with its ops (a run recorded with `record_ops`) and fails as
/// `target`.
#[expect(clippy::too_many_arguments, reason = "one run's inputs, each its own")]
pub fn shrink(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    inputs: &Inputs,
    target: &Target,
    played: Schedule,
    budget: usize,
    say: &dyn Fn(String),
) -> Kept {
    let faults_before = played.faults.len();
    let ops_before = played.ops.as_ref().map_or(0, Vec::len);
    let window_before = played.window;
    let mut tries = Tries {
        scenario,
        variant,
        seed,
        target,
        inputs,
        budget,
        runs: 0,
        exhausted: false,
    };
    // The window's end first: a shorter run makes every later try cheaper.
    let mut current = earlier_end(played, &mut tries);
    let (kept, _, ex) = ddmin(current.faults.clone(), tries.left(), &mut |subset| {
        let mut s = current.clone();
        s.faults = subset.to_vec();
        tries.fails(&s)
    });
    tries.exhausted |= ex;
    current.faults = kept;
    say(format!(
        "shrink: {} of {faults_before} fault(s) kept",
        current.faults.len()
    ));
    if let Some(ops) = current.ops.clone() {
        let (kept, _, ex) = ddmin(ops, tries.left(), &mut |subset| {
            let mut s = current.clone();
            s.ops = Some(subset.to_vec());
            tries.fails(&s)
        });
        tries.exhausted |= ex;
        current.ops = Some(kept);
        say(format!(
            "shrink: {} of {ops_before} op(s) kept",
            current.ops.as_ref().map_or(0, Vec::len)
        ));
    }
    for i in 0..current.faults.len() {
        for _ in 0..HALVINGS_MAX {
            let Some(shorter) = halved(&current, i) else {
                break;
            };
            if !tries.fails(&shorter) {
                break;
            }
            current = shorter;
        }
    }
    // The end again, now that less happens.
    let current = earlier_end(current, &mut tries);
    Kept {
        schedule: current,
        faults_before,
        ops_before,
        window_before,
        runs: tries.runs,
        exhausted: tries.exhausted,
    }
}

/// Fault `i` lasting half as long (a stall too), if it can.
fn halved(schedule: &Schedule, i: usize) -> Option<Schedule> {
    let lasts = schedule.faults[i].lasts?;
    let half = lasts / 2;
    if half < Duration::from_millis(1) {
        return None;
    }
    let mut s = schedule.clone();
    s.faults[i].lasts = Some(half);
    if let Fault::FailPoint { arm, .. } = &mut s.faults[i].fault {
        if let FaultAction::Stall(d) = &mut arm.action {
            *d = (*d / 2).max(Duration::from_millis(1));
        }
    }
    Some(s)
}

/// The schedule cut at `window`: what begins at or after it is gone.
pub fn cut(schedule: &Schedule, window: Duration) -> Schedule {
    let mut s = schedule.clone();
    s.window = window;
    s.faults.retain(|f| f.at < window);
    if let Some(ops) = &mut s.ops {
        ops.retain(|o| o.at < window);
    }
    s
}

/// The earliest end of the window that still fails, by bisection.
fn earlier_end(schedule: Schedule, tries: &mut Tries<'_>) -> Schedule {
    let mut hi = schedule.window.as_millis() as u64;
    let mut lo = 1u64;
    let mut best = schedule.clone();
    for _ in 0..BISECTIONS_MAX {
        if lo >= hi || tries.left() == 0 {
            break;
        }
        let mid = lo + (hi - lo) / 2;
        let candidate = cut(&schedule, Duration::from_millis(mid));
        if tries.fails(&candidate) {
            hi = mid;
            best = candidate;
        } else {
            lo = mid + 1;
        }
    }
    best
}
