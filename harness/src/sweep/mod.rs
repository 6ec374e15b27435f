//! `faultline sweep`: every scenario over a seed range, on worker threads, with a
//! durable results file, resume, deterministic shards, a time budget, and a
//! determinism self-check on a sample of runs.

pub mod merge;
mod progress;
pub mod results;

use crate::cli::{load_all, scenario_files, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::report::{self, RunRecord};
use crate::runner::{self, RunResult};
use crate::scenario::{self, Scenario};
use crate::trail::first_difference;
use progress::Progress;
use results::ResultsFile;
use sha2::{Digest, Sha256};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Exit code of a sweep stopped by SIGINT (after saving what it had).
pub const EXIT_INTERRUPTED: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Catch SIGINT for the rest of the process: the sweep finishes the runs in hand,
/// records them, writes the summary so far and exits non-zero.
pub fn catch_interrupts() {
    std::thread::spawn(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            return;
        };
        if rt.block_on(tokio::signal::ctrl_c()).is_ok() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            crate::progress::eprintln(
                "interrupted: finishing the runs in hand, then writing the summary",
            );
        }
    });
}

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
    pub quiet: bool,
}

/// One run to do: (file, variant, seed).
#[derive(Clone, Debug)]
struct Item {
    file: usize,
    variant: String,
    seed: u64,
}

struct Done {
    result: RunResult,
    nondeterminism: Option<String>,
}

/// "1..1000" (inclusive), "1..=1000", or one seed "7".
pub fn parse_seeds(text: &str) -> Result<RangeInclusive<u64>, String> {
    let bad = || format!("cannot read seeds `{text}`; write e.g. `1..1000` (inclusive) or `7`");
    let (lo, hi) = match text.split_once("..") {
        Some((lo, hi)) => (lo, hi.strip_prefix('=').unwrap_or(hi)),
        None => (text, text),
    };
    let (lo, hi) = (
        lo.trim().parse::<u64>().map_err(|_| bad())?,
        hi.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if lo > hi {
        return Err(format!("seed range `{text}` is empty"));
    }
    Ok(lo..=hi)
}

/// "K/N" with 1 <= K <= N.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("cannot read shard `{text}`; write K/N, e.g. `2/4`");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n) = (
        k.trim().parse::<u64>().map_err(|_| bad())?,
        n.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard `{text}`: K must be in 1..=N"));
    }
    Ok((k, n))
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

pub fn sweep(options: &SweepOptions) -> u8 {
    let Some(scenarios) = load_all(&options.paths) else {
        return EXIT_BAD_INPUT;
    };
    let files: Vec<PathBuf> = match scenario_files(&options.paths) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_BAD_INPUT;
        }
    };
    if let Some(v) = &options.variant {
        if !scenarios.iter().any(|s| s.variant(v).is_some()) {
            eprintln!("error: no scenario has a variant named `{v}`");
            return EXIT_BAD_INPUT;
        }
    }
    let items = plan(&scenarios, options);
    let (mut results, previous) = match open_results(options) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let todo: Vec<Item> = items
        .iter()
        .filter(|i| !results.contains(&item_key(&scenarios, i)))
        .cloned()
        .collect();
    let mut records = previous;
    if !options.quiet {
        eprintln!(
            "sweep: {} run(s) in this slice, {} already recorded, {} to do, {} job(s)",
            items.len(),
            items.len() - todo.len(),
            todo.len(),
            options.jobs
        );
    }
    let mut progress = Progress::new(items.len(), items.len() - todo.len(), options.quiet);
    let outcome = execute(
        options,
        &files,
        todo,
        &mut results,
        &mut records,
        &mut progress,
    );
    progress.finish();
    if let Err(e) = results.sync() {
        eprintln!("error: syncing {}: {e}", results.path().display());
    }
    finish(options, &records, outcome)
}

/// Every (scenario, variant, seed) of this shard, in a fixed order.
fn plan(scenarios: &[Scenario], options: &SweepOptions) -> Vec<Item> {
    let mut items = Vec::new();
    let mut index = 0u64;
    for (file, scenario) in scenarios.iter().enumerate() {
        for variant in &scenario.variants {
            if options.variant.as_ref().is_some_and(|v| *v != variant.name) {
                continue;
            }
            for seed in options.seeds.clone() {
                let mine = options.shard.is_none_or(|(k, n)| index % n == k - 1);
                if mine {
                    items.push(Item {
                        file,
                        variant: variant.name.clone(),
                        seed,
                    });
                }
                index += 1;
            }
        }
    }
    items
}

fn item_key(scenarios: &[Scenario], item: &Item) -> results::RunKey {
    (
        scenarios[item.file].file.clone(),
        item.variant.clone(),
        item.seed,
    )
}

fn open_results(options: &SweepOptions) -> Result<(ResultsFile, Vec<RunRecord>), u8> {
    let existing = options.out.join(results::RESULTS_FILE);
    if existing.exists() && !options.resume {
        eprintln!(
            "error: {} already holds results; pass --resume to continue that sweep, or choose another --out",
            existing.display()
        );
        return Err(EXIT_BAD_INPUT);
    }
    ResultsFile::open(&options.out).map_err(|e| {
        eprintln!("error: opening {}: {e}", existing.display());
        EXIT_BAD_INPUT
    })
}

#[derive(PartialEq)]
enum Stop {
    Finished,
    Budget,
    Interrupted,
}

fn execute(
    options: &SweepOptions,
    files: &[PathBuf],
    todo: Vec<Item>,
    results: &mut ResultsFile,
    records: &mut Vec<RunRecord>,
    progress: &mut Progress,
) -> Result<Stop, String> {
    let todo = Arc::new(todo);
    let next = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel::<Result<Done, String>>();
    let mut workers = Vec::new();
    for _ in 0..options.jobs.max(1) {
        let (todo, next, stop, sender) = (todo.clone(), next.clone(), stop.clone(), sender.clone());
        let files = files.to_vec();
        let percent = options.check_determinism;
        workers.push(std::thread::spawn(move || {
            worker(&files, &todo, &next, &stop, &sender, percent)
        }));
    }
    drop(sender);
    let mut ran_here = 0usize;
    let mut ended = Stop::Finished;
    loop {
        if ended == Stop::Finished {
            if INTERRUPTED.load(Ordering::SeqCst) {
                ended = Stop::Interrupted;
            } else if options.time_budget.is_some_and(|b| progress.elapsed() >= b) {
                ended = Stop::Budget;
            }
            if ended != Stop::Finished {
                stop.store(true, Ordering::SeqCst);
            }
        }
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(done)) => {
                let record = record(options, done, progress.elapsed())?;
                results
                    .append(&record)
                    .map_err(|e| format!("appending to {}: {e}", results.path().display()))?;
                progress.record(record.passed, &mut ran_here);
                records.push(record);
            }
            Ok(Err(message)) => return Err(message),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for worker in workers {
        let _ = worker.join();
    }
    if !options.quiet {
        let secs = progress.elapsed().as_secs_f64();
        // Above the bar, which is still drawn.
        crate::progress::eprintln(&format!(
            "sweep: {ran_here} run(s) in {secs:.1}s ({:.1} runs/s)",
            progress.rate(ran_here)
        ));
    }
    Ok(ended)
}

fn worker(
    files: &[PathBuf],
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
    while !stop.load(Ordering::SeqCst) {
        let index = next.fetch_add(1, Ordering::SeqCst);
        let Some(item) = todo.get(index) else { return };
        let scenario = &scenarios[item.file];
        let variant = scenario
            .variant(&item.variant)
            .expect("planned from this scenario");
        let result = runner::run(scenario, variant, item.seed);
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
        let root = options.out.join("runs");
        let path = report::write_run(&root, &done.result)
            .map_err(|e| format!("writing a run report: {e}"))?;
        record.report = path
            .strip_prefix(&options.out)
            .ok()
            .map(|p| p.display().to_string());
    }
    Ok(record)
}

fn finish(options: &SweepOptions, records: &[RunRecord], outcome: Result<Stop, String>) -> u8 {
    if let Err(e) = write_summaries(&options.out, records) {
        eprintln!("error: writing the summary: {e}");
        return EXIT_BAD_INPUT;
    }
    let failed = records.iter().filter(|r| !r.passed).count();
    if !options.quiet {
        eprintln!(
            "sweep: {} run(s) recorded, {failed} failed; summary in {}",
            records.len(),
            options.out.join("summary.md").display()
        );
        for r in records.iter().filter(|r| !r.passed).take(20) {
            eprintln!(
                "  FAIL {} [{}] seed {}: {}  replay: {}",
                r.scenario, r.variant, r.seed, r.outcome, r.replay
            );
        }
    }
    match outcome {
        Err(message) => {
            eprintln!("error: {message}");
            EXIT_BAD_INPUT
        }
        Ok(Stop::Interrupted) => EXIT_INTERRUPTED,
        Ok(Stop::Budget) => {
            if !options.quiet {
                eprintln!("sweep: time budget reached; run again with --resume to continue");
            }
            if failed > 0 {
                EXIT_FAILED
            } else {
                EXIT_OK
            }
        }
        Ok(Stop::Finished) if failed > 0 => EXIT_FAILED,
        Ok(Stop::Finished) => EXIT_OK,
    }
}

/// `junit.xml` and `summary.md` (and the dashboard) for a set of records, sorted.
pub fn write_summaries(dir: &Path, records: &[RunRecord]) -> std::io::Result<()> {
    let mut sorted = records.to_vec();
    sorted.sort_by_key(results::key);
    report::write_summaries(dir, &sorted)?;
    report::write_dashboard(dir, &sorted).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_and_shards_parse() {
        assert_eq!(parse_seeds("1..1000").unwrap(), 1..=1000);
        assert_eq!(parse_seeds("1..=10").unwrap(), 1..=10);
        assert_eq!(parse_seeds("7").unwrap(), 7..=7);
        assert!(parse_seeds("10..1").unwrap_err().contains("empty"));
        assert!(parse_seeds("a..b").is_err());
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("x").is_err());
    }

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
