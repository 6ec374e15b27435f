//! The chaos window: a schedule of faults played over a window, with a
//! workload of planned ops running through it (`workload.rs`).
//!
//! The schedule is drawn from the seed before the window opens
//! (`crate::lang::scenario::schedule::draw`), or given (`chaos: {schedule: ...}`, an edited or
//! shrunk run). Every step of the window the player ends the faults whose time
//! is up, then begins those whose time has come, then steps. A fault's target is
//! resolved when it takes effect (`leader`: whoever leads then; `follower`,
//! `any`: the candidate its `pick` names); a fault that finds nothing to act on
//! is recorded as skipped and undoes nothing. Nothing here waits: a transfer is
//! asked and the window goes on, a stop is requested and the node killed if it
//! has not stopped within the stop timeout, so no fault ever moves another.
//!
//! Every fault is an action performed through the nemesis, on the trail with
//! the index of the schedule entry it begins or ends; the window ends by undoing
//! every fault still in effect, and the heal phase and the checkers follow as
//! for any run.

use super::pick::{Partitioned, Want};
use super::{Driver, Halt};
use crate::base::action::{Action, ActionResult};
use crate::base::effect;
use crate::base::streams::Stream;
use crate::base::trail::{ChaosMark, Data};
use crate::lang::scenario::schedule::{draw, Fault, Planned, Schedule};
use crate::lang::scenario::{Chaos, Partition, Target};
use std::time::Duration;

/// How long a clean `stop` may take before the node is killed (as a step's).
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A fault in effect, and the action that ends it.
struct Live {
    fault: u32,
    until: Duration,
    undo: Action,
    /// A partition (one at a time, so that its undo, `heal`, undoes just it).
    cut: bool,
    /// The link a hold or a latency holds (one fault per link at a time).
    link: Option<(usize, usize)>,
}

/// A clean stop under way: the node is killed if it has not stopped by then.
struct Stopping {
    fault: u32,
    node: usize,
    deadline: Duration,
}

/// A node whose process ended itself, to be started again by the supervisor.
struct Revive {
    node: usize,
    exited: Duration,
    due: Duration,
}

/// Plays one schedule over the window that opened at `start`.
struct Player {
    start: Duration,
    faults: Vec<Planned>,
    next: usize,
    live: Vec<Live>,
    stopping: Vec<Stopping>,
    /// The supervisor's delay range (`restart_exited`), its draws, and the
    /// starts it owes.
    supervisor: Option<((Duration, Duration), rand_chacha::ChaCha8Rng)>,
    revive: Vec<Revive>,
}

impl Driver<'_> {
    pub(crate) fn chaos(&mut self, chaos: &Chaos) -> Result<(), Halt> {
        let schedule = self
            .schedule
            .take()
            .expect("a chaos run is planned with its schedule");
        self.chaos_window(chaos, schedule)
    }

    fn chaos_window(&mut self, chaos: &Chaos, schedule: Schedule) -> Result<(), Halt> {
        self.cluster.state_mut().line = Some(chaos.loc.line);
        self.at = chaos.loc;
        self.activity = format!(
            "in the chaos window ({}:{})",
            self.scenario.file, chaos.loc.line
        );
        let began = ChaosMark::Began {
            window_ms: schedule.window.as_millis() as u64,
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
        let start = self.cluster.elapsed();
        let end = start + schedule.window;
        let mut played = schedule.clone();
        if let Some(workload) = &chaos.workload {
            let ops = match schedule.ops.clone() {
                Some(ops) => ops,
                None => {
                    let mut rng = Stream::ChaosWorkload.rng(self.seed);
                    let seq = self.seq;
                    let (ops, refused) = draw::ops(
                        workload,
                        schedule.window,
                        self.scenario.model,
                        &mut rng,
                        seq,
                    );
                    // One `{seq}` per tick, as a workload that drew as it went.
                    self.seq += (ops.len() + refused.len()) as u64;
                    for r in refused {
                        let invalid = Data::InvalidOp {
                            workload: true,
                            message: format!("at {} ms: {}", r.at.as_millis(), r.message),
                        };
                        self.event(None, invalid);
                    }
                    ops
                }
            };
            // Drawn ops are the seed's: recorded only when asked (to shrink them).
            if schedule.ops.is_some() || self.record_ops {
                played.ops = Some(ops.clone());
            }
            let source = super::workload::Source::Chaos;
            self.start_planned_workload(source, workload, ops, start);
        }
        self.played = Some(played);
        // Exits before the window are the script's business, not the supervisor's.
        self.cluster.take_exited();
        let mut player = Player {
            start,
            faults: schedule.faults,
            next: 0,
            live: Vec::new(),
            stopping: Vec::new(),
            supervisor: chaos
                .restart_exited
                .map(|range| (range, Stream::Supervisor.rng(self.seed))),
            revive: Vec::new(),
        };
        while self.cluster.elapsed() < end {
            player.step(self)?;
            self.advance()?;
        }
        player.close(self)?;
        if chaos.workload.is_some() {
            self.stop_workload(super::workload::Source::Chaos);
        }
        self.event(None, Data::Chaos(ChaosMark::Ended));
        Ok(())
    }

    /// The node a scheduled fault's reference names now: `pick` (salted per
    /// reference of one fault) chooses among the candidates, distinct from
    /// `taken`.
    pub(super) fn scheduled_node(
        &self,
        target: Target,
        pick: u32,
        salt: u32,
        want: Want,
        taken: &[usize],
    ) -> Result<usize, String> {
        let up = |n: usize| match want {
            Want::Up => self.up(n),
            Want::Down => !self.up(n),
            Want::Either => true,
        };
        match target {
            Target::Node(n) if taken.contains(&n) => {
                Err(format!("{} is named twice", self.cluster.name(n)))
            }
            Target::Node(n) => Ok(n),
            Target::Leader => match self.leader() {
                Some(l) if taken.contains(&l) => Err("the leader is named twice".into()),
                Some(l) => Ok(l),
                None => Err("no leader".into()),
            },
            Target::Follower | Target::Any | Target::Role(_) => {
                let leader = (target == Target::Follower)
                    .then(|| self.leader())
                    .flatten();
                if target == Target::Follower && leader.is_none() {
                    return Err("no leader, so no follower".into());
                }
                let candidates: Vec<usize> = (0..self.cluster.len())
                    .filter(|&n| Some(n) != leader && !taken.contains(&n))
                    .filter(|&n| self.has_role(n, target) && up(n))
                    .collect();
                if candidates.is_empty() {
                    let names = self.scenario.nodes.iter().map(|n| n.name.clone());
                    let names: Vec<String> = names.collect();
                    return Err(format!("no {} to act on", target.describe(&names)));
                }
                let mixed = pick.wrapping_add(salt.wrapping_mul(0x9e37_79b9));
                Ok(candidates[mixed as usize % candidates.len()])
            }
        }
    }

    fn scheduled_partition(&self, partition: &Partition, pick: u32) -> Result<Partitioned, String> {
        let mut salt = 0;
        let mut next = |target: Target, taken: &[usize]| {
            salt += 1;
            self.scheduled_node(target, pick, salt, Want::Either, taken)
        };
        Ok(match partition {
            Partition::Groups(groups) => {
                let mut taken = Vec::new();
                let mut ids = Vec::new();
                for group in groups {
                    let mut g = Vec::new();
                    for &target in group {
                        let id = next(target, &taken)?;
                        g.push(id);
                        taken.push(id);
                    }
                    ids.push(g);
                }
                Partitioned::Groups(ids)
            }
            Partition::Isolate(target) => {
                let id = next(*target, &[])?;
                let others = (0..self.cluster.len()).filter(|&o| o != id).collect();
                Partitioned::Groups(vec![vec![id], others])
            }
            Partition::OneWay { from, to } => {
                let from = next(*from, &[])?;
                let mut ids = vec![from];
                for &target in to {
                    let id = next(target, &ids)?;
                    ids.push(id);
                }
                ids.remove(0);
                Partitioned::OneWay { from, to: ids }
            }
        })
    }

    /// Perform one action of schedule entry `fault`; what it did.
    fn scheduled(&mut self, fault: u32, action: Action) -> ActionResult {
        self.nemesis
            .apply_for(&mut self.cluster, action, self.at, Some(fault))
    }

    fn skipped(&mut self, fault: u32, why: String) {
        self.event(None, Data::Chaos(ChaosMark::Skipped { fault, why }));
    }
}

impl Player {
    fn step(&mut self, run: &mut Driver<'_>) -> Result<(), Halt> {
        let now = run.cluster.elapsed();
        self.supervise(run, now);
        self.settle_stops(run, now, None);
        let (over, still): (Vec<Live>, Vec<Live>) = std::mem::take(&mut self.live)
            .into_iter()
            .partition(|l| l.until <= now);
        self.live = still;
        let mut over = over;
        over.sort_by_key(|l| (l.until, l.fault));
        for live in over {
            self.end(run, live);
        }
        while let Some(planned) = self.faults.get(self.next) {
            if self.start + planned.at > now {
                break;
            }
            let planned = planned.clone();
            let index = self.next as u32;
            self.next += 1;
            self.begin(run, index, &planned, now);
        }
        Ok(())
    }

    /// The supervisor: note the nodes that ended themselves (each draws its
    /// delay, in the order they went down), and start those whose delay is
    /// over and that are still down, unless a scheduled crash or stop holds
    /// them down (its own undo starts them).
    fn supervise(&mut self, run: &mut Driver<'_>, now: Duration) {
        let exited = run.cluster.take_exited();
        let Some((range, rng)) = &mut self.supervisor else {
            return;
        };
        for node in exited {
            let delay = draw::length(rng, *range);
            self.revive.push(Revive {
                node,
                exited: now,
                due: now + delay,
            });
        }
        let (due, later): (Vec<Revive>, Vec<Revive>) = std::mem::take(&mut self.revive)
            .into_iter()
            .partition(|r| r.due <= now);
        self.revive = later;
        let names: Vec<String> = run.cluster.names().to_vec();
        for r in due {
            let name = &names[r.node];
            let held = self
                .live
                .iter()
                .any(|l| matches!(&l.undo, Action::Start { node } if node == name))
                || self.stopping.iter().any(|s| s.node == r.node);
            if held || run.up(r.node) {
                continue;
            }
            let mark = ChaosMark::Supervisor {
                node: name.clone(),
                after_ms: (now - r.exited).as_millis() as u64,
            };
            run.event(Some(r.node), Data::Chaos(mark));
            run.nemesis.apply(
                &mut run.cluster,
                Action::Start { node: name.clone() },
                run.at,
            );
        }
    }

    /// Finish the stops whose node stopped, went down, or ran out of time (or,
    /// with `fault`, that fault's stop now).
    fn settle_stops(&mut self, run: &mut Driver<'_>, now: Duration, fault: Option<u32>) {
        let stopping = std::mem::take(&mut self.stopping);
        for s in stopping {
            let clean = run.cluster.stopped(s.node);
            let due = fault == Some(s.fault) || now >= s.deadline;
            if !(clean || !run.up(s.node) || due) {
                self.stopping.push(s);
                continue;
            }
            if run.up(s.node) {
                run.cluster.kill(s.node);
            }
            let stopped = Data::Stopped {
                clean,
                timeout_ms: STOP_TIMEOUT.as_millis() as u64,
            };
            run.event(Some(s.node), stopped);
        }
    }

    fn end(&mut self, run: &mut Driver<'_>, live: Live) {
        let now = run.cluster.elapsed();
        // A stop still under way ends before its node starts again.
        self.settle_stops(run, now, Some(live.fault));
        run.scheduled(live.fault, live.undo);
    }

    fn begin(&mut self, run: &mut Driver<'_>, index: u32, planned: &Planned, now: Duration) {
        let names: Vec<String> = run.cluster.names().to_vec();
        let name = |n: usize| names[n].clone();
        let pick = planned.pick;
        let start = self.start;
        let resolved = match &planned.fault {
            Fault::Partition(_) if self.live.iter().any(|l| l.cut) => {
                Err("a partition is in effect".to_string())
            }
            Fault::Partition(p) => run
                .scheduled_partition(p, pick)
                .map(|cut| (cut.action(&names), None)),
            Fault::Hold { a, b } | Fault::Latency { a, b, .. } => {
                self.link_fault(run, (*a, *b), planned)
            }
            Fault::Crash(t) => run
                .scheduled_node(*t, pick, 0, Want::Up, &[])
                .map(|n| (Action::Crash { node: name(n) }, None)),
            Fault::Stop(t) => run
                .scheduled_node(*t, pick, 0, Want::Up, &[])
                .map(|n| (Action::Stop { node: name(n) }, None)),
            Fault::Restart(t) => run
                .scheduled_node(*t, pick, 0, Want::Either, &[])
                .map(|n| (Action::Restart { node: name(n) }, None)),
            Fault::TransferLeader { to } => match run.leader() {
                None => Err("no leader".into()),
                Some(leader) => run
                    .scheduled_node(*to, pick, 0, Want::Up, &[leader])
                    .map(|to| {
                        let transfer = Action::TransferLeader {
                            from: name(leader),
                            to: name(to),
                        };
                        (transfer, None)
                    }),
            },
            Fault::FailPoint { node, arm } => run
                .scheduled_node(*node, pick, 0, Want::Either, &[])
                .map(|n| {
                    let point = arm.point.name.to_string();
                    let armed = Action::ArmFailPoint {
                        node: name(n),
                        point,
                        fault: arm.action.clone(),
                        count: arm.count,
                        probability: arm.probability,
                        optional: true,
                    };
                    (armed, None)
                }),
        };
        let (action, link) = match resolved {
            Ok(found) => found,
            Err(why) => {
                run.skipped(index, why);
                return;
            }
        };
        // What ends the fault is what the action means (base/effect.rs).
        let live =
            effect::undo_of(&action).map(|undo| live_of(start, index, planned, now, undo, link));
        self.take(run, index, action, live, now);
    }

    /// Do the fault's action; keep what undoes it while it is in effect, and
    /// watch a stop until the node's process ends.
    fn take(
        &mut self,
        run: &mut Driver<'_>,
        index: u32,
        action: Action,
        live: Option<Live>,
        now: Duration,
    ) {
        let stop = if let Action::Stop { node } = &action {
            Some(run.cluster.id(node))
        } else {
            None
        };
        let result = run.scheduled(index, action);
        if let Some(node) = stop {
            if matches!(result, ActionResult::Done | ActionResult::NotAccepting) {
                self.stopping.push(Stopping {
                    fault: index,
                    node,
                    deadline: now + STOP_TIMEOUT,
                });
            }
            if result == ActionResult::NotAccepting {
                // Up, but not taking commands yet: killed at once.
                self.settle_stops(run, now, Some(index));
            } else if result != ActionResult::Done {
                return;
            }
        } else if !result.took_effect() {
            // A crash of a node that is down: nothing to undo.
            return;
        }
        if let Some(live) = live {
            self.live.push(live);
        }
    }

    /// A hold or a latency change on one link, between the two nodes its targets
    /// pick; refused when that link is already faulted.
    fn link_fault(
        &self,
        run: &mut Driver<'_>,
        (a, b): (Target, Target),
        planned: &Planned,
    ) -> Result<(Action, Option<(usize, usize)>), String> {
        let names: Vec<String> = run.cluster.names().to_vec();
        let name = |n: usize| names[n].clone();
        let pick = planned.pick;
        let ends = run
            .scheduled_node(a, pick, 1, Want::Either, &[])
            .and_then(|x| {
                run.scheduled_node(b, pick, 2, Want::Either, &[x])
                    .map(|y| (x.min(y), x.max(y)))
            });
        ends.and_then(|(x, y)| {
            let busy = self.live.iter().any(|l| l.link == Some((x, y)));
            if busy || (matches!(planned.fault, Fault::Hold { .. }) && run.nemesis.held(x, y)) {
                return Err(format!(
                    "the link {} - {} is already faulted",
                    name(x),
                    name(y)
                ));
            }
            let between = [name(x), name(y)];
            let begin = match &planned.fault {
                Fault::Latency { delay, .. } => Action::Latency {
                    between,
                    delay_ms: Some(delay.as_millis() as u64),
                },
                Fault::Partition(_)
                | Fault::Hold { .. }
                | Fault::Crash(_)
                | Fault::Restart(_)
                | Fault::Stop(_)
                | Fault::TransferLeader { .. }
                | Fault::FailPoint { .. } => Action::Hold { between },
            };
            Ok((begin, Some((x, y))))
        })
    }

    fn close(&mut self, run: &mut Driver<'_>) -> Result<(), Halt> {
        let mut live = std::mem::take(&mut self.live);
        live.sort_by_key(|l| (l.until, l.fault));
        for l in live {
            self.end(run, l);
        }
        // A stop whose fault is over by now (its node went down on its own).
        let now = run.cluster.elapsed();
        while let Some(fault) = self.stopping.first().map(|s| s.fault) {
            self.settle_stops(run, now, Some(fault));
        }
        Ok(())
    }
}

/// A lasting fault that began now, ending at its scheduled time with `undo`.
fn live_of(
    start: Duration,
    fault: u32,
    planned: &Planned,
    now: Duration,
    undo: Action,
    link: Option<(usize, usize)>,
) -> Live {
    let until = now.max(start + planned.until().unwrap_or(planned.at));
    Live {
        fault,
        until,
        // A partition's undo, heal, repairs every cut: one partition at a time.
        cut: undo == Action::Heal,
        undo,
        link,
    }
}
