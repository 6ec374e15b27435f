//! `faultline merge DIR... --out DIR`: join the results of sweep shards (from N CI
//! machines) into one results file and one set of summaries.

use super::results::{self, RunKey};
use crate::cli::{EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::report::{atomic_write, RunRecord};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

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

pub fn merge(dirs: &[PathBuf], out: &Path, quiet: bool) -> u8 {
    let mut shards = Vec::new();
    for dir in dirs {
        let path = dir.join(results::RESULTS_FILE);
        if !path.exists() {
            eprintln!(
                "error: {} has no {}: not a sweep output directory",
                dir.display(),
                results::RESULTS_FILE
            );
            return EXIT_BAD_INPUT;
        }
        match results::read(&path) {
            Ok((records, _)) => shards.push((dir.clone(), records)),
            Err(e) => {
                eprintln!("error: reading {}: {e}", path.display());
                return EXIT_BAD_INPUT;
            }
        }
    }
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: creating {}: {e}", out.display());
        return EXIT_BAD_INPUT;
    }
    let records = combine(shards, out);
    let mut lines = Vec::new();
    for r in &records {
        lines.extend(serde_json::to_vec(r).expect("records serialize"));
        lines.push(b'\n');
    }
    if let Err(e) = atomic_write(&out.join(results::RESULTS_FILE), &lines)
        .and_then(|()| super::write_summaries(out, &records))
    {
        eprintln!("error: writing to {}: {e}", out.display());
        return EXIT_BAD_INPUT;
    }
    let failed: Vec<&RunRecord> = records.iter().filter(|r| !r.passed).collect();
    if !quiet {
        println!(
            "merged {} run(s) from {} shard(s): {} failed",
            records.len(),
            dirs.len(),
            failed.len()
        );
        for r in &failed {
            println!(
                "  FAIL {} [{}] seed {}: {}  replay: {}",
                r.scenario, r.variant, r.seed, r.outcome, r.replay
            );
        }
        println!("summary: {}", out.join("summary.md").display());
    }
    if failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// `target` as a path relative to the directory `from` (both made absolute).
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
    use crate::outcome::Outcome;

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
            findings: vec![],
            replay: String::new(),
            report: report.map(str::to_string),
            ended_ms: None,
            nondeterminism: None,
            trail_excerpt: vec![],
            started_unix_ms: None,
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
