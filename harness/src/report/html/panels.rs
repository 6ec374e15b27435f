//! The diagram's panel (legend swatches and symbols, the caption saying how it was
//! drawn) and the node cards (each node's final observation).

use super::derive::{self, BandKind};
use super::diagram;
use super::divergence::Divergence;
use super::escape::clip;
use super::fmt_dur;
use crate::sim::runner::RunResult;
use faultline_api::IndexFormat;
use std::collections::BTreeSet;

/// State keys listed per node card.
const STATE_ROWS_MAX: usize = 200;

pub(super) struct DiagramView {
    pub(super) rendered: diagram::Rendered,
    /// Band and lane swatches: (class suffix, words), only those in the diagram.
    pub(super) swatches: Vec<(&'static str, &'static str)>,
    /// Mark symbols the diagram uses, with their words.
    pub(super) symbols: Vec<(&'static str, &'static str)>,
    pub(super) touched: bool,
    /// How the picture was made, so nobody misreads a compressed axis.
    pub(super) caption: String,
}

impl DiagramView {
    pub(super) fn of(
        r: &RunResult,
        derived: &derive::Derived,
        div: &Divergence,
        rendered: diagram::Rendered,
    ) -> DiagramView {
        let kinds: BTreeSet<BandKind> = derived.bands.iter().map(|b| b.kind).collect();
        let mut swatches: Vec<(&str, &str)> = [
            (BandKind::Partition, "partitioned"),
            (BandKind::Hold, "messages held"),
            (BandKind::Latency, "link latency changed"),
            (BandKind::Stall, "fail-point stall"),
            (BandKind::Heal, "heal phase"),
        ]
        .into_iter()
        .filter(|(kind, _)| kinds.contains(kind))
        .map(|(kind, words)| (kind.name(), words))
        .collect();
        if !derived.down.is_empty() {
            swatches.push(("down", "node down"));
        }
        if !derived.leading.is_empty() {
            swatches.push(("leading", "leader (T = term)"));
        }
        // The legend must match the marks: ask the diagram which symbol each event gets.
        let used: BTreeSet<&str> = r.trail.events.iter().map(diagram::symbol_of).collect();
        let symbols = diagram::LEGEND
            .iter()
            .filter(|(symbol, _)| used.contains(symbol))
            .copied()
            .collect();
        let caption = caption(r, &rendered);
        DiagramView {
            rendered,
            swatches,
            symbols,
            touched: !div.touched.is_empty(),
            caption,
        }
    }
}

pub(super) fn caption(r: &RunResult, rendered: &diagram::Rendered) -> String {
    let scale = &rendered.scale;
    let mut notes = vec![format!(
        "{} rows over {}",
        scale.slots.len(),
        fmt_dur(scale.end_ms)
    )];
    if scale.resolution_ms > 1 {
        notes.push(format!(
            "each row covers {} of simulated time",
            fmt_dur(scale.resolution_ms)
        ));
    }
    if !scale.breaks.is_empty() {
        notes.push(format!(
            "{} quiet stretch(es) drawn compressed (zigzag)",
            scale.breaks.len()
        ));
    }
    let drawn: u64 = r.messages.iter().map(|m| m.count as u64).sum();
    notes.push(format!(
        "{} message(s) counted per 100 ms at the model boundary, drawn as {} arrow(s) merged per node pair",
        drawn, rendered.arrows
    ));
    if r.messages_total > drawn {
        notes.push(format!(
            "{} message(s) past the bucket limit are not drawn",
            r.messages_total - drawn
        ));
    }
    if rendered.messages_skipped > 0 {
        notes.push(format!(
            "{} message(s) with an endpoint that is not a node are not drawn",
            rendered.messages_skipped
        ));
    }
    if r.ops.len() > diagram::OP_SPANS_MAX {
        notes.push(format!(
            "op spans drawn for the first {} of {} ops",
            diagram::OP_SPANS_MAX,
            r.ops.len()
        ));
    }
    notes.join("; ")
}

pub(super) struct NodeCard<'a> {
    pub(super) name: &'a str,
    pub(super) role: &'a str,
    pub(super) up: bool,
    pub(super) starts: u32,
    /// What the harness knows of the node: role, term, leader, applied, pending.
    pub(super) facts: Vec<(&'static str, String)>,
    pub(super) state: Vec<StateRow<'a>>,
    pub(super) state_len: usize,
    /// The model's local facts (never compared).
    pub(super) local: Vec<(&'a str, String)>,
    pub(super) local_len: usize,
}

pub(super) struct StateRow<'a> {
    pub(super) key: &'a str,
    pub(super) value: String,
    /// The key is one the checkers found differing.
    pub(super) hot: bool,
}

impl<'a> NodeCard<'a> {
    pub(super) fn of(
        n: &'a crate::sim::runner::FinalNode,
        div: &Divergence,
        index_format: IndexFormat,
    ) -> NodeCard<'a> {
        let o = &n.observation;
        let mut facts: Vec<(&str, String)> = Vec::new();
        if let Some(role) = &o.role {
            facts.push(("role", role.clone()));
        }
        if let Some(term) = o.term {
            facts.push(("term", term.to_string()));
        }
        if let Some(leader) = &o.leader {
            facts.push(("believes leader", leader.clone()));
        }
        if let Some(applied) = o.applied {
            facts.push(("applied index", index_format.show(applied)));
        }
        facts.push(("pending work", o.pending.to_string()));
        if !o.unvouched.is_empty() {
            let prefixes: Vec<String> = o.unvouched.iter().map(|p| format!("{p}*")).collect();
            facts.push((
                "not compared",
                format!(
                    "{}: it cannot vouch for these keys, so the divergence check compares them only among the nodes that can",
                    prefixes.join(", ")
                ),
            ));
        }
        NodeCard {
            name: &n.name,
            role: &n.role,
            up: n.up,
            starts: n.starts,
            facts,
            state: o
                .state
                .iter()
                .take(STATE_ROWS_MAX)
                .map(|(k, v)| StateRow {
                    key: k,
                    value: clip(v, 300),
                    hot: div.keys.contains(k),
                })
                .collect(),
            state_len: o.state.len(),
            local: o
                .facts
                .iter()
                .take(STATE_ROWS_MAX)
                .map(|(k, v)| (k.as_str(), clip(v, 300)))
                .collect(),
            local_len: o.facts.len(),
        }
    }
}
