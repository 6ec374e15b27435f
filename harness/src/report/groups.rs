//! Failures grouped by what they have in common, so that a sweep with ten
//! identical failures shows one group of ten, not ten entries (`summary.md`,
//! `index.html`, the end of `sweep` and `merge` on the terminal, `hunt`).
//!
//! A failure's [`Signature`] is its scenario and variant, its outcome, the
//! checkers behind its findings (sorted, each once; an invariant is in its
//! checker's name, `invariant:NAME`), and a detail where a finding names
//! something stable: the first differing key of a divergence, the bug key a
//! differential run showed to be the cause, a failed determinism recheck. Never
//! a finding's message: it carries values, times and op ids that differ from
//! run to run of one defect (the register checker's `key `k7`: these 3 op(s)
//! cannot be ordered: p2 write "v34" @567ms ...`).
//!
//! Groups are ordered by how many runs they hold (most first), then by their
//! lowest seed, then by signature: the same order for the same failures,
//! whatever order the runs finished in.

use super::RunRecord;
use crate::base::outcome::Outcome;
use crate::judge::check::differential::Departure;
use crate::judge::check::Finding;
use std::collections::{BTreeMap, BTreeSet};

/// Seeds listed per group; the rest are counted.
pub const SEEDS_SHOWN: usize = 50;

/// What makes two failures the same failure.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Signature {
    pub scenario: String,
    pub variant: String,
    pub outcome: Outcome,
    /// The checkers of the findings, sorted, each once.
    pub checkers: Vec<String>,
    /// What the findings name that does not change between runs of one
    /// defect, `; `-joined; `None` when nothing does.
    pub detail: Option<String>,
}

impl Signature {
    /// The signature of a run that ended with `outcome` and `findings`;
    /// `nondeterministic` when a determinism recheck gave another trail, and
    /// `departures` its differential runs (empty when none were run).
    pub fn of(
        scenario: &str,
        variant: &str,
        outcome: Outcome,
        findings: &[Finding],
        nondeterministic: bool,
        departures: &[Departure],
    ) -> Signature {
        let checkers: BTreeSet<&str> = findings.iter().map(|f| f.checker.as_str()).collect();
        let mut detail: Vec<String> = Vec::new();
        if nondeterministic {
            detail.push("nondeterministic".into());
        }
        let keys: BTreeSet<&str> = findings
            .iter()
            .filter(|f| f.checker == crate::judge::check::divergence::CHECKER)
            .filter_map(|f| f.detail.get("key")?.as_str())
            .collect();
        for key in keys {
            detail.push(format!("first differing key {key}"));
        }
        let causes: BTreeSet<&str> = departures
            .iter()
            .filter(|d| d.fixed_passed)
            .map(|d| d.key.as_str())
            .collect();
        for key in causes {
            detail.push(format!("caused by {key}"));
        }
        Signature {
            scenario: scenario.to_string(),
            variant: variant.to_string(),
            outcome,
            checkers: checkers.into_iter().map(str::to_string).collect(),
            detail: (!detail.is_empty()).then(|| detail.join("; ")),
        }
    }

    /// The signature of a recorded run (records carry no differential run).
    pub fn of_record(r: &RunRecord) -> Signature {
        Signature::of(
            &r.scenario,
            &r.variant,
            r.outcome,
            &r.findings,
            r.nondeterminism.is_some(),
            &[],
        )
    }

    /// `diverged (divergence, invariant:x; first differing key k)`: the
    /// signature without its scenario and variant, in one line.
    pub fn label(&self) -> String {
        let checkers = if self.checkers.is_empty() {
            "no finding".to_string()
        } else {
            self.checkers.join(", ")
        };
        match &self.detail {
            Some(detail) => format!("{} ({checkers}; {detail})", self.outcome),
            None => format!("{} ({checkers})", self.outcome),
        }
    }
}

/// Failures that share a signature.
#[derive(Clone, Debug)]
pub struct Group<'a> {
    pub signature: Signature,
    /// Their seeds, ascending, each once.
    pub seeds: Vec<u64>,
    /// Every run of the group, by seed (in `records` order among equal seeds).
    pub members: Vec<&'a RunRecord>,
}

impl<'a> Group<'a> {
    /// How many runs (a guided sweep's runs are told apart by their number, so
    /// count runs, not seeds).
    pub fn runs(&self) -> usize {
        self.members.len()
    }

    /// The run with the lowest seed (the first such run in `records` order
    /// when several share it).
    pub fn first(&self) -> &'a RunRecord {
        self.members[0]
    }
}

/// The records grouped by signature, most runs first (see the module's note).
/// Callers pass the runs they count as failures.
pub fn group<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> Vec<Group<'a>> {
    let mut groups: BTreeMap<Signature, Group<'a>> = BTreeMap::new();
    for r in records {
        let signature = Signature::of_record(r);
        let g = groups.entry(signature.clone()).or_insert_with(|| Group {
            signature,
            seeds: Vec::new(),
            members: Vec::new(),
        });
        g.members.push(r);
    }
    for g in groups.values_mut() {
        g.members.sort_by_key(|m| m.seed);
        g.seeds = g.members.iter().map(|m| m.seed).collect();
        g.seeds.dedup();
    }
    let mut out: Vec<Group<'a>> = groups.into_values().collect();
    // The map gave signature order; a stable sort keeps it among equals.
    out.sort_by_key(|g| (std::cmp::Reverse(g.runs()), g.first().seed));
    out
}

/// `14, 17, 22` with at most `max` seeds listed and `and K more` after them.
pub fn seeds_text(seeds: &[u64], max: usize) -> String {
    let mut text = seeds
        .iter()
        .take(max)
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if seeds.len() > max {
        text.push_str(&format!(" and {} more", seeds.len() - max));
    }
    text
}

/// A signature's runs, counted where the runs are not kept (hunt).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Tally {
    #[serde(skip)]
    pub signature: Signature,
    /// [`Signature::label`].
    pub label: String,
    pub runs: usize,
    /// The lowest seed, and up to [`SEEDS_SHOWN`] seeds, ascending.
    pub first_seed: u64,
    pub seeds: Vec<u64>,
}

/// Add one run of `signature` to `tallies`, kept in the groups' order.
pub fn tally(tallies: &mut Vec<Tally>, signature: Signature, seed: u64) {
    match tallies.iter_mut().find(|t| t.signature == signature) {
        Some(t) => {
            t.runs += 1;
            t.first_seed = t.first_seed.min(seed);
            if let Err(at) = t.seeds.binary_search(&seed) {
                t.seeds.insert(at, seed);
                t.seeds.truncate(SEEDS_SHOWN);
            }
        }
        None => tallies.push(Tally {
            label: signature.label(),
            signature,
            runs: 1,
            first_seed: seed,
            seeds: vec![seed],
        }),
    }
    tallies.sort_by(|a, b| {
        (std::cmp::Reverse(a.runs), a.first_seed, &a.signature).cmp(&(
            std::cmp::Reverse(b.runs),
            b.first_seed,
            &b.signature,
        ))
    });
}

/// A failing record of scenario `kv`, variant `buggy`, for tests.
#[cfg(test)]
pub(crate) fn failing(seed: u64, outcome: Outcome, findings: Vec<Finding>) -> RunRecord {
    RunRecord {
        schema_version: crate::report::RECORD_SCHEMA_VERSION,
        scenario: "kv".into(),
        file: "scenarios/kv.yaml".into(),
        variant: "buggy".into(),
        seed,
        outcome,
        expected: vec![Outcome::Converged],
        trail_digest: format!("{seed:064}"),
        sim_elapsed_ms: 1_000,
        wall_ms: 10,
        findings,
        replay: format!("faultline run scenarios/kv.yaml --variant buggy --seed {seed}"),
        ..RunRecord::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn register(key: &str, value: &str, at_ms: u64) -> Finding {
        Finding::new(
            "consistency",
            Some(Outcome::Violated),
            format!(
                "key `{key}`: these 3 op(s) cannot be ordered: p2 write \"{value}\" @{at_ms}ms"
            ),
        )
    }

    #[test]
    fn same_checkers_with_other_values_group_into_one_with_seeds_ascending() {
        let records = [
            failing(22, Outcome::Violated, vec![register("k7", "v34", 567)]),
            failing(14, Outcome::Violated, vec![register("k2", "v9", 1200)]),
            failing(17, Outcome::Violated, vec![register("k7", "v1", 80)]),
        ];
        let groups = group(&records);
        assert_eq!(groups.len(), 1, "{groups:?}");
        let g = &groups[0];
        assert_eq!((g.runs(), g.seeds.clone()), (3, vec![14, 17, 22]));
        assert_eq!(g.first().seed, 14);
        assert_eq!(g.signature.label(), "violated (consistency)");
        assert_eq!(g.signature.detail, None, "no message text in a signature");
    }

    #[test]
    fn other_checkers_or_outcomes_split_and_the_larger_group_comes_first() {
        let invariant = |m: &str| {
            Finding::new(
                "invariant:leader_completeness",
                Some(Outcome::Violated),
                m.to_string(),
            )
        };
        let records = [
            failing(1, Outcome::Violated, vec![register("k", "a", 1)]),
            failing(2, Outcome::Violated, vec![invariant("term 3 at 40ms")]),
            failing(
                3,
                Outcome::Violated,
                vec![invariant("term 5 at 90ms"), register("k", "b", 2)],
            ),
            failing(4, Outcome::Violated, vec![invariant("term 2 at 7ms")]),
            failing(5, Outcome::Stuck, vec![invariant("x")]),
        ];
        let groups = group(&records);
        let shown: Vec<(String, usize, u64)> = groups
            .iter()
            .map(|g| (g.signature.label(), g.runs(), g.first().seed))
            .collect();
        assert_eq!(
            shown,
            [
                ("violated (invariant:leader_completeness)", 2, 2),
                ("violated (consistency)", 1, 1),
                (
                    "violated (consistency, invariant:leader_completeness)",
                    1,
                    3
                ),
                ("stuck (invariant:leader_completeness)", 1, 5),
            ]
            .map(|(l, n, s)| (l.to_string(), n, s))
        );
    }

    #[test]
    fn a_divergence_is_told_apart_by_its_first_differing_key_not_its_values() {
        let diverged = |key: &str, value: &str, index: u64| {
            Finding::new(
                "divergence",
                Some(Outcome::Diverged),
                format!("replicas disagree at applied index {index}: first differing key `{key}`: n1={value:?}"),
            )
            .with_detail(json!({"applied": index, "key": key, "values": {"n1": value}}))
        };
        let records = [
            failing(1, Outcome::Diverged, vec![diverged("k", "x", 3)]),
            failing(2, Outcome::Diverged, vec![diverged("k", "y", 9)]),
            failing(3, Outcome::Diverged, vec![diverged("other", "y", 9)]),
        ];
        let groups = group(&records);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].seeds, [1, 2]);
        assert_eq!(
            groups[0].signature.label(),
            "diverged (divergence; first differing key k)"
        );
        // The same failure in another scenario or variant is another group.
        let mut elsewhere = failing(4, Outcome::Diverged, vec![diverged("k", "z", 1)]);
        elsewhere.variant = "other".into();
        let all = [records[0].clone(), elsewhere];
        assert_eq!(group(&all).len(), 2);
    }

    #[test]
    fn a_nondeterministic_run_and_a_differential_cause_are_in_the_signature() {
        let mut r = failing(1, Outcome::Violated, vec![register("k", "a", 1)]);
        let plain = Signature::of_record(&r);
        r.nondeterminism = Some("event #3 differs".into());
        let nondet = Signature::of_record(&r);
        assert_ne!(plain, nondet);
        assert_eq!(nondet.label(), "violated (consistency; nondeterministic)");
        let departure = |key: &str, event: usize, fixed_passed: bool| Departure {
            key: key.into(),
            event,
            buggy: None,
            fixed: None,
            fixed_passed,
            summary: format!("departs at event #{event}"),
        };
        let findings = [register("k", "a", 1)];
        let a = Signature::of(
            "kv",
            "v",
            Outcome::Violated,
            &findings,
            false,
            &[departure("K-1", 40, true)],
        );
        let b = Signature::of(
            "kv",
            "v",
            Outcome::Violated,
            &findings,
            false,
            &[departure("K-1", 77, true)],
        );
        assert_eq!(a, b, "where the trails depart varies; the key does not");
        assert_eq!(a.label(), "violated (consistency; caused by K-1)");
        let not_cause = Signature::of(
            "kv",
            "v",
            Outcome::Violated,
            &findings,
            false,
            &[departure("K-1", 40, false)],
        );
        assert_eq!(
            not_cause.detail, None,
            "a fixed twin that fails too is no cause"
        );
    }

    #[test]
    fn summary_md_lists_one_group_per_signature_with_its_first_seed_and_seeds() {
        let mut records: Vec<RunRecord> = [22, 14, 17]
            .iter()
            .map(|&s| {
                failing(
                    s,
                    Outcome::Violated,
                    vec![register(&format!("k{s}"), "v", s)],
                )
            })
            .collect();
        records[1].report = Some("kv/buggy/seed-14/report.json".into());
        records.push(failing(
            30,
            Outcome::Stuck,
            vec![Finding::new("await", Some(Outcome::Stuck), "no leader")],
        ));
        let md = crate::report::summary_md(&records);
        let failures = &md[md.find("## Failures").expect("a failures section")..];
        assert!(
            failures.starts_with("## Failures (4 run(s), 2 signature(s))"),
            "{failures}"
        );
        assert_eq!(failures.matches("\n### ").count(), 2, "{failures}");
        assert!(
            failures.contains("### kv [buggy] violated (consistency): 3 run(s)\n\nFirst seed 14:"),
            "{failures}"
        );
        assert!(failures
            .contains("Replay: `faultline run scenarios/kv.yaml --variant buggy --seed 14`"));
        assert!(failures.contains("Shrink: `faultline shrink kv/buggy/seed-14/report.json"));
        assert!(failures.contains("Seeds (3): 14, 17, 22\n"), "{failures}");
        assert!(
            !failures.contains("k22"),
            "only the first seed's findings: {failures}"
        );
        assert!(failures.contains("### kv [buggy] stuck (await): 1 run(s)"));
        // The larger group first.
        assert!(failures.find("violated (consistency)") < failures.find("stuck (await)"));
    }

    #[test]
    fn a_long_seed_list_is_bounded() {
        let seeds: Vec<u64> = (1..=60).collect();
        let text = seeds_text(&seeds, SEEDS_SHOWN);
        assert!(text.starts_with("1, 2, 3, "), "{text}");
        assert!(text.ends_with("49, 50 and 10 more"), "{text}");
        assert_eq!(seeds_text(&[3, 5], SEEDS_SHOWN), "3, 5");
    }

    #[test]
    fn tallies_count_like_groups_whatever_order_the_runs_come_in() {
        let sig = |checker: &str| {
            Signature::of(
                "kv",
                "buggy",
                Outcome::Violated,
                &[Finding::new(checker, Some(Outcome::Violated), "m")],
                false,
                &[],
            )
        };
        let mut one = Vec::new();
        let mut two = Vec::new();
        let runs = [(9, "a"), (3, "b"), (5, "a"), (70, "a")];
        for (seed, checker) in runs {
            tally(&mut one, sig(checker), seed);
        }
        for (seed, checker) in runs.iter().rev() {
            tally(&mut two, sig(checker), *seed);
        }
        assert_eq!(one, two);
        assert_eq!(
            one.iter()
                .map(|t| (t.label.as_str(), t.runs, t.first_seed))
                .collect::<Vec<_>>(),
            [("violated (a)", 3, 5), ("violated (b)", 1, 3)]
        );
        assert_eq!(one[0].seeds, [5, 9, 70]);
        let mut many = Vec::new();
        for seed in (1..=60).rev() {
            tally(&mut many, sig("a"), seed);
        }
        assert_eq!((many[0].runs, many[0].seeds.len()), (60, SEEDS_SHOWN));
        assert_eq!(many[0].seeds[SEEDS_SHOWN - 1], 50);
    }
}
