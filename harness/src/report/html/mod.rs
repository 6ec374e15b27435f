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
//! [`escape::Html`]; this module derives what they show (the view structs below)
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
pub mod escape;
pub mod scale;

pub use escape::{esc, href_path};

use crate::check::cause::{self, Cause};
use crate::check::Finding;
use crate::outcome::Outcome;
use crate::runner::RunResult;
use crate::trail::{Event, Kind};
use askama::Template;
use derive::BandKind;
use escape::clip;
use faultline_api::IndexFormat;
use std::collections::{BTreeMap, BTreeSet};

/// Trail rows in the table; beyond it the table keeps the head, the tail and every
/// fault, op and check in between (report.json always has the whole trail).
pub const TRAIL_ROWS_MAX: usize = 10_000;
/// State keys listed per node card.
const STATE_ROWS_MAX: usize = 200;
/// Rows in the divergence view's table of all differing keys.
const DIFFERING_ROWS_MAX: usize = 30;

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
    crate::models::find(&r.model)
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

/// What the divergence view shows, computed from the findings, the trail and the
/// final observations.
#[derive(Debug, Default)]
pub struct Divergence<'a> {
    /// Keys named by divergence findings, first detection first.
    pub keys: Vec<String>,
    /// The finding that named the first key.
    pub first: Option<&'a Finding>,
    /// Findings that say a safety property failed (outcome `violated`).
    pub violations: Vec<&'a Finding>,
    /// Trail indices of events that touched one of `keys` (listed in the event's
    /// `keys`, or mentioned in its text), and the events the cause cites.
    pub touched: BTreeSet<usize>,
    /// The checker-side explanation: the first finding's cause (a divergence's,
    /// else a failed invariant's).
    pub cause: Option<Cause>,
}

impl<'a> Divergence<'a> {
    pub fn of(r: &'a RunResult) -> Divergence<'a> {
        let mut d = Divergence::default();
        for finding in &r.findings {
            if let Some(key) = finding.detail.get("key").and_then(|k| k.as_str()) {
                if !d.keys.iter().any(|k| k == key) {
                    d.keys.push(key.to_string());
                }
                d.first.get_or_insert(finding);
            }
            if finding.outcome == Some(Outcome::Violated) {
                d.violations.push(finding);
            }
        }
        // A departure from the fixed twin is the find's cause; the checker-side
        // cause (the faults in effect) is then not offered as one.
        d.cause = if r.departed() {
            None
        } else {
            d.first
                .and_then(cause::of)
                .or_else(|| d.violations.iter().find_map(|f| cause::of(f)))
                .or_else(|| r.findings.iter().find_map(cause::of))
        };
        for (i, e) in r.trail.events.iter().enumerate() {
            if d.keys
                .iter()
                .any(|k| e.keys().contains(k) || mentions(&e.detail, k))
            {
                d.touched.insert(i);
            }
        }
        let n = r.trail.events.len();
        if let Some(cause) = &d.cause {
            d.touched
                .extend(cause.events().into_iter().filter(|&i| i < n));
        }
        d.touched.extend(
            r.differential
                .iter()
                .filter(|dep| dep.fixed_passed && dep.event < n)
                .map(|dep| dep.event),
        );
        d
    }

    /// Shown when a checker named a key the replicas disagree on (a violated
    /// run without one has its findings and its cause, and nothing to show here).
    pub fn applies(&self) -> bool {
        self.first.is_some()
    }
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
        let declared = crate::models::probes(&r.model, &r.coverage.declared);
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
            let crate::trail::Data::Node(faultline_api::NodeEvent::Probe { probe, .. }) =
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

struct FindingView<'a> {
    /// The outcome's name, or `fail` for a finding without one (badge class and text).
    badge: &'static str,
    checker: &'a str,
    message: &'a str,
    /// The detail, pretty-printed, when there is one.
    detail: Option<String>,
    /// The cause's sentence, when the finding carries one that the page's
    /// Cause section does not already give.
    cause: Option<String>,
    /// Later findings of the same checker about the same thing (a mid-run
    /// check and the final check both finding one divergence), not listed again.
    again: usize,
}

impl<'a> FindingView<'a> {
    fn of(f: &'a Finding) -> FindingView<'a> {
        FindingView {
            badge: f.outcome.map(|o| o.name()).unwrap_or("fail"),
            checker: &f.checker,
            message: &f.message,
            detail: (!f.detail.is_null())
                .then(|| serde_json::to_string_pretty(&f.detail).unwrap_or_else(|_| "?".into())),
            cause: cause::of(f).map(|c| c.summary),
            again: 0,
        }
    }

    /// The run's findings as the page lists them: one entry per checker,
    /// outcome and subject (the key a finding names, else its message), with a
    /// count of the repeats; a cause only where the Cause section does not
    /// already say it, and none when a departure from the fixed twin is the cause.
    fn all(r: &'a RunResult, shown: Option<&Cause>) -> Vec<FindingView<'a>> {
        let subject = |f: &'a Finding| {
            f.detail
                .get("key")
                .and_then(|k| k.as_str())
                .unwrap_or(&f.message)
        };
        let mut views: Vec<(FindingView<'a>, FindingId<'a>)> = Vec::new();
        for f in &r.findings {
            let id = (f.checker.as_str(), f.outcome, subject(f));
            if let Some((view, _)) = views.iter_mut().find(|(_, seen)| *seen == id) {
                view.again += 1;
                continue;
            }
            let mut view = FindingView::of(f);
            if r.departed() || view.cause.as_deref() == shown.map(|c| c.summary.as_str()) {
                view.cause = None;
            }
            views.push((view, id));
        }
        views.into_iter().map(|(view, _)| view).collect()
    }
}

/// What makes two findings the same for the page: checker, outcome, subject.
type FindingId<'a> = (&'a str, Option<Outcome>, &'a str);

/// Where a buggy run and its fixed twin first disagree, as the Cause section
/// shows it: both events side by side.
struct DepartureView {
    key: String,
    event: usize,
    buggy: Option<SideView>,
    fixed: Option<SideView>,
    fixed_passed: bool,
}

struct SideView {
    time: String,
    node: String,
    kind: String,
    detail: String,
}

impl DepartureView {
    fn of(d: &crate::check::differential::Departure) -> DepartureView {
        let side = |s: &crate::check::differential::Side| SideView {
            time: fmt_ms(s.t_ms),
            node: s.node.clone().unwrap_or_else(|| "harness".into()),
            kind: s.kind.name(),
            detail: s.detail.clone(),
        };
        DepartureView {
            key: d.key.clone(),
            event: d.event,
            buggy: d.buggy.as_ref().map(side),
            fixed: d.fixed.as_ref().map(side),
            fixed_passed: d.fixed_passed,
        }
    }
}

struct DivergenceView<'a> {
    /// The first differing key and the replicas' values; `None` when no checker
    /// named a key (a violated run).
    first: Option<FirstDifference<'a>>,
    keys: Vec<String>,
    touched: Vec<TouchedRow<'a>>,
}

struct FirstDifference<'a> {
    key: String,
    /// The applied index, as the model writes log positions.
    applied: Option<String>,
    differing: u64,
    /// Replicas side by side, in the run's node order.
    replicas: Vec<ReplicaCell<'a>>,
    /// Whether one value is held by more replicas than any other (then the others
    /// are marked as the ones that differ).
    unique_top: bool,
    table: Option<DifferingKeys<'a>>,
}

struct ReplicaCell<'a> {
    name: &'a str,
    /// `None`: the node was not compared; `Some(None)`: it does not hold the key.
    value: Option<Option<String>>,
    odd: bool,
}

struct TouchedRow<'a> {
    i: usize,
    time: String,
    node: &'a str,
    kind: String,
    detail: &'a str,
}

/// `null` in a finding's values means the replica does not hold the key.
fn value_text(v: Option<&serde_json::Value>) -> Option<String> {
    match v {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    }
}

impl<'a> DivergenceView<'a> {
    fn of(r: &'a RunResult, d: &Divergence<'a>) -> DivergenceView<'a> {
        DivergenceView {
            first: d.first.map(|first| FirstDifference::of(r, d, first)),
            keys: d.keys.clone(),
            touched: d
                .touched
                .iter()
                .map(|&i| {
                    let e = &r.trail.events[i];
                    TouchedRow {
                        i,
                        time: fmt_ms(e.t_ms),
                        node: e.node.as_deref().unwrap_or("harness"),
                        kind: e.kind.name(),
                        detail: &e.detail,
                    }
                })
                .collect(),
        }
    }
}

/// The cause, as the divergence view shows it: the sentence, what each replica
/// did at the index (or to the key), the faults in effect, the fault effects.
struct CauseView {
    summary: String,
    /// `index 11`, `key dn1/C1`, or empty (fault effects).
    about: String,
    rows: Vec<CauseRow>,
    /// Trail position, time, node and text of each fault in effect.
    faults: Vec<(usize, String, String, String)>,
    /// Trail position of the hit and the effect in words.
    effects: Vec<(usize, String)>,
}

struct CauseRow {
    node: String,
    did: String,
    /// The apply event's trail position and time.
    at: Option<(usize, String)>,
    /// Positions and words of the storage, hit and later events.
    notes: Vec<(usize, String)>,
    odd: bool,
}

impl CauseView {
    fn of(r: &RunResult, c: &Cause) -> CauseView {
        let format = index_format(r);
        let about = match c.basis {
            cause::Basis::Index => c.index_shown.as_ref().map(|index| format!("index {index}")),
            cause::Basis::Key => c.key.as_ref().map(|key| format!("key {key}")),
            cause::Basis::Faults => None,
        }
        .unwrap_or_default();
        let rows = c
            .replicas
            .iter()
            .map(|rep| {
                let mut notes: Vec<(usize, String)> = Vec::new();
                for e in rep.hits.iter().chain(&rep.storage).chain(&rep.after) {
                    notes.push((
                        e.event,
                        format!(
                            "{} {}: {}",
                            fmt_ms(e.t_ms),
                            e.kind.name(),
                            clip(&e.detail, 160)
                        ),
                    ));
                }
                if let cause::Did::Lost { down, .. } = &rep.did {
                    notes.push((
                        down.event,
                        format!(
                            "{} went down: {}",
                            fmt_ms(down.t_ms),
                            clip(&down.detail, 160)
                        ),
                    ));
                }
                if let (Some(resumed), Some(at)) = (rep.resumed_at, c.index) {
                    if resumed > at {
                        notes.push((
                            usize::MAX,
                            format!(
                                "resumed at index {} without applying {} again",
                                format.show(resumed),
                                format.show(at)
                            ),
                        ));
                    }
                }
                CauseRow {
                    node: rep.node.clone(),
                    did: cause::did_words(&rep.did),
                    at: rep.did.at().map(|a| (a.event, fmt_ms(a.t_ms))),
                    notes,
                    odd: c.odd.contains(&rep.node),
                }
            })
            .collect();
        CauseView {
            summary: c.summary.clone(),
            about,
            rows,
            faults: c
                .faults
                .iter()
                .map(|f| {
                    (
                        f.event,
                        fmt_ms(f.t_ms),
                        f.node.clone().unwrap_or_else(|| "harness".into()),
                        f.detail.clone(),
                    )
                })
                .collect(),
            effects: c
                .effects
                .iter()
                .filter(|f| f.hit.event < r.trail.events.len())
                .map(|f| (f.hit.event, cause::effect_words(f, &r.trail.events, format)))
                .collect(),
        }
    }
}

impl<'a> FirstDifference<'a> {
    fn of(r: &'a RunResult, d: &Divergence<'a>, first: &'a Finding) -> FirstDifference<'a> {
        let values = first.detail.get("values").and_then(|v| v.as_object());
        let cells: Vec<(&str, Option<Option<String>>)> = r
            .nodes
            .iter()
            .map(|n| {
                (
                    n.name.as_str(),
                    values
                        .filter(|v| v.contains_key(&n.name))
                        .map(|v| value_text(v.get(&n.name))),
                )
            })
            .collect();
        let mut counts: BTreeMap<Option<String>, usize> = BTreeMap::new();
        for value in cells.iter().filter_map(|(_, v)| v.as_ref()) {
            *counts.entry(value.clone()).or_default() += 1;
        }
        let top = counts.values().copied().max().unwrap_or(0);
        let unique_top = counts.values().filter(|&&c| c == top).count() == 1;
        let replicas = cells
            .into_iter()
            .map(|(name, value)| {
                let odd = value
                    .as_ref()
                    .is_some_and(|v| !unique_top || counts.get(v).copied().unwrap_or(0) < top);
                ReplicaCell { name, value, odd }
            })
            .collect();
        FirstDifference {
            key: d.keys.first().cloned().unwrap_or_default(),
            applied: first
                .detail
                .get("applied")
                .and_then(|a| a.as_u64())
                .map(|a| index_format(r).show(a)),
            differing: first
                .detail
                .get("differing_keys")
                .and_then(|n| n.as_u64())
                .unwrap_or(1),
            replicas,
            unique_top,
            table: DifferingKeys::of(r, values),
        }
    }
}

/// Every key that differs between the compared replicas' final states (the
/// checker names the first; this lists them all, bounded).
struct DifferingKeys<'a> {
    names: Vec<&'a str>,
    /// Key, then each compared replica's value (clipped; `None`: absent).
    rows: Vec<(&'a str, Vec<Option<String>>)>,
    total: usize,
}

impl<'a> DifferingKeys<'a> {
    fn of(
        r: &'a RunResult,
        values: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<DifferingKeys<'a>> {
        let group: Vec<&crate::runner::FinalNode> = r
            .nodes
            .iter()
            .filter(|n| match values {
                Some(v) => v.contains_key(&n.name),
                None => n.up,
            })
            .collect();
        if group.len() < 2 {
            return None;
        }
        let keys: BTreeSet<&String> = group
            .iter()
            .flat_map(|n| n.observation.state.keys())
            .collect();
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| {
                let distinct: BTreeSet<Option<&String>> =
                    group.iter().map(|n| n.observation.state.get(*k)).collect();
                distinct.len() > 1
            })
            .collect();
        if differing.len() < 2 {
            // The one differing key is already shown above.
            return None;
        }
        Some(DifferingKeys {
            names: group.iter().map(|n| n.name.as_str()).collect(),
            rows: differing
                .iter()
                .take(DIFFERING_ROWS_MAX)
                .map(|key| {
                    let cells = group
                        .iter()
                        .map(|n| n.observation.state.get(*key).map(|v| clip(v, 200)))
                        .collect();
                    (key.as_str(), cells)
                })
                .collect(),
            total: differing.len(),
        })
    }
}

struct DiagramView {
    rendered: diagram::Rendered,
    /// Band and lane swatches: (class suffix, words), only those in the diagram.
    swatches: Vec<(&'static str, &'static str)>,
    /// Mark symbols the diagram uses, with their words.
    symbols: Vec<(&'static str, &'static str)>,
    touched: bool,
    /// How the picture was made, so nobody misreads a compressed axis.
    caption: String,
}

impl DiagramView {
    fn of(
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

fn caption(r: &RunResult, rendered: &diagram::Rendered) -> String {
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

struct NodeCard<'a> {
    name: &'a str,
    role: &'a str,
    up: bool,
    starts: u32,
    /// What the harness knows of the node: role, term, leader, applied, pending.
    facts: Vec<(&'static str, String)>,
    state: Vec<StateRow<'a>>,
    state_len: usize,
    /// The model's local facts (never compared).
    local: Vec<(&'a str, String)>,
    local_len: usize,
}

struct StateRow<'a> {
    key: &'a str,
    value: String,
    /// The key is one the checkers found differing.
    hot: bool,
}

impl<'a> NodeCard<'a> {
    fn of(
        n: &'a crate::runner::FinalNode,
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

/// Which trail rows the table shows: all of them up to [`TRAIL_ROWS_MAX`]; beyond,
/// the head, the tail, and every fault, fail point, check and op in between.
fn trail_rows(events: &[Event]) -> Vec<usize> {
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

struct TrailView<'a> {
    total: usize,
    /// Head and tail rows kept when the table is cut.
    edge: usize,
    /// Filter chips: events of the harness, of each node (then of names that are
    /// not nodes of the run), of each kind.
    harness: usize,
    nodes: Vec<(&'a str, usize)>,
    kinds: Vec<KindChip>,
    /// Rows the table has (plain and folded).
    shown: usize,
    /// The rows, with runs of plain op traffic folded ([`collapse`]).
    parts: Vec<TrailPart<'a>>,
}

struct TrailPart<'a> {
    group: Option<collapse::Summary>,
    rows: Vec<TrailRow<'a>>,
}

struct KindChip {
    name: String,
    fault: bool,
    count: usize,
}

struct TrailRow<'a> {
    i: usize,
    time: String,
    node: &'a str,
    kind: String,
    /// `fault`, `touch` (touched the differing key), both, or empty.
    class: String,
    detail: &'a str,
    keys: &'a [String],
    line: Option<u32>,
}

impl<'a> TrailView<'a> {
    fn of(r: &'a RunResult, div: &Divergence, linked: &BTreeSet<usize>) -> TrailView<'a> {
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
    fn of(r: &'a RunResult, div: &Divergence, i: usize) -> TrailRow<'a> {
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

#[cfg(test)]
mod tests;
