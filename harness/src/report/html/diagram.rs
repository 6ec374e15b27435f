//! The space-time diagram: one lane per node, simulated time running down.
//!
//! What is drawn, back to front:
//! - bands: partitions, holds, latency changes, fail-point stalls, the heal phase
//!   (from [`derive`](super::derive)), and hatched "down" spans where a node was
//!   crashed or stopped (its lane line is broken there);
//! - leader spans: a thick gold line while a node leads;
//! - messages between nodes as arrows, from the per-100 ms buckets the runner
//!   records at the model boundary, merged per node pair so that at most
//!   [`ARROWS_MAX`] arrows are drawn;
//! - client operations as spans from invocation to result;
//! - one mark per trail event (or one aggregate mark when many share a row and a
//!   lane), each carrying its trail index in `data-ev` and its event text in a
//!   `<title>` (the page's script turns titles into a tooltip and clicks into a
//!   jump to the trail table);
//! - the time axis on the left and, on the right, one line of text per row naming
//!   what happened there, so the picture reads without hovering.
//!
//! The size is bounded whatever the run: rows by [`scale`](super::scale), marks by
//! rows x lanes x [`GROUP_SHOWN_MAX`], arrows by [`ARROWS_MAX`], op spans by
//! [`OP_SPANS_MAX`].

use super::derive::{announces_leadership, role_of, Band, BandKind, Derived};
use super::escape::{clip, esc};
use super::scale::Scale;
use super::{fmt_dur, fmt_ms};
use crate::action::{Action, ActionResult};
use crate::runner::env::MESSAGE_BUCKET_MS;
use crate::runner::RunResult;
use crate::trail::{Data, Event, Kind, OpEndKind};
use faultline_api::Role;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

const TOP: f64 = 64.0;
const AXIS_W: f64 = 84.0;
const HARNESS_W: f64 = 70.0;
const ANNOT_GAP: f64 = 22.0;
const ANNOT_W: f64 = 500.0;
const SPREAD_PX: f64 = 11.0;
/// Marks drawn one by one in a row of one lane; more become one aggregate mark.
pub const GROUP_SHOWN_MAX: usize = 4;
pub const ARROWS_MAX: usize = 1500;
pub const OP_SPANS_MAX: usize = 2000;
/// Events listed in an aggregate mark's tooltip.
const TIP_EVENTS_MAX: usize = 8;
/// Trail indices an aggregate mark carries (for the jump to the table).
const AGG_INDICES_MAX: usize = 64;
const ANNOT_CHARS_MAX: usize = 72;
const ANNOT_ITEM_MIN: usize = 22;

/// Where a mark goes: the harness column (events with no node: steps, network
/// faults, checks, the heal phase) or a node's lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Col {
    Harness,
    Lane(usize),
}

struct Layout {
    lanes: usize,
    lane_w: f64,
}

impl Layout {
    fn new(lanes: usize) -> Layout {
        let lane_w = (560.0 / lanes.max(1) as f64).clamp(64.0, 180.0);
        Layout { lanes, lane_w }
    }
    fn x(&self, col: Col) -> f64 {
        match col {
            Col::Harness => AXIS_W + HARNESS_W / 2.0,
            Col::Lane(i) => AXIS_W + HARNESS_W + self.lane_w * (i as f64 + 0.5),
        }
    }
    fn lanes_right(&self) -> f64 {
        AXIS_W + HARNESS_W + self.lane_w * self.lanes as f64
    }
    fn annot_x(&self) -> f64 {
        self.lanes_right() + ANNOT_GAP
    }
    fn width(&self) -> f64 {
        self.annot_x() + ANNOT_W
    }
    /// The left edge of a lane's bands.
    fn col_left(&self, lane: usize) -> f64 {
        self.x(Col::Lane(lane)) - self.lane_w / 2.0 + 3.0
    }
}

/// How prominent an event is: lower draws first in a crowded row and is named first
/// in the row's text. A `match` without a wildcard: a new event kind must be placed.
fn priority(e: &Event) -> u8 {
    match e.kind {
        Kind::Check if check_failed(e) => 0,
        Kind::Network
        | Kind::Crash
        | Kind::Restart
        | Kind::Stop
        | Kind::Start
        | Kind::Transfer
        | Kind::FailPointArm
        | Kind::Heal
        | Kind::Limit => 0,
        Kind::FailPointHit | Kind::FailPointRelease | Kind::FailPointClear | Kind::Check => 1,
        Kind::OpInvoke | Kind::OpOk | Kind::OpError | Kind::OpTimeout => 2,
        Kind::Leader if announces_leadership(e) => 3,
        Kind::Apply
        | Kind::Storage
        | Kind::Service
        | Kind::Submit
        | Kind::Exit
        | Kind::Probe
        | Kind::Note => 4,
        Kind::Leader => 5,
        Kind::Await | Kind::Sleep => 6,
    }
}

/// The symbol (in the SVG's `<defs>`) that marks an event.
pub fn symbol_of(e: &Event) -> &'static str {
    match e.kind {
        Kind::OpInvoke => "m-invoke",
        Kind::OpOk => "m-ok",
        Kind::OpError => "m-err",
        Kind::OpTimeout => "m-timeout",
        Kind::Network if repairs(e) => "m-net-heal",
        Kind::Network => "m-net",
        Kind::Crash => "m-crash",
        Kind::Restart => "m-restart",
        Kind::Stop => "m-stop",
        Kind::Start => "m-start",
        Kind::Transfer => "m-transfer",
        Kind::FailPointArm => "m-arm",
        Kind::FailPointHit if fired(e) => "m-hit",
        Kind::FailPointHit => "m-reach",
        Kind::FailPointClear | Kind::FailPointRelease => "m-fp-release",
        Kind::Sleep => "m-sleep",
        Kind::Await => "m-await",
        Kind::Check if !check_failed(e) => "m-check-ok",
        Kind::Check => "m-check-fail",
        Kind::Heal => "m-heal",
        Kind::Limit => "m-limit",
        Kind::Leader if announces_leadership(e) => "m-leader",
        Kind::Leader if role_of(e).is_some_and(|(r, _)| r == Role::Candidate) => "m-candidate",
        Kind::Leader => "m-follower",
        Kind::Apply => "m-apply",
        Kind::Storage => "m-storage",
        Kind::Service => "m-service",
        Kind::Submit => "m-submit",
        Kind::Exit => "m-exit",
        Kind::Probe => "m-probe",
        Kind::Note => "m-note",
    }
}

/// A mid-run check that found something.
pub fn check_failed(e: &Event) -> bool {
    matches!(&e.data, Data::Check(c) if !c.passed())
}

/// A fail-point hit that fired (not one the probability draw let pass).
fn fired(e: &Event) -> bool {
    matches!(&e.data, Data::FailPointHit(hit) if hit.fired.is_some())
}

/// A network action that repairs: a heal or a release of held messages.
fn repairs(e: &Event) -> bool {
    matches!(&e.data, Data::Action(a) if matches!(a.action, Action::Heal | Action::Release { .. }))
}

/// The op id of a client op's invocation or end, for pairing the two.
fn op_id(e: &Event) -> Option<u64> {
    if let Data::OpEnd(end) = &e.data {
        return Some(end.op);
    }
    let Data::Action(acted) = &e.data else {
        return None;
    };
    let (Action::Client { .. }, ActionResult::Sent { op }) = (&acted.action, &acted.result) else {
        return None;
    };
    Some(*op)
}

/// Faults and fail-point firings: what the report's reader looks for first.
pub fn is_fault_mark(e: &Event) -> bool {
    is_fault_kind(e.kind)
}

pub fn is_fault_kind(kind: Kind) -> bool {
    kind.is_fault() || kind == Kind::FailPointHit
}

/// The symbols, each centred on 0,0 with a transparent disc under it so small marks
/// are easy to hover. Also used by the legend.
pub const DEFS: &str = r##"<defs>
<pattern id="hatch" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="#f1f3f5"/><line x1="0" y1="0" x2="0" y2="7" stroke="#cfd5db" stroke-width="2.5"/></pattern>
<marker id="arrow" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#78909c"/></marker>
<marker id="arrow-cut" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M1,1 L7,7 M7,1 L1,7" stroke="#e53935" stroke-width="1.6"/></marker>
<marker id="arrow-held" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#8e24aa"/></marker>
<marker id="arrow-gold" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#b28704"/></marker>
<g id="m-invoke"><circle r="7.5" fill="transparent"/><circle r="3.6" fill="#fff" stroke="#455a64" stroke-width="1.6"/></g>
<g id="m-ok"><circle r="7.5" fill="transparent"/><circle r="4.6" fill="#2e7d32"/><path d="M-2.2,0.1 L-0.6,1.8 L2.4,-1.6" stroke="#fff" stroke-width="1.4" fill="none"/></g>
<g id="m-err"><circle r="7.5" fill="transparent"/><circle r="4.6" fill="#c62828"/><path d="M-1.9,-1.9 L1.9,1.9 M1.9,-1.9 L-1.9,1.9" stroke="#fff" stroke-width="1.4"/></g>
<g id="m-timeout"><circle r="7.5" fill="transparent"/><rect x="-4" y="-4" width="8" height="8" fill="#fff" stroke="#8d6e63" stroke-width="1.8"/><path d="M-1.6,-1.6 L1.6,1.6 M1.6,-1.6 L-1.6,1.6" stroke="#8d6e63" stroke-width="1.2"/></g>
<g id="m-net"><circle r="7.5" fill="transparent"/><path d="M0,-6 L6,0 L0,6 L-6,0 z" fill="#d32f2f"/></g>
<g id="m-net-heal"><circle r="7.5" fill="transparent"/><path d="M0,-6 L6,0 L0,6 L-6,0 z" fill="#2e7d32"/></g>
<g id="m-crash"><circle r="7.5" fill="transparent"/><path d="M-4.6,-4.6 L4.6,4.6 M4.6,-4.6 L-4.6,4.6" stroke="#c62828" stroke-width="2.8" stroke-linecap="round"/></g>
<g id="m-restart"><circle r="7.5" fill="transparent"/><path d="M3.9,-2.6 A4.6,4.6 0 1 0 4.4,1.6" fill="none" stroke="#1565c0" stroke-width="2"/><path d="M5.8,-5.2 L5.2,-0.6 L1.2,-2.8 z" fill="#1565c0"/></g>
<g id="m-stop"><circle r="7.5" fill="transparent"/><rect x="-4.2" y="-4.2" width="8.4" height="8.4" fill="#455a64"/></g>
<g id="m-start"><circle r="7.5" fill="transparent"/><path d="M0,-5.4 L5.2,4.4 L-5.2,4.4 z" fill="#2e7d32"/></g>
<g id="m-transfer"><circle r="7.5" fill="transparent"/><path d="M0,-5.5 L5.5,0 L0,5.5 L-5.5,0 z" fill="#fbc02d" stroke="#8d6e00" stroke-width="1"/></g>
<g id="m-arm"><circle r="7.5" fill="transparent"/><path d="M-2.6,5.5 L-2.6,-5.5 L4.6,-3 L-2.6,-0.4" fill="#ef6c00" stroke="#ef6c00" stroke-width="1.5" stroke-linejoin="round"/></g>
<g id="m-hit"><circle r="7.5" fill="transparent"/><path d="M1.8,-6.4 L-3.8,0.9 L-0.3,0.9 L-1.8,6.4 L3.8,-0.9 L0.3,-0.9 z" fill="#e64a19"/></g>
<g id="m-reach"><circle r="7.5" fill="transparent"/><circle r="3.2" fill="none" stroke="#e64a19" stroke-width="1.3" stroke-dasharray="1.6 1.4"/></g>
<g id="m-fp-release"><circle r="7.5" fill="transparent"/><circle r="4" fill="#fff" stroke="#ef6c00" stroke-width="2"/></g>
<g id="m-sleep"><circle r="7.5" fill="transparent"/><path d="M-4.5,0 L4.5,0" stroke="#90a4ae" stroke-width="1.6"/></g>
<g id="m-await"><circle r="7.5" fill="transparent"/><circle r="3.4" fill="#fff" stroke="#78909c" stroke-width="1.5"/></g>
<g id="m-check-ok"><circle r="7.5" fill="transparent"/><circle r="5.2" fill="#e8f5e9" stroke="#2e7d32" stroke-width="1.5"/><path d="M-2.3,0 L-0.7,1.7 L2.4,-1.7" stroke="#2e7d32" stroke-width="1.5" fill="none"/></g>
<g id="m-check-fail"><circle r="7.5" fill="transparent"/><circle r="5.4" fill="#c62828"/><path d="M0,-3 L0,0.8 M0,2.7 L0,2.8" stroke="#fff" stroke-width="1.8" stroke-linecap="round"/></g>
<g id="m-heal"><circle r="7.5" fill="transparent"/><path d="M-1.6,-5.2 h3.2 v3.6 h3.6 v3.2 h-3.6 v3.6 h-3.2 v-3.6 h-3.6 v-3.2 h3.6 z" fill="#2e7d32"/></g>
<g id="m-limit"><circle r="7.5" fill="transparent"/><path d="M0,-5.8 L5.8,4.6 L-5.8,4.6 z" fill="#c62828"/></g>
<g id="m-leader"><circle r="7.5" fill="transparent"/><path d="M0,-6.4 L1.63,-2.24 L6.09,-1.98 L2.64,0.86 L3.76,5.18 L0,2.77 L-3.76,5.18 L-2.64,0.86 L-6.09,-1.98 L-1.63,-2.24 z" fill="#fbc02d" stroke="#9a7400" stroke-width="0.9" stroke-linejoin="round"/></g>
<g id="m-candidate"><circle r="7.5" fill="transparent"/><circle r="3" fill="#fff" stroke="#b08900" stroke-width="1.4"/></g>
<g id="m-follower"><circle r="7.5" fill="transparent"/><circle r="2" fill="#b0bec5"/></g>
<g id="m-apply"><circle r="7.5" fill="transparent"/><circle r="3" fill="#00897b"/></g>
<g id="m-storage"><circle r="7.5" fill="transparent"/><rect x="-3.2" y="-3.2" width="6.4" height="6.4" fill="#6d4c41"/></g>
<g id="m-service"><circle r="7.5" fill="transparent"/><path d="M-3.2,-3.6 L4,0 L-3.2,3.6 z" fill="#00838f"/></g>
<g id="m-submit"><circle r="7.5" fill="transparent"/><circle r="3" fill="#3949ab"/></g>
<g id="m-exit"><circle r="7.5" fill="transparent"/><rect x="-3.8" y="-3.8" width="7.6" height="7.6" fill="#b71c1c"/></g>
<g id="m-probe"><circle r="7.5" fill="transparent"/><path d="M0,-4 L4,0 L0,4 L-4,0 z" fill="none" stroke="#6a1b9a" stroke-width="1.5"/></g>
<g id="m-note"><circle r="7.5" fill="transparent"/><circle r="2.6" fill="#78909c"/></g>
</defs>"##;

/// The legend's entries: symbol, words. Shown above the diagram.
pub const LEGEND: &[(&str, &str)] = &[
    ("m-invoke", "client op sent"),
    ("m-ok", "op ok"),
    ("m-err", "op error"),
    ("m-timeout", "op timed out"),
    ("m-net", "partition / hold / latency"),
    ("m-net-heal", "network repaired"),
    ("m-crash", "crash"),
    ("m-restart", "restart"),
    ("m-stop", "stop"),
    ("m-start", "start"),
    ("m-transfer", "leadership transfer"),
    ("m-arm", "fail point armed"),
    ("m-hit", "fail point fired"),
    ("m-fp-release", "fail point released / cleared"),
    ("m-leader", "became leader"),
    ("m-candidate", "candidate"),
    ("m-follower", "follower"),
    ("m-apply", "apply"),
    ("m-storage", "storage"),
    ("m-service", "service"),
    ("m-probe", "probe reached"),
    ("m-check-ok", "check passed"),
    ("m-check-fail", "check failed"),
    ("m-heal", "heal phase"),
    ("m-limit", "limit hit"),
];

fn col_of(e: &Event, nodes: &[String]) -> Col {
    e.node
        .as_deref()
        .and_then(|n| nodes.iter().position(|x| x == n))
        .map(Col::Lane)
        .unwrap_or(Col::Harness)
}

/// One event as tooltip text.
pub fn event_text(i: usize, e: &Event) -> String {
    let mut text = format!(
        "#{i} · {} · {} · {}\n{}",
        fmt_ms(e.t_ms),
        e.node.as_deref().unwrap_or("harness"),
        e.kind.name(),
        e.detail
    );
    if !e.keys().is_empty() {
        text.push_str(&format!("\nkeys: {}", e.keys().join(", ")));
    }
    if let Some(line) = e.line {
        text.push_str(&format!("\nscenario line {line}"));
    }
    text
}

fn f(x: f64) -> String {
    // One decimal is plenty for screen coordinates and keeps the file small.
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// Arrows: messages from one lane to another over a window of time.
struct Arrow {
    from: usize,
    to: usize,
    t0: u64,
    t1: u64,
    count: u64,
    /// Of `count`, sent while the link was cut (dropped) or held.
    dropped: u64,
    held: u64,
    kinds: BTreeMap<String, u64>,
    /// The state of the link for the last bucket merged in.
    last_link: Option<BandKind>,
    /// When the cut or hold ended (a pure cut/held arrow is not drawn past it).
    link_end_ms: u64,
}

impl Arrow {
    /// All of its messages were dropped (`Partition`) or held (`Hold`); `None`
    /// when some or all were delivered normally.
    fn link(&self) -> Option<BandKind> {
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
fn arrows(r: &RunResult, d: &Derived, scale: &Scale) -> (Vec<Arrow>, u64) {
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
fn annotation_fit(lens: &[usize]) -> (usize, usize) {
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

/// Everything the page needs from the diagram.
pub struct Rendered {
    pub svg: String,
    pub arrows: usize,
    /// Arrows of messages sent on a cut link (dropped).
    pub arrows_cut: usize,
    /// Arrows of messages sent on a held link.
    pub arrows_held: usize,
    /// Client ops drawn as spans (those answered within their own row are not).
    pub op_spans: usize,
    pub messages_skipped: u64,
    pub scale: Scale,
}

/// What every part of the drawing reads: the run, what was derived from it, the
/// columns and the rows.
struct View<'a> {
    r: &'a RunResult,
    d: &'a Derived,
    events: &'a [Event],
    names: Vec<String>,
    layout: Layout,
    scale: Scale,
    /// Events grouped by (row, column): the marks drawn side by side in one place,
    /// each group in drawing order (most prominent first, then trail order).
    groups: BTreeMap<(usize, Col), Vec<usize>>,
}

impl<'a> View<'a> {
    fn new(r: &'a RunResult, d: &'a Derived) -> View<'a> {
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
    fn reach(&self, slot: usize, col: Col) -> f64 {
        match self.groups.get(&(slot, col)).map(Vec::len).unwrap_or(0) {
            0 => 0.0,
            n if n > GROUP_SHOWN_MAX => (GROUP_SHOWN_MAX as f64 - 1.0) / 2.0 * SPREAD_PX + 21.0,
            n => (n as f64 - 1.0) / 2.0 * SPREAD_PX + 6.0,
        }
    }
}

/// Render the diagram. `touched` are trail indices to ring (events that touched
/// the divergent key). Drawn back to front, one part per function below.
pub fn render(r: &RunResult, d: &Derived, touched: &BTreeSet<usize>) -> Rendered {
    let v = View::new(r, d);
    let mut s = String::with_capacity(64 * 1024);
    // Labels of bands and leader terms go on top of everything (written last), so
    // no lane line or arrow crosses them.
    let mut labels = String::new();
    open_svg(&v, &mut s);
    axis(&v, &mut s);
    column_heads(&v, &mut s);
    bands(&v, &mut s, &mut labels);
    breaks(&v, &mut s);
    lanes(&v, &mut s, &mut labels);
    let (arrows, messages_skipped) = messages(&v, &mut s);
    transfers(&v, &mut s);
    let op_spans = op_spans(&v, &mut s);
    marks(&v, touched, &mut s);
    let _ = write!(s, r#"<g class="labels">{labels}</g>"#);
    annotations(&v, &mut s);
    s.push_str("</svg>");
    Rendered {
        svg: s,
        op_spans,
        arrows: arrows.len(),
        arrows_cut: arrows
            .iter()
            .filter(|a| a.link() == Some(BandKind::Partition))
            .count(),
        arrows_held: arrows
            .iter()
            .filter(|a| a.link() == Some(BandKind::Hold))
            .count(),
        messages_skipped,
        scale: v.scale,
    }
}

/// The `<svg>` element, sized to the layout and the rows, and its symbols.
fn open_svg(v: &View, s: &mut String) {
    let width = v.layout.width();
    let height = v.scale.y_end + 30.0;
    let _ = write!(
        s,
        r#"<svg class="diagram" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="space-time diagram: one lane per node, time running down">"#,
        w = f(width),
        h = f(height)
    );
    s.push_str(DEFS);
}

/// Row grid and time axis: a label wherever there is room for one, and the end line.
fn axis(v: &View, s: &mut String) {
    let View { layout, scale, .. } = v;
    let (lanes_left, lanes_right) = (AXIS_W, layout.lanes_right());
    s.push_str(r#"<g class="axis">"#);
    let mut last_label = f64::NEG_INFINITY;
    for (i, &t) in scale.slots.iter().enumerate() {
        let y = scale.ys[i];
        if y - last_label >= 13.0 {
            last_label = y;
            let _ = write!(
                s,
                r#"<line class="grid" x1="{}" x2="{}" y1="{y}" y2="{y}"/><text class="tick" x="{}" y="{}">{}</text>"#,
                f(lanes_left),
                f(lanes_right),
                f(AXIS_W - 8.0),
                f(y + 3.5),
                esc(&fmt_ms(t)),
                y = f(y)
            );
        }
    }
    // The end line; its time is printed unless the last row already shows it.
    let end_tick = if scale.slots.last() == Some(&scale.end_ms) {
        String::new()
    } else {
        esc(&fmt_ms(scale.end_ms))
    };
    let _ = write!(
        s,
        r#"<line class="endline" x1="{}" x2="{}" y1="{y}" y2="{y}"/><text class="tick end" x="{}" y="{}">{end_tick}</text><text class="ann faint" x="{}" y="{}">end of run ({})</text></g>"#,
        f(lanes_left),
        f(lanes_right),
        f(AXIS_W - 8.0),
        f(scale.y_end + 3.5),
        f(layout.annot_x()),
        f(scale.y_end + 3.5),
        esc(&fmt_ms(scale.end_ms)),
        y = f(scale.y_end)
    );
}

/// Column headers: the harness, and each node with its state at the end.
fn column_heads(v: &View, s: &mut String) {
    let View { r, layout, .. } = v;
    let _ = write!(
        s,
        r#"<text class="colhead harness" x="{}" y="{}">harness</text><text class="colsub" x="{}" y="{}">steps, network</text>"#,
        f(layout.x(Col::Harness)),
        f(TOP - 34.0),
        f(layout.x(Col::Harness)),
        f(TOP - 20.0)
    );
    for (i, n) in r.nodes.iter().enumerate() {
        let x = layout.x(Col::Lane(i));
        let obs = &n.observation;
        let end_state = if !n.up {
            "down at end".to_string()
        } else {
            match (&obs.role, obs.term) {
                (Some(role), Some(term)) => format!("{role} · term {term}"),
                (Some(role), None) => role.clone(),
                (None, _) => n.role.clone(),
            }
        };
        let _ = write!(
            s,
            r#"<text class="colhead" x="{x}" y="{}">{}</text><text class="colsub" x="{x}" y="{}">{}</text>"#,
            f(TOP - 34.0),
            esc(&clip(&n.name, 22)),
            f(TOP - 20.0),
            esc(&clip(&end_state, 26)),
            x = f(x)
        );
    }
}

/// Down spans (hatched), then fault bands, then the heal phase.
fn bands(v: &View, s: &mut String, labels: &mut String) {
    s.push_str(r#"<g class="bands">"#);
    down_spans(v, s);
    for band in &v.d.bands {
        fault_band(v, band, s, labels);
    }
    s.push_str("</g>");
}

/// Hatched spans where a node was crashed or stopped.
fn down_spans(v: &View, s: &mut String) {
    let View {
        d,
        names,
        layout,
        scale,
        ..
    } = v;
    for span in &d.down {
        let (y0, y1) = (scale.y(span.start_ms), scale.y(span.end_ms));
        let tip = format!(
            "{} down from {} to {}{} ({})",
            names[span.lane],
            fmt_ms(span.start_ms),
            fmt_ms(span.end_ms),
            if span.closed_by.is_none() {
                " (end of run)"
            } else {
                ""
            },
            fmt_dur(span.end_ms - span.start_ms)
        );
        let _ = write!(
            s,
            r#"<rect class="band band-down" data-ev="{}" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>"#,
            span.opened_by,
            f(layout.col_left(span.lane)),
            f(y0),
            f(layout.lane_w - 6.0),
            f((y1 - y0).max(2.0)),
            esc(&tip)
        );
    }
}

/// One fault band (a partition, a hold, a latency change, a stall, the heal
/// phase): its rectangles, its tooltip and its label.
fn fault_band(v: &View, band: &Band, s: &mut String, labels: &mut String) {
    let View { events, scale, .. } = v;
    let (y0, y1) = (scale.y(band.start_ms), scale.y(band.end_ms));
    let h = (y1 - y0).max(3.0);
    let until = match band.closed_by {
        Some(i) => format!("until {} ({})", fmt_ms(band.end_ms), events[i].detail),
        None if band.kind == BandKind::Stall && band.end_ms < scale.end_ms => {
            format!("until {}", fmt_ms(band.end_ms))
        }
        None => format!("until the end of the run ({})", fmt_ms(band.end_ms)),
    };
    let tip = format!(
        "{}\nfrom {} {until}; {}",
        band.label,
        fmt_ms(band.start_ms),
        fmt_dur(band.end_ms - band.start_ms)
    );
    let class = format!("band band-{}", band.kind.name());
    let columns = band_columns(v, band);
    let _ = write!(s, r#"<g class="{class}" data-ev="{}">"#, band.opened_by);
    let _ = write!(s, "<title>{}</title>", esc(&tip));
    for (x, w) in &columns {
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="{}" height="{}"/>"#,
            f(*x),
            f(y0),
            f(*w),
            f(h)
        );
    }
    if h >= 14.0 {
        band_label(band, &columns, y0, labels);
    }
    s.push_str("</g>");
}

/// The band's rectangles, as (x, width): bands with no lanes (the heal phase, or
/// a partition whose nodes could not be read) span every column; adjacent lanes
/// share one rectangle, so a band across n1..n3 reads as one.
fn band_columns(v: &View, band: &Band) -> Vec<(f64, f64)> {
    let layout = &v.layout;
    let (lanes_left, lanes_right) = (AXIS_W, layout.lanes_right());
    if band.lanes.is_empty() {
        vec![(lanes_left + 2.0, lanes_right - lanes_left - 4.0)]
    } else {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &l in &band.lanes {
            match runs.last_mut() {
                Some(run) if run.1 + 1 == l => run.1 = l,
                _ => runs.push((l, l)),
            }
        }
        runs.iter()
            .map(|&(a, b)| (layout.col_left(a), layout.lane_w * (b - a + 1) as f64 - 6.0))
            .collect()
    }
}

/// A short label inside the band's top corner, so it reads without hovering:
/// the partition's sides, the held link, the stalled point. Bands over every
/// column are labelled on the right, away from the harness column's marks.
fn band_label(band: &Band, columns: &[(f64, f64)], y0: f64, labels: &mut String) {
    let word = match band.kind {
        BandKind::Partition => format!("partition {}", band.label),
        BandKind::Hold => "held".to_string(),
        BandKind::Latency => "slow link".to_string(),
        BandKind::Stall => "stalled".to_string(),
        BandKind::Heal => "heal phase".to_string(),
    };
    let (x, anchor) = if band.lanes.is_empty() {
        (columns[0].0 + columns[0].1 - 5.0, "end")
    } else {
        (columns[0].0 + 4.0, "start")
    };
    let room = (columns[0].1 / 6.2) as usize;
    let _ = write!(
        labels,
        r#"<text class="bandlabel bl-{}" x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
        band.kind.name(),
        f(x),
        f(y0 + 11.0),
        esc(&clip(&word, room.max(6)))
    );
}

/// Compressed gaps: a zigzag cut across the lanes, and words in the text column.
fn breaks(v: &View, s: &mut String) {
    let View { layout, scale, .. } = v;
    let (lanes_left, lanes_right) = (AXIS_W, layout.lanes_right());
    for b in &scale.breaks {
        let y = (b.y_top + b.y_bottom) / 2.0;
        let mut points = String::new();
        let mut x = lanes_left;
        let mut up = true;
        while x <= lanes_right {
            let _ = write!(
                points,
                "{},{} ",
                f(x),
                f(if up { y - 3.0 } else { y + 3.0 })
            );
            x += 8.0;
            up = !up;
        }
        let _ = write!(
            s,
            r#"<g class="break"><polyline class="cut" points="{p}"/><polyline class="zig" points="{p}"/><text class="ann faint" x="{}" y="{}">⋯ {} without trail events (drawn compressed)</text></g>"#,
            f(layout.annot_x()),
            f(y + 3.5),
            esc(&fmt_dur(b.to_ms - b.from_ms)),
            p = points.trim_end()
        );
    }
}

/// Lane lines: solid while up, broken while down; thick gold while leading.
fn lanes(v: &View, s: &mut String, labels: &mut String) {
    let View { layout, scale, .. } = v;
    s.push_str(r#"<g class="lanes">"#);
    let _ = write!(
        s,
        r#"<line class="harness-line" x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
        f(TOP - 8.0),
        f(scale.y_end),
        x = f(layout.x(Col::Harness))
    );
    for (lane, name) in v.names.iter().enumerate() {
        let x = f(layout.x(Col::Lane(lane)));
        let _ = write!(
            s,
            r#"<g class="lane" data-lane="{lane}" data-node="{}">"#,
            esc(name)
        );
        lane_line(v, lane, &x, s);
        leader_spans(v, lane, name, &x, s, labels);
        s.push_str("</g>");
    }
    s.push_str("</g>");
}

/// One lane's line, broken where the node was down.
fn lane_line(v: &View, lane: usize, x: &str, s: &mut String) {
    let View { d, scale, .. } = v;
    let mut y = TOP - 8.0;
    for span in d.down.iter().filter(|sp| sp.lane == lane) {
        let (y0, y1) = (scale.y(span.start_ms), scale.y(span.end_ms));
        let _ = write!(
            s,
            r#"<line class="up" x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
            f(y),
            f(y0)
        );
        y = y1;
    }
    let _ = write!(
        s,
        r#"<line class="up" x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
        f(y),
        f(scale.y_end)
    );
}

/// The thick gold line while the lane's node leads, and its term beside it.
fn leader_spans(v: &View, lane: usize, name: &str, x: &str, s: &mut String, labels: &mut String) {
    let View {
        d, layout, scale, ..
    } = v;
    let mut last_term_y = f64::NEG_INFINITY;
    for span in d.leading.iter().filter(|sp| sp.lane == lane) {
        let (y0, y1) = (scale.y(span.start_ms), scale.y(span.end_ms));
        let term = span.term.map(|t| format!(" term {t}")).unwrap_or_default();
        let _ = write!(
            s,
            r#"<line class="leading" data-ev="{}" x1="{x}" x2="{x}" y1="{}" y2="{}"><title>{} leads{term} from {} to {}</title></line>"#,
            span.opened_by,
            f(y0),
            f(y1.max(y0 + 2.0)),
            esc(name),
            esc(&fmt_ms(span.start_ms)),
            esc(&fmt_ms(span.end_ms)),
        );
        // The term, just right of the row's marks, if there is room for it in
        // the lane and it does not sit on the previous label.
        if let Some(t) = span.term {
            let slot = scale.slot_of(span.start_ms);
            let dx = v.reach(slot, Col::Lane(lane)) + 4.0;
            let fits = dx + 7.0 * (1.0 + t.to_string().len() as f64) < layout.lane_w / 2.0;
            if fits && y0 - last_term_y >= 13.0 {
                last_term_y = y0;
                let _ = write!(
                    labels,
                    r#"<text class="term" x="{}" y="{}">T{t}</text>"#,
                    f(layout.x(Col::Lane(lane)) + dx),
                    f(y0 + 3.5)
                );
            }
        }
    }
}

/// Messages between nodes as arrows; returns the arrows drawn and the messages
/// skipped (endpoints that are not nodes of the run).
fn messages(v: &View, s: &mut String) -> (Vec<Arrow>, u64) {
    let (arrows, messages_skipped) = arrows(v.r, v.d, &v.scale);
    let max_count = arrows.iter().map(|a| a.count).max().unwrap_or(1).max(1) as f64;
    s.push_str(r#"<g class="msgs">"#);
    for a in &arrows {
        arrow(v, a, max_count, s);
    }
    s.push_str("</g>");
    (arrows, messages_skipped)
}

/// One arrow, weighted by its share of the busiest arrow's messages, with what
/// became of them in its tooltip.
fn arrow(v: &View, a: &Arrow, max_count: f64, s: &mut String) {
    let View {
        names,
        layout,
        scale,
        ..
    } = v;
    let (x0, x1) = (layout.x(Col::Lane(a.from)), layout.x(Col::Lane(a.to)));
    let dir = if x1 > x0 { 1.0 } else { -1.0 };
    let y0 = scale.y(a.t0);
    let end = if a.link().is_some() {
        a.t1.min(a.link_end_ms)
    } else {
        a.t1
    };
    let y1 = scale.y(end).max(y0 + 5.0);
    let weight = (1.0 + a.count as f64).ln() / (1.0 + max_count).ln();
    let kinds: Vec<String> = a
        .kinds
        .iter()
        .take(6)
        .map(|(k, c)| format!("{k} {c}"))
        .collect();
    let more = if a.kinds.len() > 6 { ", …" } else { "" };
    let (class, marker, fate) = match a.link() {
        Some(BandKind::Partition) => (
            "msg cut",
            "arrow-cut",
            "\nsent while the link was cut: dropped by the network".to_string(),
        ),
        Some(_) => (
            "msg held",
            "arrow-held",
            "\nsent while the link was held: delivered at release".to_string(),
        ),
        None => {
            let mut fate = String::new();
            if a.dropped > 0 {
                fate.push_str(&format!(
                    "\n{} of them sent while the link was cut (dropped)",
                    a.dropped
                ));
            }
            if a.held > 0 {
                fate.push_str(&format!(
                    "\n{} of them sent while the link was held",
                    a.held
                ));
            }
            ("msg", "arrow", fate)
        }
    };
    let tip = format!(
        "{} → {} · {} – {}\n{} message(s): {}{more}{fate}",
        names[a.from],
        names[a.to],
        fmt_ms(a.t0),
        fmt_ms(end),
        a.count,
        kinds.join(", ")
    );
    let _ = write!(
        s,
        r#"<line class="{class}" x1="{}" y1="{}" x2="{}" y2="{}" stroke-width="{}" stroke-opacity="{}" marker-end="url(#{marker})"><title>{}</title></line>"#,
        f(x0 + dir * 4.0),
        f(y0),
        f(x1 - dir * 5.0),
        f(y1),
        f(0.6 + 1.4 * weight),
        ((0.16 + 0.34 * weight) * 100.0).round() / 100.0,
        esc(&tip)
    );
}

/// Leadership transfers: a dashed arrow from the leader to the target.
fn transfers(v: &View, s: &mut String) {
    let View {
        events,
        names,
        layout,
        scale,
        ..
    } = v;
    s.push_str(r#"<g class="transfers">"#);
    for (i, e) in events.iter().enumerate() {
        let Data::Action(acted) = &e.data else {
            continue;
        };
        let Action::TransferLeader { from: a, to: b } = &acted.action else {
            continue;
        };
        let (Some(a), Some(b)) = (
            names.iter().position(|n| n == a),
            names.iter().position(|n| n == b),
        ) else {
            continue;
        };
        let y = scale.ys[scale.slot_of(e.t_ms)];
        let (x0, x1) = (layout.x(Col::Lane(a)), layout.x(Col::Lane(b)));
        let dir = if x1 > x0 { 1.0 } else { -1.0 };
        let _ = write!(
            s,
            r#"<path class="transfer" data-ev="{i}" d="M{},{} Q{},{} {},{}" marker-end="url(#arrow-gold)"><title>{}</title></path>"#,
            f(x0 + dir * 8.0),
            f(y),
            f((x0 + x1) / 2.0),
            f(y - 14.0),
            f(x1 - dir * 8.0),
            f(y),
            esc(&event_text(i, e))
        );
    }
    s.push_str("</g>");
}

/// Client operations: from invocation to result; unanswered ones to the moment
/// the harness gave up on them (their `op_timeout` event), else to the end.
/// Returns how many were drawn.
fn op_spans(v: &View, s: &mut String) -> usize {
    let View {
        r,
        events,
        names,
        layout,
        scale,
        ..
    } = v;
    let gave_up: BTreeMap<u64, u64> = events
        .iter()
        .filter_map(|e| {
            let Data::OpEnd(end) = &e.data else {
                return None;
            };
            matches!(end.end, OpEndKind::GaveUp(_)).then_some((end.op, e.t_ms))
        })
        .collect();
    let mut op_spans = 0usize;
    s.push_str(r#"<g class="ops">"#);
    for op in r.ops.iter().take(OP_SPANS_MAX) {
        let Some(lane) = names.iter().position(|n| *n == op.node) else {
            continue;
        };
        let timed_out_at = gave_up.get(&op.id).copied();
        let end = op.completed_ms.or(timed_out_at).unwrap_or(scale.end_ms);
        let (y0, y1) = (scale.y(op.invoked_ms), scale.y(end));
        if y1 - y0 < 4.0 {
            // Answered within its row: the op's marks say it all.
            continue;
        }
        op_spans += 1;
        let (class, outcome) = match &op.result {
            Some(res) if res.ok => ("op ok", format!("{res}")),
            Some(res) => ("op err", format!("{res}")),
            None if timed_out_at.is_some() => ("op timeout", "given up on".to_string()),
            None => ("op timeout", "still unanswered".to_string()),
        };
        let tip = format!(
            "{}{} #{} on {}: {}\nsent {}, {} at {} ({})",
            if op.admin { "admin" } else { "client op" },
            if op.timed_out { " (timed out)" } else { "" },
            op.id,
            op.node,
            op.summary,
            fmt_ms(op.invoked_ms),
            outcome,
            fmt_ms(end),
            fmt_dur(end - op.invoked_ms)
        );
        let _ = write!(
            s,
            r#"<rect class="{class}" x="{}" y="{}" width="4" height="{}" rx="2"><title>{}</title></rect>"#,
            f(layout.x(Col::Lane(lane)) - SPREAD_PX * 2.0 - 12.0),
            f(y0 - 3.0),
            f((y1 - y0) + 6.0),
            esc(&tip)
        );
    }
    s.push_str("</g>");
    op_spans
}

/// One mark per trail event, side by side in its row and column; past
/// [`GROUP_SHOWN_MAX`] the rest become one aggregate mark.
fn marks(v: &View, touched: &BTreeSet<usize>, s: &mut String) {
    let View { layout, scale, .. } = v;
    s.push_str(r#"<g class="marks">"#);
    for ((slot, col), members) in &v.groups {
        let y = scale.ys[*slot];
        let cx = layout.x(*col);
        let (shown, rest) = if members.len() > GROUP_SHOWN_MAX {
            members.split_at(GROUP_SHOWN_MAX - 1)
        } else {
            (&members[..], &[][..])
        };
        let k = shown.len() + usize::from(!rest.is_empty());
        for (j, &i) in shown.iter().enumerate() {
            let x = cx + (j as f64 - (k as f64 - 1.0) / 2.0) * SPREAD_PX;
            mark(v, i, x, y, touched, s);
        }
        if !rest.is_empty() {
            let x = cx + (k as f64 - 1.0) / 2.0 * SPREAD_PX + 6.0;
            aggregate_mark(v, *slot, *col, rest, x, y, s);
        }
    }
    s.push_str("</g>");
}

/// One event's mark: its symbol, ringed when it touched the divergent key.
fn mark(v: &View, i: usize, x: f64, y: f64, touched: &BTreeSet<usize>, s: &mut String) {
    let e = &v.events[i];
    let mut class = format!("mk k-{}", e.kind.name());
    if is_fault_mark(e) {
        class.push_str(" fault");
    }
    if touched.contains(&i) {
        class.push_str(" touch");
    }
    let _ = write!(
        s,
        r#"<g class="{class}" data-ev="{i}"><title>{}</title>"#,
        esc(&event_text(i, e))
    );
    if touched.contains(&i) {
        let _ = write!(
            s,
            r#"<circle class="ring" cx="{}" cy="{}" r="8.5"/>"#,
            f(x),
            f(y)
        );
    }
    let _ = write!(
        s,
        r##"<use href="#{}" x="{}" y="{}"/></g>"##,
        symbol_of(e),
        f(x),
        f(y)
    );
}

/// The mark that stands for a row's events past the first few: a count, the
/// kinds in its tooltip, and the trail indices to jump to.
fn aggregate_mark(v: &View, slot: usize, col: Col, rest: &[usize], x: f64, y: f64, s: &mut String) {
    let View {
        events,
        names,
        scale,
        ..
    } = v;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for &i in rest {
        *kinds.entry(events[i].kind.name()).or_default() += 1;
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, c)| format!("{k} ×{c}")).collect();
    let mut tip = format!(
        "{} more event(s) at {}{} on {}: {}",
        rest.len(),
        fmt_ms(scale.slots[slot]),
        if scale.resolution_ms > 1 {
            format!(" (+{} ms)", scale.resolution_ms - 1)
        } else {
            String::new()
        },
        match col {
            Col::Harness => "harness",
            Col::Lane(l) => &names[l],
        },
        kinds.join(", ")
    );
    for &i in rest.iter().take(TIP_EVENTS_MAX) {
        let e = &events[i];
        tip.push_str(&format!(
            "\n#{i} {} {}: {}",
            fmt_ms(e.t_ms),
            e.kind.name(),
            clip(&e.detail, 90)
        ));
    }
    if rest.len() > TIP_EVENTS_MAX {
        tip.push_str("\n… click to see them in the trail table");
    }
    let indices: Vec<String> = rest
        .iter()
        .take(AGG_INDICES_MAX)
        .map(|i| i.to_string())
        .collect();
    let mut class = "mk agg".to_string();
    if rest.iter().any(|&i| is_fault_mark(&events[i])) {
        class.push_str(" fault");
    }
    let label = if rest.len() > 999 {
        "+1k".to_string()
    } else {
        format!("+{}", rest.len())
    };
    let w = 8.0 + 6.0 * label.len() as f64;
    let _ = write!(
        s,
        r#"<g class="{class}" data-ev="{}"><title>{}</title><rect x="{}" y="{}" width="{}" height="13" rx="6.5"/><text x="{}" y="{}">{}</text></g>"#,
        indices.join(","),
        esc(&tip),
        f(x - w / 2.0),
        f(y - 6.5),
        f(w),
        f(x),
        f(y + 3.5),
        label
    );
}

/// The text column: per row, what happened, most prominent first.
fn annotations(v: &View, s: &mut String) {
    let View { events, scale, .. } = v;
    s.push_str(r#"<g class="annots">"#);
    let mut per_slot: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if priority(e) <= 4 {
            per_slot.entry(scale.slot_of(e.t_ms)).or_default().push(i);
        }
    }
    for (slot, members) in per_slot {
        annotation_row(v, slot, members, s);
    }
    s.push_str("</g>");
}

/// One row's line of text: its items, each with a fair share of the line.
fn annotation_row(v: &View, slot: usize, mut members: Vec<usize>, s: &mut String) {
    let View {
        events,
        layout,
        scale,
        ..
    } = v;
    members.sort_by_key(|&i| (priority(&events[i]), i));
    // An op sent and answered in one row reads as one item: its answer.
    let answered: BTreeSet<u64> = members
        .iter()
        .filter(|&&i| matches!(events[i].kind, Kind::OpOk | Kind::OpError))
        .filter_map(|&i| op_id(&events[i]))
        .collect();
    members.retain(|&i| {
        let e = &events[i];
        !(e.kind == Kind::OpInvoke && op_id(e).is_some_and(|op| answered.contains(&op)))
    });
    let y = scale.ys[slot];
    let _ = write!(
        s,
        r#"<text class="ann" x="{}" y="{}">"#,
        f(layout.annot_x()),
        f(y + 3.5)
    );
    // Each item gets a fair share of the line, so a long first item cannot hide
    // the others (a failed check next to the heal phase's long detail).
    let texts: Vec<String> = members
        .iter()
        .map(|&i| {
            let e = &events[i];
            let who = e
                .node
                .as_deref()
                .map(|n| format!("{n}: "))
                .unwrap_or_default();
            format!("{who}{}", e.detail.replace('\n', " "))
        })
        .collect();
    let (shown, cap) = annotation_fit(&texts.iter().map(|t| t.chars().count()).collect::<Vec<_>>());
    for (j, &i) in members.iter().take(shown).enumerate() {
        let e = &events[i];
        let sep = if j > 0 { " · " } else { "" };
        let text = clip(&texts[j], cap);
        let class = match priority(e) {
            0 if is_fault_mark(e) || e.kind == Kind::Limit => "a-fault",
            0 | 1 => "a-harness",
            2 if e.kind == Kind::OpError || e.kind == Kind::OpTimeout => "a-err",
            2 => "a-op",
            3 => "a-leader",
            _ => "a-node",
        };
        let class = if check_failed(e) { "a-fault" } else { class };
        let _ = write!(
            s,
            r#"{}<tspan class="{class}" data-ev="{i}">{}</tspan>"#,
            esc(sep),
            esc(&text)
        );
    }
    if shown < members.len() {
        let _ = write!(
            s,
            r#"<tspan class="faint"> (+{} more)</tspan>"#,
            members.len() - shown
        );
    }
    s.push_str("</text>");
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
