//! The sweep dashboard, `index.html`: how a sweep's runs ended, per scenario and
//! variant; how long they ran in simulated time; how fast the sweep went; and every
//! failure with a link to its run report and the commands that replay and shrink it.
//!
//! It reads only [`RunRecord`]s (the lines a sweep appends to its results file), so
//! it can be rebuilt from that file alone. Same rules as the run report: one
//! self-contained file, everything from the records escaped, links made only by
//! [`href_path`], deterministic for given records. No script at all.

use super::html::{esc, fmt_dur, href_path};
use super::{atomic_write, safe_component, RunRecord};
use crate::outcome::Outcome;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Most bars in the duration histogram and in the throughput chart.
pub const BINS_MAX: usize = 24;
pub const THROUGHPUT_BINS_MAX: usize = 120;
/// Failures listed; the rest are counted.
pub const FAILURES_MAX: usize = 500;

/// Runs of one scenario variant, by outcome.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub runs: usize,
    pub passed: usize,
    pub outcomes: BTreeMap<Outcome, usize>,
}

/// (scenario, variant) -> counts, in name order.
pub fn counts(records: &[RunRecord]) -> BTreeMap<(String, String), Counts> {
    let mut out: BTreeMap<(String, String), Counts> = BTreeMap::new();
    for r in records {
        let c = out
            .entry((r.scenario.clone(), r.variant.clone()))
            .or_default();
        c.runs += 1;
        c.passed += usize::from(r.passed);
        *c.outcomes.entry(r.outcome).or_default() += 1;
    }
    out
}

/// Equal-width bins over some values; each bin counts (passed, failed).
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub start: u64,
    pub width: u64,
    pub bins: Vec<(usize, usize)>,
}

/// 1, 2, 5, 10, 20, 50, ...
fn nice_widths() -> impl Iterator<Item = u64> {
    (0..19u32).flat_map(|e| [1u64, 2, 5].map(|m| m * 10u64.pow(e)))
}

/// Bins of a "nice" width (1-2-5 steps) starting at a multiple of it, at most
/// `bins_max` of them.
pub fn histogram(values: &[(u64, bool)], bins_max: usize) -> Option<Histogram> {
    let min = values.iter().map(|v| v.0).min()?;
    let max = values.iter().map(|v| v.0).max()?;
    let width = nice_widths()
        .find(|w| ((max / w - min / w) as usize) < bins_max)
        .unwrap_or(u64::MAX / 2);
    let start = min / width * width;
    let mut bins = vec![(0usize, 0usize); ((max - start) / width) as usize + 1];
    for &(v, passed) in values {
        let bin = &mut bins[((v - start) / width) as usize];
        if passed {
            bin.0 += 1;
        } else {
            bin.1 += 1;
        }
    }
    Some(Histogram { start, width, bins })
}

fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The run report next to a record's report.json (the path is relative to the
/// report directory).
fn html_sibling(report: &str) -> String {
    match report.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/report.html"),
        None => "report.html".to_string(),
    }
}

/// `faultline shrink <report.json> -o <name>.yaml`, with the report's path as seen
/// from where the sweep ran (`dir` joined), when known.
pub fn shrink_command(record: &RunRecord, dir: Option<&Path>) -> Option<String> {
    let report = record.report.as_deref()?;
    let path = match dir {
        Some(dir) => dir.join(report).display().to_string(),
        None => report.to_string(),
    };
    let name = safe_component(&format!(
        "{}-{}-seed-{}.min",
        record.scenario, record.variant, record.seed
    ));
    Some(format!(
        "faultline shrink {} -o {name}.yaml",
        shell_quote(&path)
    ))
}

/// The dashboard page; commands name report paths relative to the report directory.
pub fn dashboard_html(records: &[RunRecord], title: &str) -> String {
    render(records, title, None)
}

/// Write `index.html` into `dir` (atomically); returns its path. Commands in it name
/// report paths under `dir`, as seen from where the sweep ran.
pub fn write_dashboard(dir: &Path, records: &[RunRecord]) -> std::io::Result<PathBuf> {
    let path = dir.join("index.html");
    let title = format!("faultline sweep: {}", dir.display());
    atomic_write(&path, render(records, &title, Some(dir)).as_bytes())?;
    Ok(path)
}

fn f(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

fn render(records: &[RunRecord], title: &str, dir: Option<&Path>) -> String {
    let passed = records.iter().filter(|r| r.passed).count();
    let failed = records.len() - passed;
    let sweep_ms = records.iter().filter_map(|r| r.ended_ms).max();
    let mut page = String::with_capacity(32 * 1024);
    let _ = write!(
        page,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{}</title>
<style>{}{}</style>
</head><body>
<header class="top"><div class="kicker">faultline sweep dashboard</div><h1>{}</h1>
<div class="outcome-line"><span class="big {}">{}</span><span class="expect">{} run(s): {passed} met their expectation, {failed} did not</span></div>"#,
        esc(title),
        super::html::assets::STYLE,
        STYLE,
        esc(title),
        if failed == 0 {
            "o-converged"
        } else {
            "o-diverged"
        },
        if failed == 0 {
            "all passed"
        } else {
            "failures"
        },
        records.len(),
    );
    if let Some(ms) = sweep_ms {
        let _ = write!(
            page,
            r#"<p class="explain">The sweep ran for {} of wall time: {:.1} runs per second on average.</p>"#,
            esc(&fmt_dur(ms)),
            records.len() as f64 * 1000.0 / ms.max(1) as f64
        );
    }
    page.push_str(r##"</header><nav class="toc"><a href="#outcomes">Outcomes</a><a href="#durations">Simulated durations</a><a href="#throughput">Runs per second</a><a href="#failures">Failures</a></nav><main>"##);
    outcomes(&mut page, records);
    durations(&mut page, records);
    throughput(&mut page, records);
    failures(&mut page, records, dir);
    page.push_str("</main><footer>faultline · generated from the sweep's run records; fetches nothing</footer></body></html>\n");
    page
}

const STYLE: &str = r#"
table.grid{border-collapse:collapse;font-size:13px;margin:4px 0}
table.grid th{text-align:left;font-weight:600;color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.04em;border-bottom:2px solid var(--line);padding:5px 10px}
table.grid td{border-bottom:1px solid #f0f2f4;padding:4px 10px;vertical-align:top}
table.grid td.n{text-align:right;font-variant-numeric:tabular-nums}
td.zero{color:#d0d5db}
.bar rect{stroke:#fff;stroke-width:.5}
svg.chart{display:block;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}
svg.chart .axis{stroke:#9aa5b1}
svg.chart .lbl{font-size:10.5px;fill:#616e7c}
svg.chart .pass{fill:#66bb6a}svg.chart .fail{fill:#e57373}svg.chart .rate{fill:#5c8fd6}
.cmd{display:block;white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;margin-bottom:4px}
.cmdl{display:block;font-size:10.5px;text-transform:uppercase;letter-spacing:.05em;color:var(--faint)}
td.msg{max-width:520px;overflow-wrap:anywhere}
"#;

fn outcome_color(o: Outcome) -> &'static str {
    match o {
        Outcome::Converged => "#2e7d32",
        Outcome::Diverged => "#c62828",
        Outcome::Violated => "#ad1457",
        Outcome::Stuck => "#795548",
        Outcome::Crashed => "#37474f",
        Outcome::Unknown => "#757575",
    }
}

fn outcomes(page: &mut String, records: &[RunRecord]) {
    page.push_str(r#"<section id="outcomes"><h2>Outcomes per scenario and variant</h2><div class="scroll"><table class="grid"><thead><tr><th>scenario</th><th>variant</th><th>runs</th><th>met expectation</th><th>did not</th>"#);
    for o in Outcome::ALL {
        let _ = write!(page, "<th>{}</th>", o.name());
    }
    page.push_str("<th></th></tr></thead><tbody>");
    for ((scenario, variant), c) in counts(records) {
        let _ = write!(
            page,
            r#"<tr><td>{}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n{}">{}</td>"#,
            esc(&scenario),
            esc(&variant),
            c.runs,
            c.passed,
            if c.runs == c.passed { " zero" } else { "" },
            c.runs - c.passed
        );
        for o in Outcome::ALL {
            let n = c.outcomes.get(&o).copied().unwrap_or(0);
            let _ = write!(
                page,
                r#"<td class="n{}">{n}</td>"#,
                if n == 0 { " zero" } else { "" }
            );
        }
        // A stacked bar of the outcomes, in severity order.
        page.push_str(r#"<td><svg class="bar" width="160" height="12" viewBox="0 0 160 12">"#);
        let mut x = 0.0;
        for o in Outcome::ALL {
            let n = c.outcomes.get(&o).copied().unwrap_or(0);
            if n == 0 {
                continue;
            }
            let w = 160.0 * n as f64 / c.runs as f64;
            let _ = write!(
                page,
                r#"<rect x="{}" y="0" width="{}" height="12" fill="{}"><title>{}: {n}</title></rect>"#,
                f(x),
                f(w),
                outcome_color(o),
                o.name()
            );
            x += w;
        }
        page.push_str("</svg></td></tr>");
    }
    page.push_str("</tbody></table></div></section>");
}

fn durations(page: &mut String, records: &[RunRecord]) {
    page.push_str(r#"<section id="durations"><h2>Simulated duration of the runs</h2>"#);
    let values: Vec<(u64, bool)> = records
        .iter()
        .map(|r| (r.sim_elapsed_ms, r.passed))
        .collect();
    let Some(h) = histogram(&values, BINS_MAX) else {
        page.push_str(r#"<p class="faint">No runs.</p></section>"#);
        return;
    };
    let (w, ht, left, bottom) = (760.0, 220.0, 44.0, 34.0);
    let plot_w = w - left - 10.0;
    let plot_h = ht - bottom - 10.0;
    let max = h.bins.iter().map(|b| b.0 + b.1).max().unwrap_or(1).max(1) as f64;
    let bar_w = plot_w / h.bins.len() as f64;
    let _ = write!(
        page,
        r#"<p class="explain">Runs per bin of {}; green met their expectation, red did not.</p><svg class="chart" width="{w}" height="{ht}" viewBox="0 0 {w} {ht}">"#,
        esc(&fmt_dur(h.width))
    );
    let _ = write!(
        page,
        r#"<line class="axis" x1="{left}" x2="{}" y1="{y}" y2="{y}"/><text class="lbl" x="{}" y="14" text-anchor="end">{}</text><text class="lbl" x="{}" y="{}" text-anchor="end">0</text>"#,
        f(w - 10.0),
        f(left - 6.0),
        max as usize,
        f(left - 6.0),
        f(ht - bottom),
        y = f(ht - bottom)
    );
    let label_every = (h.bins.len() / 8).max(1);
    for (i, &(p, fl)) in h.bins.iter().enumerate() {
        let x = left + i as f64 * bar_w;
        let lo = h.start + i as u64 * h.width;
        let hp = plot_h * p as f64 / max;
        let hf = plot_h * fl as f64 / max;
        let base = ht - bottom;
        let _ = write!(
            page,
            r#"<g><title>{} – {}: {} run(s), {fl} failed</title><rect class="pass" x="{}" y="{}" width="{}" height="{}"/><rect class="fail" x="{}" y="{}" width="{}" height="{}"/></g>"#,
            esc(&fmt_dur(lo)),
            esc(&fmt_dur(lo + h.width)),
            p + fl,
            f(x + 1.0),
            f(base - hp),
            f(bar_w - 2.0),
            f(hp),
            f(x + 1.0),
            f(base - hp - hf),
            f(bar_w - 2.0),
            f(hf)
        );
        if i % label_every == 0 {
            let _ = write!(
                page,
                r#"<text class="lbl" x="{}" y="{}">{}</text>"#,
                f(x + 1.0),
                f(base + 14.0),
                esc(&fmt_dur(lo))
            );
        }
    }
    page.push_str("</svg></section>");
}

/// Runs that ended per bin of wall time since the sweep started, as runs per second.
pub fn throughput_bins(records: &[RunRecord]) -> Option<(u64, Vec<usize>)> {
    let ends: Vec<u64> = records.iter().filter_map(|r| r.ended_ms).collect();
    let last = *ends.iter().max()?;
    let width = nice_widths()
        .map(|w| w * 1000)
        .find(|w| ((last / w) as usize) < THROUGHPUT_BINS_MAX)
        .unwrap_or(u64::MAX / 2);
    let mut bins = vec![0usize; (last / width) as usize + 1];
    for end in ends {
        bins[(end / width) as usize] += 1;
    }
    Some((width, bins))
}

fn throughput(page: &mut String, records: &[RunRecord]) {
    page.push_str(r#"<section id="throughput"><h2>Runs per second over the sweep</h2>"#);
    let Some((width, bins)) = throughput_bins(records) else {
        page.push_str(r#"<p class="faint">These records carry no end times (they were not made by a sweep).</p></section>"#);
        return;
    };
    let rates: Vec<f64> = bins
        .iter()
        .map(|&n| n as f64 * 1000.0 / width as f64)
        .collect();
    let max = rates.iter().cloned().fold(0.0f64, f64::max).max(1e-9);
    let (w, ht, left, bottom) = (760.0, 180.0, 44.0, 30.0);
    let plot_h = ht - bottom - 10.0;
    let bar_w = (w - left - 10.0) / bins.len() as f64;
    let _ = write!(
        page,
        r#"<p class="explain">Runs that finished in each {} of wall time since the sweep started, as runs per second.</p><svg class="chart" width="{w}" height="{ht}" viewBox="0 0 {w} {ht}"><line class="axis" x1="{left}" x2="{}" y1="{y}" y2="{y}"/><text class="lbl" x="{}" y="14" text-anchor="end">{:.1}/s</text>"#,
        esc(&fmt_dur(width)),
        f(w - 10.0),
        f(left - 6.0),
        max,
        y = f(ht - bottom)
    );
    let label_every = (bins.len() / 8).max(1);
    for (i, (&n, &rate)) in bins.iter().zip(&rates).enumerate() {
        let x = left + i as f64 * bar_w;
        let h = plot_h * rate / max;
        let _ = write!(
            page,
            r#"<rect class="rate" x="{}" y="{}" width="{}" height="{}"><title>{} – {}: {n} run(s), {:.2}/s</title></rect>"#,
            f(x + 0.5),
            f(ht - bottom - h),
            f((bar_w - 1.0).max(0.5)),
            f(h),
            esc(&fmt_dur(i as u64 * width)),
            esc(&fmt_dur((i as u64 + 1) * width)),
            rate
        );
        if i % label_every == 0 {
            let _ = write!(
                page,
                r#"<text class="lbl" x="{}" y="{}">{}</text>"#,
                f(x),
                f(ht - bottom + 14.0),
                esc(&fmt_dur(i as u64 * width))
            );
        }
    }
    page.push_str("</svg></section>");
}

fn failures(page: &mut String, records: &[RunRecord], dir: Option<&Path>) {
    let failing: Vec<&RunRecord> = records.iter().filter(|r| !r.passed).collect();
    let _ = write!(
        page,
        r#"<section id="failures"><h2>Failures <span class="faint">({})</span></h2>"#,
        failing.len()
    );
    if failing.is_empty() {
        page.push_str(r#"<p class="ok-note">Every run met its expectation.</p></section>"#);
        return;
    }
    page.push_str(r#"<div class="scroll"><table class="grid"><thead><tr><th>scenario</th><th>variant</th><th>seed</th><th>outcome</th><th>expected</th><th>first finding</th><th>report</th><th>replay and shrink</th></tr></thead><tbody>"#);
    for r in failing.iter().take(FAILURES_MAX) {
        let expected: Vec<&str> = r.expected.iter().map(|o| o.name()).collect();
        let finding = r
            .findings
            .first()
            .map(|f| format!("{}: {}", f.checker, f.message))
            .unwrap_or_default();
        let link = match r.report.as_deref() {
            Some(report) => format!(
                r#"<a href="{}">report</a>"#,
                esc(&href_path(&html_sibling(report)))
            ),
            None => r#"<span class="faint">none written</span>"#.to_string(),
        };
        let shrink = shrink_command(r, dir)
            .map(|c| format!(r#"<span class="cmdl">shrink</span><code class="cmd">{}</code>"#, esc(&c)))
            .unwrap_or_else(|| {
                r#"<span class="faint">shrinking needs the run's report.json (run with --report-dir)</span>"#
                    .to_string()
            });
        let _ = write!(
            page,
            r#"<tr><td>{}</td><td>{}</td><td class="n">{}</td><td><span class="badge o-{o}">{o}</span></td><td>{}</td><td class="msg">{}</td><td>{link}</td><td><span class="cmdl">replay</span><code class="cmd">{}</code>{shrink}</td></tr>"#,
            esc(&r.scenario),
            esc(&r.variant),
            r.seed,
            esc(&expected.join(" or ")),
            esc(&super::html::escape::clip(&finding, 240)),
            esc(&r.replay),
            o = r.outcome.name(),
        );
    }
    page.push_str("</tbody></table></div>");
    if failing.len() > FAILURES_MAX {
        let _ = write!(
            page,
            r#"<p class="warn">{} more failures are not listed; the results file has them all.</p>"#,
            failing.len() - FAILURES_MAX
        );
    }
    page.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        scenario: &str,
        variant: &str,
        seed: u64,
        outcome: Outcome,
        passed: bool,
    ) -> RunRecord {
        RunRecord {
            schema_version: crate::report::RECORD_SCHEMA_VERSION,
            scenario: scenario.into(),
            file: format!("scenarios/{scenario}.yaml"),
            variant: variant.into(),
            seed,
            outcome,
            expected: vec![Outcome::Converged],
            passed,
            trail_digest: "00".repeat(32),
            sim_elapsed_ms: 1_000 + seed * 250,
            wall_ms: 10,
            findings: vec![],
            replay: format!(
                "faultline run scenarios/{scenario}.yaml --variant {variant} --seed {seed}"
            ),
            report: Some(format!("{scenario}/{variant}/seed-{seed}/report.json")),
            ended_ms: Some(seed * 400),
            nondeterminism: None,
            trail_excerpt: vec![],
            started_unix_ms: None,
        }
    }

    fn sweep() -> Vec<RunRecord> {
        let mut records = Vec::new();
        for seed in 1..=8 {
            records.push(record("kv", "fixed", seed, Outcome::Converged, true));
        }
        records.push(record("kv", "buggy", 9, Outcome::Diverged, false));
        records.push(record("kv", "buggy", 10, Outcome::Converged, true));
        records.push(record("zk", "default", 11, Outcome::Stuck, false));
        records
    }

    #[test]
    fn counts_per_scenario_and_variant() {
        let c = counts(&sweep());
        let keys: Vec<(String, String)> = c.keys().cloned().collect();
        assert_eq!(
            keys,
            [("kv", "buggy"), ("kv", "fixed"), ("zk", "default")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let buggy = &c[&("kv".to_string(), "buggy".to_string())];
        assert_eq!((buggy.runs, buggy.passed), (2, 1));
        assert_eq!(buggy.outcomes[&Outcome::Diverged], 1);
        assert_eq!(
            c[&("kv".into(), "fixed".into())].outcomes[&Outcome::Converged],
            8
        );
    }

    #[test]
    fn histogram_uses_nice_bins_and_splits_pass_and_fail() {
        // 1250, 1500, ..., 3750 ms: 100 ms bins would be 26, so 200 ms.
        let values: Vec<(u64, bool)> = sweep()
            .iter()
            .map(|r| (r.sim_elapsed_ms, r.passed))
            .collect();
        let h = histogram(&values, BINS_MAX).unwrap();
        assert_eq!((h.start, h.width), (1200, 200));
        assert_eq!(h.bins.len(), 13);
        let total: usize = h.bins.iter().map(|b| b.0 + b.1).sum();
        assert_eq!(total, 11);
        let failed: usize = h.bins.iter().map(|b| b.1).sum();
        assert_eq!(failed, 2);
        assert!(h.bins.len() <= BINS_MAX);
        // Seed 9's run (3,250 ms) failed: bin (3250 - 1200) / 200 = 10.
        assert_eq!(h.bins[10], (0, 1));
        assert_eq!(h.bins[0], (1, 0));
        assert_eq!(histogram(&[], 10), None);
        let one = histogram(&[(5, true)], 10).unwrap();
        assert_eq!(one.bins, vec![(1, 0)]);
    }

    #[test]
    fn throughput_bins_count_runs_by_end_time() {
        let (width, bins) = throughput_bins(&sweep()).unwrap();
        // Ends at 400 ms .. 4.4 s: one-second bins.
        assert_eq!(width, 1000);
        assert_eq!(bins, vec![2, 2, 3, 2, 2]);
        let mut none = sweep();
        for r in &mut none {
            r.ended_ms = None;
        }
        assert_eq!(throughput_bins(&none), None);
    }

    #[test]
    fn failures_link_their_reports_and_carry_replay_and_shrink() {
        let page = dashboard_html(&sweep(), "nightly");
        let failures = &page[page.find(r#"<section id="failures""#).unwrap()..];
        assert!(failures.contains("Failures <span class=\"faint\">(2)</span>"));
        assert!(failures.contains(r#"<a href="kv/buggy/seed-9/report.html">report</a>"#));
        assert!(failures.contains("faultline run scenarios/kv.yaml --variant buggy --seed 9"));
        assert!(failures
            .contains("faultline shrink kv/buggy/seed-9/report.json -o kv-buggy-seed-9.min.yaml"));
        assert!(
            !failures.contains("seed-3/report.html"),
            "passing runs are not failures"
        );
        // The outcome table and both charts are there.
        assert!(page.contains("<td>kv</td><td>buggy</td><td class=\"n\">2</td>"));
        assert!(page.contains("runs per second on average"));
        assert_eq!(page.matches(r#"<svg class="chart""#).count(), 2);
        // With the report directory known, commands name paths under it.
        let dir = std::path::Path::new("reports/nightly");
        let r = &sweep()[8];
        assert_eq!(
            shrink_command(r, Some(dir)).unwrap(),
            "faultline shrink reports/nightly/kv/buggy/seed-9/report.json -o kv-buggy-seed-9.min.yaml"
        );
    }

    #[test]
    fn hostile_records_are_escaped_and_links_stay_relative() {
        let mut r = record("<script>x</script>", "\"'><b>", 1, Outcome::Diverged, false);
        r.report = Some("javascript:alert(1)//x/report.json".into());
        r.replay = "faultline run '</td><script>'".into();
        let page = dashboard_html(&[r], "<title>");
        assert_eq!(page.matches("<script").count(), 0);
        assert!(!page.contains("<b>"));
        assert!(page.contains(r#"href="javascript%3Aalert%281%29/x/report.html""#));
        // Shell-quoted, then HTML-escaped.
        assert!(page.contains("faultline shrink &#39;javascript:alert(1)//x/report.json&#39;"));
    }

    #[test]
    fn write_dashboard_writes_index_html() {
        let dir = std::env::temp_dir().join(format!("faultline-dash-{}", std::process::id()));
        let path = write_dashboard(&dir, &sweep()).unwrap();
        assert_eq!(path, dir.join("index.html"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("<!DOCTYPE html>"));
        assert_eq!(
            text,
            render(
                &sweep(),
                &format!("faultline sweep: {}", dir.display()),
                Some(&dir)
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
