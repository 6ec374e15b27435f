//! The checker: interpret, split into groups, search each within the budget,
//! shrink the first violation to a witness.

use super::partition::{groups, Group};
use super::report::{GroupReport, Report, Witness, WitnessOp};
use super::search::{linearize, Found, Meter, MEMO_MAX_BYTES};
use super::spec::{Decided, Entry, Spec};
use super::witness::shrink;
use crate::judge::check::Verdict;
use crate::judge::history::History;
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

/// After the search: the groups still undecided, and those whose memo filled up.
type Undecided<O> = (Vec<Pending<O>>, Vec<Pending<O>>);

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

/// Check `history` against `spec`'s sequential specification, in phases: split
/// the history into groups ([`prepare`]), let the model decide what it can
/// ([`decide`]), search the rest in rounds ([`search`]), then say what was found
/// ([`conclude`]).
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
    let pending = prepare(&mut spec, groups, &mut report);
    let checked = pending.len();
    let mut progress = Progress {
        meter: Meter::new(budget.steps),
        report,
        first_violation: None,
    };
    let searched = decide(&spec, pending, budget, &mut progress);
    let (pending, memo_full) = search(&spec, searched, budget, &mut progress);
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
    for (name, entries, spent) in pending.into_iter().chain(memo_full) {
        progress.report.groups.push(GroupReport {
            key: name,
            ops: entries.len(),
            verdict: Verdict::Unknown,
            steps: spent,
        });
    }
    conclude(&spec, history, budget, progress, checked, unknown)
}

/// What the phases share: the steps left and used, the report so far, and the
/// first violation found (its group's name and entries).
struct Progress<O> {
    meter: Meter,
    report: Report,
    first_violation: Option<(String, Vec<Entry<O>>)>,
}

/// The groups worth checking (those with an op whose effect is known), each
/// prepared by the model, their ops counted in the report.
fn prepare<S: Spec>(
    spec: &mut S,
    groups: Vec<Group<S::Op>>,
    report: &mut Report,
) -> Vec<Pending<S::Op>> {
    let mut pending: Vec<Pending<S::Op>> = Vec::new();
    for group in groups {
        let entries = spec.prepare(group.entries);
        if entries.iter().any(|e| e.determinate()) {
            report.ops += entries.len();
            pending.push((group.name, entries, 0));
        }
    }
    pending
}

/// Groups the model decides without the search (one step per op); returns the
/// rest, to be searched. A decided violation is confirmed by the search on its
/// few ops alone (and the witness shrinks them).
fn decide<S: Spec>(
    spec: &S,
    pending: Vec<Pending<S::Op>>,
    budget: &Budget,
    p: &mut Progress<S::Op>,
) -> Vec<Pending<S::Op>> {
    let mut searched = Vec::new();
    for (name, entries, spent) in pending {
        let cost = entries.len() as u64;
        if p.meter.left < cost {
            searched.push((name, entries, spent));
            continue;
        }
        let Some(decided) = spec.decide(&entries) else {
            searched.push((name, entries, spent));
            continue;
        };
        p.meter.left -= cost;
        p.meter.used += cost;
        match decided {
            Decided::Linearizable => p.report.groups_passed += 1,
            Decided::Violation(ops) => {
                let few: Vec<Entry<S::Op>> = ops.iter().map(|&i| entries[i].clone()).collect();
                // The few ops must fail on their own: the search confirms it, and
                // the witness shrinks them.
                let mut confirm =
                    Meter::with_memo(budget.shrink_steps.max(FIRST_CAP), budget.memo_max_bytes);
                let found = linearize(spec, &few, &mut confirm);
                p.meter.left = p.meter.left.saturating_sub(confirm.used);
                p.meter.used += confirm.used;
                if matches!(found, Found::Violation { .. }) {
                    p.report.groups.push(GroupReport {
                        key: name.clone(),
                        ops: entries.len(),
                        verdict: Verdict::Fail,
                        steps: spent + cost + confirm.used,
                    });
                    p.first_violation.get_or_insert((name, few));
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
    searched
}

/// Search the groups in rounds. One hard group must not hide a violation in
/// another (Porcupine stops at the first illegal partition too): every group gets
/// a small cap first, and the undecided ones a cap eight times larger each round,
/// until the budget is spent or a round found a violation. Restarting costs at
/// most a constant factor. Returns the groups still undecided and those whose
/// memo filled up (they stay undecided: more steps would only fill it again).
fn search<S: Spec>(
    spec: &S,
    mut pending: Vec<Pending<S::Op>>,
    budget: &Budget,
    p: &mut Progress<S::Op>,
) -> Undecided<S::Op> {
    let mut memo_full: Vec<Pending<S::Op>> = Vec::new();
    let mut cap = FIRST_CAP;
    while !pending.is_empty() && p.first_violation.is_none() && p.meter.left > 0 {
        let mut undecided = Vec::new();
        for (name, entries, spent) in pending {
            if p.meter.left == 0 {
                undecided.push((name, entries, spent));
                continue;
            }
            let mut round = Meter::with_memo(cap.min(p.meter.left), budget.memo_max_bytes);
            let found = linearize(spec, &entries, &mut round);
            p.meter.left -= round.used;
            p.meter.used += round.used;
            if round.memo_full {
                memo_full.push((name, entries, spent + round.used));
                continue;
            }
            let spent = spent + round.used;
            match found {
                Found::Linearizable { .. } => p.report.groups_passed += 1,
                Found::Violation { .. } => {
                    p.report.groups.push(GroupReport {
                        key: name.clone(),
                        ops: entries.len(),
                        verdict: Verdict::Fail,
                        steps: spent,
                    });
                    p.first_violation.get_or_insert((name, entries));
                }
                Found::OverBudget => undecided.push((name, entries, spent)),
            }
        }
        pending = undecided;
        cap = cap.saturating_mul(8);
    }
    (pending, memo_full)
}

/// The verdict and its message: the first violation shrunk to a witness, else
/// why the check could not decide (`unknown`), else consistent.
fn conclude<S: Spec>(
    spec: &S,
    history: &History,
    budget: &Budget,
    p: Progress<S::Op>,
    checked: usize,
    unknown: Option<String>,
) -> Report {
    let Progress {
        meter,
        mut report,
        first_violation,
    } = p;
    let model = report.model.clone();
    report.steps = meter.used;
    if let Some((key, entries)) = first_violation {
        let w = witness(spec, history, &key, entries, budget);
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
