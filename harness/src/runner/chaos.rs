//! The chaos window: faults from a source over a window, with a workload at a
//! rate (`workload.rs`) running through it.
//!
//! The window is the loop: every simulation step it lets its fault source end and
//! begin faults, and steps (the step sends the workload's ops that are due). Where faults
//! come from is the source's business ([`FaultSource`]): the random nemesis
//! ([`RandomFaults`]) draws them from the seed; a source that plays a recorded
//! schedule of (time offset, [`Action`]) would do the same through the same two
//! calls. Either way a fault is an action performed with [`Driver::act`], so it
//! lands on the trail as a replayable step; `faultline shrink` turns them back
//! into a scripted scenario. The window ends by letting the source end every
//! fault still in effect; the heal phase and the checkers follow as for any run.
//!
//! Every fault draw comes from one generator seeded by the run's seed (its own
//! stream), and the workload's from another ([`Stream::ChaosWorkload`]), so a
//! chaos run replays exactly and more workload clients never shift the faults.

use super::pick::{weighted, Partitioned};
use super::{Driver, Halt};
use crate::action::Action;
use crate::scenario::{Chaos, ChaosFault, ChaosKind};
use crate::streams::Stream;
use crate::trail::{ChaosMark, Data};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// Where a chaos window's faults come from. Every step of the window calls
/// [`ending`], then [`beginning`], then steps; at the window's end it calls
/// [`close`]. A source performs its actions itself, with
/// [`Driver::act`] (which does the waits a stop or transfer has), and may read
/// the cluster through `run` to decide.
///
/// [`ending`]: FaultSource::ending
/// [`beginning`]: FaultSource::beginning
/// [`close`]: FaultSource::close
pub(crate) trait FaultSource {
    /// End what is due to end by now.
    fn ending(&mut self, run: &mut Driver<'_>) -> Result<(), Halt>;
    /// Begin what is due to begin now, drawing from the window's `rng` if it draws.
    fn beginning(&mut self, run: &mut Driver<'_>, rng: &mut ChaCha8Rng) -> Result<(), Halt>;
    /// The window is over: end every fault still in effect.
    fn close(&mut self, run: &mut Driver<'_>) -> Result<(), Halt>;
}

impl Driver<'_> {
    pub(crate) fn chaos(&mut self, chaos: &Chaos) -> Result<(), Halt> {
        let mut rng = Stream::Chaos.rng(self.seed);
        // The first fault's time is the window's first draw.
        let faults = RandomFaults::new(chaos, self.cluster.elapsed(), &mut rng);
        self.chaos_window(chaos, rng, faults)
    }

    /// The window's loop over one fault source.
    fn chaos_window(
        &mut self,
        chaos: &Chaos,
        mut rng: ChaCha8Rng,
        mut faults: impl FaultSource,
    ) -> Result<(), Halt> {
        self.cluster.state_mut().line = Some(chaos.loc.line);
        self.at = chaos.loc;
        self.activity = format!(
            "in the chaos window ({}:{})",
            self.scenario.file, chaos.loc.line
        );
        let began = ChaosMark::Began {
            window_ms: chaos.window.as_millis() as u64,
            faults: chaos
                .faults
                .iter()
                .map(|k| k.kind.name().to_string())
                .collect(),
            swarm: chaos.swarm,
        };
        self.event(None, Data::Chaos(began));
        if let Some(draw) = &self.swarm {
            self.event(None, Data::Chaos(ChaosMark::Drew(draw.clone())));
        }
        let end = self.cluster.elapsed() + chaos.window;
        if let Some(workload) = &chaos.workload {
            let source = super::workload::Source::Chaos;
            self.start_workload(source, workload, Stream::ChaosWorkload);
        }
        while self.cluster.elapsed() < end {
            faults.ending(self)?;
            faults.beginning(self, &mut rng)?;
            self.advance()?;
        }
        faults.close(self)?;
        if chaos.workload.is_some() {
            self.stop_workload(super::workload::Source::Chaos);
        }
        self.event(None, Data::Chaos(ChaosMark::Ended));
        Ok(())
    }
}

/// A fault in effect, and the action that ends it.
struct Lasting {
    until: Duration,
    undo: Action,
    /// A partition or one-way cut (at most one at a time, so `heal: all` undoes it).
    cuts: bool,
}

/// A fault the random nemesis drew: the action that begins it, and what ends it
/// (none for an instant fault: a restart, a transfer).
struct Drawn {
    action: Action,
    undo: Option<Action>,
    cuts: bool,
}

/// The random nemesis: a fault of a kind drawn by weight every `spacing`, each
/// lasting a drawn `duration`, at most `concurrent_max` at a time.
pub(crate) struct RandomFaults {
    kinds: Vec<ChaosFault>,
    spacing: (Duration, Duration),
    duration: (Duration, Duration),
    concurrent_max: usize,
    next_fault: Duration,
    active: Vec<Lasting>,
}

fn between(rng: &mut ChaCha8Rng, (min, max): (Duration, Duration)) -> Duration {
    let (lo, hi) = (min.as_millis() as u64, max.as_millis() as u64);
    Duration::from_millis(rng.random_range(lo..=hi))
}

impl RandomFaults {
    /// The nemesis of a window opening at `now`: its first fault comes a drawn
    /// spacing later.
    pub(crate) fn new(chaos: &Chaos, now: Duration, rng: &mut ChaCha8Rng) -> RandomFaults {
        RandomFaults {
            kinds: chaos.faults.clone(),
            spacing: chaos.spacing,
            duration: chaos.duration,
            concurrent_max: chaos.concurrent_max,
            next_fault: now + between(rng, chaos.spacing),
            active: Vec::new(),
        }
    }

    /// Draw one fault of `kind` against the cluster as it is now; `None` when it
    /// cannot apply now (no second node, a cut already in effect, no leader, ...).
    fn draw(&self, run: &Driver<'_>, rng: &mut ChaCha8Rng, kind: &ChaosKind) -> Option<Drawn> {
        let n = run.cluster.len();
        let name = |n: usize| run.name(n);
        let lasting = |action: Action, undo: Action, cuts: bool| {
            Some(Drawn {
                action,
                undo: Some(undo),
                cuts,
            })
        };
        let instant = |action: Action| {
            Some(Drawn {
                action,
                undo: None,
                cuts: false,
            })
        };
        match kind {
            ChaosKind::Partition | ChaosKind::OneWay
                if n < 2 || self.active.iter().any(|l| l.cuts) =>
            {
                None
            }
            ChaosKind::Partition => {
                let mut order: Vec<usize> = (0..n).collect();
                order.shuffle(rng);
                let split = rng.random_range(1..n);
                let (a, b) = order.split_at(split);
                let groups = Partitioned::Groups(vec![sorted(a), sorted(b)]);
                lasting(groups.action(run.cluster.names()), Action::Heal, true)
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
                lasting(cut.action(run.cluster.names()), Action::Heal, true)
            }
            ChaosKind::Hold => match random_pair(n, rng) {
                Some((a, b)) if !run.nemesis.held(a, b) => {
                    let between = [name(a), name(b)];
                    let hold = Action::Hold {
                        between: between.clone(),
                    };
                    lasting(hold, Action::Release { between }, false)
                }
                _ => None,
            },
            ChaosKind::Latency { min, max } => {
                let (a, b) = random_pair(n, rng)?;
                let pair = [name(a), name(b)];
                let delay = between(rng, (*min, *max));
                let slow = Action::Latency {
                    between: pair.clone(),
                    delay_ms: Some(delay.as_millis() as u64),
                };
                let reset = Action::Latency {
                    between: pair,
                    delay_ms: None,
                };
                lasting(slow, reset, false)
            }
            ChaosKind::Crash => {
                let node = random_node(run, rng, true)?;
                let crash = Action::Crash { node: name(node) };
                lasting(crash, Action::Start { node: name(node) }, false)
            }
            ChaosKind::Restart => {
                let node = rng.random_range(0..n);
                instant(Action::Restart { node: name(node) })
            }
            ChaosKind::Stop => {
                let node = random_node(run, rng, true)?;
                let stop = Action::Stop { node: name(node) };
                lasting(stop, Action::Start { node: name(node) }, false)
            }
            ChaosKind::TransferLeader => {
                let leader = run.leader()?;
                let followers: Vec<usize> = (0..n).filter(|&o| o != leader && run.up(o)).collect();
                if followers.is_empty() {
                    return None;
                }
                let to = followers[rng.random_range(0..followers.len())];
                instant(Action::TransferLeader {
                    from: name(leader),
                    to: name(to),
                })
            }
            ChaosKind::FailPoint(points) if points.is_empty() => None,
            ChaosKind::FailPoint(points) => {
                let chosen = weighted(rng, points, |p| p.weight);
                let mut candidates: Vec<usize> = if chosen.nodes.is_empty() {
                    (0..n).collect()
                } else {
                    chosen.nodes.iter().flat_map(|&t| run.denoted(t)).collect()
                };
                candidates.sort_unstable();
                candidates.dedup();
                if candidates.is_empty() {
                    // Only `leader` was allowed, and there is none now.
                    return None;
                }
                let node = candidates[rng.random_range(0..candidates.len())];
                let point = chosen.point.name.to_string();
                let arm = Action::ArmFailPoint {
                    node: name(node),
                    point: point.clone(),
                    fault: chosen.action.clone(),
                    count: chosen.count,
                    probability: None,
                    // A random arming that never fires is not a scripted fault that failed.
                    optional: true,
                };
                let clear = Action::ClearFailPoint {
                    node: name(node),
                    point,
                };
                lasting(arm, clear, false)
            }
        }
    }
}

impl FaultSource for RandomFaults {
    fn ending(&mut self, run: &mut Driver<'_>) -> Result<(), Halt> {
        let now = run.cluster.elapsed();
        let (over, still): (Vec<Lasting>, Vec<Lasting>) = std::mem::take(&mut self.active)
            .into_iter()
            .partition(|l| l.until <= now);
        self.active = still;
        for lasting in over {
            run.act(lasting.undo)?;
        }
        Ok(())
    }

    fn beginning(&mut self, run: &mut Driver<'_>, rng: &mut ChaCha8Rng) -> Result<(), Halt> {
        let now = run.cluster.elapsed();
        if now < self.next_fault {
            return Ok(());
        }
        if self.active.len() < self.concurrent_max && !self.kinds.is_empty() {
            let kind = pick(rng, &self.kinds);
            let until = now + between(rng, self.duration);
            if let Some(drawn) = self.draw(run, rng, kind) {
                // A stop or a transfer waits: the fault's end still counts from
                // when it was drawn.
                run.act(drawn.action)?;
                if let Some(undo) = drawn.undo {
                    self.active.push(Lasting {
                        until,
                        undo,
                        cuts: drawn.cuts,
                    });
                }
            }
        }
        self.next_fault = run.cluster.elapsed() + between(rng, self.spacing);
        Ok(())
    }

    fn close(&mut self, run: &mut Driver<'_>) -> Result<(), Halt> {
        for lasting in std::mem::take(&mut self.active) {
            run.act(lasting.undo)?;
        }
        Ok(())
    }
}

fn random_pair(n: usize, rng: &mut ChaCha8Rng) -> Option<(usize, usize)> {
    if n < 2 {
        return None;
    }
    let a = rng.random_range(0..n);
    let b = (a + rng.random_range(1..n)) % n;
    Some((a, b))
}

fn random_node(run: &Driver<'_>, rng: &mut ChaCha8Rng, up: bool) -> Option<usize> {
    let candidates: Vec<usize> = (0..run.cluster.len())
        .filter(|&n| run.up(n) == up)
        .collect();
    (!candidates.is_empty()).then(|| candidates[rng.random_range(0..candidates.len())])
}

fn sorted(nodes: &[usize]) -> Vec<usize> {
    let mut v = nodes.to_vec();
    v.sort_unstable();
    v
}

fn pick<'c>(rng: &mut ChaCha8Rng, kinds: &'c [ChaosFault]) -> &'c ChaosKind {
    &weighted(rng, kinds, |k| k.weight).kind
}
