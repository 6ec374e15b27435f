//! Geometry: the columns and their x positions, the rows (the [`Scale`]), the
//! arrows merged from message buckets, and how a row's text is fitted to its line.

use super::classes::priority;
use crate::base::trail::Event;
use crate::report::html::derive::{BandKind, Derived};
use crate::report::html::scale::Scale;
use crate::sim::runner::env::MESSAGE_BUCKET_MS;
use crate::sim::runner::RunResult;
use std::collections::BTreeMap;

pub(super) const TOP: f64 = 64.0;
pub(super) const AXIS_W: f64 = 84.0;
const HARNESS_W: f64 = 70.0;
const ANNOT_GAP: f64 = 22.0;
const ANNOT_W: f64 = 500.0;
pub(super) const SPREAD_PX: f64 = 11.0;
/// Marks drawn one by one in a row of one lane; more become one aggregate mark.
pub const GROUP_SHOWN_MAX: usize = 4;
pub const ARROWS_MAX: usize = 1500;
pub const OP_SPANS_MAX: usize = 2000;
/// Events listed in an aggregate mark's tooltip.
pub(super) const TIP_EVENTS_MAX: usize = 8;
/// Trail indices an aggregate mark carries (for the jump to the table).
pub(super) const AGG_INDICES_MAX: usize = 64;
const ANNOT_CHARS_MAX: usize = 72;
const ANNOT_ITEM_MIN: usize = 22;

/// Where a mark goes: the harness column (events with no node: steps, network
/// faults, checks, the heal phase) or a node's lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Col {
    Harness,
    Lane(usize),
}

pub(super) struct Layout {
    pub(super) lanes: usize,
    pub(super) lane_w: f64,
}

impl Layout {
    pub(super) fn new(lanes: usize) -> Layout {
        let lane_w = (560.0 / lanes.max(1) as f64).clamp(64.0, 180.0);
        Layout { lanes, lane_w }
    }
    pub(super) fn x(&self, col: Col) -> f64 {
        match col {
            Col::Harness => AXIS_W + HARNESS_W / 2.0,
            Col::Lane(i) => AXIS_W + HARNESS_W + self.lane_w * (i as f64 + 0.5),
        }
    }
    pub(super) fn lanes_right(&self) -> f64 {
        AXIS_W + HARNESS_W + self.lane_w * self.lanes as f64
    }
    pub(super) fn annot_x(&self) -> f64 {
        self.lanes_right() + ANNOT_GAP
    }
    pub(super) fn width(&self) -> f64 {
        self.annot_x() + ANNOT_W
    }
    /// The left edge of a lane's bands.
    pub(super) fn col_left(&self, lane: usize) -> f64 {
        self.x(Col::Lane(lane)) - self.lane_w / 2.0 + 3.0
    }
}

fn col_of(e: &Event, nodes: &[String]) -> Col {
    e.node
        .as_deref()
        .and_then(|n| nodes.iter().position(|x| x == n))
        .map(Col::Lane)
        .unwrap_or(Col::Harness)
}

pub(super) fn f(x: f64) -> String {
    // One decimal is plenty for screen coordinates and keeps the file small.
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// Arrows: messages from one lane to another over a window of time.
pub(super) struct Arrow {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) t0: u64,
    pub(super) t1: u64,
    pub(super) count: u64,
    /// Of `count`, sent while the link was cut (dropped) or held.
    pub(super) dropped: u64,
    pub(super) held: u64,
    pub(super) kinds: BTreeMap<String, u64>,
    /// The state of the link for the last bucket merged in.
    pub(super) last_link: Option<BandKind>,
    /// When the cut or hold ended (a pure cut/held arrow is not drawn past it).
    pub(super) link_end_ms: u64,
}

impl Arrow {
    /// All of its messages were dropped (`Partition`) or held (`Hold`); `None`
    /// when some or all were delivered normally.
    pub(super) fn link(&self) -> Option<BandKind> {
        if self.dropped == self.count {
            Some(BandKind::Partition)
        } else if self.held == self.count {
            Some(BandKind::Hold)
        } else {
            None
        }
    }
}

/// Was the link `from -> to` cut or held at `t_ms`? Messages are counted when a node
/// sends them, so without this an arrow across a partition would look delivered.
fn link_state(d: &Derived, from: usize, to: usize, t_ms: u64) -> Option<(BandKind, u64)> {
    d.bands
        .iter()
        .filter(|b| matches!(b.kind, BandKind::Partition | BandKind::Hold))
        .filter(|b| b.start_ms <= t_ms && t_ms < b.end_ms)
        .find(|b| b.links.contains(&(from, to)))
        .map(|b| (b.kind, b.end_ms))
}

/// Merge the message buckets per (from, to) pair: consecutive buckets whose rows lie
/// closer than `min_dy` pixels become one arrow; `min_dy` doubles until at most
/// [`ARROWS_MAX`] arrows remain. First without merging across a cut or hold
/// starting or ending; if a run flips its links so often that this is not enough,
/// across them too (such arrows count their dropped and held messages in the
/// tooltip). Returns the arrows and the number of messages whose endpoints are not
/// nodes of the run (not drawn).
pub(super) fn arrows(r: &RunResult, d: &Derived, scale: &Scale) -> (Vec<Arrow>, u64) {
    let lane_of = |name: &str| r.nodes.iter().position(|n| n.name == name);
    // (from lane, to lane) -> its buckets: (start ms, message kind, count).
    type Buckets<'r> = Vec<(u64, &'r str, u64)>;
    let mut per_pair: BTreeMap<(usize, usize), Buckets> = BTreeMap::new();
    let mut skipped = 0;
    for m in &r.messages {
        match (lane_of(&m.from), lane_of(&m.to)) {
            (Some(a), Some(b)) if a != b => {
                per_pair
                    .entry((a, b))
                    .or_default()
                    .push((m.t_ms, m.kind.as_str(), m.count as u64))
            }
            _ => skipped += m.count as u64,
        }
    }
    for buckets in per_pair.values_mut() {
        buckets.sort_by_key(|b| b.0);
    }
    let mut min_dy = 28.0;
    let mut strict = true;
    loop {
        let mut out: Vec<Arrow> = Vec::new();
        for (&(from, to), buckets) in &per_pair {
            let mut current: Option<Arrow> = None;
            for &(t, kind, count) in buckets {
                let state = link_state(d, from, to, t);
                let link = state.map(|s| s.0);
                // Dropped messages must not hide in an arrow that looks delivered:
                // while `strict`, a change of the link's state starts a new arrow.
                let merge = current.as_ref().is_some_and(|a| {
                    (!strict || a.last_link == link) && scale.y(t) - scale.y(a.t0) < min_dy
                });
                if !merge {
                    out.extend(current.take());
                    current = Some(Arrow {
                        from,
                        to,
                        t0: t,
                        t1: t,
                        count: 0,
                        dropped: 0,
                        held: 0,
                        kinds: BTreeMap::new(),
                        last_link: link,
                        link_end_ms: u64::MAX,
                    });
                }
                let a = current.as_mut().expect("set above");
                a.t1 = t + MESSAGE_BUCKET_MS;
                a.count += count;
                match link {
                    Some(BandKind::Partition) => a.dropped += count,
                    Some(_) => a.held += count,
                    None => {}
                }
                a.last_link = link;
                if let Some((_, end)) = state {
                    a.link_end_ms = end;
                }
                *a.kinds.entry(kind.to_string()).or_default() += count;
            }
            out.extend(current);
        }
        if out.len() <= ARROWS_MAX || (!strict && min_dy > 1.0e7) {
            out.sort_by_key(|a| (a.t0, a.from, a.to));
            return (out, skipped);
        }
        if strict && min_dy > 8_192.0 {
            // Taller than any diagram: strict merging cannot get below the cap.
            strict = false;
            min_dy = 28.0;
        } else {
            min_dy *= 2.0;
        }
    }
}

/// How many of a row's annotation items to show and the most characters each may
/// take, so the line fits [`ANNOT_CHARS_MAX`]: as many items as can get at least
/// [`ANNOT_ITEM_MIN`] characters (keeping room for "(+N more)" when some are left
/// out), short items whole, long ones sharing what is left equally.
pub(super) fn annotation_fit(lens: &[usize]) -> (usize, usize) {
    const SEP: usize = 3;
    const MORE: usize = 10;
    let budget = |k: usize| {
        let more = if k < lens.len() { MORE } else { 0 };
        ANNOT_CHARS_MAX.saturating_sub(more + SEP * k.saturating_sub(1))
    };
    let mut k = lens.len();
    while k > 1 && budget(k) / k < ANNOT_ITEM_MIN {
        k -= 1;
    }
    // Water-filling: the largest cap such that the capped lengths fit the budget.
    let mut sorted: Vec<usize> = lens[..k].to_vec();
    sorted.sort_unstable();
    let mut left = budget(k);
    let mut cap = usize::MAX;
    for (n, &len) in sorted.iter().enumerate() {
        let remaining = sorted.len() - n;
        if len * remaining <= left {
            left -= len;
        } else {
            cap = left / remaining;
            break;
        }
    }
    (k, cap)
}

/// What every part of the drawing reads: the run, what was derived from it, the
/// columns and the rows.
pub(super) struct View<'a> {
    pub(super) r: &'a RunResult,
    pub(super) d: &'a Derived,
    pub(super) events: &'a [Event],
    pub(super) names: Vec<String>,
    pub(super) layout: Layout,
    pub(super) scale: Scale,
    /// Events grouped by (row, column): the marks drawn side by side in one place,
    /// each group in drawing order (most prominent first, then trail order).
    pub(super) groups: BTreeMap<(usize, Col), Vec<usize>>,
}

impl<'a> View<'a> {
    pub(super) fn new(r: &'a RunResult, d: &'a Derived) -> View<'a> {
        let events = &r.trail.events;
        let names: Vec<String> = r.nodes.iter().map(|n| n.name.clone()).collect();
        let layout = Layout::new(names.len());
        let mut times: Vec<u64> = events.iter().map(|e| e.t_ms).collect();
        times.extend(d.bands.iter().flat_map(|b| [b.start_ms, b.end_ms]));
        let scale = Scale::new(&times, r.sim_elapsed_ms, TOP);
        let mut groups: BTreeMap<(usize, Col), Vec<usize>> = BTreeMap::new();
        for (i, e) in events.iter().enumerate() {
            groups
                .entry((scale.slot_of(e.t_ms), col_of(e, &names)))
                .or_default()
                .push(i);
        }
        for members in groups.values_mut() {
            members.sort_by_key(|&i| (priority(&events[i]), i));
        }
        View {
            r,
            d,
            events,
            names,
            layout,
            scale,
            groups,
        }
    }

    /// How far right of its column's centre a row's marks reach.
    pub(super) fn reach(&self, slot: usize, col: Col) -> f64 {
        match self.groups.get(&(slot, col)).map(Vec::len).unwrap_or(0) {
            0 => 0.0,
            n if n > GROUP_SHOWN_MAX => (GROUP_SHOWN_MAX as f64 - 1.0) / 2.0 * SPREAD_PX + 21.0,
            n => (n as f64 - 1.0) / 2.0 * SPREAD_PX + 6.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_keep_short_items_whole_and_share_the_rest() {
        // Both fit: nothing is cut.
        assert_eq!(annotation_fit(&[35, 23]), (2, usize::MAX));
        assert_eq!(annotation_fit(&[100]), (1, ANNOT_CHARS_MAX));
        // A short item stays whole; the long one gets what is left.
        assert_eq!(annotation_fit(&[10, 100]), (2, 59));
        assert_eq!(annotation_fit(&[100, 100]), (2, 34));
        // Too many: as many as get a readable share, with room for "(+N more)".
        assert_eq!(annotation_fit(&[100; 5]), (2, 29));
        assert_eq!(annotation_fit(&[]), (0, usize::MAX));
    }
}
