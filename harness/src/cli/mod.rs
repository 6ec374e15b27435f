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
stderr, stamped with simulated time. `RUST_LOG=faultline::base::trail=debug faultline \
run FILE` prints every trail event as it is recorded; add `,turmoil=trace` for the \
simulator's own steps and messages. NO_COLOR turns colour off (as --color never).

Documentation: the README, docs/scenario-format.md, docs/json.md."
    )
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenarios (files, or directories searched for *.yaml) and judge them.
    Run(commands::RunArgs),
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
    Sweep(batch::SweepArgs),
    /// Rerun the failing runs of an earlier sweep (its --out DIR), each as `run`
    /// runs one, with the sweep's --bug and --param: `faultline rerun-failed reports/sweep`.
    RerunFailed(commands::RerunArgs),
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
    Hunt(hunt::HuntArgs),
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
        EdnShapeArg::Generic => crate::judge::history::EdnShape::Generic,
        EdnShapeArg::Register => crate::judge::history::EdnShape::Register { key },
        EdnShapeArg::ListAppend => crate::judge::history::EdnShape::ListAppend,
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
        Command::Run(args) => commands::run(&commands::RunArgs { verbosity, ..args }),
        Command::RerunFailed(args) => commands::rerun_failed(&args.dir, &args.run_args(verbosity)),
        Command::Validate { paths } => commands::validate(&paths, verbosity),
        Command::List {
            model,
            scenarios,
            json,
        } => list::list(scenarios.as_deref(), model.as_deref(), json),
        Command::New { model, out, force } => new::new(&model, out.as_deref(), force),
        Command::Replay { report } => commands::replay(&report, verbosity),
        Command::Sweep(args) => batch::sweep(args, verbosity),
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
        } => batch::bench(crate::drive::bench::BenchOptions {
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
        Command::Hunt(args) => hunt::hunt(args),
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
        match crate::sim::runner::sim_time() {
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
    if let Err(message) = crate::base::models::register(models) {
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
