//! The SVG: each part of the diagram drawn back to front, one function per part,
//! from the [`View`]'s geometry and the events' classes.

use super::classes::{check_failed, event_text, is_fault_mark, op_id, priority, symbol_of, DEFS};
use super::geometry::{
    annotation_fit, arrows, f, Arrow, Col, View, AGG_INDICES_MAX, AXIS_W, GROUP_SHOWN_MAX,
    OP_SPANS_MAX, SPREAD_PX, TIP_EVENTS_MAX, TOP,
};
use crate::base::action::Action;
use crate::base::trail::{Data, Kind, OpEndKind};
use crate::report::html::derive::{Band, BandKind};
use crate::report::html::escape::{clip, esc};
use crate::report::html::{fmt_dur, fmt_ms};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The `<svg>` element, sized to the layout and the rows, and its symbols.
pub(super) fn open_svg(v: &View, s: &mut String) {
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
pub(super) fn axis(v: &View, s: &mut String) {
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
pub(super) fn column_heads(v: &View, s: &mut String) {
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
pub(super) fn bands(v: &View, s: &mut String, labels: &mut String) {
    s.push_str(r#"<g class="bands">"#);
    down_spans(v, s);
    for band in &v.d.bands {
        fault_band(v, band, s, labels);
    }
    s.push_str("</g>");
}

/// Hatched spans where a node was crashed or stopped.
pub(super) fn down_spans(v: &View, s: &mut String) {
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
pub(super) fn fault_band(v: &View, band: &Band, s: &mut String, labels: &mut String) {
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
pub(super) fn band_columns(v: &View, band: &Band) -> Vec<(f64, f64)> {
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
pub(super) fn band_label(band: &Band, columns: &[(f64, f64)], y0: f64, labels: &mut String) {
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
pub(super) fn breaks(v: &View, s: &mut String) {
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
pub(super) fn lanes(v: &View, s: &mut String, labels: &mut String) {
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
pub(super) fn lane_line(v: &View, lane: usize, x: &str, s: &mut String) {
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
pub(super) fn leader_spans(
    v: &View,
    lane: usize,
    name: &str,
    x: &str,
    s: &mut String,
    labels: &mut String,
) {
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
pub(super) fn messages(v: &View, s: &mut String) -> (Vec<Arrow>, u64) {
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
pub(super) fn arrow(v: &View, a: &Arrow, max_count: f64, s: &mut String) {
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
pub(super) fn transfers(v: &View, s: &mut String) {
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
pub(super) fn op_spans(v: &View, s: &mut String) -> usize {
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
pub(super) fn marks(v: &View, touched: &BTreeSet<usize>, s: &mut String) {
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
pub(super) fn mark(v: &View, i: usize, x: f64, y: f64, touched: &BTreeSet<usize>, s: &mut String) {
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
pub(super) fn aggregate_mark(
    v: &View,
    slot: usize,
    col: Col,
    rest: &[usize],
    x: f64,
    y: f64,
    s: &mut String,
) {
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
pub(super) fn annotations(v: &View, s: &mut String) {
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
pub(super) fn annotation_row(v: &View, slot: usize, mut members: Vec<usize>, s: &mut String) {
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
