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

mod classes;
mod geometry;
mod svg;

pub use classes::{
    check_failed, event_text, is_fault_kind, is_fault_mark, symbol_of, DEFS, LEGEND,
};
pub use geometry::{ARROWS_MAX, GROUP_SHOWN_MAX, OP_SPANS_MAX};

use super::derive::{BandKind, Derived};
use super::scale::Scale;
use crate::sim::runner::RunResult;
use geometry::View;
use std::collections::BTreeSet;
use std::fmt::Write;
use svg::{
    annotations, axis, bands, breaks, column_heads, lanes, marks, messages, op_spans, open_svg,
    transfers,
};

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

/// Render the diagram. `touched` are trail indices to ring (events that touched
/// the divergent key). Drawn back to front, one part per function of [`svg`].
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
