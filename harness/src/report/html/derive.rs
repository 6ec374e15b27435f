//! What the space-time diagram shades, derived from the trail alone: partitions,
//! holds, latency changes, fail-point stalls and the heal phase as bands; the spans
//! in which a node was down; the spans in which a node led.
//!
//! The trail is the only input on purpose: a report re-rendered from a saved
//! `report.json` draws the same picture, and the picture can never show a fault
//! the trail does not record. Everything here reads the events' typed payloads
//! (actions, fail-point hits, the heal phase, leader events), never their text.

use crate::base::action::{Action, FaultAction};
use crate::base::duration::format as fmt_duration;
use crate::base::effect::{self, Effect, End, Target};
use crate::base::trail::{Data, Event, HealStep};
use crate::lang::scenario::Cut;
use faultline_api::{NodeEvent, Role};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BandKind {
    Partition,
    Hold,
    Latency,
    Stall,
    Heal,
}

impl BandKind {
    pub fn name(self) -> &'static str {
        match self {
            BandKind::Partition => "partition",
            BandKind::Hold => "hold",
            BandKind::Latency => "latency",
            BandKind::Stall => "stall",
            BandKind::Heal => "heal",
        }
    }
}

/// A shaded interval. `lanes` are indices into the run's node list; empty means
/// every lane (the heal phase).
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub kind: BandKind,
    pub lanes: Vec<usize>,
    pub start_ms: u64,
    pub end_ms: u64,
    /// Directed links (from lane, to lane) the band affects: cut by a partition,
    /// held, or slowed. Messages sent on a cut link during the band were dropped.
    pub links: Vec<(usize, usize)>,
    /// Trail index of the event that opened the band.
    pub opened_by: usize,
    /// Trail index of the event that closed it; `None` when a duration ended it or
    /// it was still open when the run ended.
    pub closed_by: Option<usize>,
    pub label: String,
}

/// An interval on one lane: down (crashed or stopped) or leading.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub lane: usize,
    pub start_ms: u64,
    pub end_ms: u64,
    pub opened_by: usize,
    pub closed_by: Option<usize>,
    /// For leader spans, the term the node announced.
    pub term: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    pub bands: Vec<Band>,
    pub down: Vec<Span>,
    pub leading: Vec<Span>,
}

/// Derive bands and spans from `events` (in time order) for a run with `nodes`
/// lanes that ended at `end_ms`: the faults' from [`effect::intervals`] (the
/// spans the cause reads too), the heal phase and leadership from the trail.
pub fn derive(events: &[Event], nodes: &[String], end_ms: u64) -> Derived {
    let end = end_ms.max(events.last().map(|e| e.t_ms).unwrap_or(0));
    let mut out = Derived::default();
    for span in effect::intervals(events) {
        let e = &events[span.began];
        let (end_at, closed_by) = match span.end {
            End::By(j) => (events[j].t_ms, Some(j)),
            // A timed stall lasts its length, within the run.
            End::At(t) => (t.min(end_ms.max(e.t_ms)), None),
            End::Open => (end, None),
        };
        let end_at = end_at.max(e.t_ms);
        match span.effect {
            Effect::Down => {
                let Target::Node(node) = &span.target else {
                    continue;
                };
                if let Some(lane) = lane_of(nodes, node) {
                    out.down.push(Span {
                        lane,
                        start_ms: e.t_ms,
                        end_ms: end_at,
                        opened_by: span.began,
                        closed_by,
                        term: None,
                    });
                }
            }
            Effect::Armed => {}
            Effect::Cut | Effect::Hold | Effect::Latency | Effect::Stall => {
                if let Some(mut band) = band_of(&span, e, nodes) {
                    band.end_ms = end_at;
                    band.closed_by = closed_by;
                    out.bands.push(band);
                }
            }
        }
    }
    let mut w = Walk::default();
    for (i, e) in events.iter().enumerate() {
        w.event(e, i, nodes);
    }
    w.finish(out, end)
}

/// The band a fault's span draws (its end still to set); `None` for a fault
/// on no lane (a link or a stall of a node the run does not have).
fn band_of(span: &effect::Span, e: &Event, nodes: &[String]) -> Option<Band> {
    let i = span.began;
    match &e.data {
        // What the span is decides the band (effect.rs, the one place that
        // says what each action means); the action carries its links.
        Data::Action(acted) => match span.effect {
            Effect::Cut => {
                let links = if let Action::Partition { groups } = &acted.action {
                    let lanes: Vec<Vec<usize>> = groups
                        .iter()
                        .map(|g| g.iter().filter_map(|n| lane_of(nodes, n)).collect())
                        .collect();
                    // Each cut is both ways: one link per direction.
                    Cut::between_groups(&lanes)
                        .into_iter()
                        .flat_map(|c| [(c.from, c.to), (c.to, c.from)])
                        .collect()
                } else if let Action::PartitionOneWay { from, to } = &acted.action {
                    match lane_of(nodes, from) {
                        Some(from) => to
                            .iter()
                            .filter_map(|t| lane_of(nodes, t))
                            .map(|t| (from, t))
                            .collect(),
                        None => Vec::new(),
                    }
                } else {
                    return None;
                };
                Some(partition_band(links, nodes, e, i))
            }
            Effect::Hold | Effect::Latency => {
                let (Action::Hold { between } | Action::Latency { between, .. }) = &acted.action
                else {
                    return None;
                };
                let kind = if span.effect == Effect::Hold {
                    BandKind::Hold
                } else {
                    BandKind::Latency
                };
                pair_of(nodes, between).map(|p| link_band(kind, p, e, i))
            }
            Effect::Down | Effect::Armed | Effect::Stall => None,
        },
        Data::FailPointHit(hit) => {
            let lane = e.node.as_deref().and_then(|n| lane_of(nodes, n))?;
            let stall = match &hit.fired {
                Some(FaultAction::Stall(d)) => fmt_duration(*d),
                Some(FaultAction::StallUntilRelease) => "until release".to_string(),
                Some(FaultAction::Error(_) | FaultAction::Panic) | None => return None,
            };
            Some(Band {
                kind: BandKind::Stall,
                lanes: vec![lane],
                start_ms: e.t_ms,
                end_ms: e.t_ms,
                links: Vec::new(),
                opened_by: i,
                closed_by: None,
                label: format!("{} stalled: {stall}", hit.point),
            })
        }
        Data::OpEnd(_)
        | Data::NoNode { .. }
        | Data::InvalidOp { .. }
        | Data::Exited { .. }
        | Data::Stopped { .. }
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

/// A partition's band over the lanes its cut `links` touch.
fn partition_band(links: Vec<(usize, usize)>, nodes: &[String], e: &Event, i: usize) -> Band {
    let mut lanes: Vec<usize> = links.iter().flat_map(|&(a, b)| [a, b]).collect();
    lanes.sort_unstable();
    lanes.dedup();
    let label = partition_label(&links, nodes).unwrap_or_else(|| e.detail.clone());
    Band {
        kind: BandKind::Partition,
        lanes,
        start_ms: e.t_ms,
        end_ms: e.t_ms,
        links,
        opened_by: i,
        closed_by: None,
        label,
    }
}

fn lane_of(nodes: &[String], name: &str) -> Option<usize> {
    nodes.iter().position(|n| n == name)
}

/// The lanes of a link, lower first.
fn pair_of(nodes: &[String], [a, b]: &[String; 2]) -> Option<(usize, usize)> {
    let (a, b) = (lane_of(nodes, a)?, lane_of(nodes, b)?);
    Some((a.min(b), a.max(b)))
}

/// What is not a fault, walking the trail: the heal phase and who leads.
#[derive(Default)]
struct Walk {
    heal: Option<Band>,
    heals: Vec<Band>,
    leading: BTreeMap<usize, Span>,
    led: Vec<Span>,
}

impl Walk {
    fn event(&mut self, e: &Event, i: usize, nodes: &[String]) {
        let t = e.t_ms;
        // A node whose process ended no longer leads.
        if let Some(lane) = effect::ends_process(e).and_then(|n| lane_of(nodes, n)) {
            self.stop_leading(lane, t, i);
        }
        match &e.data {
            Data::Heal(HealStep::Began { .. }) => self.heal_began(t, i),
            Data::Heal(HealStep::Ended { .. }) => {
                if let Some(mut band) = self.heal.take() {
                    band.end_ms = t.max(band.start_ms);
                    band.closed_by = Some(i);
                    self.heals.push(band);
                }
            }
            Data::Node(NodeEvent::Leader { role, term, .. }) => {
                if let Some(lane) = e.node.as_deref().and_then(|n| lane_of(nodes, n)) {
                    self.leader(lane, *role, *term, t, i);
                }
            }
            // Nothing else begins or ends the heal phase or a leadership.
            Data::Action(_)
            | Data::Heal(HealStep::Start)
            | Data::OpEnd(_)
            | Data::NoNode { .. }
            | Data::InvalidOp { .. }
            | Data::FailPointHit(_)
            | Data::Exited { .. }
            | Data::Stopped { .. }
            | Data::Sleep { .. }
            | Data::Await(_)
            | Data::Check(_)
            | Data::Limit { .. }
            | Data::Chaos(_)
            | Data::Workload(_)
            | Data::Node(
                NodeEvent::Apply { .. }
                | NodeEvent::Storage { .. }
                | NodeEvent::Service { .. }
                | NodeEvent::Submit { .. }
                | NodeEvent::Exit { .. }
                | NodeEvent::Probe { .. }
                | NodeEvent::Note { .. },
            ) => {}
        }
    }

    fn stop_leading(&mut self, lane: usize, t_ms: u64, by: usize) {
        if let Some(mut span) = self.leading.remove(&lane) {
            span.end_ms = t_ms;
            span.closed_by = Some(by);
            self.led.push(span);
        }
    }

    fn heal_began(&mut self, t: u64, i: usize) {
        self.heal = Some(Band {
            kind: BandKind::Heal,
            lanes: Vec::new(),
            start_ms: t,
            end_ms: t,
            links: Vec::new(),
            opened_by: i,
            closed_by: None,
            label:
                "heal phase: faults removed, down nodes started, waiting for the replicas to settle"
                    .into(),
        });
    }

    /// A leader change: a lane leads from its first leader event in a term.
    fn leader(&mut self, lane: usize, role: Role, term: u64, t: u64, i: usize) {
        if role != Role::Leader {
            self.stop_leading(lane, t, i);
            return;
        }
        let term = Some(term);
        if self.leading.get(&lane).is_some_and(|s| s.term == term) {
            return;
        }
        self.stop_leading(lane, t, i);
        self.leading.insert(
            lane,
            Span {
                lane,
                start_ms: t,
                end_ms: t,
                opened_by: i,
                closed_by: None,
                term,
            },
        );
    }

    /// Whatever is still open lasts until the end of the run; then one stable
    /// order, whatever order intervals closed in.
    fn finish(mut self, mut out: Derived, end: u64) -> Derived {
        out.bands.append(&mut self.heals);
        if let Some(mut band) = self.heal.take() {
            band.end_ms = end.max(band.start_ms);
            out.bands.push(band);
        }
        out.leading.append(&mut self.led);
        for mut span in std::mem::take(&mut self.leading).into_values() {
            span.end_ms = end;
            out.leading.push(span);
        }
        out.bands
            .sort_by_key(|b| (b.start_ms, b.opened_by, b.kind, b.lanes.clone()));
        out.down.sort_by_key(|s| (s.start_ms, s.lane));
        out.leading.sort_by_key(|s| (s.start_ms, s.lane));
        out
    }
}

/// A band over one link, both ways (a hold, a latency), opened by event `e`.
fn link_band(kind: BandKind, pair: (usize, usize), e: &Event, i: usize) -> Band {
    Band {
        kind,
        lanes: vec![pair.0, pair.1],
        start_ms: e.t_ms,
        end_ms: e.t_ms,
        links: vec![pair, (pair.1, pair.0)],
        opened_by: i,
        closed_by: None,
        label: e.detail.clone(),
    }
}

/// "n3 | n1, n2" when the cut links separate two sides completely (an isolated
/// node, two groups, or one-way "n3 -/-> n1, n2"); `None` for anything irregular.
fn partition_label(links: &[(usize, usize)], nodes: &[String]) -> Option<String> {
    let from: BTreeSet<usize> = links.iter().map(|l| l.0).collect();
    let to: BTreeSet<usize> = links.iter().map(|l| l.1).collect();
    let oneway = links.iter().any(|&(a, b)| !links.contains(&(b, a)));
    let names = |side: &BTreeSet<usize>| {
        side.iter()
            .map(|&l| nodes[l].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if oneway {
        let complete = from
            .iter()
            .all(|a| to.iter().all(|b| links.contains(&(*a, *b))));
        return (complete && from.is_disjoint(&to) && !from.is_empty())
            .then(|| format!("{} -/-> {} (one way)", names(&from), names(&to)));
    }
    // Two-way: split into the side of the first node and everything it is cut from.
    let first = *from.iter().next()?;
    let other: BTreeSet<usize> = links.iter().filter(|l| l.0 == first).map(|l| l.1).collect();
    let side: BTreeSet<usize> = from
        .iter()
        .copied()
        .filter(|l| !other.contains(l))
        .collect();
    let complete = links.len() == 2 * side.len() * other.len()
        && side
            .iter()
            .all(|a| other.iter().all(|b| links.contains(&(*a, *b))));
    // The smaller side first: "n3 | n1, n2" reads as "n3 is cut off".
    let (a, b) = if other.len() < side.len() {
        (other, side)
    } else {
        (side, other)
    };
    complete.then(|| format!("{} | {}", names(&a), names(&b)))
}

/// The role and term a leader event announces.
pub fn role_of(e: &Event) -> Option<(Role, u64)> {
    if let Some(NodeEvent::Leader { role, term, .. }) = e.node_event() {
        Some((*role, *term))
    } else {
        None
    }
}

/// A leader event in which the node says it now leads.
pub fn announces_leadership(e: &Event) -> bool {
    role_of(e).is_some_and(|(role, _)| role == Role::Leader)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::action::ActionResult;
    use crate::base::trail::sample::*;
    use std::time::Duration;

    fn lanes() -> Vec<String> {
        names(&["n1", "n2", "n3", "n4"])
    }

    #[test]
    fn partitions_holds_latency_and_stalls_become_bands() {
        let trail = vec![
            done(10, partition(&[&["n3"], &["n1", "n2"]])),
            done(
                20,
                Action::Hold {
                    between: pair("n1", "n4"),
                },
            ),
            hit(
                25,
                "n2",
                "apply",
                FaultAction::Stall(Duration::from_millis(50)),
            ),
            hit(30, "n4", "flush", FaultAction::StallUntilRelease),
            done(
                35,
                Action::Latency {
                    between: pair("n2", "n1"),
                    delay_ms: Some(20),
                },
            ),
            act(
                40,
                Action::Release {
                    between: pair("n4", "n1"),
                },
                ActionResult::Released { held: true },
            ),
            act(50, Action::Heal, ActionResult::Healed { links: 2 }),
            act(
                60,
                Action::ReleaseFailPoint {
                    node: "n4".into(),
                    point: "flush".into(),
                },
                ActionResult::Woken { tasks: 1 },
            ),
            hit(70, "n4", "flush", FaultAction::StallUntilRelease),
            heal_began(80),
            heal_ended(95),
        ];
        let d = derive(&trail, &lanes(), 100);
        type Row = (BandKind, Vec<usize>, u64, u64, Option<usize>);
        let got: Vec<Row> = d
            .bands
            .iter()
            .map(|b| (b.kind, b.lanes.clone(), b.start_ms, b.end_ms, b.closed_by))
            .collect();
        assert_eq!(
            got,
            vec![
                (BandKind::Partition, vec![0, 1, 2], 10, 50, Some(6)),
                (BandKind::Hold, vec![0, 3], 20, 40, Some(5)),
                (BandKind::Stall, vec![1], 25, 75, None),
                (BandKind::Stall, vec![3], 30, 60, Some(7)),
                (BandKind::Latency, vec![0, 1], 35, 80, Some(9)),
                (BandKind::Stall, vec![3], 70, 80, Some(9)),
                (BandKind::Heal, vec![], 80, 95, Some(10)),
            ]
        );
        assert_eq!(d.bands[3].label, "flush stalled: until release");
        assert_eq!(d.bands[2].label, "apply stalled: 50ms");
        assert_eq!(d.bands[0].label, "n3 | n1, n2");
        assert_eq!(d.bands[0].links, vec![(2, 0), (0, 2), (2, 1), (1, 2)]);
        assert_eq!(d.bands[1].links, vec![(0, 3), (3, 0)]);
    }

    #[test]
    fn open_bands_last_until_the_end_and_oneway_cuts_count() {
        let trail = vec![
            done(
                5,
                Action::PartitionOneWay {
                    from: "n1".into(),
                    to: names(&["n2", "n3"]),
                },
            ),
            done(6, partition(&[&["n1", "n2"], &["n3", "n4"]])),
            done(7, partition(&[&["n2"], &["n1", "n3"]])),
        ];
        let d = derive(&trail, &lanes(), 40);
        assert_eq!(d.bands.len(), 3);
        assert_eq!(
            (d.bands[0].lanes.clone(), d.bands[0].end_ms),
            (vec![0, 1, 2], 40)
        );
        assert_eq!(d.bands[0].closed_by, None);
        assert_eq!(d.bands[0].links, vec![(0, 1), (0, 2)]);
        assert_eq!(d.bands[0].label, "n1 -/-> n2, n3 (one way)");
        assert_eq!(d.bands[1].label, "n1, n2 | n3, n4");
        // n2 is cut from both others, who still talk to each other.
        assert_eq!(d.bands[2].label, "n2 | n1, n3");
    }

    #[test]
    fn a_latency_back_to_default_ends_the_band() {
        let trail = vec![
            done(
                5,
                Action::Latency {
                    between: pair("n1", "n2"),
                    delay_ms: Some(30),
                },
            ),
            done(
                9,
                Action::Latency {
                    between: pair("n2", "n1"),
                    delay_ms: None,
                },
            ),
        ];
        let d = derive(&trail, &lanes(), 40);
        assert_eq!(d.bands.len(), 1);
        assert_eq!((d.bands[0].start_ms, d.bands[0].end_ms), (5, 9));
    }

    #[test]
    fn crashes_stops_and_restarts_are_down_spans() {
        let trail = vec![
            leader(1, "n1", 1),
            done(10, Action::Crash { node: "n1".into() }),
            act(
                12,
                Action::Crash { node: "n1".into() },
                ActionResult::NodeDown,
            ),
            act(
                20,
                Action::Restart { node: "n1".into() },
                ActionResult::Restarted {
                    was_up: false,
                    lost_held: 0,
                },
            ),
            done(30, Action::Stop { node: "n2".into() }),
            harness(
                33,
                Some("n2"),
                Data::Stopped {
                    clean: true,
                    timeout_ms: 10_000,
                },
            ),
            act(
                40,
                Action::Restart { node: "n3".into() },
                ActionResult::Restarted {
                    was_up: true,
                    lost_held: 0,
                },
            ),
            harness(50, Some("n2"), Data::Heal(HealStep::Start)),
            harness(
                60,
                Some("n4"),
                Data::Exited {
                    reason: "disk full".into(),
                },
            ),
        ];
        let d = derive(&trail, &lanes(), 90);
        let down: Vec<(usize, u64, u64)> = d
            .down
            .iter()
            .map(|s| (s.lane, s.start_ms, s.end_ms))
            .collect();
        assert_eq!(down, vec![(0, 10, 20), (1, 33, 50), (3, 60, 90)]);
        // The crash ended n1's leadership.
        assert_eq!(d.leading.len(), 1);
        assert_eq!((d.leading[0].start_ms, d.leading[0].end_ms), (1, 10));
    }

    #[test]
    fn leader_spans_follow_leader_events_and_terms() {
        let zk = NodeEvent::Leader {
            role: Role::Leader,
            term: 2,
            leader: Some("n2".into()),
            text: "leader term 2: NEWLEADER acked by n2, n3, last zxid 0x100000003".into(),
        };
        let trail = vec![
            role(1, "n1", Role::Candidate, 1),
            leader(2, "n1", 1),
            leader(3, "n1", 1),
            role(9, "n1", Role::Follower, 2),
            node(9, "n2", zk),
        ];
        let d = derive(&trail, &lanes(), 20);
        let spans: Vec<(usize, u64, u64, Option<u64>)> = d
            .leading
            .iter()
            .map(|s| (s.lane, s.start_ms, s.end_ms, s.term))
            .collect();
        assert_eq!(spans, vec![(0, 2, 9, Some(1)), (1, 9, 20, Some(2))]);
        assert!(announces_leadership(&trail[4]));
        assert!(!announces_leadership(&trail[3]));
        assert_eq!(role_of(&trail[0]), Some((Role::Candidate, 1)));
    }

    #[test]
    fn unknown_nodes_draw_a_band_on_no_lane() {
        let trail = vec![
            done(1, partition(&[&["x9"], &["y9"]])),
            done(3, Action::Crash { node: "zz".into() }),
        ];
        let d = derive(&trail, &lanes(), 10);
        // Still shown, across every lane (an empty lane list means all lanes).
        assert_eq!(d.bands.len(), 1);
        assert!(d.bands[0].lanes.is_empty());
        assert_eq!(d.bands[0].label, "partition x9 | y9");
        assert!(d.down.is_empty());
    }
}
