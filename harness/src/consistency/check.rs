//! The checker: interpret, split into groups, search each within the budget,
//! shrink the first violation to a witness.

use super::partition::groups;
use super::report::{GroupReport, Report, Witness, WitnessOp};
use super::search::{linearize, Found, Meter, MEMO_MAX_BYTES};
use super::spec::{Decided, Entry, Spec};
use super::witness::shrink;
use crate::check::Verdict;
use crate::history::History;
use serde_json::Value;

/// Limits on the work: over them the verdict is `unknown`, never a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Specification steps for the whole history. Memory grows with them (one
    /// memo entry per new step, tens of bytes plus the model state).
    pub steps: u64,
    /// Steps for shrinking a violation to a witness.
    pub shrink_steps: u64,
    /// The memory one search's memo may hold.
    pub memo_max_bytes: u64,
}

/// A group not yet decided: its name, entries and the steps spent on it.
type Pending<O> = (String, Vec<Entry<O>>, u64);

/// The first round's steps per group.
const FIRST_CAP: u64 = 20_000;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: 10_000_000,
            shrink_steps: 2_000_000,
            memo_max_bytes: MEMO_MAX_BYTES,
        }
    }
}

fn witness<S: Spec>(
    spec: &S,
    history: &History,
    key: &str,
    entries: Vec<Entry<S::Op>>,
    budget: &Budget,
) -> Witness {
    let mut meter = Meter::with_memo(budget.shrink_steps, budget.memo_max_bytes);
    let shrunk = shrink(spec, entries, &mut meter);
    let ops = shrunk
        .entries
        .iter()
        .map(|e| {
            let op = &history.ops()[e.source];
            let completion = op.completion.as_ref();
            WitnessOp {
                op: e.source,
                process: op.process,
                f: op.f.clone(),
                args: op.args.clone(),
                completion: completion.map(|c| c.kind),
                result: completion.map(|c| c.value.clone()).unwrap_or(Value::Null),
                error: completion.and_then(|c| c.error.clone()),
                invoke_ns: op.invoke.time_ns,
                complete_ns: completion.map(|c| c.at.time_ns),
                as_recorded: e.as_recorded,
                reads_as: spec.describe(e),
            }
        })
        .collect();
    Witness {
        key: key.to_string(),
        ops,
        minimal: shrunk.minimal,
        steps: meter.used,
    }
}

/// `256 MiB`, `1 KiB`, `100 bytes`.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The witness in one line: the ops as recorded that cannot be ordered.
pub fn describe_witness(w: &Witness) -> String {
    let recorded: Vec<String> = w
        .ops
        .iter()
        .filter(|o| o.as_recorded)
        .map(|o| {
            format!(
                "p{} {} @{}ms",
                o.process,
                o.reads_as,
                o.invoke_ns / 1_000_000
            )
        })
        .collect();
    let context = w.ops.len() - recorded.len();
    let mut text = format!(
        "key `{}`: these {} op(s) cannot be ordered: {}",
        w.key,
        recorded.len(),
        recorded.join("; ")
    );
    if context > 0 {
        text.push_str(&format!(
            " (with {context} more that may or may not have taken effect)"
        ));
    }
    text
}

/// Check `history` against `spec`'s sequential specification.
pub fn check<S: Spec>(mut spec: S, history: &History, budget: &Budget) -> Report {
    let model = spec.name().to_string();
    let mut report = Report {
        model: model.clone(),
        verdict: Verdict::Unknown,
        message: String::new(),
        ops: 0,
        steps: 0,
        groups_passed: 0,
        groups: Vec::new(),
        witness: None,
    };
    let groups = match groups(&mut spec, history) {
        Ok(groups) => groups,
        Err(message) => {
            report.message = format!("{model}: cannot judge the history: {message}");
            return report;
        }
    };
    // One hard group must not hide a violation in another (Porcupine stops at
    // the first illegal partition too): every group gets a small cap first, and
    // the undecided ones a cap eight times larger each round, until the budget
    // is spent or a round found a violation. Restarting costs at most a
    // constant factor.
    let mut pending: Vec<Pending<S::Op>> = Vec::new();
    for group in groups {
        let entries = spec.prepare(group.entries);
        if entries.iter().any(|e| e.determinate()) {
            report.ops += entries.len();
            pending.push((group.name, entries, 0));
        }
    }
    let checked = pending.len();
    let mut meter = Meter::new(budget.steps);
    let mut first_violation = None;
    // Groups the model decides without the search (one step per op), the rest
    // searched below.
    let mut searched = Vec::new();
    for (name, entries, spent) in pending {
        let cost = entries.len() as u64;
        if meter.left < cost {
            searched.push((name, entries, spent));
            continue;
        }
        let Some(decided) = spec.decide(&entries) else {
            searched.push((name, entries, spent));
            continue;
        };
        meter.left -= cost;
        meter.used += cost;
        match decided {
            Decided::Linearizable => report.groups_passed += 1,
            Decided::Violation(ops) => {
                let few: Vec<Entry<S::Op>> = ops.iter().map(|&i| entries[i].clone()).collect();
                // The few ops must fail on their own: the search confirms it, and
                // the witness shrinks them.
                let mut confirm =
                    Meter::with_memo(budget.shrink_steps.max(FIRST_CAP), budget.memo_max_bytes);
                let found = linearize(&spec, &few, &mut confirm);
                meter.left = meter.left.saturating_sub(confirm.used);
                meter.used += confirm.used;
                if matches!(found, Found::Violation { .. }) {
                    report.groups.push(GroupReport {
                        key: name.clone(),
                        ops: entries.len(),
                        verdict: Verdict::Fail,
                        steps: spent + cost + confirm.used,
                    });
                    first_violation.get_or_insert((name, few));
                } else {
                    debug_assert!(
                        false,
                        "`{name}`: the decided violation {ops:?} is {found:?}"
                    );
                    searched.push((name, entries, spent + cost + confirm.used));
                }
            }
        }
    }
    let mut pending = searched;
    // Groups whose memo filled up: they stay undecided.
    let mut memo_full: Vec<Pending<S::Op>> = Vec::new();
    let mut cap = FIRST_CAP;
    while !pending.is_empty() && first_violation.is_none() && meter.left > 0 {
        let mut undecided = Vec::new();
        for (name, entries, spent) in pending {
            if meter.left == 0 {
                undecided.push((name, entries, spent));
                continue;
            }
            let mut round = Meter::with_memo(cap.min(meter.left), budget.memo_max_bytes);
            let found = linearize(&spec, &entries, &mut round);
            if round.memo_full {
                // More steps would only fill it again: this group stays unknown.
                meter.left -= round.used;
                meter.used += round.used;
                memo_full.push((name, entries, spent + round.used));
                continue;
            }
            meter.left -= round.used;
            meter.used += round.used;
            let spent = spent + round.used;
            match found {
                Found::Linearizable { .. } => report.groups_passed += 1,
                Found::Violation { .. } => {
                    report.groups.push(GroupReport {
                        key: name.clone(),
                        ops: entries.len(),
                        verdict: Verdict::Fail,
                        steps: spent,
                    });
                    first_violation.get_or_insert((name, entries));
                }
                Found::OverBudget => undecided.push((name, entries, spent)),
            }
        }
        pending = undecided;
        cap = cap.saturating_mul(8);
    }
    let unknown = match (memo_full.first(), pending.first()) {
        (Some((name, entries, _)), _) => Some(format!(
            "the memo limit of {} ran out on key `{name}` ({} ops)",
            size_text(budget.memo_max_bytes),
            entries.len()
        )),
        (None, Some((name, entries, _))) => Some(format!(
            "the budget of {} steps ran out on key `{name}` ({} ops)",
            budget.steps,
            entries.len()
        )),
        (None, None) => None,
    };
    pending.extend(memo_full);
    for (name, entries, spent) in pending {
        report.groups.push(GroupReport {
            key: name,
            ops: entries.len(),
            verdict: Verdict::Unknown,
            steps: spent,
        });
    }
    report.steps = meter.used;
    if let Some((key, entries)) = first_violation {
        let w = witness(&spec, history, &key, entries, budget);
        report.verdict = Verdict::Fail;
        report.message = format!("{model}: not consistent: {}", describe_witness(&w));
        report.witness = Some(w);
    } else if let Some(why) = unknown {
        report.message = format!("{model}: unknown: {why}");
    } else if checked == 0 {
        report.message = format!("{model}: unknown: no op that completed to check");
    } else {
        report.verdict = Verdict::Pass;
        report.message = format!(
            "{model}: consistent: {} op(s) on {checked} key(s), {} steps",
            report.ops, report.steps
        );
    }
    report
}
