//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses only some of the helpers")]

use faultline::scenario::{self, Scenario};
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
    let files = faultline::scenario::scenario_files(&[root]).unwrap();
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
