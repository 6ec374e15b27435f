//! A report carries every input of its run: the replay command it prints, the
//! report's own fields and `faultline replay` rerun the same run, from any
//! directory. The terminal says what failed and where the report went.

mod common;

use common::{faultline, faultline_in, workspace};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("replay", name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// The one report.json under `dir`.
fn only_report(dir: &Path) -> PathBuf {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.file_name().is_some_and(|n| n == "report.json") {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, &mut found);
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

const CANARY: &str = "scenarios/raftkv/canary-quorum.yaml";

/// The canary's fixed variant with its bug switched on by `--bug`: the run
/// fails, and everything that reruns it must switch the bug on too.
#[test]
fn a_bug_override_is_recorded_and_carried_by_every_replay() {
    let dir = temp_dir("bug-override");
    let reports = dir.join("reports");
    let out = faultline(&[
        "run",
        CANARY,
        "--variant",
        "fixed",
        "--seed",
        "1",
        "--bug",
        "CANARY-QUORUM=buggy",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    let expected_replay =
        format!("faultline run {CANARY} --variant fixed --seed 1 --bug CANARY-QUORUM=buggy");
    assert!(
        stdout.contains(&format!("replay: {expected_replay}\n")),
        "{stdout}"
    );
    // The headline names the override beside the variant.
    assert!(
        stdout.contains("FAIL raftkv-canary-quorum [fixed --bug CANARY-QUORUM=buggy] "),
        "{stdout}"
    );

    let report = only_report(&reports);
    let json = read_json(&report);
    assert_eq!(json["replay"], expected_replay.as_str());
    assert_eq!(
        json["bug_overrides"],
        serde_json::json!({"CANARY-QUORUM": "buggy"})
    );
    assert_eq!(json["bugs"]["CANARY-QUORUM"], "buggy");
    let digest = json["trail_digest"].as_str().unwrap().to_string();

    let html = std::fs::read_to_string(report.with_extension("html")).unwrap();
    assert!(html.contains(&expected_replay), "the page's replay box");
    let header = &html[html.find("<header").unwrap()..html.find("</header>").unwrap()];
    assert!(
        header.contains("CANARY-QUORUM <b>buggy</b> (--bug)"),
        "the header names the bug mode in effect: {header}"
    );

    // `faultline replay` reruns the run it describes.
    let replay = faultline(&["replay", report.to_str().unwrap()]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}{}",
        text(&replay.stdout),
        text(&replay.stderr)
    );
    assert!(text(&replay.stdout).contains(&format!("replay: same trail digest {digest}")));

    // So does the printed command, run as it stands.
    let words: Vec<&str> = expected_replay
        .split(' ')
        .skip(1)
        .chain(["--json"])
        .collect();
    let rerun = faultline(&words);
    let line: Value = serde_json::from_str(text(&rerun.stdout).trim()).unwrap();
    assert_eq!(line["trail_digest"], digest.as_str());
    assert_eq!(line["replay"], expected_replay.as_str());

    // A report written before overrides were recorded has only its bug modes;
    // replay lays those the variant lacks over it.
    let mut old = json.clone();
    let fields = old.as_object_mut().unwrap();
    fields.remove("bug_overrides");
    fields.remove("file_absolute");
    let old_path = dir.join("old-report.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let replay = faultline(&["replay", old_path.to_str().unwrap()]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}{}",
        text(&replay.stdout),
        text(&replay.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A report names its scenario by an absolute path: replay and shrink find it
/// from another directory than the run's.
#[test]
fn a_report_replays_and_shrinks_from_another_directory() {
    let dir = temp_dir("elsewhere");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::copy(
        workspace().join(CANARY),
        scenarios.join("canary-wrong.yaml"),
    )
    .unwrap();
    let reports = dir.join("reports");
    let out = faultline_in(
        &scenarios,
        &[
            "run",
            "canary-wrong.yaml",
            "--variant",
            "buggy",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = only_report(&reports);
    let json = read_json(&report);
    assert_eq!(json["file"], "canary-wrong.yaml", "the path as given");
    let absolute = PathBuf::from(json["file_absolute"].as_str().unwrap());
    assert!(absolute.is_absolute(), "{}", absolute.display());
    assert_eq!(
        absolute,
        scenarios.join("canary-wrong.yaml").canonicalize().unwrap()
    );

    // From the workspace, where no canary-wrong.yaml is.
    assert!(!workspace().join("canary-wrong.yaml").exists());
    let replay = faultline(&["replay", report.to_str().unwrap()]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}{}",
        text(&replay.stdout),
        text(&replay.stderr)
    );
    assert!(text(&replay.stdout).contains("replay: same trail digest"));
    let shrink = faultline(&["shrink", report.to_str().unwrap(), "--budget", "3"]);
    assert_eq!(shrink.status.code(), Some(0), "{}", text(&shrink.stderr));
    assert!(
        text(&shrink.stdout).contains("variants:"),
        "a scenario is printed"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run that ends as expected but misses another expectation says which one,
/// rather than "converged (expected converged)".
#[test]
fn a_failed_expectation_is_named_in_the_headline() {
    let dir = temp_dir("headline");
    let file = dir.join("evidence.yaml");
    std::fs::write(
        &file,
        "model: raftkv\nnodes: [n1, n2, n3]\n\
         expect:\n  outcome: converged\n  trail:\n    - {kind: op_ok, contains: \"put k=never\"}\n\
         steps:\n  - await: leader\n  - client: {op: put, key: k, value: v, expect: ok}\n",
    )
    .unwrap();
    let out = faultline(&["run", file.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(faultline::cli::exit::EXPECTATION_UNMET as i32),
        "{stdout}"
    );
    let headline = stdout.lines().next().unwrap();
    assert!(
        headline.starts_with("FAIL evidence [default] converged as expected, but expect failed: "),
        "{headline}"
    );
    assert!(
        headline.contains(&format!(
            "{}:6:7: expected at least one trail event(s) with kind op_ok, containing \"put k=never\", found 0",
            file.display()
        )),
        "{headline}"
    );
    assert!(!headline.contains("(expected converged)"), "{headline}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Report files get mode 0666 less the umask, and the terminal says where they
/// went: under each failure, and once at the end.
#[test]
fn reports_follow_the_umask_and_their_place_is_printed() {
    let dir = temp_dir("umask");
    let reports = dir.join("reports");
    let command = format!(
        "umask 022 && exec '{}' run {CANARY} --seed 1 --bug CANARY-QUORUM=buggy --report-dir '{}'",
        env!("CARGO_BIN_EXE_faultline"),
        reports.display()
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(workspace())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    // The fixed variant fails with the bug on; the buggy one passes.
    let html = reports.join("raftkv-canary-quorum/fixed/seed-1/report.html");
    let failure = &stdout[stdout.find("FAIL ").expect("a failure")..];
    let block_end = failure.find("\nPASS ").unwrap_or(failure.len());
    assert!(
        failure[..block_end].contains(&format!("\n  report: {}\n", html.display())),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(&format!(
            "report: {}\n",
            reports.join("summary.md").display()
        )),
        "{stdout}"
    );
    use std::os::unix::fs::PermissionsExt;
    for file in [
        html.clone(),
        html.with_extension("json"),
        reports.join("summary.md"),
        reports.join("junit.xml"),
    ] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{}: {mode:o}", file.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run given its schedule (an edited one here) is replayed with that
/// schedule, not with the one its seed draws.
#[test]
fn a_given_schedule_is_replayed() {
    use faultline::sim::runner::{self, Inputs};
    let path = workspace().join("scenarios/raftkv/chaos.yaml");
    let scenario = faultline::lang::scenario::load(&path).unwrap();
    let variant = &scenario.variants[0];
    let drawn = runner::run(&scenario, variant, 3);
    let json = drawn
        .schedule
        .as_ref()
        .expect("a chaos run records its schedule");
    let mut schedule =
        faultline::lang::scenario::load_schedule(&scenario, "report.json", &json.to_string())
            .unwrap();
    assert!(
        schedule.faults.len() > 1,
        "{} fault(s)",
        schedule.faults.len()
    );
    schedule.faults.remove(0);
    let inputs = Inputs {
        schedule: Some(schedule),
        ..Default::default()
    };
    let edited = runner::run_with(&scenario, variant, 3, &inputs);
    assert!(edited.schedule_given);
    assert_ne!(
        edited.trail_digest, drawn.trail_digest,
        "the edit changed the run"
    );
    let dir = temp_dir("schedule");
    let report = faultline::report::write_run(&dir, &edited).unwrap();
    let replay = faultline(&["replay", report.to_str().unwrap()]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}{}",
        text(&replay.stdout),
        text(&replay.stderr)
    );
    assert!(text(&replay.stdout).contains(&format!(
        "replay: same trail digest {}",
        edited.trail_digest
    )));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A report whose recorded inputs no longer fit its scenario is refused with
/// exit 2 and the reason, never rerun without them.
#[test]
fn a_report_whose_inputs_no_longer_fit_is_bad_input() {
    let dir = temp_dir("unfit");
    let reports = dir.join("reports");
    let out = faultline(&[
        "run",
        CANARY,
        "--variant",
        "buggy",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = read_json(&only_report(&reports));
    for (field, value, says) in [
        (
            "bug_overrides",
            serde_json::json!({"NO-SUCH-BUG": "buggy"}),
            "the report's bug `NO-SUCH-BUG` is not a bug of model `raftkv`",
        ),
        (
            "schedule",
            serde_json::json!({"faults": "not a list"}),
            "the report's schedule does not load",
        ),
    ] {
        let mut bad = json.clone();
        bad[field] = value;
        bad["schedule_given"] = Value::Bool(field == "schedule");
        let path = dir.join(format!("{field}.json"));
        std::fs::write(&path, bad.to_string()).unwrap();
        let replay = faultline(&["replay", path.to_str().unwrap()]);
        assert_eq!(
            replay.status.code(),
            Some(2),
            "{field}: {}",
            text(&replay.stderr)
        );
        assert!(
            text(&replay.stderr).contains(says),
            "{field}: {}",
            text(&replay.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scripted run shrinks to a file whose variants are named for what they are
/// and whose waits are as short as the finding allows (issue 26, item 3): the
/// canary's `fixed` variant run with `--bug CANARY-QUORUM=buggy` used to shrink
/// to a variant named `fixed` holding the buggy mode, with every sleep of the
/// original kept.
#[test]
fn a_scripted_shrink_keeps_a_buggy_fixed_pair_and_shortens_its_waits() {
    let dir = temp_dir("scripted-shrink");
    let reports = dir.join("reports");
    let out = faultline(&[
        "run",
        "scenarios/raftkv/canary-quorum.yaml",
        "--variant",
        "fixed",
        "--bug",
        "CANARY-QUORUM=buggy",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_ne!(
        out.status.code(),
        Some(0),
        "the buggy mode fails the fixed variant"
    );
    let report = only_report(&reports);
    let shrunk = dir.join("shrunk.yaml");
    let out = faultline(&[
        "shrink",
        report.to_str().unwrap(),
        "-o",
        shrunk.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = std::fs::read_to_string(&shrunk).unwrap();
    assert!(
        file.contains("  buggy: {expect: [diverged], bugs: {CANARY-QUORUM: buggy}}\n"),
        "{file}"
    );
    assert!(
        file.contains("  fixed: {expect: converged, bugs: {CANARY-QUORUM: fixed}}\n"),
        "{file}"
    );
    // The script before the heal phase: the original's 3,434 ms of waits, cut
    // down to what the divergence needs (a leader, then the minority's write).
    let waited: u64 = file
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- sleep: "))
        .map(|d| d.trim_end_matches("ms").parse::<u64>().unwrap())
        .sum();
    assert!(waited < 1_000, "{waited} ms of sleeps: {file}");
    // It runs on its own: the buggy variant ends with the finding, the fixed
    // one converges.
    let run = faultline(&["run", shrunk.to_str().unwrap()]);
    let stdout = text(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("[buggy] diverged (expected diverged)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[fixed] converged (expected converged)"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
