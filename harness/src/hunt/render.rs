//! The hunt's table as Markdown (`docs/exploration.md`) and for the terminal.

use super::stats::{ArmStats, Hunt};

/// Hand-written notes below this line survive a rerun of `hunt --out`.
pub const NOTES_MARKER: &str = "<!-- notes: kept when hunt rewrites this file -->";

fn key_label(arm: &ArmStats) -> String {
    arm.key.clone().unwrap_or_else(|| "(all fixed)".to_string())
}

fn counts(map: &std::collections::BTreeMap<String, usize>) -> String {
    if map.is_empty() {
        return "-".into();
    }
    map.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per arm, for the terminal.
pub fn terminal(hunt: &Hunt) -> String {
    let mut out = String::new();
    for arm in &hunt.arms {
        let first = arm
            .first_failure
            .map(|s| format!("first at seed {s}"))
            .unwrap_or_else(|| "none".into());
        out.push_str(&format!(
            "{:<22} {:<16} {:>5}/{:<5} failed ({:>5.1}%)  {first}  [{}]\n",
            arm.scenario,
            key_label(arm),
            arm.failed,
            arm.runs,
            arm.rate() * 100.0,
            counts(&arm.checkers)
        ));
        if let Some(replay) = &arm.first_replay {
            out.push_str(&format!("{:<22} replay: {replay}\n", ""));
        }
    }
    out
}

/// The document `hunt --out` writes.
pub fn markdown(hunt: &Hunt, command: &str, machine: &str) -> String {
    let mut md = String::from("# Exploration: the rediscovery benchmark\n\n");
    md.push_str(&format!(
        "Produced by `{command}` on {machine}, {} job(s), in {:.0} s of wall time.\n\n",
        hunt.jobs,
        hunt.wall_ms as f64 / 1000.0
    ));
    md.push_str(
        "Each chaos scenario runs once per bug key of its model, with that key `buggy` and every \
         other key `fixed`, and once with every key `fixed` (the control). The scenario's nemesis \
         and workload are the same in every arm: nothing in them names a bug. A failure that \
         appears only with one key buggy was caused by that key's code; the control must stay \
         at zero.\n\n",
    );
    md.push_str("| model | scenario | bug key | seeds | failed | rate | first failing seed | outcomes | checkers |\n");
    md.push_str("|---|---|---|---:|---:|---:|---:|---|---|\n");
    for arm in &hunt.arms {
        md.push_str(&format!(
            "| {} | `{}` | {} | {}..{} | {} | {:.1} % | {} | {} | {} |\n",
            arm.model,
            arm.scenario,
            key_label(arm),
            arm.seed_first,
            arm.seed_last,
            arm.failed,
            arm.rate() * 100.0,
            arm.first_failure
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            counts(&arm.outcomes),
            counts(&arm.checkers),
        ));
    }
    md.push_str("\n## First find per key\n\n");
    for arm in hunt.arms.iter().filter(|a| a.first_failure.is_some()) {
        md.push_str(&format!(
            "- **{}** ({}): `{}`\n",
            key_label(arm),
            arm.scenario,
            arm.first_replay.as_deref().unwrap_or("")
        ));
        for line in arm.first_findings.iter().take(3) {
            let short: String = line.chars().take(300).collect();
            md.push_str(&format!("  - {short}\n"));
        }
    }
    md
}
