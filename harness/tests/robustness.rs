//! The harness against hostile input and faults of its own: limits that end runs
//! `stuck` instead of hanging, a model that panics (`crashed`, and a sweep goes on),
//! report paths that scenario data cannot steer, and SIGINT during a sweep.

mod common;

use faultline::base::outcome::Outcome;
use faultline::lang::scenario::{self, LoadError};
use faultline::sim::runner;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("robust", name)
}

fn errors(text: &str) -> String {
    match scenario::load_str("limits.yaml", text) {
        Ok(_) => panic!("accepted"),
        Err(LoadError::Invalid(d)) => d.to_string(),
        Err(LoadError::Io(e)) => e,
    }
}

#[test]
fn the_step_limit_is_a_clear_error() {
    let mut text = String::from("model: raftkv\nnodes: [n1]\nexpect: converged\nsteps:\n");
    for _ in 0..10_001 {
        text.push_str("  - sleep: 1ms\n");
    }
    assert!(errors(&text).contains("more than 10000 steps in one list"));
}

#[test]
fn the_fault_limit_is_a_clear_error() {
    let mut text = String::from("model: raftkv\nnodes: [n1, n2]\nexpect: converged\nsteps:\n");
    for _ in 0..2001 {
        text.push_str("  - crash: {node: n1, optional: true}\n");
    }
    assert!(
        errors(&text).contains("more than 2000 fault steps"),
        "{}",
        errors(&text)
    );
}

#[test]
fn the_node_limit_and_the_duration_limit_are_clear_errors() {
    let nodes: Vec<String> = (0..40).map(|i| format!("a{i}")).collect();
    let text = format!(
        "model: raftkv\nnodes: [{}]\nexpect: converged\nsteps:\n  - sleep: 1s\n",
        nodes.join(", ")
    );
    assert!(errors(&text).contains("a scenario has 1..=32 nodes, found 40"));
    let text = "model: raftkv\nnodes: [n1]\nexpect: converged\nsteps:\n  - sleep: 200h\n";
    assert!(errors(text).contains("over the limit of 7 days"));
}

fn run_text(text: &str) -> runner::RunResult {
    let scenario = common::load_text("limit.yaml", text);
    runner::run(&scenario, &scenario.variants[0], 1)
}

#[test]
fn hitting_the_simulated_duration_limit_ends_stuck_and_says_what_it_was_doing() {
    let result = run_text(
        "model: raftkv\nnodes: [n1, n2, n3]\ndefaults: {limits: {duration: 2s}}\nexpect: converged\nsteps:\n  - sleep: 10s\n",
    );
    assert_eq!(result.outcome, Outcome::Stuck);
    let message = &result
        .findings
        .iter()
        .find(|f| f.checker == "limits")
        .unwrap()
        .message;
    assert!(
        message.contains(
            "simulated duration limit of 2s reached while running the step at limit.yaml:6:5"
        ),
        "{message}"
    );
}

#[test]
fn hitting_the_step_limit_while_awaiting_names_the_condition() {
    let result = run_text(
        "model: faulty\nnodes: [a]\ndefaults: {limits: {steps: 500}}\nexpect: converged\nsteps:\n  - await: {down: a, within: 10s}\n",
    );
    assert_eq!(result.outcome, Outcome::Stuck);
    let message = &result
        .findings
        .iter()
        .find(|f| f.checker == "limits")
        .unwrap()
        .message;
    assert!(
        message.contains("step limit of 500 steps (simulation steps and scenario steps) reached while waiting for a down"),
        "{message}"
    );
}

#[test]
fn hitting_the_event_limit_ends_stuck() {
    let result = run_text(
        "model: faulty\nnodes: [a]\ndefaults: {limits: {events: 100}}\nexpect: converged\nsteps:\n  - client: {on: a, op: flood, events: 1000}\n",
    );
    assert_eq!(result.outcome, Outcome::Stuck);
    assert!(
        result.trail.len() <= 101,
        "the trail stays bounded: {}",
        result.trail.len()
    );
    assert!(result
        .findings
        .iter()
        .any(|f| f.message.contains("trail limit of 100 events reached")));
}

const PANIC: &str = "name: panics\nmodel: faulty\nnodes: [a, b]\nexpect: converged\nsteps:\n  - client: {on: a, op: set, key: k, value: v}\n  - client: {on: a, op: panic, message: \"invariant broken <here>\"}\n  - sleep: 1s\n";

#[test]
fn a_model_that_panics_ends_the_run_crashed_with_its_trail_and_message() {
    let result = run_text(PANIC);
    assert_eq!(result.outcome, Outcome::Crashed);
    let finding = result
        .findings
        .iter()
        .find(|f| f.checker == "panic")
        .unwrap();
    assert!(
        finding
            .message
            .contains("faulty model: invariant broken <here>"),
        "{}",
        finding.message
    );
    assert!(
        result
            .trail
            .iter()
            .any(|e| e.kind == faultline::base::trail::Kind::OpOk),
        "the trail up to the panic is kept"
    );
    // The next run in the same process is unaffected.
    let next = run_text("model: faulty\nnodes: [a]\nexpect: converged\nsteps:\n  - client: {on: a, op: set, key: k, value: v, expect: ok}\n");
    assert_eq!(next.outcome, Outcome::Converged, "{:?}", next.findings);
}

#[test]
fn a_sweep_goes_on_after_a_crashed_run() {
    let dir = temp_dir("crash-sweep");
    std::fs::write(dir.join("a-panics.yaml"), PANIC).unwrap();
    std::fs::write(
        dir.join("b-fine.yaml"),
        "name: fine\nmodel: faulty\nnodes: [a]\nexpect: converged\nsteps:\n  - client: {on: a, op: set, key: k, value: v}\n",
    )
    .unwrap();
    let out = dir.join("out");
    let options = faultline::drive::sweep::SweepOptions {
        paths: vec![dir.clone()],
        seeds: 1..=3,
        jobs: 1,
        shard: None,
        out: out.clone(),
        time_budget: None,
        resume: false,
        check_determinism: 0.0,
        variant: None,
        fail_fast: false,
        guided: false,
        corpus: None,
        overrides: Default::default(),
        quiet: true,
    };
    let summary = faultline::drive::sweep::sweep(&options).unwrap();
    assert_eq!(summary.failed().count(), 3, "a crashed run is a failure");
    let records = faultline::drive::sweep::results::read(&out.join("results.jsonl"))
        .unwrap()
        .records;
    assert_eq!(
        records.len(),
        6,
        "every run recorded, the crashed ones and the ones after"
    );
    assert_eq!(
        records
            .iter()
            .filter(|r| r.outcome == Outcome::Crashed)
            .count(),
        3
    );
    assert_eq!(records.iter().filter(|r| r.passed).count(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn scenario_names_cannot_steer_reports_outside_the_report_directory() {
    let dir = temp_dir("paths");
    let reports = dir.join("reports");
    let text = "name: \"../../../escape\"\nmodel: faulty\nnodes: [a]\nvariants:\n  \"/etc/x\": {expect: converged}\nsteps:\n  - sleep: 1ms\n";
    let result = run_text(text);
    let path = faultline::report::write_run(&reports, &result).unwrap();
    assert!(path.starts_with(&reports), "{}", path.display());
    let written: Vec<PathBuf> = walk(&dir);
    assert!(
        written.iter().all(|p| p.starts_with(&reports)),
        "{written:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A sweep stopped by `signal` part-way: it saves what it has, says in its
/// summary and sweep.json that it is incomplete, and exits 130.
fn stop_a_sweep_with(signal: i32, name: &str) {
    let dir = temp_dir(name);
    let out = dir.join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "sweep",
            "scenarios/raftkv/chaos.yaml",
            "--seeds",
            "1..200",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(common::workspace())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let results = out.join("results.jsonl");
    let mut waited = Duration::ZERO;
    while faultline::drive::sweep::results::read(&results)
        .unwrap()
        .records
        .len()
        < 2
    {
        assert!(waited < Duration::from_secs(300), "nothing recorded");
        std::thread::sleep(Duration::from_millis(20));
        waited += Duration::from_millis(20);
    }
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(130),
        "interrupted sweeps exit 130: {stderr}"
    );
    let contents = faultline::drive::sweep::results::read(&results).unwrap();
    let (records, intact) = (contents.records, contents.intact);
    assert!(!records.is_empty() && records.len() < 200);
    assert_eq!(
        intact,
        std::fs::metadata(&results).unwrap().len(),
        "no torn line"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let ran = format!("ran {} of 200 planned run(s)", records.len());
    assert!(
        summary.contains(&format!(
            "{} of {} run(s) met their expectation",
            records.len(),
            records.len()
        )),
        "{summary}"
    );
    assert!(
        summary.contains("**Incomplete: ") && summary.contains(&ran),
        "{summary}"
    );
    assert!(summary.contains(&format!("stopped by {name}")), "{summary}");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(meta["complete"], false);
    assert_eq!(meta["stopped_by"], "interrupted");
    assert!(
        meta["incomplete"].as_str().unwrap().contains(&ran),
        "{meta}"
    );
    assert!(stderr.contains("incomplete: "), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigint_during_a_sweep_saves_what_it_has_and_exits_non_zero() {
    stop_a_sweep_with(libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_during_a_sweep_is_handled_like_sigint() {
    stop_a_sweep_with(libc::SIGTERM, "SIGTERM");
}
