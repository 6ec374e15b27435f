//! `faultline sweep`: every scenario over a seed range, on worker threads, with a
//! durable results file, resume, deterministic shards, a time budget, and a
//! determinism self-check on a sample of runs. A sweep that did not do every run
//! it planned says so (`incomplete: ran X of Y`) in its summary, its `sweep.json`
//! and its [`Summary`]; the command line gives it an exit code of its own.

mod error;
pub mod guided;
pub mod ledger;
pub mod merge;
pub mod meta;
pub mod plan;
mod progress;
pub mod results;
mod signal;
mod summaries;

pub use error::Error;
pub use plan::{parse_seeds, parse_shard, RUNS_MAX, SEEDS_MAX};
pub use signal::{catch_interrupts, Signal};
pub use summaries::write as write_summaries;

use crate::base::fsio::DirLock;
use crate::base::trail::first_difference;
use crate::lang::scenario::{self, Scenario};
use crate::report::{self, RunRecord};
use crate::sim::runner::{self, RunResult};
use meta::Meta;
use plan::Item;
use progress::Progress;
use results::ResultsFile;
use sha2::{Digest, Sha256};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub paths: Vec<PathBuf>,
    pub seeds: RangeInclusive<u64>,
    pub jobs: usize,
    /// (k, n): this machine takes the k-th of n slices (1-based).
    pub shard: Option<(u64, u64)>,
    pub out: PathBuf,
    pub time_budget: Option<Duration>,
    pub resume: bool,
    /// Percent of runs to run twice and compare.
    pub check_determinism: f64,
    pub variant: Option<String>,
    /// Stop starting runs after the first one that fails.
    pub fail_fast: bool,
    /// `--bug` and `--param`, applied to every run (and to its replay command).
    pub overrides: scenario::Overrides,
    pub quiet: bool,
    /// Spend the runs on guided search ([`guided`]) instead of one fresh seed
    /// each.
    pub guided: bool,
    /// A guided sweep's `--out` whose searches' corpora this one's start
    /// with (a nightly campaign that goes on from the night before).
    pub corpus: Option<PathBuf>,
}

/// Why a sweep stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every planned run was started.
    Finished,
    /// `--time-budget` ran out.
    Budget,
    /// SIGINT or SIGTERM.
    Interrupted(Signal),
    /// `--fail-fast` after a failing run.
    FailFast,
}

impl Stop {
    /// The `stopped_by` word of sweep.json.
    pub fn word(self) -> &'static str {
        match self {
            Stop::Finished => "finished",
            Stop::Budget => "time_budget",
            Stop::Interrupted(_) => "interrupted",
            Stop::FailFast => "fail_fast",
        }
    }

    fn why(self) -> String {
        match self {
            Stop::Finished => "some runs were not recorded".into(),
            Stop::Budget => "the time budget ran out; --resume continues it".into(),
            Stop::Interrupted(s) => format!("stopped by {}; --resume continues it", s.name()),
            Stop::FailFast => "--fail-fast stopped it at the first failure".into(),
        }
    }
}

/// What a sweep did.
#[derive(Debug)]
pub struct Summary {
    pub out: PathBuf,
    /// Every record of this slice's results file, earlier sessions' included.
    pub records: Vec<RunRecord>,
    /// Runs this slice set out to do.
    pub planned: u64,
    /// Of those, runs now recorded.
    pub recorded: u64,
    /// Runs done by this invocation.
    pub ran_now: usize,
    pub stop: Stop,
    /// What the coverage ledger concluded (judged for an unsharded sweep).
    pub coverage: meta::CoverageReport,
    /// Variants not run: their target's build is missing.
    pub not_run: Vec<report::NotRun>,
}

impl Summary {
    pub fn failed(&self) -> impl Iterator<Item = &RunRecord> {
        self.records.iter().filter(|r| !r.passed)
    }

    pub fn complete(&self) -> bool {
        self.recorded >= self.planned
    }

    /// "ran X of Y (why)" when the sweep did not record every planned run.
    pub fn incomplete(&self) -> Option<String> {
        (!self.complete()).then(|| {
            let why = match crate::report::not_run_note(&self.not_run) {
                Some(note) if self.stop == Stop::Finished => note,
                _ => self.stop.why(),
            };
            format!(
                "ran {} of {} planned run(s): {why}",
                self.recorded, self.planned
            )
        })
    }
}

/// A run done by a worker, with its determinism recheck.
struct Done {
    result: RunResult,
    nondeterminism: Option<String>,
}

/// Whether a run is in the determinism sample: a fixed hash, so every machine and
/// every resume picks the same runs.
fn sampled(file: &str, variant: &str, seed: u64, percent: f64) -> bool {
    if percent <= 0.0 {
        return false;
    }
    let digest = Sha256::digest(format!("{file}\0{variant}\0{seed}").as_bytes());
    let bucket = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes")) % 10_000;
    (bucket as f64) < percent * 100.0
}

/// Identifies a sweep's plan (files, their variants, seeds, filter), so that
/// shards of one sweep can be told from shards of different ones.
fn plan_digest(scenarios: &[Scenario], options: &SweepOptions) -> String {
    let mut hasher = Sha256::new();
    for s in scenarios {
        hasher.update(s.file.as_bytes());
        hasher.update([0]);
        for v in &s.variants {
            hasher.update(v.name.as_bytes());
            hasher.update([1]);
        }
    }
    hasher.update(format!("{:?}|{:?}", options.seeds, options.variant).as_bytes());
    // Overrides make other runs of the same files: another sweep.
    if !options.overrides.is_empty() {
        hasher.update(options.overrides.flags().as_bytes());
    }
    crate::base::trail::hex(&hasher.finalize())
}

pub fn sweep(options: &SweepOptions) -> Result<Summary, Error> {
    let mut scenarios = scenario::load_all(&options.paths).map_err(Error::Load)?;
    options
        .overrides
        .apply(&mut scenarios)
        .map_err(Error::Input)?;
    let files: Vec<PathBuf> = scenarios.iter().map(|s| PathBuf::from(&s.file)).collect();
    check_options(options, &scenarios)?;
    let items = plan::plan(
        &scenarios,
        options.variant.as_deref(),
        &options.seeds,
        options.shard,
    )
    .map_err(Error::Input)?;
    let (unbuilt, not_run, runnable) = runnable(&scenarios, &items);
    // Held until the sweep returns: a second sweep on this --out is refused.
    let _lock = DirLock::try_new(&options.out).map_err(Error::Lock)?;
    let (mut results, previous) = open_results(options)?;
    let key = |i: &Item| item_key(&scenarios, i);
    let mut searches = guided_searches(options, &scenarios, &unbuilt)?;
    // A guided sweep's runs so far: what each search's state counts.
    let guided_done = |searches: &[guided::Search]| -> usize {
        searches.iter().map(|s| s.guide.runs.min(s.budget)).sum()
    };
    let todo: Vec<Item> = if options.guided {
        Vec::new()
    } else {
        runnable
            .iter()
            .filter(|i| !results.contains(&key(i)))
            .copied()
            .collect()
    };
    let done_before = if options.guided {
        guided_done(&searches)
    } else {
        runnable.len() - todo.len()
    };
    let mut meta = first_meta(options, &scenarios, items.len(), done_before);
    meta.guided_corpus = searches.iter().filter_map(|s| s.carried.clone()).collect();
    announce_corpus(options, &scenarios, &searches);
    meta::write(&options.out, &meta)?;
    let mut records = previous.records;
    announce(options, items.len(), done_before);
    let mut progress = Progress::new(items.len(), done_before, options.quiet);
    let outcome = if options.guided {
        guided::execute(
            options,
            &scenarios,
            &mut searches,
            &mut results,
            &mut records,
            &mut progress,
        )
    } else {
        execute(
            options,
            &files,
            todo,
            &mut results,
            &mut records,
            &mut progress,
        )
    };
    progress.finish();
    let synced = results.sync();
    let recorded = if options.guided {
        guided_done(&searches) as u64
    } else {
        items.iter().filter(|i| results.contains(&key(i))).count() as u64
    };
    let (stop, ran_now) = match outcome {
        Ok(done) => done,
        Err(message) => return Err(stopped_on_error(options, &records, message)),
    };
    synced.map_err(|source| sync_error(results.path(), source))?;
    let coverage = coverage(options, &records, &not_run, stop, recorded, items.len())?;
    let summary = Summary {
        out: options.out.clone(),
        records,
        planned: items.len() as u64,
        recorded,
        ran_now,
        stop,
        coverage,
        not_run,
    };
    meta.recorded = summary.recorded;
    meta.complete = summary.complete();
    meta.stopped_by = stop.word().into();
    meta.incomplete = summary.incomplete();
    meta.coverage = Some(summary.coverage.clone());
    meta::write(&options.out, &meta)?;
    Ok(summary)
}

/// The flags that do not fit the scenarios or each other: a variant no scenario
/// has, a guided sweep sharded or sampled for determinism.
fn check_options(options: &SweepOptions, scenarios: &[Scenario]) -> Result<(), Error> {
    if let Some(v) = &options.variant {
        if !scenarios.iter().any(|s| s.variant(v).is_some()) {
            return Err(Error::Input(format!(
                "no scenario has a variant named `{}`; the variants are: {}",
                crate::base::text::printable(v),
                Scenario::variants_of_all(scenarios)
            )));
        }
    }
    if options.guided && options.shard.is_some() {
        return Err(Error::Input(
            "--guided cannot be sharded: a guided search is one sequence of runs, each chosen \
             from the runs before it; shard by scenario file instead (one sweep per file)"
                .into(),
        ));
    }
    if options.guided && options.check_determinism > 0.0 {
        return Err(Error::Input(
            "--check-determinism with --guided: the determinism sample is drawn over seeds, \
             and a guided sweep's derived runs play edited schedules under theirs; run the \
             determinism check on a plain sweep"
                .into(),
        ));
    }
    Ok(())
}

/// Why a (file, variant) cannot run; `None`: its build is there.
type Unbuilt = std::collections::BTreeMap<(usize, usize), Option<String>>;

/// Why each (file, variant) cannot run ([`Unbuilt`]), what is not
/// run for that reason, and the items that can run. Variants whose target's build
/// is missing are not run: each is reported, and the sweep is incomplete (their
/// runs stay planned, never recorded).
fn runnable(scenarios: &[Scenario], items: &[Item]) -> (Unbuilt, Vec<report::NotRun>, Vec<Item>) {
    let mut unbuilt: Unbuilt = Default::default();
    let mut not_run: Vec<report::NotRun> = Vec::new();
    let mut runnable: Vec<Item> = Vec::new();
    for item in items {
        let s = &scenarios[item.file];
        let why = unbuilt
            .entry((item.file, item.variant))
            .or_insert_with(|| s.unbuilt(&s.variants[item.variant]));
        match why {
            None => runnable.push(*item),
            Some(reason) => {
                let variant = &s.variants[item.variant].name;
                match not_run
                    .iter_mut()
                    .find(|n| n.file == s.file && n.variant == *variant)
                {
                    Some(n) => n.runs += 1,
                    None => not_run.push(report::NotRun::of(s, variant, 1, reason.clone())),
                }
            }
        }
    }
    (unbuilt, not_run, runnable)
}

/// The results file in --out: refused when it holds results and this is not
/// `--resume`; else opened, with what it holds.
fn open_results(options: &SweepOptions) -> Result<(ResultsFile, results::Contents), Error> {
    let existing = options.out.join(results::RESULTS_FILE);
    if std::fs::symlink_metadata(&existing).is_ok() && !options.resume {
        return Err(Error::Input(format!(
            "{} already holds results; pass --resume to continue that sweep, or choose another --out",
            crate::base::text::printable(&existing.display().to_string())
        )));
    }
    ResultsFile::open(&options.out).map_err(Error::Results)
}

/// sweep.json as the sweep starts: its plan, and what was recorded before.
fn first_meta(
    options: &SweepOptions,
    scenarios: &[Scenario],
    planned: usize,
    done_before: usize,
) -> Meta {
    Meta {
        schema_version: meta::META_SCHEMA_VERSION,
        seeds: [*options.seeds.start(), *options.seeds.end()],
        shard: options.shard.map(|(k, n)| [k, n]),
        variant: options.variant.clone(),
        bugs: options.overrides.bugs.clone(),
        params: options.overrides.params.clone(),
        files: scenarios.iter().map(|s| s.file.clone()).collect(),
        plan_digest: plan_digest(scenarios, options),
        planned: planned as u64,
        recorded: done_before as u64,
        complete: done_before == planned,
        stopped_by: "running".into(),
        incomplete: None,
        coverage: None,
        guided_corpus: Vec::new(),
    }
}

/// The summaries with the probes' ledger (and why the sweep is incomplete, when
/// it is), and the ledger's verdict for sweep.json.
fn coverage(
    options: &SweepOptions,
    records: &[RunRecord],
    not_run: &[report::NotRun],
    stop: Stop,
    recorded: u64,
    planned: usize,
) -> Result<meta::CoverageReport, Error> {
    let complete = recorded >= planned as u64;
    let incomplete = (!complete).then(|| {
        let why = match report::not_run_note(not_run) {
            Some(note) if stop == Stop::Finished => note,
            _ => stop.why(),
        };
        format!("ran {recorded} of {} planned run(s): {why}", planned)
    });
    let ledger = summaries::write_not_run(&options.out, records, incomplete.as_deref(), not_run)?;
    Ok(meta::CoverageReport {
        verdict: ledger.verdict(),
        ledger,
        judged: options.shard.is_none(),
    })
}

/// A guided sweep's searches, one per scenario and variant whose build is there
/// (a variant whose build is missing is not searched: it is reported as not run);
/// none for a plain sweep.
fn guided_searches(
    options: &SweepOptions,
    scenarios: &[Scenario],
    unbuilt: &Unbuilt,
) -> Result<Vec<guided::Search>, Error> {
    if !options.guided {
        return Ok(Vec::new());
    }
    // What the sweep being resumed recorded of the corpora it started from.
    let before = if options.resume {
        meta::read(&options.out)
            .map_err(Error::Input)?
            .map(|m| m.guided_corpus)
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut searches = guided::searches(options, scenarios, &before).map_err(Error::Input)?;
    searches.retain(|s| matches!(unbuilt.get(&(s.file, s.variant)), Some(None) | None));
    Ok(searches)
}

/// The line a sweep starts with (unless quiet).
fn announce(options: &SweepOptions, planned: usize, done_before: usize) {
    if !options.quiet {
        eprintln!(
            "sweep: {} run(s) in this slice{}, {} already recorded, {} to do, {} job(s)",
            planned,
            if options.guided { ", guided" } else { "" },
            done_before,
            planned - done_before,
            options.jobs
        );
    }
}

/// With `--corpus`: which searches start from a carried corpus, and which find
/// none of their scenario and variant there and start empty (unless quiet).
fn announce_corpus(options: &SweepOptions, scenarios: &[Scenario], searches: &[guided::Search]) {
    let Some(dir) = &options.corpus else {
        return;
    };
    if options.quiet {
        return;
    }
    let dir = crate::base::text::printable(&dir.display().to_string()).into_owned();
    for search in searches {
        let scenario = &scenarios[search.file];
        let name = crate::base::text::printable(&scenario.file).into_owned();
        let variant =
            crate::base::text::printable(&scenario.variants[search.variant].name).into_owned();
        match &search.carried {
            Some(c) => eprintln!(
                "sweep: {name} [{variant}] starts from the corpus of {} ({} entries)",
                crate::base::text::printable(&c.state),
                c.entries
            ),
            None => eprintln!(
                "sweep: {name} [{variant}]: no corpus of it in {dir}; its search starts empty"
            ),
        }
    }
}

/// The sweep stopped on an error: whatever was recorded stays, and the summaries
/// still say what was done.
fn stopped_on_error(options: &SweepOptions, records: &[RunRecord], message: String) -> Error {
    let _ = write_summaries(&options.out, records, Some("the sweep stopped on an error"));
    Error::Run(message)
}

/// The results file could not be synced to disk.
fn sync_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io(crate::base::fsio::Error {
        path: path.to_path_buf(),
        kind: crate::base::fsio::ErrorKind::Io {
            doing: "syncing",
            source,
        },
    })
}

fn item_key(scenarios: &[Scenario], item: &Item) -> results::RunKey {
    let scenario = &scenarios[item.file];
    (
        scenario.file.clone(),
        scenario.variants[item.variant].name.clone(),
        item.seed,
        0,
    )
}

fn execute(
    options: &SweepOptions,
    files: &[PathBuf],
    todo: Vec<Item>,
    results: &mut ResultsFile,
    records: &mut Vec<RunRecord>,
    progress: &mut Progress,
) -> Result<(Stop, usize), String> {
    let todo = Arc::new(todo);
    let next = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel::<Result<Done, String>>();
    let mut workers = Vec::new();
    for _ in 0..options.jobs.max(1) {
        let (todo, next, stop, sender) = (todo.clone(), next.clone(), stop.clone(), sender.clone());
        let files = files.to_vec();
        let percent = options.check_determinism;
        let overrides = options.overrides.clone();
        workers.push(std::thread::spawn(move || {
            worker(&files, &overrides, &todo, &next, &stop, &sender, percent)
        }));
    }
    drop(sender);
    let mut ran_here = 0usize;
    let mut ended = Stop::Finished;
    let mut failure = None;
    loop {
        if ended == Stop::Finished {
            if let Some(signal) = signal::received() {
                ended = Stop::Interrupted(signal);
            } else if options.time_budget.is_some_and(|b| progress.elapsed() >= b) {
                ended = Stop::Budget;
            }
            if ended != Stop::Finished {
                stop.store(true, Ordering::SeqCst);
            }
        }
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(done)) => match record(options, done, progress.elapsed()) {
                Ok(record) => {
                    if let Err(e) = results.append(&record) {
                        failure = Some(format!(
                            "appending to {}: {}",
                            results.path().display(),
                            crate::base::fsio::io_text(&e)
                        ));
                        stop.store(true, Ordering::SeqCst);
                        continue;
                    }
                    if options.fail_fast && !record.passed && ended == Stop::Finished {
                        ended = Stop::FailFast;
                        stop.store(true, Ordering::SeqCst);
                    }
                    progress.record(record.passed, &mut ran_here);
                    records.push(record);
                }
                Err(message) => {
                    failure.get_or_insert(message);
                    stop.store(true, Ordering::SeqCst);
                }
            },
            Ok(Err(message)) => {
                failure.get_or_insert(message);
                stop.store(true, Ordering::SeqCst);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for worker in workers {
        let _ = worker.join();
    }
    if let Some(message) = failure {
        return Err(message);
    }
    if !options.quiet {
        let secs = progress.elapsed().as_secs_f64();
        // Above the bar, which is still drawn.
        crate::drive::progress::eprintln(&format!(
            "sweep: {ran_here} run(s) in {secs:.1}s ({:.1} runs/s)",
            progress.rate(ran_here)
        ));
    }
    Ok((ended, ran_here))
}

fn worker(
    files: &[PathBuf],
    overrides: &scenario::Overrides,
    todo: &[Item],
    next: &AtomicUsize,
    stop: &AtomicBool,
    sender: &mpsc::Sender<Result<Done, String>>,
    percent: f64,
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
    if let Err(message) = overrides.apply(&mut scenarios) {
        let _ = sender.send(Err(message));
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        let index = next.fetch_add(1, Ordering::SeqCst);
        let Some(item) = todo.get(index) else { return };
        let scenario = &scenarios[item.file];
        let variant = &scenario.variants[item.variant];
        let mut result = runner::run(scenario, variant, item.seed);
        result.stamp_overrides(overrides);
        let nondeterminism = if sampled(&scenario.file, &variant.name, item.seed, percent) {
            let again = runner::run(scenario, variant, item.seed);
            (again.trail_digest != result.trail_digest)
                .then(|| describe_difference(&result, &again))
        } else {
            None
        };
        if sender
            .send(Ok(Done {
                result,
                nondeterminism,
            }))
            .is_err()
        {
            return;
        }
    }
}

fn describe_difference(first: &RunResult, second: &RunResult) -> String {
    match first_difference(&first.trail.events, &second.trail.events) {
        Some((i, a, b)) => format!(
            "trail event {i} differs: first run {}, second run {}",
            a.map(|e| serde_json::to_string(e).unwrap_or_default())
                .unwrap_or_else(|| "<end of trail>".into()),
            b.map(|e| serde_json::to_string(e).unwrap_or_default())
                .unwrap_or_else(|| "<end of trail>".into())
        ),
        None => "the digests differ but the trails read equal".into(),
    }
}

/// The record of one finished run; failing runs also get their full report.
fn record(options: &SweepOptions, done: Done, elapsed: Duration) -> Result<RunRecord, String> {
    let mut record = RunRecord::of(&done.result).started_now();
    record.ended_ms = Some(elapsed.as_millis() as u64);
    if let Some(diff) = done.nondeterminism {
        record.nondeterminism = Some(diff);
        record.passed = false;
    }
    if !record.passed {
        let path = report::write_run_in(&options.out, Path::new("runs"), &done.result)
            .map_err(|e| format!("writing a run report: {e}"))?;
        record.report = path
            .strip_prefix(&options.out)
            .ok()
            .map(|p| p.display().to_string());
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_determinism_sample_is_fixed_and_about_the_right_size() {
        let picked = (1..=10_000)
            .filter(|s| sampled("a.yaml", "v", *s, 5.0))
            .count();
        assert!((400..600).contains(&picked), "{picked}");
        assert_eq!(
            sampled("a.yaml", "v", 17, 5.0),
            sampled("a.yaml", "v", 17, 5.0)
        );
        assert!((1..=1000).all(|s| !sampled("a.yaml", "v", s, 0.0)));
        assert!((1..=1000).all(|s| sampled("a.yaml", "v", s, 100.0)));
    }
}
