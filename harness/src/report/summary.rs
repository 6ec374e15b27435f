//! `summary.md` over all runs (the terminal's lines are in `terminal.rs`).

use super::RunRecord;
use crate::base::duration::format as fmt_duration;
use crate::base::outcome::Outcome;
use std::collections::BTreeMap;
use std::time::Duration;

pub(super) fn expected(outcomes: &[Outcome]) -> String {
    outcomes
        .iter()
        .map(|o| o.name())
        .collect::<Vec<_>>()
        .join(" or ")
}

/// What failed a run that ended as expected: the first finding without an
/// outcome (an expectation about the trail or the observations, an op's
/// `expect:`, a fail point that never fired, ...), as `CHECKER failed: the
/// first line of its message`, with how many more there are. `None` when every
/// finding has an outcome.
pub fn unmet(findings: &[crate::judge::check::Finding]) -> Option<String> {
    let mut failed = findings.iter().filter(|f| f.outcome.is_none());
    let first = failed.next()?;
    let mut text = format!(
        "{} failed: {}",
        first.checker,
        first.message.lines().next().unwrap_or_default()
    );
    let more = failed.count();
    if more > 0 {
        text.push_str(&format!(" (and {more} more)"));
    }
    Some(text)
}

/// The runs that failed with a known defect's signature (`expect.except`),
/// counted per scenario, variant and defect with their seeds; empty if none.
pub fn known_defects_md(records: &[RunRecord]) -> String {
    let mut groups: BTreeMap<(&str, &str, String), Vec<u64>> = BTreeMap::new();
    for r in records.iter().filter(|r| !r.known_defects.is_empty()) {
        groups
            .entry((
                r.scenario.as_str(),
                r.variant.as_str(),
                r.known_defects.join(", "),
            ))
            .or_default()
            .push(r.seed);
    }
    if groups.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n## Known defects\n\nRuns that failed with the signature of a defect their variant declares (`expect.except`): counted, not failed.\n\n| scenario | variant | known defect | runs | seeds |\n|---|---|---|---|---|\n",
    );
    for ((scenario, variant, keys), seeds) in &groups {
        let shown: Vec<String> = seeds.iter().take(20).map(u64::to_string).collect();
        let more = if seeds.len() > 20 {
            format!(" and {} more", seeds.len() - 20)
        } else {
            String::new()
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {}{more} |\n",
            md_escape(scenario),
            md_escape(variant),
            md_escape(keys),
            seeds.len(),
            shown.join(", ")
        ));
    }
    md
}

/// `summary.md`: outcome counts per scenario and variant, then the failures
/// grouped by signature, each group's first seed with its replay command. Runs are listed one per row when there are few.
pub fn summary_md(records: &[RunRecord]) -> String {
    let passed = records.iter().filter(|r| r.passed).count();
    let mut md = format!(
        "# faultline summary\n\n{passed} of {} run(s) met their expectation.\n\n",
        records.len()
    );
    md.push_str("## Outcomes\n\n| scenario | variant | runs | ");
    for o in Outcome::ALL {
        md.push_str(&format!("{o} | "));
    }
    md.push_str("nondeterministic | failed |\n|---|---|---|");
    md.push_str(&"---|".repeat(Outcome::ALL.len() + 2));
    md.push('\n');
    let mut groups: BTreeMap<(&str, &str), Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        groups
            .entry((r.scenario.as_str(), r.variant.as_str()))
            .or_default()
            .push(r);
    }
    for ((scenario, variant), runs) in &groups {
        md.push_str(&format!(
            "| {} | {} | {} | ",
            md_escape(scenario),
            md_escape(variant),
            runs.len()
        ));
        for o in Outcome::ALL {
            md.push_str(&format!(
                "{} | ",
                runs.iter().filter(|r| r.outcome == o).count()
            ));
        }
        let nondet = runs.iter().filter(|r| r.nondeterminism.is_some()).count();
        let failed = runs.iter().filter(|r| !r.passed).count();
        md.push_str(&format!("{nondet} | {failed} |\n"));
    }
    if records.len() <= 200 {
        md.push_str(&runs_md(records));
    }
    md.push_str(&known_defects_md(records));
    let failures: Vec<&RunRecord> = records.iter().filter(|r| !r.passed).collect();
    if !failures.is_empty() {
        let groups = super::groups::group(failures.iter().copied());
        md.push_str(&format!(
            "\n## Failures ({} run(s), {} signature(s))\n\nFailures with the same signature (scenario, variant, outcome, checkers, and the first differing key of a divergence) are one group: its first seed in full, then every seed.\n\n",
            failures.len(),
            groups.len()
        ));
        for g in &groups {
            let r = g.first();
            md.push_str(&format!(
                "### {} [{}] {}: {} run(s)\n\n",
                md_escape(&r.scenario),
                md_escape(&r.variant),
                md_escape(&g.signature.label()),
                g.runs()
            ));
            md.push_str(&format!("First seed {}:\n\n", r.seed));
            if let Some(diff) = &r.nondeterminism {
                md.push_str(&format!("- **nondeterministic**: {}\n", md_escape(diff)));
            }
            md.push_str(&format!(
                "- outcome `{}`, expected `{}`\n",
                r.outcome,
                expected(&r.expected)
            ));
            for f in &r.findings {
                md.push_str(&format!("- `{}`: {}\n", f.checker, md_escape(&f.message)));
            }
            md.push_str(&format!("\nReplay: `{}`\n", r.replay));
            if let Some(report) = &r.report {
                md.push_str(&format!(
                    "\nShrink: `faultline shrink {report} -o {}-seed{}.yaml`\n",
                    r.scenario, r.seed
                ));
            }
            md.push_str(&format!(
                "\nSeeds ({}): {}\n\n",
                g.seeds.len(),
                super::groups::seeds_text(&g.seeds, super::groups::SEEDS_SHOWN)
            ));
        }
    }
    md
}

/// The table of runs, one per row.
fn runs_md(records: &[RunRecord]) -> String {
    let mut md = String::new();
    md.push_str("\n## Runs\n\n| scenario | variant | seed | outcome | expected | result | sim time | wall ms | digest |\n");
    md.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for r in records {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | `{}` |\n",
            md_escape(&r.scenario),
            md_escape(&r.variant),
            r.seed,
            r.outcome,
            expected(&r.expected),
            if !r.known_defects.is_empty() {
                "known defect"
            } else if r.passed {
                "pass"
            } else {
                "**FAIL**"
            },
            fmt_duration(Duration::from_millis(r.sim_elapsed_ms)),
            r.wall_ms,
            &r.trail_digest[..16.min(r.trail_digest.len())]
        ));
    }
    md
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
