//! Checkers: they read the trail and the final observations and say what went wrong.
//!
//! Each checker is a pure function over a [`trail::Trail`](crate::base::trail::Trail) and a
//! [`ClusterView`], so it is unit-tested on small hand-written inputs with no
//! simulation. A checker that panics gives an `unknown` finding, never a pass.

pub mod cause;
pub mod differential;
pub mod divergence;
pub mod expect;
pub mod history;
pub mod invariants;
pub mod observed;

use crate::base::outcome::Outcome;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    Unknown,
}

/// Something a checker found. `outcome` is what it makes of the run; `None` means the
/// run fails without changing its outcome (a fault that never took effect, an unmet
/// expectation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub checker: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    pub message: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

impl Finding {
    pub fn new(checker: &str, outcome: Option<Outcome>, message: impl Into<String>) -> Self {
        Finding {
            checker: checker.to_string(),
            verdict: Verdict::Fail,
            outcome,
            message: message.into(),
            detail: serde_json::Value::Null,
        }
    }

    pub fn with_detail(mut self, detail: serde_json::Value) -> Self {
        self.detail = detail;
        self
    }

    pub fn unknown(checker: &str, message: impl Into<String>) -> Self {
        Finding {
            verdict: Verdict::Unknown,
            ..Finding::new(checker, Some(Outcome::Unknown), message)
        }
    }
}

/// The run's outcome: the most severe outcome any finding implies.
pub fn outcome_of(findings: &[Finding]) -> Outcome {
    findings
        .iter()
        .filter_map(|f| f.outcome)
        .max()
        .unwrap_or(Outcome::Converged)
}

/// Run a checker, turning a panic into an `unknown` finding.
pub fn guarded(checker: &str, f: impl FnOnce() -> Vec<Finding>) -> Vec<Finding> {
    match crate::base::panic::catch(f) {
        Ok(findings) => findings,
        Err(message) => vec![Finding::unknown(
            checker,
            format!("checker `{checker}` panicked: {message}"),
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_severe_outcome_wins_and_none_is_converged() {
        assert_eq!(outcome_of(&[]), Outcome::Converged);
        let findings = vec![
            Finding::new("a", Some(Outcome::Stuck), "x"),
            Finding::new("b", Some(Outcome::Diverged), "y"),
            Finding::new("c", None, "z"),
        ];
        assert_eq!(outcome_of(&findings), Outcome::Diverged);
    }

    #[test]
    fn a_panicking_checker_is_unknown_never_a_pass() {
        let findings = guarded("boom", || panic!("bad history"));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].verdict, Verdict::Unknown);
        assert_eq!(outcome_of(&findings), Outcome::Unknown);
        assert!(findings[0].message.contains("bad history"));
    }
}
