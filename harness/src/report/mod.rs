//! Reports: per-run `report.json` and `report.html`, `junit.xml` and `summary.md`
//! over all runs, the sweep dashboard `index.html`, the per-variant JSON line of
//! `--json`, and the terminal summary. Every file is written atomically (temporary
//! file, fsync, rename): a killed process leaves the old file or the new one, never
//! half of one.

pub mod dashboard;
pub mod doc;
pub mod groups;
pub mod html;
mod junit;
mod summary;
mod terminal;

pub use dashboard::{
    dashboard_html, write_dashboard, write_dashboard_coverage, write_dashboard_with,
};
pub use html::run_html;
pub use junit::{junit_xml, junit_xml_with, xml_text};
pub use summary::{summary_md, unmet};
#[cfg(test)]
pub(crate) use terminal::strip_styles;
pub use terminal::{run_lines, terminal_summary, Detail};

use crate::base::outcome::Outcome;
use crate::judge::check::Finding;
use crate::sim::runner::RunResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use crate::base::fsio::atomic_write;

/// The largest `report.json` that `replay`, `report` and `shrink` read: a run at
/// the default trail limit (200,000 events) writes well under this.
pub const REPORT_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// A path component made only of safe characters: scenario data never steers a
/// report outside the report directory (no `..`, no `/`, no absolute names), and
/// two different names never share a directory. Letters, digits, `-` and `_`
/// stand for themselves, as does `.` except in front; every other byte is written
/// `%XX`, and the empty name is `%`, which no other name can produce. A name over
/// 100 bytes is cut and ends with a digest of the whole name.
pub fn safe_component(text: &str) -> String {
    let mut out = String::new();
    for (i, b) in text.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    if out.len() > 100 {
        use sha2::{Digest, Sha256};
        let digest = crate::base::trail::hex(&Sha256::digest(text.as_bytes()));
        // Every byte of `out` is ASCII, so any index is a char boundary.
        out.truncate(83);
        out.push('~');
        out.push_str(&digest[..16]);
    }
    out
}

/// Where one run's files go, relative to the report directory:
/// `<scenario>/<variant>/seed-<N>/`.
pub fn run_dir_relative(result: &RunResult) -> PathBuf {
    Path::new(&safe_component(&result.scenario))
        .join(safe_component(&result.variant))
        .join(format!("seed-{}", result.seed))
}

/// Where one run's files go: `<dir>/<scenario>/<variant>/seed-<N>/`.
pub fn run_dir(root: &Path, result: &RunResult) -> PathBuf {
    root.join(run_dir_relative(result))
}

/// Write `report.json` and `report.html` for one run; returns the JSON's path.
/// Never through a symlink inside `root` (see `fsio`).
pub fn write_run(root: &Path, result: &RunResult) -> Result<PathBuf, crate::base::fsio::Error> {
    write_run_in(root, Path::new(""), result)
}

/// `write_run` into `root/sub/...`, with `sub` checked for links like the rest.
pub fn write_run_in(
    root: &Path,
    sub: &Path,
    result: &RunResult,
) -> Result<PathBuf, crate::base::fsio::Error> {
    let dir = sub.join(run_dir_relative(result));
    let bytes = serde_json::to_vec_pretty(result).expect("results serialize");
    let path = crate::base::fsio::tree_write(root, &dir.join("report.json"), &bytes)?;
    crate::base::fsio::tree_write(root, &dir.join("report.html"), run_html(result).as_bytes())?;
    Ok(path)
}

/// Write `junit.xml` and `summary.md` over all runs.
pub fn write_summaries(root: &Path, records: &[RunRecord]) -> Result<(), crate::base::fsio::Error> {
    write_summaries_with(root, records, None, "")
}

/// A variant that was asked for but not run: its target's build is missing.
/// Reported as skipped, with the reason (which names the build command); a
/// set of runs with one is incomplete, never green.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotRun {
    pub scenario: String,
    pub file: String,
    pub variant: String,
    /// The runs (seeds) it would have had.
    pub runs: u64,
    pub reason: String,
}

impl NotRun {
    pub fn of(
        scenario: &crate::lang::scenario::Scenario,
        variant: &str,
        runs: u64,
        reason: String,
    ) -> NotRun {
        NotRun {
            scenario: scenario.name.clone(),
            file: scenario.file.clone(),
            variant: variant.to_string(),
            runs,
            reason,
        }
    }

    /// `not run: NAME [VARIANT]: REASON`, one line.
    pub fn line(&self) -> String {
        format!(
            "not run: {} [{}]: {}",
            crate::base::text::printable(&self.scenario),
            crate::base::text::printable(&self.variant),
            crate::base::text::printable(&self.reason)
        )
    }
}

/// The note of a set of runs that left variants out, for an incomplete verdict.
pub fn not_run_note(not_run: &[NotRun]) -> Option<String> {
    let runs: u64 = not_run.iter().map(|n| n.runs).sum();
    (!not_run.is_empty()).then(|| {
        format!(
            "{runs} run(s) of {} variant(s) not run: their target is not built",
            not_run.len()
        )
    })
}

/// `write_summaries`, with the variants that were not run: skipped test cases
/// in `junit.xml` (with the reason), a section of `summary.md`, and the note
/// that the set is incomplete at the top of both.
pub fn write_summaries_not_run(
    root: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
    not_run: &[NotRun],
    sections: &str,
) -> Result<(), crate::base::fsio::Error> {
    crate::base::fsio::tree_write(
        root,
        Path::new("junit.xml"),
        junit::junit_xml_not_run(records, incomplete, not_run).as_bytes(),
    )?;
    let mut md = summary_md(records);
    if let Some(note) = incomplete {
        let at = md.find("\n\n").map_or(md.len(), |i| i + 2);
        md.insert_str(
            at,
            &format!(
                "**Incomplete: {}.** Coverage was lost: this is not a green run.\n\n",
                md_line(note)
            ),
        );
    }
    if !not_run.is_empty() {
        md.push_str(&format!("\n## Not run ({})\n\n", not_run.len()));
        for n in not_run {
            md.push_str(&format!(
                "- {} [{}] ({} run(s)): {}\n",
                md_line(&n.scenario),
                md_line(&n.variant),
                n.runs,
                md_line(&n.reason)
            ));
        }
    }
    md.push_str(sections);
    crate::base::fsio::tree_write(root, Path::new("summary.md"), md.as_bytes())?;
    Ok(())
}

/// `write_summaries`, with a note on coverage that was lost (an incomplete sweep
/// or merge) at the top of `summary.md` and as an error test case in `junit.xml`.
/// `sections` is Markdown appended to `summary.md` (a sweep's coverage ledger).
pub fn write_summaries_with(
    root: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
    sections: &str,
) -> Result<(), crate::base::fsio::Error> {
    write_summaries_not_run(root, records, incomplete, &[], sections)
}

fn md_line(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The version of the shape of a [`RunRecord`] line (`--json`, `results.jsonl`;
/// `docs/schema/record.schema.json`). Raised when a field changes meaning or goes
/// away.
pub const RECORD_SCHEMA_VERSION: u32 = 1;

/// Trail lines kept in a failing run's record for `junit.xml`'s `system-out`.
pub const EXCERPT_FAULTS_MAX: usize = 20;
pub const EXCERPT_TAIL: usize = 20;

/// One finished run in a line: what `--json` prints and what a sweep appends to its
/// results file (one JSON object per line). Documented in `docs/json.md`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// [`RECORD_SCHEMA_VERSION`] when written; 0 in records older than versioning.
    #[serde(default)]
    pub schema_version: u32,
    pub scenario: String,
    pub file: String,
    pub variant: String,
    pub seed: u64,
    pub outcome: Outcome,
    pub expected: Vec<Outcome>,
    pub passed: bool,
    /// The known defects (`expect.except`) a run that counts as passed is:
    /// its failure has their signature (empty for every other run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_defects: Vec<String>,
    pub trail_digest: String,
    pub sim_elapsed_ms: u64,
    pub wall_ms: u64,
    /// Wall-clock start of the run, milliseconds since the Unix epoch (for
    /// `junit.xml`'s timestamps; never part of a trail or a report page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    pub findings: Vec<Finding>,
    pub replay: String,
    /// The run's report.json, relative to the report directory, when one was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// Wall milliseconds since the sweep started, when the run ended (sweeps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// Set when a determinism recheck of this run gave another trail: the first
    /// differing event. Such a run never passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nondeterminism: Option<String>,
    /// A failing run's trail in brief: its faults and its last events, one line
    /// each (empty for a passing run; report.json has the whole trail).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trail_excerpt: Vec<String>,
    /// What the run exercised (the sweep ledger adds these up; absent in
    /// records written before the ledger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::sim::coverage::Coverage>,
    /// Set for a run of a guided sweep (`sweep --guided`): its place in the
    /// search and how it came about. A derived run plays its parent's edited
    /// schedule under a seed of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guided: Option<GuidedRun>,
}

/// A guided sweep's run: its number in its scenario and variant's search
/// (1-based), and its origin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuidedRun {
    pub run: u64,
    /// `fresh` (its seed's own schedule) or the edit that derived it from a
    /// corpus entry's schedule (`drop fault 3`, ...).
    pub origin: String,
}

/// An empty record (no scenario, seed 0, `converged`, nothing found, schema
/// version 0), for records made by hand: `RunRecord { seed, ..Default::default() }`.
impl Default for RunRecord {
    fn default() -> RunRecord {
        RunRecord {
            schema_version: 0,
            scenario: String::new(),
            file: String::new(),
            variant: String::new(),
            seed: 0,
            outcome: Outcome::Converged,
            expected: Vec::new(),
            passed: false,
            known_defects: Vec::new(),
            trail_digest: String::new(),
            sim_elapsed_ms: 0,
            wall_ms: 0,
            started_unix_ms: None,
            findings: Vec::new(),
            replay: String::new(),
            report: None,
            ended_ms: None,
            nondeterminism: None,
            trail_excerpt: Vec::new(),
            coverage: None,
            guided: None,
        }
    }
}

impl RunRecord {
    pub fn of(result: &RunResult) -> RunRecord {
        RunRecord {
            schema_version: RECORD_SCHEMA_VERSION,
            scenario: result.scenario.clone(),
            file: result.file.clone(),
            variant: result.variant.clone(),
            seed: result.seed,
            outcome: result.outcome,
            expected: result.expected.clone(),
            passed: result.passed,
            known_defects: result.known_defects.clone(),
            trail_digest: result.trail_digest.clone(),
            sim_elapsed_ms: result.sim_elapsed_ms,
            wall_ms: result.wall_ms,
            started_unix_ms: None,
            findings: result.findings.clone(),
            replay: result.replay.clone(),
            report: None,
            ended_ms: None,
            nondeterminism: None,
            trail_excerpt: if result.passed && result.known_defects.is_empty() {
                Vec::new()
            } else {
                trail_excerpt(result)
            },
            coverage: Some(result.coverage.clone()),
            guided: None,
        }
    }

    /// The record, stamped with the wall-clock time its run started (`wall_ms`
    /// before now, when it is made right after the run ends).
    pub fn started_now(mut self) -> RunRecord {
        #[allow(
            clippy::disallowed_methods,
            reason = "wall-clock ok: junit.xml timestamps only, never a trail or a page"
        )]
        let now = std::time::SystemTime::now() // wall-clock ok: timing only, never in a trail
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .ok();
        self.started_unix_ms = now.map(|n| n.saturating_sub(self.wall_ms));
        self
    }
}

/// A failing run's trail in brief: up to [`EXCERPT_FAULTS_MAX`] faults, then the
/// last [`EXCERPT_TAIL`] events.
pub fn trail_excerpt(result: &RunResult) -> Vec<String> {
    let faults = result.faults_fired();
    let mut lines = Vec::new();
    if !faults.is_empty() {
        lines.push(format!("faults ({}):", faults.len()));
        lines.extend(
            faults
                .iter()
                .take(EXCERPT_FAULTS_MAX)
                .map(|f| format!("  {f}")),
        );
        if faults.len() > EXCERPT_FAULTS_MAX {
            lines.push(format!("  ... {} more", faults.len() - EXCERPT_FAULTS_MAX));
        }
    }
    let events = &result.trail.events;
    let from = events.len().saturating_sub(EXCERPT_TAIL);
    lines.push(format!(
        "last {} of {} trail events:",
        events.len() - from,
        events.len()
    ));
    for (i, e) in events.iter().enumerate().skip(from) {
        lines.push(format!(
            "  #{i} {} ms {}{} {}",
            e.t_ms,
            e.node
                .as_deref()
                .map(|n| format!("{n} "))
                .unwrap_or_default(),
            e.kind.name(),
            e.detail
        ));
    }
    lines
}

/// The one-line JSON object `--json` prints per variant run.
pub fn json_line(result: &RunResult) -> String {
    serde_json::to_string(&RunRecord::of(result).started_now()).expect("records serialize")
}

/// Read a saved report: a regular file of at most [`REPORT_BYTES_MAX`] bytes.
pub fn read_run(path: &Path) -> Result<RunResult, String> {
    let bytes =
        crate::base::fsio::read_capped(path, REPORT_BYTES_MAX).map_err(|e| e.to_string())?;
    let shown = crate::base::text::printable(&path.display().to_string()).into_owned();
    let result: RunResult = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{shown}: not a faultline report: {e}"))?;
    if result.schema_version > crate::sim::runner::REPORT_SCHEMA_VERSION {
        return Err(format!(
            "{shown}: report schema version {} is newer than this faultline reads ({}); use the faultline that wrote it",
            result.schema_version,
            crate::sim::runner::REPORT_SCHEMA_VERSION
        ));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_components_never_escape_the_directory() {
        assert_eq!(
            safe_component("../../etc/passwd"),
            "%2E.%2F..%2Fetc%2Fpasswd"
        );
        assert_eq!(safe_component("/abs"), "%2Fabs");
        assert_eq!(safe_component(".."), "%2E.");
        assert_eq!(
            safe_component("raftkv-leader_crash.v2"),
            "raftkv-leader_crash.v2"
        );
        assert!(!safe_component("a/b\\c").contains('/'));
    }

    #[test]
    fn different_names_never_share_a_report_directory() {
        let names = [
            "", ".", "_", "%", "%2E", "a b", "a_b", "a/b", "a%2Fb", "A", "a", "é", "e",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for name in names {
            assert!(seen.insert(safe_component(name)), "{name:?} collides");
        }
        let long_a = "x".repeat(200) + "a";
        let long_b = "x".repeat(200) + "b";
        assert_ne!(safe_component(&long_a), safe_component(&long_b));
        assert!(safe_component(&long_a).len() <= 100);
    }
}
