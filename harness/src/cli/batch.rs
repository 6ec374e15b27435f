//! The commands over many runs or files: `sweep`, `merge`, `shrink`, `import`,
//! `bench`. Each calls its library module, prints the typed summary it gets
//! back, and turns it (or the error) into an exit code.

use super::exit;
use super::term::{self, Verbosity};
use crate::base::text::printable;
use crate::drive::sweep::{self, merge, Stop, SweepOptions};
use crate::report::RunRecord;
use std::path::{Path, PathBuf};

// `faultline sweep`'s flags, as clap reads them and the command takes them.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Seed range, inclusive: `1..1000` (or one seed); at most 1,000,000 seeds.
    #[arg(long, default_value = "1..100")]
    pub seeds: String,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Take the K-th of N deterministic slices: `--shard 2/4`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Output directory: results.jsonl, sweep.json, summaries, failing runs' reports.
    #[arg(long, default_value = "reports/sweep")]
    pub out: PathBuf,
    /// Stop starting new runs after this much wall time (`20m`); the sweep is
    /// then incomplete.
    #[arg(long)]
    pub time_budget: Option<String>,
    /// Continue a sweep in --out, skipping runs already recorded.
    #[arg(long)]
    pub resume: bool,
    /// Rerun this percentage of runs and compare trail digests.
    #[arg(long, default_value_t = 0.0)]
    pub check_determinism: f64,
    /// Only this variant.
    #[arg(long)]
    pub variant: Option<String>,
    /// Stop starting new runs after the first one that fails.
    #[arg(long)]
    pub fail_fast: bool,
    /// Spend the runs on guided search: per scenario and variant, as many
    /// runs as --seeds holds seeds, fresh seeds from its start and runs
    /// derived from earlier ones by editing their schedules; the search's
    /// corpus is kept in --out (guided/), and --resume continues it.
    #[arg(long)]
    pub guided: bool,
    /// With --guided: start each search with the corpus of the same scenario
    /// and variant in an earlier guided sweep's --out (its guided/ states),
    /// so a nightly sweep goes on from what the nights before it reached;
    /// its runs take this sweep's seeds.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Override a bug mode in every run, as `run --bug` (repeatable).
    #[arg(long = "bug", value_name = "KEY=MODE")]
    pub bugs: Vec<String>,
    /// Override a model param in every run, as `run --param` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
}

fn sweep_options(args: SweepArgs, quiet: bool) -> Result<SweepOptions, String> {
    if !(0.0..=100.0).contains(&args.check_determinism) {
        return Err(format!(
            "--check-determinism is a percentage in 0..=100, got {}",
            args.check_determinism
        ));
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if args.corpus.is_some() && !args.guided {
        return Err(
            "--corpus starts guided searches from an earlier guided sweep's corpus: it needs \
             --guided"
                .into(),
        );
    }
    if jobs == 0 || jobs > 256 {
        return Err("--jobs is 1..=256".into());
    }
    Ok(SweepOptions {
        paths: args.paths,
        seeds: sweep::parse_seeds(&args.seeds)?,
        jobs,
        shard: args.shard.as_deref().map(sweep::parse_shard).transpose()?,
        out: args.out,
        time_budget: args
            .time_budget
            .as_deref()
            .map(|t| crate::base::duration::parse(t).map_err(|e| format!("--time-budget: {e}")))
            .transpose()?,
        resume: args.resume,
        check_determinism: args.check_determinism,
        variant: args.variant,
        fail_fast: args.fail_fast,
        overrides: crate::lang::scenario::Overrides {
            bugs: args.bugs,
            params: args.params,
        },
        quiet,
        guided: args.guided,
        corpus: args.corpus,
    })
}

/// Failure signatures printed; the rest are counted.
const GROUPS_SHOWN: usize = 20;
/// Seeds printed per signature.
const SEEDS_SHOWN: usize = 20;

/// The failing runs grouped by signature (`report::groups`), at most
/// [`GROUPS_SHOWN`] groups: a line with the signature, its count, first seed and
/// that seed's replay, then its seeds.
fn print_failures<'a>(failed: impl Iterator<Item = &'a RunRecord>) {
    for line in failure_lines(failed) {
        anstream::eprintln!("{line}");
    }
}

fn failure_lines<'a>(failed: impl Iterator<Item = &'a RunRecord>) -> Vec<String> {
    let groups = crate::report::groups::group(failed);
    let mut lines = Vec::new();
    for g in groups.iter().take(GROUPS_SHOWN) {
        lines.push(format!(
            "  {}FAIL{} {} [{}] {} \u{d7}{}, first seed {}  replay: {}",
            anstyle::AnsiColor::Red.on_default().bold().render(),
            anstyle::Reset.render(),
            printable(&g.first().scenario),
            printable(&g.first().variant),
            printable(&g.signature.label()),
            g.runs(),
            g.first().seed,
            printable(&g.first().replay)
        ));
        lines.push(format!(
            "    seeds: {}",
            crate::report::groups::seeds_text(&g.seeds, SEEDS_SHOWN)
        ));
    }
    if groups.len() > GROUPS_SHOWN {
        lines.push(format!(
            "  ... and {} more failure signature(s) in summary.md",
            groups.len() - GROUPS_SHOWN
        ));
    }
    lines
}

pub fn sweep(args: SweepArgs, verbosity: Verbosity) -> u8 {
    let options = match sweep_options(args, verbosity == Verbosity::Quiet) {
        Ok(options) => options,
        Err(message) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    sweep::catch_interrupts();
    let summary = match sweep::sweep(&options) {
        Ok(summary) => summary,
        Err(sweep::Error::Load(failures)) => {
            term::load_failures(&failures);
            return exit::BAD_INPUT;
        }
        Err(e) => {
            term::error(e);
            return exit::BAD_INPUT;
        }
    };
    for skipped in &summary.not_run {
        term::warning(skipped.line());
    }
    let failed = summary.failed().count();
    if verbosity != Verbosity::Quiet || failed > 0 || !summary.complete() {
        eprintln!(
            "sweep: {} run(s) recorded, {failed} failed; summary in {}",
            summary.records.len(),
            printable(&summary.out.join("summary.md").display().to_string())
        );
        print_failures(summary.failed());
    }
    if let Some(note) = summary.incomplete() {
        term::warning(format!("incomplete: {note}"));
    }
    print_coverage(&summary.coverage);
    match summary.stop {
        Stop::Interrupted(_) => exit::INTERRUPTED,
        // Asked to stop at a failure: the failure is the verdict.
        Stop::FailFast => exit::of_runs(&summary.records),
        Stop::Finished | Stop::Budget => exit::of_covered_sweep(
            false,
            summary.complete(),
            &summary.records,
            Some(&summary.coverage),
        ),
    }
}

pub fn merge(dirs: Vec<PathBuf>, out: PathBuf, shards: Option<u64>, verbosity: Verbosity) -> u8 {
    let options = merge::MergeOptions { dirs, out, shards };
    let summary = match merge::merge(&options) {
        Ok(summary) => summary,
        Err(e) => {
            term::error(e);
            return exit::BAD_INPUT;
        }
    };
    let failed = summary.failed().count();
    if verbosity != Verbosity::Quiet || failed > 0 || !summary.complete() {
        println!(
            "merged {} run(s) from {} shard(s): {failed} failed",
            summary.records.len(),
            summary.dirs
        );
        print_failures(summary.failed());
        println!(
            "summary: {}",
            printable(&summary.out.join("summary.md").display().to_string())
        );
    }
    if let Some(note) = summary.incomplete() {
        term::warning(format!("incomplete: {note}"));
    }
    if let Some(coverage) = &summary.coverage {
        print_coverage(coverage);
    }
    exit::of_covered_sweep(
        false,
        summary.complete(),
        &summary.records,
        summary.coverage.as_ref(),
    )
}

/// The ledger's verdict on the terminal: unreached probes (an error when judged)
/// and variants with few distinct trails (a warning).
fn print_coverage(coverage: &crate::drive::sweep::meta::CoverageReport) {
    for u in &coverage.verdict.unreached {
        let text = format!(
            "probe `{}` of model `{}` was never reached: {}",
            u.probe, u.model, u.summary
        );
        if coverage.judged {
            term::error(text);
        } else {
            term::warning(format!(
                "{text} (this shard; merge judges the shards together)"
            ));
        }
    }
    for n in &coverage.verdict.not_judged {
        let text = format!(
            "liveness invariant `{}` of model `{}` could not be judged in {} of {} run(s) (first: seed {} of {}: {}); add it to `heal: {{unjudged: [...]}}` to accept that",
            n.invariant, n.model, n.runs, n.of_runs, n.first_seed, n.scenario, n.why
        );
        if coverage.judged {
            term::error(text);
        } else {
            term::warning(format!(
                "{text} (this shard; merge judges the shards together)"
            ));
        }
    }
    for (variant, runs, distinct) in &coverage.verdict.few_trails {
        term::warning(format!(
            "{variant}: {runs} run(s) gave only {distinct} distinct trail(s)"
        ));
    }
}

pub fn shrink(report: PathBuf, out: Option<PathBuf>, budget: u64, verbosity: Verbosity) -> u8 {
    let options = crate::drive::shrink::ShrinkOptions {
        report,
        out,
        budget: budget as usize,
        quiet: verbosity == Verbosity::Quiet,
    };
    match crate::drive::shrink::shrink(&options) {
        Ok(summary) => {
            if options.out.is_none() {
                print!("{}", summary.text);
            }
            exit::OK
        }
        Err(e) => {
            term::error(e);
            exit::BAD_INPUT
        }
    }
}

pub fn import(trace: &Path, mapping: &Path, out: Option<&Path>) -> u8 {
    match crate::drive::import::import(trace, mapping, out) {
        Ok(summary) => {
            if summary.written.is_none() {
                print!("{}", summary.text);
            }
            eprintln!("{summary}");
            exit::OK
        }
        Err(errors) => {
            for e in &errors.0 {
                anstream::eprintln!("{e}");
            }
            exit::BAD_INPUT
        }
    }
}

/// `faultline bench --histories`: the consistency checker's table.
pub fn bench_histories(out: Option<&std::path::Path>) -> u8 {
    match crate::judge::consistency::bench::bench(out) {
        Ok(section) => {
            print!("{section}");
            exit::OK
        }
        Err(e @ crate::judge::consistency::bench::Error::NotPassed(_)) => {
            term::error(e);
            exit::FAILED
        }
        Err(e) => {
            term::error(e);
            exit::BAD_INPUT
        }
    }
}

pub fn bench(options: crate::drive::bench::BenchOptions) -> u8 {
    match crate::drive::bench::bench(&options) {
        Ok(summary) => {
            print!("{}", summary.text);
            if let Some(out) = &summary.written {
                eprintln!("bench: wrote {}", printable(&out.display().to_string()));
            }
            exit::OK
        }
        Err(crate::drive::bench::Error::Load(failures)) => {
            term::load_failures(&failures);
            exit::BAD_INPUT
        }
        Err(e) => {
            term::error(e);
            exit::BAD_INPUT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::Outcome;
    use crate::judge::check::Finding;
    use crate::report::groups::failing;

    #[test]
    fn failures_print_one_line_per_signature_then_its_seeds() {
        let consistency = |m: &str| Finding::new("consistency", Some(Outcome::Violated), m);
        let mut records: Vec<RunRecord> = (1..=30)
            .rev()
            .map(|s| failing(s, Outcome::Violated, vec![consistency(&format!("op {s}"))]))
            .collect();
        records.push(failing(40, Outcome::Stuck, vec![]));
        let lines: Vec<String> = failure_lines(records.iter())
            .iter()
            .map(|l| crate::report::strip_styles(l))
            .collect();
        assert_eq!(
            lines,
            [
                "  FAIL kv [buggy] violated (consistency) \u{d7}30, first seed 1  replay: faultline run scenarios/kv.yaml --variant buggy --seed 1",
                "    seeds: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 10 more",
                "  FAIL kv [buggy] stuck (no finding) \u{d7}1, first seed 40  replay: faultline run scenarios/kv.yaml --variant buggy --seed 40",
                "    seeds: 40",
            ]
        );
    }
}
