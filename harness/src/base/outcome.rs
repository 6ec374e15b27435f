//! How a run ended.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Ordered by severity: when several checkers speak, the most severe wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// After the heal phase every replica agrees and every invariant holds.
    Converged,
    /// A checker could not decide (it panicked); never a pass.
    Unknown,
    /// An await or a liveness property missed its deadline, or a limit was hit.
    Stuck,
    /// A named safety invariant failed, even if all replicas agree.
    Violated,
    /// Replicas disagree on replicated state at a common applied index.
    Diverged,
    /// An unexpected panic in a node or the harness.
    Crashed,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::Converged,
        Outcome::Diverged,
        Outcome::Violated,
        Outcome::Stuck,
        Outcome::Crashed,
        Outcome::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Converged => "converged",
            Outcome::Unknown => "unknown",
            Outcome::Stuck => "stuck",
            Outcome::Violated => "violated",
            Outcome::Diverged => "diverged",
            Outcome::Crashed => "crashed",
        }
    }

    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == text)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
