//! Runs in another process. A variant whose target this process does not have
//! runs in that target's binary; a model that must have a process per run
//! ([`nodes::api::Model::one_run_per_process`]) runs in a fresh copy of this
//! binary. Either way the parent sends the scenario's text on stdin and reads one
//! JSON line back: the whole [`RunResult`], so reports, sweeps, shrinking and
//! replay work on it as on a run of their own.
//!
//! Protocol (hidden subcommand `__child`):
//! * `__child validate NAME`: stdout is one JSON diagnostic per line; exit 0 when
//!   the scenario is valid, 2 when it is not.
//! * `__child run NAME --variant V --seed S`: stdout is the run's result as one
//!   JSON line; exit 0 whenever the run happened (whatever its outcome), 2 on bad
//!   input (the reason on stderr).

use super::RunResult;
use crate::check::Finding;
use crate::diag::{Diagnostic, Diagnostics};
use crate::outcome::Outcome;
use crate::scenario::{self, LoadError, Scenario, Variant};
use crate::trail::Trail;
use crate::yaml::Loc;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set in a child serving one run: it runs the run itself, never spawns again.
static IN_CHILD: AtomicBool = AtomicBool::new(false);

/// How much of a failed child's stderr a finding quotes.
const STDERR_TAIL_BYTES: usize = 4000;

#[derive(clap::Subcommand, Debug)]
pub enum ChildCommand {
    /// Validate the scenario on stdin, named NAME in messages.
    Validate { name: String },
    /// Run one variant of the scenario on stdin with one seed.
    Run {
        name: String,
        #[arg(long)]
        variant: String,
        #[arg(long)]
        seed: u64,
    },
}

/// One diagnostic as it crosses the process boundary.
#[derive(Serialize, Deserialize)]
struct WireDiagnostic {
    line: u32,
    col: u32,
    message: String,
    #[serde(default)]
    hint: Option<String>,
}

/// Where a variant runs: `None` here, else the binary to run it in.
pub(crate) fn placement(scenario: &Scenario, variant: &Variant) -> Result<Option<PathBuf>, String> {
    if let Some(build) = crate::targets::elsewhere(&scenario.file, variant.target.as_deref())? {
        return Ok(Some(build.binary));
    }
    let model = match variant.target.as_deref() {
        Some(target) => crate::models::providing(target).unwrap_or(scenario.model),
        None => scenario.model,
    };
    if model.one_run_per_process() && !IN_CHILD.load(Ordering::SeqCst) {
        let me = std::env::current_exe()
            .map_err(|e| format!("cannot find this program to start a run in: {e}"))?;
        return Ok(Some(me));
    }
    Ok(None)
}

/// Run a variant in `binary` and take its result.
pub(crate) fn run(binary: &Path, scenario: &Scenario, variant: &Variant, seed: u64) -> RunResult {
    let wall = std::time::Instant::now(); // wall-clock ok: reported, never in the trail
    let args = [
        "__child".to_string(),
        "run".into(),
        scenario.file.clone(),
        "--variant".into(),
        variant.name.clone(),
        "--seed".into(),
        seed.to_string(),
    ];
    match call(binary, &args, &scenario.source) {
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
                tail(&stderr)
            ),
        ),
        Err(message) => not_run(scenario, variant, seed, wall, message),
    }
}

/// Validate a scenario in `binary`: its diagnostics, located in `file`.
pub fn validate(binary: &Path, file: &str, text: &str) -> Result<(), LoadError> {
    let args = ["__child".to_string(), "validate".into(), file.to_string()];
    match call(binary, &args, text) {
        Ok((0, _, _)) => Ok(()),
        Ok((2, stdout, stderr)) => {
            let mut diagnostics = Diagnostics::default();
            for line in stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                if let Ok(d) = serde_json::from_slice::<WireDiagnostic>(line) {
                    let mut diagnostic = Diagnostic::new(
                        file,
                        Loc {
                            line: d.line,
                            col: d.col,
                        },
                        d.message,
                    );
                    diagnostic.hint = d.hint;
                    diagnostics.push(diagnostic);
                }
            }
            if diagnostics.is_empty() {
                return Err(LoadError::Io(format!(
                    "{file}: {} rejected it: {}",
                    binary.display(),
                    tail(&stderr)
                )));
            }
            Err(LoadError::Invalid(diagnostics))
        }
        Ok((code, _, stderr)) => Err(LoadError::Io(format!(
            "{file}: {} failed to validate it (exit {code}): {}",
            binary.display(),
            tail(&stderr)
        ))),
        Err(message) => Err(LoadError::Io(format!("{file}: {message}"))),
    }
}

/// Start `binary` with `args`, send `input`, wait: (exit code, stdout, stderr).
fn call(binary: &Path, args: &[String], input: &str) -> Result<(i32, Vec<u8>, Vec<u8>), String> {
    // With RUST_LOG set the person is debugging: let the child's log lines through.
    let stderr = if std::env::var_os("RUST_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::piped()
    };
    let mut child = Command::new(binary)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = input.to_string();
    // Write from a thread: a child that answers before reading all of stdin must
    // not deadlock against a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {}: {e}", binary.display()))?;
    let _ = writer.join();
    // A child killed by a signal has no exit code: report it as 128 + signal, as a shell would.
    let code = output.status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + output.status.signal().unwrap_or(0)
    });
    Ok((code, output.stdout, output.stderr))
}

fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.len() <= STDERR_TAIL_BYTES {
        return text.to_string();
    }
    let mut start = text.len() - STDERR_TAIL_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}

/// A run that could not be placed (its target is not built): `unknown`.
pub(crate) fn not_placed(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    message: String,
) -> RunResult {
    not_run(scenario, variant, seed, std::time::Instant::now(), message)
}

/// The result of a run that never happened: `unknown`, never a pass.
fn not_run(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    wall: std::time::Instant,
    message: String,
) -> RunResult {
    let trail = Trail::default();
    RunResult {
        harness_version: super::result::HARNESS_VERSION.to_string(),
        scenario: scenario.name.clone(),
        file: scenario.file.clone(),
        scenario_sha256: scenario.sha256.clone(),
        model: scenario.model.info().name.to_string(),
        variant: variant.name.clone(),
        seed,
        outcome: Outcome::Unknown,
        expected: variant.expect.outcomes.clone(),
        passed: false,
        trail_digest: trail.digest(),
        sim_elapsed_ms: 0,
        sim_steps: 0,
        wall_ms: wall.elapsed().as_millis() as u64,
        findings: vec![Finding::unknown("dispatch", message)],
        fail_points: Vec::new(),
        replay: super::result::replay_command(&scenario.file, &variant.name, seed),
        nodes: Vec::new(),
        ops: Vec::new(),
        messages_total: 0,
        messages: Vec::new(),
        trail,
    }
}

// ---- the child's side ----

/// Serve one `__child` command; the exit code follows the protocol above.
pub fn serve(command: ChildCommand) -> u8 {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error: reading the scenario from stdin: {e}");
        return crate::cli::EXIT_BAD_INPUT;
    }
    match command {
        ChildCommand::Validate { name } => match scenario::load_str(&name, &text) {
            Ok(_) => crate::cli::EXIT_OK,
            Err(LoadError::Invalid(diagnostics)) => {
                let mut out = std::io::stdout().lock();
                for d in diagnostics.0 {
                    let wire = WireDiagnostic {
                        line: d.loc.line,
                        col: d.loc.col,
                        message: d.message,
                        hint: d.hint,
                    };
                    let _ = writeln!(out, "{}", serde_json::to_string(&wire).expect("serializes"));
                }
                crate::cli::EXIT_BAD_INPUT
            }
            Err(LoadError::Io(message)) => {
                eprintln!("error: {message}");
                crate::cli::EXIT_BAD_INPUT
            }
        },
        ChildCommand::Run {
            name,
            variant,
            seed,
        } => {
            let scenario = match scenario::load_str(&name, &text) {
                Ok(s) => s,
                Err(e) => {
                    eprint!("{e}");
                    return crate::cli::EXIT_BAD_INPUT;
                }
            };
            let Some(v) = scenario.variant(&variant) else {
                eprintln!("error: {name} has no variant `{variant}`");
                return crate::cli::EXIT_BAD_INPUT;
            };
            if let Some(target) = &v.target {
                if crate::models::providing(target).is_none() {
                    let here = crate::models::provided();
                    eprintln!(
                        "error: variant `{variant}` runs on {target}, but this binary runs [{}]: the targets manifest names the wrong binary",
                        here.join(", ")
                    );
                    return crate::cli::EXIT_BAD_INPUT;
                }
            }
            IN_CHILD.store(true, Ordering::SeqCst);
            let result = super::run(&scenario, v, seed);
            let line = serde_json::to_string(&result).expect("results serialize");
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                return crate::cli::EXIT_FAILED;
            }
            crate::cli::EXIT_OK
        }
    }
}
