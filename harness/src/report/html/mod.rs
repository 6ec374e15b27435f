//! `report.html`: one self-contained page per run, for the person reproducing a bug.
//!
//! The page reads top to bottom the way a failure is investigated: the verdict
//! against the expectation and the command that replays it; what the checkers found;
//! on a diverged or violated run, the divergence (the first differing key with every
//! replica's value side by side, its cause as the checkers explained it from the
//! typed trail, the failed invariants, the trail events that touched the key or that
//! the cause cites); the space-time diagram; each node's final observation; the full trail,
//! filterable by node and kind, its runs of plain op traffic folded ([`collapse`]).
//!
//! The markup is in askama templates (`harness/templates/report/`), escaped by
//! [`escape::Html`]; this module and its submodules derive what they show (the view structs)
//! and leaves the drawing of the diagram to [`diagram`].
//!
//! Self-contained: inline CSS, inline SVG, one inline script, system fonts, and a
//! Content-Security-Policy that forbids every fetch. Deterministic: the same report
//! gives the same bytes (no wall clock, no random ids, only ordered maps), so two
//! replays of one seed give identical pages. Wall time is left out for that reason.

pub(crate) mod assets;
pub mod clients;
pub mod collapse;
pub mod derive;
pub mod diagram;
mod divergence;
pub mod escape;
mod findings;
mod panels;
pub mod scale;
mod trail_view;

pub use divergence::Divergence;
pub use escape::{esc, href_path};

use crate::base::outcome::Outcome;
use crate::sim::runner::RunResult;
use askama::Template;
use divergence::DivergenceView;
use faultline_api::IndexFormat;
use findings::{CauseView, DepartureView, FindingView};
use panels::{DiagramView, NodeCard};
use trail_view::{trail_rows, TrailView};

/// Trail rows in the table; beyond it the table keeps the head, the tail and every
/// fault, op and check in between (report.json always has the whole trail).
pub const TRAIL_ROWS_MAX: usize = 10_000;

/// Simulated time, for people: `202 ms`, `2.204 s`, `12:03.250`, `1:02:03.250`.
pub fn fmt_ms(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{}.{:03} s", ms / 1_000, ms % 1_000)
    } else if ms < 3_600_000 {
        format!("{}:{:02}.{:03}", ms / 60_000, ms / 1_000 % 60, ms % 1_000)
    } else {
        format!(
            "{}:{:02}:{:02}.{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1_000 % 60,
            ms % 1_000
        )
    }
}

/// A length of simulated time: `40 ms`, `2.00 s`, `3 min 20 s`, `2 h 5 min`.
pub fn fmt_dur(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.2} s", ms as f64 / 1_000.0)
    } else if ms < 3_600_000 {
        format!("{} min {} s", ms / 60_000, ms / 1_000 % 60)
    } else {
        format!("{} h {} min", ms / 3_600_000, ms / 60_000 % 60)
    }
}

/// How the run's model writes a log position (decimal when the model is unknown,
/// e.g. a report of a model this build no longer has).
fn index_format(r: &RunResult) -> IndexFormat {
    crate::base::models::find(&r.model)
        .map(|m| m.info().index_format)
        .unwrap_or_default()
}

fn expected_words(r: &RunResult) -> String {
    let names: Vec<&str> = r.expected.iter().map(|o| o.name()).collect();
    match names.len() {
        0 => "(nothing)".into(),
        1 => names[0].into(),
        _ => format!(
            "{} or {}",
            names[..names.len() - 1].join(", "),
            names[names.len() - 1]
        ),
    }
}

/// Does `detail` mention `key` as a whole word (not inside a longer name)?
pub fn mentions(detail: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    detail.match_indices(key).any(|(at, _)| {
        let before = detail[..at].chars().next_back();
        let after = detail[at + key.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The whole page.
pub fn run_html(r: &RunResult) -> String {
    let names: Vec<String> = r.nodes.iter().map(|n| n.name.clone()).collect();
    let derived = derive::derive(&r.trail.events, &names, r.sim_elapsed_ms);
    let div = Divergence::of(r);
    let rendered = diagram::render(r, &derived, &div.touched);
    RunPage {
        r,
        title: format!(
            "{} [{}] seed {}: {} — faultline report",
            r.scenario,
            r.variant_label(),
            r.seed,
            r.outcome
        ),
        csp: escape::csp(assets::SCRIPT),
        style: assets::STYLE,
        script: assets::SCRIPT,
        expected: expected_words(r),
        bugs: r
            .bugs
            .0
            .iter()
            .map(|(key, mode)| BugChip {
                key,
                mode: match mode {
                    faultline_api::BugMode::Buggy => "buggy",
                    faultline_api::BugMode::Fixed => "fixed",
                },
                overridden: r.bug_overrides.0.contains_key(key),
            })
            .collect(),
        explain: explain(r),
        sim: fmt_ms(r.sim_elapsed_ms),
        findings: FindingView::all(r, div.cause.as_ref()),
        departures: r.differential.iter().map(DepartureView::of).collect(),
        cause: div.cause.as_ref().map(|c| CauseView::of(r, c)),
        divergence: div.applies().then(|| DivergenceView::of(r, &div)),
        diagram: DiagramView::of(r, &derived, &div, rendered),
        nodes: r
            .nodes
            .iter()
            .map(|n| NodeCard::of(n, &div, index_format(r)))
            .collect(),
        clients: clients::section(r),
        probes: ProbeRow::of(r),
        sequence: SequenceRow::of(r),
        trail: TrailView::of(r, &div, &collapse::linked(r, &div)),
    }
    .render()
    .map(|page| page + "\n") // askama drops the template file's last newline
    .expect("the report templates render to a String")
}

/// What `templates/report/run.html` shows.
#[derive(Template)]
#[template(path = "report/run.html")]
struct RunPage<'a> {
    r: &'a RunResult,
    title: String,
    csp: String,
    style: &'static str,
    script: &'static str,
    expected: String,
    /// The bug modes in effect, in key order (the header names each).
    bugs: Vec<BugChip<'a>>,
    explain: String,
    sim: String,
    findings: Vec<FindingView<'a>>,
    /// Where the run departs from its fixed twin, per bug key buggy in it.
    departures: Vec<DepartureView>,
    /// The checker-side cause, when no departure explains the find.
    cause: Option<CauseView>,
    divergence: Option<DivergenceView<'a>>,
    diagram: DiagramView,
    nodes: Vec<NodeCard<'a>>,
    /// The "What clients saw" section, built by [`clients`] from escaped text
    /// (like the diagram's SVG); empty when the run had no client op.
    clients: String,
    probes: Vec<ProbeRow>,
    /// The variant's `sequence:` entries and where each matched.
    sequence: Vec<SequenceRow>,
    trail: TrailView<'a>,
}

/// One `sequence:` entry of the expectation: where it is in the file, and the
/// event it matched (with a link to its trail row when the trail shows it).
struct SequenceRow {
    entry: usize,
    at: String,
    describe: String,
    /// `(event, time, shown)`: the event's number, its time, and whether the
    /// trail table has its row.
    matched: Option<(usize, String, bool)>,
}

impl SequenceRow {
    fn of(r: &RunResult) -> Vec<SequenceRow> {
        let shown = trail_rows(&r.trail.events);
        r.sequence
            .iter()
            .map(|s| SequenceRow {
                entry: s.entry,
                at: format!("{}:{}:{}", r.file, s.line, s.col),
                describe: s.describe.clone(),
                matched: s.event.map(|i| {
                    (
                        i,
                        fmt_ms(s.t_ms.unwrap_or_default()),
                        shown.binary_search(&i).is_ok(),
                    )
                }),
            })
            .collect()
    }
}

/// One bug mode the run had: its key, `buggy` or `fixed`, and whether
/// `--bug` set it over the variant's.
struct BugChip<'a> {
    key: &'a str,
    mode: &'static str,
    overridden: bool,
}

/// One probe of the run's model: where and when nodes reached it. Every declared
/// probe gets a row, so the page says which windows this run never opened; a
/// probe on the trail that the model no longer declares still gets one.
struct ProbeRow {
    name: String,
    rare: bool,
    summary: String,
    /// `node at time`, in trail order (each node reports once per incarnation).
    hits: Vec<String>,
}

impl ProbeRow {
    fn of(r: &RunResult) -> Vec<ProbeRow> {
        let declared = crate::base::models::probes(&r.model, &r.coverage.declared);
        let mut rows: Vec<ProbeRow> = declared
            .into_iter()
            .map(|p| ProbeRow {
                name: p.name,
                rare: p.rare,
                summary: p.summary,
                hits: Vec::new(),
            })
            .collect();
        for event in &r.trail.events {
            let crate::base::trail::Data::Node(faultline_api::NodeEvent::Probe { probe, .. }) =
                &event.data
            else {
                continue;
            };
            let at = format!(
                "{} at {}",
                event.node.as_deref().unwrap_or("?"),
                fmt_ms(event.t_ms)
            );
            match rows.iter_mut().find(|row| row.name == *probe) {
                Some(row) => row.hits.push(at),
                None => rows.push(ProbeRow {
                    name: probe.clone(),
                    rare: false,
                    summary: event.detail.clone(),
                    hits: vec![at],
                }),
            }
        }
        rows
    }
}

/// The sentence under the verdict.
fn explain(r: &RunResult) -> String {
    let met = r.expected.contains(&r.outcome);
    if r.passed {
        if matches!(r.outcome, Outcome::Converged) {
            format!(
                "This run met its expectation: it was expected to end {} and it did; every replica agreed and every invariant held.",
                expected_words(r)
            )
        } else {
            format!(
                "This run met its expectation: it was expected to end {} and ended {}. The failure below is the one this variant is meant to show.",
                expected_words(r),
                r.outcome
            )
        }
    } else if met {
        format!(
            "This run ended {} as expected, but something else the scenario asks for did not hold: {}. See the findings without an outcome below.",
            r.outcome,
            super::unmet(&r.findings).unwrap_or_else(|| "a finding without an outcome".into())
        )
    } else {
        format!(
            "This run was expected to end {} but ended {}.",
            expected_words(r),
            r.outcome
        )
    }
}

#[cfg(test)]
mod tests;
