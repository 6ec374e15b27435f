//! The sweep dashboard, `index.html`: how a sweep's runs ended, per scenario and
//! variant; how long they ran in simulated time; how fast the sweep went; the
//! failures grouped by signature (`groups`), each with a link to its first run's
//! report, the commands that replay and shrink it, and its seeds behind a
//! disclosure; and a sweep's coverage ledger.
//!
//! It reads only [`RunRecord`]s (the lines a sweep appends to its results file), so
//! it can be rebuilt from that file alone. Same rules as the run report: one
//! self-contained file, everything from the records escaped, links made only by
//! [`href_path`], deterministic for given records. No script at all. The markup
//! is in askama templates (`harness/templates/dashboard/`); this module counts,
//! bins and lays out the charts.

use super::html::{fmt_dur, href_path};
use super::{safe_component, RunRecord};
use crate::base::outcome::Outcome;
use crate::base::text::shell_quote;
use askama::Template;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Most bars in the duration histogram and in the throughput chart.
pub const BINS_MAX: usize = 24;
pub const THROUGHPUT_BINS_MAX: usize = 120;
/// Failure signatures (groups) listed; the rest are counted.
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
    render(records, title, None, None, "")
}

/// Write `index.html` into `dir` (atomically); returns its path. Commands in it name
/// report paths under `dir`, as seen from where the sweep ran.
pub fn write_dashboard(
    dir: &Path,
    records: &[RunRecord],
) -> Result<PathBuf, crate::base::fsio::Error> {
    write_dashboard_with(dir, records, None)
}

/// `write_dashboard`, with the note of a sweep or merge that lost coverage
/// (`ran X of Y`): the page then says "incomplete" where it would say "all
/// passed", since a sweep that did not run every seed is not green.
pub fn write_dashboard_with(
    dir: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
) -> Result<PathBuf, crate::base::fsio::Error> {
    write_dashboard_coverage(dir, records, incomplete, "")
}

/// `write_dashboard_with`, with a sweep's coverage ledger as an HTML section
/// (`Ledger::html`, made of escaped text; empty for none).
pub fn write_dashboard_coverage(
    dir: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
    coverage: &str,
) -> Result<PathBuf, crate::base::fsio::Error> {
    let title = format!("faultline sweep: {}", dir.display());
    crate::base::fsio::tree_write(
        dir,
        Path::new("index.html"),
        render(records, &title, Some(dir), incomplete, coverage).as_bytes(),
    )
}

fn f(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

fn render(
    records: &[RunRecord],
    title: &str,
    dir: Option<&Path>,
    incomplete: Option<&str>,
    coverage: &str,
) -> String {
    let passed = records.iter().filter(|r| r.passed).count();
    let sweep_ms = records.iter().filter_map(|r| r.ended_ms).max();
    Dashboard {
        title,
        incomplete,
        style: super::html::assets::STYLE,
        dashboard_style: STYLE,
        runs: records.len(),
        passed,
        failed: records.len() - passed,
        wall: sweep_ms.map(fmt_dur),
        rate: sweep_ms
            .map(|ms| records.len() as f64 * 1000.0 / ms.max(1) as f64)
            .unwrap_or(0.0),
        outcome_names: Outcome::ALL.map(|o| o.name()),
        outcome_rows: outcome_rows(records),
        durations: DurationChart::of(records),
        throughput: ThroughputChart::of(records),
        failures: Failures::of(records, dir),
        coverage,
    }
    .render()
    .map(|page| page + "\n") // askama drops the template file's last newline
    .expect("the dashboard templates render to a String")
}

/// What `templates/dashboard/index.html` shows.
#[derive(Template)]
#[template(path = "dashboard/index.html")]
struct Dashboard<'a> {
    title: &'a str,
    /// Why the sweep or merge did not cover every planned run, when it did not.
    incomplete: Option<&'a str>,
    style: &'static str,
    dashboard_style: &'static str,
    runs: usize,
    passed: usize,
    failed: usize,
    /// Wall time of the sweep, when the records carry end times.
    wall: Option<String>,
    rate: f64,
    outcome_names: [&'static str; 6],
    outcome_rows: Vec<OutcomeRow>,
    durations: Option<DurationChart>,
    throughput: Option<ThroughputChart>,
    failures: Failures<'a>,
    /// The coverage ledger's HTML (escaped text, built by `report::doc`);
    /// empty when there is none.
    coverage: &'a str,
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
details.seeds{margin:6px 0 0 0;font-size:12px;overflow-wrap:anywhere}
#coverage h3{font-size:14px;margin:14px 0 4px}
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

struct OutcomeRow {
    scenario: String,
    variant: String,
    runs: usize,
    passed: usize,
    /// Runs per outcome, in [`Outcome::ALL`] order.
    per_outcome: Vec<usize>,
    bar: Vec<BarSegment>,
}

/// One outcome's share of a 160-pixel stacked bar.
struct BarSegment {
    x: String,
    w: String,
    color: &'static str,
    outcome: &'static str,
    n: usize,
}

fn outcome_rows(records: &[RunRecord]) -> Vec<OutcomeRow> {
    counts(records)
        .into_iter()
        .map(|((scenario, variant), c)| {
            let mut x = 0.0;
            let mut bar = Vec::new();
            for o in Outcome::ALL {
                let n = c.outcomes.get(&o).copied().unwrap_or(0);
                if n == 0 {
                    continue;
                }
                let w = 160.0 * n as f64 / c.runs as f64;
                bar.push(BarSegment {
                    x: f(x),
                    w: f(w),
                    color: outcome_color(o),
                    outcome: o.name(),
                    n,
                });
                x += w;
            }
            OutcomeRow {
                scenario,
                variant,
                runs: c.runs,
                passed: c.passed,
                per_outcome: Outcome::ALL
                    .iter()
                    .map(|o| c.outcomes.get(o).copied().unwrap_or(0))
                    .collect(),
                bar,
            }
        })
        .collect()
}

/// The histogram of simulated durations, laid out.
struct DurationChart {
    width: String,
    w: f64,
    h: f64,
    left: f64,
    axis_end: String,
    base: String,
    label_x: String,
    label_y: String,
    max: usize,
    bars: Vec<DurationBar>,
}

struct DurationBar {
    from: String,
    to: String,
    runs: usize,
    failed: usize,
    x: String,
    w: String,
    pass_y: String,
    pass_h: String,
    fail_y: String,
    fail_h: String,
    /// Every few bars, the bin's start under the axis.
    label: Option<String>,
}

impl DurationChart {
    fn of(records: &[RunRecord]) -> Option<DurationChart> {
        let values: Vec<(u64, bool)> = records
            .iter()
            .map(|r| (r.sim_elapsed_ms, r.passed))
            .collect();
        let h = histogram(&values, BINS_MAX)?;
        let (w, ht, left, bottom) = (760.0, 220.0, 44.0, 34.0);
        let plot_w = w - left - 10.0;
        let plot_h = ht - bottom - 10.0;
        let max = h.bins.iter().map(|b| b.0 + b.1).max().unwrap_or(1).max(1) as f64;
        let bar_w = plot_w / h.bins.len() as f64;
        let base = ht - bottom;
        let label_every = (h.bins.len() / 8).max(1);
        let bars = h
            .bins
            .iter()
            .enumerate()
            .map(|(i, &(p, fl))| {
                let x = left + i as f64 * bar_w;
                let lo = h.start + i as u64 * h.width;
                let hp = plot_h * p as f64 / max;
                let hf = plot_h * fl as f64 / max;
                DurationBar {
                    from: fmt_dur(lo),
                    to: fmt_dur(lo + h.width),
                    runs: p + fl,
                    failed: fl,
                    x: f(x + 1.0),
                    w: f(bar_w - 2.0),
                    pass_y: f(base - hp),
                    pass_h: f(hp),
                    fail_y: f(base - hp - hf),
                    fail_h: f(hf),
                    label: (i % label_every == 0).then(|| fmt_dur(lo)),
                }
            })
            .collect();
        Some(DurationChart {
            width: fmt_dur(h.width),
            w,
            h: ht,
            left,
            axis_end: f(w - 10.0),
            base: f(base),
            label_x: f(left - 6.0),
            label_y: f(base + 14.0),
            max: max as usize,
            bars,
        })
    }
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

/// Runs per second over the sweep's wall time, laid out.
struct ThroughputChart {
    width: String,
    w: f64,
    h: f64,
    left: f64,
    axis_end: String,
    base: String,
    label_x: String,
    label_y: String,
    max: f64,
    bars: Vec<ThroughputBar>,
}

struct ThroughputBar {
    from: String,
    to: String,
    runs: usize,
    rate: f64,
    x: String,
    y: String,
    w: String,
    h: String,
    label_x: String,
    label: Option<String>,
}

impl ThroughputChart {
    fn of(records: &[RunRecord]) -> Option<ThroughputChart> {
        let (width, bins) = throughput_bins(records)?;
        let rates: Vec<f64> = bins
            .iter()
            .map(|&n| n as f64 * 1000.0 / width as f64)
            .collect();
        let max = rates.iter().cloned().fold(0.0f64, f64::max).max(1e-9);
        let (w, ht, left, bottom) = (760.0, 180.0, 44.0, 30.0);
        let plot_h = ht - bottom - 10.0;
        let bar_w = (w - left - 10.0) / bins.len() as f64;
        let label_every = (bins.len() / 8).max(1);
        let bars = bins
            .iter()
            .zip(&rates)
            .enumerate()
            .map(|(i, (&n, &rate))| {
                let x = left + i as f64 * bar_w;
                let h = plot_h * rate / max;
                ThroughputBar {
                    from: fmt_dur(i as u64 * width),
                    to: fmt_dur((i as u64 + 1) * width),
                    runs: n,
                    rate,
                    x: f(x + 0.5),
                    y: f(ht - bottom - h),
                    w: f((bar_w - 1.0).max(0.5)),
                    h: f(h),
                    label_x: f(x),
                    label: (i % label_every == 0).then(|| fmt_dur(i as u64 * width)),
                }
            })
            .collect();
        Some(ThroughputChart {
            width: fmt_dur(width),
            w,
            h: ht,
            left,
            axis_end: f(w - 10.0),
            base: f(ht - bottom),
            label_x: f(left - 6.0),
            label_y: f(ht - bottom + 14.0),
            max,
            bars,
        })
    }
}

struct Failures<'a> {
    /// Failing runs.
    total: usize,
    /// Their signatures (groups).
    signatures: usize,
    rows: Vec<FailureRow<'a>>,
}

/// One signature's failures: its first run in full, every seed behind a
/// disclosure.
struct FailureRow<'a> {
    r: &'a RunRecord,
    /// The signature without scenario and variant ([`Signature::label`](super::groups::Signature::label)).
    signature: String,
    runs: usize,
    expected: String,
    /// The first finding, clipped.
    finding: String,
    /// The first run's report.html, relative (made by [`href_path`]).
    link: Option<String>,
    shrink: Option<String>,
    /// Up to [`SEEDS_LINKED`] seeds, each with its run's page when one was written.
    seeds: Vec<(u64, Option<String>)>,
    /// Seeds not listed.
    more_seeds: usize,
}

/// Seeds listed (and linked) per signature.
pub const SEEDS_LINKED: usize = 500;

impl<'a> Failures<'a> {
    fn of(records: &'a [RunRecord], dir: Option<&Path>) -> Failures<'a> {
        let failing: Vec<&RunRecord> = records.iter().filter(|r| !r.passed).collect();
        let groups = super::groups::group(failing.iter().copied());
        Failures {
            total: failing.len(),
            signatures: groups.len(),
            rows: groups
                .into_iter()
                .take(FAILURES_MAX)
                .map(|g| {
                    let r = g.first();
                    let expected: Vec<&str> = r.expected.iter().map(|o| o.name()).collect();
                    let finding = r
                        .findings
                        .first()
                        .map(|f| format!("{}: {}", f.checker, f.message))
                        .unwrap_or_default();
                    let link =
                        |m: &RunRecord| m.report.as_deref().map(|p| href_path(&html_sibling(p)));
                    // One entry per seed: a guided sweep's derived runs share theirs.
                    let mut seeds: Vec<(u64, Option<String>)> = Vec::new();
                    for m in &g.members {
                        if seeds.last().map(|s| s.0) != Some(m.seed) {
                            seeds.push((m.seed, link(m)));
                        }
                    }
                    let more_seeds = seeds.len().saturating_sub(SEEDS_LINKED);
                    seeds.truncate(SEEDS_LINKED);
                    FailureRow {
                        r,
                        signature: g.signature.label(),
                        runs: g.runs(),
                        expected: expected.join(" or "),
                        finding: super::html::escape::clip(&finding, 240),
                        link: link(r),
                        shrink: shrink_command(r, dir),
                        seeds,
                        more_seeds,
                    }
                })
                .collect(),
        }
    }
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
            replay: format!(
                "faultline run scenarios/{scenario}.yaml --variant {variant} --seed {seed}"
            ),
            report: Some(format!("{scenario}/{variant}/seed-{seed}/report.json")),
            ended_ms: Some(seed * 400),
            ..RunRecord::default()
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
    fn identical_failures_are_one_row_with_their_seeds_behind_a_disclosure() {
        let mut records = sweep();
        for seed in [12, 13] {
            records.push(record("kv", "buggy", seed, Outcome::Diverged, false));
        }
        let page = dashboard_html(&records, "nightly");
        let failures = &page[page.find(r#"<section id="failures""#).unwrap()..];
        assert!(
            failures.contains("4 failing run(s) of 2 signature(s)"),
            "{failures}"
        );
        assert_eq!(failures.matches("<details class=\"seeds\">").count(), 2);
        assert!(
            failures.contains(r#"<summary>3 seed(s)</summary><a href="kv/buggy/seed-9/report.html">9</a>, <a href="kv/buggy/seed-12/report.html">12</a>, <a href="kv/buggy/seed-13/report.html">13</a></details>"#),
            "{failures}"
        );
        // One replay command per signature: its first seed's.
        assert!(failures.contains("--variant buggy --seed 9"));
        assert!(!failures.contains("--variant buggy --seed 12<"));
        assert!(failures.contains("<td class=\"msg\">diverged (no finding)</td><td class=\"n\">3</td><td class=\"n\">9</td>"), "{failures}");
    }

    #[test]
    fn the_coverage_ledger_is_a_section_of_its_own() {
        let without = render(&sweep(), "t", None, None, "");
        assert!(!without.contains(r#"id="coverage""#));
        let with = render(&sweep(), "t", None, None, "<h2>Coverage</h2>\n");
        assert!(
            with.contains(r#"<section id="coverage"><h2>Coverage</h2>"#),
            "{with}"
        );
        assert!(with.contains(r##"<a href="#coverage">Coverage</a>"##));
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
                Some(&dir),
                None,
                ""
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_incomplete_sweep_never_says_all_passed() {
        let passing: Vec<RunRecord> = sweep().into_iter().filter(|r| r.passed).collect();
        let complete = render(&passing, "t", None, None, "");
        assert!(complete.contains("all passed"));
        assert!(!complete.contains("incomplete"));
        let page = render(&passing, "t", None, Some("ran 7 of 9 <planned> runs"), "");
        assert!(!page.contains("all passed"), "{page}");
        assert!(page.contains(r#"<span class="big o-stuck">incomplete</span>"#));
        assert!(page.contains("Incomplete: ran 7 of 9 &lt;planned&gt; runs."));
    }
}
