//! Human summaries: the terminal block per run and `summary.md` over all runs.

use crate::duration::format as fmt_duration;
use crate::runner::RunResult;
use std::time::Duration;

fn expected(r: &RunResult) -> String {
    r.expected
        .iter()
        .map(|o| o.name())
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The readable block printed per variant run.
pub fn terminal_summary(r: &RunResult) -> String {
    let verdict = if r.passed { "PASS" } else { "FAIL" };
    let mut out = format!(
        "{verdict} {} [{}] {} (expected {}) seed={} sim={} wall={}ms digest={}\n",
        r.scenario,
        r.variant,
        r.outcome,
        expected(r),
        r.seed,
        fmt_duration(Duration::from_millis(r.sim_elapsed_ms)),
        r.wall_ms,
        &r.trail_digest[..16.min(r.trail_digest.len())],
    );
    let faults = r.faults_fired();
    if !faults.is_empty() {
        out.push_str(&format!("  faults ({}):\n", faults.len()));
        for line in faults.iter().take(12) {
            out.push_str(&format!("    {line}\n"));
        }
        if faults.len() > 12 {
            out.push_str(&format!(
                "    ... {} more in the report\n",
                faults.len() - 12
            ));
        }
    }
    for f in &r.findings {
        out.push_str(&format!(
            "  {} [{}]: {}\n",
            f.outcome.map(|o| o.name()).unwrap_or("fail"),
            f.checker,
            f.message
        ));
    }
    if !r.passed {
        out.push_str(&format!("  seed: {}\n  replay: {}\n", r.seed, r.replay));
    }
    out
}

pub fn summary_md(results: &[RunResult]) -> String {
    let passed = results.iter().filter(|r| r.passed).count();
    let mut md = format!(
        "# faultline summary\n\n{passed} of {} run(s) met their expectation.\n\n",
        results.len()
    );
    md.push_str("| scenario | variant | seed | outcome | expected | result | sim time | wall ms | digest |\n");
    md.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for r in results {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | `{}` |\n",
            md_escape(&r.scenario),
            md_escape(&r.variant),
            r.seed,
            r.outcome,
            expected(r),
            if r.passed { "pass" } else { "**FAIL**" },
            fmt_duration(Duration::from_millis(r.sim_elapsed_ms)),
            r.wall_ms,
            &r.trail_digest[..16.min(r.trail_digest.len())]
        ));
    }
    let failures: Vec<&RunResult> = results.iter().filter(|r| !r.passed).collect();
    if !failures.is_empty() {
        md.push_str("\n## Failures\n\n");
        for r in failures {
            md.push_str(&format!(
                "### {} [{}] seed {}\n\n",
                md_escape(&r.scenario),
                md_escape(&r.variant),
                r.seed
            ));
            for f in &r.findings {
                md.push_str(&format!("- `{}`: {}\n", f.checker, md_escape(&f.message)));
            }
            md.push_str(&format!("\nReplay: `{}`\n\n", r.replay));
        }
    }
    md
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
