//! What stops a sweep or a merge before it can judge its runs. The command line
//! maps every one of these to the bad-input exit code; the verdicts (failed runs,
//! lost coverage) are in the summaries, not here.

use super::results::OpenError;
use crate::base::fsio;
use crate::lang::scenario::LoadFailures;
use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// Scenario files that did not load.
    Load(LoadFailures),
    /// A bad option or input value; the text says which and why.
    Input(String),
    /// A file could not be read or written.
    Io(fsio::Error),
    /// The output directory is locked by another process, or is not a directory.
    Lock(fsio::LockError),
    /// The results file cannot be continued.
    Results(OpenError),
    /// A run could not be done or recorded (a scenario that stopped loading, a
    /// report that could not be written).
    Run(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load(failures) => write!(f, "{failures}"),
            Error::Input(message) | Error::Run(message) => write!(f, "{message}"),
            Error::Io(e) => write!(f, "{e}"),
            Error::Lock(e) => write!(f, "{e}"),
            Error::Results(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<fsio::Error> for Error {
    fn from(e: fsio::Error) -> Error {
        Error::Io(e)
    }
}
