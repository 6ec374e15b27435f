//! The chaos nemesis: random faults over a window, with a workload at a rate
//! (`workload.rs`) running through it.
//!
//! Every draw comes from a generator seeded by the run's seed (its own stream), so a
//! chaos run replays exactly. Faults act through the same actions as scripted steps
//! and so land on the trail as replayable steps; `faultline shrink` turns them back
//! into a scripted scenario. The window ends by undoing every fault still active;
//! the heal phase and the checkers follow as for any run.

use super::interpret::Partitioned;
use super::{Driver, Halt};
use crate::action::Action;
use crate::scenario::{Chaos, ChaosFault, ChaosKind};
use crate::trail::{ChaosMark, Data};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// A fault that lasts, and the action that ends it.
struct Lasting {
    until: Duration,
    undo: Action,
    /// A partition or one-way cut (at most one at a time, so `heal: all` undoes it).
    cuts: bool,
}

fn between(rng: &mut ChaCha8Rng, (min, max): (Duration, Duration)) -> Duration {
    let (lo, hi) = (min.as_millis() as u64, max.as_millis() as u64);
    Duration::from_millis(rng.random_range(lo..=hi))
}

impl Driver<'_> {
    pub(crate) fn chaos(&mut self, chaos: &Chaos) -> Result<(), Halt> {
        self.state.borrow_mut().line = Some(chaos.loc.line);
        self.at = chaos.loc;
        self.activity = format!(
            "in the chaos window ({}:{})",
            self.scenario.file, chaos.loc.line
        );
        let mut rng = crate::streams::rng(self.seed, crate::streams::CHAOS);
        let kinds: Vec<&ChaosFault> = chaos.faults.iter().collect();
        let began = ChaosMark::Began {
            window_ms: chaos.window.as_millis() as u64,
            faults: kinds.iter().map(|k| k.kind.name().to_string()).collect(),
            swarm: chaos.swarm,
        };
        self.event(None, Data::Chaos(began));
        if let Some(draw) = &self.swarm {
            self.event(None, Data::Chaos(ChaosMark::Drew(draw.clone())));
        }
        let end = self.sim.elapsed() + chaos.window;
        let mut next_fault = self.sim.elapsed() + between(&mut rng, chaos.spacing);
        let mut active: Vec<Lasting> = Vec::new();
        if let Some(workload) = &chaos.workload {
            let stream = crate::streams::CHAOS_WORKLOAD;
            self.start_workload(super::workload::Source::Chaos, workload, stream);
        }
        while self.sim.elapsed() < end {
            let now = self.sim.elapsed();
            let (over, still): (Vec<Lasting>, Vec<Lasting>) =
                active.into_iter().partition(|l| l.until <= now);
            active = still;
            for lasting in over {
                self.perform(lasting.undo);
            }
            if now >= next_fault {
                if active.len() < chaos.concurrent_max && !kinds.is_empty() {
                    let kind = pick(&mut rng, &kinds);
                    if let Some(lasting) = self.inject(&mut rng, chaos, kind, &active)? {
                        active.push(lasting);
                    }
                }
                next_fault = self.sim.elapsed() + between(&mut rng, chaos.spacing);
            }
            self.advance()?;
        }
        for lasting in active {
            self.perform(lasting.undo);
        }
        if chaos.workload.is_some() {
            self.stop_workload(super::workload::Source::Chaos);
        }
        self.event(None, Data::Chaos(ChaosMark::Ended));
        Ok(())
    }

    /// Inject one fault of `kind`; `None` when it is instant or could not apply now.
    fn inject(
        &mut self,
        rng: &mut ChaCha8Rng,
        chaos: &Chaos,
        kind: &ChaosKind,
        active: &[Lasting],
    ) -> Result<Option<Lasting>, Halt> {
        let n = self.names.len();
        let until = self.sim.elapsed() + between(rng, chaos.duration);
        let lasting = |undo: Action, cuts: bool| Some(Lasting { until, undo, cuts });
        let names = self.names.clone();
        let name = |n: usize| names[n].clone();
        Ok(match kind {
            ChaosKind::Partition | ChaosKind::OneWay if n < 2 || active.iter().any(|l| l.cuts) => {
                None
            }
            ChaosKind::Partition => {
                let mut order: Vec<usize> = (0..n).collect();
                order.shuffle(rng);
                let split = rng.random_range(1..n);
                let (a, b) = order.split_at(split);
                let groups = Partitioned::Groups(vec![sorted(a), sorted(b)]);
                self.perform(groups.action(&names));
                lasting(Action::Heal, true)
            }
            ChaosKind::OneWay => {
                let from = rng.random_range(0..n);
                let mut others: Vec<usize> = (0..n).filter(|&o| o != from).collect();
                others.shuffle(rng);
                let count = rng.random_range(1..=others.len());
                let cut = Partitioned::OneWay {
                    from,
                    to: sorted(&others[..count]),
                };
                self.perform(cut.action(&names));
                lasting(Action::Heal, true)
            }
            ChaosKind::Hold => match self.random_pair(rng) {
                Some((a, b)) if !self.net.holds.contains(&(a.min(b), a.max(b))) => {
                    let between = [name(a), name(b)];
                    self.perform(Action::Hold {
                        between: between.clone(),
                    });
                    lasting(Action::Release { between }, false)
                }
                _ => None,
            },
            ChaosKind::Latency { min, max } => match self.random_pair(rng) {
                Some((a, b)) => {
                    let pair = [name(a), name(b)];
                    let delay = between(rng, (*min, *max));
                    self.perform(Action::Latency {
                        between: pair.clone(),
                        delay_ms: Some(delay.as_millis() as u64),
                    });
                    let reset = Action::Latency {
                        between: pair,
                        delay_ms: None,
                    };
                    lasting(reset, false)
                }
                None => None,
            },
            ChaosKind::Crash => match self.random_node(rng, true) {
                Some(node) => {
                    self.perform(Action::Crash { node: name(node) });
                    lasting(Action::Start { node: name(node) }, false)
                }
                None => None,
            },
            ChaosKind::Restart => {
                let node = rng.random_range(0..n);
                self.perform(Action::Restart { node: name(node) });
                None
            }
            ChaosKind::Stop => match self.random_node(rng, true) {
                Some(node) => {
                    self.act_stop(node)?;
                    lasting(Action::Start { node: name(node) }, false)
                }
                None => None,
            },
            ChaosKind::TransferLeader => {
                if let Some(leader) = self.leader() {
                    let followers: Vec<usize> =
                        (0..n).filter(|&o| o != leader && self.up(o)).collect();
                    if !followers.is_empty() {
                        let to = followers[rng.random_range(0..followers.len())];
                        self.act_transfer(leader, to, self.scenario.settings.op_timeout)?;
                    }
                }
                None
            }
            ChaosKind::FailPoint(points) if points.is_empty() => None,
            ChaosKind::FailPoint(points) => {
                let chosen = weighted(rng, points, |p| p.weight);
                let mut candidates: Vec<usize> = if chosen.nodes.is_empty() {
                    (0..n).collect()
                } else {
                    chosen.nodes.iter().flat_map(|&t| self.denoted(t)).collect()
                };
                candidates.sort_unstable();
                candidates.dedup();
                if candidates.is_empty() {
                    // Only `leader` was allowed, and there is none now.
                    return Ok(None);
                }
                let node = candidates[rng.random_range(0..candidates.len())];
                let point = chosen.point.name.to_string();
                self.perform(Action::ArmFailPoint {
                    node: name(node),
                    point: point.clone(),
                    fault: chosen.action.clone(),
                    count: None,
                    probability: None,
                    // A random arming that never fires is not a scripted fault that failed.
                    optional: true,
                });
                let clear = Action::ClearFailPoint {
                    node: name(node),
                    point,
                };
                lasting(clear, false)
            }
        })
    }

    fn random_pair(&self, rng: &mut ChaCha8Rng) -> Option<(usize, usize)> {
        let n = self.names.len();
        if n < 2 {
            return None;
        }
        let a = rng.random_range(0..n);
        let b = (a + rng.random_range(1..n)) % n;
        Some((a, b))
    }

    fn random_node(&self, rng: &mut ChaCha8Rng, up: bool) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.names.len())
            .filter(|&n| self.up(n) == up)
            .collect();
        (!candidates.is_empty()).then(|| candidates[rng.random_range(0..candidates.len())])
    }
}

fn sorted(nodes: &[usize]) -> Vec<usize> {
    let mut v = nodes.to_vec();
    v.sort_unstable();
    v
}

fn pick<'c>(rng: &mut ChaCha8Rng, kinds: &[&'c ChaosFault]) -> &'c ChaosKind {
    let total: u32 = kinds.iter().map(|k| k.weight).sum();
    let mut draw = rng.random_range(0..total);
    for kind in kinds {
        if draw < kind.weight {
            return &kind.kind;
        }
        draw -= kind.weight;
    }
    unreachable!("the draw is below the total weight")
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
