//! Sweeps as nightly CI uses them: shards that merge into exactly the unsharded
//! results, a killed sweep that resumes without losing or repeating a run, and a
//! failing random run shrunk into a scenario that still fails.

mod common;

use faultline::drive::sweep::{self, merge, results, SweepOptions};
use faultline::report::RunRecord;
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
        fail_fast: false,
        guided: false,
        corpus: None,
        overrides: Default::default(),
        quiet: true,
    }
}

fn records(dir: &Path) -> Vec<RunRecord> {
    results::read(&dir.join(results::RESULTS_FILE))
        .unwrap()
        .records
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
    let summary = sweep::sweep(&options(vec![scenario.clone()], 1..=12, &whole)).unwrap();
    assert!(summary.complete() && summary.failed().count() == 0);
    let mut dirs = Vec::new();
    for k in 1..=3 {
        let dir = root.join(format!("shard{k}"));
        let mut o = options(vec![scenario.clone()], 1..=12, &dir);
        o.shard = Some((k, 3));
        o.jobs = 1;
        let summary = sweep::sweep(&o).unwrap();
        assert!(summary.complete() && summary.failed().count() == 0);
        dirs.push(dir);
    }
    let sizes: Vec<usize> = dirs.iter().map(|d| records(d).len()).collect();
    assert_eq!(
        sizes,
        vec![8, 8, 8],
        "24 runs (2 variants x 12 seeds) in three equal slices"
    );
    let merged = root.join("merged");
    let summary = merge::merge(&merge::MergeOptions {
        dirs: dirs.clone(),
        out: merged.clone(),
        shards: None,
    })
    .unwrap();
    assert!(summary.complete(), "{:?}", summary.problems);
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
    use faultline::drive::shrink::{self, ShrinkOptions, Target};
    let root = temp_dir("shrink");
    let file = root.join("canary-chaos.yaml");
    std::fs::write(&file, CANARY_CHAOS).unwrap();
    let scenario = faultline::lang::scenario::load(&file).unwrap();
    // The first seed whose random run the broken model fails.
    let (seed, original) = (1..=20)
        .map(|seed| {
            (
                seed,
                faultline::sim::runner::run(&scenario, &scenario.variants[0], seed),
            )
        })
        .find(|(_, r)| !r.passed && Target::of(r).is_some())
        .expect("the canary fails under chaos for some seed");
    let report = faultline::report::write_run(&root.join("reports"), &original).unwrap();
    let out = root.join("shrunk.yaml");
    let summary = shrink::shrink(&ShrinkOptions {
        report,
        out: Some(out.clone()),
        budget: 150,
        quiet: true,
    })
    .unwrap();
    assert!(summary.kept < summary.original, "{summary:?}");
    let shrunk = faultline::lang::scenario::load(&out).expect("the shrunk scenario validates");
    assert_eq!(shrunk.name, "shrunk", "named after its own file");
    assert_ne!(shrunk.name, original.scenario);
    let rerun = faultline::sim::runner::run(&shrunk, &shrunk.variants[0], seed);
    let target = Target::of(&original).unwrap();
    assert_eq!(
        Target::of(&rerun),
        Some(target),
        "the shrunk scenario fails the same way"
    );
    let faults = |r: &faultline::sim::runner::RunResult| {
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

#[test]
fn a_sweep_stopped_by_its_time_budget_is_incomplete_and_exits_3() {
    let root = temp_dir("budget");
    let out = root.join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "sweep",
            "scenarios/raftkv/chaos.yaml",
            "--seeds",
            "1..500",
            "--jobs",
            "1",
            "--time-budget",
            "1ms",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(common::workspace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(faultline::cli::exit::INCOMPLETE as i32),
        "{stderr}"
    );
    let ran = records(&out).len();
    assert!(ran < 500, "{ran}");
    let note = format!("ran {ran} of 500 planned run(s): the time budget ran out");
    assert!(stderr.contains(&note), "{stderr}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains(&note), "{summary}");
    // The dashboard and junit.xml say so too: neither shows green.
    let dashboard = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(dashboard.contains(&note), "{dashboard}");
    assert!(!dashboard.contains("all passed"), "{dashboard}");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(
        junit.contains(&format!(r#"<error message="incomplete: {note}"#))
            && junit.contains(r#"type="incomplete">"#),
        "{junit}"
    );
    let meta = sweep::meta::read(&out).unwrap().unwrap();
    assert!(!meta.complete);
    assert_eq!(meta.stopped_by, "time_budget");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_merge_with_a_missing_or_unfinished_shard_is_incomplete() {
    let root = temp_dir("missing-shard");
    let scenario = common::workspace().join("scenarios/raftkv/canary-quorum.yaml");
    let mut dirs = Vec::new();
    for k in 1..=3 {
        let dir = root.join(format!("shard{k}"));
        let mut o = options(vec![scenario.clone()], 1..=6, &dir);
        o.shard = Some((k, 3));
        o.jobs = 1;
        assert!(sweep::sweep(&o).unwrap().complete());
        dirs.push(dir);
    }
    let merge_of = |dirs: &[PathBuf], shards: Option<u64>, name: &str| {
        merge::merge(&merge::MergeOptions {
            dirs: dirs.to_vec(),
            out: root.join(name),
            shards,
        })
        .unwrap()
    };
    assert!(merge_of(&dirs, None, "all").complete());
    // Shard 2 of 3 lost: read from the shards' sweep.json.
    let two = [dirs[0].clone(), dirs[2].clone()];
    let summary = merge_of(&two, None, "two");
    assert!(!summary.complete());
    let note = summary.incomplete().unwrap();
    assert!(note.contains("1 shard(s) of 3 missing: 2"), "{note}");
    assert!(note.starts_with("ran 8 of 8 planned run(s)"), "{note}");
    let md = std::fs::read_to_string(root.join("two/summary.md")).unwrap();
    assert!(md.contains("**Incomplete: "), "{md}");
    // Told the count: a fourth shard that never ran is missing too.
    let told = merge_of(&dirs, Some(4), "told");
    assert!(
        told.incomplete().unwrap().contains("--shards 4"),
        "{:?}",
        told.problems
    );
    // A shard whose sweep never finished (killed: sweep.json still says running).
    let mut meta = sweep::meta::read(&dirs[1]).unwrap().unwrap();
    meta.complete = false;
    meta.stopped_by = "running".into();
    sweep::meta::write(&dirs[1], &meta).unwrap();
    let killed = merge_of(&dirs, None, "killed");
    assert!(
        killed
            .incomplete()
            .unwrap()
            .contains("(shard 2/3): it never finished"),
        "{:?}",
        killed.problems
    );
    // Shards without sweep.json (an older faultline): the count is unknown.
    for dir in &dirs {
        std::fs::remove_file(dir.join(sweep::meta::META_FILE)).unwrap();
    }
    let unknown = merge_of(&dirs, None, "unknown");
    assert!(!unknown.complete());
    assert!(
        unknown
            .problems
            .iter()
            .any(|p| p.contains("pass --shards N")),
        "{:?}",
        unknown.problems
    );
    // Through the CLI: exit 3.
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["merge"])
        .args(two.iter().map(|d| d.to_str().unwrap()))
        .args(["--out", root.join("cli").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(faultline::cli::exit::INCOMPLETE as i32),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// raftkv over its whole domain with the quorum canary on: a guided sweep's
/// failures come from fresh and derived runs alike.
const GUIDED: &str = r#"
name: guided-canary
model: raftkv
nodes: [n1, n2, n3]
variants:
  buggy: {bugs: {CANARY-QUORUM: buggy}, expect: converged}
chaos: {auto: true, window: 8s}
"#;

fn guided_options(file: &Path, out: &Path, jobs: usize) -> SweepOptions {
    SweepOptions {
        guided: true,
        jobs,
        ..options(vec![file.to_path_buf()], 1..=24, out)
    }
}

/// Records in search order: (run, origin, seed, digest).
fn guided_runs(dir: &Path) -> Vec<(u64, String, u64, String)> {
    let mut runs: Vec<_> = records(dir)
        .into_iter()
        .map(|r| {
            let g = r
                .guided
                .expect("a guided sweep's record says where it came from");
            (g.run, g.origin, r.seed, r.trail_digest)
        })
        .collect();
    runs.sort();
    runs
}

#[test]
fn a_guided_sweep_derives_runs_by_editing_schedules_and_is_the_same_on_any_jobs_and_resumed() {
    let root = temp_dir("guided");
    let file = root.join("guided.yaml");
    std::fs::write(&file, GUIDED).unwrap();
    let once = root.join("once");
    let summary = sweep::sweep(&guided_options(&file, &once, 2)).unwrap();
    assert!(summary.complete(), "{:?}", summary.incomplete());
    let runs = guided_runs(&once);
    assert_eq!(
        runs.iter().map(|r| r.0).collect::<Vec<_>>(),
        (1..=24).collect::<Vec<_>>(),
        "one record per run of the budget"
    );
    let derived: Vec<_> = runs.iter().filter(|r| r.1 != "fresh").collect();
    assert!(!derived.is_empty(), "no derived run in 24");
    // Every run takes the next seed, as a plain sweep's runs do; a derived one
    // plays the schedule of an earlier run's seed, edited.
    let seeds: Vec<u64> = runs.iter().map(|r| r.2).collect();
    assert!(
        seeds.windows(2).all(|w| w[0] < w[1]),
        "each run its own seed, in order: {seeds:?}"
    );
    for d in &derived {
        let parent = parent_of(&d.1)
            .unwrap_or_else(|| panic!("a derived run names its parent's seed: {d:?}"));
        assert!(
            parent < d.2 && seeds.contains(&parent),
            "a derived run edits an earlier run's schedule: {d:?}"
        );
    }
    assert!(
        std::fs::read_dir(once.join(sweep::guided::GUIDE_DIR)).is_ok(),
        "the search's state is kept in --out"
    );

    // One thread: the same search.
    let one = root.join("one-job");
    sweep::sweep(&guided_options(&file, &one, 1)).unwrap();
    assert_eq!(guided_runs(&one), runs);

    // Stopped by its time budget after the first batch, then resumed: the
    // same search, each run once.
    let resumed = root.join("resumed");
    let mut first = guided_options(&file, &resumed, 2);
    first.time_budget = Some(Duration::from_millis(1));
    let stopped = sweep::sweep(&first).unwrap();
    assert!(!stopped.complete());
    let mut again = guided_options(&file, &resumed, 2);
    again.resume = true;
    let done = sweep::sweep(&again).unwrap();
    assert!(done.complete(), "{:?}", done.incomplete());
    assert_eq!(guided_runs(&resumed), runs);
    std::fs::remove_dir_all(&root).unwrap();
}

/// The one state file a guided sweep of one scenario and variant wrote.
fn state_file(out: &Path) -> PathBuf {
    let guided = out.join(sweep::guided::GUIDE_DIR);
    let dirs: Vec<_> = std::fs::read_dir(&guided)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let files: Vec<_> = std::fs::read_dir(&dirs[0])
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// The seed of the run a derived run's origin names.
fn parent_of(origin: &str) -> Option<u64> {
    origin
        .strip_prefix("seed ")
        .and_then(|rest| rest.split('\'').next())
        .and_then(|n| n.parse().ok())
}

#[test]
fn a_guided_sweep_goes_on_from_an_earlier_sweeps_corpus_without_its_finds() {
    let root = temp_dir("guided-corpus");
    let file = root.join("guided.yaml");
    std::fs::write(&file, GUIDED).unwrap();
    // The canary fails every run of this file; with it fixed, none fails.
    let night1 = root.join("night-1");
    sweep::sweep(&SweepOptions {
        overrides: faultline::lang::scenario::Overrides {
            bugs: vec!["CANARY-QUORUM=fixed".into()],
            params: Vec::new(),
        },
        ..guided_options(&file, &night1, 2)
    })
    .unwrap();
    let state_path = state_file(&night1);
    let bytes = std::fs::read(&state_path).unwrap();
    let state: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let entries = state["corpus"].as_array().unwrap();
    let seeds_where = |find: bool| -> BTreeSet<u64> {
        entries
            .iter()
            .filter(|e| e["find"].as_bool() == Some(find))
            .map(|e| e["seed"].as_u64().unwrap())
            .collect()
    };
    let kept = seeds_where(false);
    assert_eq!(
        kept.len(),
        entries.len(),
        "no find, and every entry says so"
    );
    assert!(!kept.is_empty());

    // The next night, with the scenario given by another path to the same
    // file (the earlier sweep ran from elsewhere): its own seeds, the night
    // before's corpus.
    let next = |out: &Path, corpus: Option<&Path>, jobs: usize| SweepOptions {
        seeds: 25..=48,
        corpus: corpus.map(Path::to_path_buf),
        ..guided_options(&root.join(".").join("guided.yaml"), out, jobs)
    };
    let night2 = root.join("night-2");
    let summary = sweep::sweep(&next(&night2, Some(&night1), 2)).unwrap();
    assert!(summary.complete(), "{:?}", summary.incomplete());
    let runs = guided_runs(&night2);
    assert!(
        runs.iter().all(|r| (25..=48).contains(&r.2)),
        "this night's seeds: {runs:?}"
    );
    let parents: Vec<u64> = runs.iter().filter_map(|r| parent_of(&r.1)).collect();
    assert!(
        parents.iter().any(|p| kept.contains(p)),
        "no run derived from the night before's corpus: {parents:?}"
    );
    // sweep.json records the corpus read, as an input of the sweep.
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(night2.join("sweep.json")).unwrap()).unwrap();
    let carried = &meta["guided_corpus"][0];
    assert_eq!(carried["state"], state_path.display().to_string());
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(carried["digest"], hex);
    assert_eq!(carried["entries"], kept.len());

    // Same inputs, same night, on one thread.
    let again = root.join("night-2-again");
    sweep::sweep(&next(&again, Some(&night1), 1)).unwrap();
    assert_eq!(guided_runs(&again), runs);
    // Stopped after its first batch and resumed with another --corpus: the
    // same night, and sweep.json still names the corpus it started from.
    let resumed = root.join("night-2-resumed");
    let mut stopped = next(&resumed, Some(&night1), 2);
    stopped.time_budget = Some(Duration::from_millis(1));
    assert!(!sweep::sweep(&stopped).unwrap().complete());
    let mut rest = next(&resumed, Some(&again), 2);
    rest.resume = true;
    assert!(sweep::sweep(&rest).unwrap().complete());
    assert_eq!(guided_runs(&resumed), runs);
    let meta_resumed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(resumed.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(meta_resumed["guided_corpus"], meta["guided_corpus"]);
    // Without the corpus the same seeds make another search.
    let alone = root.join("night-2-alone");
    sweep::sweep(&next(&alone, None, 2)).unwrap();
    assert_ne!(guided_runs(&alone), runs);

    // A night whose every run was a find leaves nothing to carry: the next
    // night derives only from its own runs.
    let found = root.join("night-1-buggy");
    sweep::sweep(&guided_options(&file, &found, 2)).unwrap();
    let finds =
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(state_file(&found)).unwrap())
            .unwrap()["corpus"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["find"] == true)
            .count();
    assert!(finds > 0);
    let after = root.join("night-2-after-finds");
    sweep::sweep(&next(&after, Some(&found), 2)).unwrap();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(after.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(
        meta["guided_corpus"][0]["entries"], 0,
        "{finds} finds left behind"
    );
    let parents: Vec<u64> = guided_runs(&after)
        .iter()
        .filter_map(|r| parent_of(&r.1))
        .collect();
    assert!(
        parents.iter().all(|p| (25..=48).contains(p)),
        "a run derived from the night before's finds: {parents:?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_guided_sweeps_corpus_flag_refuses_what_it_cannot_read() {
    let root = temp_dir("guided-corpus-refuse");
    let file = root.join("guided.yaml");
    std::fs::write(&file, GUIDED).unwrap();
    let file = file.to_str().unwrap();
    let sweep_with = |corpus: &Path, guided: bool| {
        let out = root.join("out");
        let mut args = vec!["sweep", file, "--seeds", "1..2", "--out"];
        args.push(out.to_str().unwrap());
        args.extend(["--corpus", corpus.to_str().unwrap()]);
        if guided {
            args.push("--guided");
        }
        let output = common::faultline(&args);
        let _ = std::fs::remove_dir_all(&out);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = sweep_with(&root, false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("it needs --guided"), "{stderr}");
    let (code, stderr) = sweep_with(&root, true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no guided/ there"), "{stderr}");

    // A state that does not read back is named.
    let bad = root.join("bad");
    let state = bad
        .join(sweep::guided::GUIDE_DIR)
        .join(faultline::report::safe_component(file))
        .join("buggy.json");
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    std::fs::write(&state, "{\"corpus\": [").unwrap();
    let (code, stderr) = sweep_with(&bad, true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("buggy.json: not a guided search's state"),
        "{stderr}"
    );

    // Two earlier paths ending in the file's name: which one is not guessed.
    let two = root.join("two");
    for dir in ["a%2Fguided.yaml", "b%2Fguided.yaml"] {
        let at = two.join(sweep::guided::GUIDE_DIR).join(dir);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join("buggy.json"), "{}").unwrap();
    }
    let (code, stderr) = sweep_with(&two, true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("2 states there could be"), "{stderr}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_guided_sweeps_failing_derived_run_replays_from_its_report() {
    let root = temp_dir("guided-replay");
    let file = root.join("guided.yaml");
    std::fs::write(&file, GUIDED).unwrap();
    let out = root.join("out");
    sweep::sweep(&guided_options(&file, &out, 2)).unwrap();
    let failed: Vec<RunRecord> = records(&out)
        .into_iter()
        .filter(|r| !r.passed && r.guided.as_ref().is_some_and(|g| g.origin != "fresh"))
        .collect();
    let record = failed
        .first()
        .expect("the canary fails some derived run of 24");
    assert!(
        record.replay.starts_with("faultline replay "),
        "{}",
        record.replay
    );
    let report = out.join(record.report.as_ref().expect("a failing run has a report"));
    // It ran under its parent's configuration, and its report says whose.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let config_seed = saved["swarm"]["config_seed"]
        .as_u64()
        .expect("a derived run records the seed of its configuration");
    assert!(config_seed < record.seed, "an earlier run's: {config_seed}");
    let output = common::faultline(&["replay", report.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("same trail digest {}", record.trail_digest)),
        "the derived run replays with its schedule:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_guided_sweep_refuses_shards_and_the_determinism_sample() {
    let root = temp_dir("guided-refuse");
    let file = root.join("guided.yaml");
    std::fs::write(&file, GUIDED).unwrap();
    let mut sharded = guided_options(&file, &root.join("a"), 2);
    sharded.shard = Some((1, 2));
    let e = sweep::sweep(&sharded).unwrap_err().to_string();
    assert!(e.contains("--guided cannot be sharded"), "{e}");
    let mut sampled = guided_options(&file, &root.join("b"), 2);
    sampled.check_determinism = 5.0;
    let e = sweep::sweep(&sampled).unwrap_err().to_string();
    assert!(e.contains("--check-determinism with --guided"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// reports/README.md, which the README points at, names every file a sweep
/// writes at the top of its --out and in a failing run's directory.
#[test]
fn reports_readme_names_every_file_a_sweep_writes() {
    let readme = std::fs::read_to_string(common::workspace().join("reports/README.md"))
        .expect("reports/README.md exists");
    let root = temp_dir("readme");
    let file = root.join("guided.yaml");
    std::fs::write(&file, GUIDED).unwrap();
    let out = root.join("out");
    sweep::sweep(&guided_options(&file, &out, 2)).unwrap();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for entry in std::fs::read_dir(&out).unwrap() {
        names.insert(entry.unwrap().file_name().to_string_lossy().into_owned());
    }
    let failed = records(&out)
        .into_iter()
        .find(|r| !r.passed)
        .expect("the canary fails some run of 24");
    let report = out.join(failed.report.unwrap());
    for entry in std::fs::read_dir(report.parent().unwrap()).unwrap() {
        names.insert(entry.unwrap().file_name().to_string_lossy().into_owned());
    }
    for name in ["results.jsonl", "report.json", "report.html", "guided"] {
        assert!(names.contains(name), "a sweep wrote {name}: {names:?}");
    }
    for name in &names {
        assert!(
            readme.contains(name.as_str()),
            "reports/README.md does not name {name}"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// `expect.except` (issue 26, item 19): a failure with a known defect's
/// signature counts as that defect, reported and counted but not failed; a
/// failure with any other finding still fails the sweep.
#[test]
fn a_known_defect_is_counted_not_failed_and_any_other_failure_fails() {
    let root = temp_dir("known");
    let canary =
        std::fs::read_to_string(common::workspace().join("scenarios/raftkv/canary-quorum.yaml"))
            .unwrap();
    let steps = &canary[canary.find("steps:").expect("steps")..];
    // The buggy canary's findings at these seeds: divergence (mid-run and
    // final), applied_entries_stable and the Raft oracle's three.
    let head = "name: known\nmodel: raftkv\nnodes: [n1, n2, n3]\nvariants:\n  known:\n    bugs: {CANARY-QUORUM: buggy}\n    expect: {outcome: converged, except: [{key: CANARY-QUORUM, checker: divergence}, {key: CANARY-QUORUM, checker: \"invariant:applied_entries_stable\"}, {key: CANARY-QUORUM, checker: \"invariant:committed_on_quorum\"}, {key: CANARY-QUORUM, checker: \"invariant:committed_entries_agree\"}, {key: CANARY-QUORUM, checker: \"invariant:leader_completeness\"}]}\n  partly:\n    bugs: {CANARY-QUORUM: buggy}\n    expect: {outcome: converged, except: {key: CANARY-QUORUM, checker: divergence}}\n";
    let file = root.join("known.yaml");
    std::fs::write(&file, format!("{head}{steps}")).unwrap();
    let file_arg = file.to_str().unwrap();

    let run = common::faultline(&["run", file_arg, "--variant", "known"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("KNOWN known [known] diverged (expected converged; the known defect CANARY-QUORUM, not a failure)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("replay: faultline run"),
        "a known defect still says how to replay it: {stdout}"
    );

    let out = root.join("out");
    let sweep = common::faultline(&[
        "sweep",
        file_arg,
        "--seeds",
        "1..2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        sweep.status.code(),
        Some(1),
        "the `partly` variant fails: {}",
        String::from_utf8_lossy(&sweep.stderr)
    );
    let records = records(&out);
    let mut known: Vec<(&str, u64, &[String])> = records
        .iter()
        .filter(|r| r.passed)
        .map(|r| (r.variant.as_str(), r.seed, r.known_defects.as_slice()))
        .collect();
    known.sort();
    assert_eq!(
        known,
        vec![
            ("known", 1, &["CANARY-QUORUM".to_string()][..]),
            ("known", 2, &["CANARY-QUORUM".to_string()][..])
        ]
    );
    let failed: Vec<(&str, bool)> = records
        .iter()
        .filter(|r| !r.passed)
        .map(|r| (r.variant.as_str(), r.known_defects.is_empty()))
        .collect();
    assert_eq!(failed, vec![("partly", true), ("partly", true)]);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("| known | known | CANARY-QUORUM | 2 | 1, 2 |"),
        "{summary}"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(
        junit
            .matches("name=\"known_defect\" value=\"CANARY-QUORUM\"")
            .count(),
        2,
        "{junit}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn identical_failures_are_one_group_in_the_summary_the_dashboard_and_on_the_terminal() {
    let root = temp_dir("groups");
    let out = root.join("out");
    let sweep = common::faultline(&[
        "sweep",
        "scenarios/raftkv/canary-quorum.yaml",
        "--variant",
        "fixed",
        "--bug",
        "CANARY-QUORUM=buggy",
        "--seeds",
        "1..4",
        "--jobs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&sweep.stderr);
    assert_eq!(sweep.status.code(), Some(1), "{stderr}");
    // Every seed fails the same way: one line of the signature, one of seeds.
    let fails: Vec<&str> = stderr.lines().filter(|l| l.contains("FAIL ")).collect();
    assert_eq!(fails.len(), 1, "{stderr}");
    assert!(
        fails[0].contains("FAIL raftkv-canary-quorum [fixed] diverged (divergence, expect, invariant:applied_entries_stable, invariant:committed_entries_agree, invariant:committed_on_quorum, invariant:leader_completeness; first differing key k) \u{d7}4, first seed 1  replay: faultline run scenarios/raftkv/canary-quorum.yaml --variant fixed --seed 1 --bug CANARY-QUORUM=buggy"),
        "{stderr}"
    );
    assert!(stderr.contains("\n    seeds: 1, 2, 3, 4\n"), "{stderr}");

    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let failures = &summary[summary.find("## Failures").expect("failures")..];
    let failures = &failures[..failures.find("## Coverage").expect("the ledger follows")];
    assert!(
        failures.starts_with("## Failures (4 run(s), 1 signature(s))"),
        "{failures}"
    );
    assert_eq!(failures.matches("\n### ").count(), 1, "{failures}");
    assert!(
        failures.contains(": 4 run(s)\n\nFirst seed 1:"),
        "{failures}"
    );
    assert!(failures.contains("Seeds (4): 1, 2, 3, 4\n"), "{failures}");
    assert_eq!(failures.matches("Replay: ").count(), 1, "{failures}");

    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        page.contains("4 failing run(s) of 1 signature(s)"),
        "{page}"
    );
    assert!(page.contains("<summary>4 seed(s)</summary>"), "{page}");
    assert!(page.contains(r#"<a href="runs/raftkv-canary-quorum/fixed/seed-4/report.html">4</a>"#));
    // The coverage ledger summary.md ends with is on the dashboard too.
    assert!(summary.contains("### Distinct trails per variant"));
    assert!(
        page.contains(r#"<section id="coverage"><h2>Coverage</h2>"#),
        "{page}"
    );
    assert!(page.contains("<h3>Distinct trails per variant</h3>"));
    assert!(page.contains("<td><code>raft_check_quorum_step_down</code></td>"));
    std::fs::remove_dir_all(&root).unwrap();
}
