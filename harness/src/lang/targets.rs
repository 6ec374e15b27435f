//! Targets: builds of a real system that scenarios pick per variant, as
//! `target: NAME@RELEASE` (`openraft@0.10.0-alpha.24`).
//!
//! Two releases of one library cannot share a Cargo graph, so each build is a
//! binary of its own: the faultline command line with that release's model
//! registered (`cli::main_with_models`). A process runs the variants whose target
//! one of its models provides ([`crate::base::models::providing`]) and hands the others
//! to the binary the targets manifest names, one child process per run.
//!
//! The manifest, `faultline-targets.yaml`, is found by walking up from the
//! scenario file's directory (or named by `FAULTLINE_TARGETS`):
//!
//! ```yaml
//! targets:
//!   openraft@0.10.0-alpha.24:
//!     binary: target/release/faultline-openraft-alpha24
//!     build: openraft/build
//! ```
//!
//! Paths are relative to the manifest's directory; `build` is the command that
//! makes the binary, shown when it is missing. `bugs` (optional) says which
//! published defects a release has (`buggy`) and which it fixed (`fixed`), by
//! report key: a model that is a build of a real system cannot switch a bug on,
//! so `hunt` keys on builds instead (docs/exploration.md).

use crate::lang::diag::{Diagnostic, Diagnostics};
use crate::lang::yaml::{self, from_node, Loc, Spanned, Value};
use faultline_api::{BugMode, BugSet};
use serde::Deserialize;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const MANIFEST: &str = "faultline-targets.yaml";
/// Names a manifest explicitly, for scenarios outside the tree that has one.
pub const MANIFEST_ENV: &str = "FAULTLINE_TARGETS";

/// Split `NAME@RELEASE`; both parts non-empty and free of spaces.
pub fn parse(target: &str) -> Result<(&str, &str), String> {
    let bad = || format!("target `{target}` is not NAME@RELEASE (e.g. `openraft@0.10.0-alpha.24`)");
    let (name, release) = target.split_once('@').ok_or_else(bad)?;
    let ok = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace) && !s.contains('@');
    if ok(name) && ok(release) {
        Ok((name, release))
    } else {
        Err(bad())
    }
}

/// One build, as the manifest describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    pub target: String,
    /// Absolute or relative to the current directory (resolved from the manifest's).
    pub binary: PathBuf,
    /// The command that makes the binary, as written (run from `dir`).
    pub build: String,
    /// The manifest's directory.
    pub dir: PathBuf,
    pub manifest: PathBuf,
    /// The published defects this release has or fixed, as the manifest says.
    pub bugs: BugSet,
}

impl Build {
    /// The binary exists; otherwise a message that says how to build it.
    pub fn check(&self) -> Result<(), String> {
        if self.binary.is_file() {
            return Ok(());
        }
        let from = if self.dir.as_os_str().is_empty() || self.dir == Path::new(".") {
            String::new()
        } else {
            format!(" in {}", self.dir.display())
        };
        Err(format!(
            "target {} is not built: {} does not exist; build it with `{}`{from}",
            self.target,
            self.binary.display(),
            self.build
        ))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    binary: Spanned<String>,
    build: String,
    #[serde(default)]
    bugs: std::collections::BTreeMap<String, BugMode>,
}

/// The manifest that applies to a scenario file: `FAULTLINE_TARGETS`, else the
/// nearest `faultline-targets.yaml` in its directory or above.
pub fn manifest_for(scenario_file: &Path) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(MANIFEST_ENV) {
        return Some(PathBuf::from(path));
    }
    let dir = scenario_file.parent().unwrap_or(Path::new("."));
    let start = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let absolute = std::fs::canonicalize(start).ok()?;
    let cwd = std::env::current_dir().ok();
    let mut at = Some(absolute.as_path());
    while let Some(dir) = at {
        let candidate = dir.join(MANIFEST);
        if candidate.is_file() {
            // Keep paths short and relative when the manifest is under the cwd.
            return Some(
                match cwd.as_deref().and_then(|c| candidate.strip_prefix(c).ok()) {
                    Some(relative) => relative.to_path_buf(),
                    None => candidate,
                },
            );
        }
        at = dir.parent();
    }
    None
}

/// Read a manifest: every target it lists, with locations for errors.
pub fn read_manifest(path: &Path) -> Result<Vec<Build>, String> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let root = yaml::parse(&text, &yaml::Limits::default())
        .map_err(|e| format!("{shown}:{}: error: {}", e.loc, e.message))?;
    let at = |loc: Loc, message: String| format!("{shown}:{loc}: error: {message}");
    let Some(targets) = root.get("targets") else {
        return Err(at(
            root.loc,
            "a targets manifest has one key, `targets`".into(),
        ));
    };
    if let Value::Map(entries) = &root.value {
        for (key, _) in entries {
            if key.as_str() != Some("targets") {
                return Err(at(
                    key.loc,
                    "unknown key; the manifest has only `targets`".into(),
                ));
            }
        }
    }
    let Value::Map(entries) = &targets.value else {
        return Err(at(
            targets.loc,
            "`targets` maps NAME@RELEASE to {binary, build}".into(),
        ));
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut builds = Vec::new();
    for (key, body) in entries {
        let Some(target) = key.as_str() else {
            return Err(at(key.loc, "a target is NAME@RELEASE".into()));
        };
        parse(target).map_err(|m| at(key.loc, m))?;
        let entry: RawEntry = from_node(body).map_err(|e| at(e.loc, e.message))?;
        builds.push(Build {
            target: target.to_string(),
            binary: dir.join(&entry.binary.value),
            build: entry.build,
            dir: dir.clone(),
            manifest: path.to_path_buf(),
            bugs: BugSet(entry.bugs),
        });
    }
    Ok(builds)
}

/// The build of `target` for a scenario file, or why there is none.
pub fn locate(scenario_file: &Path, target: &str) -> Result<Build, String> {
    let Some(manifest) = manifest_for(scenario_file) else {
        return Err(format!(
            "no {MANIFEST} in {} or above (and {MANIFEST_ENV} is not set): nothing says which binary runs target {target}",
            scenario_file.parent().unwrap_or(Path::new(".")).display()
        ));
    };
    let builds = read_manifest(&manifest)?;
    match builds.into_iter().find(|b| b.target == target) {
        Some(build) => Ok(build),
        None => Err(format!(
            "{} lists no target {target}; add it under `targets:` with its binary and build command",
            manifest.display()
        )),
    }
}

/// Where a variant's runs happen: the build's binary, or `None` when this
/// process has the model (built in, or registered by this binary).
pub fn elsewhere(scenario_file: &str, target: Option<&str>) -> Result<Option<Build>, String> {
    let build = resolve(scenario_file, target)?;
    if let Some(build) = &build {
        build.check()?;
    }
    Ok(build)
}

/// The build a variant's target names, built or not; `None` when this process
/// has the model. An error only when nothing says which binary it is (no
/// manifest, or the manifest does not list the target): that is bad input,
/// where a build that is listed but missing is only a run that cannot happen
/// yet ([`unbuilt`]).
pub fn resolve(scenario_file: &str, target: Option<&str>) -> Result<Option<Build>, String> {
    let Some(target) = target else {
        return Ok(None);
    };
    if crate::base::models::providing(target).is_some() {
        return Ok(None);
    }
    locate(Path::new(scenario_file), target).map(Some)
}

/// Why a variant cannot run here now: its target is listed in the manifest but
/// its binary does not exist. The message names the build command. Such a
/// variant is reported as not run (skipped), never as bad input or a failure.
pub fn unbuilt(scenario_file: &str, target: Option<&str>) -> Option<String> {
    resolve(scenario_file, target).ok()??.check().err()
}

/// How much of a failed child's stderr a message quotes.
const STDERR_TAIL_BYTES: usize = 4000;

/// One diagnostic as it crosses the process boundary.
#[derive(Serialize, Deserialize)]
pub struct WireDiagnostic {
    line: u32,
    col: u32,
    message: String,
    #[serde(default)]
    hint: Option<String>,
}

/// The bug modes of the build a variant's `target:` names (none for a variant
/// without one, or a target the manifest beside `scenario_file` lacks).
pub fn bugs_of(scenario_file: &Path, target: Option<&str>) -> faultline_api::BugSet {
    target
        .and_then(|t| locate(scenario_file, t).ok())
        .map(|b| b.bugs)
        .unwrap_or_default()
}

/// Validate a scenario in a target's binary: its diagnostics, located in `file`,
/// or why it could not say.
pub fn validate_in(
    binary: &Path,
    file: &str,
    text: &str,
) -> Result<(), Result<Diagnostics, String>> {
    let args = ["__child".to_string(), "validate".into(), file.to_string()];
    match call(binary, &args, text) {
        Ok((0, _, _)) => Ok(()),
        Ok((2, stdout, stderr)) => {
            let mut diagnostics = Diagnostics::default();
            for line in stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                if let Ok(d) = serde_json::from_slice::<WireDiagnostic>(line) {
                    let mut diagnostic = Diagnostic::new(
                        file,
                        Loc {
                            line: d.line,
                            col: d.col,
                        },
                        d.message,
                    );
                    diagnostic.hint = d.hint;
                    diagnostics.push(diagnostic);
                }
            }
            if diagnostics.is_empty() {
                return Err(Err(format!(
                    "{file}: {} rejected it: {}",
                    binary.display(),
                    tail(&stderr)
                )));
            }
            Err(Ok(diagnostics))
        }
        Ok((code, _, stderr)) => Err(Err(format!(
            "{file}: {} failed to validate it (exit {code}): {}",
            binary.display(),
            tail(&stderr)
        ))),
        Err(message) => Err(Err(format!("{file}: {message}"))),
    }
}

/// Start `binary` with `args`, send `input`, wait: (exit code, stdout, stderr).
pub fn call(
    binary: &Path,
    args: &[String],
    input: &str,
) -> Result<(i32, Vec<u8>, Vec<u8>), String> {
    // With RUST_LOG set the person is debugging: let the child's log lines through.
    let stderr = if std::env::var_os("RUST_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::piped()
    };
    let mut child = Command::new(binary)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = input.to_string();
    // Write from a thread: a child that answers before reading all of stdin must
    // not deadlock against a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {}: {e}", binary.display()))?;
    let _ = writer.join();
    // A child killed by a signal has no exit code: report it as 128 + signal, as a shell would.
    let code = output.status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + output.status.signal().unwrap_or(0)
    });
    Ok((code, output.stdout, output.stderr))
}

pub fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.len() <= STDERR_TAIL_BYTES {
        return text.to_string();
    }
    let mut start = text.len() - STDERR_TAIL_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}

/// A diagnostic as the child writes it: one JSON line.
pub fn wire_diagnostic(d: &Diagnostic) -> String {
    let wire = WireDiagnostic {
        line: d.loc.line,
        col: d.loc.col,
        message: d.message.clone(),
        hint: d.hint.clone(),
    };
    serde_json::to_string(&wire).expect("diagnostics serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_name_at_release() {
        assert_eq!(
            parse("openraft@0.10.0-alpha.24").unwrap(),
            ("openraft", "0.10.0-alpha.24")
        );
        for bad in ["openraft", "@1", "x@", "a@b@c", "a b@1"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_manifest_names_binaries_relative_to_itself_and_a_missing_one_says_how_to_build_it() {
        let dir = std::env::temp_dir().join(format!("faultline-targets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("scenarios/x")).unwrap();
        std::fs::write(
            dir.join(MANIFEST),
            "targets:\n  sys@1.0:\n    binary: build/out/sys-1\n    build: build/make\n",
        )
        .unwrap();
        let scenario = dir.join("scenarios/x/s.yaml");
        let build = locate(&scenario, "sys@1.0").unwrap();
        assert!(build.binary.ends_with("build/out/sys-1"));
        let missing = build.check().unwrap_err();
        assert!(missing.contains("not built"), "{missing}");
        assert!(missing.contains("`build/make`"), "{missing}");
        let unknown = locate(&scenario, "sys@2.0").unwrap_err();
        assert!(unknown.contains("lists no target sys@2.0"), "{unknown}");
        std::fs::write(
            dir.join(MANIFEST),
            "targets:\n  sys@1.0:\n    binary: b\n    buidl: x\n",
        )
        .unwrap();
        let typo = locate(&scenario, "sys@1.0").unwrap_err();
        assert!(typo.contains(":4:"), "located: {typo}");
        // A release's published defects, by key; a mode that is neither is refused.
        std::fs::write(
            dir.join(MANIFEST),
            "targets:\n  sys@1.0:\n    binary: b\n    build: x\n    bugs: {SYS-1: buggy, SYS-2: fixed}\n",
        )
        .unwrap();
        let build = locate(&scenario, "sys@1.0").unwrap();
        assert_eq!(build.bugs.0.get("SYS-1"), Some(&BugMode::Buggy));
        assert_eq!(build.bugs.0.get("SYS-2"), Some(&BugMode::Fixed));
        std::fs::write(
            dir.join(MANIFEST),
            "targets:\n  sys@1.0:\n    binary: b\n    build: x\n    bugs: {SYS-1: broken}\n",
        )
        .unwrap();
        let bad = locate(&scenario, "sys@1.0").unwrap_err();
        assert!(bad.contains(":5:"), "located: {bad}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
