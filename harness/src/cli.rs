//! The `faultline` command line. Exit codes: 0 every run met its expectation,
//! 1 some run did not, 2 bad input or usage.

use crate::report;
use crate::runner;
use crate::scenario::{self, LoadError, Scenario};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;

/// The end of `faultline --help` and of the man page.
const AFTER_HELP: &str = "\
Exit status: 0 every run met its expectation, 1 some run did not, 2 bad input or \
usage, 130 a sweep stopped by SIGINT.

Environment: RUST_LOG sets the log filter (default `warn`); log lines go to \
stderr, stamped with simulated time. `RUST_LOG=faultline::trail=debug faultline \
run FILE` prints every trail event as it is recorded; add `,turmoil=trace` for the \
simulator's own steps and messages.

Documentation: the README, docs/scenario-format.md, docs/json.md.";

#[derive(Parser, Debug)]
#[command(
    name = "faultline",
    version,
    about = "Deterministic fault-injection scenarios on turmoil",
    after_long_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenarios (files, or directories searched for *.yaml) and judge them.
    Run {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed for every run (default: each scenario's `defaults.seed`, else 1).
        #[arg(long)]
        seed: Option<u64>,
        /// Run only this variant.
        #[arg(long)]
        variant: Option<String>,
        /// Write report.json per run, junit.xml and summary.md here.
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Print one JSON object per variant run instead of the readable summary.
        #[arg(long)]
        json: bool,
    },
    /// Validate scenario files without running them.
    Validate {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List models (ops, fail points, invariants, bug keys) and bundled scenarios.
    List {
        /// Where to look for scenarios.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
    },
    /// Rerun a saved report.json and confirm the same trail digest.
    Replay { report: PathBuf },
    /// Run every scenario over a seed range, in parallel, resumable and shardable.
    Sweep {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed range, inclusive: `1..1000` (or one seed).
        #[arg(long, default_value = "1..100")]
        seeds: String,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Take the K-th of N deterministic slices: `--shard 2/4`.
        #[arg(long)]
        shard: Option<String>,
        /// Output directory: results.jsonl, summaries, failing runs' reports.
        #[arg(long, default_value = "reports/sweep")]
        out: PathBuf,
        /// Stop starting new runs after this much wall time (`20m`).
        #[arg(long)]
        time_budget: Option<String>,
        /// Continue a sweep in --out, skipping runs already recorded.
        #[arg(long)]
        resume: bool,
        /// Rerun this percentage of runs and compare trail digests.
        #[arg(long, default_value_t = 0.0)]
        check_determinism: f64,
        /// Only this variant.
        #[arg(long)]
        variant: Option<String>,
    },
    /// Reduce a failing run's report to a minimal scenario that fails the same way.
    Shrink {
        report: PathBuf,
        /// Write the scenario here (default: print it).
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Most candidate runs to try.
        #[arg(long, default_value_t = 300)]
        budget: usize,
    },
    /// Turn a model checker's trace (ITF from Quint/Apalache, or TLC -dumpTrace json)
    /// into a scenario, with a mapping file (docs/trail-import.md).
    Import {
        trace: PathBuf,
        /// The mapping: spec actions to steps, spec variables to observations.
        #[arg(long)]
        mapping: PathBuf,
        /// Write the scenario here (default: print it).
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Join the results of sweep shards into one summary, junit.xml and dashboard.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long, default_value = "reports/merged")]
        out: PathBuf,
    },
    /// Measure runs against a bare turmoil loop, sweep throughput and peak memory.
    Bench {
        /// Scenarios to time (default: the bundled ones).
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Runs per scenario variant; the median is reported.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// The scenario swept for runs per second.
        #[arg(long, default_value = "scenarios/raftkv/chaos.yaml")]
        sweep: PathBuf,
        #[arg(long, default_value_t = 200)]
        sweep_seeds: u64,
        /// Also write the tables here (e.g. docs/performance.md).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print a completion script: `faultline completions bash > /etc/bash_completion.d/faultline`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `faultline man | man -l -`; with --out-dir, write
    /// faultline.1 and one page per subcommand there.
    Man {
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
    /// Render the HTML report of a saved report.json (no rerun).
    Report {
        report: PathBuf,
        /// Where to write it (default: the JSON's path with `.html`).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

pub fn main_with(cli: Cli) -> ExitCode {
    let code = match cli.command {
        Command::Run {
            paths,
            seed,
            variant,
            report_dir,
            json,
        } => run(
            &paths,
            seed,
            variant.as_deref(),
            report_dir.as_deref(),
            json,
        ),
        Command::Validate { paths } => validate(&paths),
        Command::List { scenarios } => list(&scenarios),
        Command::Replay { report } => replay(&report),
        Command::Sweep {
            paths,
            seeds,
            jobs,
            shard,
            out,
            time_budget,
            resume,
            check_determinism,
            variant,
        } => {
            match sweep_options(
                paths,
                &seeds,
                jobs,
                shard.as_deref(),
                out,
                time_budget.as_deref(),
                resume,
                check_determinism,
                variant,
            ) {
                Ok(options) => {
                    crate::sweep::catch_interrupts();
                    crate::sweep::sweep(&options)
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    EXIT_BAD_INPUT
                }
            }
        }
        Command::Shrink {
            report,
            out,
            budget,
        } => crate::shrink::shrink(&crate::shrink::ShrinkOptions {
            report,
            out,
            budget,
            quiet: false,
        }),
        Command::Import {
            trace,
            mapping,
            out,
        } => crate::import::import(&trace, &mapping, out.as_deref()),
        Command::Merge { dirs, out } => crate::sweep::merge::merge(&dirs, &out, false),
        Command::Bench {
            paths,
            repeat,
            sweep,
            sweep_seeds,
            out,
        } => crate::bench::bench(&crate::bench::BenchOptions {
            paths,
            repeat,
            sweep,
            sweep_seeds,
            out,
        }),
        Command::Report { report, output } => render_report(&report, output.as_deref()),
        Command::Completions { shell } => crate::manual::completions(shell),
        Command::Man { out_dir } => crate::manual::man(out_dir.as_deref()),
    };
    ExitCode::from(code)
}

/// Every scenario file under the given paths, sorted, directories searched recursively.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect(path, &mut files).map_err(|e| format!("{}: {e}", path.display()))?;
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    Ok(files)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        ) {
            out.push(path);
        }
    }
    Ok(())
}

/// Load every file; print every error of every file. `None` if any was bad.
pub fn load_all(paths: &[PathBuf]) -> Option<Vec<Scenario>> {
    let files = match scenario_files(paths) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("error: {message}");
            return None;
        }
    };
    if files.is_empty() {
        eprintln!("error: no scenario files (*.yaml) under the given paths");
        return None;
    }
    let mut scenarios = Vec::new();
    let mut bad = false;
    for file in files {
        match scenario::load(&file) {
            Ok(s) => scenarios.push(s),
            Err(LoadError::Io(message)) => {
                eprintln!("error: {message}");
                bad = true;
            }
            Err(LoadError::Invalid(diagnostics)) => {
                eprint!("{diagnostics}");
                bad = true;
            }
        }
    }
    (!bad).then_some(scenarios)
}

fn run(
    paths: &[PathBuf],
    seed: Option<u64>,
    variant: Option<&str>,
    report_dir: Option<&Path>,
    json: bool,
) -> u8 {
    let Some(scenarios) = load_all(paths) else {
        return EXIT_BAD_INPUT;
    };
    if let Some(v) = variant {
        if !scenarios.iter().any(|s| s.variant(v).is_some()) {
            eprintln!("error: no scenario has a variant named `{v}`");
            return EXIT_BAD_INPUT;
        }
    }
    let mut results: Vec<report::RunRecord> = Vec::new();
    for scenario in &scenarios {
        for v in scenario
            .variants
            .iter()
            .filter(|v| variant.is_none_or(|name| v.name == name))
        {
            let result = runner::run(scenario, v, seed.unwrap_or(scenario.settings.seed));
            if json {
                println!("{}", report::json_line(&result));
            } else {
                print!("{}", report::terminal_summary(&result));
            }
            let mut record = report::RunRecord::of(&result).started_now();
            if let Some(dir) = report_dir {
                // Written as each run ends, so a later failure loses nothing.
                match report::write_run(dir, &result) {
                    Ok(path) => {
                        record.report = path.strip_prefix(dir).ok().map(|p| p.display().to_string())
                    }
                    Err(e) => {
                        eprintln!(
                            "error: writing the report of {} [{}]: {e}",
                            result.scenario, result.variant
                        );
                        return EXIT_BAD_INPUT;
                    }
                }
            }
            results.push(record);
        }
    }
    if let Some(dir) = report_dir {
        if let Err(e) = report::write_summaries(dir, &results) {
            eprintln!("error: writing summaries to {}: {e}", dir.display());
            return EXIT_BAD_INPUT;
        }
    }
    let failed = results.iter().filter(|r| !r.passed).count();
    if !json {
        println!(
            "{} run(s): {} passed, {failed} failed",
            results.len(),
            results.len() - failed
        );
    }
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

fn validate(paths: &[PathBuf]) -> u8 {
    let Some(scenarios) = load_all(paths) else {
        return EXIT_BAD_INPUT;
    };
    for s in &scenarios {
        let variants: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
        println!(
            "ok {} ({}; {} step(s); variants: {})",
            s.file,
            s.model.info().name,
            s.steps.len(),
            variants.join(", ")
        );
    }
    EXIT_OK
}

fn list(scenarios_dir: &Path) -> u8 {
    for model in nodes::registry::models() {
        let info = model.info();
        println!("model {}: {}", info.name, info.summary);
        let roles: Vec<String> = info
            .roles
            .iter()
            .map(|r| format!("{} ({}..={})", r.name, r.count_min, r.count_max))
            .collect();
        println!("  roles: {}", roles.join(", "));
        println!("  params:");
        for p in &info.params {
            let default = p
                .default
                .as_ref()
                .map(|d| format!("default {d}"))
                .unwrap_or_else(|| "no default".into());
            println!(
                "    {:<32} {} ({default}): {}",
                p.name,
                p.kind.describe(),
                p.summary
            );
        }
        println!("  ops:");
        for op in &info.ops {
            println!("    {:<20} {}  e.g. {}", op.name, op.summary, op.example);
        }
        println!("  fail points:");
        for p in &info.fail_points {
            let mut actions = Vec::new();
            if !p.errors.is_empty() {
                actions.push(format!("error: {}", p.errors.join("|")));
            }
            if p.stall {
                actions.push("stall".into());
            }
            if p.panic {
                actions.push("panic".into());
            }
            println!("    {:<28} {} [{}]", p.name, p.summary, actions.join(", "));
        }
        println!("  invariants:");
        for i in &info.invariants {
            println!("    {:<28} ({:?}) {}", i.name, i.kind, i.summary);
        }
        println!("  bugs:");
        for b in &info.bugs {
            println!("    {:<16} {}", b.key, b.summary);
        }
        println!();
    }
    if scenarios_dir.is_dir() {
        println!("bundled scenarios ({}):", scenarios_dir.display());
        match scenario_files(&[scenarios_dir.to_path_buf()]) {
            Ok(files) => {
                for file in files {
                    match scenario::load(&file) {
                        Ok(s) => {
                            let v: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
                            println!(
                                "  {} [{}] variants: {}",
                                file.display(),
                                s.model.info().name,
                                v.join(", ")
                            );
                        }
                        Err(_) => println!(
                            "  {} (invalid: run `faultline validate` on it)",
                            file.display()
                        ),
                    }
                }
            }
            Err(message) => eprintln!("error: {message}"),
        }
    }
    EXIT_OK
}

fn replay(path: &Path) -> u8 {
    let saved = match report::read_run(path) {
        Ok(r) => r,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_BAD_INPUT;
        }
    };
    let scenario = match scenario::load(Path::new(&saved.file)) {
        Ok(s) => s,
        Err(e) => {
            eprint!(
                "error: the report's scenario {} no longer loads:\n{e}",
                saved.file
            );
            return EXIT_BAD_INPUT;
        }
    };
    if scenario.sha256 != saved.scenario_sha256 {
        eprintln!(
            "warning: {} changed since the report was written (sha256 differs)",
            saved.file
        );
    }
    let Some(variant) = scenario.variant(&saved.variant) else {
        eprintln!(
            "error: {} has no variant `{}` any more",
            saved.file, saved.variant
        );
        return EXIT_BAD_INPUT;
    };
    let rerun = runner::run(&scenario, variant, saved.seed);
    print!("{}", report::terminal_summary(&rerun));
    if rerun.trail_digest == saved.trail_digest {
        println!("replay: same trail digest {}", rerun.trail_digest);
        EXIT_OK
    } else {
        println!(
            "replay: DIFFERENT trail digest: saved {} now {}",
            saved.trail_digest, rerun.trail_digest
        );
        if let Some((i, a, b)) =
            crate::trail::first_difference(&saved.trail.events, &rerun.trail.events)
        {
            println!("  first difference at event {i}:\n    saved: {a:?}\n    now:   {b:?}");
        }
        EXIT_FAILED
    }
}

#[allow(clippy::too_many_arguments)] // one per command-line flag
fn sweep_options(
    paths: Vec<PathBuf>,
    seeds: &str,
    jobs: Option<usize>,
    shard: Option<&str>,
    out: PathBuf,
    time_budget: Option<&str>,
    resume: bool,
    check_determinism: f64,
    variant: Option<String>,
) -> Result<crate::sweep::SweepOptions, String> {
    if !(0.0..=100.0).contains(&check_determinism) {
        return Err(format!(
            "--check-determinism is a percentage in 0..=100, got {check_determinism}"
        ));
    }
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if jobs == 0 || jobs > 256 {
        return Err("--jobs is 1..=256".into());
    }
    Ok(crate::sweep::SweepOptions {
        paths,
        seeds: crate::sweep::parse_seeds(seeds)?,
        jobs,
        shard: shard.map(crate::sweep::parse_shard).transpose()?,
        out,
        time_budget: time_budget
            .map(|t| crate::duration::parse(t).map_err(|e| format!("--time-budget: {e}")))
            .transpose()?,
        resume,
        check_determinism,
        variant,
        quiet: false,
    })
}

fn render_report(path: &Path, output: Option<&Path>) -> u8 {
    let saved = match report::read_run(path) {
        Ok(r) => r,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_BAD_INPUT;
        }
    };
    let out = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| path.with_extension("html"));
    if let Err(e) = report::atomic_write(&out, report::run_html(&saved).as_bytes()) {
        eprintln!("error: writing {}: {e}", out.display());
        return EXIT_BAD_INPUT;
    }
    println!("wrote {}", out.display());
    EXIT_OK
}
