//! What clients saw, judged: the run's history against the consistency each op
//! declares, by the sequential model its model names (docs/history.md). A
//! violation fails the run `violated` (checker `consistency`) with the smallest
//! set of ops the checker found that cannot be ordered; a checker over its
//! budget is `unknown`, never a pass.

use super::own::Own;
use super::register::Register;
use super::zookeeper::ZooKeeper;
use super::{check, Budget, Report, CHECKER};
use crate::judge::check::Finding;
use crate::judge::history::{ClientHistory, History, Op};
use crate::lang::scenario::HistoryCheck;
use faultline_api::{Consistency, HistoryModel, Model, ModelInfo};

/// The judgment of one run.
#[derive(Debug, Default)]
pub struct Judged {
    pub findings: Vec<Finding>,
    /// `None` when nothing was judged (off, no judged op, no history model).
    pub report: Option<Report>,
}

/// Judge `recorded`, of a run with these model `params`. `workload`: whether a workload ran, so that a history in
/// which nothing completed tested nothing (`unknown`) rather than having
/// nothing to say (a scenario whose few scripted ops all timed out).
pub fn judge(
    model: &dyn Model,
    recorded: &ClientHistory,
    params: &serde_json::Value,
    settings: &HistoryCheck,
    workload: bool,
) -> Judged {
    let info = model.info();
    if !settings.enabled || info.history == HistoryModel::None {
        return Judged::default();
    }
    if let Some(broken) = &recorded.broken {
        let message =
            format!("the history of this run is incomplete, so it was not judged: {broken}");
        return Judged {
            findings: vec![Finding::unknown(CHECKER, message)],
            report: None,
        };
    }
    let (kept, ops) = judged_ops(info, recorded);
    if !ops.iter().any(|op| op.ok().is_some()) {
        let findings = if workload {
            let message = format!(
                "{}: unknown: no judged op completed ({} sent), so what clients saw was never tested",
                info.name,
                ops.len()
            );
            vec![Finding::unknown(CHECKER, message)]
        } else {
            Vec::new()
        };
        return Judged {
            findings,
            report: None,
        };
    }
    let history = match History::from_ops(ops) {
        Ok(history) => history,
        Err(e) => {
            let message = format!("the judged part of the history is malformed: {e}");
            return Judged {
                findings: vec![Finding::unknown(CHECKER, message)],
                report: None,
            };
        }
    };
    let budget = &Budget {
        steps: settings.steps,
        shrink_steps: settings.shrink_steps,
        ..Budget::default()
    };
    let mut report = match info.history {
        HistoryModel::Register => check(Register::default(), &history, budget),
        HistoryModel::ZooKeeper => check(ZooKeeper::default(), &history, budget),
        HistoryModel::Own => match model.sequential() {
            Some(spec) => check(Own::new(info.name, spec, params.clone()), &history, budget),
            None => {
                let message = format!(
                    "model `{}` names its own specification but has none",
                    info.name
                );
                return Judged {
                    findings: vec![Finding::unknown(CHECKER, message)],
                    report: None,
                };
            }
        },
        HistoryModel::None => return Judged::default(),
    };
    // The witness names ops of the recorded history, on their clients' lanes.
    if let Some(witness) = &mut report.witness {
        for op in &mut witness.ops {
            if let Some(&original) = kept.get(op.op) {
                op.op = original;
                op.process = recorded.history.ops()[original].process;
            }
        }
        report.message = format!(
            "{}: not consistent: {}",
            report.model,
            check::describe_witness(witness)
        );
    }
    Judged {
        findings: report.findings(),
        report: Some(report),
    }
}

/// The ops the model judges, each with its position in `recorded` (on a
/// session's lane when the model judges sessions).
fn judged_ops(info: &ModelInfo, recorded: &ClientHistory) -> (Vec<usize>, Vec<Op>) {
    let judged = |op: &Op| {
        info.op(&op.f)
            .is_some_and(|o| o.consistency != Consistency::Unjudged)
    };
    let sessions = info.history == HistoryModel::ZooKeeper;
    let mut kept: Vec<usize> = Vec::new();
    let mut ops: Vec<Op> = Vec::new();
    for (i, op) in recorded.history.ops().iter().enumerate() {
        if judged(op) {
            let mut op = op.clone();
            if sessions {
                // A session is a client's connection to one start of one node.
                op.process = recorded.sessions.get(i).copied().unwrap_or(op.process);
            }
            kept.push(i);
            ops.push(op);
        }
    }
    (kept, ops)
}
