//! `sweep.json`: what a sweep set out to do and how much of it it did. Written when
//! the sweep starts (so a killed shard still says what it planned) and again when
//! it ends; `merge` reads it from each shard to judge whether the shards cover the
//! whole sweep. A merge writes one too, for the merged set.

use crate::base::fsio;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const META_FILE: &str = "sweep.json";
pub const META_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub schema_version: u32,
    /// The seed range, inclusive: [first, last].
    pub seeds: [u64; 2],
    /// This slice, [k, n]; absent for an unsharded sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// `--bug KEY=MODE` overrides of every run (`rerun-failed` applies them again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bugs: Vec<String>,
    /// `--param NAME=VALUE` overrides of every run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<String>,
    /// The scenario files, as given.
    pub files: Vec<String>,
    /// Identifies the sweep (files, variants, seeds, filter), shared by its shards.
    pub plan_digest: String,
    /// Runs this slice set out to do.
    pub planned: u64,
    /// Of those, runs recorded in results.jsonl.
    pub recorded: u64,
    pub complete: bool,
    /// `running`, `finished`, `time_budget`, `interrupted` (SIGINT or SIGTERM),
    /// `fail_fast`; for a merge, `merged`.
    pub stopped_by: String,
    /// "ran X of Y (why)" when not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// The coverage ledger of the recorded runs and what it concluded (absent
    /// while running, and in sweeps from before the ledger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageReport>,
    /// The corpora a guided sweep's searches started with (`--corpus`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guided_corpus: Vec<super::guided::Carried>,
}

/// The ledger and its verdict, as sweep.json carries them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoverageReport {
    pub ledger: super::ledger::Ledger,
    pub verdict: super::ledger::Verdict,
    /// Whether the verdict's unreached probes fail this directory: a shard's do
    /// not (merge judges the shards together), an unsharded sweep's and a
    /// merge's do.
    pub judged: bool,
}

pub fn write(dir: &Path, meta: &Meta) -> Result<(), fsio::Error> {
    let mut bytes = serde_json::to_vec_pretty(meta).expect("metadata serializes");
    bytes.push(b'\n');
    fsio::tree_write(dir, Path::new(META_FILE), &bytes).map(|_| ())
}

/// The metadata of a sweep directory: `Ok(None)` if it has none (a sweep from an
/// older faultline), an error text if it is unreadable.
pub fn read(dir: &Path) -> Result<Option<Meta>, String> {
    let path = dir.join(META_FILE);
    match fsio::read_capped(&path, 16 * 1024 * 1024) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            format!(
                "{}: not a faultline sweep.json: {e}",
                crate::base::text::printable(&path.display().to_string())
            )
        }),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}
