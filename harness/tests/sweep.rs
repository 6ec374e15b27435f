//! Sweeps as nightly CI uses them: shards that merge into exactly the unsharded
//! results, a killed sweep that resumes without losing or repeating a run, and a
//! failing random run shrunk into a scenario that still fails.

mod common;

use faultline::report::RunRecord;
use faultline::sweep::{self, merge, results, SweepOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("sweep", name)
}

fn options(paths: Vec<PathBuf>, seeds: std::ops::RangeInclusive<u64>, out: &Path) -> SweepOptions {
    SweepOptions {
        paths,
        seeds,
        jobs: 2,
        shard: None,
        out: out.to_path_buf(),
        time_budget: None,
        resume: false,
        check_determinism: 0.0,
        variant: None,
        quiet: true,
    }
}

fn records(dir: &Path) -> Vec<RunRecord> {
    results::read(&dir.join(results::RESULTS_FILE)).unwrap().0
}

/// What a run produced, without wall-clock fields.
fn essence(records: &[RunRecord]) -> BTreeSet<(String, String, u64, String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r.file.clone(),
                r.variant.clone(),
                r.seed,
                r.trail_digest.clone(),
                r.outcome.to_string(),
            )
        })
        .collect()
}

#[test]
fn shards_merge_into_exactly_the_unsharded_results() {
    let root = temp_dir("shards");
    let scenario = common::workspace().join("scenarios/raftkv/canary-quorum.yaml");
    let whole = root.join("whole");
    assert_eq!(
        sweep::sweep(&options(vec![scenario.clone()], 1..=12, &whole)),
        0
    );
    let mut dirs = Vec::new();
    for k in 1..=3 {
        let dir = root.join(format!("shard{k}"));
        let mut o = options(vec![scenario.clone()], 1..=12, &dir);
        o.shard = Some((k, 3));
        o.jobs = 1;
        assert_eq!(sweep::sweep(&o), 0);
        dirs.push(dir);
    }
    let sizes: Vec<usize> = dirs.iter().map(|d| records(d).len()).collect();
    assert_eq!(
        sizes,
        vec![8, 8, 8],
        "24 runs (2 variants x 12 seeds) in three equal slices"
    );
    let merged = root.join("merged");
    assert_eq!(merge::merge(&dirs, &merged, true), 0);
    assert_eq!(records(&merged).len(), 24);
    assert_eq!(essence(&records(&merged)), essence(&records(&whole)));
    assert!(merged.join("junit.xml").exists() && merged.join("summary.md").exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_killed_sweep_resumes_without_losing_or_repeating_a_run() {
    let root = temp_dir("resume");
    let out = root.join("out");
    let scenario = "scenarios/raftkv/chaos.yaml";
    let args = [
        "sweep",
        scenario,
        "--seeds",
        "1..16",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(common::workspace())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let file = out.join(results::RESULTS_FILE);
    let mut waited = Duration::ZERO;
    while records(&out).len() < 3 {
        assert!(
            waited < Duration::from_secs(300),
            "the sweep recorded nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
        waited += Duration::from_millis(20);
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let before = records(&out).len();
    assert!(
        before < 16,
        "killed too late to test a resume ({before} runs done)"
    );
    // A torn last line, as a kill in the middle of a write would leave.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap()
        .write_all(b"{\"scenario\":\"raf")
        .unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .arg("--resume")
        .current_dir(common::workspace())
        .output()
        .unwrap();
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let after = records(&out);
    let seeds: Vec<u64> = after.iter().map(|r| r.seed).collect();
    let unique: BTreeSet<u64> = seeds.iter().copied().collect();
    assert_eq!(seeds.len(), 16, "no run duplicated: {seeds:?}");
    assert_eq!(unique, (1..=16).collect::<BTreeSet<u64>>(), "no run lost");
    // The resumed runs are the same runs an uninterrupted sweep makes.
    let check = root.join("check");
    let uninterrupted = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "sweep",
            scenario,
            "--seeds",
            "1..16",
            "--jobs",
            "2",
            "--out",
            check.to_str().unwrap(),
        ])
        .current_dir(common::workspace())
        .output()
        .unwrap();
    assert_eq!(uninterrupted.status.code(), Some(0));
    assert_eq!(essence(&after), essence(&records(&check)));
    std::fs::remove_dir_all(&root).unwrap();
}

use std::io::Write;

const CANARY_CHAOS: &str = r#"
name: canary-chaos
model: raftkv
nodes: [n1, n2, n3]
defaults: {op_timeout: 2s}
variants:
  buggy: {bugs: {CANARY-QUORUM: buggy}, expect: converged}
steps:
  - await: {leader: any, within: 5s}
chaos:
  window: 20s
  spacing: {min: 200ms, max: 2s}
  duration: {min: 300ms, max: 3s}
  faults: {partition: 3, crash: 1, restart: 1, hold: 1}
  workload:
    every: 100ms
    ops: [{op: put, key: "k{1..3}", value: "v{seq}"}]
"#;

#[test]
fn a_failing_random_run_of_the_canary_shrinks_to_a_scenario_that_still_fails() {
    use faultline::shrink::{self, ShrinkOptions, Target};
    let root = temp_dir("shrink");
    let file = root.join("canary-chaos.yaml");
    std::fs::write(&file, CANARY_CHAOS).unwrap();
    let scenario = faultline::scenario::load(&file).unwrap();
    // The first seed whose random run the broken model fails.
    let (seed, original) = (1..=20)
        .map(|seed| {
            (
                seed,
                faultline::runner::run(&scenario, &scenario.variants[0], seed),
            )
        })
        .find(|(_, r)| !r.passed && Target::of(r).is_some())
        .expect("the canary fails under chaos for some seed");
    let report = faultline::report::write_run(&root.join("reports"), &original).unwrap();
    let out = root.join("shrunk.yaml");
    let code = shrink::shrink(&ShrinkOptions {
        report,
        out: Some(out.clone()),
        budget: 150,
        quiet: true,
    });
    assert_eq!(code, 0);
    let shrunk = faultline::scenario::load(&out).expect("the shrunk scenario validates");
    let rerun = faultline::runner::run(&shrunk, &shrunk.variants[0], seed);
    let target = Target::of(&original).unwrap();
    assert_eq!(
        Target::of(&rerun),
        Some(target),
        "the shrunk scenario fails the same way"
    );
    let faults = |r: &faultline::runner::RunResult| {
        r.trail
            .iter()
            .filter(|e| e.action().is_some() && e.kind.is_fault())
            .count()
    };
    assert!(
        faults(&rerun) < faults(&original),
        "{} fault events, originally {}",
        faults(&rerun),
        faults(&original)
    );
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("# Shrunk by `faultline shrink`"));
    std::fs::remove_dir_all(&root).unwrap();
}
