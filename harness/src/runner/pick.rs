//! Node references, resolved. An action resolves its reference to one node when it
//! runs (`leader` waits up to the op timeout for one; `follower` and `any` pick with
//! the run's seed, from their own stream); a condition asks which nodes a
//! reference may denote now, and holds if one of them passes.

use super::{Driver, Halt};
use crate::scenario::{Condition, Target};
use rand::Rng;
use std::time::Duration;

/// Which nodes an action can act on, for `follower` and `any` picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    Up,
    Down,
    Either,
}

impl Driver<'_> {
    /// The one node `target` names for an action now, distinct from `taken`;
    /// `None` when there is none (no leader within `timeout`, no candidate).
    pub(crate) fn pick(
        &mut self,
        target: Target,
        want: Want,
        taken: &[usize],
        timeout: Duration,
    ) -> Result<Option<usize>, Halt> {
        let leader = match target {
            Target::Node(n) => return Ok(Some(n)),
            Target::Any => None,
            Target::Leader | Target::Follower => {
                self.run_until(&Condition::Leader(None), timeout)?;
                match self.leader() {
                    Some(leader) => Some(leader),
                    None => return Ok(None),
                }
            }
        };
        if target == Target::Leader {
            return Ok(leader.filter(|l| !taken.contains(l)));
        }
        let candidates: Vec<usize> = (0..self.names.len())
            .filter(|&n| Some(n) != leader && !taken.contains(&n))
            .filter(|&n| match want {
                Want::Up => self.up(n),
                Want::Down => !self.up(n),
                Want::Either => true,
            })
            .collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            candidates[self.picks.random_range(0..candidates.len())],
        ))
    }

    /// Every node `target` may denote now, for a condition: the leader (if any),
    /// every node but the leader, every node, or the one named.
    pub(crate) fn denoted(&self, target: Target) -> Vec<usize> {
        let all = 0..self.names.len();
        match target {
            Target::Node(n) => vec![n],
            Target::Leader => self.leader().into_iter().collect(),
            Target::Follower => {
                let leader = self.leader();
                all.filter(|&n| Some(n) != leader).collect()
            }
            Target::Any => all.collect(),
        }
    }
}
