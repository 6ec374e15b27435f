//! The scenario file's JSON Schema, `docs/schema/scenario.schema.json`: the
//! committed file is what `faultline schema scenario` generates from the
//! reader's own types (so a change to them without regenerating fails here),
//! every bundled scenario validates against it, and every case of the bad-input
//! catalogue (`tests/bad_input/`) is classified below: a shape error fails the
//! schema; an error only the model or the file's meaning can show passes it
//! (the schema knows no model); a file that is no YAML document JSON can hold
//! fails to parse.
//!
//! Read through Python's `jsonschema` (draft 2020-12), as editors read it.
//! Needs `python3` with the `jsonschema` package (`scripts/test` installs it);
//! fails, never skips, without them; `FAULTLINE_PYTHON` names another interpreter.

mod common;

use common::{faultline, validate, workspace};
use faultline::lang::scenario::schema::{scenario_text, SCENARIO_SCHEMA_PATH};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The bad-input cases whose error is one of shape (unknown keys, wrong types,
/// missing keys, unknown step kinds, fixed choices, counts and ranges the
/// language fixes): each must fail the schema.
const SHAPE: &[&str] = &[
    "01-unknown-top-level-key",    // additionalProperties: false at the top
    "03-unknown-step-kind",        // a step's one key is a step kind
    "13-bad-bug-mode",             // bug modes: buggy | fixed
    "14-negative-duration",        // the duration pattern
    "15-duration-without-unit",    // the duration pattern
    "16-unparseable-duration",     // the duration pattern
    "17-no-expectations",          // `expect` or `variants` (without chaos auto)
    "19-no-steps",                 // `steps` (without chaos auto)
    "20-empty-steps",              // steps: minItems 1
    "22-reserved-node-name",       // node names: not a reserved word
    "23-step-unknown-field",       // additionalProperties: false in a step
    "24-step-not-a-mapping",       // a step is a mapping
    "25-step-two-kinds",           // with one key
    "26-partition-two-forms",      // one partition form
    "27-probability-out-of-range", // probability in (0, 1]
    "28-await-two-conditions",     // exactly one await condition
    "30-bad-tick",                 // the duration pattern's units
    "36-both-expect-and-variants", // not both
    "38-unknown-trail-kind",       // event kinds
    "39-too-many-nodes",           // nodes: maxItems 32
    "42-release-needs-form",       // release: between, or node + failpoint
    "43-repeat-count-zero",        // count: 1..=100000
    "44-not-a-mapping",            // a scenario is a mapping
    "49-fault-weight-negative",    // weights: 0..=u32::MAX
    "61-sequence-of-one",          // sequence: minItems 2
    "64-await-event-unknown-kind", // event kinds
    "65-since-without-event",      // since needs event
    "66-since-unknown",            // since: step | run
    "69-absent-with-value",        // absent alone
    "71-observed-without-test",    // an observed match has a test
    "72-absent-bad-value",         // absent: true | removed | never
    "85-nodes-without-applied",    // nodes needs applied
    "91-chaos-point-count-zero",   // a point's count: minimum 1
    "95-except-not-a-mapping",     // except: {key, checker} or a list
    "18-unknown-outcome",          // outcomes
    "96-unknown-model-says-the-rest-waits", // its `expect: convergd` (validate waits for the model)
    "100-chaos-config-seed-negative", // config_seed: a u64
];

/// Cases that need the model, the scenario's own names, or what a value means
/// (beyond its shape): the schema accepts each, and `faultline validate` does not.
const MEANING: &[&str] = &[
    "02-unknown-model",                       // the model registry
    "04-unknown-node",                        // the scenario's nodes
    "05-node-typo-suggests",                  // the scenario's nodes
    "06-unknown-op",                          // the model's ops
    "07-op-unknown-argument",                 // the model's op arguments
    "08-op-missing-argument",                 // the model's op arguments
    "09-unknown-fail-point",                  // the model's fail points
    "10-unknown-error-kind",                  // the fail point's error kinds
    "11-stall-not-allowed",                   // the fail point's actions
    "12-unknown-bug-key",                     // the model's bug keys
    "21-duplicate-node",                      // names across the node list
    "29-unknown-invariant",                   // the model's invariants
    "31-tick-fraction",                       // a duration's value (whole ms)
    "37-unknown-param",                       // the model's params
    "40-duration-over-limit",                 // a duration's value (7 days)
    "41-start-leader",                        // what a node reference means in the step
    "46-workload-op-unknown-node",            // the scenario's nodes
    "47-workload-op-needs-a-node",            // whether the model has a leader
    "50-node-lookalike-letter",               // the scenario's nodes
    "60-sequence-count",                      // where a trail match is written
    "62-before-in-absent",                    // where a trail match is written
    "63-trail-match-names-leader",            // what a node reference means there
    "67-observed-bad-regex",                  // a regular expression's syntax
    "68-observed-compare-not-a-number",       // a bound's text read as a number
    "70-absent-removed-unsupported",          // what the model reports
    "73-follower-in-a-model-without-leaders", // whether the model has a leader
    "74-transfer-to-the-leader",              // what a node reference means in the step
    "75-await-leader-down",                   // what a node reference means in the step
    "76-await-follower-leads",                // what a node reference means in the step
    "77-nested-repeat-expands-too-far",       // counts multiplied across repeats
    "78-client-unknown-placeholder",          // placeholders in the model's op arguments
    "79-client-unclosed-brace",               // placeholders in the model's op arguments
    "80-placeholder-in-op-expect",            // placeholders in the text of `expect`
    "81-param-out-of-bounds",                 // the model's params
    "82-param-not-a-choice",                  // the model's params
    "83-param-not-a-node",                    // the model's params
    "84-param-heartbeat-above-election",      // the model's params
    "86-client-empty-range",                  // placeholders in the model's op arguments
    "87-variant-param-unknown",               // the model's params
    "88-param-per-node-not-a-node",           // the model's params
    "89-param-sid-incomplete",                // the model's params
    "90-param-sid-twice",                     // the model's params
    "92-except-fixed-bug",                    // the variant's bug modes
    "93-except-unknown-key",                  // the model's bug keys
    "94-except-unknown-checker",              // the model's invariants
    "97-except-unknown-key-and-checker",      // the model's bug keys and invariants
    "98-observed-key-unknown",                // the model's observation keys
    "99-workload-op-unknown",                 // the model's ops
];

/// Cases that are no YAML document JSON can hold: the YAML reader refuses them
/// before any schema could be asked.
const NOT_A_DOCUMENT: &[&str] = &[
    "32-yaml-syntax-error",
    "33-duplicate-key",
    "34-billion-laughs",
    "35-deep-nesting",
    "45-empty-file",
    "48-alias-bytes-blowup",
];

const REGENERATE: &str =
    "regenerate it: `cargo run --release -p faultline -- schema scenario > docs/schema/scenario.schema.json`";

#[test]
fn the_committed_schema_is_the_one_the_readers_types_give() {
    let committed = std::fs::read_to_string(workspace().join(SCENARIO_SCHEMA_PATH))
        .unwrap_or_else(|e| panic!("{SCENARIO_SCHEMA_PATH}: {e}; {REGENERATE}"));
    let generated = scenario_text();
    assert!(
        committed == generated,
        "{SCENARIO_SCHEMA_PATH} is not what the scenario reader's types give; {REGENERATE}"
    );
    let out = faultline(&["schema", "scenario"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), generated);
}

/// A YAML file as the JSON document the schema judges, written into `dir`.
fn as_json(file: &Path, dir: &Path) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let node = faultline::lang::yaml::parse(&text, &faultline::lang::yaml::Limits::default())
        .map_err(|e| e.to_string())?;
    let name = file.file_stem().unwrap().to_string_lossy();
    let parent = file
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy();
    let out = dir.join(format!("{parent}--{name}.json"));
    std::fs::write(&out, serde_json::to_string(&node.to_json()).unwrap()).unwrap();
    Ok(out)
}

#[test]
fn every_bundled_scenario_validates_against_the_schema() {
    let dir = common::temp_dir("scenario-schema", "bundled");
    let files =
        faultline::lang::scenario::scenario_files(&[workspace().join("scenarios")]).unwrap();
    assert!(files.len() >= 30, "{} bundled scenarios", files.len());
    let json: Vec<PathBuf> = files
        .iter()
        .map(|f| as_json(f, &dir).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
        .collect();
    let refs: Vec<&Path> = json.iter().map(PathBuf::as_path).collect();
    let (ok, log) = validate("scenario.schema.json", &refs);
    assert!(ok, "bundled scenarios the schema refuses:\n{log}");
    assert!(log.contains(&format!("checked {}", files.len())), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_bad_input_case_is_classified_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let cases: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut listed = BTreeSet::new();
    for name in SHAPE.iter().chain(MEANING).chain(NOT_A_DOCUMENT) {
        assert!(listed.insert(name.to_string()), "{name} is listed twice");
    }
    assert_eq!(
        cases, listed,
        "classify every case of tests/bad_input/ here (shape, meaning, or not a document)"
    );
}

#[test]
fn shape_errors_fail_the_schema_and_errors_of_meaning_pass_it() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let dir = common::temp_dir("scenario-schema", "bad-input");
    for name in NOT_A_DOCUMENT {
        let file = source.join(format!("{name}.yaml"));
        assert!(as_json(&file, &dir).is_err(), "{name} parses as YAML");
    }
    // One run of the validator for every case: a case is refused when a line
    // of the log names its document.
    let cases: Vec<(&str, PathBuf)> = SHAPE
        .iter()
        .chain(MEANING)
        .map(|name| {
            let file = source.join(format!("{name}.yaml"));
            let json = as_json(&file, &dir).unwrap_or_else(|e| panic!("{name}: {e}"));
            (*name, json)
        })
        .collect();
    let refs: Vec<&Path> = cases.iter().map(|(_, json)| json.as_path()).collect();
    let (_, log) = validate("scenario.schema.json", &refs);
    assert!(log.contains(&format!("checked {}", cases.len())), "{log}");
    for (name, json) in &cases {
        let prefix = format!("{}[0] at ", json.display());
        let errors: Vec<&str> = log.lines().filter(|l| l.starts_with(&prefix)).collect();
        if SHAPE.contains(name) {
            assert!(
                !errors.is_empty(),
                "{name} is a shape error, yet the schema accepts it"
            );
        } else {
            assert!(
                errors.is_empty(),
                "{name} is an error of meaning, yet the schema refuses it:\n{}",
                errors.join("\n")
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
