//! The checker: interpret, split into groups, search each within the budget,
//! shrink the first violation to a witness.

use super::partition::groups;
use super::report::{GroupReport, Report, Witness, WitnessOp};
use super::search::{linearize, Found, Meter};
use super::spec::{Entry, Spec};
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
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: 5_000_000,
            shrink_steps: 2_000_000,
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
    let mut meter = Meter::new(budget.shrink_steps);
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

fn describe_witness(w: &Witness) -> String {
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
    let mut meter = Meter::new(budget.steps);
    let mut first_violation = None;
    let mut unknown: Option<String> = None;
    for group in groups {
        let entries = spec.prepare(group.entries);
        if entries.iter().all(|e| !e.determinate()) {
            continue;
        }
        report.ops += entries.len();
        let before = meter.used;
        let verdict = match linearize(&spec, &entries, &mut meter) {
            Found::Linearizable { .. } => Verdict::Pass,
            Found::Violation { .. } => {
                if first_violation.is_none() {
                    first_violation = Some((group.name.clone(), entries.clone()));
                }
                Verdict::Fail
            }
            Found::OverBudget => {
                unknown.get_or_insert_with(|| {
                    format!(
                        "the budget of {} steps ran out on key `{}` ({} ops)",
                        budget.steps,
                        group.name,
                        entries.len()
                    )
                });
                Verdict::Unknown
            }
        };
        if verdict == Verdict::Pass {
            report.groups_passed += 1;
        } else {
            report.groups.push(GroupReport {
                key: group.name,
                ops: entries.len(),
                verdict,
                steps: meter.used - before,
            });
        }
    }
    report.steps = meter.used;
    let checked = report.groups_passed + report.groups.len();
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
