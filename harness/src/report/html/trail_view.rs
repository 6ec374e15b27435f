//! The trail table: which rows it keeps, its filter chips, its rows with runs of
//! plain op traffic folded ([`collapse`](super::collapse)).

use super::divergence::Divergence;
use super::{collapse, diagram, fmt_ms, TRAIL_ROWS_MAX};
use crate::base::trail::{Event, Kind};
use crate::sim::runner::RunResult;
use std::collections::{BTreeMap, BTreeSet};

/// Which trail rows the table shows: all of them up to [`TRAIL_ROWS_MAX`]; beyond,
/// the head, the tail, and every fault, fail point, check and op in between.
pub(super) fn trail_rows(events: &[Event]) -> Vec<usize> {
    if events.len() <= TRAIL_ROWS_MAX {
        return (0..events.len()).collect();
    }
    let edge = TRAIL_ROWS_MAX * 2 / 5;
    let mut rows: Vec<usize> = (0..edge).collect();
    let tail_start = events.len() - edge;
    let mut middle_budget = TRAIL_ROWS_MAX - 2 * edge;
    for (i, e) in events.iter().enumerate().take(tail_start).skip(edge) {
        if middle_budget == 0 {
            break;
        }
        let important = diagram::is_fault_mark(e)
            || matches!(
                e.kind,
                Kind::Check
                    | Kind::Heal
                    | Kind::Limit
                    | Kind::FailPointRelease
                    | Kind::FailPointClear
                    | Kind::OpOk
                    | Kind::OpError
                    | Kind::OpTimeout
            );
        if important {
            rows.push(i);
            middle_budget -= 1;
        }
    }
    rows.extend(tail_start..events.len());
    rows
}

pub(super) struct TrailView<'a> {
    pub(super) total: usize,
    /// Head and tail rows kept when the table is cut.
    pub(super) edge: usize,
    /// Filter chips: events of the harness, of each node (then of names that are
    /// not nodes of the run), of each kind.
    pub(super) harness: usize,
    pub(super) nodes: Vec<(&'a str, usize)>,
    pub(super) kinds: Vec<KindChip>,
    /// Rows the table has (plain and folded).
    pub(super) shown: usize,
    /// The rows, with runs of plain op traffic folded ([`collapse`]).
    pub(super) parts: Vec<TrailPart<'a>>,
}

pub(super) struct TrailPart<'a> {
    pub(super) group: Option<collapse::Summary>,
    pub(super) rows: Vec<TrailRow<'a>>,
}

pub(super) struct KindChip {
    pub(super) name: String,
    pub(super) fault: bool,
    pub(super) count: usize,
}

pub(super) struct TrailRow<'a> {
    pub(super) i: usize,
    pub(super) time: String,
    pub(super) node: &'a str,
    pub(super) kind: String,
    /// `fault`, `touch` (touched the differing key), both, or empty.
    pub(super) class: String,
    pub(super) detail: &'a str,
    pub(super) keys: &'a [String],
    pub(super) line: Option<u32>,
}

impl<'a> TrailView<'a> {
    pub(super) fn of(
        r: &'a RunResult,
        div: &Divergence,
        linked: &BTreeSet<usize>,
    ) -> TrailView<'a> {
        let events = &r.trail.events;
        let rows = trail_rows(events);
        let mut per_node: BTreeMap<usize, usize> = BTreeMap::new();
        let mut harness = 0usize;
        let mut per_kind: BTreeMap<Kind, usize> = BTreeMap::new();
        // Events naming a node the run does not have still get a filter entry.
        let mut strays: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in &rows {
            let e = &events[i];
            match e.node.as_deref() {
                None => harness += 1,
                Some(n) => match r.nodes.iter().position(|x| x.name == n) {
                    Some(lane) => *per_node.entry(lane).or_default() += 1,
                    None => *strays.entry(n).or_default() += 1,
                },
            }
            *per_kind.entry(e.kind).or_default() += 1;
        }
        let mut nodes: Vec<(&str, usize)> = r
            .nodes
            .iter()
            .enumerate()
            .map(|(lane, n)| (n.name.as_str(), per_node.get(&lane).copied().unwrap_or(0)))
            .collect();
        nodes.extend(strays);
        TrailView {
            total: events.len(),
            edge: TRAIL_ROWS_MAX * 2 / 5,
            harness,
            nodes,
            kinds: per_kind
                .into_iter()
                .map(|(kind, count)| KindChip {
                    name: kind.name(),
                    fault: diagram::is_fault_kind(kind),
                    count,
                })
                .collect(),
            shown: rows.len(),
            parts: collapse::parts(events, &rows, linked)
                .into_iter()
                .map(|part| TrailPart {
                    group: part.group,
                    rows: part
                        .rows
                        .into_iter()
                        .map(|i| TrailRow::of(r, div, i))
                        .collect(),
                })
                .collect(),
        }
    }
}

impl<'a> TrailRow<'a> {
    pub(super) fn of(r: &'a RunResult, div: &Divergence, i: usize) -> TrailRow<'a> {
        let e = &r.trail.events[i];
        let mut class = Vec::new();
        if diagram::is_fault_mark(e) {
            class.push("fault");
        }
        if div.touched.contains(&i) {
            class.push("touch");
        }
        TrailRow {
            i,
            time: fmt_ms(e.t_ms),
            node: e.node.as_deref().unwrap_or(""),
            kind: e.kind.name(),
            class: class.join(" "),
            detail: &e.detail,
            keys: e.keys(),
            line: e.line,
        }
    }
}
