//! What clients saw, on real runs: the history canaries fail through the
//! consistency checker alone and pass fixed; a run's history exports as JSON lines
//! and as the EDN elle-cli and Knossos read.

mod common;

use faultline::base::outcome::Outcome;
use faultline::judge::check::Verdict;
use faultline::judge::history::edn::{parse, Edn};
use faultline::judge::history::{from_jsonl, CompletionKind};
use faultline::sim::runner;
use std::collections::BTreeMap;

fn bundled(name: &str) -> faultline::lang::scenario::Scenario {
    common::bundled()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no bundled scenario {name}"))
}

/// Buggy: `violated`, every finding that decides the outcome from `consistency`
/// (divergence, election safety and every invariant pass), and the checker's
/// witness names ops. Fixed: converged, the history judged and passed.
fn canary(name: &str, seeds: std::ops::RangeInclusive<u64>) {
    let scenario = bundled(name);
    for seed in seeds {
        let buggy = runner::run(&scenario, scenario.variant("buggy").unwrap(), seed);
        assert_eq!(
            buggy.outcome,
            Outcome::Violated,
            "{name} seed {seed}: {:?}",
            buggy.findings
        );
        assert!(buggy.passed, "{name} seed {seed}: {:?}", buggy.findings);
        for f in buggy.findings.iter().filter(|f| f.outcome.is_some()) {
            assert_eq!(
                f.checker, "consistency",
                "{name} seed {seed}: another checker decided the outcome: {f:?}"
            );
        }
        let report = buggy.clients.consistency.as_ref().expect("judged");
        assert_eq!(report.verdict, Verdict::Fail, "{name} seed {seed}");
        let witness = report.witness.as_ref().expect("a violation has a witness");
        assert!(
            (2..=10).contains(&witness.ops.len()),
            "{name} seed {seed}: witness of {} ops",
            witness.ops.len()
        );

        let fixed = runner::run(&scenario, scenario.variant("fixed").unwrap(), seed);
        assert_eq!(
            fixed.outcome,
            Outcome::Converged,
            "{name} seed {seed}: {:?}",
            fixed.findings
        );
        assert!(fixed.passed, "{name} seed {seed}");
        let report = fixed.clients.consistency.as_ref().expect("judged");
        assert_eq!(report.verdict, Verdict::Pass, "{name} seed {seed}");
        assert!(report.ops > 0, "{name} seed {seed}: nothing was judged");
    }
}

#[test]
fn stale_reads_of_a_deposed_leader_fail_through_the_history_alone() {
    canary("raftkv-canary-stale-read", 1..=10);
}

#[test]
fn an_acknowledgement_before_a_quorum_fails_through_the_history_alone() {
    canary("raftkv-canary-lost-ack", 1..=10);
}

fn kw(e: &Edn, name: &str) -> Option<String> {
    match e.get(name) {
        Some(Edn::Keyword(k)) => Some(k.clone()),
        _ => None,
    }
}

fn int(e: &Edn, name: &str) -> Option<i64> {
    match e.get(name) {
        Some(Edn::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Checks the fields and keywords elle-cli and Knossos read, independently of the
/// exporter's own validator: a top-level sequence of maps, `:type` one of
/// `:invoke :ok :fail :info`, `:f` a keyword of the shape, `:process` an integer,
/// `:time` ascending ns, `:index` dense from 0, `:value` present; every process
/// alternates invoke and completion with the same `:f`. Returns the events.
fn assert_jepsen_shape(text: &str, fs: &[&str]) -> Vec<Edn> {
    let events = parse(text).expect("the export parses as EDN");
    assert!(!events.is_empty());
    let events = match events.as_slice() {
        [Edn::Vector(v)] | [Edn::List(v)] => v.clone(),
        _ => events,
    };
    let mut open: BTreeMap<i64, String> = BTreeMap::new();
    let mut last_time = 0;
    for (i, e) in events.iter().enumerate() {
        assert!(matches!(e, Edn::Map(_)), "event {i} is not a map: {e:?}");
        let ty = kw(e, "type").unwrap_or_else(|| panic!("event {i}: no keyword :type"));
        let f = kw(e, "f").unwrap_or_else(|| panic!("event {i}: no keyword :f"));
        assert!(fs.contains(&f.as_str()), "event {i}: :f :{f}");
        let process = int(e, "process").unwrap_or_else(|| panic!("event {i}: no :process"));
        assert_eq!(int(e, "index"), Some(i as i64), "event {i}: :index");
        let time = int(e, "time").unwrap_or_else(|| panic!("event {i}: no :time"));
        assert!(time >= last_time, "event {i}: :time goes back");
        last_time = time;
        assert!(e.get("value").is_some(), "event {i}: no :value");
        match ty.as_str() {
            "invoke" => {
                assert!(
                    open.insert(process, f).is_none(),
                    "event {i}: process {process} invokes twice"
                );
            }
            "ok" | "fail" | "info" => {
                let invoked = open.remove(&process);
                assert_eq!(invoked.as_deref(), Some(f.as_str()), "event {i}");
            }
            other => panic!("event {i}: :type :{other}"),
        }
    }
    events
}

#[test]
fn a_real_runs_history_exports_as_jsonl_and_as_the_edn_jepsen_reads() {
    let dir = common::temp_dir("client_histories", "export");
    let reports = dir.join("reports");
    let out = common::faultline(&[
        "run",
        "scenarios/raftkv/canary-stale-read.yaml",
        "--variant",
        "buggy",
        "--seed",
        "3",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut found = Vec::new();
    let mut stack = vec![reports.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "report.json") {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    let report = found[0].to_str().unwrap();
    let result: runner::RunResult =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let recorded = result.clients.history.history.clone();
    assert!(recorded.ops().len() > 20, "{} ops", recorded.ops().len());
    let kinds: std::collections::BTreeSet<_> = recorded
        .ops()
        .iter()
        .filter_map(|o| o.completion.as_ref().map(|c| c.kind))
        .collect();
    assert!(kinds.contains(&CompletionKind::Ok), "{kinds:?}");

    // JSON lines: reads back as the very history of the report.
    let jsonl = dir.join("history.jsonl");
    let out = common::faultline(&["history", report, "-o", jsonl.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back = from_jsonl(&std::fs::read_to_string(&jsonl).unwrap()).unwrap();
    assert_eq!(back, recorded);

    // Knossos's register, one key: :read / :write with plain values.
    let edn = dir.join("history.edn");
    let out = common::faultline(&[
        "history",
        report,
        "--edn",
        "--shape",
        "register",
        "--key",
        "k",
        "-o",
        edn.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&edn).unwrap();
    let events = assert_jepsen_shape(&text, &["read", "write", "cas"]);
    let invokes = events
        .iter()
        .filter(|e| kw(e, "type").as_deref() == Some("invoke"))
        .count();
    assert_eq!(invokes, recorded.ops().len(), "every op is on key k");
    // The values clients saw are there as plain strings: the put of `new`, and
    // the stale `old` the deposed leader answered.
    let read_ok: Vec<&Edn> = events
        .iter()
        .filter(|e| kw(e, "type").as_deref() == Some("ok") && kw(e, "f").as_deref() == Some("read"))
        .collect();
    assert!(read_ok
        .iter()
        .any(|e| e.get("value") == Some(&Edn::Str("old".into()))));
    assert!(events.iter().any(|e| kw(e, "f").as_deref() == Some("write")
        && e.get("value") == Some(&Edn::Str("new".into()))));

    // The generic shape: every op as it is, the arguments as a map of keywords.
    let out = common::faultline(&["history", report, "--edn"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = assert_jepsen_shape(&String::from_utf8(out.stdout).unwrap(), &["get", "put"]);
    let first_get = events
        .iter()
        .find(|e| {
            kw(e, "f").as_deref() == Some("get") && kw(e, "type").as_deref() == Some("invoke")
        })
        .unwrap();
    assert_eq!(
        first_get.get("value").and_then(|v| v.get("key")),
        Some(&Edn::Str("k".into()))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
