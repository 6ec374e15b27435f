//! The documented memory bound of validation (docs/scenario-format.md, "Limits"):
//! any file under the size limit is validated in under 256 MiB. Each worst case
//! this file can build is validated by a `faultline validate` child process, and
//! its peak resident set size is read from the kernel (wait4's rusage), not
//! estimated and not timed.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

const FILE_BYTES_MAX: usize = faultline::lang::scenario::FILE_BYTES_MAX;
const BOUND_KIB: i64 = 256 * 1024;

/// Peak RSS (KiB) and exit code of `faultline validate FILE`.
fn validate_peak(file: &Path) -> (i64, Option<i32>) {
    // Reaped by wait4 below, which also gives the rusage; std's wait would not.
    #[allow(
        clippy::zombie_processes,
        reason = "reaped by wait4 below, which also gives the rusage"
    )]
    let child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["validate", "--color", "never"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // Linux reports ru_maxrss in KiB.
    (usage.ru_maxrss, code)
}

/// Fill `text` with `line` until it would pass `budget` bytes.
fn fill(text: &mut String, line: &str, budget: usize) {
    while text.len() + line.len() <= budget {
        text.push_str(line);
    }
}

fn worst_inputs() -> Vec<(&'static str, String)> {
    let budget = FILE_BYTES_MAX - 1024;
    let head = "model: raftkv\nnodes: [n1, n2, n3]\nexpect: converged\n";
    let mut cases = Vec::new();
    // Alias copies of one large string: 2,000 aliases of 500 KB.
    let mut t = format!(
        "{head}description: &s \"{}\"\nsteps:\n",
        "x".repeat(500_000)
    );
    fill(&mut t, "  - sleep: *s\n", budget);
    cases.push(("alias bytes", t));
    // Alias copies just under the byte budget: 80 of a 100 KB string, in steps
    // that each fail with a message.
    let mut t = format!(
        "{head}description: &s \"{}\"\nsteps:\n",
        "x".repeat(100_000)
    );
    for _ in 0..80 {
        t.push_str("  - sleep: *s\n");
    }
    cases.push(("alias bytes under the budget", t));
    // Billion laughs by nodes, just under the node budget.
    let mut t = format!("{head}params: &p {{");
    for i in 0..990 {
        t.push_str(&format!("k{i}: [1, 2, 3], "));
    }
    t.push_str("z: 0}\nvariants:\n");
    for i in 0..49 {
        t.push_str(&format!("  v{i}: {{expect: converged, params: *p}}\n"));
    }
    t.push_str("steps:\n  - sleep: 1ms\n");
    cases.push((
        "aliases by nodes",
        t.replace("expect: converged\nparams", "params"),
    ));
    // Scenario params times variants: a large params map copied into each variant.
    let keys: Vec<String> = (0..30_000).map(|i| format!("k{i}: 1")).collect();
    let mut t = format!(
        "model: raftkv\nnodes: [n1]\nparams: {{{}}}\nvariants:\n",
        keys.join(", ")
    );
    let mut i = 0;
    while t.len() + 40 < budget {
        t.push_str(&format!("  v{i}: {{expect: converged}}\n"));
        i += 1;
    }
    t.push_str("steps:\n  - sleep: 1ms\n");
    cases.push(("params times variants", t));
    // The most nodes in one flat list, each one a bad step.
    let mut t = format!("{head}steps: [");
    fill(&mut t, "0,", budget);
    t.push_str("0]\n");
    cases.push(("a flood of bad steps", t));
    // The most errors with hints: unknown nodes, 32 candidates each.
    let nodes: Vec<String> = (0..32).map(|i| format!("node{i}")).collect();
    let mut t = format!(
        "model: raftkv\nnodes: [{}]\nexpect: converged\nsteps:\n",
        nodes.join(", ")
    );
    fill(&mut t, "  - crash: nodx\n", budget);
    cases.push(("a flood of errors with hints", t));
    // The most valid steps, each a nested repeat at the deepest nesting.
    let mut t = format!("{head}steps:\n");
    fill(
        &mut t,
        "  - repeat: {count: 2, steps: [{repeat: {count: 2, steps: [{sleep: 1ms}]}}]}\n",
        budget,
    );
    cases.push(("nested repeats", t));
    // Deep nesting, many times.
    let deep = "[".repeat(31) + &"]".repeat(31);
    let mut t = format!("{head}steps:\n  - sleep: 1ms\nparams:\n");
    let mut k = 0;
    while t.len() + deep.len() + 20 < budget {
        t.push_str(&format!("  k{k}: {deep}\n"));
        k += 1;
    }
    cases.push(("deep nesting", t));
    // One line of a megabyte.
    cases.push((
        "one long line",
        format!(
            "{head}description: \"{}\"\nsteps:\n  - sleep: 1ms\n",
            "y".repeat(budget - 200)
        ),
    ));
    cases
}

#[test]
fn validating_the_worst_files_under_the_size_limit_stays_under_256_mib() {
    let dir = common::temp_dir("memory", "worst");
    let mut report = Vec::new();
    for (name, text) in worst_inputs() {
        assert!(text.len() <= FILE_BYTES_MAX, "{name}: {} bytes", text.len());
        let file = dir.join(format!("{}.yaml", name.replace(' ', "-")));
        std::fs::write(&file, &text).unwrap();
        let (peak_kib, code) = validate_peak(&file);
        report.push(format!("{name}: {} KiB, exit {code:?}", peak_kib));
        assert!(
            matches!(code, Some(0) | Some(2)),
            "{name}: exit {code:?} (a crash or an abort, not a clear outcome)"
        );
        assert!(
            peak_kib < BOUND_KIB,
            "{name}: peak {peak_kib} KiB, over the documented bound of {BOUND_KIB} KiB"
        );
    }
    eprintln!("{}", report.join("\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}
