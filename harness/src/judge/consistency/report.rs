//! What the checker says: a verdict, per group what it found, and on a violation
//! the smallest set of ops it could find that cannot be ordered.

use crate::base::outcome::Outcome;
use crate::judge::check::{Finding, Verdict};
use crate::judge::history::CompletionKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The checker's name in findings.
pub const CHECKER: &str = "consistency";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    /// The key (or keys, joined) of the group.
    pub key: String,
    pub ops: usize,
    pub verdict: Verdict,
    pub steps: u64,
}

/// One op of a witness, with what a client lane needs to draw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessOp {
    /// Position in the history's ops.
    pub op: usize,
    pub process: u64,
    pub f: String,
    pub args: Value,
    /// `None`: never completed.
    pub completion: Option<CompletionKind>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub result: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub invoke_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_ns: Option<u64>,
    /// False when the witness treats this op as "may or may not have taken
    /// effect" although it completed: the ops as recorded cannot be ordered even
    /// then, so this one is context, not part of the contradiction.
    pub as_recorded: bool,
    /// The op as the model read it: `write 3`, `read -> 1`.
    pub reads_as: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Witness {
    pub key: String,
    pub ops: Vec<WitnessOp>,
    /// True when no op of the witness can be weakened and still fail (the shrink
    /// finished within its budget); false: small, maybe not minimal.
    pub minimal: bool,
    /// Steps the shrink took.
    pub steps: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub model: String,
    pub verdict: Verdict,
    pub message: String,
    /// Ops judged (not `fail`, not left out as unobservable).
    pub ops: usize,
    pub steps: u64,
    /// Every group that did not pass, and how many did.
    pub groups_passed: usize,
    pub groups: Vec<GroupReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<Witness>,
}

impl Report {
    /// The report as findings for a run: none on a pass, `violated` on a
    /// violation, `unknown` when the checker could not decide.
    pub fn findings(&self) -> Vec<Finding> {
        let detail = serde_json::to_value(self).unwrap_or(Value::Null);
        match self.verdict {
            Verdict::Pass => Vec::new(),
            Verdict::Fail => {
                vec![
                    Finding::new(CHECKER, Some(Outcome::Violated), self.message.clone())
                        .with_detail(detail),
                ]
            }
            Verdict::Unknown => {
                vec![Finding::unknown(CHECKER, self.message.clone()).with_detail(detail)]
            }
        }
    }
}
