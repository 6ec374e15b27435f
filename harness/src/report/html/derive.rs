//! What the space-time diagram shades, derived from the trail alone: partitions,
//! holds, latency changes, fail-point stalls and the heal phase as bands; the spans
//! in which a node was down; the spans in which a node led.
//!
//! The trail is the only input on purpose: a report re-rendered from a saved
//! `report.json` (or one written by an older harness) draws the same picture, and
//! the picture can never show a fault the trail does not record. The network and
//! heal details parsed here are written by the harness itself (`runner/interpret.rs`,
//! `runner/mod.rs`); anything that does not parse is still drawn as a mark.

use crate::trail::{Event, Kind};
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
    /// For leader spans, the term the node announced, when its detail says `term N`.
    pub term: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    pub bands: Vec<Band>,
    pub down: Vec<Span>,
    pub leading: Vec<Span>,
}

/// Open intervals while walking the trail, closed by later events or by the end.
#[derive(Default)]
struct Walk {
    out: Derived,
    partitions: Vec<Band>,
    holds: BTreeMap<(usize, usize), Band>,
    latencies: BTreeMap<(usize, usize), Band>,
    /// (lane, fail point) -> a stall waiting for its release.
    stalls: BTreeMap<(usize, String), Band>,
    heal: Option<Band>,
    down: BTreeMap<usize, Span>,
    leading: BTreeMap<usize, Span>,
}

impl Walk {
    fn close(&mut self, mut band: Band, t_ms: u64, by: Option<usize>) {
        band.end_ms = t_ms.max(band.start_ms);
        band.closed_by = by;
        self.out.bands.push(band);
    }

    fn close_partitions(&mut self, t_ms: u64, by: usize) {
        for band in std::mem::take(&mut self.partitions) {
            self.close(band, t_ms, Some(by));
        }
    }

    fn close_stalls_on(&mut self, lane: usize, point: Option<&str>, t_ms: u64, by: usize) {
        let keys: Vec<(usize, String)> = self
            .stalls
            .keys()
            .filter(|(l, p)| *l == lane && point.is_none_or(|point| p == point))
            .cloned()
            .collect();
        for key in keys {
            let band = self.stalls.remove(&key).expect("listed");
            self.close(band, t_ms, Some(by));
        }
    }

    fn go_down(&mut self, lane: usize, t_ms: u64, by: usize) {
        self.stop_leading(lane, t_ms, by);
        // A node that dies takes its stalled tasks with it.
        self.close_stalls_on(lane, None, t_ms, by);
        self.down.entry(lane).or_insert(Span {
            lane,
            start_ms: t_ms,
            end_ms: t_ms,
            opened_by: by,
            closed_by: None,
            term: None,
        });
    }

    fn come_up(&mut self, lane: usize, t_ms: u64, by: usize) {
        if let Some(mut span) = self.down.remove(&lane) {
            span.end_ms = t_ms;
            span.closed_by = Some(by);
            self.out.down.push(span);
        }
    }

    fn stop_leading(&mut self, lane: usize, t_ms: u64, by: usize) {
        if let Some(mut span) = self.leading.remove(&lane) {
            span.end_ms = t_ms;
            span.closed_by = Some(by);
            self.out.leading.push(span);
        }
    }
}

/// Derive bands and spans from `events` (in time order) for a run with `nodes`
/// lanes that ended at `end_ms`.
pub fn derive(events: &[Event], nodes: &[String], end_ms: u64) -> Derived {
    let lane_of = |name: &str| nodes.iter().position(|n| n == name);
    let mut w = Walk::default();
    for (i, e) in events.iter().enumerate() {
        let t = e.t_ms;
        let lane = e.node.as_deref().and_then(lane_of);
        match e.kind {
            Kind::Network => {
                let d = e.detail.as_str();
                if let Some(cuts) = d.strip_prefix("partition ") {
                    let mut links = Vec::new();
                    for cut in cuts.split(", ") {
                        let (pair, both) = match cut.split_once(" <-/-> ") {
                            Some(pair) => (Some(pair), true),
                            None => (cut.split_once(" -/-> "), false),
                        };
                        let Some((a, b)) = pair else { continue };
                        if let (Some(a), Some(b)) = (lane_of(a.trim()), lane_of(b.trim())) {
                            links.push((a, b));
                            if both {
                                links.push((b, a));
                            }
                        }
                    }
                    let mut lanes: Vec<usize> = links.iter().flat_map(|&(a, b)| [a, b]).collect();
                    lanes.sort_unstable();
                    lanes.dedup();
                    let label = partition_label(&links, nodes).unwrap_or_else(|| d.to_string());
                    w.partitions.push(Band {
                        kind: BandKind::Partition,
                        lanes,
                        start_ms: t,
                        end_ms: t,
                        links,
                        opened_by: i,
                        closed_by: None,
                        label,
                    });
                } else if d.starts_with("heal") {
                    w.close_partitions(t, i);
                } else if let Some(pair) = d
                    .strip_prefix("hold messages between ")
                    .and_then(|rest| pair_of(rest, &lane_of))
                {
                    w.holds.entry(pair).or_insert(Band {
                        kind: BandKind::Hold,
                        lanes: vec![pair.0, pair.1],
                        start_ms: t,
                        end_ms: t,
                        links: vec![pair, (pair.1, pair.0)],
                        opened_by: i,
                        closed_by: None,
                        label: d.to_string(),
                    });
                } else if let Some(pair) = d
                    .strip_prefix("release messages between ")
                    .and_then(|rest| pair_of(rest, &lane_of))
                {
                    if let Some(band) = w.holds.remove(&pair) {
                        w.close(band, t, Some(i));
                    }
                } else if let Some(pair) = d
                    .strip_prefix("latency ")
                    .and_then(|rest| rest.split_once(" between "))
                    .and_then(|(_, rest)| pair_of(rest, &lane_of))
                {
                    // A new latency on a link replaces the previous one.
                    if let Some(band) = w.latencies.remove(&pair) {
                        w.close(band, t, Some(i));
                    }
                    w.latencies.insert(
                        pair,
                        Band {
                            kind: BandKind::Latency,
                            lanes: vec![pair.0, pair.1],
                            start_ms: t,
                            end_ms: t,
                            links: vec![pair, (pair.1, pair.0)],
                            opened_by: i,
                            closed_by: None,
                            label: d.to_string(),
                        },
                    );
                }
            }
            Kind::Heal => {
                if let Some(band) = w.heal.take() {
                    // The heal phase's second event: the replicas settled (or not).
                    w.close(band, t, Some(i));
                } else {
                    // The heal phase repairs every cut, releases every hold, resets
                    // latencies and clears every fail point (waking stalled tasks).
                    w.close_partitions(t, i);
                    for band in std::mem::take(&mut w.holds).into_values() {
                        w.close(band, t, Some(i));
                    }
                    for band in std::mem::take(&mut w.latencies).into_values() {
                        w.close(band, t, Some(i));
                    }
                    for band in std::mem::take(&mut w.stalls).into_values() {
                        w.close(band, t, Some(i));
                    }
                    w.heal = Some(Band {
                        kind: BandKind::Heal,
                        lanes: Vec::new(),
                        start_ms: t,
                        end_ms: t,
                        links: Vec::new(),
                        opened_by: i,
                        closed_by: None,
                        label: "heal phase: faults removed, down nodes started, waiting for the replicas to settle".into(),
                    });
                }
            }
            Kind::FailPointHit => {
                let Some(lane) = lane else { continue };
                let Some((point, action)) = e.detail.split_once(" fired: ") else {
                    continue;
                };
                let Some(stall) = action.strip_prefix("stall ") else {
                    continue;
                };
                let band = Band {
                    kind: BandKind::Stall,
                    lanes: vec![lane],
                    start_ms: t,
                    end_ms: t,
                    links: Vec::new(),
                    opened_by: i,
                    closed_by: None,
                    label: format!("{point} stalled: {stall}"),
                };
                if stall == "until release" {
                    w.stalls.entry((lane, point.to_string())).or_insert(band);
                } else if let Ok(d) = crate::duration::parse(stall) {
                    let end = t.saturating_add(d.as_millis() as u64).min(end_ms.max(t));
                    w.close(band, end, None);
                }
            }
            Kind::FailPointRelease | Kind::FailPointClear => {
                if let (Some(lane), Some((point, _))) = (lane, e.detail.split_once(':')) {
                    w.close_stalls_on(lane, Some(point), t, i);
                }
            }
            Kind::Crash => {
                if let Some(lane) = lane {
                    w.go_down(lane, t, i);
                }
            }
            Kind::Stop => {
                // "stop: clean shutdown requested" comes first; the node is down at
                // the second event ("stopped cleanly" or "... killed").
                if let Some(lane) = lane.filter(|_| !e.detail.starts_with("stop:")) {
                    w.go_down(lane, t, i);
                }
            }
            Kind::Restart => {
                if let Some(lane) = lane {
                    // A restart of a running node is a crash and a start at one
                    // instant: its lane shows a restart mark, not a gap.
                    w.stop_leading(lane, t, i);
                    w.close_stalls_on(lane, None, t, i);
                    w.come_up(lane, t, i);
                }
            }
            Kind::Start => {
                if let Some(lane) = lane {
                    w.come_up(lane, t, i);
                }
            }
            Kind::Leader => {
                let Some(lane) = lane else { continue };
                if announces_leadership(&e.detail) {
                    let term = term_of(&e.detail);
                    let same = w.leading.get(&lane).is_some_and(|s| s.term == term);
                    if !same {
                        w.stop_leading(lane, t, i);
                        w.leading.insert(
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
                } else {
                    w.stop_leading(lane, t, i);
                }
            }
            _ => {}
        }
    }
    // Whatever is still open lasts until the end of the run.
    let end = end_ms.max(events.last().map(|e| e.t_ms).unwrap_or(0));
    let mut open: Vec<Band> = std::mem::take(&mut w.partitions);
    open.extend(std::mem::take(&mut w.holds).into_values());
    open.extend(std::mem::take(&mut w.latencies).into_values());
    open.extend(std::mem::take(&mut w.stalls).into_values());
    open.extend(w.heal.take());
    for band in open {
        w.close(band, end, None);
    }
    for mut span in std::mem::take(&mut w.down).into_values() {
        span.end_ms = end;
        w.out.down.push(span);
    }
    for mut span in std::mem::take(&mut w.leading).into_values() {
        span.end_ms = end;
        w.out.leading.push(span);
    }
    let mut out = w.out;
    // One stable order, whatever order intervals closed in.
    out.bands
        .sort_by_key(|b| (b.start_ms, b.opened_by, b.kind, b.lanes.clone()));
    out.down.sort_by_key(|s| (s.start_ms, s.lane));
    out.leading.sort_by_key(|s| (s.start_ms, s.lane));
    out
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

/// "A and B" -> the two lanes, lower first.
fn pair_of(text: &str, lane_of: &impl Fn(&str) -> Option<usize>) -> Option<(usize, usize)> {
    let (a, b) = text.split_once(" and ")?;
    let (a, b) = (lane_of(a.trim())?, lane_of(b.trim())?);
    Some((a.min(b), a.max(b)))
}

/// A leader event whose first word says the node now leads ("leader term 3",
/// "leading ..."); any other leader event on that node ends its leadership.
pub fn announces_leadership(detail: &str) -> bool {
    let first = detail
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    first == "leader" || first == "leading"
}

/// The number after the word `term`, if any.
pub fn term_of(detail: &str) -> Option<u64> {
    let mut words = detail.split_whitespace();
    while let Some(word) = words.next() {
        if word.eq_ignore_ascii_case("term") {
            return words
                .next()?
                .trim_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t_ms: u64, node: Option<&str>, kind: Kind, detail: &str) -> Event {
        Event {
            t_ms,
            node: node.map(str::to_string),
            kind,
            detail: detail.into(),
            keys: vec![],
            line: None,
            step: None,
        }
    }

    fn names() -> Vec<String> {
        ["n1", "n2", "n3", "n4"].map(String::from).to_vec()
    }

    #[test]
    fn partitions_holds_latency_and_stalls_become_bands() {
        let trail = vec![
            ev(
                10,
                None,
                Kind::Network,
                "partition n3 <-/-> n1, n3 <-/-> n2",
            ),
            ev(20, None, Kind::Network, "hold messages between n1 and n4"),
            ev(
                25,
                Some("n2"),
                Kind::FailPointHit,
                "apply fired: stall 50ms",
            ),
            ev(
                30,
                Some("n4"),
                Kind::FailPointHit,
                "flush fired: stall until release",
            ),
            ev(35, None, Kind::Network, "latency 20ms between n2 and n1"),
            ev(
                40,
                None,
                Kind::Network,
                "release messages between n4 and n1",
            ),
            ev(50, None, Kind::Network, "heal: repaired 2 cut link(s)"),
            ev(
                60,
                Some("n4"),
                Kind::FailPointRelease,
                "flush: released 1 stalled task(s)",
            ),
            ev(
                70,
                Some("n4"),
                Kind::FailPointHit,
                "flush fired: stall until release",
            ),
            ev(80, None, Kind::Heal, "heal: repaired 0 cut(s), ..."),
            ev(95, None, Kind::Heal, "heal: replicas settled"),
        ];
        let d = derive(&trail, &names(), 100);
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
        assert_eq!(d.bands[0].label, "n3 | n1, n2");
        assert_eq!(d.bands[0].links, vec![(2, 0), (0, 2), (2, 1), (1, 2)]);
        assert_eq!(d.bands[1].links, vec![(0, 3), (3, 0)]);
    }

    #[test]
    fn open_bands_last_until_the_end_and_oneway_cuts_count() {
        let trail = vec![
            ev(5, None, Kind::Network, "partition n1 -/-> n2, n1 -/-> n3"),
            ev(
                6,
                None,
                Kind::Network,
                "partition n1 <-/-> n3, n1 <-/-> n4, n2 <-/-> n3, n2 <-/-> n4",
            ),
            ev(7, None, Kind::Network, "partition n1 <-/-> n2, n2 <-/-> n3"),
        ];
        let d = derive(&trail, &names(), 40);
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
    fn crashes_stops_and_restarts_are_down_spans() {
        let trail = vec![
            ev(1, Some("n1"), Kind::Leader, "leader term 1"),
            ev(10, Some("n1"), Kind::Crash, "crash (unsynced writes lost)"),
            ev(12, Some("n1"), Kind::Crash, "crash: already down"),
            ev(
                20,
                Some("n1"),
                Kind::Restart,
                "restart: start from durable state (was down)",
            ),
            ev(30, Some("n2"), Kind::Stop, "stop: clean shutdown requested"),
            ev(33, Some("n2"), Kind::Stop, "stopped cleanly"),
            ev(
                40,
                Some("n3"),
                Kind::Restart,
                "restart: crash, then start from durable state",
            ),
            ev(
                50,
                Some("n2"),
                Kind::Start,
                "heal: start from durable state",
            ),
            ev(60, Some("n4"), Kind::Crash, "process exited: disk full"),
        ];
        let d = derive(&trail, &names(), 90);
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
        let trail = vec![
            ev(1, Some("n1"), Kind::Leader, "candidate term 1"),
            ev(2, Some("n1"), Kind::Leader, "leader term 1"),
            ev(3, Some("n1"), Kind::Leader, "leader term 1 (lease renewed)"),
            ev(9, Some("n1"), Kind::Leader, "follower term 2"),
            ev(9, Some("n2"), Kind::Leader, "leader term 2"),
        ];
        let d = derive(&trail, &names(), 20);
        let spans: Vec<(usize, u64, u64, Option<u64>)> = d
            .leading
            .iter()
            .map(|s| (s.lane, s.start_ms, s.end_ms, s.term))
            .collect();
        assert_eq!(spans, vec![(0, 2, 9, Some(1)), (1, 9, 20, Some(2))]);
        assert_eq!(term_of("follower term 11 leader n1"), Some(11));
        assert_eq!(term_of("no term here"), None);
        assert!(announces_leadership("Leading epoch 4"));
        assert!(!announces_leadership("follower term 1 leader n3"));
    }

    #[test]
    fn unknown_nodes_and_unparsed_details_draw_no_band() {
        let trail = vec![
            ev(1, None, Kind::Network, "partition x9 <-/-> y9"),
            ev(2, None, Kind::Network, "something new"),
            ev(3, Some("zz"), Kind::Crash, "crash"),
        ];
        let d = derive(&trail, &names(), 10);
        // Still shown, across every lane (an empty lane list means all lanes).
        assert_eq!(d.bands.len(), 1);
        assert!(d.bands[0].lanes.is_empty());
        assert!(d.down.is_empty());
    }
}
