//! The hunt's table as Markdown (`docs/exploration.md`) and for the terminal.

use super::stats::{ArmStats, Hunt};
use crate::report::groups::Tally;

/// Signatures shown per arm; the rest are counted.
const SIGNATURES_SHOWN: usize = 5;
/// Seeds shown per signature.
const SEEDS_SHOWN: usize = 10;

/// `×12 diverged (divergence), first seed 3: 3, 5, 8 and 9 more`.
fn signature_line(t: &Tally) -> String {
    let shown: Vec<String> = t
        .seeds
        .iter()
        .take(SEEDS_SHOWN)
        .map(u64::to_string)
        .collect();
    let more = t.runs.saturating_sub(shown.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "\u{d7}{} {}, first seed {}: seeds {}{more}",
        t.runs,
        t.label,
        t.first_seed,
        shown.join(", ")
    )
}

/// An arm's signatures, one line each, at most [`SIGNATURES_SHOWN`].
fn signature_lines(arm: &ArmStats) -> Vec<String> {
    let mut lines: Vec<String> = arm
        .signatures
        .iter()
        .take(SIGNATURES_SHOWN)
        .map(signature_line)
        .collect();
    if arm.signatures.len() > SIGNATURES_SHOWN {
        lines.push(format!(
            "and {} more signature(s)",
            arm.signatures.len() - SIGNATURES_SHOWN
        ));
    }
    lines
}

/// Hand-written notes below this line survive a rerun of `hunt --out`.
pub const NOTES_MARKER: &str = "<!-- notes: kept when hunt rewrites this file -->";

fn key_label(arm: &ArmStats) -> String {
    let key = arm.key.clone().unwrap_or_else(|| "(all fixed)".to_string());
    match &arm.build {
        Some(build) => format!("{key} (build {build})"),
        None => key,
    }
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

/// The lines around a section `hunt --out FILE --section NAME` writes.
pub fn section_markers(name: &str) -> (String, String) {
    (
        format!("<!-- hunt section {name}: generated, rewritten by hunt --section {name} -->"),
        format!("<!-- end of hunt section {name} -->"),
    )
}

/// `doc` with the section `name` set to `body`: replaced where its markers are,
/// else appended at the end. Everything else in `doc` is kept as it is, so a
/// hunt of one model's keys does not drop the other keys' table; a full rewrite
/// keeps what is below [`NOTES_MARKER`], where an appended section lands.
pub fn splice_section(doc: &str, name: &str, body: &str) -> String {
    let (start, end) = section_markers(name);
    let block = format!("{start}\n{body}{end}\n");
    if let Some(at) = doc.find(&start) {
        if let Some(len) = doc[at..].find(&end) {
            let after = at + len + end.len();
            let after = after + usize::from(doc[after..].starts_with('\n'));
            return format!("{}{block}{}", &doc[..at], &doc[after..]);
        }
    }
    let mut out = doc.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.contains(NOTES_MARKER) {
        out.push_str(NOTES_MARKER);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&block);
    out
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
        if let Some(cause) = &arm.first_cause {
            let short: String = cause.chars().take(400).collect();
            out.push_str(&format!("{:<22} cause: {short}\n", ""));
        }
        for line in signature_lines(arm) {
            out.push_str(&format!("{:<22} {line}\n", ""));
        }
    }
    for skipped in &hunt.not_run {
        out.push_str(&format!("{}\n", skipped.line()));
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
    if hunt.arms.iter().any(|a| a.build.is_some()) {
        md.push_str(
            "A scenario whose variants pick builds of a real system (`target:`) switches a key by \
             build: the key's arm is its variant on a release the targets manifest declares the key \
             `buggy` in, the control its variant on a release with every such key `fixed`.\n\n",
        );
    }
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
        if let Some(cause) = &arm.first_cause {
            let short: String = cause.chars().take(400).collect();
            md.push_str(&format!("  - cause: {short}\n"));
        }
        for line in arm.first_findings.iter().take(3) {
            let short: String = line.chars().take(300).collect();
            md.push_str(&format!("  - {short}\n"));
        }
        if !arm.signatures.is_empty() {
            md.push_str(&format!(
                "  - failures by signature ({}):\n",
                arm.signatures.len()
            ));
            for line in signature_lines(arm) {
                md.push_str(&format!("    - {line}\n"));
            }
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_appended_once_then_replaced_in_place() {
        let doc = format!("# Table\n\n| a |\n\n{NOTES_MARKER}\n\nnotes\n");
        let once = splice_section(&doc, "openraft", "## openraft\n\nfirst\n");
        assert!(once.starts_with(&doc), "everything before is kept: {once}");
        assert!(once.contains("first"));
        let twice = splice_section(&once, "openraft", "## openraft\n\nsecond\n");
        assert!(!twice.contains("first"), "{twice}");
        assert_eq!(twice.matches("second").count(), 1);
        assert!(twice.starts_with(&doc));
        assert_eq!(twice.matches(NOTES_MARKER).count(), 1);
        let (start, end) = section_markers("openraft");
        assert_eq!(twice.matches(&start).count(), 1);
        assert_eq!(twice.matches(&end).count(), 1);
    }

    #[test]
    fn a_keys_failures_are_grouped_by_signature_in_the_table_and_on_the_terminal() {
        use crate::base::outcome::Outcome;
        use crate::judge::check::Finding;
        use crate::report::groups::{tally, Signature};
        let sig = |outcome, checker: &str| {
            Signature::of(
                "chaos",
                "K-1",
                outcome,
                &[Finding::new(
                    checker,
                    Some(outcome),
                    format!("varies {checker}"),
                )],
                false,
                &[],
            )
        };
        let mut signatures = Vec::new();
        for seed in [9, 4, 30, 12, 15, 1, 2, 3, 5, 6, 7, 8] {
            tally(&mut signatures, sig(Outcome::Violated, "consistency"), seed);
        }
        tally(&mut signatures, sig(Outcome::Stuck, "await"), 11);
        let arm = ArmStats {
            scenario: "chaos".into(),
            file: "chaos.yaml".into(),
            model: "m".into(),
            key: Some("K-1".into()),
            build: None,
            seed_first: 1,
            seed_last: 40,
            runs: 40,
            failed: 13,
            first_failure: Some(1),
            seeds_to_first_failure: Some(1),
            failing_seeds: vec![],
            failing_all: vec![],
            outcomes: Default::default(),
            checkers: Default::default(),
            first_replay: Some("faultline run chaos.yaml --seed 1".into()),
            first_findings: vec![],
            first_cause: None,
            signatures,
            wall_ms: 0,
            sim_ms: 0,
        };
        let hunt = Hunt {
            arms: vec![arm],
            jobs: 1,
            wall_ms: 0,
            not_run: vec![],
            index: vec![],
        };
        let term = terminal(&hunt);
        assert!(
            term.contains("\u{d7}12 violated (consistency), first seed 1: seeds 1, 2, 3, 4, 5, 6, 7, 8, 9, 12 and 2 more\n"),
            "{term}"
        );
        assert!(
            term.contains("\u{d7}1 stuck (await), first seed 11: seeds 11\n"),
            "{term}"
        );
        let md = markdown(&hunt, "faultline hunt", "here");
        assert!(
            md.contains("  - failures by signature (2):\n    - \u{d7}12 violated (consistency)"),
            "{md}"
        );
    }

    /// A key hunted in two scenarios and found in one is missed in the other,
    /// named with it; a key nobody asked for is not.
    #[test]
    fn a_key_missed_in_one_of_its_scenarios_is_named_with_it() {
        let arm = |scenario: &str, failed| ArmStats {
            scenario: scenario.into(),
            file: format!("{scenario}.yaml"),
            model: "m".into(),
            key: Some("K-1".into()),
            build: None,
            seed_first: 1,
            seed_last: 10,
            runs: 10,
            failed,
            first_failure: None,
            seeds_to_first_failure: None,
            failing_seeds: vec![],
            failing_all: vec![],
            outcomes: Default::default(),
            checkers: Default::default(),
            first_replay: None,
            first_findings: vec![],
            first_cause: None,
            signatures: vec![],
            wall_ms: 0,
            sim_ms: 0,
        };
        let hunt = Hunt {
            arms: vec![arm("tuned", 3), arm("plain", 0)],
            jobs: 1,
            wall_ms: 0,
            not_run: vec![],
            index: vec![],
        };
        assert_eq!(
            hunt.missed(&["all".into()]),
            vec!["K-1 (plain)".to_string()]
        );
        assert_eq!(
            hunt.missed(&["K-1".into()]),
            vec!["K-1 (plain)".to_string()]
        );
        assert!(hunt.missed(&["K-2".into()]).is_empty());
    }

    #[test]
    fn a_section_in_a_new_file_gets_the_notes_marker_above_it() {
        let out = splice_section("", "x", "body\n");
        let marker = out.find(NOTES_MARKER).expect("marker");
        assert!(marker < out.find("body").expect("body"), "{out}");
    }
}
