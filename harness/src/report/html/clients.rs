//! "What clients saw": the run's client history on one lane per client process,
//! time running right, each op a bar from its invoke to its completion (green
//! `ok`, grey `fail`, amber `info` or never answered); the consistency
//! checker's verdict; on a violation its witness, the smallest set of ops it
//! found that cannot be ordered, outlined in red on the lanes and listed op by
//! op; then the history as a table.
//!
//! Bounded whatever the run: at most [`LANES_MAX`] lanes and [`BARS_MAX`] bars
//! (the witness's ops always among them), [`ROWS_MAX`] table rows.

use super::escape::{clip, esc};
use super::{fmt_dur, fmt_ms};
use crate::judge::check::Verdict;
use crate::judge::history::{text, CompletionKind, Op};
use crate::sim::runner::RunResult;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

pub const LANES_MAX: usize = 120;
pub const BARS_MAX: usize = 4000;
pub const ROWS_MAX: usize = 1000;
const LANE_H: f64 = 18.0;
const LEFT: f64 = 150.0;
const PLOT_W: f64 = 960.0;
const TOP: f64 = 28.0;

fn kind_class(op: &Op) -> &'static str {
    match op.completion.as_ref().map(|c| c.kind) {
        Some(CompletionKind::Ok) => "ok",
        Some(CompletionKind::Fail) => "fail",
        Some(CompletionKind::Info) | None => "info",
    }
}

fn ms(ns: u64) -> u64 {
    ns / 1_000_000
}

/// An op in one line: `put(key=a, value=1) -> ok`.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
pub fn describe(op: &Op) -> String {
    let args: Vec<String> = match &op.args {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", text(v)))
            .collect(),
        serde_json::Value::Null => Vec::new(),
        other => vec![text(other)],
    };
    let answer = match &op.completion {
        None => "never answered".to_string(),
        Some(c) => {
            let said = match (&c.error, &c.value) {
                (Some(e), _) => e.clone(),
                (None, serde_json::Value::Null) => "ok".into(),
                (None, v) => text(v),
            };
            match c.kind {
                CompletionKind::Ok => said,
                CompletionKind::Fail => format!("fail: {said}"),
                CompletionKind::Info => format!("info: {said}"),
            }
        }
    };
    format!("{}({}) -> {answer}", op.f, args.join(", "))
}

/// The section's markup, every piece of text in it escaped; empty without ops.
pub fn section(r: &RunResult) -> String {
    let mut out = String::new();
    let page = &mut out;
    let clients = &r.clients;
    let ops = clients.history.history.ops();
    if ops.is_empty() {
        return out;
    }
    page.push_str(r#"<section id="clients"><h2>What clients saw</h2><p class="explain">Every client operation of the run as its client saw it: one lane per client process, simulated time running right, each op a bar from its invoke to its answer. <b class="k-ok">ok</b>: it took effect and this is its answer; <b class="k-fail">fail</b>: it definitely did not; <b class="k-info">info</b>: unknown (a timeout, a crash of its node, no answer before the end). The consistency checker looks for one order of the ops that every answer fits.</p>"#);
    let witness: BTreeSet<usize> = clients
        .consistency
        .as_ref()
        .and_then(|c| c.witness.as_ref())
        .map(|w| w.ops.iter().map(|o| o.op).collect())
        .unwrap_or_default();
    let context: BTreeSet<usize> = clients
        .consistency
        .as_ref()
        .and_then(|c| c.witness.as_ref())
        .map(|w| {
            w.ops
                .iter()
                .filter(|o| !o.as_recorded)
                .map(|o| o.op)
                .collect()
        })
        .unwrap_or_default();
    verdict(page, r);
    lanes(page, r, &witness, &context);
    history_table(page, r, &witness);
    page.push_str("</section>");
    out
}

fn verdict(page: &mut String, r: &RunResult) {
    let Some(report) = &r.clients.consistency else {
        let why = if r.clients.history.broken.is_some() {
            "the history is incomplete"
        } else {
            "no judged op completed, the model declares nothing to judge, or the scenario switched the judgment off"
        };
        let _ = write!(page, r#"<p class="faint">Not judged: {why}.</p>"#);
        return;
    };
    let class = match report.verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Unknown => "unknown",
    };
    let _ = write!(
        page,
        r#"<p class="consistency {class}"><b>{}</b> {}</p>"#,
        match report.verdict {
            Verdict::Pass => "consistent",
            Verdict::Fail => "not consistent",
            Verdict::Unknown => "unknown",
        },
        esc(&report.message)
    );
    let Some(w) = &report.witness else { return };
    let lane_of = lane_names(r);
    let _ = write!(
        page,
        r#"<p class="explain">The witness: on <code>{}</code>, these ops cannot be put in one order that fits every answer{}. Outlined ops are the contradiction; dashed ones are context the checker let happen or not.</p><table class="events witness"><thead><tr><th>client</th><th>op</th><th>as the checker read it</th><th>invoked</th><th>answered</th><th></th></tr></thead><tbody>"#,
        esc(&w.key),
        if w.minimal {
            " (no op of it can be left out)"
        } else {
            " (small, maybe not minimal: the shrink ran out of budget)"
        }
    );
    for o in &w.ops {
        let op = r.clients.history.history.ops().get(o.op);
        let _ = write!(
            page,
            r#"<tr class="{}"><td>{}</td><td class="t">{}</td><td class="t">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td></tr>"#,
            if o.as_recorded {
                "as-recorded"
            } else {
                "context"
            },
            esc(lane_of.get(&o.process).map(String::as_str).unwrap_or("?")),
            esc(&clip(&op.map(describe).unwrap_or_default(), 160)),
            esc(&clip(&o.reads_as, 120)),
            esc(&fmt_ms(ms(o.invoke_ns))),
            esc(&o
                .complete_ns
                .map(|t| fmt_ms(ms(t)))
                .unwrap_or_else(|| "-".into())),
            if o.as_recorded {
                "as recorded"
            } else {
                "may or may not have happened"
            }
        );
    }
    page.push_str("</tbody></table>");
}

/// Process -> `workload client 2 (p5)`.
fn lane_names(r: &RunResult) -> BTreeMap<u64, String> {
    r.clients
        .history
        .lanes
        .iter()
        .map(|l| (l.process, format!("{} (p{})", l.client, l.process)))
        .collect()
}

/// The lanes' processes: the witness's first, then in process order.
fn lane_order(ops: &[Op], witness: &BTreeSet<usize>) -> Vec<u64> {
    let mut order: Vec<u64> = Vec::new();
    for &i in witness {
        if let Some(op) = ops.get(i) {
            if !order.contains(&op.process) {
                order.push(op.process);
            }
        }
    }
    for op in ops {
        if !order.contains(&op.process) {
            order.push(op.process);
        }
    }
    order
}

/// Where time `t_ms` is on a plot that ends at `end_ms`.
fn x_of(t_ms: u64, end_ms: u64) -> f64 {
    LEFT + PLOT_W * (t_ms as f64 / end_ms as f64)
}

/// The `<svg>` element, the time axis (ten ticks) and one labelled line per lane.
fn axis_and_lanes(s: &mut String, order: &[u64], names: &BTreeMap<u64, String>, end_ms: u64) {
    let height = TOP + LANE_H * order.len() as f64 + 24.0;
    let width = LEFT + PLOT_W + 20.0;
    let _ = write!(
        s,
        r#"<svg class="clients" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0}" viewBox="0 0 {width} {height:.0}" role="img" aria-label="client lanes: one per client process, time running right">"#
    );
    for k in 0..=10u64 {
        let t = end_ms * k / 10;
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{:.1}"/><text class="tick mid" x="{x:.1}" y="{}">{}</text>"#,
            TOP - 6.0,
            height - 20.0,
            TOP - 10.0,
            esc(&fmt_ms(t)),
            x = x_of(t, end_ms)
        );
    }
    for (i, p) in order.iter().enumerate() {
        let y = TOP + LANE_H * i as f64;
        let _ = write!(
            s,
            r#"<text class="lane" x="{}" y="{:.1}">{}</text><line class="lane-line" x1="{LEFT}" x2="{}" y1="{:.1}" y2="{:.1}"/>"#,
            LEFT - 6.0,
            y + LANE_H * 0.65,
            esc(&clip(names.get(p).map(String::as_str).unwrap_or("?"), 24)),
            LEFT + PLOT_W,
            y + LANE_H / 2.0,
            y + LANE_H / 2.0
        );
    }
}

fn lanes(page: &mut String, r: &RunResult, witness: &BTreeSet<usize>, context: &BTreeSet<usize>) {
    let ops = r.clients.history.history.ops();
    let names = lane_names(r);
    let mut order = lane_order(ops, witness);
    let lanes_skipped = order.len().saturating_sub(LANES_MAX);
    order.truncate(LANES_MAX);
    let row: BTreeMap<u64, usize> = order.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    let end_ms = r
        .sim_elapsed_ms
        .max(
            ops.iter()
                .filter_map(|o| o.completion.as_ref())
                .map(|c| ms(c.at.time_ns))
                .max()
                .unwrap_or(0),
        )
        .max(1);
    let x = |t_ms: u64| x_of(t_ms, end_ms);
    let mut s = String::new();
    axis_and_lanes(&mut s, &order, &names, end_ms);
    // Bars: every witness op, then the others in order while there is room.
    let mut drawn = 0usize;
    let mut skipped = 0usize;
    let mut bars = String::new();
    let mut marked = String::new();
    let indices = witness
        .iter()
        .copied()
        .chain((0..ops.len()).filter(|i| !witness.contains(i)));
    for i in indices {
        let Some(op) = ops.get(i) else { continue };
        let Some(&lane) = row.get(&op.process) else {
            skipped += 1;
            continue;
        };
        if drawn >= BARS_MAX && !witness.contains(&i) {
            skipped += 1;
            continue;
        }
        drawn += 1;
        let start = ms(op.invoke.time_ns);
        let end = op
            .completion
            .as_ref()
            .map(|c| ms(c.at.time_ns))
            .unwrap_or(end_ms);
        let (x0, x1) = (x(start), x(end));
        let w = (x1 - x0).max(2.0);
        let y = TOP + LANE_H * lane as f64 + 3.0;
        let tip = format!(
            "{}: {} (invoked {}, {} later{})",
            names.get(&op.process).map(String::as_str).unwrap_or("?"),
            describe(op),
            fmt_ms(start),
            fmt_dur(end.saturating_sub(start)),
            op.node
                .as_ref()
                .map(|n| format!(", sent to {n}"))
                .unwrap_or_default()
        );
        let class = kind_class(op);
        let target = if witness.contains(&i) {
            &mut marked
        } else {
            &mut bars
        };
        let _ = write!(
            target,
            r#"<rect class="bar {class}{}" x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}"><title>{}</title></rect>"#,
            match (witness.contains(&i), context.contains(&i)) {
                (true, true) => " witness context",
                (true, false) => " witness",
                (false, _) => "",
            },
            LANE_H - 6.0,
            esc(&tip)
        );
    }
    s.push_str(&bars);
    s.push_str(&marked);
    s.push_str("</svg>");
    page.push_str(r#"<div class="scroll">"#);
    page.push_str(&s);
    page.push_str("</div>");
    let mut caption = format!(
        "{} op(s) on {} lane(s)",
        ops.len(),
        order.len() + lanes_skipped
    );
    if skipped > 0 || lanes_skipped > 0 {
        let _ = write!(
            caption,
            "; {skipped} op(s) and {lanes_skipped} lane(s) not drawn (report.json has every op)"
        );
    }
    let _ = write!(page, r#"<p class="caption">{}.</p>"#, esc(&caption));
}

fn history_table(page: &mut String, r: &RunResult, witness: &BTreeSet<usize>) {
    let ops = r.clients.history.history.ops();
    let names = lane_names(r);
    let _ = write!(
        page,
        r#"<details><summary>The history ({} op(s); <code>faultline history export report.json --edn</code> exports it for Jepsen's tools)</summary><table class="events"><thead><tr><th>#</th><th>client</th><th>node</th><th>op</th><th>invoked</th><th>answered</th><th>as</th></tr></thead><tbody>"#,
        ops.len()
    );
    let shown: Vec<usize> = (0..ops.len())
        .filter(|i| *i < ROWS_MAX || witness.contains(i))
        .collect();
    for i in &shown {
        let op = &ops[*i];
        let _ = write!(
            page,
            r#"<tr{}><td class="num">{i}</td><td>{}</td><td>{}</td><td class="t">{}</td><td class="num">{}</td><td class="num">{}</td><td class="k-{}">{}</td></tr>"#,
            if witness.contains(i) {
                r#" class="witness-row""#
            } else {
                ""
            },
            esc(names.get(&op.process).map(String::as_str).unwrap_or("?")),
            esc(op.node.as_deref().unwrap_or("-")),
            esc(&clip(&describe(op), 160)),
            esc(&fmt_ms(ms(op.invoke.time_ns))),
            esc(&op
                .completion
                .as_ref()
                .map(|c| fmt_ms(ms(c.at.time_ns)))
                .unwrap_or_else(|| "-".into())),
            kind_class(op),
            kind_class(op)
        );
    }
    page.push_str("</tbody></table>");
    if shown.len() < ops.len() {
        let _ = write!(
            page,
            r#"<p class="caption">The first {ROWS_MAX} ops (and the witness's); report.json has all {}.</p>"#,
            ops.len()
        );
    }
    page.push_str("</details>");
}
