//! Edits of a schedule: what guided search derives runs by, one edit per
//! derived run, so that a derived run plays the schedule it came from with one
//! difference (under a seed of its own: `drive::hunt::guided` says why).
//!
//! Shift a fault in time, swap the times of two, drop one, add one copied from
//! elsewhere at a new time, retarget one to another node (or the leader), or
//! lengthen one (its time in effect, and a stall's own length). Or splice: keep
//! the faults before a drawn time and take the run's own schedule (the one its
//! seed draws) from that time on, so that the derived run goes where its
//! parent went and then somewhere new.

use super::{Fault, Planned, Schedule};
use crate::base::action::FaultAction;
use crate::base::duration::format as fmt_duration;
use crate::lang::scenario::target::Target;
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// The shifts a time edit draws from, in ms (either sign).
const SHIFTS_MS: [u64; 5] = [50, 250, 1_000, 3_000, 10_000];
/// How much longer a lengthened fault lasts: two to four times.
const LENGTHEN: (u32, u32) = (2, 4);
/// The share of edits that are splices, when the run's own schedule is known.
/// Measured on zookeeper-auto and hdds-reports-auto (docs/exploration.md,
/// "Splices"): with half, 20 blocks of 30 runs per key reached the first find
/// in 254 and 153 runs, against 307 and 175 with none.
const SPLICE_SHARE: f64 = 0.5;

/// One edit, as it reads in a find's provenance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    Shift {
        fault: usize,
        from: Duration,
        to: Duration,
    },
    Swap {
        a: usize,
        b: usize,
    },
    Drop {
        fault: usize,
        what: String,
    },
    Add {
        at: Duration,
        what: String,
    },
    Retarget {
        fault: usize,
        from: String,
        to: String,
    },
    Lengthen {
        fault: usize,
        from: Duration,
        to: Duration,
    },
    /// The parent's `kept` faults before `at`, the run's own `taken` from `at` on.
    Splice {
        at: Duration,
        kept: usize,
        taken: usize,
    },
}

impl std::fmt::Display for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = |x: &Duration| fmt_duration(*x);
        match self {
            Edit::Shift { fault, from, to } => {
                write!(f, "shift fault #{fault} from {} to {}", d(from), d(to))
            }
            Edit::Swap { a, b } => write!(f, "swap the times of faults #{a} and #{b}"),
            Edit::Drop { fault, what } => write!(f, "drop fault #{fault} ({what})"),
            Edit::Add { at, what } => write!(f, "add {what} at {}", d(at)),
            Edit::Retarget { fault, from, to } => {
                write!(f, "retarget fault #{fault} from {from} to {to}")
            }
            Edit::Lengthen { fault, from, to } => {
                write!(f, "lengthen fault #{fault} from {} to {}", d(from), d(to))
            }
            Edit::Splice { at, kept, taken } => write!(
                f,
                "splice at {}: its {kept} fault(s) before it, then the run's own {taken}",
                d(at)
            ),
        }
    }
}

/// Apply one random edit to `schedule` (left in time order); `None` when the
/// drawn edit does not apply (no fault to edit, nothing to copy). `donors` are
/// faults of other schedules an `add` may copy; `names` the cluster's nodes;
/// `own` the schedule the derived run's seed draws, which a splice continues
/// with (half of the edits are splices when it is given).
pub fn mutate(
    rng: &mut ChaCha8Rng,
    schedule: &mut Schedule,
    donors: &[&Planned],
    names: &[String],
    has_leader: bool,
    own: Option<&Schedule>,
) -> Option<Edit> {
    let n = schedule.faults.len();
    let window = schedule.window.as_millis() as u64;
    let last = Duration::from_millis(window.saturating_sub(1));
    if let Some(own) = own {
        if rng.random_bool(SPLICE_SHARE) {
            return splice(rng, schedule, own);
        }
    }
    let edit = match rng.random_range(0..6u8) {
        0 => shift(rng, schedule, n, last)?,
        1 => swap(rng, schedule, n)?,
        2 => {
            let i = pick(rng, n)?;
            let gone = schedule.faults.remove(i);
            Edit::Drop {
                fault: i,
                what: gone.fault.describe(names),
            }
        }
        3 => {
            let donor = *donors.choose(rng)?;
            let mut added = donor.clone();
            added.at = Duration::from_millis(rng.random_range(0..window.max(1)));
            let what = added.fault.describe(names);
            let at = added.at;
            schedule.faults.push(added);
            Edit::Add { at, what }
        }
        4 => retarget(rng, schedule, n, names, has_leader)?,
        _ => lengthen(rng, schedule, n)?,
    };
    schedule.sort();
    Some(edit)
}

/// Keep the faults before a time drawn within the window, and take `own`'s
/// from that time on. `None` when that leaves the schedule as it was.
fn splice(rng: &mut ChaCha8Rng, schedule: &mut Schedule, own: &Schedule) -> Option<Edit> {
    let window = schedule.window.min(own.window).as_millis() as u64;
    let at = Duration::from_millis(rng.random_range(0..window.max(1)));
    let mut faults: Vec<Planned> = schedule
        .faults
        .iter()
        .filter(|f| f.at < at)
        .cloned()
        .collect();
    let kept = faults.len();
    faults.extend(own.faults.iter().filter(|f| f.at >= at).cloned());
    let taken = faults.len() - kept;
    if faults == schedule.faults {
        return None;
    }
    schedule.faults = faults;
    schedule.sort();
    Some(Edit::Splice { at, kept, taken })
}

/// Move one fault earlier or later by one of [`SHIFTS_MS`] (within the window).
fn shift(rng: &mut ChaCha8Rng, schedule: &mut Schedule, n: usize, last: Duration) -> Option<Edit> {
    let i = pick(rng, n)?;
    let shift = Duration::from_millis(*SHIFTS_MS.choose(rng).expect("not empty"));
    let from = schedule.faults[i].at;
    let to = if rng.random_bool(0.5) {
        from.saturating_sub(shift)
    } else {
        (from + shift).min(last)
    };
    if to == from {
        return None;
    }
    schedule.faults[i].at = to;
    Some(Edit::Shift { fault: i, from, to })
}

/// Swap the times of two faults.
fn swap(rng: &mut ChaCha8Rng, schedule: &mut Schedule, n: usize) -> Option<Edit> {
    if n < 2 {
        return None;
    }
    let a = rng.random_range(0..n);
    let b = (a + rng.random_range(1..n)) % n;
    if schedule.faults[a].at == schedule.faults[b].at {
        return None;
    }
    let t = schedule.faults[a].at;
    schedule.faults[a].at = schedule.faults[b].at;
    schedule.faults[b].at = t;
    Some(Edit::Swap {
        a: a.min(b),
        b: a.max(b),
    })
}

/// Point one node reference of a fault at another node (or the leader, except
/// as a transfer's target).
fn retarget(
    rng: &mut ChaCha8Rng,
    schedule: &mut Schedule,
    n: usize,
    names: &[String],
    has_leader: bool,
) -> Option<Edit> {
    let i = pick(rng, n)?;
    let mut fault = schedule.faults[i].fault.clone();
    let count = fault.targets_mut().len();
    let k = rng.random_range(0..count.max(1));
    // Leadership goes to another node: a transfer names a node or `follower`,
    // never the leader (the validator refuses it in a file, and a derived
    // schedule must be one a file could hold).
    let to_leader = has_leader && !matches!(fault, Fault::TransferLeader { .. });
    let choices = names.len() + usize::from(to_leader);
    let fresh = match rng.random_range(0..choices.max(1)) {
        c if c < names.len() => Target::Node(c),
        _ => Target::Leader,
    };
    let slot = fault.targets_mut().into_iter().nth(k)?;
    let from = slot.describe(names);
    if *slot == fresh {
        return None;
    }
    *slot = fresh;
    // Two ends of one link, or two members of a partition, that became one.
    if !distinct(&mut fault) {
        return None;
    }
    schedule.faults[i].fault = fault;
    Some(Edit::Retarget {
        fault: i,
        from,
        to: fresh.describe(names),
    })
}

/// Make one lasting fault last longer (by a factor in [`LENGTHEN`]).
fn lengthen(rng: &mut ChaCha8Rng, schedule: &mut Schedule, n: usize) -> Option<Edit> {
    let lasting: Vec<usize> = (0..n)
        .filter(|&i| schedule.faults[i].lasts.is_some())
        .collect();
    let &i = lasting.choose(rng)?;
    let factor = rng.random_range(LENGTHEN.0..=LENGTHEN.1);
    let planned = &mut schedule.faults[i];
    let from = planned.lasts.expect("lasting");
    let to = from * factor;
    planned.lasts = Some(to);
    // A stall's own length grows with it.
    if let Fault::FailPoint { arm, .. } = &mut planned.fault {
        if let FaultAction::Stall(stall) = &mut arm.action {
            *stall *= factor;
        }
    }
    Some(Edit::Lengthen { fault: i, from, to })
}

fn pick(rng: &mut ChaCha8Rng, n: usize) -> Option<usize> {
    (n > 0).then(|| rng.random_range(0..n))
}

/// Whether a fault's named nodes are still distinct where they must be (the
/// two ends of a link; the members of a partition's groups).
fn distinct(fault: &mut Fault) -> bool {
    match fault {
        Fault::Hold { a, b } | Fault::Latency { a, b, .. } => a != b,
        Fault::Partition(_) => {
            let mut named: Vec<Target> = fault.targets_mut().into_iter().map(|t| *t).collect();
            let before = named.len();
            named.sort_by_key(|t| format!("{t:?}"));
            named.dedup();
            named.len() == before
        }
        Fault::Crash(_)
        | Fault::Restart(_)
        | Fault::Stop(_)
        | Fault::TransferLeader { .. }
        | Fault::FailPoint { .. } => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::scenario::load_str;

    fn schedule() -> (Schedule, Vec<String>, crate::lang::scenario::Scenario) {
        let text = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
chaos:
  window: 10s
  schedule:
    window: 10s
    faults:
      - {at: 1s, for: 2s, crash: n2}
      - {at: 3s, transfer_leader: {to: follower}}
      - {at: 4s, for: 1s, hold: {between: [n1, n3]}}
      - {at: 6s, for: 1s, failpoint: {node: leader, point: apply, action: {stall: 500ms}}}
"#;
        let s = load_str("edit.yaml", text).expect("valid");
        let names = s.nodes.iter().map(|n| n.name.clone()).collect();
        let schedule = s.chaos.clone().expect("chaos").schedule.expect("schedule");
        (schedule, names, s)
    }

    #[test]
    fn every_edit_is_drawn_and_leaves_a_valid_schedule_in_order() {
        let (original, names, scenario) = schedule();
        let donor = original.faults[1].clone();
        let mut kinds = std::collections::BTreeSet::new();
        for seed in 0..400 {
            let mut rng = crate::base::streams::Stream::Guided.rng(seed);
            let mut s = original.clone();
            let Some(edit) = mutate(&mut rng, &mut s, &[&donor], &names, true, None) else {
                continue;
            };
            kinds.insert(edit.to_string().split(' ').next().unwrap().to_string());
            assert!(
                s.faults.windows(2).all(|w| w[0].at <= w[1].at),
                "{edit}: sorted"
            );
            assert!(
                s.faults.iter().all(|f| f.at < s.window),
                "{edit}: in the window"
            );
            assert!(s
                .faults
                .iter()
                .all(|f| f.lasts.is_some() == f.fault.lasting()));
            // What a derived run plays is a schedule a file could hold.
            let text = s.to_json(&names).to_string();
            if let Err(e) = crate::lang::scenario::load_schedule(&scenario, "derived", &text) {
                panic!("{edit}: the derived schedule does not load: {e}");
            }
            let changed = s != original;
            assert!(changed, "{edit}: one edit changes the schedule");
            let diff = (s.faults.len() as i64 - original.faults.len() as i64).abs();
            assert!(diff <= 1, "{edit}: at most one fault more or less");
            if let Edit::Lengthen { fault, from, to } = &edit {
                assert!(*to >= *from * 2 && *to <= *from * 4);
                if let Fault::FailPoint { arm, .. } = &s.faults[*fault].fault {
                    assert!(
                        matches!(arm.action, FaultAction::Stall(d) if d >= Duration::from_secs(1))
                    );
                }
            }
        }
        assert_eq!(kinds.len(), 6, "every kind of edit is drawn: {kinds:?}");
    }

    #[test]
    fn a_splice_keeps_the_parent_before_its_time_and_the_run_s_own_schedule_after() {
        let (parent, names, scenario) = schedule();
        // The run's own schedule: other faults, at other times.
        let own = crate::lang::scenario::load_schedule(
            &scenario,
            "own",
            r#"{"window": "10s", "faults": [
                {"at": "500ms", "for": "1s", "crash": "n1"},
                {"at": "2500ms", "for": "2s", "hold": {"between": ["n2", "n3"]}},
                {"at": "7s", "for": "1s", "stop": "n3"}]}"#,
        )
        .expect("the own schedule loads");
        let (mut splices, mut edits) = (0, 0);
        for seed in 0..400 {
            let mut rng = crate::base::streams::Stream::Guided.rng(seed);
            let mut s = parent.clone();
            let Some(edit) = mutate(&mut rng, &mut s, &[], &names, true, Some(&own)) else {
                continue;
            };
            edits += 1;
            let Edit::Splice { at, kept, taken } = edit else {
                continue;
            };
            splices += 1;
            let before: Vec<&Planned> = parent.faults.iter().filter(|f| f.at < at).collect();
            let after: Vec<&Planned> = own.faults.iter().filter(|f| f.at >= at).collect();
            assert_eq!((kept, taken), (before.len(), after.len()), "{edit}");
            let expected: Vec<&Planned> = before.into_iter().chain(after).collect();
            assert_eq!(s.faults.iter().collect::<Vec<_>>(), expected, "{edit}");
            assert_ne!(s, parent, "{edit}: a splice changes the schedule");
            let text = s.to_json(&names).to_string();
            crate::lang::scenario::load_schedule(&scenario, "spliced", &text)
                .unwrap_or_else(|e| panic!("{edit}: the spliced schedule does not load: {e}"));
        }
        // Half of the draws are splices, and a splice after both schedules'
        // last fault (7 s of 10 s) changes nothing: 400 * 0.5 * 0.7 = 140.
        assert!(
            (110..=170).contains(&splices),
            "{splices} splices of {edits} edits"
        );
    }
}
