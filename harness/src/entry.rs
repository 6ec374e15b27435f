//! The process entry point of every faultline binary: the `faultline` binary
//! itself, and the binary of any crate that puts its own service on the harness
//! and registers its model with [`main_with_models`].

use crate::cli::{Cli, EXIT_BAD_INPUT};
use clap::Parser;
use nodes::api::Model;
use std::process::ExitCode;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

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
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and --version are successes; everything else is a usage error (2).
            return if e.use_stderr() {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    crate::cli::main_with(cli)
}
