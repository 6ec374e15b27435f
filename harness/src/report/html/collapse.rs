//! The trail table's runs of client ops, each folded into one summary row that
//! opens to its rows.
//!
//! A run with a workload is mostly ops: a ZooKeeper chaos run has thousands of
//! rows of `op_invoke`, the leader's `submit`, each replica's `storage` and
//! `apply`, and `op_ok`, between a few dozen events a reader came for. A stretch
//! of the table holding only such plain op traffic, with at least
//! [`GROUP_OPS_MIN`] client-op events in it (or at least [`GROUP_ROWS_MIN`] rows:
//! a restarted node catching up applies hundreds of entries), becomes one
//! `<tbody class="grp">`: a summary row (the ops' outcomes, the node events among
//! them, their nodes, the time span) with a checkbox that shows the rows. It works without the script
//! (CSS `:has`); the script opens a group when a diagram mark or a link asks for
//! one of its rows, and shows every row matching a filter while one is set.
//!
//! Never folded: faults, crashes, restarts, fail point events, checks, leader
//! changes, notes, probes, service events, anything not plain op traffic, and every event a finding, the cause, a departure or a
//! `sequence:` entry links to (those break the run, so their anchors always
//! resolve to a visible row). Rows keep their `ev-N` ids.

use super::{fmt_ms, Divergence, RunResult};
use crate::base::trail::{Event, Kind};
use faultline_api::NodeEvent;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Fewer client-op events than this in a run: its rows stay as they are...
pub const GROUP_OPS_MIN: usize = 5;
/// ...unless the run has at least this many rows.
pub const GROUP_ROWS_MIN: usize = 20;

/// Plain op traffic: a client op's event, or the work a node does for one (a
/// submit, a flush, an apply, whatever its result: a `get` of a missing key
/// fails in the state machine as a matter of course). Everything else is worth
/// its own row; an apply the cause cites is linked, and so never folded.
pub fn is_routine(e: &Event) -> bool {
    if e.kind.is_op() {
        return true;
    }
    match e.node_event() {
        Some(NodeEvent::Submit { .. } | NodeEvent::Storage { .. } | NodeEvent::Apply { .. }) => {
            true
        }
        Some(
            NodeEvent::Leader { .. }
            | NodeEvent::Service { .. }
            | NodeEvent::Exit { .. }
            | NodeEvent::Probe { .. }
            | NodeEvent::Note { .. },
        )
        | None => false,
    }
}

/// Events the page links to from outside the trail table: the ones that touched
/// the differing key or that the cause cites, each departure's event, each
/// `sequence:` match. They are never folded.
pub fn linked(r: &RunResult, div: &Divergence) -> BTreeSet<usize> {
    let mut out = div.touched.clone();
    out.extend(r.differential.iter().map(|d| d.event));
    out.extend(r.sequence.iter().filter_map(|s| s.event));
    if let Some(cause) = &div.cause {
        out.extend(cause.faults.iter().map(|f| f.event));
    }
    out
}

/// A stretch of the table's rows: plain rows, or a folded run of op traffic.
pub struct Part {
    /// Trail positions of the rows, ascending.
    pub rows: Vec<usize>,
    /// The summary, when the rows are folded.
    pub group: Option<Summary>,
}

/// What a folded run's summary row says.
pub struct Summary {
    /// Client-op events among the rows.
    pub ops: usize,
    /// The sentence: outcomes, nodes, time span, the node events among them.
    pub text: String,
}

/// The table's rows (`shown`, ascending trail positions) cut into parts: each
/// maximal run of routine, unlinked rows with at least [`GROUP_OPS_MIN`] client-op
/// events or [`GROUP_ROWS_MIN`] rows is folded; every other row stays a plain row.
pub fn parts(events: &[Event], shown: &[usize], linked: &BTreeSet<usize>) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let mut plain: Vec<usize> = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let flush_run = |run: &mut Vec<usize>, plain: &mut Vec<usize>, parts: &mut Vec<Part>| {
        let ops = run.iter().filter(|&&i| events[i].kind.is_op()).count();
        if ops < GROUP_OPS_MIN && run.len() < GROUP_ROWS_MIN {
            plain.append(run);
            return;
        }
        if !plain.is_empty() {
            parts.push(Part {
                rows: std::mem::take(plain),
                group: None,
            });
        }
        parts.push(Part {
            group: Some(summary(events, run)),
            rows: std::mem::take(run),
        });
    };
    for &i in shown {
        if is_routine(&events[i]) && !linked.contains(&i) {
            run.push(i);
        } else {
            flush_run(&mut run, &mut plain, &mut parts);
            plain.push(i);
        }
    }
    flush_run(&mut run, &mut plain, &mut parts);
    if !plain.is_empty() {
        parts.push(Part {
            rows: plain,
            group: None,
        });
    }
    parts
}

/// `52 op events (26 sent, 8 ok, 18 error) and 121 node events (53 apply, 2
/// failed; 51 storage; 17 submit) on zk1 ×30, zk2 ×40, zk3 ×103, 370 ms – 1.635 s`.
fn summary(events: &[Event], rows: &[usize]) -> Summary {
    let mut by_kind: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut by_node: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failed = 0usize;
    for &i in rows {
        let e = &events[i];
        *by_kind.entry(e.kind).or_default() += 1;
        *by_node
            .entry(e.node.as_deref().unwrap_or("harness"))
            .or_default() += 1;
        if let Some(NodeEvent::Apply { result, .. }) = e.node_event() {
            failed += usize::from(!result.is_ok());
        }
    }
    let count = |kind: Kind| by_kind.get(&kind).copied().unwrap_or(0);
    let ops: usize = by_kind
        .iter()
        .filter(|(kind, _)| kind.is_op())
        .map(|(_, c)| c)
        .sum();
    let mut said: Vec<String> = Vec::new();
    if ops > 0 {
        let outcomes: Vec<String> = [
            (Kind::OpInvoke, "sent"),
            (Kind::OpOk, "ok"),
            (Kind::OpError, "error"),
            (Kind::OpTimeout, "timeout"),
        ]
        .iter()
        .filter(|(kind, _)| count(*kind) > 0)
        .map(|(kind, words)| format!("{} {words}", count(*kind)))
        .collect();
        said.push(format!("{ops} op events ({})", outcomes.join(", ")));
    }
    let others: Vec<String> = by_kind
        .iter()
        .filter(|(kind, _)| !kind.is_op())
        .map(|(kind, c)| {
            if *kind == Kind::Apply && failed > 0 {
                format!("{c} apply, {failed} failed")
            } else {
                format!("{c} {}", kind.name())
            }
        })
        .collect();
    if !others.is_empty() {
        said.push(format!(
            "{} node events ({})",
            rows.len() - ops,
            others.join("; ")
        ));
    }
    let nodes: Vec<String> = by_node.iter().map(|(n, c)| format!("{n} ×{c}")).collect();
    let (first, last) = (
        rows.first().map_or(0, |&i| events[i].t_ms),
        rows.last().map_or(0, |&i| events[i].t_ms),
    );
    let mut text = format!(
        "{} on {}, {}",
        said.join(" and "),
        nodes.join(", "),
        fmt_ms(first)
    );
    if last > first {
        let _ = write!(text, " – {}", fmt_ms(last));
    }
    Summary { ops, text }
}
