//! Variants that run on a target build: a missing build is a clear error that
//! names the build command, never a run that silently did nothing.

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

#[test]
fn a_scenario_of_a_model_in_a_missing_build_fails_naming_the_build_command() {
    let dir = common::temp_dir("targets", "remote-missing");
    std::fs::write(dir.join("faultline-targets.yaml"), MANIFEST).unwrap();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(
        dir.join("scenarios/s.yaml"),
        "model: sys\nnodes: [a]\nvariants:\n  old: {target: sys@1.0, expect: converged}\nsteps:\n  - sleep: 1s\n",
    )
    .unwrap();
    for command in ["run", "validate"] {
        let out = faultline_in(&dir, &[command, "scenarios/s.yaml"]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("scenarios/s.yaml:4:"), "located: {stderr}");
        assert!(stderr.contains("target sys@1.0 is not built"), "{stderr}");
        assert!(stderr.contains("`./make-sys`"), "names the build: {stderr}");
    }
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
}

#[test]
fn a_target_of_another_model_or_a_malformed_one_is_a_located_error() {
    let text = "model: raftkv\nnodes: [n1]\nvariants:\n  a: {target: zookeeper@3.9, expect: converged}\n  b: {target: raftkv, expect: converged}\nsteps:\n  - sleep: 1s\n";
    let Err(e) = faultline::scenario::load_str("t.yaml", text) else {
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
    for build in ["alpha24", "alpha25"] {
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
}
