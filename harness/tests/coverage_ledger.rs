//! The coverage ledger through the CLI: a chaos sweep that never reached a
//! declared probe fails (exit 5) and says which; shards are not judged alone but
//! their merge is; and a scenario whose seeds change nothing is counted as one
//! trail and warned about.

mod common;

use common::{faultline, temp_dir};
use serde_json::Value;
use std::path::Path;

/// raftkv chaos with nothing to do: no fault can time a transfer out or make a
/// leader step down, so those (non-rare) probes go unreached.
const QUIET_CHAOS: &str = r#"
name: quiet-chaos
model: raftkv
nodes: [n1, n2, n3]
heal: {within: 10s, settle: 500ms}
expect: converged
steps:
  - await: {leader: any, within: 5s}
chaos:
  window: 1s
  spacing: {min: 200ms, max: 400ms}
  duration: {min: 100ms, max: 200ms}
  faults:
    latency: {weight: 1, delay: {min: 1ms, max: 2ms}}
"#;

fn meta(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap()
}

fn unreached(meta: &Value) -> Vec<String> {
    meta["coverage"]["verdict"]["unreached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["probe"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_unreached_probe_fails_a_sweep_and_the_merge_of_its_shards_but_not_a_shard() {
    let root = temp_dir("coverage_ledger", "unreached");
    let file = root.join("quiet-chaos.yaml");
    std::fs::write(&file, QUIET_CHAOS).unwrap();
    let file = file.to_str().unwrap();
    let whole = root.join("whole");
    let out = faultline(&[
        "sweep",
        file,
        "--seeds",
        "1..4",
        "--out",
        whole.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(faultline::cli::exit::UNREACHED as i32),
        "{stderr}"
    );
    let m = meta(&whole);
    assert_eq!(m["coverage"]["judged"], true);
    let missed = unreached(&m);
    assert!(
        missed.contains(&"raft_transfer_timed_out".to_string()),
        "{missed:?}"
    );
    // Rare probes are never listed: raftkv declares none, so every declared
    // probe it missed is here, and the ones it reached are not.
    let reached = &m["coverage"]["ledger"]["models"]["raftkv"]["probes"];
    for probe in &missed {
        assert!(
            reached.get(probe).is_none(),
            "{probe} both reached and unreached"
        );
    }
    let summary = std::fs::read_to_string(whole.join("summary.md")).unwrap();
    assert!(summary.contains("raft_transfer_timed_out"), "{summary}");

    // Two shards: neither judges alone (a probe may be hit on the other).
    let mut shards = Vec::new();
    for k in 1..=2 {
        let dir = root.join(format!("shard{k}"));
        let out = faultline(&[
            "sweep",
            file,
            "--seeds",
            "1..4",
            "--shard",
            &format!("{k}/2"),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(meta(&dir)["coverage"]["judged"], false);
        shards.push(dir);
    }
    let merged = root.join("merged");
    let out = faultline(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(faultline::cli::exit::UNREACHED as i32),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = meta(&merged);
    assert_eq!(m["coverage"]["judged"], true);
    assert_eq!(
        unreached(&m),
        missed,
        "the merge judges the shards together as the whole sweep did"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Sweep the `fixed` variant of `file` over seeds 1..12 into `dir`; it must pass.
fn sweep_fixed_12(file: &str, dir: &Path) -> Value {
    let out = faultline(&[
        "sweep",
        file,
        "--variant",
        "fixed",
        "--seeds",
        "1..12",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    meta(dir)
}

#[test]
fn a_scenario_whose_seeds_change_nothing_counts_one_trail_and_is_warned_about() {
    let root = temp_dir("coverage_ledger", "distinct");
    // The ZooKeeper report's trail without the shuffled host order: the model
    // draws nothing of its own and 1-3 ms of latency falls inside one 5 ms tick.
    let original = std::fs::read_to_string(
        common::workspace().join("scenarios/zookeeper/zookeeper-4541-lost-txn.yaml"),
    )
    .unwrap();
    assert!(original.contains("random_order: true"));
    let fixed_order = original.replace("random_order: true", "random_order: false");
    let file = root.join("same-trail.yaml");
    std::fs::write(&file, &fixed_order).unwrap();
    let m = sweep_fixed_12(file.to_str().unwrap(), &root.join("sweep"));
    let dir = root.join("sweep");
    let variants = m["coverage"]["ledger"]["variants"].as_object().unwrap();
    let (key, v) = variants.iter().next().unwrap();
    assert_eq!(v["runs"], 12, "{key}");
    assert_eq!(v["distinct_trails"], 1, "{key}");
    let few = &m["coverage"]["verdict"]["few_trails"];
    assert_eq!(few[0][1], 12);
    assert_eq!(few[0][2], 1);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("gave only 1 distinct trail(s)"),
        "{summary}"
    );

    // The bundled scenario (host order shuffled with the seed) varies.
    let m = sweep_fixed_12(
        "scenarios/zookeeper/zookeeper-4541-lost-txn.yaml",
        &root.join("bundled"),
    );
    let (_, v) = m["coverage"]["ledger"]["variants"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert!(v["distinct_trails"].as_u64().unwrap() > 1, "{v}");
    assert!(m["coverage"]["verdict"]["few_trails"]
        .as_array()
        .unwrap()
        .is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

/// HDDS-10798's trail (om1 leads but is never ready) with 30 s of writes
/// instead of 60 and the given readiness bound.
fn leader_not_ready(bound_ms: u64, heal_extra: &str) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/ozone/hdds-10798-leader-not-ready.yaml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replace("count: 60\n", "count: 30\n").replace(
        "leader_ready_bound_ms: 60000",
        &format!("leader_ready_bound_ms: {bound_ms}"),
    );
    assert!(text.contains("heal: {within: 10s, settle: 1s}"));
    text.replace(
        "heal: {within: 10s, settle: 1s}",
        &format!("heal: {{within: 10s, settle: 1s{heal_extra}}}"),
    )
}

fn run_buggy(name: &str, text: &str) -> faultline::sim::runner::RunResult {
    let scenario = faultline::lang::scenario::load_str(name, text).expect("valid");
    let variant = scenario.variant("buggy").unwrap();
    faultline::sim::runner::run(&scenario, variant, 1)
}

#[test]
fn a_liveness_bound_beyond_the_run_is_not_judged_and_fails_a_sweep() {
    // A 60 s bound in a run that ends about 40 s after om1 took the lead:
    // neither a pass nor a failure.
    let text = leader_not_ready(60_000, "");
    let result = run_buggy("not-ready-60s.yaml", &text);
    let checker = "invariant:leader_ready_within_bound";
    assert!(
        !result.findings.iter().any(|f| f.checker == checker),
        "{:?}",
        result.findings
    );
    let unjudged: Vec<_> = result
        .unjudged
        .iter()
        .filter(|u| u.checker == checker)
        .collect();
    assert_eq!(unjudged.len(), 1, "{:?}", result.unjudged);
    assert!(unjudged[0].why.contains("60000"), "{}", unjudged[0].why);
    assert!(!unjudged[0].allowed);
    assert!(result
        .coverage
        .unjudged
        .contains_key("leader_ready_within_bound"));

    // A sweep of it says so and exits 5 even where its runs met their
    // expectation; `heal: {unjudged: [...]}` accepts it.
    let root = temp_dir("coverage_ledger", "unjudged");
    for (extra, code) in [("", 5), (", unjudged: [leader_ready_within_bound]", 0)] {
        // The buggy variant's trail expectations are the 60 s run's; this
        // one expects only that it converged.
        let text = leader_not_ready(60_000, extra);
        let (head, rest) = text.split_once("    bugs: {HDDS-10798: buggy}\n").unwrap();
        let (_, tail) = rest.split_once("  fixed:\n").unwrap();
        let text = format!(
            "{head}    bugs: {{HDDS-10798: buggy}}\n    expect: converged\n  fixed:\n{tail}"
        );
        let file = root.join(format!("not-ready{}.yaml", code));
        std::fs::write(&file, &text).unwrap();
        let out_dir = root.join(format!("sweep{code}"));
        let out = faultline(&[
            "sweep",
            file.to_str().unwrap(),
            "--variant",
            "buggy",
            "--seeds",
            "1..1",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        let not_judged = &meta(&out_dir)["coverage"]["verdict"]["not_judged"];
        if code == 5 {
            assert_eq!(
                not_judged[0]["invariant"], "leader_ready_within_bound",
                "{not_judged}"
            );
            assert!(stderr.contains("could not be judged"), "{stderr}");
            let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
            assert!(summary.contains("not judged by some runs"), "{summary}");
        } else {
            assert!(not_judged.is_null() || not_judged.as_array().unwrap().is_empty());
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_liveness_bound_the_run_reaches_is_judged_stuck() {
    let result = run_buggy("not-ready-5s.yaml", &leader_not_ready(5_000, ""));
    assert_eq!(result.outcome, faultline::base::outcome::Outcome::Stuck);
    assert!(result
        .findings
        .iter()
        .any(|f| f.checker == "invariant:leader_ready_within_bound"));
    assert!(result.unjudged.is_empty(), "{:?}", result.unjudged);
}

#[test]
fn an_unknown_invariant_in_heal_unjudged_is_an_error_with_a_suggestion() {
    let text = leader_not_ready(60_000, ", unjudged: [leader_ready_within_bnd]");
    let errors = faultline::lang::scenario::load_str("bad.yaml", &text)
        .err()
        .expect("an unknown name is refused")
        .to_string();
    assert!(
        errors.contains("unknown liveness invariant `leader_ready_within_bnd`"),
        "{errors}"
    );
    assert!(
        errors.contains("did you mean `leader_ready_within_bound`"),
        "{errors}"
    );
}
