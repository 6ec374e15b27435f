//! The command line as CI uses it: exit codes, JSON lines, report files, replay.

mod common;

use std::path::PathBuf;

use common::faultline;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("cli", name)
}

#[test]
fn a_passing_run_exits_0_and_writes_every_report() {
    let dir = temp_dir("reports");
    let out = faultline(&[
        "run",
        "scenarios/raftkv/leader-crash.yaml",
        "--report-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("PASS raftkv-leader-crash [default] converged (expected converged) seed=1"),
        "{stdout}"
    );
    let report = dir.join("raftkv-leader-crash/default/seed-1/report.json");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    for key in [
        "trail",
        "nodes",
        "harness_version",
        "scenario_sha256",
        "replay",
        "trail_digest",
        "findings",
    ] {
        assert!(json.get(key).is_some(), "report.json lacks {key}");
    }
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(
        junit.contains("<testcase name=\"default seed=1\" classname=\"raftkv-leader-crash\""),
        "{junit}"
    );
    assert!(std::fs::read_to_string(dir.join("summary.md"))
        .unwrap()
        .contains("| raftkv-leader-crash | default | 1 | converged"));

    let replay = faultline(&["replay", report.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&replay.stdout).contains("replay: same trail digest"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_lines_carry_the_documented_fields() {
    let out = faultline(&["run", "scenarios/raftkv/canary-quorum.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "one object per variant");
    for line in &lines {
        for key in [
            "scenario",
            "variant",
            "seed",
            "outcome",
            "expected",
            "passed",
            "trail_digest",
            "sim_elapsed_ms",
            "findings",
        ] {
            assert!(line.get(key).is_some(), "{key} missing in {line}");
        }
    }
    assert_eq!(lines[0]["variant"], "buggy");
    assert_eq!(lines[0]["outcome"], "diverged");
    assert_eq!(lines[0]["passed"], true);
}

#[test]
fn an_unmet_expectation_exits_with_its_class_and_prints_the_replay_command() {
    let dir = temp_dir("unmet");
    let file = dir.join("wrong.yaml");
    std::fs::write(
        &file,
        "model: raftkv\nnodes: [n1, n2, n3]\nexpect: diverged\nsteps:\n  - await: leader\n",
    )
    .unwrap();
    let out = faultline(&["run", file.to_str().unwrap(), "--seed", "9"]);
    // One run that converged where a divergence was expected: "expectation unmet".
    assert_eq!(
        out.status.code(),
        Some(faultline::cli::exit::EXPECTATION_UNMET as i32)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("FAIL wrong [default] converged (expected diverged) seed=9"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "replay: faultline run {} --variant default --seed 9",
            file.display()
        )),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_and_usage_errors_exit_2() {
    assert_eq!(faultline(&["run", "no-such.yaml"]).status.code(), Some(2));
    assert_eq!(
        faultline(&["run", "--frobnicate", "scenarios"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        faultline(&["run", "scenarios/raftkv", "--variant", "no-such-variant"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        faultline(&["replay", "no-such-report.json"]).status.code(),
        Some(2)
    );
}

#[test]
fn list_shows_models_with_ops_fail_points_invariants_and_bugs() {
    let out = faultline(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "model raftkv",
        "put",
        "propose",
        "applied_entries_stable",
        "CANARY-QUORUM",
        "scenarios/raftkv/canary-quorum.yaml",
        // Parameters: name, type with bounds, default, meaning.
        "heartbeat_ms                     duration (ms) 1..=10000 (default 50): leader heartbeat interval",
        "exit_order                       one of flush_first|exit_first, or a map node -> one of flush_first|exit_first (default flush_first)",
        "sid                              a map node -> integer 1..=255, naming every node, no value twice (no default)",
        "containers                       list of <= 512 integers 0..=9223372036854775807 (default [1])",
        "snap_count                       integer 2..=1000000000 (default 100000)",
    ] {
        assert!(stdout.contains(needle), "list lacks {needle}:\n{stdout}");
    }
}

/// Every model's probes are listed with their summary, and the rare ones say so.
#[test]
fn list_shows_every_probe_with_its_summary_and_rarity() {
    let out = faultline(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut listed = 0;
    for model in nodes::registry::models() {
        for probe in &model.info().probes {
            let line = stdout
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{} ", probe.name)))
                .unwrap_or_else(|| panic!("list lacks probe {}:\n{stdout}", probe.name));
            assert!(line.contains(probe.summary), "{line}");
            assert_eq!(line.ends_with(" [rare]"), probe.rare, "{line}");
            listed += 1;
        }
    }
    assert!(listed >= 5 + 5 + 5 + 3, "only {listed} probes listed");
}

/// `list MODEL` shows each key the model's nodes publish (what `observed:`
/// can match) with its kind and summary, and `list --json` carries them.
#[test]
fn list_shows_every_observation_key_with_its_summary() {
    let mut listed = 0;
    for model in nodes::registry::models() {
        let info = model.info();
        let out = faultline(&["list", info.name]);
        assert_eq!(out.status.code(), Some(0));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let section: Vec<&str> = stdout
            .lines()
            .skip_while(|l| !l.starts_with("  observed keys"))
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        assert_eq!(section.len(), info.observations.len(), "{stdout}");
        for (line, o) in section.iter().zip(&info.observations) {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(words[..2], [o.key, o.kind.name()], "{line}");
            assert!(line.ends_with(o.summary), "{line}");
            listed += 1;
        }
    }
    assert!(listed >= 40, "only {listed} keys listed");
    let out = faultline(&["list", "ozone-om", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = json["models"][0]["observations"].as_array().unwrap();
    let ready = keys.iter().find(|k| k["key"] == "ready").expect("ready");
    assert_eq!(ready["kind"], "fact");
    assert!(keys
        .iter()
        .any(|k| k["key"] == "chain.<bucket>" && k["kind"] == "state"));
}

#[test]
fn completions_and_man_pages_come_from_the_command_definitions() {
    for (shell, marker) in [
        ("bash", "_faultline()"),
        ("zsh", "#compdef faultline"),
        ("fish", "complete -c faultline"),
    ] {
        let out = faultline(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        for flag in ["check-determinism", "report-dir", "time-budget"] {
            assert!(script.contains(flag), "{shell} completes {flag}");
        }
    }
    // The bash script parses.
    let out = faultline(&["completions", "bash"]);
    let dir = temp_dir("completions");
    let script = dir.join("faultline.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(faultline(&["completions", "tcsh"]).status.code(), Some(2));

    let out = faultline(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH faultline 1"), "{page}");
    assert!(page.contains("faultline\\-sweep(1)"), "{page}");
    assert!(page.contains("RUST_LOG"), "the environment is documented");
    let out = faultline(&["man", "--out-dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let sweep = std::fs::read_to_string(dir.join("faultline-sweep.1")).unwrap();
    assert!(sweep.contains("\\-\\-check\\-determinism"), "{sweep}");
    assert!(dir.join("faultline.1").exists() && dir.join("faultline-run.1").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `faultline history export REPORT` is the documented shape (issue 26, item
/// 15): `export` was read as the report's path. `history REPORT` stays the same
/// command; `--help` shows an example.
/// The report of raftkv's leader-crash scenario (4 puts, an append and a get),
/// run into a fresh directory named `name`.
fn leader_crash_report(name: &str) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let out = faultline(&[
        "run",
        "scenarios/raftkv/leader-crash.yaml",
        "--report-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = dir.join("raftkv-leader-crash/default/seed-1/report.json");
    let report = report.to_str().unwrap().to_string();
    (dir, report)
}

/// A shape that does not fit the history is refused, and one that fits part
/// of it says how many ops it left out (issue 26, item 5).
#[test]
fn an_edn_shape_that_leaves_ops_out_says_so() {
    let (dir, report) = leader_crash_report("history-shape");
    let report = report.as_str();
    // list-append has a form for the append and the get, none for the puts.
    let out = faultline(&[
        "history",
        "export",
        report,
        "--edn",
        "--shape",
        "list-append",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left out 4 of 6 op(s)") && stderr.contains("4 put"),
        "{stderr}"
    );
    // A key no op has: the shape fits none of them, refused.
    let out = faultline(&[
        "history", "export", report, "--edn", "--shape", "register", "--key", "absent",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fits none of the history's 6 op(s)"),
        "{stderr}"
    );
    // The register shape takes puts and gets; the run's one append it names.
    let out = faultline(&["history", "export", report, "--edn", "--shape", "register"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left out 1 of 6 op(s)") && stderr.contains("1 append"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(" put") && !stderr.contains(" get"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn history_export_reads_the_report_after_the_word_export() {
    let (dir, report) = leader_crash_report("history-export");
    let report = report.as_str();
    let exported = faultline(&["history", "export", report]);
    assert_eq!(
        exported.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let lines = String::from_utf8_lossy(&exported.stdout).lines().count();
    assert!(lines > 0, "one JSON line per op");
    let short = faultline(&["history", report]);
    assert_eq!(short.status.code(), Some(0));
    assert_eq!(short.stdout, exported.stdout, "the same command");
    let edn = dir.join("h.edn");
    let out = faultline(&[
        "history",
        "export",
        report,
        "--edn",
        "-o",
        edn.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::read_to_string(&edn)
        .unwrap()
        .contains(":type :invoke"));
    // A missing report is a clear error, exit 2.
    let out = faultline(&["history", "export"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("REPORT"),
        "{out:?}"
    );
    let help = faultline(&["history", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("faultline history export report.json"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `faultline list MODEL` shows one model and its scenarios; `list --json` is
/// one object a script reads (issue 26, item 14).
#[test]
fn list_takes_a_model_and_prints_json() {
    let out = faultline(&["list", "raftkv"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("model raftkv:"), "{stdout}");
    assert_eq!(stdout.matches("\nmodel ").count(), 0, "one model: {stdout}");
    let scenarios: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("bundled scenarios"))
        .skip(1)
        .collect();
    assert!(scenarios
        .iter()
        .any(|l| l.contains("scenarios/raftkv/leader-crash.yaml [raftkv]")));
    assert!(
        scenarios.iter().all(|l| l.contains("[raftkv]")),
        "{scenarios:?}"
    );
    let out = faultline(&["list", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no model named `nosuch`; the models are: raftkv"),
        "{stderr}"
    );
    let out = faultline(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let models = json["models"].as_array().unwrap();
    let raftkv = models.iter().find(|m| m["name"] == "raftkv").unwrap();
    let bugs: Vec<&str> = raftkv["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["key"].as_str().unwrap())
        .collect();
    assert!(bugs.contains(&"CANARY-QUORUM"), "{bugs:?}");
    assert!(raftkv["ops"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["name"] == "put"));
    let scenarios = json["scenarios"].as_array().unwrap();
    let leader_crash = scenarios
        .iter()
        .find(|s| s["file"] == "scenarios/raftkv/leader-crash.yaml")
        .unwrap();
    assert_eq!(leader_crash["model"], "raftkv");
    assert_eq!(leader_crash["variants"], serde_json::json!(["default"]));
    let out = faultline(&["list", "zookeeper", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["models"].as_array().unwrap().len(), 1);
    assert!(json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["model"] == "zookeeper"));
}

/// `sweep --bug` and `--param` as on `run` (issue 26, item 14): the fixed
/// variant of a canary with its bug switched on fails as the buggy one does,
/// every run's replay command carries the override, and a failure's report
/// replays to the same digest.
#[test]
fn sweep_takes_bug_and_param_overrides_as_run_does() {
    let dir = temp_dir("sweep-overrides");
    let out_dir = dir.join("sweep");
    let out = faultline(&[
        "sweep",
        "scenarios/raftkv/canary-quorum.yaml",
        "--variant",
        "fixed",
        "--seeds",
        "1..2",
        "--jobs",
        "1",
        "--bug",
        "CANARY-QUORUM=buggy",
        "--param",
        "heartbeat_ms=40",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "both runs fail: {stderr}");
    let results = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert!(
            r["outcome"] == "diverged" || r["outcome"] == "violated",
            "{r}"
        );
        let replay = r["replay"].as_str().unwrap();
        assert!(
            replay.ends_with("--bug CANARY-QUORUM=buggy --param heartbeat_ms=40"),
            "{replay}"
        );
    }
    let report = out_dir.join(records[0]["report"].as_str().unwrap());
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        saved["params"]["heartbeat_ms"], 40,
        "the nodes had the param"
    );
    assert_eq!(saved["bugs"]["CANARY-QUORUM"], "buggy");
    let replay = faultline(&["replay", report.to_str().unwrap()]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    // Bad overrides are bad input, with what would be accepted.
    let out = faultline(&[
        "sweep",
        "scenarios/raftkv/canary-quorum.yaml",
        "--param",
        "nosuch=1",
        "--out",
        dir.join("bad").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has no param `nosuch` (known: "),
        "{stderr}"
    );
    assert!(stderr.contains("heartbeat_ms"), "{stderr}");
    let out = faultline(&[
        "run",
        "scenarios/raftkv/leader-crash.yaml",
        "--param",
        "heartbeat_ms=0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`--param heartbeat_ms=0`"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `faultline rerun-failed DIR` reruns exactly the failures of the sweep in DIR,
/// with that sweep's overrides (issue 26, item 14).
#[test]
fn rerun_failed_reruns_the_failures_of_a_sweep_with_its_overrides() {
    let dir = temp_dir("rerun-failed");
    let failing = dir.join("failing");
    let out = faultline(&[
        "sweep",
        "scenarios/raftkv/canary-quorum.yaml",
        "--seeds",
        "1..3",
        "--jobs",
        "1",
        "--bug",
        "CANARY-QUORUM=buggy",
        "--out",
        failing.to_str().unwrap(),
    ]);
    // The buggy variant passes (it expects the failure); the fixed one, with
    // the bug switched on, fails at every seed.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let out = faultline(&["rerun-failed", failing.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("rerunning 3 failed run(s)"), "{stdout}");
    for seed in 1..=3 {
        assert!(
            stdout.lines().any(|l| l
                .contains("FAIL raftkv-canary-quorum [fixed --bug CANARY-QUORUM=buggy]")
                && l.contains(&format!(" seed={seed} "))),
            "seed {seed}: {stdout}"
        );
    }
    assert!(!stdout.contains("[buggy]"), "only the failures: {stdout}");
    assert!(stdout.contains("3 run(s): 0 passed, 3 failed"), "{stdout}");
    // A sweep without failures has nothing to rerun; a directory that is not a
    // sweep's is bad input.
    let passing = dir.join("passing");
    let out = faultline(&[
        "sweep",
        "scenarios/raftkv/leader-crash.yaml",
        "--seeds",
        "1..2",
        "--out",
        passing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = faultline(&["rerun-failed", passing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no failed run to rerun (2 run(s) recorded")
    );
    let out = faultline(&["rerun-failed", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not the --out directory of a sweep"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `run --seed 1..5` points at `sweep` (it said "invalid digit found in
/// string"); a `--variant` nobody has lists the ones there are (issue 26, item 14).
#[test]
fn a_seed_range_on_run_points_at_sweep_and_an_unknown_variant_lists_the_known_ones() {
    let out = faultline(&[
        "run",
        "scenarios/raftkv/leader-crash.yaml",
        "--seed",
        "1..5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "`run` takes one seed; to run seeds 1..5, use `faultline sweep PATHS --seeds 1..5`"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("invalid digit"), "{stderr}");
    let out = faultline(&["run", "scenarios/raftkv/leader-crash.yaml", "--seed", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a seed is a whole number"));
    for command in [
        &["run"][..],
        &["sweep", "--seeds", "1..1", "--out", "/nonexistent/x"][..],
    ] {
        let mut args = command.to_vec();
        args.extend(["scenarios/raftkv/canary-quorum.yaml", "--variant", "nosuch"]);
        let out = faultline(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(
                "no scenario has a variant named `nosuch`; the variants are: buggy, fixed"
            ),
            "{args:?}: {stderr}"
        );
    }
}

/// The README's log filter: `RUST_LOG=faultline::trail=debug` shows every trail
/// event as it is recorded. The target is named, not the recording module's path,
/// so moving the module does not silently empty the filter.
#[test]
fn the_trail_log_target_is_the_one_the_readme_names() {
    let root = common::workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("RUST_LOG=faultline::trail=debug"),
        "README names the filter"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["run", "scenarios/raftkv/leader-crash.yaml"])
        .current_dir(&root)
        .env("RUST_LOG", "faultline::trail=debug")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = stderr
        .lines()
        .filter(|l| l.contains("faultline::trail"))
        .count();
    assert!(
        lines > 10,
        "{lines} trail lines under the README's filter:\n{stderr}"
    );
}
