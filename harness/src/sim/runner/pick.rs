//! Node references, resolved. An action resolves its reference to one node when it
//! runs (`leader` waits up to the op timeout for one; `follower` and `any` pick with
//! the run's seed, from their own stream); a condition asks which nodes a
//! reference may denote now, and holds if one of them passes.

use super::{Driver, Halt};
use crate::base::action::Action;
use crate::base::duration::format as fmt_duration;
use crate::lang::scenario::{Condition, Cut, Partition, ProcessStep, Step, Target};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
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
            Target::Any | Target::Role(_) => None,
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
        let candidates: Vec<usize> = (0..self.cluster.len())
            .filter(|&n| Some(n) != leader && !taken.contains(&n))
            .filter(|&n| self.has_role(n, target))
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
        let all = 0..self.cluster.len();
        match target {
            Target::Node(n) => vec![n],
            Target::Leader => self.leader().into_iter().collect(),
            Target::Follower => {
                let leader = self.leader();
                all.filter(|&n| Some(n) != leader).collect()
            }
            Target::Any => all.collect(),
            Target::Role(_) => all.filter(|&n| self.has_role(n, target)).collect(),
        }
    }

    /// Whether node `n` is of the role `target` names (every node is, for any
    /// other reference).
    pub(crate) fn has_role(&self, n: usize, target: Target) -> bool {
        match target {
            Target::Role(role) => self.scenario.nodes[n].role == role,
            Target::Leader | Target::Follower | Target::Any | Target::Node(_) => true,
        }
    }

    /// The node a step acts on (`leader` waits up to the op timeout); `None`,
    /// recorded as ineffective, when the reference names no node now.
    pub(crate) fn step_node(
        &mut self,
        target: Target,
        want: Want,
        step: &Step,
    ) -> Result<Option<usize>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let node = self.pick(target, want, &[], timeout)?;
        if node.is_none() {
            let what = self.no_node(target, want, timeout);
            self.ineffective(step, what);
        }
        Ok(node)
    }

    /// Why a reference named no node.
    pub(crate) fn no_node(&self, target: Target, want: Want, timeout: Duration) -> String {
        let state = match want {
            Want::Up => " up",
            Want::Down => " down",
            Want::Either => "",
        };
        match target {
            Target::Leader => format!("no leader within {}", fmt_duration(timeout)),
            Target::Follower => format!(
                "no{state} follower (and a leader within {})",
                fmt_duration(timeout)
            ),
            Target::Any | Target::Node(_) => format!("no{state} node to act on"),
            Target::Role(role) => format!("no{state} {role} to act on"),
        }
    }

    /// The two ends of a link, distinct.
    pub(crate) fn pair(
        &mut self,
        a: Target,
        b: Target,
        step: &Step,
    ) -> Result<Option<(usize, usize)>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let Some(x) = self.pick(a, Want::Either, &[], timeout)? else {
            let what = self.no_node(a, Want::Either, timeout);
            self.ineffective(step, what);
            return Ok(None);
        };
        let Some(y) = self.pick(b, Want::Either, &[x], timeout)? else {
            let what = self.no_node(b, Want::Either, timeout);
            self.ineffective(step, what);
            return Ok(None);
        };
        if x == y {
            self.ineffective(step, format!("both ends are {}", self.cluster.name(x)));
            return Ok(None);
        }
        Ok(Some((x, y)))
    }

    /// The node a process step acts on; `None` (recorded as ineffective unless
    /// the step is optional) when the reference names no node now.
    pub(crate) fn process_node(
        &mut self,
        p: &ProcessStep,
        want: Want,
        step: &Step,
    ) -> Result<Option<usize>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let node = self.pick(p.target, want, &[], timeout)?;
        if node.is_none() && !p.optional {
            let what = self.no_node(p.target, want, timeout);
            self.ineffective(step, what);
        }
        Ok(node)
    }

    /// Resolve a partition's targets (the leader, now) into groups or a one-way cut.
    pub(crate) fn resolve_partition(
        &mut self,
        partition: &Partition,
    ) -> Result<Option<Partitioned>, Halt> {
        let timeout = self.scenario.settings.op_timeout;
        let resolved = match partition {
            Partition::Groups(groups) => {
                let mut ids: Vec<Vec<usize>> = Vec::new();
                // `any`/`follower` picks differ from every node already placed.
                let mut taken = Vec::new();
                for group in groups {
                    let mut g = Vec::new();
                    for target in group {
                        let Some(id) = self.pick(*target, Want::Either, &taken, timeout)? else {
                            return Ok(None);
                        };
                        if !g.contains(&id) {
                            g.push(id);
                        }
                        taken.push(id);
                    }
                    ids.push(g);
                }
                Partitioned::Groups(ids)
            }
            Partition::Isolate(target) => {
                let Some(id) = self.pick(*target, Want::Either, &[], timeout)? else {
                    return Ok(None);
                };
                let others = (0..self.cluster.len()).filter(|&o| o != id).collect();
                Partitioned::Groups(vec![vec![id], others])
            }
            Partition::OneWay { from, to } => {
                let Some(from) = self.pick(*from, Want::Either, &[], timeout)? else {
                    return Ok(None);
                };
                let mut ids = Vec::new();
                for target in to {
                    let mut taken = ids.clone();
                    taken.push(from);
                    let Some(id) = self.pick(*target, Want::Either, &taken, timeout)? else {
                        return Ok(None);
                    };
                    if id != from && !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                Partitioned::OneWay { from, to: ids }
            }
        };
        Ok(Some(resolved))
    }
}

/// A partition with every target resolved to a node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Partitioned {
    Groups(Vec<Vec<usize>>),
    OneWay { from: usize, to: Vec<usize> },
}

impl Partitioned {
    pub(crate) fn cuts(&self) -> Vec<Cut> {
        match self {
            Partitioned::Groups(groups) => Cut::between_groups(groups),
            Partitioned::OneWay { from, to } => to
                .iter()
                .map(|&t| Cut {
                    from: *from,
                    to: t,
                    oneway: true,
                })
                .collect(),
        }
    }

    /// The partition as an action on named nodes.
    pub(crate) fn action(&self, names: &[String]) -> Action {
        let name = |n: &usize| names[*n].clone();
        match self {
            Partitioned::Groups(groups) => Action::Partition {
                groups: groups
                    .iter()
                    .map(|g| g.iter().map(name).collect())
                    .collect(),
            },
            Partitioned::OneWay { from, to } => Action::PartitionOneWay {
                from: name(from),
                to: to.iter().map(name).collect(),
            },
        }
    }
}

/// One of `items` by weight. With every weight 1 this is the same draw as a
/// uniform index (so unweighted scenarios keep their trails).
pub(super) fn weighted<'t, T>(
    rng: &mut ChaCha8Rng,
    items: &'t [T],
    weight: impl Fn(&T) -> u32,
) -> &'t T {
    let total: u32 = items.iter().map(&weight).sum();
    let mut draw = rng.random_range(0..total);
    for item in items {
        let w = weight(item);
        if draw < w {
            return item;
        }
        draw -= w;
    }
    unreachable!("the draw is below the total weight")
}
