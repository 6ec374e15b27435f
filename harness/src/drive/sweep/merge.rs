//! `faultline merge DIR... --out DIR`: join the results of sweep shards (from N CI
//! machines) into one results file and one set of summaries, and judge whether
//! the shards cover the whole sweep: every shard 1..N present, each complete,
//! every line of every results file readable, all from one sweep. A set that is
//! not whole is reported `incomplete`, never as a green merge.

use super::meta::{self, Meta};
use super::results::{self, line_list, RunKey};
use super::Error;
use crate::base::fsio::{self, DirLock};
use crate::base::text::printable;
use crate::report::RunRecord;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

pub struct MergeOptions {
    pub dirs: Vec<PathBuf>,
    pub out: PathBuf,
    /// How many shards the sweep had; else read from the shards' sweep.json.
    pub shards: Option<u64>,
}

/// What a merge produced.
#[derive(Debug)]
pub struct MergeSummary {
    pub out: PathBuf,
    pub records: Vec<RunRecord>,
    pub dirs: usize,
    /// Runs the shards planned, where their sweep.json says.
    pub planned: Option<u64>,
    /// Why the set is not whole; empty when it is.
    pub problems: Vec<String>,
    /// The ledger over every shard's runs, and what it concluded.
    pub coverage: Option<meta::CoverageReport>,
}

impl MergeSummary {
    pub fn failed(&self) -> impl Iterator<Item = &RunRecord> {
        self.records.iter().filter(|r| !r.passed)
    }

    pub fn complete(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn incomplete(&self) -> Option<String> {
        (!self.complete()).then(|| {
            let planned = self
                .planned
                .map_or_else(|| "an unknown number of".to_string(), |p| p.to_string());
            format!(
                "ran {} of {planned} planned run(s): {}",
                self.records.len(),
                self.problems.join("; ")
            )
        })
    }
}

struct Shard {
    dir: PathBuf,
    records: Vec<RunRecord>,
    meta: Option<Meta>,
}

/// Records of all shards, one per run; two shards with different trails for one
/// run mark it nondeterministic.
pub fn combine(shards: Vec<(PathBuf, Vec<RunRecord>)>, out: &Path) -> Vec<RunRecord> {
    let mut merged: BTreeMap<RunKey, (PathBuf, RunRecord)> = BTreeMap::new();
    for (dir, records) in shards {
        for mut record in records {
            if let Some(report) = &record.report {
                record.report = Some(relative(out, &dir.join(report)).display().to_string());
            }
            let key = results::key(&record);
            match merged.get_mut(&key) {
                None => {
                    merged.insert(key, (dir.clone(), record));
                }
                Some((first_dir, first)) if first.trail_digest != record.trail_digest => {
                    first.nondeterminism = Some(format!(
                        "two shards ran this seed with different trails: {} in {}, {} in {}",
                        first.trail_digest,
                        first_dir.display(),
                        record.trail_digest,
                        dir.display()
                    ));
                    first.passed = false;
                }
                Some(_) => {}
            }
        }
    }
    merged.into_values().map(|(_, r)| r).collect()
}

pub fn merge(options: &MergeOptions) -> Result<MergeSummary, Error> {
    let mut shards = Vec::new();
    let mut problems = Vec::new();
    for dir in &options.dirs {
        let path = dir.join(results::RESULTS_FILE);
        if std::fs::metadata(&path).is_err() {
            return Err(Error::Input(format!(
                "{} has no {}: not a sweep output directory",
                printable(&dir.display().to_string()),
                results::RESULTS_FILE
            )));
        }
        let contents = results::read(&path)?;
        let shown = printable(&path.display().to_string()).into_owned();
        if !contents.unreadable.is_empty() {
            problems.push(format!(
                "{shown}: {} unreadable line(s) ({}), whose records are lost",
                contents.unreadable.len(),
                line_list(&contents.unreadable)
            ));
        }
        if contents.torn {
            problems.push(format!(
                "{shown}: a torn last line (the shard was killed while writing)"
            ));
        }
        let meta = meta::read(dir).map_err(Error::Input)?;
        shards.push(Shard {
            dir: dir.clone(),
            records: contents.records,
            meta,
        });
    }
    problems.extend(coverage_problems(&shards, options.shards));
    let _lock = DirLock::try_new(&options.out).map_err(Error::Lock)?;
    let planned = shards
        .iter()
        .map(|s| s.meta.as_ref().map(|m| m.planned))
        .sum::<Option<u64>>();
    let first_meta = shards.iter().find_map(|s| s.meta.clone());
    let records = combine(
        shards.into_iter().map(|s| (s.dir, s.records)).collect(),
        &options.out,
    );
    let mut lines = Vec::new();
    for r in &records {
        lines.extend(serde_json::to_vec(r).expect("records serialize"));
        lines.push(b'\n');
    }
    fsio::tree_write(&options.out, Path::new(results::RESULTS_FILE), &lines)?;
    let summary = MergeSummary {
        out: options.out.clone(),
        records,
        dirs: options.dirs.len(),
        planned,
        problems,
        coverage: None,
    };
    let ledger = super::write_summaries(
        &options.out,
        &summary.records,
        summary.incomplete().as_deref(),
    )?;
    let mut summary = summary;
    summary.coverage = Some(meta::CoverageReport {
        verdict: ledger.verdict(),
        ledger,
        judged: true,
    });
    let merged = Meta {
        schema_version: meta::META_SCHEMA_VERSION,
        seeds: first_meta.as_ref().map_or([0, 0], |m| m.seeds),
        shard: None,
        variant: first_meta.as_ref().and_then(|m| m.variant.clone()),
        bugs: first_meta
            .as_ref()
            .map_or_else(Vec::new, |m| m.bugs.clone()),
        params: first_meta
            .as_ref()
            .map_or_else(Vec::new, |m| m.params.clone()),
        files: first_meta
            .as_ref()
            .map_or_else(Vec::new, |m| m.files.clone()),
        guided_corpus: first_meta
            .as_ref()
            .map_or_else(Vec::new, |m| m.guided_corpus.clone()),
        plan_digest: first_meta.map_or_else(String::new, |m| m.plan_digest),
        planned: planned.unwrap_or(0),
        recorded: summary.records.len() as u64,
        complete: summary.complete(),
        stopped_by: "merged".into(),
        incomplete: summary.incomplete(),
        coverage: summary.coverage.clone(),
    };
    meta::write(&options.out, &merged)?;
    Ok(summary)
}

/// Why a set of shards does not cover its sweep: missing metadata, shards that
/// did not finish, missing shard numbers, shards of different sweeps.
fn coverage_problems(shards: &[Shard], declared: Option<u64>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut counts = BTreeSet::new();
    let mut present = BTreeSet::new();
    let mut digests = BTreeSet::new();
    for shard in shards {
        let shown = printable(&shard.dir.display().to_string()).into_owned();
        let Some(meta) = &shard.meta else {
            problems.push(format!(
                "{shown} has no {}: what it planned is unknown",
                meta::META_FILE
            ));
            continue;
        };
        let [k, n] = meta.shard.unwrap_or([1, 1]);
        counts.insert(n);
        present.insert(k);
        digests.insert(meta.plan_digest.clone());
        if !meta.complete {
            let why = meta
                .incomplete
                .clone()
                .unwrap_or_else(|| "it never finished (killed, or still running)".to_string());
            problems.push(format!("{shown} (shard {k}/{n}): {why}"));
        }
    }
    if digests.len() > 1 {
        problems.push(
            "the shards come from different sweeps (their scenarios, variants or seeds differ)"
                .into(),
        );
    }
    let n = match (declared, counts.len()) {
        (Some(d), _) if counts.iter().any(|c| *c != d) => {
            problems.push(format!(
                "--shards {d}, but the shards say they are of {}",
                counts
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            Some(d)
        }
        (Some(d), _) => Some(d),
        (None, 1) => counts.first().copied(),
        (None, 0) => None,
        (None, _) => {
            problems.push(format!(
                "the shards disagree on the shard count ({})",
                counts
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            None
        }
    };
    if let Some(n) = n {
        let found = present.iter().filter(|k| **k <= n).count() as u64;
        if found < n {
            let first: Vec<String> = (1..=n)
                .filter(|k| !present.contains(k))
                .take(20)
                .map(|k| k.to_string())
                .collect();
            problems.push(format!(
                "{} shard(s) of {n} missing: {}{}",
                n - found,
                first.join(", "),
                if n - found > 20 { ", ..." } else { "" }
            ));
        }
    } else if shards.iter().all(|s| s.meta.is_none()) {
        problems.push("the shard count is unknown: pass --shards N".into());
    }
    problems
}

/// `target` as a path relative to the directory `from` (both made absolute).
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "std::path::Component is not our enum: prefixes, roots and `.` add nothing to a relative path"
)]
pub fn relative(from: &Path, target: &Path) -> PathBuf {
    let absolute = |p: &Path| -> Vec<String> {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        let mut parts: Vec<String> = Vec::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    parts.pop();
                }
                Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        parts
    };
    let (from, target) = (absolute(from), absolute(target));
    let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &target[common..] {
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::Outcome;

    fn record(seed: u64, digest: &str, report: Option<&str>) -> RunRecord {
        RunRecord {
            schema_version: crate::report::RECORD_SCHEMA_VERSION,
            scenario: "s".into(),
            file: "s.yaml".into(),
            variant: "v".into(),
            seed,
            outcome: Outcome::Converged,
            expected: vec![Outcome::Converged],
            passed: true,
            trail_digest: digest.into(),
            sim_elapsed_ms: 1,
            wall_ms: 1,
            report: report.map(str::to_string),
            ..RunRecord::default()
        }
    }

    #[test]
    fn shards_join_into_one_sorted_set_and_disagreements_are_failures() {
        let a = (
            PathBuf::from("/x/shard1"),
            vec![record(2, "d2", None), record(1, "d1", Some("runs/r.json"))],
        );
        let b = (
            PathBuf::from("/x/shard2"),
            vec![record(3, "d3", None), record(2, "other", None)],
        );
        let merged = combine(vec![a, b], Path::new("/x/merged"));
        assert_eq!(
            merged.iter().map(|r| r.seed).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert_eq!(merged[0].report.as_deref(), Some("../shard1/runs/r.json"));
        assert!(!merged[1].passed);
        assert!(merged[1]
            .nondeterminism
            .as_ref()
            .unwrap()
            .contains("different trails"));
        assert!(merged[2].passed);
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/c/d")),
            PathBuf::from("../c/d")
        );
        assert_eq!(
            relative(Path::new("/a"), Path::new("/a/b")),
            PathBuf::from("b")
        );
    }
}
