//! Reports: per-run `report.json` and `report.html`, `junit.xml` and `summary.md`
//! over all runs, the sweep dashboard `index.html`, the per-variant JSON line of
//! `--json`, and the terminal summary. Every file is written atomically (temporary
//! file, fsync, rename): a killed process leaves the old file or the new one, never
//! half of one.

pub mod dashboard;
pub mod html;
mod junit;
mod summary;
mod terminal;

pub use dashboard::{dashboard_html, write_dashboard};
pub use html::run_html;
pub use junit::junit_xml;
pub use summary::summary_md;
pub use terminal::{run_lines, terminal_summary, Detail};

use crate::check::Finding;
use crate::outcome::Outcome;
use crate::runner::RunResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use crate::fsio::atomic_write;

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
        let digest = crate::trail::hex(&Sha256::digest(text.as_bytes()));
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
pub fn write_run(root: &Path, result: &RunResult) -> Result<PathBuf, crate::fsio::Error> {
    write_run_in(root, Path::new(""), result)
}

/// `write_run` into `root/sub/...`, with `sub` checked for links like the rest.
pub fn write_run_in(
    root: &Path,
    sub: &Path,
    result: &RunResult,
) -> Result<PathBuf, crate::fsio::Error> {
    let dir = sub.join(run_dir_relative(result));
    let bytes = serde_json::to_vec_pretty(result).expect("results serialize");
    let path = crate::fsio::tree_write(root, &dir.join("report.json"), &bytes)?;
    crate::fsio::tree_write(root, &dir.join("report.html"), run_html(result).as_bytes())?;
    Ok(path)
}

/// Write `junit.xml` and `summary.md` over all runs.
pub fn write_summaries(root: &Path, records: &[RunRecord]) -> Result<(), crate::fsio::Error> {
    write_summaries_with(root, records, None)
}

/// `write_summaries`, with a note on coverage that was lost (an incomplete sweep
/// or merge) at the top of `summary.md`.
pub fn write_summaries_with(
    root: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
) -> Result<(), crate::fsio::Error> {
    crate::fsio::tree_write(root, Path::new("junit.xml"), junit_xml(records).as_bytes())?;
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
    crate::fsio::tree_write(root, Path::new("summary.md"), md.as_bytes())?;
    Ok(())
}

fn md_line(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// One finished run in a line: what `--json` prints and what a sweep appends to its
/// results file (one JSON object per line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
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
}

impl RunRecord {
    pub fn of(result: &RunResult) -> RunRecord {
        RunRecord {
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
            findings: result.findings.clone(),
            replay: result.replay.clone(),
            report: None,
            ended_ms: None,
            nondeterminism: None,
        }
    }
}

/// The one-line JSON object `--json` prints per variant run.
pub fn json_line(result: &RunResult) -> String {
    serde_json::to_string(&RunRecord::of(result)).expect("records serialize")
}

/// Read a saved report: a regular file of at most [`REPORT_BYTES_MAX`] bytes.
pub fn read_run(path: &Path) -> Result<RunResult, String> {
    let bytes = crate::fsio::read_capped(path, REPORT_BYTES_MAX).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{}: not a faultline report: {e}",
            crate::text::printable(&path.display().to_string())
        )
    })
}

pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters even when escaped.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r' => out.push('?'),
            c => out.push(c),
        }
    }
    out
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

    #[test]
    fn xml_escape_covers_markup_and_controls() {
        assert_eq!(
            xml_escape("<a href=\"x\">&'</a>\u{1}"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;?"
        );
    }
}
