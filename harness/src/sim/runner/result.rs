//! Everything a run produced: the verdict, the trail, the final observations.

use super::env::OpRecord;
use super::Driver;
use crate::base::outcome::Outcome;
use crate::base::text::shell_quote;
use crate::base::trail::Trail;
use crate::judge::check::{outcome_of, Finding};
use crate::judge::history::ClientHistory;
use crate::sim::faults::ArmSummary;
use faultline_api::{ClusterView, Observation};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub const HARNESS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version of `report.json`'s shape (`docs/schema/report.schema.json`). Raised when a
/// field changes meaning or goes away, so a reader can refuse what it cannot read.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FinalNode {
    pub name: String,
    pub role: String,
    pub up: bool,
    pub starts: u32,
    pub observation: Observation,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MessageCount {
    /// Start of the 100 ms bucket.
    pub t_ms: u64,
    pub from: String,
    pub to: String,
    pub kind: String,
    pub count: u32,
}

/// What clients saw, and what the consistency checker made of it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Clients {
    #[serde(flatten)]
    pub history: ClientHistory,
    /// The checker's report; `None` when nothing was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<crate::judge::consistency::Report>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// [`REPORT_SCHEMA_VERSION`] when written; 0 in reports older than versioning.
    #[serde(default)]
    pub schema_version: u32,
    pub harness_version: String,
    pub scenario: String,
    /// The scenario file as it was given (relative to where faultline ran, or
    /// absolute): for display.
    pub file: String,
    /// The scenario file's absolute path, which `replay` and `shrink` load from
    /// any directory; empty for a scenario that was not read from a file, and
    /// in reports written before it was recorded (then `file` is read).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file_absolute: String,
    pub scenario_sha256: String,
    pub model: String,
    pub variant: String,
    /// The build the variant ran on (`openraft@0.10.0-alpha.24`); absent for
    /// the model built into faultline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The bug modes this run had (the variant's, with any `--bug` override).
    #[serde(default)]
    pub bugs: faultline_api::BugSet,
    /// The model params the nodes started with (the variant's, with any drawn by
    /// the chaos section laid over them).
    #[serde(default)]
    pub params: serde_json::Value,
    pub seed: u64,
    pub outcome: Outcome,
    pub expected: Vec<Outcome>,
    pub passed: bool,
    /// The known defects (`expect.except`) this run's failure is: its outcome
    /// is not the expected one, and every finding that decided it is a checker
    /// an exception names. Such a run counts as passed, and is reported as the
    /// known defect; empty for every other run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_defects: Vec<String>,
    pub trail_digest: String,
    pub sim_elapsed_ms: u64,
    pub sim_steps: u64,
    /// Wall time of the run; varies between runs and is never part of the trail.
    pub wall_ms: u64,
    pub findings: Vec<Finding>,
    /// Invariants the run could not judge (a liveness bound it did not reach),
    /// with why: not a failure of this run, never a pass either; the coverage
    /// ledger counts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<crate::judge::check::invariants::Unjudged>,
    /// Where each `sequence:` entry of the variant's expectation matched on
    /// the trail (absent when the variant has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<crate::judge::check::expect::SequenceMatch>,
    /// Where this failed run departs from its twin with a bug key fixed (the
    /// same seed and schedule): the find's cause, read off the differential
    /// run (`runner::differential`; filled in by the commands that report it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differential: Vec<crate::judge::check::differential::Departure>,
    /// The rerun that checked the faults a finding's cause names: the same
    /// seed and schedule without them (`runner::confirm_causes`; filled in by
    /// the commands that report it, for a failure no bug key explains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_check: Option<CauseCheck>,
    pub fail_points: Vec<ArmSummary>,
    /// The bug modes given on the command line (`--bug KEY=MODE`), laid over
    /// the variant's to make `bugs`; the replay command passes them again.
    #[serde(default, skip_serializing_if = "is_empty_bugs")]
    pub bug_overrides: faultline_api::BugSet,
    pub replay: String,
    /// The `--param NAME=VALUE` overrides the run had (`run`, `sweep`): a
    /// replay of this report applies them again (a pinned param is not drawn).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub param_overrides: Vec<String>,
    pub nodes: Vec<FinalNode>,
    pub ops: Vec<OpRecord>,
    /// The client history (docs/history.md) and its judgment.
    #[serde(default)]
    pub clients: Clients,
    pub messages_total: u64,
    pub messages: Vec<MessageCount>,
    /// What the run exercised: probes, fail points, faults (the ledger's input).
    #[serde(default)]
    pub coverage: crate::sim::coverage::Coverage,
    /// What the seed drew for the chaos section (swarm testing, drawn params).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<super::swarm::SwarmDraw>,
    /// The chaos window's schedule as it was played, in the schedule file's
    /// form (docs/scenario-format.md, "Schedules"): its faults, and its ops when
    /// they were given rather than drawn from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<serde_json::Value>,
    /// Whether the schedule was an input of the run (`--schedule`, an edited or
    /// shrunk run) rather than drawn from the seed or written in the scenario:
    /// a replay must then be given it too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub schedule_given: bool,
    pub trail: Trail,
}

impl RunResult {
    /// Whether a departure from the fixed twin explains this run's find: the
    /// twin (one bug key fixed) met the expectation this run missed. The
    /// faults in effect are then not offered as the cause.
    pub fn departed(&self) -> bool {
        self.differential.iter().any(|d| d.fixed_passed)
    }

    /// Mark a run's result with its overrides: its replay command takes the
    /// flags, its report the bug overrides and params (for `faultline
    /// replay`). A `--bug` given as a run input (`runner::Inputs::bugs`) is
    /// already there and is not added twice.
    pub fn stamp_overrides(&mut self, overrides: &crate::lang::scenario::Overrides) {
        for b in &overrides.bugs {
            let Some((key, mode)) = b.split_once('=') else {
                continue;
            };
            let mode = match mode {
                "buggy" => faultline_api::BugMode::Buggy,
                "fixed" => faultline_api::BugMode::Fixed,
                _ => continue,
            };
            if !self.bug_overrides.0.contains_key(key) {
                self.bug_overrides.0.insert(key.to_string(), mode);
                self.replay
                    .push_str(&format!(" --bug {}", crate::base::text::shell_quote(b)));
            }
        }
        for p in &overrides.params {
            self.replay
                .push_str(&format!(" --param {}", crate::base::text::shell_quote(p)));
        }
        self.param_overrides = overrides.params.clone();
    }

    /// A run of `variant` with `seed` that has not happened: who it is (scenario,
    /// variant, seed, build of the harness) and nothing else, `unknown`. The
    /// driver fills in what its run did; a run that could not be placed adds why.
    pub(super) fn unrun(
        scenario: &crate::lang::scenario::Scenario,
        variant: &crate::lang::scenario::Variant,
        seed: u64,
    ) -> RunResult {
        let trail = Trail::default();
        RunResult {
            schema_version: REPORT_SCHEMA_VERSION,
            harness_version: HARNESS_VERSION.to_string(),
            scenario: scenario.name.clone(),
            file: scenario.file.clone(),
            file_absolute: absolute(&scenario.file),
            scenario_sha256: scenario.sha256.clone(),
            model: scenario.model.info().name.to_string(),
            variant: variant.name.clone(),
            target: variant.target.clone(),
            bugs: variant.bugs.clone(),
            params: variant.params.clone(),
            seed,
            outcome: Outcome::Unknown,
            expected: variant.expect.outcomes.clone(),
            passed: false,
            known_defects: Vec::new(),
            trail_digest: trail.digest(),
            sim_elapsed_ms: 0,
            sim_steps: 0,
            wall_ms: 0,
            findings: Vec::new(),
            unjudged: Vec::new(),
            sequence: Vec::new(),
            differential: Vec::new(),
            cause_check: None,
            fail_points: Vec::new(),
            bug_overrides: Default::default(),
            replay: replay_command(&scenario.file, &variant.name, seed, &Default::default()),
            param_overrides: Vec::new(),
            nodes: Vec::new(),
            ops: Vec::new(),
            clients: Default::default(),
            messages_total: 0,
            messages: Vec::new(),
            // Nothing ran, so nothing was covered.
            coverage: crate::sim::coverage::Coverage {
                model: scenario.model.info().name.to_string(),
                chaos: scenario.chaos.is_some(),
                ..Default::default()
            },
            swarm: None,
            schedule: None,
            schedule_given: false,
            trail,
        }
    }

    pub(super) fn build(
        driver: &Driver<'_>,
        view: ClusterView,
        trail: Trail,
        findings: Vec<Finding>,
        clients: Clients,
        wall: Duration,
    ) -> RunResult {
        let scenario = driver.scenario;
        let variant = driver.variant;
        let outcome = outcome_of(&findings);
        let expected = variant.expect.outcomes.clone();
        let known_defects = known_defects(&variant.expect, outcome, &findings);
        let passed = (expected.contains(&outcome) && findings.iter().all(|f| f.outcome.is_some()))
            || !known_defects.is_empty();
        let state = driver.cluster.state();
        let nodes = view
            .nodes
            .into_iter()
            .zip(&state.nodes)
            .map(|(v, n)| FinalNode {
                name: v.name,
                role: v.role,
                up: v.up,
                starts: n.incarnation,
                observation: v.observation,
            })
            .collect();
        let messages = state
            .messages
            .iter()
            .map(|((t_ms, from, to, kind), count)| MessageCount {
                t_ms: *t_ms,
                from: from.clone(),
                to: to.clone(),
                kind: kind.clone(),
                count: *count,
            })
            .collect();
        let fail_points = driver.nemesis.summaries();
        let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
        let mut coverage = crate::sim::coverage::Coverage::of(
            scenario.model.info().name,
            scenario.chaos.is_some(),
            &trail,
            &fail_points,
        );
        for u in driver.unjudged.iter().filter(|u| !u.allowed) {
            let name = u.checker.strip_prefix("invariant:").unwrap_or(&u.checker);
            coverage.unjudged.insert(name.to_string(), u.why.clone());
        }
        RunResult {
            params: driver.params.clone(),
            outcome,
            expected,
            passed,
            known_defects,
            trail_digest: trail.digest(),
            sim_elapsed_ms: driver.cluster.elapsed_ms(),
            sim_steps: driver.cluster.steps(),
            wall_ms: wall.as_millis() as u64,
            findings,
            unjudged: driver.unjudged.clone(),
            sequence: crate::judge::check::expect::sequence_matches(
                &driver.variant.expect.sequence,
                &trail,
            ),
            differential: Vec::new(),
            fail_points,
            nodes,
            ops: state.ops.values().cloned().collect(),
            clients,
            messages_total: state.messages_total,
            messages,
            coverage,
            swarm: driver.swarm.clone(),
            schedule: driver.played.as_ref().map(|s| s.to_json(&names)),
            schedule_given: driver.schedule_given,
            trail,
            ..RunResult::unrun(scenario, variant, driver.seed)
        }
    }

    /// The faults that fired, one line each.
    pub fn faults_fired(&self) -> Vec<String> {
        self.trail
            .iter()
            .filter(|e| e.kind.is_fault() || e.kind == crate::base::trail::Kind::FailPointHit)
            .map(|e| {
                format!(
                    "{} ms {}{}",
                    e.t_ms,
                    e.node
                        .as_ref()
                        .map(|n| format!("{n}: "))
                        .unwrap_or_default(),
                    e.detail
                )
            })
            .collect()
    }

    /// The scenario file to load: [`RunResult::file_absolute`], else (a report
    /// written before it was recorded) `file`.
    pub fn scenario_path(&self) -> &str {
        if self.file_absolute.is_empty() {
            &self.file
        } else {
            &self.file_absolute
        }
    }

    /// The variant as the headline names it: its name, then any `--bug`
    /// override (`fixed --bug ZOOKEEPER-4541=buggy`).
    pub fn variant_label(&self) -> String {
        let mut label = self.variant.clone();
        for (key, mode) in &self.bug_overrides.0 {
            label.push_str(&format!(" --bug {key}={}", mode_name(*mode)));
        }
        label
    }
}

fn is_empty_bugs(bugs: &faultline_api::BugSet) -> bool {
    bugs.0.is_empty()
}

fn mode_name(mode: faultline_api::BugMode) -> &'static str {
    match mode {
        faultline_api::BugMode::Buggy => "buggy",
        faultline_api::BugMode::Fixed => "fixed",
    }
}

/// `file` as an absolute path with every link resolved, so that a report read
/// from another directory still finds its scenario; empty when no such file
/// exists (a scenario made in memory), and then a reader falls back to `file`.
fn absolute(file: &str) -> String {
    std::fs::canonicalize(file)
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The command that reruns a run with the stock CLI: its scenario file, variant
/// and seed, and every bug override it had (in key order).
pub fn replay_command(
    file: &str,
    variant: &str,
    seed: u64,
    overrides: &faultline_api::BugSet,
) -> String {
    let mut command = format!(
        "faultline run {} --variant {} --seed {seed}",
        shell_quote(file),
        shell_quote(variant)
    );
    for (key, mode) in &overrides.0 {
        command.push_str(&format!(
            " --bug {}",
            shell_quote(&format!("{key}={}", mode_name(*mode)))
        ));
    }
    command
}

/// The known defects a run's failure is (`expect.except`): none unless the
/// outcome is not an expected one, some finding decided it, no expectation
/// other than the outcome failed, and every deciding finding's checker is one
/// an exception names. The keys, sorted.
pub fn known_defects(
    expect: &crate::lang::scenario::Expect,
    outcome: Outcome,
    findings: &[Finding],
) -> Vec<String> {
    if expect.known.is_empty() || expect.outcomes.contains(&outcome) {
        return Vec::new();
    }
    if findings.is_empty() || findings.iter().any(|f| f.outcome.is_none()) {
        return Vec::new();
    }
    let mut keys = Vec::new();
    for f in findings {
        let matching: Vec<&crate::lang::scenario::KnownDefect> = expect
            .known
            .iter()
            .filter(|k| k.checker == f.checker)
            .collect();
        if matching.is_empty() {
            return Vec::new();
        }
        keys.extend(matching.iter().map(|k| k.key.clone()));
    }
    keys.sort();
    keys.dedup();
    keys
}

/// What the rerun without the cause's faults showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseCheck {
    /// The schedule entries removed (positions in `schedule.faults`).
    pub removed: Vec<u32>,
    /// Those entries, as the schedule describes them.
    pub described: Vec<String>,
    /// Whether the run without them no longer ended with the same finding.
    pub finding_gone: bool,
    /// The rerun's outcome and trail digest.
    pub rerun_outcome: Outcome,
    pub rerun_digest: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::{BugMode, BugSet};

    /// The signature rule of `expect.except`, on hand-written findings.
    #[test]
    fn a_known_defect_is_a_failure_decided_by_its_checkers_alone() {
        let expect = crate::lang::scenario::Expect {
            outcomes: vec![Outcome::Converged],
            known: vec![crate::lang::scenario::KnownDefect {
                loc: crate::lang::yaml::Loc::default(),
                key: "X#1".into(),
                checker: "invariant:q".into(),
            }],
            ..Default::default()
        };
        let q = Finding::new(
            "invariant:q",
            Some(Outcome::Violated),
            "q broke".to_string(),
        );
        let d = Finding::new(
            "divergence",
            Some(Outcome::Diverged),
            "replicas differ".to_string(),
        );
        let unmet = Finding::new("expect", None, "a sequence entry never occurs".to_string());
        assert_eq!(
            known_defects(&expect, Outcome::Violated, std::slice::from_ref(&q)),
            ["X#1"]
        );
        // Another checker decided it too: not the known defect.
        assert!(known_defects(&expect, Outcome::Diverged, &[q.clone(), d]).is_empty());
        // Another expectation failed as well.
        assert!(known_defects(&expect, Outcome::Violated, &[q.clone(), unmet]).is_empty());
        // The expected outcome is no failure to excuse; nor is a run with no findings.
        assert!(known_defects(&expect, Outcome::Converged, std::slice::from_ref(&q)).is_empty());
        assert!(known_defects(&expect, Outcome::Stuck, &[]).is_empty());
        let none = crate::lang::scenario::Expect {
            known: Vec::new(),
            ..expect
        };
        assert!(known_defects(&none, Outcome::Violated, &[q]).is_empty());
    }

    #[test]
    fn a_result_records_its_target_and_the_replay_passes_every_override() {
        let scenario = crate::lang::scenario::load_str(
            "s.yaml",
            "model: raftkv\nnodes: [n1, n2, n3]\nexpect: converged\nsteps:\n  - await: leader\n",
        )
        .expect("valid");
        let mut variant = scenario.variants[0].copy();
        variant.target = Some("raftkv@1.0".into());
        let result = RunResult::unrun(&scenario, &variant, 3);
        assert_eq!(result.target.as_deref(), Some("raftkv@1.0"));
        // A scenario made in memory has no file to resolve.
        assert_eq!(result.file_absolute, "");
        assert_eq!(result.scenario_path(), "s.yaml");

        let mut overrides = BugSet::default();
        overrides.0.insert("Z-1".into(), BugMode::Fixed);
        overrides.0.insert("A#2".into(), BugMode::Buggy);
        assert_eq!(
            replay_command("dir/s.yaml", "fixed", 3, &overrides),
            "faultline run dir/s.yaml --variant fixed --seed 3 --bug 'A#2=buggy' --bug Z-1=fixed"
        );
    }
}
