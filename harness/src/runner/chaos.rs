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
use crate::duration::format as fmt_duration;
use crate::scenario::{ArmStep, Chaos, ChaosFault, ChaosKind};
use crate::trail::Kind;
use nodes::api::FailPointInfo;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// What ends a lasting fault.
#[derive(Clone, Debug)]
enum Undo {
    Heal,
    Release(usize, usize),
    Latency(usize, usize),
    Start(usize),
    Clear(usize, &'static FailPointInfo),
}

struct Lasting {
    until: Duration,
    undo: Undo,
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
        self.activity = format!(
            "in the chaos window ({}:{})",
            self.scenario.file, chaos.loc.line
        );
        let mut rng = crate::streams::rng(self.seed, crate::streams::CHAOS);
        let kinds = enabled(&mut rng, chaos);
        let names: Vec<&str> = kinds.iter().map(|k| k.kind.name()).collect();
        let swarm = if chaos.swarm { " (swarm)" } else { "" };
        let detail = format!(
            "chaos: window {}, faults [{}]{swarm}",
            fmt_duration(chaos.window),
            names.join(", ")
        );
        self.event(None, Kind::Note, detail);
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
                self.undo(lasting.undo)?;
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
            self.undo(lasting.undo)?;
        }
        if chaos.workload.is_some() {
            self.stop_workload(super::workload::Source::Chaos);
        }
        self.event(None, Kind::Note, "chaos: window over, every fault undone");
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
        let lasting = |undo: Undo, cuts: bool| Some(Lasting { until, undo, cuts });
        Ok(match kind {
            ChaosKind::Partition | ChaosKind::OneWay if n < 2 || active.iter().any(|l| l.cuts) => {
                None
            }
            ChaosKind::Partition => {
                let mut order: Vec<usize> = (0..n).collect();
                order.shuffle(rng);
                let split = rng.random_range(1..n);
                let (a, b) = order.split_at(split);
                self.act_partition(&Partitioned::Groups(vec![sorted(a), sorted(b)]));
                lasting(Undo::Heal, true)
            }
            ChaosKind::OneWay => {
                let from = rng.random_range(0..n);
                let mut others: Vec<usize> = (0..n).filter(|&o| o != from).collect();
                others.shuffle(rng);
                let count = rng.random_range(1..=others.len());
                self.act_partition(&Partitioned::OneWay {
                    from,
                    to: sorted(&others[..count]),
                });
                lasting(Undo::Heal, true)
            }
            ChaosKind::Hold => match self.random_pair(rng) {
                Some((a, b)) if !self.net.holds.contains(&(a.min(b), a.max(b))) => {
                    self.act_hold(a, b);
                    lasting(Undo::Release(a, b), false)
                }
                _ => None,
            },
            ChaosKind::Latency { min, max } => match self.random_pair(rng) {
                Some((a, b)) => {
                    self.act_latency(a, b, Some(between(rng, (*min, *max))));
                    lasting(Undo::Latency(a, b), false)
                }
                None => None,
            },
            ChaosKind::Crash => match self.random_node(rng, true) {
                Some(node) => {
                    self.act_crash(node);
                    lasting(Undo::Start(node), false)
                }
                None => None,
            },
            ChaosKind::Restart => {
                let node = rng.random_range(0..n);
                self.act_restart(node);
                None
            }
            ChaosKind::Stop => match self.random_node(rng, true) {
                Some(node) => {
                    self.act_stop(node)?;
                    lasting(Undo::Start(node), false)
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
                let chosen = &points[rng.random_range(0..points.len())];
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
                let arm = ArmStep {
                    point: chosen.point,
                    action: chosen.action.clone(),
                    count: None,
                    probability: None,
                    // A random arming that never fires is not a scripted fault that failed.
                    optional: true,
                };
                self.act_arm(node, &arm, crate::yaml::Loc::default());
                lasting(Undo::Clear(node, chosen.point), false)
            }
        })
    }

    fn undo(&mut self, undo: Undo) -> Result<(), Halt> {
        match undo {
            Undo::Heal => self.act_heal(),
            Undo::Release(a, b) => {
                self.act_release(a, b);
            }
            Undo::Latency(a, b) => self.act_latency(a, b, None),
            Undo::Start(node) => {
                self.act_start(node);
            }
            Undo::Clear(node, point) => self.act_clear_failpoint(node, point),
        }
        Ok(())
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

/// The fault kinds this run uses: all of them, or (swarm) a random non-empty subset.
fn enabled<'c>(rng: &mut ChaCha8Rng, chaos: &'c Chaos) -> Vec<&'c ChaosFault> {
    let all: Vec<&ChaosFault> = chaos.faults.iter().collect();
    if !chaos.swarm || all.is_empty() {
        return all;
    }
    loop {
        let subset: Vec<&ChaosFault> = all
            .iter()
            .copied()
            .filter(|_| rng.random_bool(0.5))
            .collect();
        if !subset.is_empty() {
            return subset;
        }
    }
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
