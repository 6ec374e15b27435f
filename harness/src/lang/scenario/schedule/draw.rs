//! Drawing a schedule from a chaos section and a seed, before the window opens.
//!
//! A fault of a kind drawn by weight every drawn `spacing`, lasting a drawn
//! `duration`, at most `concurrent_max` in effect at once and one cut at a time
//! (the planner counts what it planned; the cluster is never asked). Targets are
//! named nodes or `leader` (resolved when the fault takes effect); a transfer
//! goes to a `follower`. Lengths are drawn log-uniform where their range spans
//! an order of magnitude or more, so a range of 100 ms to 10 s gives as many
//! sub-second faults as faults of several seconds.
//!
//! The workload's ops are drawn the same way, from their own stream: one op per
//! `every`, whatever the cluster does, so a fault moved or removed never moves
//! an op. Whether an op is sent (a client free, a leader to send it to) is the
//! run's business.

use super::{Fault, Planned, PlannedOp, Schedule};
use crate::base::streams::Stream;
use crate::lang::scenario::{
    expand_template, ArmStep, Chaos, ChaosKind, ChaosPoint, Partition, PointAction, Target,
    Workload, WorkloadOp,
};
use faultline_api::{Model, NodeSpec};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// A duration in `min..=max`, uniform to the millisecond.
pub fn uniform(rng: &mut ChaCha8Rng, (min, max): (Duration, Duration)) -> Duration {
    let (lo, hi) = (min.as_millis() as u64, max.as_millis() as u64);
    Duration::from_millis(rng.random_range(lo..=hi.max(lo)))
}

/// Whether a range spans an order of magnitude (then lengths in it are drawn
/// log-uniform).
pub fn wide(lo: u64, hi: u64) -> bool {
    lo > 0 && hi >= lo.saturating_mul(10)
}

/// A number in `lo..=hi`: log-uniform when the range is [`wide`], else uniform.
pub fn spread(rng: &mut ChaCha8Rng, lo: u64, hi: u64) -> u64 {
    let hi = hi.max(lo);
    if !wide(lo, hi) {
        return rng.random_range(lo..=hi);
    }
    let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
    let x = rng.random_range(a..b).exp().floor() as u64;
    x.clamp(lo, hi)
}

/// A length in `min..=max` ms ([`spread`]).
pub fn length(rng: &mut ChaCha8Rng, (min, max): (Duration, Duration)) -> Duration {
    Duration::from_millis(spread(rng, min.as_millis() as u64, max.as_millis() as u64))
}

/// The schedule this seed draws for a (swarm-configured) chaos section.
pub fn faults(chaos: &Chaos, nodes: &[NodeSpec], has_leader: bool, seed: u64) -> Schedule {
    let mut rng = Stream::Chaos.rng(seed);
    let mut planned: Vec<Planned> = Vec::new();
    let mut t = uniform(&mut rng, chaos.spacing);
    let total: u32 = chaos.faults.iter().map(|f| f.weight).sum();
    while t < chaos.window && planned.len() < super::FAULTS_MAX {
        let active = |p: &&Planned| p.at <= t && p.until().is_some_and(|u| u > t);
        let in_effect = planned.iter().filter(active).count();
        if in_effect < chaos.concurrent_max && total > 0 {
            let kind = &weighted(&mut rng, &chaos.faults, |f| f.weight).kind;
            let lasts = length(&mut rng, chaos.duration);
            let pick: u32 = rng.random();
            let cut = planned.iter().filter(active).any(|p| p.fault.cuts());
            let drawn = Drawer {
                nodes,
                has_leader,
                cut,
            }
            .fault(&mut rng, kind);
            if let Some(fault) = drawn {
                let lasts = fault.lasting().then_some(lasts);
                planned.push(Planned {
                    at: t,
                    lasts,
                    pick,
                    fault,
                });
            }
        }
        t += uniform(&mut rng, chaos.spacing);
    }
    Schedule {
        window: chaos.window,
        faults: planned,
        ops: None,
    }
}

/// What a planner knows of the cluster: its nodes and roles, never their state.
struct Drawer<'n> {
    nodes: &'n [NodeSpec],
    has_leader: bool,
    /// A cut is planned in effect at this time.
    cut: bool,
}

impl Drawer<'_> {
    fn n(&self) -> usize {
        self.nodes.len()
    }

    /// A named node, or (for a model with leaders) `leader` as often as any one node.
    fn node_or_leader(&self, rng: &mut ChaCha8Rng) -> Target {
        let choices = self.n() + usize::from(self.has_leader);
        match rng.random_range(0..choices) {
            i if i < self.n() => Target::Node(i),
            _ => Target::Leader,
        }
    }

    fn pair(&self, rng: &mut ChaCha8Rng) -> Option<(Target, Target)> {
        let n = self.n();
        if n < 2 {
            return None;
        }
        let a = rng.random_range(0..n);
        let b = (a + rng.random_range(1..n)) % n;
        Some((Target::Node(a), Target::Node(b)))
    }

    fn fault(&self, rng: &mut ChaCha8Rng, kind: &ChaosKind) -> Option<Fault> {
        let n = self.n();
        match kind {
            ChaosKind::Partition | ChaosKind::OneWay if n < 2 || self.cut => None,
            ChaosKind::Partition => {
                // A quarter of the partitions cut off whichever node leads then.
                if self.has_leader && rng.random_range(0..4) == 0 {
                    return Some(Fault::Partition(Partition::Isolate(Target::Leader)));
                }
                let mut order: Vec<usize> = (0..n).collect();
                order.shuffle(rng);
                let split = rng.random_range(1..n);
                let (a, b) = order.split_at(split);
                let group = |g: &[usize]| {
                    let mut g = g.to_vec();
                    g.sort_unstable();
                    g.into_iter().map(Target::Node).collect::<Vec<_>>()
                };
                Some(Fault::Partition(Partition::Groups(vec![
                    group(a),
                    group(b),
                ])))
            }
            ChaosKind::OneWay => {
                let from = rng.random_range(0..n);
                let mut others: Vec<usize> = (0..n).filter(|&o| o != from).collect();
                others.shuffle(rng);
                let count = rng.random_range(1..=others.len());
                let mut to = others[..count].to_vec();
                to.sort_unstable();
                Some(Fault::Partition(Partition::OneWay {
                    from: Target::Node(from),
                    to: to.into_iter().map(Target::Node).collect(),
                }))
            }
            ChaosKind::Hold => self.pair(rng).map(|(a, b)| Fault::Hold { a, b }),
            ChaosKind::Latency { min, max } => {
                let (a, b) = self.pair(rng)?;
                let delay = length(rng, (*min, *max));
                Some(Fault::Latency { a, b, delay })
            }
            ChaosKind::Crash => Some(Fault::Crash(self.node_or_leader(rng))),
            ChaosKind::Restart => Some(Fault::Restart(self.node_or_leader(rng))),
            ChaosKind::Stop => Some(Fault::Stop(self.node_or_leader(rng))),
            ChaosKind::TransferLeader if !self.has_leader || n < 2 => None,
            ChaosKind::TransferLeader => Some(Fault::TransferLeader {
                to: Target::Follower,
            }),
            ChaosKind::FailPoint(points) if points.is_empty() => None,
            ChaosKind::FailPoint(points) => {
                let chosen = weighted(rng, points, |p| p.weight);
                let node = self.point_node(rng, chosen)?;
                let action = match &chosen.action {
                    PointAction::Fixed(action) => action.clone(),
                    PointAction::Stall { min, max } => {
                        crate::base::action::FaultAction::Stall(length(rng, (*min, *max)))
                    }
                };
                Some(Fault::FailPoint {
                    node,
                    arm: ArmStep {
                        point: chosen.point,
                        action,
                        count: chosen.count,
                        probability: None,
                        // A random arming that never fires is not a scripted
                        // fault that failed.
                        optional: true,
                    },
                })
            }
        }
    }

    /// The node a fail point is armed on: one of the point's own `nodes` (a role
    /// stands for its nodes), else any node or the leader.
    fn point_node(&self, rng: &mut ChaCha8Rng, point: &ChaosPoint) -> Option<Target> {
        if point.nodes.is_empty() {
            return Some(self.node_or_leader(rng));
        }
        let mut choices: Vec<Target> = Vec::new();
        for target in &point.nodes {
            match target {
                Target::Role(role) => choices.extend(
                    (0..self.n())
                        .filter(|&i| self.nodes[i].role == *role)
                        .map(Target::Node),
                ),
                Target::Any => choices.extend((0..self.n()).map(Target::Node)),
                other @ (Target::Leader | Target::Follower | Target::Node(_)) => {
                    choices.push(*other)
                }
            }
        }
        choices.dedup();
        if choices.is_empty() {
            return None;
        }
        Some(choices[rng.random_range(0..choices.len())])
    }
}

/// One of `items` by weight. With every weight 1 this is the same draw as a
/// uniform index.
pub fn weighted<'t, T>(rng: &mut ChaCha8Rng, items: &'t [T], weight: impl Fn(&T) -> u32) -> &'t T {
    let total: u32 = items.iter().map(&weight).sum();
    let mut draw = rng.random_range(0..total.max(1));
    for item in items {
        let w = weight(item);
        if draw < w {
            return item;
        }
        draw -= w;
    }
    items.last().expect("weighted: at least one item")
}

/// An op the workload drew but the model refused (checked at load with the
/// extreme draws; a value between them may still be refused).
pub struct Refused {
    pub at: Duration,
    pub message: String,
}

/// The workload's ops over a window: one per `every` from its start, drawn from
/// `rng`, `{seq}` counting up from `seq`.
pub fn ops(
    workload: &Workload,
    window: Duration,
    model: &dyn Model,
    rng: &mut ChaCha8Rng,
    seq: u64,
) -> (Vec<PlannedOp>, Vec<Refused>) {
    let mut ops = Vec::new();
    let mut refused = Vec::new();
    if workload.ops.iter().all(|op| op.weight == 0) || workload.every.is_zero() {
        return (ops, refused);
    }
    let mut at = Duration::ZERO;
    let mut k = 0u64;
    while at < window && ops.len() < super::OPS_MAX {
        let chosen: &WorkloadOp = weighted(rng, &workload.ops, |op| op.weight);
        let on = chosen
            .target
            .or(workload.target)
            .expect("validated: an op without `on` goes to the workload's");
        let pick: u32 = rng.random();
        let expanded = expand_template(
            &chosen.template,
            &mut |lo, hi| rng.random_range(lo..=hi),
            seq + k,
        )
        .and_then(|json| model.parse_op(&json));
        match expanded {
            Ok(op) => ops.push(PlannedOp { at, on, pick, op }),
            Err(message) => refused.push(Refused { at, message }),
        }
        k += 1;
        at += workload.every;
    }
    (ops, refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::scenario::load_str;

    const TEXT: &str = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
chaos:
  window: 20s
  concurrent_max: 3
  spacing: {min: 100ms, max: 1s}
  duration: {min: 100ms, max: 10s}
  faults:
    partition: 2
    oneway: 1
    hold: 1
    latency: {weight: 1, delay: {min: 5ms, max: 500ms}}
    crash: 2
    restart: 1
    stop: 1
    transfer_leader: 1
    failpoint:
      weight: 2
      points:
        - {point: propose, action: {error: io}}
        - {point: apply, action: {stall: {min: 10ms, max: 5s}}}
  workload:
    clients: 3
    every: 50ms
    ops:
      - {op: put, key: "k{1..5}", value: "v{seq}"}
      - {op: get, key: "k{1..5}"}
"#;

    fn schedule(seed: u64) -> (Schedule, crate::lang::scenario::Scenario) {
        let scenario = load_str("draw.yaml", TEXT).expect("valid");
        let chaos = scenario.chaos.clone().expect("chaos");
        let s = faults(&chaos, &scenario.nodes, true, seed);
        (s, scenario)
    }

    #[test]
    fn a_schedule_is_a_function_of_the_seed_and_respects_its_bounds() {
        let (a, _) = schedule(7);
        let (b, _) = schedule(7);
        assert_eq!(a, b);
        assert_ne!(a, schedule(8).0);
        let mut kinds = std::collections::BTreeSet::new();
        for seed in 1..=50 {
            let (s, _) = schedule(seed);
            assert!(!s.faults.is_empty());
            for (i, f) in s.faults.iter().enumerate() {
                kinds.insert(f.fault.kind());
                assert!(f.at < Duration::from_secs(20));
                let active = s.faults[..=i]
                    .iter()
                    .filter(|p| p.until().is_some_and(|u| u > f.at))
                    .count();
                assert!(active <= 3, "seed {seed}: {active} faults at once");
                if f.fault.cuts() {
                    let cuts = s.faults[..i]
                        .iter()
                        .filter(|p| p.fault.cuts() && p.until().is_some_and(|u| u > f.at))
                        .count();
                    assert_eq!(cuts, 0, "seed {seed}: two cuts at once");
                }
                assert_eq!(f.lasts.is_some(), f.fault.lasting());
                if let Some(l) = f.lasts {
                    assert!(l >= Duration::from_millis(100) && l <= Duration::from_secs(10));
                }
            }
        }
        assert_eq!(kinds.len(), 9, "every kind is drawn: {kinds:?}");
    }

    #[test]
    fn lengths_over_a_wide_range_are_log_uniform() {
        let mut rng = Stream::Chaos.rng(1);
        let range = (Duration::from_millis(100), Duration::from_secs(10));
        let draws: Vec<Duration> = (0..4000).map(|_| length(&mut rng, range)).collect();
        let below_1s = draws
            .iter()
            .filter(|d| **d < Duration::from_secs(1))
            .count();
        // Log-uniform over 100 ms..10 s: half below 1 s (uniform would give 9 %).
        assert!(
            (1700..2300).contains(&below_1s),
            "{below_1s} of 4000 below 1s"
        );
        assert!(draws.iter().all(|d| *d >= range.0 && *d <= range.1));
        let mut rng = Stream::Chaos.rng(1);
        let narrow = (Duration::from_millis(100), Duration::from_millis(500));
        let low = (0..4000)
            .filter(|_| length(&mut rng, narrow) < Duration::from_millis(300))
            .count();
        assert!(
            (1800..2200).contains(&low),
            "uniform over a narrow range: {low}"
        );
    }

    #[test]
    fn ops_are_drawn_one_per_tick_whatever_the_faults() {
        let (_, scenario) = schedule(3);
        let workload = scenario
            .chaos
            .as_ref()
            .and_then(|c| c.workload.clone())
            .unwrap();
        let mut rng = Stream::ChaosWorkload.rng(3);
        let (ops, refused) = ops(
            &workload,
            Duration::from_secs(1),
            scenario.model,
            &mut rng,
            10,
        );
        assert!(refused.is_empty());
        assert_eq!(ops.len(), 20);
        assert_eq!(ops[3].at, Duration::from_millis(150));
        assert!(ops.iter().all(|o| o.on == Target::Leader));
        let mut again = Stream::ChaosWorkload.rng(3);
        assert_eq!(
            super::ops(
                &workload,
                Duration::from_secs(1),
                scenario.model,
                &mut again,
                10
            )
            .0,
            ops
        );
    }
}
