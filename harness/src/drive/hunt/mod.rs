//! `faultline hunt`: the rediscovery benchmark.
//!
//! For every chaos scenario under the given paths (one per model in the bundled
//! set) and every bug key its model declares, run the scenario over a seed range
//! with that one key `buggy` and the rest `fixed`, and over a seed range with
//! every key `fixed`. The table says, per key, how soon and how often the chaos
//! finds the defect without being told where it is, and whether the fixed code
//! ever fails (a false positive, which makes any find unattributable).
//!
//! Nothing here knows a bug: the variants differ only in bug modes, and the
//! nemesis and workload are the scenario's own.

pub mod compare;
pub mod guided;
pub mod plan;
pub mod render;
mod stats;

pub use plan::Arm;
pub use render::{markdown, NOTES_MARKER};
pub use stats::{ArmStats, Hunt};

use crate::lang::scenario::{self, Scenario};
use crate::sim::runner;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct HuntOptions {
    pub paths: Vec<PathBuf>,
    /// Seeds for every buggy arm.
    pub seeds: RangeInclusive<u64>,
    /// Seeds for the all-fixed control of each scenario.
    pub fixed_seeds: RangeInclusive<u64>,
    pub jobs: usize,
    /// Only these bug keys (empty: every key).
    pub keys: Vec<String>,
    /// Skip the all-fixed controls.
    pub no_fixed: bool,
    pub quiet: bool,
}

/// One run to do.
#[derive(Clone, Debug)]
struct Item {
    scenario: usize,
    arm: usize,
    seed: u64,
}

/// What a worker sends back: enough to aggregate, never the whole trail.
pub struct Done {
    scenario: usize,
    arm: usize,
    pub seed: u64,
    pub result: runner::RunResult,
}

/// The largest `--out` document a hunt rewrites (it keeps the notes below
/// [`NOTES_MARKER`]).
pub const DOC_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// Why a hunt could not run.
#[derive(Debug)]
pub enum Error {
    /// Scenario files that did not load (printed as diagnostics, with excerpts).
    Load(scenario::LoadFailures),
    Other(String),
}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::Other(message)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Load(failures) => write!(f, "{failures}"),
            Error::Other(message) => write!(f, "{message}"),
        }
    }
}

/// The scenarios a hunt takes from `paths`: those with a chaos section that
/// draws its schedule (not one that plays a given schedule) and an all-fixed
/// variant, in file order. With `keys`, only the files that can hold
/// one of them are loaded (read for their model and targets first), so a file
/// of another model, even one that does not load, is no concern of the hunt.
pub fn hunted(paths: &[PathBuf], keys: &[String]) -> Result<Vec<Scenario>, Error> {
    let files = scenario::scenario_files(paths)?;
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for file in files {
        if !keys.is_empty() && !may_hold(&file, keys) {
            continue;
        }
        match scenario::load(&file) {
            Ok(scenario) if plan::huntable(&scenario) => out.push(scenario),
            Ok(_) => {}
            Err(error) => failures.push(scenario::LoadFailure {
                file: file.display().to_string(),
                error,
                source: std::fs::read_to_string(&file).ok(),
            }),
        }
    }
    if !failures.is_empty() {
        return Err(Error::Load(scenario::LoadFailures(failures)));
    }
    Ok(out)
}

/// Whether a scenario file can hold one of `keys`, from its text alone: its
/// model's bug keys, or for variants that pick builds, the keys the targets
/// manifest declares for those builds. `true` when the file cannot be read
/// that far (loading it then says what is wrong).
fn may_hold(file: &std::path::Path, keys: &[String]) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return true;
    };
    let Ok(root) = crate::lang::yaml::parse(&text, &crate::lang::yaml::Limits::default()) else {
        return true;
    };
    let Some(model) = root.get("model").and_then(crate::lang::yaml::Node::as_str) else {
        return true;
    };
    let mut targets = Vec::new();
    if let Some(crate::lang::yaml::Value::Map(variants)) = root.get("variants").map(|v| &v.value) {
        for (_, body) in variants {
            if let Some(target) = body.get("target") {
                let Some(target) = target.as_str() else {
                    return true;
                };
                targets.push(target.to_string());
            }
        }
    }
    if targets.is_empty() {
        return match crate::base::models::find(model) {
            Some(m) => m
                .info()
                .bugs
                .iter()
                .any(|b| keys.iter().any(|k| k == b.key)),
            None => true,
        };
    }
    targets
        .iter()
        .any(|target| match crate::lang::targets::locate(file, target) {
            Ok(build) => build.bugs.0.keys().any(|k| keys.contains(k)),
            Err(_) => true,
        })
}

/// Run the hunt; the aggregated table, or why it could not run.
pub fn hunt(options: &HuntOptions) -> Result<Hunt, Error> {
    let scenarios = hunted(&options.paths, &options.keys)?;
    if scenarios.is_empty() {
        if !options.keys.is_empty() {
            return Err(Error::Other(format!(
                "no hunted scenario's model (or build, in the targets manifest) declares bug key `{}`",
                options.keys.join("`, `")
            )));
        }
        return Err(Error::Other(
            "no chaos scenario with an all-fixed variant under the given paths".into(),
        ));
    }
    let (arms, not_run) = plan_arms(&scenarios, options);
    for key in &options.keys {
        let known = scenarios
            .iter()
            .any(|s| plan::keys(s).iter().any(|k| k == key));
        if !known {
            return Err(Error::Other(format!(
                "no hunted scenario's model (or build, in the targets manifest) declares bug key `{key}`"
            )));
        }
    }
    let items = items_of(&arms, options);
    let mut hunt = Hunt::new(&scenarios, &arms, options);
    hunt.not_run = not_run;
    let files: Vec<PathBuf> = scenarios.iter().map(|s| PathBuf::from(&s.file)).collect();
    let total = items.len();
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: hunt timing, never in a trail"
    )]
    let started = Instant::now(); // wall-clock ok: timing only, never in a trail
    let items = Arc::new(items);
    let next = Arc::new(AtomicUsize::new(0));
    let (sender, receiver) = mpsc::channel::<Result<Done, String>>();
    let mut workers = Vec::new();
    for _ in 0..options.jobs.max(1) {
        let (items, next, sender, files, arms) = (
            items.clone(),
            next.clone(),
            sender.clone(),
            files.clone(),
            arms.clone(),
        );
        workers.push(std::thread::spawn(move || {
            worker(&files, &arms, &items, &next, &sender)
        }));
    }
    drop(sender);
    let mut done = 0u64;
    // A bar on a terminal, a plain line every few seconds otherwise (CI logs).
    let mut bar = crate::drive::progress::Bar::new("hunt", "runs", total as u64, 0, options.quiet);
    for message in receiver {
        let done_run = message.map_err(Error::Other)?;
        hunt.record(done_run);
        done += 1;
        bar.set(done, format!("{} find(s) so far", hunt.finds()));
    }
    bar.finish();
    for worker in workers {
        let _ = worker.join();
    }
    first_causes(&mut hunt, &scenarios, &arms);
    hunt.wall_ms = started.elapsed().as_millis() as u64;
    Ok(hunt)
}

/// Each scenario's arms (without the all-fixed control under `--no-fixed`), and
/// the arms not run because their build is missing (each said so).
fn plan_arms(
    scenarios: &[Scenario],
    options: &HuntOptions,
) -> (Vec<Vec<Arm>>, Vec<crate::report::NotRun>) {
    let mut arms: Vec<Vec<Arm>> = Vec::new();
    let mut not_run = Vec::new();
    for s in scenarios {
        let mut a = plan::arms(s, &options.keys);
        if options.no_fixed {
            a.retain(|arm| *arm != Arm::Fixed);
        }
        // An arm on a build that is missing is not run, and said so.
        a.retain(|arm| {
            let variant = plan::variant(s, arm);
            let Some(reason) = s.unbuilt(&variant) else {
                return true;
            };
            {
                let seeds = match arm {
                    Arm::Buggy(_) => &options.seeds,
                    Arm::Fixed => &options.fixed_seeds,
                };
                let runs = seeds.end().saturating_sub(*seeds.start()).saturating_add(1);
                not_run.push(crate::report::NotRun::of(s, &variant.name, runs, reason));
                false
            }
        });
        arms.push(a);
    }
    (arms, not_run)
}

/// Every run of the hunt: each arm of each scenario over its seeds.
fn items_of(arms: &[Vec<Arm>], options: &HuntOptions) -> Vec<Item> {
    let mut items = Vec::new();
    for (si, scenario_arms) in arms.iter().enumerate() {
        for (ai, arm) in scenario_arms.iter().enumerate() {
            let seeds = match arm {
                Arm::Buggy(_) => options.seeds.clone(),
                Arm::Fixed => options.fixed_seeds.clone(),
            };
            for seed in seeds {
                items.push(Item {
                    scenario: si,
                    arm: ai,
                    seed,
                });
            }
        }
    }
    items
}

/// Each key's first find, explained by its differential run: the find again
/// and its twin with the key fixed (two runs per key found).
fn first_causes(hunt: &mut Hunt, scenarios: &[Scenario], arms: &[Vec<Arm>]) {
    for (scenario, scenario_arms) in scenarios.iter().zip(arms) {
        for arm in scenario_arms {
            let Arm::Buggy(key) = arm else { continue };
            let Some(stats) = hunt
                .arms
                .iter_mut()
                .find(|a| a.file == scenario.file && a.key.as_deref() == Some(key))
            else {
                continue;
            };
            let Some(seed) = stats.first_failure else {
                continue;
            };
            let variant = plan::variant(scenario, arm);
            let inputs = runner::Inputs::default();
            let result = runner::run_with(scenario, &variant, seed, &inputs);
            let departures = runner::differential(scenario, &variant, seed, &inputs, &result);
            stats.first_cause = departures
                .iter()
                .find(|d| d.key == *key)
                .map(|d| d.summary.clone())
                .or_else(|| {
                    (!result.passed).then(|| {
                        format!("the trail is the same with {key} fixed: no departure to show")
                    })
                });
        }
    }
}

fn worker(
    files: &[PathBuf],
    arms: &[Vec<Arm>],
    items: &[Item],
    next: &AtomicUsize,
    sender: &mpsc::Sender<Result<Done, String>>,
) {
    // Scenarios hold model references that stay on one thread: each worker loads its own.
    let mut scenarios = Vec::new();
    for file in files {
        match scenario::load(file) {
            Ok(s) => scenarios.push(s),
            Err(e) => {
                let _ = sender.send(Err(format!("{} no longer loads: {e}", file.display())));
                return;
            }
        }
    }
    let variants: Vec<Vec<scenario::Variant>> = scenarios
        .iter()
        .zip(arms)
        .map(|(s, a)| a.iter().map(|arm| plan::variant(s, arm)).collect())
        .collect();
    loop {
        let index = next.fetch_add(1, Ordering::SeqCst);
        let Some(item) = items.get(index) else { return };
        let scenario = &scenarios[item.scenario];
        let variant = &variants[item.scenario][item.arm];
        let mut result = runner::run(scenario, variant, item.seed);
        result.replay = plan::replay_command(scenario, &arms[item.scenario][item.arm], item.seed);
        let sent = sender.send(Ok(Done {
            scenario: item.scenario,
            arm: item.arm,
            seed: item.seed,
            result,
        }));
        if sent.is_err() {
            return;
        }
    }
}
