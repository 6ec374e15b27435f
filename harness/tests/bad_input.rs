//! The catalogue of malformed scenarios in `tests/bad_input/`: each file says, in
//! its first lines, the error it must produce (`# expect: LINE:COL: message`) and
//! optionally the help text (`# expect-hint: text`). Each must be rejected with that
//! error at that location, through the library and through the CLI (exit code 2).

use faultline::lang::scenario::{self, LoadError};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Expectation {
    loc: Option<(u32, u32)>,
    message: String,
    hint: Option<String>,
}

fn expectation(path: &Path) -> Expectation {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap();
    let rest = first
        .strip_prefix("# expect: ")
        .unwrap_or_else(|| panic!("{}: no `# expect:` line", path.display()));
    let mut parts = rest.splitn(3, ':');
    let (a, b) = (parts.next().unwrap(), parts.next());
    let (loc, message) = match (a.parse::<u32>(), b.and_then(|b| b.parse::<u32>().ok())) {
        (Ok(line), Some(col)) => (
            Some((line, col)),
            parts.next().unwrap_or("").trim().to_string(),
        ),
        _ => (None, rest.trim().to_string()),
    };
    let hint = text
        .lines()
        .find_map(|l| l.strip_prefix("# expect-hint: "))
        .map(str::to_string);
    Expectation { loc, message, hint }
}

fn catalogue() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn the_catalogue_is_large_enough() {
    assert!(
        catalogue().len() >= 30,
        "tests/bad_input holds {} files",
        catalogue().len()
    );
}

#[test]
fn every_bad_file_is_rejected_with_its_message_at_its_location() {
    for path in catalogue() {
        let want = expectation(&path);
        let diagnostics = match scenario::load(&path) {
            Ok(_) => panic!("{} was accepted", path.display()),
            Err(LoadError::Io(message)) => panic!("{}: io error {message}", path.display()),
            Err(LoadError::Invalid(d)) => d.0,
        };
        let found = diagnostics.iter().find(|d| {
            d.message.contains(&want.message)
                && want
                    .loc
                    .is_none_or(|(l, c)| d.loc.line == l && d.loc.col == c)
        });
        let Some(found) = found else {
            panic!(
                "{}: wanted {:?} {:?}, got {:#?}",
                path.display(),
                want.loc,
                want.message,
                diagnostics
            );
        };
        if let Some(hint) = &want.hint {
            let got = found.hint.clone().unwrap_or_default();
            assert!(
                got.contains(hint.as_str()),
                "{}: hint {got:?} lacks {hint:?}",
                path.display()
            );
        }
    }
}

#[test]
fn the_cli_exits_2_and_prints_file_line_col() {
    for path in catalogue() {
        let want = expectation(&path);
        let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
            .arg("validate")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let prefix = match want.loc {
            Some((l, c)) => format!("{}:{l}:{c}: error: ", path.display()),
            None => format!("{}:", path.display()),
        };
        assert!(
            stderr
                .lines()
                .any(|line| line.starts_with(&prefix) && line.contains(&want.message)),
            "{}: stderr lacks {prefix}{}:\n{stderr}",
            path.display(),
            want.message
        );
    }
}

#[test]
fn every_error_of_a_file_is_reported_not_only_the_first() {
    let text = "model: raftkv\nnodes: [n1, n2]\nexpect: converged\nsteps:\n  - crash: n9\n  - sleep: soon\n  - partiton: {}\n  - client: {op: putt}\n";
    let Err(LoadError::Invalid(d)) = scenario::load_str("multi.yaml", text) else {
        panic!("accepted")
    };
    let lines: Vec<u32> = d.0.iter().map(|d| d.loc.line).collect();
    assert_eq!(lines, vec![5, 6, 7, 8], "{d}");
}

#[test]
fn a_file_over_the_size_limit_is_refused_before_parsing() {
    let dir = std::env::temp_dir().join(format!("faultline-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.yaml");
    std::fs::write(
        &path,
        format!("model: raftkv\n# {}\n", "x".repeat(2 * 1024 * 1024)),
    )
    .unwrap();
    let Err(LoadError::Invalid(d)) = scenario::load(&path) else {
        panic!("accepted")
    };
    assert!(d.0[0].message.contains("the limit is 1048576"), "{d}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_file_and_a_directory_are_clear_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["validate", "no/such/file.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no/such/file.yaml: no such file or directory"));
}

/// Issue 26 item 8: a file with many mistakes shows all of them at once. serde
/// stops at a mapping's first error; the reader leaves that entry out and reads
/// again, an op's unknown fields are read the same way, and a client step
/// checks its node even when its op is unknown. Nothing that follows only from
/// an entry left out ("`await` needs exactly one condition", a field missing
/// because it was misspelt) is reported.
#[test]
fn every_mistake_of_a_file_is_reported_in_one_pass() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/many-mistakes.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let Err(LoadError::Invalid(diagnostics)) = scenario::load_str("many-mistakes.yaml", &text)
    else {
        panic!("the file must be rejected");
    };
    let found: Vec<(u32, u32)> = diagnostics
        .0
        .iter()
        .map(|d| (d.loc.line, d.loc.col))
        .collect();
    let expected = vec![
        (9, 18),  // defaults.seed: not an integer
        (9, 21),  // latncy
        (9, 51),  // timeot
        (10, 24), // param heartbeat_ms: fast
        (10, 30), // unknown param bogus
        (12, 14), // bug key CANARY-QUORUMM
        (12, 46), // outcome convergd
        (13, 29), // bug mode bugy (after the variant's unknown field)
        (13, 55), // variant field extra
        (15, 13), // await leadr
        (16, 18), // client on n9 (beside the unknown op)
        (16, 26), // op gett
        (17, 39), // op field valu
        (17, 50), // op field extra
        (18, 12), // duration 10q
        (19, 12), // node leaderr
        (20, 17), // partition between
        (20, 32), // partition and
        (21, 34), // point nope.point (its step's action cannot be read)
        (21, 54), // stall without a value
        (22, 22), // applied: x
        (23, 20), // heal setle
    ];
    assert_eq!(found, expected, "{diagnostics}");
    let text = diagnostics.to_string();
    assert!(!text.contains("needs exactly one condition"), "{text}");
    assert!(!text.contains("missing field `value`"), "{text}");
    assert!(
        text.contains("unknown node `leaderr`") && text.contains("did you mean `leader`?"),
        "a node reference suggests the roles too: {text}"
    );
}
