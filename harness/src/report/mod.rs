//! Reports: per-run `report.json` and `report.html`, `junit.xml` and `summary.md`
//! over all runs, the sweep dashboard `index.html`, the per-variant JSON line of
//! `--json`, and the terminal summary. Every file is written atomically (temporary
//! file, fsync, rename): a killed process leaves the old file or the new one, never
//! half of one.

pub mod dashboard;
pub mod html;
mod junit;
mod summary;

pub use dashboard::{dashboard_html, write_dashboard};
pub use html::run_html;
pub use junit::{junit_xml, xml_text};
pub use summary::{summary_md, terminal_summary};

use crate::check::Finding;
use crate::outcome::Outcome;
use crate::runner::RunResult;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    // Make the rename itself durable.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A path component made only of safe characters: scenario data never steers a
/// report outside the report directory (no `..`, no `/`, no absolute names).
pub fn safe_component(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    while out.starts_with('.') {
        out.replace_range(0..1, "_");
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// Where one run's files go: `<dir>/<scenario>/<variant>/seed-<N>/`.
pub fn run_dir(root: &Path, result: &RunResult) -> PathBuf {
    root.join(safe_component(&result.scenario))
        .join(safe_component(&result.variant))
        .join(format!("seed-{}", result.seed))
}

/// Write `report.json` and `report.html` for one run; returns the JSON's path.
pub fn write_run(root: &Path, result: &RunResult) -> std::io::Result<PathBuf> {
    let dir = run_dir(root, result);
    let path = dir.join("report.json");
    let bytes = serde_json::to_vec_pretty(result).expect("results serialize");
    atomic_write(&path, &bytes)?;
    atomic_write(&dir.join("report.html"), run_html(result).as_bytes())?;
    Ok(path)
}

/// Write `junit.xml` and `summary.md` over all runs.
pub fn write_summaries(root: &Path, records: &[RunRecord]) -> std::io::Result<()> {
    atomic_write(&root.join("junit.xml"), junit_xml(records).as_bytes())?;
    atomic_write(&root.join("summary.md"), summary_md(records).as_bytes())?;
    Ok(())
}

/// The version of the shape of a [`RunRecord`] line (`--json`, `results.jsonl`;
/// `docs/record.schema.json`). Raised when a field changes meaning or goes away.
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
            trail_digest: result.trail_digest.clone(),
            sim_elapsed_ms: result.sim_elapsed_ms,
            wall_ms: result.wall_ms,
            started_unix_ms: None,
            findings: result.findings.clone(),
            replay: result.replay.clone(),
            report: None,
            ended_ms: None,
            nondeterminism: None,
            trail_excerpt: if result.passed {
                Vec::new()
            } else {
                trail_excerpt(result)
            },
        }
    }

    /// The record, stamped with the wall-clock time its run started (`wall_ms`
    /// before now, when it is made right after the run ends).
    pub fn started_now(mut self) -> RunRecord {
        // wall-clock ok: junit.xml timestamps only, never a trail or a page
        let now = std::time::SystemTime::now()
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

/// Read a saved report.
pub fn read_run(path: &Path) -> Result<RunResult, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let result: RunResult = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a faultline report: {e}", path.display()))?;
    if result.schema_version > crate::runner::REPORT_SCHEMA_VERSION {
        return Err(format!(
            "{}: report schema version {} is newer than this faultline reads ({}); use the faultline that wrote it",
            path.display(),
            result.schema_version,
            crate::runner::REPORT_SCHEMA_VERSION
        ));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_components_never_escape_the_directory() {
        assert_eq!(safe_component("../../etc/passwd"), "_._.._etc_passwd");
        assert_eq!(safe_component("/abs"), "_abs");
        assert_eq!(safe_component(".."), "_.");
        assert_eq!(safe_component(""), "_");
        assert_eq!(
            safe_component("raftkv-leader_crash.v2"),
            "raftkv-leader_crash.v2"
        );
        assert!(!safe_component("a/b\\c").contains('/'));
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = std::env::temp_dir().join(format!("faultline-atomic-{}", std::process::id()));
        let path = dir.join("x.json");
        atomic_write(&path, b"old").unwrap();
        atomic_write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
