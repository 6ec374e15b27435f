//! Shrink a group that cannot be linearized to a few ops that still cannot.
//!
//! Two moves, each of which can only turn a linearizable history into another
//! linearizable one, so whatever still fails after them proves the original
//! fails (no witness blames ops that other ops would have explained):
//! - cut at a completion T: ops completed by T stay, ops invoked after T go,
//!   ops still open at T become indeterminate (they may have taken effect
//!   before T or not);
//! - weaken an op to indeterminate: it may or may not have taken effect, any
//!   time after its invoke. A weakened read constrains nothing and is left out,
//!   and so is a weakened write no remaining read could have seen.
//!
//! The cut is found by binary search (failing is monotone in T); weakening runs
//! delta debugging (Zeller's ddmin) over the determinate ops that remain.

use super::search::{linearize, Found, Meter};
use super::spec::{Entry, Spec};

/// The shrunk entries, and whether ddmin ran to the end (1-minimal).
pub struct Shrunk<O> {
    pub entries: Vec<Entry<O>>,
    pub minimal: bool,
}

enum Test {
    Fails,
    Passes,
    OutOfSteps,
}

fn test<S: Spec>(spec: &S, entries: &[Entry<S::Op>], meter: &mut Meter) -> Test {
    match linearize(spec, entries, meter) {
        Found::Violation { .. } => Test::Fails,
        Found::Linearizable { .. } => Test::Passes,
        Found::OverBudget => Test::OutOfSteps,
    }
}

fn weaken<O>(entry: &mut Entry<O>) {
    if entry.ret.is_some() {
        entry.ret = None;
        entry.as_recorded = false;
    }
}

fn cut<S: Spec>(spec: &S, entries: &[Entry<S::Op>], at: u64) -> Vec<Entry<S::Op>> {
    let kept = entries
        .iter()
        .filter(|e| e.call < at)
        .cloned()
        .map(|mut e| {
            if e.ret.is_some_and(|r| r > at) {
                weaken(&mut e);
            }
            e
        })
        .collect();
    spec.prepare(kept)
}

/// `entries` (prepared, sorted by invoke) must fail to linearize.
pub fn shrink<S: Spec>(spec: &S, entries: Vec<Entry<S::Op>>, meter: &mut Meter) -> Shrunk<S::Op> {
    let mut rets: Vec<u64> = entries.iter().filter_map(|e| e.ret).collect();
    rets.sort_unstable();
    let mut current = entries;
    if rets.is_empty() {
        return Shrunk {
            entries: current,
            minimal: false,
        };
    }
    let (mut lo, mut hi) = (0usize, rets.len() - 1);
    let mut out_of_steps = false;
    while lo < hi {
        let mid = (lo + hi) / 2;
        match test(spec, &cut(spec, &current, rets[mid]), meter) {
            Test::Fails => hi = mid,
            Test::Passes => lo = mid + 1,
            Test::OutOfSteps => {
                out_of_steps = true;
                break;
            }
        }
    }
    if !out_of_steps {
        let candidate = cut(spec, &current, rets[hi]);
        if let Test::Fails = test(spec, &candidate, meter) {
            current = candidate;
        }
    }
    if out_of_steps {
        return Shrunk {
            entries: current,
            minimal: false,
        };
    }
    // Reads first: weakened, they vanish, and so do the writes only they saw.
    for rank in 0..2 {
        let done;
        (current, done) = ddmin(spec, current, meter, |spec, e| {
            spec.shrink_rank(&e.op) <= rank
        });
        if !done {
            return Shrunk {
                entries: current,
                minimal: false,
            };
        }
    }
    let (current, minimal) = ddmin(spec, current, meter, |_, _| true);
    Shrunk {
        entries: current,
        minimal,
    }
}

/// Delta debugging over the determinate entries `pick` selects: weaken as many
/// as possible while the whole still fails. Returns the result and whether it ran
/// to the end (false: the meter ran out).
fn ddmin<S: Spec>(
    spec: &S,
    mut current: Vec<Entry<S::Op>>,
    meter: &mut Meter,
    pick: impl Fn(&S, &Entry<S::Op>) -> bool,
) -> (Vec<Entry<S::Op>>, bool) {
    let mut chunks = 2usize;
    loop {
        let chosen: Vec<usize> = current
            .iter()
            .enumerate()
            .filter(|(_, e)| e.determinate() && pick(spec, e))
            .map(|(i, _)| i)
            .collect();
        if chosen.is_empty() {
            return (current, true);
        }
        let n = chunks.min(chosen.len());
        let size = chosen.len().div_ceil(n);
        let parts: Vec<&[usize]> = chosen.chunks(size).collect();
        // First keep only one part as recorded (a witness is often a handful of
        // ops in a long window), then weaken one part at a time.
        let mut tries: Vec<(Vec<usize>, usize)> = Vec::new();
        if parts.len() > 1 {
            for part in &parts {
                let others = chosen
                    .iter()
                    .copied()
                    .filter(|i| !part.contains(i))
                    .collect();
                tries.push((others, 2));
            }
        }
        for part in &parts {
            tries.push((part.to_vec(), (n - 1).max(2)));
        }
        let mut reduced = false;
        for (weakened, next_chunks) in tries {
            let mut candidate = current.clone();
            for &i in &weakened {
                weaken(&mut candidate[i]);
            }
            let candidate = spec.prepare(candidate);
            match test(spec, &candidate, meter) {
                Test::Fails => {
                    current = candidate;
                    chunks = next_chunks;
                    reduced = true;
                    break;
                }
                Test::Passes => {}
                Test::OutOfSteps => return (current, false),
            }
        }
        if !reduced {
            if n >= chosen.len() {
                return (current, true);
            }
            chunks = (n * 2).min(chosen.len());
        }
    }
}
