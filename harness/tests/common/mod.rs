//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses only some of the helpers")]

use faultline::lang::scenario::{self, Scenario};
use std::path::{Path, PathBuf};

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every bundled scenario whose model is built into faultline, loaded (they must
/// all be valid). Scenarios of target builds (scenarios/openraft) need those
/// builds (`openraft/build`) and run in CI through the command line.
pub fn bundled() -> Vec<Scenario> {
    let root = workspace().join("scenarios");
    let files = faultline::lang::scenario::scenario_files(&[root]).unwrap();
    assert!(!files.is_empty(), "no bundled scenarios found");
    files
        .iter()
        .filter(|f| !scenario::runs_elsewhere(f))
        .map(|f| {
            scenario::load(f).unwrap_or_else(|e| panic!("{} does not load:\n{e}", f.display()))
        })
        .collect()
}

pub fn load_text(name: &str, text: &str) -> Scenario {
    scenario::load_str(name, text).unwrap_or_else(|e| panic!("{name} does not load:\n{e}"))
}

/// A fresh, empty directory for one test (named for the test file and this process).
pub fn temp_dir(file: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("faultline-{file}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `faultline` binary, run from the workspace root.
pub fn faultline(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(workspace())
        .output()
        .unwrap()
}

/// The `faultline` binary, run from `dir`.
pub fn faultline_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

// ---- Python: readers we did not write (ci_formats.rs, scenario_schema.rs). ----

/// Run a Python script with arguments; its stdout, or a panic with its stderr.
pub fn python(script: &str, args: &[&str]) -> std::process::Output {
    let python = std::env::var("FAULTLINE_PYTHON").unwrap_or_else(|_| "python3".into());
    std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `{python}` ({e}): this test reads files with readers we did not write, in Python 3. \
                 Install python3 (Debian: `apt-get install -y python3`) or set FAULTLINE_PYTHON; \
                 `scripts/test` checks this first."
            )
        })
}

/// Validate JSON documents (`.json`) or lines (`.jsonl`) against a schema; prints
/// one line per invalid document and exits 1 when there was one.
const VALIDATE: &str = r#"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
count = 0
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8").read()
    docs = [json.loads(l) for l in text.splitlines() if l.strip()] if path.endswith(".jsonl") else [json.loads(text)]
    for i, doc in enumerate(docs):
        count += 1
        for error in validator.iter_errors(doc):
            bad += 1
            print(f"{path}[{i}] at {error.json_path}: {error.message[:300]}")
print(f"checked {count}")
sys.exit(1 if bad else 0)
"#;

pub fn validate(schema: &str, files: &[&Path]) -> (bool, String) {
    let schema = workspace().join("docs/schema").join(schema);
    let mut args = vec![schema.to_str().unwrap().to_string()];
    args.extend(files.iter().map(|f| f.to_str().unwrap().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = python(VALIDATE, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("ModuleNotFoundError"),
        "Python's jsonschema package is missing: `python3 -m pip install jsonschema` \
         (scripts/test does this). {stderr}"
    );
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "the validator itself failed: {stderr}"
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
