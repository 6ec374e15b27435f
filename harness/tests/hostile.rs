//! The command line under attack: non-regular files, link cycles, links planted in
//! report directories, huge seed ranges, damaged results files, concurrent
//! sweeps, a full disk, control characters, and the messages a user reads when
//! something is wrong. Each test is one defect that was found by attacking the
//! CLI, with the input that showed it.

mod common;

use faultline::cli::exit;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("hostile", name)
}

const SCENARIO: &str =
    "model: faulty\nnodes: [a]\nexpect: converged\nsteps:\n  - client: {on: a, op: set, key: k, value: v}\n";

fn scenario(dir: &Path, file: &str, name: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, format!("name: {name}\n{SCENARIO}")).unwrap();
    path
}

/// Run faultline, failing the test (instead of hanging it) after `limit`.
fn faultline_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(common::workspace())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: a watchdog on a real child process"
    )]
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "faultline {args:?} still running after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run(args: &[&str]) -> Output {
    faultline_within(args, Duration::from_secs(120))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- 2. non-regular files ----

#[test]
fn fifos_and_devices_are_refused_everywhere_a_file_is_read() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("pipe.yaml");
    mkfifo(&fifo);
    let limit = Duration::from_secs(60);
    // A scenario given directly, and one met while walking a directory.
    for args in [
        vec!["validate", s(&fifo)],
        vec!["validate", s(&dir)],
        vec!["validate", "/dev/zero"],
        vec!["replay", s(&fifo)],
        vec!["replay", "/dev/urandom"],
        vec!["report", "/dev/zero"],
        vec!["shrink", s(&fifo)],
        vec!["import", s(&fifo), "--mapping", "/dev/zero"],
    ] {
        let out = faultline_within(&args, limit);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not a regular file"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // merge: a shard whose results.jsonl is a fifo.
    let shard = dir.join("shard");
    std::fs::create_dir(&shard).unwrap();
    mkfifo(&shard.join("results.jsonl"));
    let out = faultline_within(&["merge", s(&shard), "--out", s(&dir.join("m"))], limit);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    // The scenario path stored in a report: replay refuses it too.
    let report = dir.join("report.json");
    let good = faultline::sim::runner::run(
        &common::load_text("x.yaml", SCENARIO),
        &common::load_text("x.yaml", SCENARIO).variants[0],
        1,
    );
    let mut json = serde_json::to_value(&good).unwrap();
    json["file"] = serde_json::json!(s(&fifo));
    std::fs::write(&report, serde_json::to_vec(&json).unwrap()).unwrap();
    let out = faultline_within(&["replay", s(&report)], limit);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 3. link cycles ----

#[test]
fn directory_link_cycles_are_walked_once() {
    let dir = temp_dir("cycle");
    scenario(&dir, "a.yaml", "a");
    scenario(&dir, "b.yaml", "b");
    symlink(".", dir.join("l1")).unwrap();
    symlink(".", dir.join("l2")).unwrap();
    symlink(&dir, dir.join("l3")).unwrap();
    let out = run(&["validate", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    let out = run(&["list", "--scenarios", s(&dir)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.contains("[faulty]"))
            .count(),
        2,
        "{}",
        stdout(&out)
    );
    let files = faultline::lang::scenario::scenario_files(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_link_loop_is_called_a_loop_not_a_missing_file() {
    let dir = temp_dir("loop");
    symlink("self.yaml", dir.join("self.yaml")).unwrap();
    let out = run(&["validate", s(&dir.join("self.yaml"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("symbolic link loop"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("no such file"), "{}", stderr(&out));
    symlink("gone.yaml", dir.join("dangling.yaml")).unwrap();
    let out = run(&["validate", s(&dir.join("dangling.yaml"))]);
    assert!(
        stderr(&out).contains("a symbolic link to a file that does not exist"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 4. huge seed ranges ----

#[test]
fn huge_seed_ranges_and_shard_counts_are_clear_errors_or_cheap() {
    let dir = temp_dir("seeds");
    let file = scenario(&dir, "a.yaml", "a");
    let out = run(&[
        "sweep",
        s(&file),
        "--seeds",
        "1..99999999999999",
        "--out",
        s(&dir.join("o1")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds 99999999999999 seeds; one sweep takes at most 1000000"),
        "{}",
        stderr(&out)
    );
    let out = faultline_within(
        &[
            "sweep",
            s(&file),
            "--seeds",
            "1..100",
            "--shard",
            "1/99999999999999",
            "--jobs",
            "1",
            "--out",
            s(&dir.join("o2")),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recorded = faultline::drive::sweep::results::read(&dir.join("o2/results.jsonl")).unwrap();
    assert_eq!(
        recorded.records.len(),
        1,
        "shard 1 of that many holds one run"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 7. damaged results files ----

#[test]
fn unreadable_result_lines_are_counted_kept_and_make_the_set_incomplete() {
    let dir = temp_dir("damaged");
    let file = scenario(&dir, "a.yaml", "a");
    let out_dir = dir.join("out");
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            s(&file),
            "--seeds",
            "1..6",
            "--jobs",
            "1",
            "--out",
            s(&out_dir),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_eq!(sweep(&[]).status.code(), Some(0));
    let results = out_dir.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "garbage");
    let damaged = lines.join("\n") + "\n";
    std::fs::write(&results, &damaged).unwrap();
    // merge: the five other records survive, the line is named, the set is incomplete.
    let merged = dir.join("merged");
    let out = run(&["merge", s(&out_dir), "--out", s(&merged)]);
    assert_eq!(
        out.status.code(),
        Some(exit::INCOMPLETE as i32),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("merged 6 run(s)"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("1 unreadable line(s) (line 3)"),
        "{}",
        stderr(&out)
    );
    let summary = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert!(summary.contains("**Incomplete:"), "{summary}");
    // A garbage-only file: nothing merged, and not a success either.
    let garbage = dir.join("garbage");
    std::fs::create_dir(&garbage).unwrap();
    std::fs::write(garbage.join("results.jsonl"), "not json\nnor this\n").unwrap();
    let out = run(&["merge", s(&garbage), "--out", s(&dir.join("m2"))]);
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    // resume: refused, and the file is exactly as it was (nothing truncated).
    let out = sweep(&["--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unreadable line(s) (line 3)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&results).unwrap(), damaged);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 8. links planted in report directories ----

#[test]
fn links_planted_in_a_report_tree_are_never_written_through() {
    let dir = temp_dir("plant");
    let outside = dir.join("outside");
    std::fs::create_dir(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let failing = dir.join("f.yaml");
    std::fs::write(
        &failing,
        format!(
            "name: f\n{}",
            SCENARIO.replace("expect: converged", "expect: diverged")
        ),
    )
    .unwrap();
    let untouched = |what: &str| {
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{what}"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "{what}");
    };
    // run --report-dir: the scenario's directory is a planted link.
    let reports = dir.join("reports");
    std::fs::create_dir(&reports).unwrap();
    symlink(&outside, reports.join("f")).unwrap();
    let out = run(&["run", s(&failing), "--report-dir", s(&reports)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a symbolic link inside the report directory"));
    untouched("scenario directory link");
    // run --report-dir: junit.xml is a planted link (replaced or refused, never followed).
    let reports2 = dir.join("reports2");
    std::fs::create_dir(&reports2).unwrap();
    symlink(&victim, reports2.join("junit.xml")).unwrap();
    // The temporary name an older faultline used, planted too.
    for pid in 1..64 {
        symlink(&victim, reports2.join(format!(".junit.xml.tmp.{pid}"))).unwrap();
    }
    let out = run(&["run", s(&failing), "--report-dir", s(&reports2)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    untouched("junit.xml link");
    // sweep: runs/ is a planted link.
    let sweep_out = dir.join("sweep");
    std::fs::create_dir(&sweep_out).unwrap();
    symlink(&outside, sweep_out.join("runs")).unwrap();
    let out = run(&[
        "sweep",
        s(&failing),
        "--seeds",
        "1..2",
        "--out",
        s(&sweep_out),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    untouched("runs link");
    // sweep --resume: results.jsonl is a planted link to a file outside.
    let sweep2 = dir.join("sweep2");
    std::fs::create_dir(&sweep2).unwrap();
    symlink(&victim, sweep2.join("results.jsonl")).unwrap();
    let out = run(&[
        "sweep",
        s(&failing),
        "--seeds",
        "1..2",
        "--resume",
        "--out",
        s(&sweep2),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    untouched("results.jsonl link");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 9. name collisions ----

#[test]
fn two_scenarios_with_one_name_are_refused_with_both_locations() {
    let dir = temp_dir("names");
    std::fs::create_dir(dir.join("one")).unwrap();
    std::fs::create_dir(dir.join("two")).unwrap();
    let first = scenario(&dir.join("one"), "x.yaml", "same");
    let second = scenario(&dir.join("two"), "y.yaml", "same");
    for command in ["run", "validate", "sweep"] {
        let mut args = vec![command, s(&dir)];
        let out_dir = dir.join("sweep-out");
        if command == "sweep" {
            args.extend(["--out", s(&out_dir)]);
        }
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        let want = format!(
            "{}:1:7: error: scenario name `same` is already the name of {}:1:7",
            second.display(),
            first.display()
        );
        assert!(stderr(&out).contains(&want), "{command}: {}", stderr(&out));
    }
    // Two files with the same stem in two folders and no `name:` collide too.
    let dir2 = temp_dir("stems");
    std::fs::create_dir(dir2.join("a")).unwrap();
    std::fs::create_dir(dir2.join("b")).unwrap();
    std::fs::write(dir2.join("a/s.yaml"), SCENARIO).unwrap();
    std::fs::write(dir2.join("b/s.yaml"), SCENARIO).unwrap();
    let out = run(&["validate", s(&dir2)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("scenario name `s` is already the name of"));
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&dir2).unwrap();
}

#[test]
fn the_dot_and_the_empty_name_get_their_own_report_directories() {
    let dir = temp_dir("dot");
    let reports = dir.join("reports");
    let text = "name: \".\"\nmodel: faulty\nnodes: [a]\nvariants:\n  \"\": {expect: converged}\n  \".\": {expect: converged}\n  \"_\": {expect: converged}\nsteps:\n  - client: {on: a, op: set, key: k, value: v}\n";
    let file = dir.join("dot.yaml");
    std::fs::write(&file, text).unwrap();
    let out = run(&["run", s(&file), "--report-dir", s(&reports)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut reports_written = Vec::new();
    for entry in walk(&reports) {
        if entry.file_name().is_some_and(|n| n == "report.json") {
            reports_written.push(entry);
        }
    }
    assert_eq!(reports_written.len(), 3, "{reports_written:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

// ---- 10. a lock on --out ----

#[test]
fn a_second_sweep_on_a_locked_out_directory_is_refused() {
    let dir = temp_dir("lock");
    let file = scenario(&dir, "a.yaml", "a");
    let out_dir = dir.join("out");
    let held = faultline::base::fsio::DirLock::try_new(&out_dir).unwrap();
    let out = run(&["sweep", s(&file), "--seeds", "1..2", "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another faultline process is writing this directory"),
        "{}",
        stderr(&out)
    );
    assert!(!out_dir.join("results.jsonl").exists());
    drop(held);
    let out = run(&["sweep", s(&file), "--seeds", "1..2", "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 12. a full disk ----

#[test]
fn a_write_that_fails_half_way_names_the_path_and_leaves_no_temporary_file() {
    use std::os::unix::process::CommandExt;
    let dir = temp_dir("full");
    let reports = dir.join("reports");
    let file = scenario(&dir, "a.yaml", "a");
    let mut command = Command::new(env!("CARGO_BIN_EXE_faultline"));
    command
        .args(["run", s(&file), "--report-dir", s(&reports)])
        .current_dir(common::workspace());
    // SAFETY: only async-signal-safe calls between fork and exec. Files may grow to
    // 4 KiB: the run's report is larger, so its write fails part-way (EFBIG, as
    // ENOSPC would on a full disk), and SIGXFSZ is ignored so the write returns an
    // error instead of killing the process.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 4096,
                rlim_max: 4096,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = command.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let named = ["report.json", "report.html"].iter().any(|f| {
        stderr(&out).contains(&format!(
            "{}/a/default/seed-1/{f}: writing",
            reports.display()
        ))
    });
    assert!(named, "{}", stderr(&out));
    let leftovers: Vec<PathBuf> = walk(&reports)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 13. control characters ----

#[test]
fn control_characters_from_input_never_reach_the_terminal_raw() {
    let dir = temp_dir("controls");
    let text = "name: \"evil\\e[2J\\e]0;pwned\\a\\0x\\u202Etxt\"\nmodel: faulty\nnodes: [a]\nvariants:\n  \"v\\e[31m\": {expect: diverged}\nsteps:\n  - client: {on: a, op: set, key: k, value: v}\n";
    let file = dir.join("evil.yaml");
    std::fs::write(&file, text).unwrap();
    for args in [
        vec!["run", s(&file), "--color", "never"],
        vec!["run", s(&file), "-v", "--color", "never"],
        vec!["validate", s(&file), "--color", "never"],
        vec![
            "sweep",
            s(&file),
            "--seeds",
            "1..2",
            "--out",
            s(&dir.join("sw")),
            "--color",
            "never",
        ],
    ] {
        let out = run(&args);
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(['\u{1b}', '\u{7}', '\u{0}', '\u{202E}']),
                "{args:?}: {text:?}"
            );
        }
        let all = stdout(&out) + &stderr(&out);
        assert!(
            all.contains("\\u{1b}[31m"),
            "{args:?} shows the escape visibly: {all}"
        );
        if args[0] == "run" {
            assert!(
                all.contains("evil\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{0}x\\u{202e}txt"),
                "{all}"
            );
        }
    }
    // With colour forced on, the only escape sequences are our own styles.
    let out = run(&["run", s(&file), "--color", "always"]);
    let text = stdout(&out);
    assert!(text.contains("\u{1b}["), "styled: {text:?}");
    for (i, _) in text.match_indices('\u{1b}') {
        let rest = &text[i + 1..];
        assert!(rest.starts_with('['), "{text:?}");
        let end = rest.find(|c: char| c.is_ascii_alphabetic()).unwrap();
        assert_eq!(&rest[end..end + 1], "m", "only SGR styles: {text:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- 14. messages ----

#[test]
fn misleading_messages_now_say_what_is_wrong() {
    let dir = temp_dir("messages");
    let file = scenario(&dir, "a.yaml", "a");
    let plain = dir.join("plain-file");
    std::fs::write(&plain, "").unwrap();
    let out = run(&["sweep", s(&file), "--out", s(&plain)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is a file, not a directory"),
        "{}",
        stderr(&out)
    );
    let out = run(&["list", "--scenarios", s(&dir.join("missing"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a directory of scenarios"));
    let out = run(&["bench", "--repeat", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--repeat"), "{}", stderr(&out));
    // `heal: true` is accepted, as the format reference now says.
    let heal = dir.join("heal.yaml");
    std::fs::write(&heal, format!("name: h\nheal: true\n{SCENARIO}")).unwrap();
    assert_eq!(run(&["validate", s(&heal)]).status.code(), Some(0));
    let docs =
        std::fs::read_to_string(common::workspace().join("docs/scenario-format.md")).unwrap();
    let row = docs.lines().find(|l| l.starts_with("| `heal` |")).unwrap();
    assert!(row.contains("`true`"), "{row}");
    std::fs::remove_dir_all(&dir).unwrap();
}
