//! What an [`Action`] means, in one place: what it affects (a link, a node, a
//! fail point, the partition's cuts), what undoes it, and, over a trail, when
//! every fault was in effect ([`intervals`]).
//!
//! The runner decides what an action does; this module says what that means
//! for whoever reads a trail afterwards: the cause (`check::cause`: the faults
//! in effect at the causing event), the space-time diagram
//! (`report::html::derive`: bands and down spans) and guided search (which
//! actions are faults). They all read the same spans, so they cannot disagree
//! on when a fault began or ended. The rules follow the runner:
//!
//! - a link is an unordered pair: `hold n1 n3` is released by `release n3 n1`;
//! - a second hold of a held link changes nothing (the first one is in effect);
//!   a new latency on a link replaces the previous one; `latency: default` ends it;
//! - every partition is its own span; a heal repairs every cut at once;
//! - a node is down from a crash, its process exiting, or the end of a clean
//!   stop (`Stopped`: a stop request only asks, the node runs until it has
//!   stopped or is killed), until a start or a restart;
//! - a fail point is armed from its arming (a new arming replaces the last)
//!   until cleared, or until its `count` of firings is used up;
//! - a stall `until release` lasts until a release or a clear of its point, or
//!   its node goes down or restarts (its tasks die with it); a timed stall
//!   lasts its own length (a clear does not wake a sleeping task);
//! - the heal phase ends every fault but down nodes (it starts those itself,
//!   one `HealStep::Start` each).
//!
//! A trail is read in order: an undo with nothing in effect to end (a release
//! before any hold, a start of a node that is up) ends nothing, and a fault
//! that nothing ends lasts until the end of the run. Only actions that took
//! effect count.

use crate::base::action::{Acted, Action, FaultAction};
use crate::base::trail::{Data, Event, HealStep};
use std::collections::BTreeMap;

/// A link between two nodes, whichever way it is named: `Link::new("n3", "n1")`
/// is `Link::new("n1", "n3")`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Link {
    a: String,
    b: String,
}

impl Link {
    pub fn new(x: &str, y: &str) -> Link {
        let (a, b) = if x <= y { (x, y) } else { (y, x) };
        Link {
            a: a.to_string(),
            b: b.to_string(),
        }
    }

    /// The link an action's `between` names.
    pub fn of(between: &[String; 2]) -> Link {
        Link::new(&between[0], &between[1])
    }

    /// Its two ends, the lesser name first.
    pub fn ends(&self) -> (&str, &str) {
        (&self.a, &self.b)
    }
}

/// What an action is about, by what undoes it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// The links a partition cut: a heal repairs every cut at once.
    Cuts,
    /// One link, both ways (a hold, a latency).
    Link(Link),
    /// A node's process.
    Node(String),
    /// A fail point on one node.
    FailPoint { node: String, point: String },
}

/// What kind of fault a span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// Links cut by a partition (one span per partition action).
    Cut,
    Hold,
    Latency,
    Down,
    /// A fail point armed, with firings left.
    Armed,
    /// Tasks stalled on a fail point that fired.
    Stall,
}

/// What `action` affects; `None` for a client op and a leadership transfer,
/// which begin no fault and end none.
pub fn affects(action: &Action) -> Option<Target> {
    match action {
        Action::Client { .. } | Action::TransferLeader { .. } => None,
        Action::Partition { .. } | Action::PartitionOneWay { .. } | Action::Heal => {
            Some(Target::Cuts)
        }
        Action::Hold { between }
        | Action::Release { between }
        | Action::Latency { between, .. } => Some(Target::Link(Link::of(between))),
        Action::Crash { node }
        | Action::Restart { node }
        | Action::Stop { node }
        | Action::Start { node } => Some(Target::Node(node.clone())),
        Action::ArmFailPoint { node, point, .. }
        | Action::ClearFailPoint { node, point }
        | Action::ReleaseFailPoint { node, point } => Some(Target::FailPoint {
            node: node.clone(),
            point: point.clone(),
        }),
    }
}

/// Whether `action` is a fault (anything but a client op): what guided search
/// counts as a kind of fault reached.
pub fn is_fault(action: &Action) -> bool {
    !matches!(action, Action::Client { .. })
}

/// Whether `undo` ends the fault `fault` began (on the same target). A stop
/// is ended by a start or restart although the node is down only once it
/// has stopped; a stall, begun by a fail point firing, is ended by the
/// point's release or clear ([`intervals`]).
pub fn undoes(undo: &Action, fault: &Action) -> bool {
    let same = affects(undo) == affects(fault);
    let ends = match fault {
        Action::Partition { .. } | Action::PartitionOneWay { .. } => {
            matches!(undo, Action::Heal)
        }
        Action::Hold { .. } => matches!(undo, Action::Release { .. }),
        Action::Latency {
            delay_ms: Some(_), ..
        } => matches!(undo, Action::Latency { .. }),
        Action::Crash { .. } | Action::Stop { .. } => {
            matches!(undo, Action::Start { .. } | Action::Restart { .. })
        }
        Action::ArmFailPoint { .. } => {
            matches!(
                undo,
                Action::ClearFailPoint { .. } | Action::ArmFailPoint { .. }
            )
        }
        // Instant actions, and undos themselves: nothing lasts for them to end.
        Action::Client { .. }
        | Action::TransferLeader { .. }
        | Action::Heal
        | Action::Release { .. }
        | Action::Latency { delay_ms: None, .. }
        | Action::Restart { .. }
        | Action::Start { .. }
        | Action::ClearFailPoint { .. }
        | Action::ReleaseFailPoint { .. } => false,
    };
    same && ends
}

/// The action that ends the fault `action` begins; `None` for an action that
/// lasts no time (a restart, a transfer, a client op) or is an undo itself.
pub fn undo_of(action: &Action) -> Option<Action> {
    match action {
        Action::Partition { .. } | Action::PartitionOneWay { .. } => Some(Action::Heal),
        Action::Hold { between } => Some(Action::Release {
            between: between.clone(),
        }),
        Action::Latency {
            between,
            delay_ms: Some(_),
        } => Some(Action::Latency {
            between: between.clone(),
            delay_ms: None,
        }),
        Action::Crash { node } | Action::Stop { node } => {
            Some(Action::Start { node: node.clone() })
        }
        Action::ArmFailPoint { node, point, .. } => Some(Action::ClearFailPoint {
            node: node.clone(),
            point: point.clone(),
        }),
        Action::Client { .. }
        | Action::TransferLeader { .. }
        | Action::Heal
        | Action::Release { .. }
        | Action::Latency { delay_ms: None, .. }
        | Action::Restart { .. }
        | Action::Start { .. }
        | Action::ClearFailPoint { .. }
        | Action::ReleaseFailPoint { .. } => None,
    }
}

/// The node whose process this event ended, if any: a crash or a restart
/// that took effect, a process that exited, a clean stop that ended. (A stop
/// request does not: the node runs until its `Stopped`.)
pub fn ends_process(e: &Event) -> Option<&str> {
    match &e.data {
        Data::Action(Acted { action, result, .. }) if result.took_effect() => match action {
            Action::Crash { node } | Action::Restart { node } => Some(node),
            Action::Client { .. }
            | Action::TransferLeader { .. }
            | Action::Partition { .. }
            | Action::PartitionOneWay { .. }
            | Action::Heal
            | Action::Hold { .. }
            | Action::Release { .. }
            | Action::Latency { .. }
            | Action::Stop { .. }
            | Action::Start { .. }
            | Action::ArmFailPoint { .. }
            | Action::ClearFailPoint { .. }
            | Action::ReleaseFailPoint { .. } => None,
        },
        Data::Exited { .. } | Data::Stopped { .. } => e.node.as_deref(),
        Data::Action(_)
        | Data::OpEnd(_)
        | Data::NoNode { .. }
        | Data::InvalidOp { .. }
        | Data::FailPointHit(_)
        | Data::Sleep { .. }
        | Data::Await(_)
        | Data::Check(_)
        | Data::Heal(_)
        | Data::Limit { .. }
        | Data::Chaos(_)
        | Data::Workload(_)
        | Data::Node(_) => None,
    }
}

/// How a span ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The event at this trail position ended it.
    By(usize),
    /// Its own length ended it at this time (a timed stall), in ms.
    At(u64),
    /// Still in effect when the trail ends.
    Open,
}

/// One fault's time in effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub effect: Effect,
    pub target: Target,
    /// The trail position of the event that began it: the action, the fail
    /// point's firing (a stall), the exit or the stop's end (a down node).
    pub began: usize,
    pub end: End,
}

impl Span {
    /// Whether it is in effect just before trail position `upto`, at `now_ms`.
    pub fn in_effect_before(&self, upto: usize, now_ms: u64) -> bool {
        self.began < upto
            && match self.end {
                End::By(j) => j >= upto,
                End::At(t) => t > now_ms,
                End::Open => true,
            }
    }
}

/// Every fault's span in effect over `events` (in trail order): in the order
/// they ended, then those still open, by what they affect.
pub fn intervals(events: &[Event]) -> Vec<Span> {
    let mut walk = Walk::default();
    for (i, e) in events.iter().enumerate() {
        walk.event(i, e);
    }
    walk.finish()
}

/// A span in effect: its first event and, for an arming, the firings left.
struct Live {
    began: usize,
    left: Option<u32>,
}

/// The spans in effect while walking a trail. Keyed by what ends them; a
/// partition's key carries its position, so that each is its own span.
#[derive(Default)]
struct Walk {
    live: BTreeMap<(Effect, Target, usize), Live>,
    out: Vec<Span>,
}

impl Walk {
    fn open(&mut self, effect: Effect, target: Target, began: usize, left: Option<u32>) {
        let key = (effect, target, 0);
        self.live.entry(key).or_insert(Live { began, left });
    }

    fn close(&mut self, effect: Effect, target: &Target, by: usize) {
        let key = (effect, target.clone(), 0);
        if let Some(live) = self.live.remove(&key) {
            self.ended(key, live, End::By(by));
        }
    }

    fn close_where(&mut self, by: usize, which: impl Fn(&(Effect, Target, usize)) -> bool) {
        let keys: Vec<(Effect, Target, usize)> =
            self.live.keys().filter(|k| which(k)).cloned().collect();
        for key in keys {
            let live = self.live.remove(&key).expect("listed");
            self.ended(key, live, End::By(by));
        }
    }

    fn ended(&mut self, (effect, target, _): (Effect, Target, usize), live: Live, end: End) {
        self.out.push(Span {
            effect,
            target,
            began: live.began,
            end,
        });
    }

    fn event(&mut self, i: usize, e: &Event) {
        match &e.data {
            Data::Action(acted) if acted.result.took_effect() => self.action(i, &acted.action),
            Data::FailPointHit(hit) => {
                if let (Some(node), Some(fault)) = (e.node.as_deref(), &hit.fired) {
                    self.fired(i, e.t_ms, node, &hit.point, fault);
                }
            }
            Data::Exited { .. } | Data::Stopped { .. } => {
                if let Some(node) = e.node.as_deref() {
                    self.down(i, node);
                }
            }
            Data::Heal(HealStep::Began { .. }) => {
                self.close_where(i, |(effect, _, _)| *effect != Effect::Down);
            }
            Data::Heal(HealStep::Start) => {
                if let Some(node) = e.node.as_deref() {
                    self.close(Effect::Down, &Target::Node(node.to_string()), i);
                }
            }
            Data::Action(_)
            | Data::Heal(HealStep::Ended { .. })
            | Data::OpEnd(_)
            | Data::NoNode { .. }
            | Data::InvalidOp { .. }
            | Data::Sleep { .. }
            | Data::Await(_)
            | Data::Check(_)
            | Data::Limit { .. }
            | Data::Chaos(_)
            | Data::Workload(_)
            | Data::Node(_) => {}
        }
    }

    /// An action that took effect, at trail position `i`.
    fn action(&mut self, i: usize, action: &Action) {
        let Some(target) = affects(action) else {
            return;
        };
        match action {
            Action::Client { .. } | Action::TransferLeader { .. } | Action::Stop { .. } => {}
            Action::Partition { .. } | Action::PartitionOneWay { .. } => {
                let live = Live {
                    began: i,
                    left: None,
                };
                self.live.insert((Effect::Cut, target, i), live);
            }
            Action::Heal => self.close_where(i, |(effect, _, _)| *effect == Effect::Cut),
            Action::Hold { .. } => self.open(Effect::Hold, target, i, None),
            Action::Release { .. } => self.close(Effect::Hold, &target, i),
            Action::Latency { delay_ms, .. } => {
                self.close(Effect::Latency, &target, i);
                if delay_ms.is_some() {
                    self.open(Effect::Latency, target, i, None);
                }
            }
            Action::Crash { node } => self.down(i, node),
            Action::Restart { .. } => {
                // A restart of a running node is a crash and a start at one
                // instant: its stalled tasks die, and it is not down after.
                self.close_stalls_of(i, &target);
                self.close(Effect::Down, &target, i);
            }
            Action::Start { .. } => self.close(Effect::Down, &target, i),
            Action::ArmFailPoint { count, .. } => {
                self.close(Effect::Armed, &target, i);
                self.open(Effect::Armed, target, i, *count);
            }
            Action::ClearFailPoint { .. } => {
                self.close(Effect::Armed, &target, i);
                self.close(Effect::Stall, &target, i);
            }
            Action::ReleaseFailPoint { .. } => self.close(Effect::Stall, &target, i),
        }
    }

    /// The stalls of every fail point of the node `target` names.
    fn close_stalls_of(&mut self, i: usize, target: &Target) {
        let Target::Node(node) = target else { return };
        self.close_where(i, |(effect, t, _)| {
            *effect == Effect::Stall && matches!(t, Target::FailPoint { node: n, .. } if n == node)
        });
    }

    /// `node`'s process ended at `i`: down, and its stalled tasks gone.
    fn down(&mut self, i: usize, node: &str) {
        let target = Target::Node(node.to_string());
        self.close_stalls_of(i, &target);
        self.open(Effect::Down, target, i, None);
    }

    /// A fail point fired at `i`: one firing fewer left, and a stall begins.
    fn fired(&mut self, i: usize, t_ms: u64, node: &str, point: &str, fault: &FaultAction) {
        let target = Target::FailPoint {
            node: node.to_string(),
            point: point.to_string(),
        };
        let armed = (Effect::Armed, target.clone(), 0);
        if let Some(live) = self.live.get_mut(&armed) {
            if let Some(left) = live.left.as_mut() {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.close(Effect::Armed, &target, i);
                }
            }
        }
        match fault {
            FaultAction::Stall(d) => {
                let until = t_ms.saturating_add(d.as_millis() as u64);
                self.out.push(Span {
                    effect: Effect::Stall,
                    target,
                    began: i,
                    end: End::At(until),
                });
            }
            FaultAction::StallUntilRelease => self.open(Effect::Stall, target, i, None),
            FaultAction::Error(_) | FaultAction::Panic => {}
        }
    }

    fn finish(mut self) -> Vec<Span> {
        for (key, live) in std::mem::take(&mut self.live) {
            self.ended(key, live, End::Open);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::action::ActionResult;
    use crate::base::trail::sample::*;
    use std::time::Duration;

    fn spans(events: &[Event]) -> Vec<(Effect, usize, End)> {
        let mut got: Vec<(Effect, usize, End)> = intervals(events)
            .into_iter()
            .map(|s| (s.effect, s.began, s.end))
            .collect();
        got.sort_by_key(|s| s.1);
        got
    }

    #[test]
    fn a_link_is_an_unordered_pair_and_undoes_pair_by_target() {
        assert_eq!(Link::new("n3", "n1"), Link::new("n1", "n3"));
        assert_eq!(Link::new("n3", "n1").ends(), ("n1", "n3"));
        let hold = Action::Hold {
            between: pair("n1", "n3"),
        };
        let release = Action::Release {
            between: pair("n3", "n1"),
        };
        let other = Action::Release {
            between: pair("n1", "n2"),
        };
        assert!(undoes(&release, &hold));
        assert!(!undoes(&other, &hold));
        assert!(!undoes(&hold, &release));
        assert_eq!(
            undo_of(&hold),
            Some(Action::Release {
                between: pair("n1", "n3")
            })
        );
        let stop = Action::Stop { node: "n2".into() };
        assert!(undoes(&Action::Start { node: "n2".into() }, &stop));
        assert!(undoes(&Action::Restart { node: "n2".into() }, &stop));
        assert!(!undoes(&Action::Start { node: "n1".into() }, &stop));
        assert!(undoes(&Action::Heal, &partition(&[&["n1"], &["n2"]])));
        assert_eq!(undo_of(&Action::Restart { node: "n2".into() }), None);
        assert_eq!(affects(&Action::Heal), Some(Target::Cuts));
    }

    #[test]
    fn a_release_before_its_hold_ends_nothing_and_the_hold_stays_open() {
        // A derived or shrunk schedule may play a release before its hold.
        let trail = vec![
            act(
                10,
                Action::Release {
                    between: pair("n1", "n2"),
                },
                ActionResult::Released { held: false },
            ),
            done(
                20,
                Action::Hold {
                    between: pair("n2", "n1"),
                },
            ),
            done(
                30,
                Action::Hold {
                    between: pair("n1", "n2"),
                },
            ),
        ];
        assert_eq!(spans(&trail), vec![(Effect::Hold, 1, End::Open)]);
        let later = Span {
            effect: Effect::Hold,
            target: Target::Link(Link::new("n1", "n2")),
            began: 1,
            end: End::Open,
        };
        assert!(!later.in_effect_before(1, 20));
        assert!(later.in_effect_before(2, 30));
    }

    #[test]
    fn a_stopped_node_is_down_from_its_stop_s_end_not_the_request() {
        let trail = vec![
            done(10, Action::Stop { node: "n2".into() }),
            harness(
                14,
                Some("n2"),
                Data::Stopped {
                    clean: true,
                    timeout_ms: 10_000,
                },
            ),
            done(20, Action::Start { node: "n2".into() }),
        ];
        assert_eq!(spans(&trail), vec![(Effect::Down, 1, End::By(2))]);
    }

    #[test]
    fn stalls_end_with_release_clear_or_their_node_and_counts_run_out() {
        let arm = |count| Action::ArmFailPoint {
            node: "n1".into(),
            point: "apply".into(),
            fault: FaultAction::StallUntilRelease,
            count,
            probability: None,
            optional: false,
        };
        let trail = vec![
            done(1, arm(Some(1))),
            hit(2, "n1", "apply", FaultAction::StallUntilRelease),
            done(3, Action::Crash { node: "n1".into() }),
            hit(
                4,
                "n2",
                "flush",
                FaultAction::Stall(Duration::from_millis(50)),
            ),
            done(5, arm(None)),
            hit(6, "n1", "apply", FaultAction::StallUntilRelease),
            act(
                7,
                Action::ReleaseFailPoint {
                    node: "n1".into(),
                    point: "apply".into(),
                },
                ActionResult::Woken { tasks: 1 },
            ),
            heal_began(8),
        ];
        assert_eq!(
            spans(&trail),
            vec![
                (Effect::Armed, 0, End::By(1)),
                (Effect::Stall, 1, End::By(2)),
                (Effect::Down, 2, End::Open),
                (Effect::Stall, 3, End::At(54)),
                (Effect::Armed, 4, End::By(7)),
                (Effect::Stall, 5, End::By(6)),
            ]
        );
    }

    #[test]
    fn partitions_are_each_a_span_and_a_heal_ends_them_all() {
        let trail = vec![
            done(1, partition(&[&["n1"], &["n2", "n3"]])),
            done(
                2,
                Action::PartitionOneWay {
                    from: "n1".into(),
                    to: names(&["n2"]),
                },
            ),
            done(
                3,
                Action::PartitionOneWay {
                    from: "n1".into(),
                    to: names(&["n3"]),
                },
            ),
            act(4, Action::Heal, ActionResult::Healed { links: 3 }),
            done(
                5,
                Action::Latency {
                    between: pair("n1", "n2"),
                    delay_ms: Some(5),
                },
            ),
            done(
                6,
                Action::Latency {
                    between: pair("n2", "n1"),
                    delay_ms: Some(9),
                },
            ),
        ];
        assert_eq!(
            spans(&trail),
            vec![
                (Effect::Cut, 0, End::By(3)),
                (Effect::Cut, 1, End::By(3)),
                (Effect::Cut, 2, End::By(3)),
                (Effect::Latency, 4, End::By(5)),
                (Effect::Latency, 5, End::Open),
            ]
        );
    }

    #[test]
    fn the_cause_and_the_diagram_read_the_same_down_span_of_a_stop() {
        // Before: the cause had n2 down from the request (event 0), the
        // diagram from its `Stopped` (event 2).
        let trail = vec![
            done(10, Action::Stop { node: "n2".into() }),
            note(12, "n1", "n2 still running"),
            harness(
                14,
                Some("n2"),
                Data::Stopped {
                    clean: true,
                    timeout_ms: 10_000,
                },
            ),
            note(16, "n1", "n2 down"),
        ];
        let lanes = names(&["n1", "n2"]);
        let diagram = crate::report::html::derive::derive(&trail, &lanes, 20);
        let drawn: Vec<usize> = diagram.down.iter().map(|s| s.opened_by).collect();
        let cause = |upto| -> Vec<usize> {
            crate::judge::check::cause::in_effect(&trail, upto)
                .iter()
                .map(|e| e.event)
                .collect()
        };
        assert_eq!(drawn, [2]);
        assert!(cause(1).is_empty(), "not down at the request");
        assert_eq!(cause(3), drawn);
    }
}
