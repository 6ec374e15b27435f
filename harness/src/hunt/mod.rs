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

use crate::runner;
use crate::scenario::{self, Scenario};
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

/// The scenarios a hunt takes from `paths`: those with a chaos section and an
/// all-fixed variant, in file order.
pub fn hunted(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let files = scenario::scenario_files(paths)?;
    let mut out = Vec::new();
    for file in files {
        let scenario = scenario::load(&file).map_err(|e| e.to_string())?;
        if plan::huntable(&scenario) {
            out.push(scenario);
        }
    }
    Ok(out)
}

/// Run the hunt; the aggregated table, or why it could not run.
pub fn hunt(options: &HuntOptions) -> Result<Hunt, String> {
    let scenarios = hunted(&options.paths)?;
    if scenarios.is_empty() {
        return Err("no chaos scenario with an all-fixed variant under the given paths".into());
    }
    let mut arms: Vec<Vec<Arm>> = Vec::new();
    for s in &scenarios {
        let mut a = plan::arms(s, &options.keys);
        if options.no_fixed {
            a.retain(|arm| *arm != Arm::Fixed);
        }
        arms.push(a);
    }
    for key in &options.keys {
        let known = scenarios
            .iter()
            .any(|s| plan::keys(s).iter().any(|k| k == key));
        if !known {
            return Err(format!(
                "no hunted scenario's model (or build, in the targets manifest) declares bug key `{key}`"
            ));
        }
    }
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
    let mut hunt = Hunt::new(&scenarios, &arms, options);
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
    let mut bar = crate::progress::Bar::new("hunt", "runs", total as u64, 0, options.quiet);
    for message in receiver {
        let done_run = message?;
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
