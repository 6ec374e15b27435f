//! `faultline import` through the CLI binary: a committed Quint counterexample
//! (`tests/itf/hdds10798.itf.json`) against its golden scenario, step by step; the
//! same trace in TLC's format; and malformed traces and mappings, each rejected
//! with a located error and exit code 2.

mod common;

use faultline::base::outcome::Outcome;
use faultline::sim::runner;
use std::path::PathBuf;

const TRACE: &str = "harness/tests/itf/hdds10798.itf.json";
const TLC_TRACE: &str = "harness/tests/itf/hdds10798.tlc.json";
const MAPPING: &str = "specs/hdds10798.map.yaml";
const GOLDEN: &str = "harness/tests/itf/hdds10798.golden.yaml";

use common::faultline;

/// A file a test writes, removed when the test is done with it (a failing
/// test's stays, to be read).
struct TempFile(PathBuf);

impl TempFile {
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl std::ops::Deref for TempFile {
    type Target = str;
    fn deref(&self) -> &str {
        self.path()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

fn temp(name: &str) -> TempFile {
    TempFile(std::env::temp_dir().join(format!("faultline-import-{}-{name}", std::process::id())))
}

fn import(trace: &str, mapping: &str) -> (Option<i32>, String, String) {
    let out = faultline(&["import", trace, "--mapping", mapping]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `steps:` lines of a scenario text.
fn steps(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| *l != "steps:")
        .skip(1)
        .collect()
}

/// A step line without its trailing `# state N` comment.
fn step_body(line: &str) -> &str {
    line.split("  # ").next().unwrap()
}

#[test]
fn the_committed_counterexample_imports_to_the_golden_scenario_step_by_step() {
    let (code, stdout, stderr) = import(TRACE, MAPPING);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("imported 5 state(s) of harness/tests/itf/hdds10798.itf.json (ITF)"),
        "{stderr}"
    );
    let golden_path = common::workspace().join(GOLDEN);
    if std::env::var_os("FAULTLINE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden_path, &stdout).unwrap();
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    let (want, got) = (steps(&golden), steps(&stdout));
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(
            g,
            w,
            "step {} differs from {GOLDEN} (rerun with FAULTLINE_UPDATE_GOLDEN=1 if the change is meant)",
            i + 1
        );
    }
    assert_eq!(got.len(), want.len(), "number of steps");
    assert_eq!(stdout, golden, "the header differs from {GOLDEN}");

    // Every step names the trace state it came from (or the prologue/epilogue),
    // and the states appear in trace order.
    let mut last_state = None;
    for line in &got {
        let comment = line.split("  # ").nth(1).expect("a comment");
        if let Some(rest) = comment.strip_prefix("state ") {
            let n: u32 = rest.split(':').next().unwrap().parse().unwrap();
            assert!(last_state <= Some(n), "{line}");
            last_state = Some(n);
        } else {
            assert!(comment == "prologue" || comment == "epilogue", "{line}");
        }
    }
    assert_eq!(last_state, Some(4));
    let actions: Vec<&str> = got
        .iter()
        .filter_map(|l| l.split("  # ").nth(1))
        .filter(|c| c.contains(": action "))
        .collect();
    assert_eq!(
        actions,
        vec![
            "state 1: action write",
            "state 1: action write",
            "state 2: action write",
            "state 2: action write",
            "state 3: action becomeLeader",
            "state 3: action becomeLeader",
            "state 4: action flush",
            "state 4: action flush",
        ]
    );
}

#[test]
fn the_golden_scenario_reproduces_the_bug_and_its_fix() {
    let scenario = faultline::lang::scenario::load(&common::workspace().join(GOLDEN))
        .unwrap_or_else(|e| panic!("{e}"));
    let buggy = runner::run(&scenario, scenario.variant("buggy").unwrap(), 1);
    assert_eq!(buggy.outcome, Outcome::Stuck, "{:?}", buggy.findings);
    assert!(buggy.passed, "{:?}", buggy.findings);
    let fixed = runner::run(&scenario, scenario.variant("fixed").unwrap(), 1);
    assert_eq!(fixed.outcome, Outcome::Converged, "{:?}", fixed.findings);
    assert!(fixed.passed, "{:?}", fixed.findings);
}

#[test]
fn a_tlc_dump_of_the_same_trace_gives_the_same_steps() {
    let (code, stdout, stderr) = import(TLC_TRACE, MAPPING);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("(TLC -dumpTrace json)"), "{stderr}");
    let golden = std::fs::read_to_string(common::workspace().join(GOLDEN)).unwrap();
    let want: Vec<&str> = steps(&golden).into_iter().map(step_body).collect();
    let got: Vec<&str> = steps(&stdout).into_iter().map(step_body).collect();
    assert_eq!(got, want);
    // TLC numbers states from 1.
    assert!(stdout.contains("# state 5: action flush"), "{stdout}");
}

#[test]
fn a_malformed_trace_is_rejected_with_its_json_path() {
    let (code, stdout, stderr) = import("harness/tests/itf/malformed.itf.json", MAPPING);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(
        stderr.trim(),
        "harness/tests/itf/malformed.itf.json:$.states[2][\"buggy::indices::ratisApplied\"][\"#bigint\"]: error: `#bigint` holds decimal digits, found \"1O\""
    );
}

#[test]
fn a_malformed_mapping_is_rejected_with_every_line_and_column() {
    let (code, stdout, stderr) = import(TRACE, "harness/tests/itf/malformed.map.yaml");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        errors,
        vec![
            "harness/tests/itf/malformed.map.yaml:7:1: error: unknown key `prolog`",
            "harness/tests/itf/malformed.map.yaml:12:36: error: in `/v/b/k{indx}`: unknown root `indx` (did you mean `index`?); roots: state, prev, picks, index, action (at character 8)",
            "harness/tests/itf/malformed.map.yaml:13:10: error: action `flush` is a list of steps, found a mapping",
            "harness/tests/itf/malformed.map.yaml:15:5: error: an observation needs exactly one of `var` and `value`",
        ]
    );
    assert!(
        stderr.contains("help: did you mean `prologue`?"),
        "{stderr}"
    );
}

/// The committed trace with one change, written to a temp file.
fn trace_with(name: &str, change: impl FnOnce(&mut serde_json::Value)) -> TempFile {
    let path = common::workspace().join(TRACE);
    let mut trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    change(&mut trace);
    let out = temp(name);
    std::fs::write(&out.0, trace.to_string()).unwrap();
    out
}

/// The 1-based line of the committed mapping that holds `needle`.
fn mapping_line(needle: &str) -> usize {
    let text = std::fs::read_to_string(common::workspace().join(MAPPING)).unwrap();
    1 + text.lines().position(|l| l.contains(needle)).expect(needle)
}

/// The committed mapping with one text replaced, written to a temp file.
fn mapping_with(name: &str, from: &str, to: &str) -> TempFile {
    let text = std::fs::read_to_string(common::workspace().join(MAPPING)).unwrap();
    assert!(text.contains(from), "{from}");
    let out = temp(name);
    std::fs::write(&out.0, text.replace(from, to)).unwrap();
    out
}

#[test]
fn an_unknown_action_names_the_state_and_the_mapping() {
    let trace = trace_with("unknown-action.itf.json", |t| {
        t["states"][3]["mbt::actionTaken"] = "becomeLeaders".into();
    });
    let (code, _, stderr) = import(&trace, MAPPING);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown-action.itf.json:$.states[3][\"mbt::actionTaken\"]: error: unknown action `becomeLeaders` (state 3): specs/hdds10798.map.yaml has no entry for it under `actions`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("help: did you mean `becomeLeader`?"),
        "{stderr}"
    );
}

#[test]
fn a_missing_variable_names_both_files() {
    let trace = trace_with("missing-variable.itf.json", |t| {
        t["states"][1]
            .as_object_mut()
            .unwrap()
            .remove("buggy::indices::buffer");
    });
    let (code, _, stderr) = import(&trace, MAPPING);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("missing-variable.itf.json:$.states[1]: error: state 1 has no value for the variable `buggy::indices::buffer`"),
        "{stderr}"
    );
    let mapping = mapping_with(
        "missing-variable.map.yaml",
        "var: lastSkipped",
        "var: lastSkip",
    );
    let (code, _, stderr) = import(TRACE, &mapping);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "missing-variable.map.yaml:{}:5: error: in `{{state.lastSkip}}`: the trace has no variable `lastSkip`",
            mapping_line("var: lastSkipped")
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("trace: harness/tests/itf/hdds10798.itf.json:$.vars"),
        "{stderr}"
    );
}

#[test]
fn an_unmappable_value_names_the_state() {
    let trace = trace_with("unmappable.itf.json", |t| {
        t["states"][2]["buggy::indices::buffer"] =
            serde_json::json!({"#unserializable": "Seq(Int)"});
    });
    let (code, _, stderr) = import(&trace, MAPPING);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hdds10798.map.yaml:{}:5: error: in `{{state.buffer | len}}`: unmappable value: the checker could not write this value (Seq(Int))",
            mapping_line("value: \"{state.buffer | len}\"")
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("trace: ")
            && stderr.contains("unmappable.itf.json:$.states[2] (state 2, action write)"),
        "{stderr}"
    );
}

#[test]
fn a_step_that_does_not_validate_is_reported_at_its_mapping_line() {
    let mapping = mapping_with(
        "bad-step.map.yaml",
        "op: put_file, path: \"/v/b/k{state",
        "op: put_files, path: \"/v/b/k{state",
    );
    let (code, stdout, stderr) = import(TRACE, &mapping);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains(&format!(
            "bad-step.map.yaml:{}:7: error: the scenario line made for state 1 (action write) does not validate: unknown op `put_files`",
            mapping_line("op: put_file, path: \"/v/b/k{state")
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("help: did you mean `put_file`?"),
        "{stderr}"
    );
}

#[test]
fn an_output_file_is_written_only_when_valid() {
    let out = temp("written.yaml");
    let _ = std::fs::remove_file(&out.0);
    let result = faultline(&["import", TRACE, "--mapping", MAPPING, "-o", out.path()]);
    assert_eq!(result.status.code(), Some(0));
    let golden = std::fs::read_to_string(common::workspace().join(GOLDEN)).unwrap();
    assert_eq!(std::fs::read_to_string(&out.0).unwrap(), golden);
    let validated = faultline(&["validate", out.path()]);
    assert_eq!(validated.status.code(), Some(0));
}

#[test]
fn nondet_picks_become_typed_step_parameters_and_comments() {
    let trace = "harness/tests/itf/hdds17062.itf.json";
    let (code, stdout, stderr) = import(trace, "specs/hdds17062.map.yaml");
    assert_eq!(code, Some(0), "{stderr}");
    for line in [
        "  - client: {on: dn1, op: mark_unhealthy, container: 1, expect: ok}  # state 1: action markUnhealthy (c = 1)",
        "  - client: {on: dn1, op: delete, container: 2, expect: ok}  # state 4: action deleteContainer (c = 2)",
        "  - failpoint: {node: dn1, point: heartbeat.recon.rpc, action: {error: drop_response}, count: 1}  # state 6: action rpcFail (lost = response)",
        // A map through each("C{key}={value}"), as the model publishes container sets.
        "  - await: {observed: {node: recon, key: replicas.dn1, value: \"C1=UNHEALTHY,C2=UNHEALTHY\"}, within: \"5s\", variants: [buggy]}  # state 8: refines {state.recon | each(\"C{key}={value}\")}",
    ] {
        assert!(stdout.lines().any(|l| l == line), "missing {line}\n{stdout}");
    }
    let all = stdout.matches("refines").count();
    assert_eq!(all, 9 * 8, "every observation after every state");

    // check: changed keeps the first state's checks and then only changes.
    let text =
        std::fs::read_to_string(common::workspace().join("specs/hdds17062.map.yaml")).unwrap();
    let changed = temp("changed.map.yaml");
    std::fs::write(
        &changed.0,
        text.replace(
            "refinement: {variants: [buggy], within: 5s}",
            "refinement: {variants: [buggy], within: 5s, check: changed}",
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = import(trace, changed.path());
    assert_eq!(code, Some(0), "{stderr}");
    let fewer = stdout.matches("refines").count();
    assert!(fewer > 8 && fewer < all, "{fewer} of {all}");
    assert_eq!(stdout.matches("# state 0: refines").count(), 8);
}
