//! What a failing run found, as shrink, guided search and the cause check
//! compare runs by: the same outcome, checker and key.

use super::RunResult;
use crate::base::outcome::Outcome;

/// What "fails the same way" means: the outcome, the checker that caused it
/// (an invariant's own name), and for a divergence or a history the key it is
/// about (the first differing key; the first group that failed): the same
/// finding, not only the same checker.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub outcome: Outcome,
    pub checker: String,
    pub key: Option<String>,
}

/// The key a finding is about, when it names one.
fn key_of(finding: &crate::judge::check::Finding) -> Option<String> {
    if let Some(key) = finding.detail.get("key").and_then(|k| k.as_str()) {
        return Some(key.to_string());
    }
    let groups = finding.detail.get("groups")?.as_array()?;
    groups
        .iter()
        .find(|g| g.get("verdict").and_then(|v| v.as_str()) != Some("pass"))
        .and_then(|g| g.get("key")?.as_str().map(str::to_string))
}

impl Target {
    pub fn of(result: &RunResult) -> Option<Target> {
        if result.outcome == Outcome::Converged {
            return None;
        }
        let finding = result
            .findings
            .iter()
            .find(|f| f.outcome == Some(result.outcome))?;
        Some(Target {
            outcome: result.outcome,
            checker: finding.checker.clone(),
            key: key_of(finding),
        })
    }

    pub fn met_by(&self, result: &RunResult) -> bool {
        result.outcome == self.outcome
            && result.findings.iter().any(|f| {
                f.outcome == Some(self.outcome)
                    && f.checker == self.checker
                    && (self.key.is_none() || key_of(f) == self.key)
            })
    }

    /// `violated (invariant:x)`, `diverged (divergence, key k1)`.
    pub fn describe(&self) -> String {
        match &self.key {
            Some(key) => format!("{} ({}, key `{key}`)", self.outcome, self.checker),
            None => format!("{} ({})", self.outcome, self.checker),
        }
    }
}
