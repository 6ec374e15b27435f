//! `faultline sweep --guided`: the same budget of runs as a plain sweep, spent by
//! guided search ([`crate::drive::hunt::guided`]) instead of one fresh seed per run.
//!
//! Each scenario and variant gets a search of its own, whose budget is the
//! number of seeds in `--seeds`: every run takes the next seed from the range's
//! start (which also seeds the search's choices); a fresh run plays the seed's
//! own schedule, a derived run a corpus entry's schedule with one edit under that
//! entry's configuration. Every run is
//! recorded in `results.jsonl` like a plain sweep's, with `guided` giving its
//! number and origin; a failing derived run's report holds the schedule it was
//! given, and its replay command is `faultline replay` on that report.
//!
//! The search's state (corpus, feature counts, counters) is written to
//! `guided/<scenario>/<variant>.json` in `--out` after every batch, so
//! `--resume` continues a search where it stopped (a time budget, a signal)
//! and makes the choices it would have made. Runs go in batches of [`BATCH`],
//! asked for before any of them ran and observed in the order asked, so the
//! search is the same whatever the number of `--jobs`.

use super::progress::Progress;
use super::results::{self, ResultsFile};
use super::{signal, Stop, SweepOptions};
use crate::drive::hunt::guided::{self, Guide, Next, Origin};
use crate::lang::scenario::{self, Scenario};
use crate::report::{self, GuidedRun, RunRecord};
use crate::sim::runner::RunResult;
use std::path::{Path, PathBuf};

/// Runs asked of a guide at once (then run on the sweep's threads).
pub const BATCH: usize = 8;
/// Where the searches' states go, in `--out`.
pub const GUIDE_DIR: &str = "guided";
/// The largest state file read back (a full corpus of long schedules).
const STATE_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// One search: a scenario's variant, its guide and its budget.
pub(super) struct Search {
    pub file: usize,
    pub variant: usize,
    pub guide: Guide,
    pub budget: usize,
    /// The earlier sweep's state its corpus came from (`--corpus`).
    pub carried: Option<Carried>,
}

/// A corpus a guided search started with, as sweep.json records it: the
/// earlier sweep's state file and its digest (an input of the sweep, like its
/// seeds and overrides).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Carried {
    pub scenario: String,
    pub variant: String,
    /// The state file read, as given.
    pub state: String,
    /// SHA-256 of its bytes, hex.
    pub digest: String,
    /// Corpus entries carried from it (its finds stay behind).
    pub entries: usize,
}

/// The state file of one search, relative to `--out`.
fn state_path(scenario: &Scenario, variant: &str) -> PathBuf {
    Path::new(GUIDE_DIR)
        .join(report::safe_component(&scenario.file))
        .join(format!("{}.json", report::safe_component(variant)))
}

/// Most entries of a `--corpus` directory's `guided/` looked through for a
/// scenario given by another path.
const CORPUS_DIRS_MAX: usize = 10_000;

/// The state of this scenario's variant in an earlier guided sweep's `dir`:
/// under the path the scenario was given by, else under the one path there
/// that ends in the same file name (the earlier sweep ran from another
/// directory); `None` when there is none. Two such paths are an error that
/// names them.
fn corpus_state(dir: &Path, scenario: &Scenario, variant: &str) -> Result<Option<PathBuf>, String> {
    let exact = dir.join(state_path(scenario, variant));
    if std::fs::symlink_metadata(&exact).is_ok() {
        return Ok(Some(exact));
    }
    let Some(name) = Path::new(&scenario.file).file_name() else {
        return Ok(None);
    };
    let name = report::safe_component(&name.to_string_lossy());
    let suffix = format!("%2F{name}");
    let state = format!("{}.json", report::safe_component(variant));
    let guided = dir.join(GUIDE_DIR);
    let entries = std::fs::read_dir(&guided).map_err(|e| {
        format!(
            "--corpus: reading {}: {}",
            crate::base::text::printable(&guided.display().to_string()),
            crate::base::fsio::io_text(&e)
        )
    })?;
    let mut found: Vec<PathBuf> = entries
        .take(CORPUS_DIRS_MAX)
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|d| *d == name || d.ends_with(&suffix))
        .map(|d| guided.join(d).join(&state))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    found.sort();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(format!(
            "--corpus: {} states there could be {}'s ({}); run from the directory the earlier sweep \
             ran from, so that the scenario's path is the same",
            found.len(),
            crate::base::text::printable(&scenario.file),
            found
                .iter()
                .take(5)
                .map(|p| crate::base::text::printable(&p.display().to_string()).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A guide from a state file, and the file's digest; an error names the file.
fn read_state(scenario: &Scenario, path: &Path) -> Result<(Guide, String), String> {
    let shown = crate::base::text::printable(&path.display().to_string()).into_owned();
    let bytes = crate::base::fsio::read_capped(path, STATE_BYTES_MAX).map_err(|e| e.to_string())?;
    let json: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{shown}: not a guided search's state: {e}"))?;
    let guide = Guide::from_json(scenario, &json).map_err(|e| format!("{shown}: {e}"))?;
    let digest = crate::base::trail::hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    Ok((guide, digest))
}

/// Every search of the sweep, resumed from `--out` when `resume` is set and a
/// state was written (its record of a carried corpus is the one `before`,
/// the sweep.json it started with, holds), else started from `--corpus`'s
/// state of the same scenario and variant when there is one; an error names a
/// state file that does not read back, or a `--corpus` that holds no guided
/// sweep's states.
pub(super) fn searches(
    options: &SweepOptions,
    scenarios: &[Scenario],
    before: &[Carried],
) -> Result<Vec<Search>, String> {
    let budget = (options.seeds.end() - options.seeds.start() + 1) as usize;
    let first = *options.seeds.start();
    if let Some(dir) = &options.corpus {
        if !dir.join(GUIDE_DIR).is_dir() {
            return Err(format!(
                "--corpus {}: no {GUIDE_DIR}/ there; give the --out of an earlier `sweep --guided`",
                crate::base::text::printable(&dir.display().to_string())
            ));
        }
    }
    let mut out = Vec::new();
    for (file, scenario) in scenarios.iter().enumerate() {
        for (variant, v) in scenario.variants.iter().enumerate() {
            if options.variant.as_ref().is_some_and(|name| *name != v.name) {
                continue;
            }
            let path = options.out.join(state_path(scenario, &v.name));
            let (guide, carried) = if options.resume && std::fs::symlink_metadata(&path).is_ok() {
                // The resumed state holds the corpus it started with,
                // whatever `--corpus` says now.
                let carried = before
                    .iter()
                    .find(|c| c.scenario == scenario.file && c.variant == v.name)
                    .cloned();
                (read_state(scenario, &path)?.0, carried)
            } else {
                let from = match &options.corpus {
                    Some(dir) => corpus_state(dir, scenario, &v.name)?,
                    None => None,
                };
                match from {
                    Some(from) => {
                        let (guide, digest) = read_state(scenario, &from)?;
                        let guide = guide.carried(first);
                        let carried = Carried {
                            scenario: scenario.file.clone(),
                            variant: v.name.clone(),
                            state: from.display().to_string(),
                            digest,
                            entries: guide.corpus_len(),
                        };
                        (guide, Some(carried))
                    }
                    None => (Guide::new(scenario, first, first), None),
                }
            };
            out.push(Search {
                file,
                variant,
                guide,
                budget,
                carried,
            });
        }
    }
    Ok(out)
}

/// Run every search to its budget, or until the sweep is stopped; returns why
/// it stopped and how many runs this invocation did.
pub(super) fn execute(
    options: &SweepOptions,
    scenarios: &[Scenario],
    searches: &mut [Search],
    results: &mut ResultsFile,
    records: &mut Vec<RunRecord>,
    progress: &mut Progress,
) -> Result<(Stop, usize), String> {
    let mut ran_here = 0usize;
    for search in searches.iter_mut() {
        let scenario = &scenarios[search.file];
        let variant_name = scenario.variants[search.variant].name.clone();
        while search.guide.runs < search.budget {
            if let Some(signal) = signal::received() {
                return Ok((Stop::Interrupted(signal), ran_here));
            }
            if options.time_budget.is_some_and(|b| progress.elapsed() >= b) {
                return Ok((Stop::Budget, ran_here));
            }
            let mut batch: Vec<Next> = Vec::new();
            let variant = &scenario.variants[search.variant];
            while batch.len() < BATCH && search.guide.runs < search.budget {
                if let Some(next) = search
                    .guide
                    .next_run(&|seed, cfg| guided::own_schedule(scenario, variant, seed, cfg))
                {
                    batch.push(next);
                }
            }
            let played = run_batch(
                Path::new(&scenario.file),
                &options.overrides,
                search.variant,
                &batch,
                options.jobs,
            )?;
            let mut failed = false;
            for (next, result) in batch.into_iter().zip(played) {
                let schedule = next
                    .schedule
                    .clone()
                    .or_else(|| guided::schedule_of(scenario, &result));
                search.guide.observe(next.seed, schedule, &result);
                let record = record(options, &next, &result, progress)?;
                if results.contains(&results::key(&record)) {
                    // Recorded before a stop that came ahead of the state's
                    // save: the run replays to the same result.
                    continue;
                }
                results.append(&record).map_err(|e| {
                    format!(
                        "appending to {}: {}",
                        results.path().display(),
                        crate::base::fsio::io_text(&e)
                    )
                })?;
                failed |= !record.passed;
                progress.record(record.passed, &mut ran_here);
                records.push(record);
            }
            let state = serde_json::to_vec(&search.guide.to_json()).expect("states serialize");
            crate::base::fsio::tree_write(
                &options.out,
                &state_path(scenario, &variant_name),
                &state,
            )
            .map_err(|e| e.to_string())?;
            if failed && options.fail_fast {
                return Ok((Stop::FailFast, ran_here));
            }
        }
    }
    Ok((Stop::Finished, ran_here))
}

/// Run one batch on up to `jobs` threads (each loads the scenario for itself:
/// a scenario's model references stay on one thread); results in batch order.
fn run_batch(
    file: &Path,
    overrides: &scenario::Overrides,
    variant: usize,
    batch: &[Next],
    jobs: usize,
) -> Result<Vec<RunResult>, String> {
    let jobs = jobs.clamp(1, batch.len().max(1));
    let mut slots: Vec<Option<RunResult>> = (0..batch.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs)
            .map(|t| {
                scope.spawn(move || {
                    let mut scenario = scenario::load(file)
                        .map_err(|e| format!("{} no longer loads: {e}", file.display()))?;
                    overrides.apply(std::slice::from_mut(&mut scenario))?;
                    let variant = &scenario.variants[variant];
                    Ok::<_, String>(
                        batch
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| i % jobs == t)
                            .map(|(i, next)| {
                                let mut result = guided::play(&scenario, variant, next);
                                result.stamp_overrides(overrides);
                                (i, result)
                            })
                            .collect::<Vec<_>>(),
                    )
                })
            })
            .collect();
        for handle in handles {
            let done = handle
                .join()
                .map_err(|_| "a guided sweep's worker panicked".to_string())??;
            for (i, result) in done {
                slots[i] = Some(result);
            }
        }
        Ok::<_, String>(())
    })?;
    Ok(slots
        .into_iter()
        .map(|r| r.expect("every run of the batch ran"))
        .collect())
}

/// The record of one guided run; a failing one also gets its full report,
/// under `runs/guided-run-N/` (a derived run has a seed of its own, and its
/// parent's edited schedule).
fn record(
    options: &SweepOptions,
    next: &Next,
    result: &RunResult,
    progress: &Progress,
) -> Result<RunRecord, String> {
    let mut record = RunRecord::of(result).started_now();
    record.ended_ms = Some(progress.elapsed().as_millis() as u64);
    record.guided = Some(GuidedRun {
        run: next.run as u64,
        origin: match &next.origin {
            Origin::Fresh => "fresh".into(),
            Origin::Derived { parent, edit } => {
                format!("seed {parent}'s schedule and configuration: {edit}")
            }
        },
    });
    if !record.passed {
        let sub = Path::new("runs").join(format!("guided-run-{}", next.run));
        let path = report::write_run_in(&options.out, &sub, result)
            .map_err(|e| format!("writing a run report: {e}"))?;
        if next.schedule.is_some() {
            record.replay = format!(
                "faultline replay {}",
                crate::base::text::shell_quote(&path.display().to_string())
            );
        }
        record.report = path
            .strip_prefix(&options.out)
            .ok()
            .map(|p| p.display().to_string());
    }
    Ok(record)
}
