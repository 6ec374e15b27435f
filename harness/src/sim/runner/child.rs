//! Runs in another process. A variant whose target this process does not have
//! runs in that target's binary; a model that must have a process per run
//! ([`faultline_api::Model::one_run_per_process`]) runs in a fresh copy of this
//! binary. Either way the parent sends the scenario's text on stdin and reads one
//! JSON line back: the whole [`RunResult`], so reports, sweeps, shrinking and
//! replay work on it as on a run of their own.
//!
//! Protocol (the hidden subcommand `__child`, served by the command line):
//! * `__child validate NAME`: stdout is one JSON diagnostic per line; exit 0 when
//!   the scenario is valid, 2 when it is not.
//! * `__child run NAME --variant V --seed S`: stdout is the run's result as one
//!   JSON line; exit 0 whenever the run happened (whatever its outcome), 2 on bad
//!   input (the reason on stderr). The scenario's text may be followed by a NUL
//!   and a JSON object of the run's other inputs, each optional:
//!   `{"schedule": {...}, "bugs": {"KEY": "buggy"}, "record_ops": true, "config_seed": 7}`.

use super::RunResult;
use crate::judge::check::Finding;
use crate::lang::scenario::{Scenario, Variant};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set in a child serving one run: it runs the run itself, never spawns again.
static IN_CHILD: AtomicBool = AtomicBool::new(false);

/// This process serves one run for a parent: run it here.
pub fn mark_child() {
    IN_CHILD.store(true, Ordering::SeqCst);
}

/// Where a variant runs: `None` here, else the binary to run it in.
pub(crate) fn placement(scenario: &Scenario, variant: &Variant) -> Result<Option<PathBuf>, String> {
    if let Some(build) = crate::lang::targets::elsewhere(&scenario.file, variant.target.as_deref())?
    {
        return Ok(Some(build.binary));
    }
    let model = match variant.target.as_deref() {
        Some(target) => crate::base::models::providing(target).unwrap_or(scenario.model),
        None => scenario.model,
    };
    if model.one_run_per_process() && !IN_CHILD.load(Ordering::SeqCst) {
        let me = std::env::current_exe()
            .map_err(|e| format!("cannot find this program to start a run in: {e}"))?;
        return Ok(Some(me));
    }
    Ok(None)
}

/// What separates the scenario's text on the child's stdin from the run's other
/// inputs (a JSON object), when there are any: a byte no scenario holds.
pub const INPUTS_SEPARATOR: char = '\0';

/// Run a variant in `binary` and take its result.
pub(crate) fn run(
    binary: &Path,
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    inputs: &super::Inputs,
) -> RunResult {
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: the child's wall time, reported, never in the trail"
    )]
    let wall = std::time::Instant::now(); // wall-clock ok: reported, never in the trail
    let args = args("run", scenario, variant, seed);
    let mut stdin = scenario.source.to_string();
    if inputs.schedule.is_some()
        || inputs.record_ops
        || !inputs.bugs.0.is_empty()
        || inputs.config_seed.is_some()
    {
        let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
        let mut doc = serde_json::json!({ "record_ops": inputs.record_ops });
        if let Some(seed) = inputs.config_seed {
            doc["config_seed"] = seed.into();
        }
        if let Some(schedule) = &inputs.schedule {
            doc["schedule"] = schedule.to_json(&names);
        }
        if !inputs.bugs.0.is_empty() {
            doc["bugs"] = serde_json::to_value(&inputs.bugs).expect("bug modes serialize");
        }
        stdin.push(INPUTS_SEPARATOR);
        stdin.push_str(&doc.to_string());
    }
    match crate::lang::targets::call(binary, &args, &stdin) {
        Ok((0, stdout, _)) => match serde_json::from_slice::<RunResult>(&stdout) {
            Ok(result) => result,
            Err(e) => not_run(
                scenario,
                variant,
                seed,
                wall,
                format!("{} gave no run result: {e}", binary.display()),
            ),
        },
        Ok((code, _, stderr)) => not_run(
            scenario,
            variant,
            seed,
            wall,
            format!(
                "{} could not run it (exit {code}): {}",
                binary.display(),
                crate::lang::targets::tail(&stderr)
            ),
        ),
        Err(message) => not_run(scenario, variant, seed, wall, message),
    }
}

/// The arguments of a child command about one run: `__child COMMAND NAME
/// --variant V --seed S` (`run`, or `bench`).
pub(crate) fn args(
    command: &str,
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
) -> Vec<String> {
    vec![
        "__child".to_string(),
        command.to_string(),
        scenario.file.clone(),
        "--variant".into(),
        variant.name.clone(),
        "--seed".into(),
        seed.to_string(),
    ]
}

/// A run that could not be placed (its target is not built): `unknown`.
pub(crate) fn not_placed(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    message: String,
) -> RunResult {
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: reported, never in the trail"
    )]
    let now = std::time::Instant::now(); // wall-clock ok: reported, never in the trail
    not_run(scenario, variant, seed, now, message)
}

/// The result of a run that never happened: `unknown`, never a pass.
fn not_run(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    wall: std::time::Instant,
    message: String,
) -> RunResult {
    RunResult {
        wall_ms: wall.elapsed().as_millis() as u64,
        findings: vec![Finding::unknown("dispatch", message)],
        ..RunResult::unrun(scenario, variant, seed)
    }
}
