//! The child's side of a run in another process (`runner::child` is the
//! parent's): `__child validate NAME`, `__child run NAME --variant V --seed S`
//! and `__child bench NAME --variant V --seed S` (one timed run and its bare
//! replay, as `bench::Sample` JSON: `faultline bench` measures a variant in the
//! binary it runs in), the scenario's text on stdin, answers on stdout.

use super::exit;
use crate::lang::scenario::{self, LoadError};
use std::io::{Read, Write};

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
    /// Guided search on one block of one bug key of the scenario at FILE, on
    /// the variant this binary runs (hunt's `--guided-trials` on a key switched
    /// by build): answers `hunt::compare::Answer` as JSON. Reads no stdin.
    Guided {
        file: std::path::PathBuf,
        #[arg(long)]
        key: String,
        #[arg(long)]
        first: u64,
        #[arg(long)]
        last: u64,
    },
    /// Time one run of one variant here, and its bare replay.
    Bench {
        name: String,
        #[arg(long)]
        variant: String,
        #[arg(long)]
        seed: u64,
    },
}

/// Serve one `__child` command; the exit code follows the protocol above.
pub fn serve(command: ChildCommand) -> u8 {
    let mut text = String::new();
    let reads_stdin = !matches!(command, ChildCommand::Guided { .. });
    if let Err(e) = reads_stdin
        .then(|| std::io::stdin().read_to_string(&mut text))
        .transpose()
    {
        eprintln!("error: reading the scenario from stdin: {e}");
        return exit::BAD_INPUT;
    }
    match command {
        ChildCommand::Validate { name } => match scenario::load_str(&name, &text) {
            Ok(_) => exit::OK,
            Err(LoadError::Invalid(diagnostics)) => {
                let mut out = std::io::stdout().lock();
                for d in diagnostics.0 {
                    let _ = writeln!(out, "{}", crate::lang::targets::wire_diagnostic(&d));
                }
                exit::BAD_INPUT
            }
            Err(LoadError::Io(message)) => {
                eprintln!("error: {message}");
                exit::BAD_INPUT
            }
        },
        ChildCommand::Bench {
            name,
            variant,
            seed,
        } => {
            let scenario = match runnable(&name, &text, &variant) {
                Ok(s) => s,
                Err(code) => return code,
            };
            let v = scenario.variant(&variant).expect("checked by runnable");
            crate::sim::runner::child::mark_child();
            let sample = crate::drive::bench::sample(&scenario, v, seed);
            answer(&serde_json::to_string(&sample).expect("samples serialize"))
        }
        ChildCommand::Guided {
            file,
            key,
            first,
            last,
        } => guided(&file, &key, first..=last),
        ChildCommand::Run {
            name,
            variant,
            seed,
        } => {
            let (text, extra) = match text.split_once(crate::sim::runner::child::INPUTS_SEPARATOR) {
                Some((text, extra)) => (text.to_string(), Some(extra.to_string())),
                None => (text, None),
            };
            let scenario = match runnable(&name, &text, &variant) {
                Ok(s) => s,
                Err(code) => return code,
            };
            let v = scenario.variant(&variant).expect("checked by runnable");
            let mut inputs = crate::sim::runner::Inputs::default();
            if let Some(extra) = extra {
                let doc: serde_json::Value = match serde_json::from_str(&extra) {
                    Ok(doc) => doc,
                    Err(e) => {
                        eprintln!("error: the run's inputs are not JSON: {e}");
                        return exit::BAD_INPUT;
                    }
                };
                inputs.record_ops = doc.get("record_ops").and_then(|r| r.as_bool()) == Some(true);
                if let Some(seed) = doc.get("config_seed") {
                    let Some(seed) = seed.as_u64() else {
                        eprintln!("error: the run's config_seed is not a seed: {seed}");
                        return exit::BAD_INPUT;
                    };
                    inputs.config_seed = Some(seed);
                }
                if let Some(bugs) = doc.get("bugs") {
                    match serde_json::from_value(bugs.clone()) {
                        Ok(bugs) => inputs.bugs = bugs,
                        Err(e) => {
                            eprintln!("error: the run's bug modes do not read: {e}");
                            return exit::BAD_INPUT;
                        }
                    }
                }
                if let Some(schedule) = doc.get("schedule") {
                    let text = schedule.to_string();
                    match scenario::load_schedule(&scenario, "<schedule>", &text) {
                        Ok(s) => inputs.schedule = Some(s),
                        Err(e) => {
                            eprint!("{e}");
                            return exit::BAD_INPUT;
                        }
                    }
                }
            }
            crate::sim::runner::child::mark_child();
            let result = crate::sim::runner::run_with(&scenario, v, seed, &inputs);
            answer(&serde_json::to_string(&result).expect("results serialize"))
        }
    }
}

/// `__child guided`: the search of one block, here (this binary has the model).
fn guided(file: &std::path::Path, key: &str, block: std::ops::RangeInclusive<u64>) -> u8 {
    if block.start() > block.end() {
        eprintln!(
            "error: the block {}..{} is empty",
            block.start(),
            block.end()
        );
        return exit::BAD_INPUT;
    }
    match crate::drive::hunt::compare::search_block(file, key, &block) {
        Ok(mut search) => {
            let scenario_text = search.find.as_mut().and_then(|f| f.scenario_text.take());
            let reply = crate::drive::hunt::compare::Answer {
                search,
                scenario_text,
            };
            answer(&serde_json::to_string(&reply).expect("searches serialize"))
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}

/// The scenario on stdin, with a variant `variant` that this binary runs; else
/// the exit code, the reason said on stderr (a variant on a target this binary
/// does not run: the manifest named the wrong binary).
fn runnable(name: &str, text: &str, variant: &str) -> Result<scenario::Scenario, u8> {
    let scenario = scenario::load_str(name, text).map_err(|e| {
        eprint!("{e}");
        exit::BAD_INPUT
    })?;
    let Some(v) = scenario.variant(variant) else {
        eprintln!("error: {name} has no variant `{variant}`");
        return Err(exit::BAD_INPUT);
    };
    if let Some(target) = &v.target {
        if crate::base::models::providing(target).is_none() {
            let here = crate::base::models::provided();
            eprintln!(
                "error: variant `{variant}` runs on {target}, but this binary runs [{}]: the targets manifest names the wrong binary",
                here.join(", ")
            );
            return Err(exit::BAD_INPUT);
        }
    }
    Ok(scenario)
}

/// The answer's one JSON line on stdout.
fn answer(line: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        return exit::FAILED;
    }
    exit::OK
}
