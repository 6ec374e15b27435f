//! The files CI tools read, read by readers we did not write: `junit.xml` through
//! Python's `xml.etree` (expat: it rejects any document that is not well-formed XML
//! 1.0), and `--json` lines, `results.jsonl`, `sweep.json` and `report.json`
//! through Python's `jsonschema` against the schemas in `docs/schema/`.
//!
//! Needs `python3` with the `jsonschema` package (on this project's machines; the
//! test command `scripts/test` installs it when missing). Fails, never skips,
//! without them; `FAULTLINE_PYTHON` names another interpreter.

mod common;

use common::{faultline, python, validate};
use faultline::base::outcome::Outcome;
use faultline::judge::check::{Finding, Verdict};
use faultline::report::{junit_xml, RunRecord, RECORD_SCHEMA_VERSION};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("ci-formats", name)
}

/// Parse a junit.xml with `xml.etree` and describe it as JSON.
const READ_JUNIT: &str = r#"
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
def case(c):
    status = None
    for tag in ("failure", "error", "skipped"):
        el = c.find(tag)
        if el is not None:
            status = {"tag": tag, "attrs": dict(el.attrib), "text": el.text or ""}
    props = {p.get("name"): p.get("value") for p in c.iter("property")}
    out = c.find("system-out")
    return {"attrs": dict(c.attrib), "status": status, "properties": props,
            "system_out": "" if out is None else (out.text or "")}
print(json.dumps({
    "tag": root.tag,
    "attrs": dict(root.attrib),
    "suites": [{"attrs": dict(s.attrib), "cases": [case(c) for c in s.findall("testcase")]}
               for s in root.findall("testsuite")],
}))
"#;

fn read_junit(path: &Path) -> Value {
    let out = python(READ_JUNIT, &[path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "xml.etree cannot read {}: {}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn attr<'a>(v: &'a Value, name: &str) -> &'a str {
    v["attrs"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no attribute `{name}` in {v}"))
}

/// The attributes the usual JUnit schema (Jenkins, GitLab, mikepenz) asks of a suite.
fn assert_suite_attributes(suite: &Value) {
    for name in [
        "name",
        "tests",
        "failures",
        "errors",
        "skipped",
        "time",
        "timestamp",
    ] {
        attr(suite, name);
    }
    let timestamp = attr(suite, "timestamp");
    assert!(
        timestamp.len() >= 19 && timestamp.as_bytes()[10] == b'T',
        "ISO 8601 timestamp: {timestamp}"
    );
}

const PASS: &str = "name: ci-pass\nmodel: raftkv\nnodes: [n1, n2, n3]\nexpect: converged\nsteps:\n  - await: {leader: any, within: 5s}\n  - client: {op: put, key: k, value: v, expect: ok}\n";
const FAIL: &str = "name: ci-fail\nmodel: raftkv\nnodes: [n1, n2, n3]\nexpect: diverged\nsteps:\n  - await: {leader: any, within: 5s}\n  - partition: {isolate: leader}\n  - sleep: 1s\n";

#[test]
fn junit_xml_of_a_real_run_reads_back_with_its_counts_properties_and_trail_excerpt() {
    let dir = temp_dir("junit");
    std::fs::write(dir.join("a-pass.yaml"), PASS).unwrap();
    std::fs::write(dir.join("b-fail.yaml"), FAIL).unwrap();
    let reports = dir.join("reports");
    let out = faultline(&[
        "run",
        dir.to_str().unwrap(),
        "--seed",
        "3",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let junit = read_junit(&reports.join("junit.xml"));
    assert_eq!(junit["tag"], "testsuites");
    assert_eq!(attr(&junit, "name"), "faultline");
    assert_eq!(
        (
            attr(&junit, "tests"),
            attr(&junit, "failures"),
            attr(&junit, "errors"),
            attr(&junit, "skipped")
        ),
        ("2", "1", "0", "0")
    );
    let suites = junit["suites"].as_array().unwrap();
    assert_eq!(suites.len(), 2, "one suite per scenario");
    for suite in suites {
        assert_suite_attributes(suite);
    }
    // Suites in name order: ci-fail, then ci-pass.
    let pass = &suites[1]["cases"][0];
    assert_eq!(attr(pass, "classname"), "ci-pass");
    assert_eq!(attr(pass, "name"), "default seed=3");
    assert!(attr(pass, "file").ends_with("a-pass.yaml"));
    assert!(pass["status"].is_null(), "a pass has no failure: {pass}");
    let fail = &suites[0]["cases"][0];
    assert_eq!(fail["status"]["tag"], "failure");
    assert_eq!(
        fail["status"]["attrs"]["message"],
        "outcome converged (expected diverged)"
    );
    let props = &fail["properties"];
    assert_eq!(props["seed"], "3");
    assert_eq!(props["outcome"], "converged");
    assert_eq!(props["expected"], "diverged");
    assert!(props["replay"]
        .as_str()
        .unwrap()
        .contains("--variant default --seed 3"));
    assert_eq!(props["trail_digest"].as_str().unwrap().len(), 64);
    assert!(props["report"]
        .as_str()
        .unwrap()
        .ends_with("ci-fail/default/seed-3/report.json"));
    let excerpt = fail["system_out"].as_str().unwrap();
    assert!(excerpt.contains("trail excerpt"), "{excerpt}");
    assert!(
        excerpt.contains("partition"),
        "the fault is in the excerpt: {excerpt}"
    );
    assert!(excerpt.contains("last "), "{excerpt}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn record(scenario: &str, variant: &str, outcome: Outcome, passed: bool) -> RunRecord {
    RunRecord {
        schema_version: RECORD_SCHEMA_VERSION,
        scenario: scenario.into(),
        file: format!("scenarios/{scenario}.yaml"),
        variant: variant.into(),
        seed: 11,
        outcome,
        expected: vec![Outcome::Converged],
        passed,
        known_defects: Vec::new(),
        trail_digest: "0f".repeat(32),
        sim_elapsed_ms: 2_000,
        wall_ms: 40,
        started_unix_ms: Some(1_800_000_000_000),
        findings: if passed {
            vec![]
        } else {
            vec![Finding {
                checker: "divergence".into(),
                verdict: Verdict::Fail,
                outcome: Some(outcome),
                message: format!("found \u{FFFE} and \u{1b}[31m in {scenario}"),
                detail: Value::Null,
            }]
        },
        replay: format!("faultline run scenarios/{scenario}.yaml --variant {variant} --seed 11"),
        report: None,
        ended_ms: None,
        nondeterminism: None,
        trail_excerpt: vec![],
        coverage: None,
        guided: None,
    }
}

#[test]
fn junit_xml_stays_well_formed_for_any_name_and_reports_crashes_as_errors() {
    let dir = temp_dir("junit-hostile");
    let mut nondeterministic = record("steady", "v", Outcome::Converged, false);
    nondeterministic.nondeterminism = Some("trail event 3 differs".into());
    let records = vec![
        // A passing run whose names carry every kind of character XML 1.0 forbids.
        record(
            "name\u{FFFE}with\u{FFFF}nonchars",
            "v\u{0}\u{1b}[2J\u{7}",
            Outcome::Converged,
            true,
        ),
        record("markup <&\"'>]]>", "<b>", Outcome::Converged, true),
        record("diverges", "buggy", Outcome::Diverged, false),
        record("panics", "v", Outcome::Crashed, false),
        record("undecided", "v", Outcome::Unknown, false),
        nondeterministic,
    ];
    let path = dir.join("junit.xml");
    std::fs::write(&path, junit_xml(&records)).unwrap();
    let junit = read_junit(&path);
    assert_eq!(
        (
            attr(&junit, "tests"),
            attr(&junit, "failures"),
            attr(&junit, "errors")
        ),
        ("6", "1", "3"),
        "crashed, unknown and nondeterministic runs are errors"
    );
    let cases: Vec<&Value> = junit["suites"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["cases"].as_array().unwrap())
        .collect();
    let by_class = |name: &str| {
        *cases
            .iter()
            .find(|c| attr(c, "classname") == name)
            .unwrap_or_else(|| panic!("no case {name}: {cases:?}"))
    };
    let hostile = by_class("name\\u{fffe}with\\u{ffff}nonchars");
    assert_eq!(attr(hostile, "name"), "v\\u{0}\\u{1b}[2J\\u{7} seed=11");
    assert_eq!(
        attr(by_class("markup <&\"'>]]>"), "name"),
        "<b> seed=11",
        "markup characters survive as text"
    );
    assert_eq!(by_class("panics")["status"]["tag"], "error");
    assert_eq!(by_class("panics")["status"]["attrs"]["type"], "crashed");
    assert_eq!(by_class("undecided")["status"]["tag"], "error");
    assert_eq!(by_class("diverges")["status"]["tag"], "failure");
    let text = by_class("diverges")["status"]["text"].as_str().unwrap();
    assert!(
        text.contains("found \\u{fffe} and \\u{1b}[31m in diverges"),
        "{text}"
    );
    assert_eq!(
        by_class("steady")["status"]["attrs"]["type"],
        "nondeterministic"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn find_reports(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            find_reports(&path, out);
        } else if path.file_name().is_some_and(|n| n == "report.json") {
            out.push(path);
        }
    }
}

#[test]
fn json_lines_results_files_sweep_metadata_and_reports_match_their_published_schemas() {
    let dir = temp_dir("schema");
    std::fs::write(dir.join("fail.yaml"), FAIL).unwrap();
    // `run --json`: every bundled scenario (bug reproductions, chaos, every model's
    // observations) and an unmet expectation, with their reports.
    let reports = dir.join("reports");
    let out = faultline(&[
        "run",
        "scenarios/",
        dir.join("fail.yaml").to_str().unwrap(),
        "--json",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let lines_path = dir.join("lines.jsonl");
    std::fs::write(&lines_path, &out.stdout).unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let bundled = common::bundled()
        .iter()
        .map(|s| s.variants.len())
        .sum::<usize>();
    // Scenarios of target builds run too when their builds are there (they
    // are not in `bundled`, which holds the built-in models' only).
    let elsewhere = lines
        .iter()
        .filter(|l| {
            l["file"]
                .as_str()
                .map(|f| Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(f))
                .is_some_and(|f| faultline::lang::scenario::runs_elsewhere(&f))
        })
        .count();
    assert_eq!(lines.len() - elsewhere, bundled + 1);
    assert!(lines
        .iter()
        .all(|l| l["schema_version"] == RECORD_SCHEMA_VERSION));
    // A sweep's results file: records with end times and report paths.
    let sweep = dir.join("sweep");
    let out = faultline(&[
        "sweep",
        dir.join("fail.yaml").to_str().unwrap(),
        "--seeds",
        "1..2",
        "--jobs",
        "1",
        "--out",
        sweep.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A merge of that sweep: its results file and its sweep.json.
    let merged = dir.join("merged");
    let out = faultline(&[
        "merge",
        sweep.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = sweep.join("results.jsonl");
    let merged_results = merged.join("results.jsonl");
    let (ok, log) = validate(
        "record.schema.json",
        &[&lines_path, &results, &merged_results],
    );
    assert!(ok, "{log}");
    assert!(
        log.contains(&format!("checked {}", lines.len() + 4)),
        "{log}"
    );
    let (ok, log) = validate(
        "sweep.schema.json",
        &[&sweep.join("sweep.json"), &merged.join("sweep.json")],
    );
    assert!(ok, "{log}");
    assert!(log.contains("checked 2"), "{log}");
    let merged_meta: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(merged_meta["stopped_by"], "merged");
    assert_eq!(merged_meta["complete"], true);

    let mut report_files = Vec::new();
    find_reports(&reports, &mut report_files);
    find_reports(&sweep, &mut report_files);
    assert_eq!(
        report_files.len(),
        lines.len() + 2,
        "every run of `run`, the 2 failing sweep runs"
    );
    let files: Vec<&Path> = report_files.iter().map(PathBuf::as_path).collect();
    let (ok, log) = validate("report.schema.json", &files);
    assert!(ok, "{log}");
    // The trail's typed payloads are checked too: an unknown one is rejected.
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_files[0]).unwrap()).unwrap();
    report["trail"]["events"][0]["data"] = serde_json::json!({"surprise": {}});
    let bad_report = dir.join("bad-report.json");
    std::fs::write(&bad_report, report.to_string()).unwrap();
    let (ok, log) = validate("report.schema.json", &[&bad_report]);
    assert!(!ok, "the schema accepted an unknown trail payload: {log}");
    assert!(
        log.contains("bad-report.json[0] at $.trail.events[0].data"),
        "{log}"
    );

    // The check can fail: a record without its version, or with an unknown
    // outcome, or with a field the schema does not know, is rejected.
    let mut bad = lines[0].clone();
    bad.as_object_mut().unwrap().remove("schema_version");
    let mut unknown = lines[0].clone();
    unknown["outcome"] = "exploded".into();
    let mut extra = lines[0].clone();
    extra["surprise"] = 1.into();
    let bad_path = dir.join("bad.jsonl");
    std::fs::write(&bad_path, format!("{bad}\n{unknown}\n{extra}\n")).unwrap();
    let (ok, log) = validate("record.schema.json", &[&bad_path]);
    assert!(!ok, "the schema accepted broken records: {log}");
    assert_eq!(
        log.lines().filter(|l| l.contains("bad.jsonl[")).count(),
        3,
        "{log}"
    );
    // And sweep.json's schema: an unknown stop reason, a missing count.
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(sweep.join("sweep.json")).unwrap()).unwrap();
    let mut unknown = meta.clone();
    unknown["stopped_by"] = "bored".into();
    let mut missing = meta;
    missing.as_object_mut().unwrap().remove("planned");
    let bad_meta = dir.join("bad-meta.jsonl");
    std::fs::write(&bad_meta, format!("{unknown}\n{missing}\n")).unwrap();
    let (ok, log) = validate("sweep.schema.json", &[&bad_meta]);
    assert!(!ok, "the schema accepted broken sweep metadata: {log}");
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("bad-meta.jsonl["))
            .count(),
        2,
        "{log}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A guided sweep writes what a plain one does not: each record's `guided`
/// (its run and origin) and, for a derived run, a report whose swarm draw names
/// the parent's configuration seed (`swarm.config_seed`). Both match the
/// published schemas. The report schema once refused `config_seed`, and no
/// test produced a report with it.
#[test]
fn a_guided_sweep_s_records_and_derived_runs_reports_match_their_published_schemas() {
    let dir = temp_dir("guided-schema");
    let out = faultline(&[
        "sweep",
        "scenarios/raftkv/raftkv-auto.yaml",
        "--guided",
        "--seeds",
        "1..12",
        "--jobs",
        "1",
        "--bug",
        "CANARY-QUORUM=buggy",
        "-q",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = dir.join("results.jsonl");
    let records: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 12);
    let derived: Vec<&Value> = records
        .iter()
        .filter(|r| r["guided"]["origin"].as_str().is_some_and(|o| o != "fresh"))
        .collect();
    assert!(!derived.is_empty(), "no derived run among {records:?}");
    // Every run of this key fails, so every one has a report. The derived
    // runs' are what `run` cannot write (a fresh run's report is the one the
    // test above checks), and validating a 40 s trail takes seconds.
    let reports: Vec<PathBuf> = derived
        .iter()
        .map(|r| dir.join(r["report"].as_str().expect("a failing run's report")))
        .collect();
    let with_config_seed = reports
        .iter()
        .filter(|path| {
            let report: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            report["swarm"]["config_seed"].as_u64().is_some()
        })
        .count();
    assert_eq!(with_config_seed, derived.len());
    let (ok, log) = validate("record.schema.json", &[&results]);
    assert!(ok, "{log}");
    assert!(log.contains("checked 12"), "{log}");
    let files: Vec<&Path> = reports.iter().map(PathBuf::as_path).collect();
    let (ok, log) = validate("report.schema.json", &files);
    assert!(ok, "{log}");
    assert!(log.contains(&format!("checked {}", derived.len())), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}
