//! Finding and reading scenario files: the paths a user gives, directories walked
//! for `*.yaml`, every file read with a hard cap, and the set checked for name
//! collisions (two runs with one name would share one report directory and one
//! JUnit entry).
//!
//! Directory walks follow symbolic links to directories but walk each directory
//! once, known by its device and inode: a link back up the tree (`l -> .`) adds
//! nothing, and two of them cannot make the walk exponential.

use super::validate::{load_str, LoadError, FILE_BYTES_MAX};
use super::Scenario;
use crate::base::fsio::{self, io_text};
use crate::base::text::printable;
use crate::lang::diag::{Diagnostic, Diagnostics};
use crate::lang::yaml::Loc;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file that did not load, with its text when it could be read (for excerpts).
#[derive(Debug)]
pub struct LoadFailure {
    pub file: String,
    pub error: LoadError,
    pub source: Option<String>,
}

impl LoadFailure {
    fn io(message: String) -> LoadFailure {
        LoadFailure {
            file: String::new(),
            error: LoadError::Io(message),
            source: None,
        }
    }
}

/// Every failure of a set of files, in file order.
#[derive(Debug, Default)]
pub struct LoadFailures(pub Vec<LoadFailure>);

impl fmt::Display for LoadFailures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for failure in &self.0 {
            write!(f, "{}", failure.error)?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadFailures {}

/// Every scenario file under the given paths, sorted per directory, directories
/// searched recursively (see the module doc for links).
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut walked = BTreeSet::new();
    for path in paths {
        let shown = printable(&path.display().to_string()).into_owned();
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => walk(path, &mut walked, &mut files)
                .map_err(|e| format!("{shown}: {}", io_text(&e)))?,
            Ok(_) => files.push(path.clone()),
            Err(e) => {
                let dangling = std::fs::symlink_metadata(path).is_ok()
                    && e.kind() == std::io::ErrorKind::NotFound;
                return Err(if dangling {
                    format!("{shown}: a symbolic link to a file that does not exist")
                } else {
                    format!("{shown}: {}", io_text(&e))
                });
            }
        }
    }
    Ok(files)
}

fn walk(
    dir: &Path,
    walked: &mut BTreeSet<(u64, u64)>,
    out: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let m = std::fs::metadata(dir)?;
    if !walked.insert((m.dev(), m.ino())) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let is_yaml = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => walk(&path, walked, out)?,
            // A fifo or device named *.yaml is kept, so that loading it says what it is.
            Ok(_) if is_yaml => out.push(path),
            // A broken or looping link named *.yaml: loading it says which.
            Err(_) if is_yaml => out.push(path),
            _ => {}
        }
    }
    Ok(())
}

/// Validate a scenario's text as [`load`] validates a file's: a scenario whose
/// model is not in this process and whose variants name targets loads for
/// dispatch to their builds (`remote.rs`).
pub fn load_text(file: &str, text: &str) -> Result<Scenario, LoadError> {
    match super::remote::load(file, text) {
        Some(elsewhere) => elsewhere,
        None => load_str(file, text),
    }
}

/// Read and validate one scenario file.
pub fn load(path: &Path) -> Result<Scenario, LoadError> {
    load_with_source(path).map_err(|f| f.error)
}

fn load_with_source(path: &Path) -> Result<Scenario, LoadFailure> {
    let file = path.display().to_string();
    let failure = |error, source| LoadFailure {
        file: file.clone(),
        error,
        source,
    };
    let bytes = match fsio::read_capped(path, FILE_BYTES_MAX as u64) {
        Ok(bytes) => bytes,
        Err(e) => {
            let error = match e.kind {
                fsio::ErrorKind::TooLarge { limit } => invalid(
                    &file,
                    format!("file is more than {limit} bytes; the limit is {limit}"),
                ),
                fsio::ErrorKind::NotRegular(_) if path.is_dir() => LoadError::Io(format!(
                    "{}: is a directory; give a scenario file",
                    printable(&file)
                )),
                fsio::ErrorKind::Io { .. }
                | fsio::ErrorKind::NotRegular(_)
                | fsio::ErrorKind::Symlink => LoadError::Io(e.to_string()),
            };
            return Err(failure(error, None));
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|e| failure(invalid(&file, format!("file is not UTF-8 ({e})")), None))?;
    if let Some(elsewhere) = super::remote::load(&file, &text) {
        return elsewhere.map_err(|error| failure(error, Some(text)));
    }
    match load_str(&file, &text) {
        Ok(scenario) => Ok(scenario),
        Err(error) => Err(failure(error, Some(text))),
    }
}

fn invalid(file: &str, message: String) -> LoadError {
    LoadError::Invalid(Diagnostics(vec![Diagnostic::new(
        file,
        Loc { line: 1, col: 1 },
        message,
    )]))
}

/// Load every file under `paths`, reporting every error of every file, and refuse
/// two scenarios with one name (naming both files).
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, LoadFailures> {
    let files = scenario_files(paths).map_err(|m| LoadFailures(vec![LoadFailure::io(m)]))?;
    if files.is_empty() {
        return Err(LoadFailures(vec![LoadFailure::io(
            "no scenario files (*.yaml) under the given paths".into(),
        )]));
    }
    let mut scenarios = Vec::new();
    let mut failures = Vec::new();
    for file in files {
        match load_with_source(&file) {
            Ok(s) => match check_variants(&s) {
                Ok(()) => scenarios.push(s),
                Err(diagnostics) => failures.push(LoadFailure {
                    file: s.file.clone(),
                    error: LoadError::Invalid(diagnostics),
                    source: Some(s.source.to_string()),
                }),
            },
            Err(failure) => failures.push(failure),
        }
    }
    failures.extend(name_collisions(&scenarios));
    if failures.is_empty() {
        Ok(scenarios)
    } else {
        Err(LoadFailures(failures))
    }
}

/// A failure for every scenario whose name an earlier one already has.
fn name_collisions(scenarios: &[Scenario]) -> Vec<LoadFailure> {
    let mut first: BTreeMap<&str, &Scenario> = BTreeMap::new();
    let mut failures = Vec::new();
    for s in scenarios {
        match first.get(s.name.as_str()) {
            None => {
                first.insert(&s.name, s);
            }
            Some(earlier) => {
                let diagnostic = Diagnostic::new(
                    &s.file,
                    s.name_loc,
                    format!(
                        "scenario name `{}` is already the name of {}:{}:{}",
                        printable(&s.name),
                        printable(&earlier.file),
                        earlier.name_loc.line,
                        earlier.name_loc.col
                    ),
                )
                .hint(
                    "names must be unique in one run or sweep: reports, JUnit entries and \
                     results are keyed by them; give this file its own `name:`",
                );
                failures.push(LoadFailure {
                    file: s.file.clone(),
                    error: LoadError::Invalid(Diagnostics(vec![diagnostic])),
                    source: crate::base::fsio::read_capped(
                        Path::new(&s.file),
                        FILE_BYTES_MAX as u64,
                    )
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok()),
                });
            }
        }
    }
    failures
}

/// Every variant of a scenario names a target this process has or the targets
/// manifest lists. One diagnostic per variant that does not, located at the
/// variant. A listed build that is not built is no error here: its variants
/// are reported as not run ([`Scenario::unbuilt`]).
fn check_variants(scenario: &Scenario) -> Result<(), Diagnostics> {
    let mut diagnostics = Diagnostics::default();
    for v in &scenario.variants {
        if let Err(m) = crate::lang::targets::resolve(&scenario.file, v.target.as_deref()) {
            diagnostics.push(Diagnostic::new(
                &scenario.file,
                v.loc,
                format!("variant `{}`: {m}", v.name),
            ));
        }
    }
    if diagnostics.is_empty() {
        Ok(())
    } else {
        Err(diagnostics)
    }
}
