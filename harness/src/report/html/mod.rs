//! `report.html`: one self-contained page per run, for the person reproducing a bug.
//!
//! The page reads top to bottom the way a failure is investigated: the verdict
//! against the expectation and the command that replays it; what the checkers found;
//! on a diverged or violated run, the divergence (the first differing key with every
//! replica's value side by side, the failed invariants, the trail events that touched
//! the key); the space-time diagram; each node's final observation; the full trail,
//! filterable by node and kind.
//!
//! Self-contained: inline CSS, inline SVG, one inline script, system fonts, and a
//! Content-Security-Policy that forbids every fetch. Deterministic: the same report
//! gives the same bytes (no wall clock, no random ids, only ordered maps), so two
//! replays of one seed give identical pages. Wall time is left out for that reason.

pub(crate) mod assets;
pub mod clients;
pub mod derive;
pub mod diagram;
pub mod escape;
pub mod scale;

pub use escape::{esc, href_path};

use crate::check::Finding;
use crate::outcome::Outcome;
use crate::runner::RunResult;
use crate::trail::{Event, Kind};
use derive::BandKind;
use escape::clip;
use nodes::api::IndexFormat;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

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

/// How the run's model writes a log position (decimal when the model is unknown,
/// e.g. a report of a model this build no longer has).
fn index_format(r: &RunResult) -> IndexFormat {
    nodes::registry::find(&r.model)
        .map(|m| m.info().index_format)
        .unwrap_or_default()
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
    /// `keys`, or mentioned in its text).
    pub touched: BTreeSet<usize>,
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
        for (i, e) in r.trail.events.iter().enumerate() {
            if d.keys
                .iter()
                .any(|k| e.keys().contains(k) || mentions(&e.detail, k))
            {
                d.touched.insert(i);
            }
        }
        d
    }

    /// Shown on diverged and violated runs, and whenever a checker named a key.
    pub fn applies(&self, r: &RunResult) -> bool {
        matches!(r.outcome, Outcome::Diverged | Outcome::Violated) || self.first.is_some()
    }
}

/// The whole page.
pub fn run_html(r: &RunResult) -> String {
    let names: Vec<String> = r.nodes.iter().map(|n| n.name.clone()).collect();
    let derived = derive::derive(&r.trail.events, &names, r.sim_elapsed_ms);
    let div = Divergence::of(r);
    let diagram = diagram::render(r, &derived, &div.touched);
    let title = format!(
        "{} [{}] seed {}: {} — faultline report",
        r.scenario, r.variant, r.seed, r.outcome
    );
    let mut page = String::with_capacity(diagram.svg.len() + 64 * 1024);
    let _ = write!(
        page,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="faultline {}">
<title>{}</title>
<style>{}</style>
</head>
<body>
"#,
        esc(&escape::csp(assets::SCRIPT)),
        esc(&r.harness_version),
        esc(&title),
        assets::STYLE
    );
    header(&mut page, r);
    page.push_str(r##"<nav class="toc"><a href="#findings">Findings</a>"##);
    if div.applies(r) {
        page.push_str(r##"<a href="#divergence">Divergence</a>"##);
    }
    page.push_str(r##"<a href="#diagram">Diagram</a>"##);
    if !r.clients.history.history.is_empty() {
        page.push_str(r##"<a href="#clients">Clients</a>"##);
    }
    page.push_str(r##"<a href="#nodes">Nodes</a>"##);
    if !r.fail_points.is_empty() {
        page.push_str(r##"<a href="#failpoints">Fail points</a>"##);
    }
    page.push_str(r##"<a href="#trail">Trail</a></nav>"##);
    page.push_str("<main>");
    findings(&mut page, r);
    if div.applies(r) {
        divergence(&mut page, r, &div);
    }
    diagram_section(&mut page, r, &derived, &div, &diagram);
    clients::section(&mut page, r);
    nodes_section(&mut page, r, &div);
    fail_points(&mut page, r);
    trail_section(&mut page, r, &div);
    page.push_str("</main>");
    let _ = write!(
        page,
        r#"<footer>faultline {} · this page is generated from report.json and fetches nothing; re-render it with <code>faultline report report.json</code></footer>
<div id="tip" hidden></div>
<script>{}</script>
</body></html>
"#,
        esc(&r.harness_version),
        assets::SCRIPT
    );
    page
}

fn outcome_badge(outcome: Option<Outcome>) -> String {
    match outcome {
        Some(o) => format!(r#"<span class="badge o-{0}">{0}</span>"#, o.name()),
        None => r#"<span class="badge o-fail">fail</span>"#.to_string(),
    }
}

fn header(page: &mut String, r: &RunResult) {
    let met = r.expected.contains(&r.outcome);
    let explain = if r.passed {
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
            "This run ended {} as expected, but something else the scenario asks for did not hold; see the findings without an outcome below.",
            r.outcome
        )
    } else {
        format!(
            "This run was expected to end {} but ended {}.",
            expected_words(r),
            r.outcome
        )
    };
    let verdict = if r.passed {
        r#"<span class="verdict pass">PASS</span>"#
    } else {
        r#"<span class="verdict fail">FAIL</span>"#
    };
    let _ = write!(
        page,
        r#"<header class="top">
<div class="kicker">faultline run report · model <b>{model}</b></div>
<h1>{scenario} <span class="chip">variant <b>{variant}</b></span> <span class="chip">seed <b>{seed}</b></span></h1>
<div class="outcome-line"><span class="big o-{outcome}">{outcome}</span><span class="expect">expected {expected}</span>{verdict}</div>
<p class="explain">{explain}</p>
<div class="replay"><span class="label">Replay this run</span><code id="replay-cmd">{replay}</code><button type="button" class="copy" data-copy="replay-cmd">copy</button></div>
<dl class="meta">
<div class="file"><dt>scenario file</dt><dd><code>{file}</code></dd></div>
<div><dt>simulated time</dt><dd>{sim} · {steps} steps</dd></div>
<div><dt>trail</dt><dd>{events} events · {messages} messages between nodes</dd></div>
<div class="wide"><dt>trail digest (sha256)</dt><dd><code>{digest}</code></dd></div>
<div class="wide"><dt>scenario sha256</dt><dd><code>{sha}</code></dd></div>
<div><dt>harness version</dt><dd>{version}</dd></div>
</dl>
</header>
"#,
        model = esc(&r.model),
        scenario = esc(&r.scenario),
        variant = esc(&r.variant),
        seed = r.seed,
        outcome = r.outcome.name(),
        expected = esc(&expected_words(r)),
        explain = esc(&explain),
        replay = esc(&r.replay),
        file = esc(&r.file),
        sim = esc(&fmt_ms(r.sim_elapsed_ms)),
        steps = r.sim_steps,
        events = r.trail.len(),
        messages = r.messages_total,
        version = esc(&r.harness_version),
        digest = esc(&r.trail_digest),
        sha = esc(&r.scenario_sha256),
    );
}

fn findings(page: &mut String, r: &RunResult) {
    page.push_str(r#"<section id="findings"><h2>What the checkers found</h2>"#);
    if r.findings.is_empty() {
        page.push_str(
            r#"<p class="ok-note">Nothing: after the heal phase every replica agreed and every invariant held.</p></section>"#,
        );
        return;
    }
    page.push_str(r#"<ul class="findings">"#);
    for finding in &r.findings {
        let _ = write!(
            page,
            r#"<li>{}<span class="checker">{}</span><span class="msg">{}</span>"#,
            outcome_badge(finding.outcome),
            esc(&finding.checker),
            esc(&finding.message)
        );
        if !finding.detail.is_null() {
            let pretty =
                serde_json::to_string_pretty(&finding.detail).unwrap_or_else(|_| "?".into());
            let _ = write!(
                page,
                r#"<details><summary>detail</summary><pre>{}</pre></details>"#,
                esc(&pretty)
            );
        }
        page.push_str("</li>");
    }
    page.push_str("</ul></section>");
}

/// `null` in a finding's values means the replica does not hold the key.
fn value_cell(v: Option<&serde_json::Value>) -> (Option<String>, String) {
    match v {
        Some(serde_json::Value::String(s)) => (Some(s.clone()), esc(s)),
        Some(serde_json::Value::Null) | None => (None, r#"<i class="absent">absent</i>"#.into()),
        Some(other) => (Some(other.to_string()), esc(&other.to_string())),
    }
}

fn divergence(page: &mut String, r: &RunResult, d: &Divergence) {
    page.push_str(r#"<section id="divergence" class="divergence"><h2>Divergence</h2>"#);
    match d.first {
        Some(first) => {
            let key = d.keys.first().cloned().unwrap_or_default();
            let applied = first
                .detail
                .get("applied")
                .and_then(|a| a.as_u64())
                .map(|a| format!(" at applied index <b>{}</b>", index_format(r).show(a)))
                .unwrap_or_default();
            let differing = first
                .detail
                .get("differing_keys")
                .and_then(|n| n.as_u64())
                .unwrap_or(1);
            let _ = write!(
                page,
                r#"<p class="lead">The replicas disagree{applied}. First differing key: <code class="key">{}</code>{}</p>"#,
                esc(&key),
                if differing > 1 {
                    format!(" ({differing} keys differ)")
                } else {
                    " (the only key that differs)".to_string()
                }
            );
            let values = first.detail.get("values").and_then(|v| v.as_object());
            // Replicas side by side, in the run's node order.
            page.push_str(r#"<div class="replicas">"#);
            // Per node: its raw value (None = absent) and the value as shown, or
            // None when the node was not compared.
            type Cell = Option<(Option<String>, String)>;
            let cells: Vec<(&str, Cell)> = r
                .nodes
                .iter()
                .map(|n| {
                    (
                        n.name.as_str(),
                        values
                            .filter(|v| v.contains_key(&n.name))
                            .map(|v| value_cell(v.get(&n.name))),
                    )
                })
                .collect();
            let mut counts: BTreeMap<Option<String>, usize> = BTreeMap::new();
            for (_, cell) in &cells {
                if let Some((raw, _)) = cell {
                    *counts.entry(raw.clone()).or_default() += 1;
                }
            }
            let top = counts.values().copied().max().unwrap_or(0);
            let unique_top = counts.values().filter(|&&c| c == top).count() == 1;
            for (name, cell) in &cells {
                match cell {
                    Some((raw, shown)) => {
                        let odd = !unique_top || counts.get(raw).copied().unwrap_or(0) < top;
                        let _ = write!(
                            page,
                            r#"<div class="replica{}"><div class="rname">{}</div><div class="rval">{}</div>{}</div>"#,
                            if odd { " odd" } else { "" },
                            esc(name),
                            shown,
                            if odd && unique_top {
                                r#"<div class="rnote">differs from the others</div>"#
                            } else {
                                ""
                            }
                        );
                    }
                    None => {
                        let _ = write!(
                            page,
                            r#"<div class="replica skipped"><div class="rname">{}</div><div class="rval"><i>not compared</i></div><div class="rnote">down, or at another applied index</div></div>"#,
                            esc(name)
                        );
                    }
                }
            }
            page.push_str("</div>");
            if d.keys.len() > 1 {
                let others: Vec<String> = d.keys[1..]
                    .iter()
                    .map(|k| format!("<code>{}</code>", esc(k)))
                    .collect();
                let _ = write!(
                    page,
                    "<p>Other checks named: {}.</p>",
                    others.join(", ")
                );
            }
            differing_keys(page, r, values);
        }
        None => page.push_str(
            r#"<p class="lead">No checker reported replicas holding different values; see the failed properties below.</p>"#,
        ),
    }
    page.push_str("<h3>Failed invariants</h3>");
    if d.violations.is_empty() {
        page.push_str(r#"<p class="faint">None: every named safety invariant held.</p>"#);
    } else {
        page.push_str(r#"<ul class="findings">"#);
        for f in &d.violations {
            let _ = write!(
                page,
                r#"<li>{}<span class="checker">{}</span><span class="msg">{}</span></li>"#,
                outcome_badge(f.outcome),
                esc(&f.checker),
                esc(&f.message)
            );
        }
        page.push_str("</ul>");
    }
    if !d.keys.is_empty() {
        let keys: Vec<String> = d
            .keys
            .iter()
            .map(|k| format!("<code>{}</code>", esc(k)))
            .collect();
        let _ = write!(
            page,
            r#"<h3>Trail events that touched {}</h3>"#,
            keys.join(", ")
        );
        if d.touched.is_empty() {
            page.push_str(r#"<p class="faint">No event lists the key or mentions it.</p>"#);
        } else {
            let _ = write!(
                page,
                r#"<p class="faint">{} event(s) list the key or mention it; they are ringed in the diagram. Click a row to find it in the full trail.</p><table class="events touched"><thead><tr><th>#</th><th>time</th><th>node</th><th>kind</th><th>event</th></tr></thead><tbody>"#,
                d.touched.len()
            );
            for &i in &d.touched {
                let e = &r.trail.events[i];
                let _ = write!(
                    page,
                    r##"<tr data-goto="{i}"><td class="num"><a href="#ev-{i}">{i}</a></td><td class="t">{}</td><td>{}</td><td><span class="kind k-{}">{}</span></td><td class="d">{}</td></tr>"##,
                    esc(&fmt_ms(e.t_ms)),
                    esc(e.node.as_deref().unwrap_or("harness")),
                    e.kind.name(),
                    e.kind.name(),
                    esc(&e.detail)
                );
            }
            page.push_str("</tbody></table>");
        }
    }
    page.push_str("</section>");
}

/// Every key that differs between the compared replicas' final states (the
/// checker names the first; this lists them all, bounded).
fn differing_keys(
    page: &mut String,
    r: &RunResult,
    values: Option<&serde_json::Map<String, serde_json::Value>>,
) {
    let group: Vec<&crate::runner::FinalNode> = r
        .nodes
        .iter()
        .filter(|n| match values {
            Some(v) => v.contains_key(&n.name),
            None => n.up,
        })
        .collect();
    if group.len() < 2 {
        return;
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
        return;
    }
    let _ = write!(
        page,
        r#"<h3>Every differing key in the final states ({})</h3><div class="scroll"><table class="kv diff"><thead><tr><th>key</th>"#,
        differing.len()
    );
    for n in &group {
        let _ = write!(page, "<th>{}</th>", esc(&n.name));
    }
    page.push_str("</tr></thead><tbody>");
    for key in differing.iter().take(DIFFERING_ROWS_MAX) {
        let _ = write!(page, "<tr><td><code>{}</code></td>", esc(key));
        for n in &group {
            match n.observation.state.get(*key) {
                Some(v) => {
                    let _ = write!(page, "<td>{}</td>", esc(&clip(v, 200)));
                }
                None => page.push_str(r#"<td><i class="absent">absent</i></td>"#),
            }
        }
        page.push_str("</tr>");
    }
    page.push_str("</tbody></table></div>");
    if differing.len() > DIFFERING_ROWS_MAX {
        let _ = write!(
            page,
            r#"<p class="faint">… and {} more; report.json has every final state.</p>"#,
            differing.len() - DIFFERING_ROWS_MAX
        );
    }
}

fn diagram_section(
    page: &mut String,
    r: &RunResult,
    derived: &derive::Derived,
    div: &Divergence,
    rendered: &diagram::Rendered,
) {
    page.push_str(
        r#"<section id="diagram"><h2>Space-time diagram</h2><p class="explain">One lane per node, simulated time running down; the <b>harness</b> column holds the scenario's steps and network faults. Shaded bands are faults in effect; a hatched, broken lane is a node that is down; a thick gold lane is a leader. Grey arrows are messages between nodes. Hover a mark to see its trail event, click it to find the event in the trail table.</p>"#,
    );
    // The legend lists only what this diagram contains.
    let events = &r.trail.events;
    page.push_str(r#"<div class="legend">"#);
    let mut swatches: Vec<(&str, &str)> = Vec::new();
    let kinds: BTreeSet<BandKind> = derived.bands.iter().map(|b| b.kind).collect();
    for (kind, words) in [
        (BandKind::Partition, "partitioned"),
        (BandKind::Hold, "messages held"),
        (BandKind::Latency, "link latency changed"),
        (BandKind::Stall, "fail-point stall"),
        (BandKind::Heal, "heal phase"),
    ] {
        if kinds.contains(&kind) {
            swatches.push((kind.name(), words));
        }
    }
    if !derived.down.is_empty() {
        swatches.push(("down", "node down"));
    }
    if !derived.leading.is_empty() {
        swatches.push(("leading", "leader (T = term)"));
    }
    for (class, words) in swatches {
        let _ = write!(
            page,
            r#"<span class="lg"><i class="sw sw-{class}"></i>{words}</span>"#
        );
    }
    if rendered.arrows > 0 {
        page.push_str(r#"<span class="lg"><svg width="22" height="12" viewBox="0 0 22 12"><line x1="1" y1="2" x2="19" y2="10" class="lg-msg" marker-end="url(#arrow)"/></svg>messages</span>"#);
    }
    if rendered.op_spans > 0 {
        page.push_str(r#"<span class="lg"><i class="sw sw-op"></i>client op in flight</span>"#);
    }
    if rendered.arrows_cut > 0 {
        page.push_str(r#"<span class="lg"><svg width="22" height="12" viewBox="0 0 22 12"><line x1="1" y1="2" x2="19" y2="10" class="lg-cut" marker-end="url(#arrow-cut)"/></svg>sent on a cut link (dropped)</span>"#);
    }
    if rendered.arrows_held > 0 {
        page.push_str(r#"<span class="lg"><svg width="22" height="12" viewBox="0 0 22 12"><line x1="1" y1="2" x2="19" y2="10" class="lg-held" marker-end="url(#arrow-held)"/></svg>sent on a held link</span>"#);
    }
    // The legend must match the marks: ask the diagram which symbol each event gets.
    let used: BTreeSet<&str> = events.iter().map(diagram::symbol_of).collect();
    for (symbol, words) in diagram::LEGEND {
        if used.contains(symbol) {
            let _ = write!(
                page,
                r##"<span class="lg"><svg width="16" height="16" viewBox="-8 -8 16 16"><use href="#{symbol}"/></svg>{words}</span>"##
            );
        }
    }
    if !div.touched.is_empty() {
        page.push_str(r#"<span class="lg"><svg width="18" height="18" viewBox="-9 -9 18 18"><circle r="7.5" class="ring"/></svg>touched the differing key</span>"#);
    }
    page.push_str("</div>");
    let _ = write!(page, r#"<div class="svgwrap">{}</div>"#, rendered.svg);
    // Say how the picture was made, so nobody misreads a compressed axis.
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
    let _ = write!(
        page,
        r#"<p class="caption">{}.</p></section>"#,
        esc(&notes.join("; "))
    );
}

fn nodes_section(page: &mut String, r: &RunResult, div: &Divergence) {
    page.push_str(r#"<section id="nodes"><h2>Nodes at the end of the run</h2><p class="explain">Each node's last published observation: its replicated state (compared between replicas) and its local facts (never compared).</p><div class="cards">"#);
    for n in &r.nodes {
        let o = &n.observation;
        let mut facts: Vec<(String, String)> = Vec::new();
        if let Some(role) = &o.role {
            facts.push(("role".into(), role.clone()));
        }
        if let Some(term) = o.term {
            facts.push(("term".into(), term.to_string()));
        }
        if let Some(leader) = &o.leader {
            facts.push(("believes leader".into(), leader.clone()));
        }
        if let Some(applied) = o.applied {
            facts.push(("applied index".into(), index_format(r).show(applied)));
        }
        facts.push(("pending work".into(), o.pending.to_string()));
        let _ = write!(
            page,
            r#"<div class="card"><div class="cardhead"><b>{}</b><span class="faint">{}</span><span class="status {}">{}</span><span class="faint">started {}×</span></div><table class="kv">"#,
            esc(&n.name),
            esc(&n.role),
            if n.up { "up" } else { "down" },
            if n.up { "up" } else { "down" },
            n.starts
        );
        for (k, v) in &facts {
            let _ = write!(page, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        page.push_str("</table>");
        let _ = write!(
            page,
            r#"<h4>state <span class="faint">({} key(s))</span></h4>"#,
            o.state.len()
        );
        if !o.state.is_empty() {
            page.push_str(r#"<table class="kv state">"#);
            for (k, v) in o.state.iter().take(STATE_ROWS_MAX) {
                let hot = div.keys.contains(k);
                let _ = write!(
                    page,
                    r#"<tr{}><th><code>{}</code></th><td>{}</td></tr>"#,
                    if hot { r#" class="hot""# } else { "" },
                    esc(k),
                    esc(&clip(v, 300))
                );
            }
            page.push_str("</table>");
            if o.state.len() > STATE_ROWS_MAX {
                let _ = write!(
                    page,
                    r#"<p class="faint">… {} more key(s) in report.json</p>"#,
                    o.state.len() - STATE_ROWS_MAX
                );
            }
        }
        if !o.facts.is_empty() {
            let _ = write!(
                page,
                r#"<h4>facts <span class="faint">({})</span></h4><table class="kv">"#,
                o.facts.len()
            );
            for (k, v) in o.facts.iter().take(STATE_ROWS_MAX) {
                let _ = write!(
                    page,
                    "<tr><th><code>{}</code></th><td>{}</td></tr>",
                    esc(k),
                    esc(&clip(v, 300))
                );
            }
            page.push_str("</table>");
        }
        page.push_str("</div>");
    }
    page.push_str("</div></section>");
}

fn fail_points(page: &mut String, r: &RunResult) {
    if r.fail_points.is_empty() {
        return;
    }
    page.push_str(r#"<section id="failpoints"><h2>Fail points</h2><table class="events"><thead><tr><th>node</th><th>point</th><th>action</th><th>scenario line</th><th>reached</th><th>fired</th></tr></thead><tbody>"#);
    for p in &r.fail_points {
        let _ = write!(
            page,
            r#"<tr{}><td>{}</td><td><code>{}</code></td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}{}</td></tr>"#,
            if p.fired == 0 && !p.optional {
                r#" class="never""#
            } else {
                ""
            },
            esc(&p.node),
            esc(&p.point),
            esc(&p.action),
            p.line,
            p.hits,
            p.fired,
            if p.optional { " (optional)" } else { "" }
        );
    }
    page.push_str("</tbody></table></section>");
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

fn trail_section(page: &mut String, r: &RunResult, div: &Divergence) {
    let events = &r.trail.events;
    let rows = trail_rows(events);
    let _ = write!(
        page,
        r#"<section id="trail"><h2>Trail <span class="faint">({} events)</span></h2>"#,
        events.len()
    );
    if rows.len() < events.len() {
        let _ = write!(
            page,
            r#"<p class="warn">The table shows {} of {} events: the first and last {} and every fault, check and op result in between. report.json has the whole trail.</p>"#,
            rows.len(),
            events.len(),
            TRAIL_ROWS_MAX * 2 / 5
        );
    }
    // Filters: by node (including the harness), by kind, by text.
    let mut per_node: BTreeMap<usize, usize> = BTreeMap::new();
    let mut harness = 0usize;
    let mut per_kind: BTreeMap<Kind, usize> = BTreeMap::new();
    for &i in &rows {
        let e = &events[i];
        match e
            .node
            .as_deref()
            .and_then(|n| r.nodes.iter().position(|x| x.name == n))
        {
            Some(lane) => *per_node.entry(lane).or_default() += 1,
            None if e.node.is_none() => harness += 1,
            None => {}
        }
        *per_kind.entry(e.kind).or_default() += 1;
    }
    // Events naming a node the run does not have still get a filter entry.
    let mut strays: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in &rows {
        if let Some(n) = events[i].node.as_deref() {
            if !r.nodes.iter().any(|x| x.name == n) {
                *strays.entry(n).or_default() += 1;
            }
        }
    }
    page.push_str(r#"<div class="filters"><div class="fgroup" data-group="node"><span class="flabel">node</span>"#);
    let _ = write!(
        page,
        r#"<label class="chip"><input type="checkbox" value="" checked><i>harness</i> <span class="cnt">{harness}</span></label>"#
    );
    for (lane, n) in r.nodes.iter().enumerate() {
        let _ = write!(
            page,
            r#"<label class="chip"><input type="checkbox" value="{}" checked>{} <span class="cnt">{}</span></label>"#,
            esc(&n.name),
            esc(&n.name),
            per_node.get(&lane).copied().unwrap_or(0)
        );
    }
    for (n, count) in &strays {
        let _ = write!(
            page,
            r#"<label class="chip"><input type="checkbox" value="{}" checked>{} <span class="cnt">{count}</span></label>"#,
            esc(n),
            esc(n)
        );
    }
    page.push_str(r#"<button type="button" data-all="node">all</button><button type="button" data-none="node">none</button></div><div class="fgroup" data-group="kind"><span class="flabel">kind</span>"#);
    for (kind, count) in &per_kind {
        let fault = diagram::is_fault_kind(*kind);
        let _ = write!(
            page,
            r#"<label class="chip"><input type="checkbox" value="{k}"{f} checked><span class="kind k-{k}">{k}</span> <span class="cnt">{count}</span></label>"#,
            k = kind.name(),
            f = if fault { r#" data-fault="1""# } else { "" }
        );
    }
    page.push_str(r#"<button type="button" data-all="kind">all</button><button type="button" data-none="kind">none</button><button type="button" id="faults-only">faults only</button></div><div class="fgroup"><input type="search" id="trail-q" placeholder="filter by text (e.g. a key)" aria-label="filter by text"><span id="trail-count" class="faint"></span></div></div>"#);
    page.push_str(r#"<div class="scroll"><table class="events" id="trail-table"><thead><tr><th>#</th><th>time</th><th>node</th><th>kind</th><th>event</th><th>line</th></tr></thead><tbody>"#);
    for &i in &rows {
        let e = &events[i];
        let node = e.node.as_deref().unwrap_or("");
        let mut class = String::new();
        if diagram::is_fault_mark(e) {
            class.push_str("fault");
        }
        if div.touched.contains(&i) {
            class.push_str(if class.is_empty() { "touch" } else { " touch" });
        }
        let keys = if e.keys().is_empty() {
            String::new()
        } else {
            let ks: Vec<String> = e
                .keys()
                .iter()
                .map(|k| format!("<code>{}</code>", esc(k)))
                .collect();
            format!(r#" <span class="keys">keys {}</span>"#, ks.join(" "))
        };
        let _ = write!(
            page,
            r#"<tr id="ev-{i}" data-node="{}" data-kind="{}"{}><td class="num">{i}</td><td class="t">{}</td><td>{}</td><td><span class="kind k-{}">{}</span></td><td class="d">{}{keys}</td><td class="num">{}</td></tr>"#,
            esc(node),
            e.kind.name(),
            if class.is_empty() {
                String::new()
            } else {
                format!(r#" class="{class}""#)
            },
            esc(&fmt_ms(e.t_ms)),
            if node.is_empty() {
                r#"<i class="faint">harness</i>"#.to_string()
            } else {
                esc(node)
            },
            e.kind.name(),
            e.kind.name(),
            esc(&e.detail),
            e.line.map(|l| l.to_string()).unwrap_or_default()
        );
    }
    page.push_str("</tbody></table></div></section>");
}

#[cfg(test)]
mod tests;
