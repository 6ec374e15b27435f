use clap::Parser;
use std::process::ExitCode;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

/// Log lines carry simulated time, never the wall clock.
struct SimTime;

impl FormatTime for SimTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        match faultline::runner::sim_time() {
            Some(t) => write!(w, "{:>10.3}s", t.as_secs_f64()),
            None => write!(w, "{:>11}", "harness"),
        }
    }
}

fn main() -> ExitCode {
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
    let cli = match faultline::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and --version are successes; everything else is a usage error (2).
            return if e.use_stderr() {
                ExitCode::from(faultline::cli::exit::BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    faultline::cli::main_with(cli)
}
