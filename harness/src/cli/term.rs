//! Printing to the terminal: how much (`-q`, `-v`), errors, and scenario
//! diagnostics with their source excerpts. Everything styled goes through
//! `anstream`, which drops the styles when the stream is not a terminal, when
//! `NO_COLOR` is set, or with `--color never`.

use crate::lang::diag;
use crate::lang::scenario::{LoadError, LoadFailures};
use crate::report::Detail;
use anstyle::{AnsiColor, Style};

/// How much a command prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// Failures only.
    Quiet,
    /// One line per passing run, the full block per failure.
    #[default]
    Normal,
    /// Everything.
    Verbose,
}

impl Verbosity {
    pub fn detail(self) -> Detail {
        match self {
            Verbosity::Verbose => Detail::Full,
            Verbosity::Quiet | Verbosity::Normal => Detail::Normal,
        }
    }
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();

/// `error: <message>` on stderr.
pub fn error(message: impl std::fmt::Display) {
    let text = message.to_string();
    anstream::eprintln!("{ERROR}error:{ERROR:#} {}", text.trim_end());
}

/// `warning: <message>` on stderr.
pub fn warning(message: impl std::fmt::Display) {
    anstream::eprintln!("{WARNING}warning:{WARNING:#} {message}");
}

/// Every failure of a set of scenario files: diagnostics with excerpts, read
/// errors as `error:` lines.
pub fn load_failures(failures: &LoadFailures) {
    for failure in &failures.0 {
        match &failure.error {
            LoadError::Io(message) => error(message),
            LoadError::Invalid(diagnostics) => {
                anstream::eprint!("{}", diag::render(diagnostics, failure.source.as_deref()));
            }
        }
    }
}
