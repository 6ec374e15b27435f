//! The hunt's table: per scenario and arm, how many runs failed, how soon, how
//! and why.

use super::plan::Arm;
use super::{Done, HuntOptions};
use crate::lang::scenario::Scenario;
use serde::Serialize;
use std::collections::BTreeMap;

/// Failing seeds kept per arm (the count is exact; the list is a sample).
const FAILING_SEEDS_KEPT: usize = 50;

#[derive(Clone, Debug, Serialize)]
pub struct ArmStats {
    pub scenario: String,
    pub file: String,
    pub model: String,
    /// The bug key switched on; `None` for the all-fixed control.
    pub key: Option<String>,
    /// The build the arm runs (`openraft@0.10.0-alpha.24`) when the scenario
    /// switches bugs by build; `None` when by bug mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    pub seed_first: u64,
    pub seed_last: u64,
    pub runs: usize,
    pub failed: usize,
    /// The lowest failing seed.
    pub first_failure: Option<u64>,
    /// Runs up to and including the first failure (seed order).
    pub seeds_to_first_failure: Option<u64>,
    pub failing_seeds: Vec<u64>,
    /// Every failing seed, in order (for the guided comparison's blocks).
    #[serde(skip)]
    pub failing_all: Vec<u64>,
    /// Outcomes of the failing runs.
    pub outcomes: BTreeMap<String, usize>,
    /// Checkers behind the failing runs (each failing run counts once per checker).
    pub checkers: BTreeMap<String, usize>,
    pub first_replay: Option<String>,
    /// The first failure's findings, one line each.
    pub first_findings: Vec<String>,
    /// The first find's cause, read off its differential run (the same seed
    /// and schedule with the key fixed): where the two trails depart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_cause: Option<String>,
    /// The failing runs grouped by signature (`report::groups`), most first.
    pub signatures: Vec<crate::report::groups::Tally>,
    pub wall_ms: u64,
    pub sim_ms: u64,
}

impl ArmStats {
    pub fn rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.failed as f64 / self.runs as f64
        }
    }

    fn record(&mut self, done: &Done) {
        let result = &done.result;
        self.runs += 1;
        self.wall_ms += result.wall_ms;
        self.sim_ms += result.sim_elapsed_ms;
        if result.passed {
            return;
        }
        self.failed += 1;
        *self
            .outcomes
            .entry(result.outcome.name().to_string())
            .or_default() += 1;
        let mut checkers: Vec<&str> = result.findings.iter().map(|f| f.checker.as_str()).collect();
        checkers.sort_unstable();
        checkers.dedup();
        for checker in checkers {
            *self.checkers.entry(checker.to_string()).or_default() += 1;
        }
        let signature = crate::report::groups::Signature::of(
            &self.scenario,
            self.key.as_deref().unwrap_or("(all fixed)"),
            result.outcome,
            &result.findings,
            false,
            &result.differential,
        );
        crate::report::groups::tally(&mut self.signatures, signature, done.seed);
        let at = self.failing_seeds.partition_point(|s| *s < done.seed);
        self.failing_seeds.insert(at, done.seed);
        self.failing_seeds.truncate(FAILING_SEEDS_KEPT);
        let at = self.failing_all.partition_point(|s| *s < done.seed);
        self.failing_all.insert(at, done.seed);
        if self.first_failure.is_none_or(|first| done.seed < first) {
            self.first_failure = Some(done.seed);
            self.seeds_to_first_failure = Some(done.seed - self.seed_first + 1);
            self.first_replay = Some(result.replay.clone());
            self.first_findings = result
                .findings
                .iter()
                .map(|f| format!("{}: {}", f.checker, f.message))
                .collect();
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Hunt {
    pub arms: Vec<ArmStats>,
    pub jobs: usize,
    pub wall_ms: u64,
    /// Arms that were not run: their target's build is missing. A hunt with
    /// one is incomplete.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<crate::report::NotRun>,
    /// Index into `arms` by (scenario, arm) position.
    #[serde(skip)]
    pub(super) index: Vec<Vec<usize>>,
}

impl Hunt {
    pub(super) fn new(scenarios: &[Scenario], arms: &[Vec<Arm>], options: &HuntOptions) -> Hunt {
        let mut all = Vec::new();
        let mut index = Vec::new();
        for (scenario, scenario_arms) in scenarios.iter().zip(arms) {
            let mut row = Vec::new();
            for arm in scenario_arms {
                let seeds = match arm {
                    Arm::Buggy(_) => &options.seeds,
                    Arm::Fixed => &options.fixed_seeds,
                };
                row.push(all.len());
                all.push(ArmStats {
                    scenario: scenario.name.clone(),
                    file: scenario.file.clone(),
                    model: scenario.model.info().name.to_string(),
                    key: arm.key().map(str::to_string),
                    build: if super::plan::by_build(scenario) {
                        super::plan::variant(scenario, arm).target
                    } else {
                        None
                    },
                    seed_first: *seeds.start(),
                    seed_last: *seeds.end(),
                    runs: 0,
                    failed: 0,
                    first_failure: None,
                    seeds_to_first_failure: None,
                    failing_seeds: Vec::new(),
                    failing_all: Vec::new(),
                    outcomes: BTreeMap::new(),
                    checkers: BTreeMap::new(),
                    first_replay: None,
                    first_findings: Vec::new(),
                    first_cause: None,
                    signatures: Vec::new(),
                    wall_ms: 0,
                    sim_ms: 0,
                });
            }
            index.push(row);
        }
        Hunt {
            arms: all,
            jobs: options.jobs,
            wall_ms: 0,
            not_run: Vec::new(),
            index,
        }
    }

    pub(super) fn record(&mut self, done: Done) {
        let at = self.index[done.scenario][done.arm];
        self.arms[at].record(&done);
    }

    /// Buggy arms with at least one failure.
    pub fn finds(&self) -> usize {
        self.arms
            .iter()
            .filter(|a| a.key.is_some() && a.failed > 0)
            .count()
    }

    /// Failures of all-fixed controls: each one makes the hunt's finds suspect.
    pub fn false_positives(&self) -> usize {
        self.arms
            .iter()
            .filter(|a| a.key.is_none())
            .map(|a| a.failed)
            .sum()
    }

    /// Keys (of `wanted`, or every key when it holds `all`) that a scenario
    /// hunted and never found, each with that scenario's name: a key hunted in
    /// several scenarios must be found in each.
    pub fn missed(&self, wanted: &[String]) -> Vec<String> {
        let all = wanted.iter().any(|w| w == "all");
        self.arms
            .iter()
            .filter_map(|a| a.key.as_ref().map(|k| (k, a)))
            .filter(|(k, a)| a.failed == 0 && (all || wanted.contains(k)))
            .map(|(k, a)| format!("{k} ({})", a.scenario))
            .collect()
    }
}
