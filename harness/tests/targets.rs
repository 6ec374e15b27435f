//! Variants that run on a target build: a missing build is reported as not
//! run, naming the build command, while every other run goes ahead; the exit
//! code says the set is incomplete (never green, never "nothing judged").

mod common;

use std::process::Command;

fn faultline_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(dir)
        .env_remove("FAULTLINE_TARGETS")
        .output()
        .unwrap()
}

const MANIFEST: &str =
    "targets:\n  sys@1.0:\n    binary: out/faultline-sys\n    build: ./make-sys\n";

/// A scenario of a model that only a missing build has, beside one that runs
/// here: the layout of a checkout before `openraft/build` (issue 26, item 7).
fn unbuilt_tree(name: &str) -> std::path::PathBuf {
    let dir = common::temp_dir("targets", name);
    std::fs::write(dir.join("faultline-targets.yaml"), MANIFEST).unwrap();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(
        dir.join("scenarios/s.yaml"),
        "model: sys\nnodes: [a]\nvariants:\n  old: {target: sys@1.0, expect: converged}\nsteps:\n  - sleep: 1s\n",
    )
    .unwrap();
    std::fs::copy(
        common::workspace().join("scenarios/raftkv/leader-crash.yaml"),
        dir.join("scenarios/leader-crash.yaml"),
    )
    .unwrap();
    dir
}

#[test]
fn a_variant_of_a_missing_build_is_not_run_naming_the_build_command_and_the_others_go_ahead() {
    let dir = unbuilt_tree("remote-missing");
    let out = faultline_in(&dir, &["run", "scenarios", "--report-dir", "reports"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Something asked for was not run: incomplete, not bad input, not green.
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("PASS raftkv-leader-crash [default]"),
        "the other scenario ran: {stdout}"
    );
    assert!(
        stderr.contains("not run: s [old]: target sys@1.0 is not built"),
        "{stderr}"
    );
    assert!(stderr.contains("`./make-sys`"), "names the build: {stderr}");
    assert!(!stderr.contains("error:"), "nothing is an error: {stderr}");
    assert!(
        stdout.contains("1 run(s): 1 passed, 0 failed, 1 not run"),
        "{stdout}"
    );
    let junit = std::fs::read_to_string(dir.join("reports/junit.xml")).unwrap();
    assert!(
        junit.contains(r#"<testcase name="old (not run)" classname="s""#),
        "{junit}"
    );
    assert!(junit.contains("<skipped"), "{junit}");
    assert!(
        junit.contains("target sys@1.0 is not built"),
        "the reason: {junit}"
    );
    let summary = std::fs::read_to_string(dir.join("reports/summary.md")).unwrap();
    assert!(
        summary.contains("**Incomplete: 1 run(s) of 1 variant(s) not run"),
        "{summary}"
    );
    assert!(
        summary.contains("## Not run (1)\n\n- s [old] (1 run(s)): target sys@1.0 is not built"),
        "{summary}"
    );
    // validate checks what it can and says what it could not.
    let out = faultline_in(&dir, &["validate", "scenarios/s.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("[old] not checked: target sys@1.0 is not built"),
        "{stderr}"
    );
    assert!(stderr.contains("`./make-sys`"), "{stderr}");
    // list shows the file as what it is, not as invalid.
    let out = faultline_in(&dir, &["list", "--scenarios", "scenarios"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout.contains(
            "scenarios/s.yaml [sys] variants: old (not built: old; build with `./make-sys`)"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("invalid"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sweep_skips_the_variants_of_a_missing_build_and_is_incomplete() {
    let dir = unbuilt_tree("sweep-missing");
    let out = faultline_in(
        &dir,
        &[
            "sweep",
            "scenarios",
            "--seeds",
            "1..2",
            "--jobs",
            "1",
            "--out",
            "sweep",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("not run: s [old]: target sys@1.0 is not built"),
        "{stderr}"
    );
    assert!(
        stderr.contains("ran 2 of 4 planned run(s): 2 run(s) of 1 variant(s) not run"),
        "{stderr}"
    );
    let results = std::fs::read_to_string(dir.join("sweep/results.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 2, "the raftkv runs: {results}");
    let junit = std::fs::read_to_string(dir.join("sweep/junit.xml")).unwrap();
    assert!(junit.contains("<skipped"), "{junit}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A manifest of two unbuilt releases of a system, `SYS-1` buggy in the first.
const TWO_BUILDS: &str = "targets:\n  sys@1.0:\n    binary: out/sys-1\n    build: ./make-sys\n    bugs: {SYS-1: buggy}\n  sys@2.0:\n    binary: out/sys-2\n    build: ./make-sys\n    bugs: {SYS-1: fixed}\n";

/// A chaos scenario of raftkv, small: the hunt's candidate beside the others.
const RAFTKV_CHAOS: &str = "name: small-chaos\nmodel: raftkv\nnodes: [n1, n2, n3]\nvariants:\n  nightly: {bugs: {CANARY-QUORUM: fixed}, expect: converged}\nheal: {within: 30s, settle: 1s}\nsteps:\n  - await: {leader: any, within: 5s}\nchaos:\n  window: 2s\n  faults: {crash: 1}\n";

#[test]
fn hunt_with_keys_loads_only_the_files_that_can_hold_them_and_skips_unbuilt_arms() {
    let dir = common::temp_dir("targets", "hunt-keys");
    std::fs::write(dir.join("faultline-targets.yaml"), TWO_BUILDS).unwrap();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(dir.join("scenarios/chaos.yaml"), RAFTKV_CHAOS).unwrap();
    std::fs::write(
        dir.join("scenarios/sys.yaml"),
        "model: sys\nnodes: [a]\nvariants:\n  buggy: {target: sys@1.0, expect: converged}\n  fixed: {target: sys@2.0, expect: converged}\nsteps:\n  - sleep: 1s\nchaos:\n  window: 1s\n  faults: {crash: 1}\n",
    )
    .unwrap();
    // Another model's file that does not load: no concern of a hunt for raftkv's key.
    std::fs::write(
        dir.join("scenarios/broken.yaml"),
        "model: zookeeper\nnodes: [z1]\nsteps:\n  - no_such_step: 1\n",
    )
    .unwrap();
    let hunt = |args: &[&str]| {
        let mut all = vec!["hunt", "scenarios", "--seeds", "1..1", "--jobs", "1"];
        all.extend_from_slice(args);
        faultline_in(&dir, &all)
    };
    let out = hunt(&["--key", "CANARY-QUORUM", "--no-fixed"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("small-chaos"),
        "the raftkv arm ran: {stdout}"
    );
    assert!(!stderr.contains("broken.yaml"), "{stderr}");
    // The build's key: its arms are on builds that are missing, so not run.
    let out = hunt(&["--key", "SYS-1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("not run: sys [buggy]: target sys@1.0 is not built"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not run: sys [fixed]: target sys@2.0 is not built"),
        "{stderr}"
    );
    assert!(!stderr.contains("error:"), "{stderr}");
    // Without keys every file is loaded: the broken one is reported once, as a
    // located diagnostic (never `error: FILE:LINE: error: ...`).
    let out = hunt(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("scenarios/broken.yaml:"), "{stderr}");
    assert!(
        !stderr.lines().any(|l| l.matches("error:").count() > 1),
        "one `error:` per line: {stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_built_in_model_variant_on_an_unlisted_target_is_bad_input() {
    let dir = common::temp_dir("targets", "unlisted");
    std::fs::write(dir.join("faultline-targets.yaml"), MANIFEST).unwrap();
    std::fs::write(
        dir.join("s.yaml"),
        "model: raftkv\nnodes: [n1]\nvariants:\n  v: {target: raftkv@2.0, expect: converged}\nsteps:\n  - sleep: 1s\n",
    )
    .unwrap();
    let out = faultline_in(&dir, &["run", "s.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("lists no target raftkv@2.0"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_target_of_another_model_or_a_malformed_one_is_a_located_error() {
    let text = "model: raftkv\nnodes: [n1]\nvariants:\n  a: {target: zookeeper@3.9, expect: converged}\n  b: {target: raftkv, expect: converged}\nsteps:\n  - sleep: 1s\n";
    let Err(e) = faultline::lang::scenario::load_str("t.yaml", text) else {
        panic!("a target of another model must not load");
    };
    let text = e.to_string();
    assert!(
        text.contains("t.yaml:4:") && text.contains("a build of `zookeeper`"),
        "{text}"
    );
    assert!(
        text.contains("t.yaml:5:") && text.contains("not NAME@RELEASE"),
        "{text}"
    );
}

/// The openraft builds (`openraft/build`; scripts/test runs it first). A test
/// that needs them fails without them, naming the command: it never skips.
fn openraft_builds() -> std::path::PathBuf {
    let root = common::workspace();
    for build in ["alpha23", "alpha24", "alpha25", "alpha26", "alpha37"] {
        let binary = root.join(format!("target/release/faultline-openraft-{build}"));
        assert!(
            binary.exists(),
            "{} is missing: run `openraft/build` (scripts/test does)",
            binary.display()
        );
    }
    root.join("faultline-targets.yaml")
}

#[test]
fn a_run_on_a_target_build_shrinks_from_faultline_and_the_scenario_keeps_its_target() {
    let manifest = openraft_builds();
    let root = common::workspace();
    let dir = common::temp_dir("targets", "shrink");
    // Without FAULTLINE_TARGETS the builds are found from the scenario's
    // directory: the shrink's candidates must find them from the original's,
    // wherever the shrunk file is written.
    let faultline = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_faultline"))
            .args(args)
            .current_dir(&root)
            .env_remove("FAULTLINE_TARGETS")
            .output()
            .unwrap()
    };
    let reports = dir.join("reports");
    let out = faultline(&[
        "run",
        "scenarios/openraft/openraft-1805-transfer-to-learner.yaml",
        "--variant",
        "buggy",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = reports.join("openraft-1805-transfer-to-learner/buggy/seed-1/report.json");
    let shrunk = dir.join("shrunk.yaml");
    let out = faultline(&[
        "shrink",
        report.to_str().unwrap(),
        "-o",
        shrunk.to_str().unwrap(),
        "--budget",
        "40",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(&shrunk).unwrap();
    // The variant keeps its build and the expectation its run had.
    assert!(
        text.contains(r#"buggy: {expect: [crashed], target: "openraft@0.10.0-alpha.24"}"#),
        "{text}"
    );
    let kept = text.matches("\n  - client:").count() + text.matches("\n  - failpoint:").count();
    let original = stderr
        .split(" action(s) on its trail")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap();
    assert!(kept < original, "kept {kept} of {original}: {text}");
    // And it runs, on that build, ending as the original did (written outside
    // the workspace, it is told where the targets are).
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["run", shrunk.to_str().unwrap()])
        .env("FAULTLINE_TARGETS", &manifest)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("crashed (expected crashed)"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// openraft-chaos's alpha24 variant declares openraft#1802 as a known defect
/// (issue 26, item 19): a seed that finds it is counted as the defect (exit 0),
/// and hunt, which ignores the exception, still counts it as a find.
#[test]
fn a_known_defect_of_a_build_passes_a_run_and_hunt_still_finds_it() {
    openraft_builds();
    let root = common::workspace();
    let run = faultline_in(
        &root,
        &[
            "run",
            "scenarios/openraft/openraft-chaos.yaml",
            "--variant",
            "alpha24",
            "--seed",
            "5",
        ],
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("KNOWN openraft-chaos [alpha24] violated (expected converged; the known defect openraft#1802, not a failure)"),
        "{stdout}"
    );
    let hunt = hunt_key(
        "scenarios/openraft/openraft-chaos.yaml",
        "openraft#1802",
        &["--seeds", "5..5"],
    );
    let stdout = String::from_utf8_lossy(&hunt.stdout);
    let line = hunt_row(&stdout, "openraft#1802 (build");
    assert!(line.contains("1/1"), "hunt counts the find: {line}");
}

/// An external model (openraft, registered by its build's binary, not by
/// faultline) is judged as a bundled one: its runs carry its probe declarations,
/// so the sweep's ledger lists them, a probe no chaos run reached fails the sweep
/// (exit 5), and the report of a run shows its probes with their hits.
#[test]
fn an_external_models_probes_reach_the_ledger_the_exit_code_and_the_report() {
    openraft_builds();
    let root = common::workspace();
    let dir = common::temp_dir("targets", "probes");
    let sweep = |seeds: &str, out: &str| {
        let out_dir = dir.join(out);
        let out = faultline_in(
            &root,
            &[
                "sweep",
                "scenarios/openraft/openraft-chaos.yaml",
                "--variant",
                "alpha25",
                "--seeds",
                seeds,
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
        (out.status.code(), summary)
    };
    // Seed 1 reaches a commit past the leader's own flush but installs no snapshot.
    let (code, summary) = sweep("1..1", "one");
    assert_eq!(code, Some(5), "{summary}");
    assert!(
        summary.contains("- `openraft` `openraft_snapshot_installed`: a node installed a snapshot"),
        "{summary}"
    );
    assert!(
        summary.contains("| `openraft_committed_past_own_flush` | no | 1 | 1 (openraft-chaos) |"),
        "{summary}"
    );
    // Over ten seeds every probe that is not rare is reached.
    let (code, summary) = sweep("1..10", "ten");
    assert_eq!(code, Some(0), "{summary}");
    assert!(!summary.contains("never reached"), "{summary}");
    assert!(
        summary.contains("| `openraft_snapshot_installed` | no |"),
        "{summary}"
    );
    // The leader-restore trail reaches its probe, and the report shows it hit.
    let reports = dir.join("reports");
    let run = faultline_in(
        &root,
        &[
            "run",
            "scenarios/openraft/openraft-leader-restore.yaml",
            "--variant",
            "alpha25",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    let json =
        std::fs::read_to_string(reports.join("openraft-leader-restore/alpha25/seed-1/report.json"))
            .unwrap();
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let coverage = &report["coverage"];
    assert!(
        coverage["probes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "openraft_leader_restored"),
        "{coverage}"
    );
    assert_eq!(
        coverage["declared"].as_array().map(Vec::len),
        Some(5),
        "{coverage}"
    );
    let html =
        std::fs::read_to_string(reports.join("openraft-leader-restore/alpha25/seed-1/report.html"))
            .unwrap();
    assert!(
        html.contains("openraft_leader_restored"),
        "the report lists the probe"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `faultline bench` on a scenario whose variants run in target builds (issue
/// 28, item 5): every variant is measured in the binary it runs in, and a
/// variant whose build is missing is said in one line while the others are
/// measured. Before, the bare loop ran here without the target's hosts: on
/// the leader-restore scenario (a restart) it panicked with turmoil's "missing
/// host", and on others it timed hosts that did nothing (the 1805 scenario's
/// bare wall 0.4 ms against 21 ms, "52x").
#[test]
fn bench_measures_target_variants_in_their_own_binaries_and_goes_on_without_a_missing_one() {
    openraft_builds();
    let root = common::workspace();
    let dir = common::temp_dir("targets", "bench");
    let out_md = dir.join("perf.md");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "bench",
            "scenarios/openraft/openraft-leader-restore.yaml",
            "--repeat",
            "1",
            "--sweep",
            "scenarios/raftkv/leader-crash.yaml",
            "--sweep-seeds",
            "2",
            "--out",
            out_md.to_str().unwrap(),
        ])
        .current_dir(&root)
        .env_remove("FAULTLINE_TARGETS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(&out_md).unwrap();
    for variant in ["alpha24", "alpha25", "alpha37", "alpha37-no-restore"] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| openraft-leader-restore | {variant} |")))
            .unwrap_or_else(|| panic!("a row for {variant}: {text}"));
        // simulated seconds, harness ms, bare ms: all measured (non-zero).
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let number = |c: &str| -> f64 {
            c.trim_end_matches(" s")
                .trim_end_matches(" ms")
                .parse()
                .unwrap_or_else(|_| panic!("{c} in {row}"))
        };
        let (sim, harness, bare) = (number(cells[3]), number(cells[4]), number(cells[5]));
        assert!(sim > 0.0 && harness > 0.0 && bare > 0.0, "{row}");
        // The bare loop drives the same openraft nodes: a real share of the
        // harness's time, not hosts doing nothing.
        assert!(bare * 10.0 > harness, "{row}");
    }
    assert!(!text.contains("Not measured"), "{text}");

    // A build that is missing: one line, and the rest is measured.
    let tree = unbuilt_tree("bench-missing");
    let out = faultline_in(
        &tree,
        &[
            "bench",
            "scenarios",
            "--repeat",
            "1",
            "--sweep",
            "scenarios/leader-crash.yaml",
            "--sweep-seeds",
            "2",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("bench: not measured: scenarios/s.yaml [old]: target sys@1.0 is not built"),
        "{stderr}"
    );
    assert!(
        stdout.contains("| raftkv-leader-crash | default |"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&tree).unwrap();
}

/// openraft#1802's first find on `openraft-auto.yaml` (seed 25, issue 25): the
/// same schedule on alpha.25, where the key is fixed, departs from alpha.24's run
/// where the leader reports an index committed that its own log has not yet
/// flushed. That is the mechanism the bug scenario sets up and asserts
/// (`openraft-1802-subquorum-commit.yaml`: the leader's own flush held, so the
/// commit comes from followers' acknowledgements alone, on fewer than a
/// majority); the fixed build commits nothing there.
/// `faultline hunt scenarios/openraft/openraft-auto.yaml --key openraft#1802`
/// with `args`, from the workspace.
fn hunt_1802_on_openraft_auto(args: &[&str]) -> std::process::Output {
    hunt_key(
        "scenarios/openraft/openraft-auto.yaml",
        "openraft#1802",
        args,
    )
}

/// `faultline hunt FILE --key KEY` with `args`, from the workspace.
fn hunt_key(file: &str, key: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["hunt", file, "--key", key];
    all.extend_from_slice(args);
    faultline_in(&common::workspace(), &all)
}

/// A one-seed hunt's find: its row (`what`) counts one find of `checker`; its
/// differential cause line, and that line's buggy and fixed sides.
fn one_find<'a>(stdout: &'a str, what: &str, checker: &str) -> (&'a str, &'a str, &'a str) {
    let row = hunt_row(stdout, what);
    assert!(row.contains("1/1"), "the seed finds it: {row}");
    assert!(row.contains(checker), "{row}");
    let cause = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("cause:"))
        .unwrap_or_else(|| panic!("no cause line: {stdout}"));
    let (buggy, fixed) = cause.split_once(", fixed `").expect("both sides");
    (cause, buggy, fixed)
}

/// hunt's table row that names `what`.
fn hunt_row<'a>(stdout: &'a str, what: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no row of {what}: {stdout}"))
}

#[test]
fn openraft_1802s_first_auto_find_departs_where_the_leader_commits_past_its_own_flush() {
    openraft_builds();
    let hunt = hunt_1802_on_openraft_auto(&["--seeds", "25..25", "--no-fixed"]);
    let stdout = String::from_utf8_lossy(&hunt.stdout);
    let (cause, buggy, fixed) = one_find(
        &stdout,
        "openraft#1802 (build openraft@0.10.0-alpha.24)",
        "invariant:committed_on_quorum",
    );
    assert!(
        buggy.contains("with openraft#1802 buggy the run departs from the fixed run"),
        "{cause}"
    );
    assert!(
        buggy.contains("probe openraft_committed_past_own_flush"),
        "the departure is the commit past the leader's own flush: {cause}"
    );
    assert!(
        !fixed.contains("openraft_committed_past_own_flush"),
        "{cause}"
    );
}

/// Guided search on a key switched by build searches in the buggy build's
/// binary, which can read the schedules its runs played: it keeps a corpus and
/// derives runs from it. Run from faultline, whose process has no openraft
/// model, every schedule failed to load, no run joined the corpus, and every
/// run was a fresh seed (swarm sampling under another name).
#[test]
fn guided_search_on_a_key_switched_by_build_keeps_a_corpus_and_derives_runs() {
    openraft_builds();
    let hunt = hunt_1802_on_openraft_auto(&[
        "--seeds",
        "1..8",
        "--guided-trials",
        "1",
        "--no-fixed",
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&hunt.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&hunt.stderr)));
    let search = &json["guided"][0]["trials"][0]["guided"];
    assert_eq!(search["runs"], 8, "{search}");
    assert!(search["corpus"].as_u64() > Some(0), "a corpus: {search}");
    assert!(search["features"].as_u64() > Some(0), "features: {search}");
    assert!(
        search["derived"].as_u64() > Some(0),
        "derived runs: {search}"
    );
    assert_eq!(
        search["fresh"].as_u64().unwrap()
            + search["derived"].as_u64().unwrap()
            + search["invalid"].as_u64().unwrap(),
        8,
        "{search}"
    );
}

/// Runs every variant of one bundled openraft scenario with `-v`: the exit
/// code and the full findings of each run.
fn run_openraft_scenario(file: &str) -> (Option<i32>, String) {
    openraft_builds();
    let out = faultline_in(&common::workspace(), &["-v", "run", file]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The findings block of one variant's run in `-v` output: its first line and
/// the indented lines after it.
fn variant_block<'a>(stdout: &'a str, scenario: &str, variant: &str) -> &'a str {
    let head = format!(" {scenario} [{variant}] ");
    let start = stdout
        .find(&head)
        .unwrap_or_else(|| panic!("no run of [{variant}]: {stdout}"));
    let rest = &stdout[start..];
    let end = rest[1..]
        .find("\nPASS ")
        .or_else(|| rest[1..].find("\nFAIL "))
        .map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// openraft#1808 (issue 28, item 2): on alpha.24 and alpha.25 the lagging n1
/// keeps its stale membership through the snapshot install, wins an election
/// with a quorum of it, and the oracle names that at the election
/// (`leader_membership_committed`) before the two quorums' commits diverge; on
/// alpha.26 (the fix) and alpha.37 n1 is a learner and the run converges.
#[test]
fn openraft_1808_a_stale_membership_elects_a_phantom_leader_before_the_fix_only() {
    let file = "scenarios/openraft/openraft-1808-stale-membership.yaml";
    let (code, stdout) = run_openraft_scenario(file);
    assert_eq!(code, Some(0), "{stdout}");
    let name = "openraft-1808-stale-membership";
    for buggy in ["buggy", "buggy-alpha24"] {
        let block = variant_block(&stdout, name, buggy);
        assert!(block.contains("diverged (expected diverged)"), "{block}");
        assert!(
            block.contains("violated [invariant:leader_membership_committed]: leader_membership_committed: n1 became leader under the membership config of entry"),
            "{block}"
        );
        assert!(
            block.contains("violated [invariant:committed_entries_agree]"),
            "{block}"
        );
        // The first wrong state, at the install, before any election.
        assert!(
            block.contains("violated [invariant:membership_in_log]: membership_in_log: n1 uses the membership config of entry 2.9 (index 9), but its snapshot up to"),
            "{block}"
        );
    }
    for fixed in ["fixed", "fixed-alpha37"] {
        let block = variant_block(&stdout, name, fixed);
        assert!(block.contains("converged (expected converged)"), "{block}");
        assert!(!block.contains("violated"), "{block}");
    }
}

/// openraft#1808's first find by chaos (`openraft-membership-chaos.yaml`, seed
/// 107 of `hunt --key openraft#1808 --seeds 1..1000`): n1 installs a snapshot
/// that covers its own uncommitted membership entry and keeps that entry's
/// config on alpha.25 (`membership_in_log`), where the same schedule on
/// alpha.26, the fix, makes n1 a learner at that moment: the departure is
/// the mechanism the bug scenario asserts.
#[test]
fn openraft_1808s_first_chaos_find_departs_where_the_install_keeps_a_stale_membership() {
    openraft_builds();
    let hunt = hunt_key(
        "scenarios/openraft/openraft-membership-chaos.yaml",
        "openraft#1808",
        &["--seeds", "107..107", "--no-fixed"],
    );
    let stdout = String::from_utf8_lossy(&hunt.stdout);
    let (cause, buggy, fixed) = one_find(
        &stdout,
        "openraft#1808 (build openraft@0.10.0-alpha.25)",
        "invariant:membership_in_log",
    );
    assert!(
        buggy.contains("with openraft#1808 buggy the run departs from the fixed run")
            && buggy.contains(
                "n1: invariant membership_in_log violated: n1 uses the membership config of entry"
            ),
        "the departure is the stale config kept through the install: {cause}"
    );
    assert!(
        fixed.contains("n1: learner term"),
        "the fix makes n1 a learner: {cause}"
    );
}

/// openraft#1795 (issue 28, item 2): on alpha.23 a failed log read on the
/// leader makes its replication retry with no previous log id, and the new
/// learner appends entries from index 20 to an empty log (`log_contiguous`);
/// on alpha.24 (the fix) and alpha.37 replication stops and the run converges.
#[test]
fn openraft_1795_a_read_error_leaves_a_gap_in_the_followers_log_before_the_fix_only() {
    let file = "scenarios/openraft/openraft-1795-read-error-corrupts-follower.yaml";
    let (code, stdout) = run_openraft_scenario(file);
    assert_eq!(code, Some(0), "{stdout}");
    let name = "openraft-1795-read-error-corrupts-follower";
    let block = variant_block(&stdout, name, "buggy");
    assert!(
        block.contains("violated (expected violated or diverged)"),
        "{block}"
    );
    assert!(
        block.contains("violated [invariant:log_contiguous]: log_contiguous: n2 appended entries from index 20 to a log that ends at nothing: indexes 0 to 19 are missing"),
        "{block}"
    );
    for fixed in ["fixed", "fixed-alpha37"] {
        let block = variant_block(&stdout, name, fixed);
        assert!(block.contains("converged (expected converged)"), "{block}");
        assert!(!block.contains("violated"), "{block}");
    }
}

/// A hunt takes a target-driven file by its text: a chaos section that plays a
/// given schedule (a shrunk find of a real build) is a scripted run and is not
/// hunted, while the same file drawing its schedule is.
#[test]
fn hunt_skips_a_target_driven_file_that_plays_a_given_schedule() {
    let dir = common::temp_dir("targets", "hunt-schedule");
    std::fs::write(dir.join("faultline-targets.yaml"), TWO_BUILDS).unwrap();
    let head = "model: sys\nnodes: [a]\nvariants:\n  buggy: {target: sys@1.0, expect: converged}\n  fixed: {target: sys@2.0, expect: converged}\nsteps:\n  - sleep: 1s\nchaos:\n  window: 1s\n";
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("drawn.yaml"),
        format!("{head}  faults: {{crash: 1}}\n"),
    )
    .unwrap();
    std::fs::write(
        scenarios.join("given.yaml"),
        format!(
            "{head}  schedule:\n    window: 1s\n    faults:\n      - {{at: 500ms, crash: a}}\n"
        ),
    )
    .unwrap();
    let hunted = faultline::drive::hunt::hunted(&[scenarios], &[]).expect("both load");
    let names: Vec<&str> = hunted.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["drawn"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
