//! The `faultline` command line: flags (clap), the commands, and the only place
//! where a command's result becomes an exit code (`exit`). The library modules
//! return typed summaries and errors; nothing below `cli` prints a verdict or
//! picks a code.

mod batch;
mod child;
mod commands;
pub mod exit;
mod hunt;
mod list;
mod manual;
mod new;
mod term;

use clap::{Parser, Subcommand, ValueEnum};
use faultline_api::Model;
use std::path::PathBuf;
use std::process::ExitCode;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

pub use exit::BAD_INPUT as EXIT_BAD_INPUT;
pub use term::Verbosity;

#[derive(Parser, Debug)]
#[command(
    name = "faultline",
    version,
    about = "Deterministic fault-injection scenarios on turmoil",
    after_help = exit_help(),
    after_long_help = long_help()
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Show every run in full (faults, findings, digest), passing ones too.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Show failures only.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Colour: `auto` (on a terminal, unless NO_COLOR is set), `always`, `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EdnShapeArg {
    Generic,
    Register,
    ListAppend,
}

/// The JSON Schemas `faultline schema` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// A scenario file (for editors: `# yaml-language-server: $schema=...`).
    Scenario,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

fn exit_help() -> String {
    exit::help()
}

/// The end of `faultline --help` and of the man page: the exit codes, then the
/// environment and where the documentation is.
fn long_help() -> String {
    format!(
        "{}\n{}",
        exit::help(),
        "\
Environment: RUST_LOG sets the log filter (default `warn`); log lines go to \
stderr, stamped with simulated time. `RUST_LOG=faultline::trail=debug faultline \
run FILE` prints every trail event as it is recorded; add `,turmoil=trace` for the \
simulator's own steps and messages. NO_COLOR turns colour off (as --color never).

Documentation: the README, docs/scenario-format.md, docs/json.md."
    )
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenarios (files, or directories searched for *.yaml) and judge them.
    Run {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed for every run (default: each scenario's `defaults.seed`, else 1);
        /// one seed: a range of them is `faultline sweep PATHS --seeds 1..5`.
        #[arg(long, value_parser = parse_one_seed)]
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
        /// Stop after the first run that misses its expectation.
        #[arg(long)]
        fail_fast: bool,
        /// Override a bug mode in every variant run: `--bug HDDS-10798=buggy`
        /// (repeatable; the replay of a `hunt` find uses it).
        #[arg(long = "bug", value_name = "KEY=MODE")]
        bugs: Vec<String>,
        /// Override a model param in every variant run: `--param check_quorum=false`
        /// (repeatable; VALUE is YAML; a chaos section no longer draws it).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
    },
    /// Validate scenario files without running them.
    Validate {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List models (ops, fail points, invariants, bug keys, probes) and bundled
    /// scenarios: `faultline list raftkv` for one model and its scenarios.
    List {
        /// Only this model, and the scenarios of it.
        model: Option<String>,
        /// Where to look for scenarios [default: scenarios].
        #[arg(long)]
        scenarios: Option<PathBuf>,
        /// One JSON object: `models` (each declaration) and `scenarios` (file,
        /// model, variants, the variants whose target is not built).
        #[arg(long)]
        json: bool,
    },
    /// Write a commented starting scenario for a model, from its declarations:
    /// nodes, one client op, one fault, a buggy/fixed pair when the model has bug
    /// keys, and an `auto` chaos section: `faultline new raftkv -o my-test.yaml`.
    New {
        /// The model (`faultline list` shows them).
        model: String,
        /// Write the scenario here (default: print it); its name is the file's
        /// stem. An existing file is refused unless --force.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Replace the file --out names if it exists.
        #[arg(long, requires = "out")]
        force: bool,
    },
    /// Rerun a saved report.json and confirm the same trail digest.
    Replay { report: PathBuf },
    /// Run every scenario over a seed range, in parallel, resumable and shardable.
    Sweep {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed range, inclusive: `1..1000` (or one seed); at most 1,000,000 seeds.
        #[arg(long, default_value = "1..100")]
        seeds: String,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Take the K-th of N deterministic slices: `--shard 2/4`.
        #[arg(long)]
        shard: Option<String>,
        /// Output directory: results.jsonl, sweep.json, summaries, failing runs' reports.
        #[arg(long, default_value = "reports/sweep")]
        out: PathBuf,
        /// Stop starting new runs after this much wall time (`20m`); the sweep is
        /// then incomplete.
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
        /// Stop starting new runs after the first one that fails.
        #[arg(long)]
        fail_fast: bool,
        /// Spend the runs on guided search: per scenario and variant, as many
        /// runs as --seeds holds seeds, fresh seeds from its start and runs
        /// derived from earlier ones by editing their schedules; the search's
        /// corpus is kept in --out (guided/), and --resume continues it.
        #[arg(long)]
        guided: bool,
        /// Override a bug mode in every run, as `run --bug` (repeatable).
        #[arg(long = "bug", value_name = "KEY=MODE")]
        bugs: Vec<String>,
        /// Override a model param in every run, as `run --param` (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
    },
    /// Rerun the failing runs of an earlier sweep (its --out DIR), each as `run`
    /// runs one, with the sweep's --bug and --param: `faultline rerun-failed reports/sweep`.
    RerunFailed {
        dir: PathBuf,
        /// Write report.json per run, junit.xml and summary.md here.
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Print one JSON object per run instead of the readable summary.
        #[arg(long)]
        json: bool,
        /// Stop after the first run that misses its expectation.
        #[arg(long)]
        fail_fast: bool,
    },
    /// Reduce a failing run's report to a minimal scenario that fails the same way.
    Shrink {
        report: PathBuf,
        /// Write the scenario here (default: print it). Its name is this file's stem.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Most candidate runs to try.
        #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
        budget: u64,
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
        /// How many shards the sweep had (default: what the shards' sweep.json say).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        shards: Option<u64>,
    },
    /// Measure runs against a bare turmoil loop, sweep throughput and peak memory.
    Bench {
        /// Scenarios to time (default: the bundled ones).
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Runs per scenario variant; the median is reported.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
        repeat: u64,
        /// The scenario swept for runs per second.
        #[arg(long, default_value = "scenarios/raftkv/chaos.yaml")]
        sweep: PathBuf,
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
        sweep_seeds: u64,
        /// Also write the tables here (e.g. docs/performance.md).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Benchmark the consistency checker on generated histories instead
        /// (its own section of --out; the run tables are left as they are).
        #[arg(long)]
        histories: bool,
    },
    /// Export what clients saw in a saved report.json: JSON lines, or EDN in
    /// the shapes Jepsen's tools read (elle-cli, Knossos); docs/history.md.
    /// `history export REPORT` and `history REPORT` are the same command.
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        disable_help_subcommand = true,
        after_help = HISTORY_EXAMPLES
    )]
    History {
        #[command(subcommand)]
        export: Option<HistoryCommand>,
        #[command(flatten)]
        args: HistoryArgs,
    },
    /// The rediscovery benchmark: every chaos scenario once per bug key of its
    /// model (that key buggy, the rest fixed) and once all fixed, over seed ranges.
    Hunt {
        /// Where to look for chaos scenarios (default: the bundled ones).
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Seeds for each bug key, inclusive: `1..1000`.
        #[arg(long, default_value = "1..1000")]
        seeds: String,
        /// Seeds for the all-fixed controls (default: the same as --seeds).
        #[arg(long)]
        fixed_seeds: Option<String>,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Only this bug key (repeatable).
        #[arg(long = "key", value_name = "KEY")]
        keys: Vec<String>,
        /// Skip the all-fixed controls.
        #[arg(long)]
        no_fixed: bool,
        /// Exit 1 unless these keys are found (repeatable; `all` for every key).
        #[arg(long = "must-find", value_name = "KEY")]
        must_find: Vec<String>,
        /// Also write the table here (e.g. docs/exploration.md).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write only this section of --out (its own markers; the rest of the
        /// file is kept), e.g. one model's keys beside the full table.
        #[arg(long, value_name = "NAME")]
        section: Option<String>,
        /// Print the table as one JSON object.
        #[arg(long)]
        json: bool,
        /// Also measure guided search against swarm sampling: cut each key's
        /// seeds into this many blocks and run a guided search on each block's
        /// budget (0: off).
        #[arg(long, default_value_t = 0, value_name = "BLOCKS")]
        guided_trials: usize,
        /// Write guided finds here as scenario files (replayable with `faultline run`).
        #[arg(long, value_name = "DIR")]
        finds: Option<PathBuf>,
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
    /// Print a JSON Schema: `faultline schema scenario` is the scenario file's
    /// (docs/schema/scenario.schema.json), made from the reader's own types.
    Schema {
        #[arg(value_enum)]
        what: SchemaKind,
    },
    /// Render the HTML report of a saved report.json (no rerun).
    Report {
        report: PathBuf,
        /// Where to write it (default: the JSON's path with `.html`).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Internal: validate or run a scenario for a parent faultline process, which
    /// sends its text on stdin (runner::child).
    #[command(hide = true, name = "__child")]
    Child {
        #[command(subcommand)]
        what: child::ChildCommand,
    },
}

/// `run --seed`: one seed. A range (or a list) is a sweep's, and says so.
fn parse_one_seed(text: &str) -> Result<u64, String> {
    if text.contains("..") || text.contains(',') {
        return Err(format!(
            "`run` takes one seed; to run seeds {text}, use `faultline sweep PATHS --seeds {}`",
            text.replace(',', "..")
        ));
    }
    text.parse().map_err(|_| {
        format!(
            "a seed is a whole number from 0 to {}; a range of seeds is `faultline sweep PATHS --seeds 1..5`",
            u64::MAX
        )
    })
}

const HISTORY_EXAMPLES: &str = "\
Examples:
  faultline history export reports/s/default/seed-1/report.json
  faultline history export report.json -o history.jsonl
  faultline history export report.json --edn --shape register --key k1 -o k1.edn
  faultline history report.json --edn     (the same as `history export report.json --edn`)
A report file named `export` is `./export`.";

#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// Export a saved run's client history (as `faultline history REPORT`).
    #[command(after_help = HISTORY_EXAMPLES)]
    Export {
        #[command(flatten)]
        args: HistoryArgs,
    },
}

#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// The run's report.json.
    #[arg(required = true, value_name = "REPORT")]
    report: Option<PathBuf>,
    /// EDN instead of JSON lines.
    #[arg(long)]
    edn: bool,
    /// EDN shape: `generic` (every op as it is), `register` (Knossos's
    /// cas-register: reads and writes), `list-append` (Elle's txns).
    #[arg(long, value_enum, default_value_t = EdnShapeArg::Generic, requires = "edn")]
    shape: EdnShapeArg,
    /// With `--shape register`: this key only (Knossos checks one register);
    /// without, every key as `[key value]` tuples.
    #[arg(long)]
    key: Option<String>,
    /// Write it here (default: print it).
    #[arg(short, long)]
    out: Option<PathBuf>,
}

fn export_history(args: HistoryArgs) -> u8 {
    let HistoryArgs {
        report,
        edn,
        shape,
        key,
        out,
    } = args;
    let Some(report) = report else {
        term::error("history: give the run's report.json: `faultline history export REPORT`");
        return exit::BAD_INPUT;
    };
    let shape = edn.then_some(match shape {
        EdnShapeArg::Generic => crate::history::EdnShape::Generic,
        EdnShapeArg::Register => crate::history::EdnShape::Register { key },
        EdnShapeArg::ListAppend => crate::history::EdnShape::ListAppend,
    });
    commands::export_history(&report, shape.as_ref(), out.as_deref())
}

pub fn main_with(cli: Cli) -> ExitCode {
    let color = match cli.color {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    };
    color.write_global();
    let verbosity = if cli.quiet {
        Verbosity::Quiet
    } else if cli.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let code = match cli.command {
        Command::Run {
            paths,
            seed,
            variant,
            report_dir,
            json,
            fail_fast,
            bugs,
            params,
        } => commands::run(&commands::RunArgs {
            paths,
            seed,
            variant,
            report_dir,
            json,
            fail_fast,
            verbosity,
            overrides: crate::scenario::Overrides { bugs, params },
        }),
        Command::RerunFailed {
            dir,
            report_dir,
            json,
            fail_fast,
        } => commands::rerun_failed(
            &dir,
            &commands::RunArgs {
                paths: Vec::new(),
                seed: None,
                variant: None,
                report_dir,
                json,
                fail_fast,
                verbosity,
                overrides: Default::default(),
            },
        ),
        Command::Validate { paths } => commands::validate(&paths, verbosity),
        Command::List {
            model,
            scenarios,
            json,
        } => list::list(scenarios.as_deref(), model.as_deref(), json),
        Command::New { model, out, force } => new::new(&model, out.as_deref(), force),
        Command::Replay { report } => commands::replay(&report, verbosity),
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
            fail_fast,
            guided,
            bugs,
            params,
        } => batch::sweep(
            batch::SweepArgs {
                paths,
                seeds,
                jobs,
                shard,
                out,
                time_budget,
                resume,
                check_determinism,
                variant,
                fail_fast,
                guided,
                overrides: crate::scenario::Overrides { bugs, params },
            },
            verbosity,
        ),
        Command::Shrink {
            report,
            out,
            budget,
        } => batch::shrink(report, out, budget, verbosity),
        Command::Import {
            trace,
            mapping,
            out,
        } => batch::import(&trace, &mapping, out.as_deref()),
        Command::Merge { dirs, out, shards } => batch::merge(dirs, out, shards, verbosity),
        Command::Bench {
            out,
            histories: true,
            ..
        } => batch::bench_histories(out.as_deref()),
        Command::Bench {
            paths,
            repeat,
            sweep,
            sweep_seeds,
            out,
            histories: false,
        } => batch::bench(crate::bench::BenchOptions {
            paths,
            repeat: repeat as usize,
            sweep,
            sweep_seeds,
            out,
        }),
        Command::Report { report, output } => commands::render_report(&report, output.as_deref()),
        Command::Child { what } => child::serve(what),
        Command::History { export, args } => match export {
            Some(HistoryCommand::Export { args }) => export_history(args),
            None => export_history(args),
        },
        Command::Hunt {
            paths,
            seeds,
            fixed_seeds,
            jobs,
            keys,
            no_fixed,
            must_find,
            out,
            section,
            json,
            guided_trials,
            finds,
        } => hunt::hunt(hunt::HuntArgs {
            paths,
            seeds,
            fixed_seeds,
            jobs,
            keys,
            no_fixed,
            must_find,
            out,
            section,
            json,
            guided_trials,
            finds,
        }),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { out_dir } => manual::man(out_dir.as_deref()),
        Command::Schema { what } => manual::schema(what),
    };
    ExitCode::from(code)
}

/// Log lines carry simulated time, never the wall clock.
struct SimTime;

impl FormatTime for SimTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        match crate::runner::sim_time() {
            Some(t) => write!(w, "{:>10.3}s", t.as_secs_f64()),
            None => write!(w, "{:>11}", "harness"),
        }
    }
}

/// The `faultline` command line with the built-in models.
pub fn main() -> ExitCode {
    main_with_models(&[])
}

/// The `faultline` command line (`run`, `validate`, `list`, `sweep`, `shrink`,
/// `replay`, `report`, ...) with `models` added to the built-in ones. A crate
/// that implements the node API for its own service calls this from its `main`.
pub fn main_with_models(models: &[&'static (dyn Model + Sync)]) -> ExitCode {
    // Like other Unix tools, end quietly when the reader of stdout goes away
    // (`faultline list | head`) instead of panicking on a broken pipe.
    // SAFETY: setting a signal disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    tracing_subscriber::fmt()
        .with_timer(SimTime)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    if let Err(message) = crate::models::register(models) {
        eprintln!("error: {message}");
        return ExitCode::from(exit::BAD_INPUT);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and --version are successes; everything else is a usage error (2).
            return if e.use_stderr() {
                ExitCode::from(exit::BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    main_with(cli)
}
