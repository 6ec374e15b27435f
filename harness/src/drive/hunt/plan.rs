//! What a hunt runs: per chaos scenario, one variant per bug key of its model
//! (that key `buggy`, every other key `fixed`) and one with every key `fixed`.
//!
//! The differential design is what makes a find attributable: a failure that
//! appears only when one key is buggy was caused by that key's code, and the
//! all-fixed variant must stay at zero failures over the same (or more) seeds.
//!
//! A scenario whose variants pick builds of a real system (`target:`) cannot
//! switch a bug on: the bug is in the release. Its keys are those the targets
//! manifest declares for the builds its variants run (`bugs:` per target); a
//! key's arm is the scenario's own variant on a release with that key `buggy`,
//! and the control its variant on a release with every such key `fixed`.

use crate::lang::scenario::{Scenario, Variant};
use faultline_api::{BugMode, BugSet};
use std::collections::BTreeSet;
use std::path::Path;

/// Which side of the differential a hunted variant is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arm {
    /// This one bug key `buggy`, the others `fixed`.
    Buggy(String),
    /// Every bug key `fixed`: the false-positive control.
    Fixed,
}

impl Arm {
    /// The name of the hunted variant (also its row in the table).
    pub fn variant_name(&self) -> String {
        match self {
            Arm::Buggy(key) => format!("hunt:{key}"),
            Arm::Fixed => "hunt:fixed".to_string(),
        }
    }

    pub fn key(&self) -> Option<&str> {
        match self {
            Arm::Buggy(key) => Some(key),
            Arm::Fixed => None,
        }
    }
}

/// Whether the scenario's variants pick builds: its bugs are switched by build.
pub fn by_build(scenario: &Scenario) -> bool {
    scenario.variants.iter().any(|v| v.target.is_some())
}

/// The bug modes of the release a variant runs, as the targets manifest
/// declares them (empty when it declares none, or the variant names no target).
pub fn build_bugs(scenario: &Scenario, variant: &Variant) -> BugSet {
    crate::lang::targets::bugs_of(Path::new(&scenario.file), variant.target.as_deref())
}

/// Per variant, in file order, the bug modes its run has: the build's for a
/// scenario that picks builds, else the variant's own.
fn variant_bugs(scenario: &Scenario) -> Vec<(&Variant, BugSet)> {
    let builds = by_build(scenario);
    scenario
        .variants
        .iter()
        .map(|v| {
            let bugs = if builds {
                build_bugs(scenario, v)
            } else {
                v.bugs.clone()
            };
            (v, bugs)
        })
        .collect()
}

/// The bug keys a hunt can switch in this scenario: its model's, or for a
/// scenario that picks builds, the keys some build of it has `buggy`.
pub fn keys(scenario: &Scenario) -> Vec<String> {
    if !by_build(scenario) {
        return scenario
            .model
            .info()
            .bugs
            .iter()
            .map(|b| b.key.to_string())
            .collect();
    }
    let keys: BTreeSet<String> = variant_bugs(scenario)
        .into_iter()
        .flat_map(|(_, bugs)| bugs.0.into_iter())
        .filter(|(_, mode)| *mode == BugMode::Buggy)
        .map(|(key, _)| key)
        .collect();
    keys.into_iter().collect()
}

/// The scenario's variant a hunt builds on: the first whose bugs are all fixed (a
/// chaos scenario's nightly variant). Its params and expectations are kept. For
/// a scenario that picks builds: the first variant on a release that has every
/// hunted key `fixed` (a key it does not declare does not count as fixed).
pub fn base_variant(scenario: &Scenario) -> Option<&Variant> {
    if by_build(scenario) {
        let keys = keys(scenario);
        return variant_bugs(scenario)
            .into_iter()
            .find(|(_, bugs)| keys.iter().all(|k| bugs.0.get(k) == Some(&BugMode::Fixed)))
            .map(|(v, _)| v);
    }
    scenario
        .variants
        .iter()
        .find(|v| v.bugs.0.values().all(|m| *m == BugMode::Fixed))
}

/// Whether the scenario has a chaos section that draws its schedule from the
/// seed. One that plays a given schedule (a shrunk find, an edited replay) is
/// a scripted run: every seed plays the same faults and ops, so a hunt, which
/// sweeps seeds for what they draw, has nothing to explore there. A scenario
/// whose model runs in a target's binary is not parsed here beyond dispatch,
/// so its text is asked.
fn draws_chaos(scenario: &Scenario) -> bool {
    match &scenario.chaos {
        Some(chaos) => chaos.schedule.is_none(),
        None => crate::lang::yaml::parse(&scenario.source, &crate::lang::yaml::Limits::default())
            .ok()
            .and_then(|root| {
                root.get("chaos")
                    .map(|chaos| chaos.get("schedule").is_none())
            })
            .unwrap_or(false),
    }
}

/// Whether a scenario takes part in a hunt: a chaos section that draws its
/// schedule, a variant with every bug fixed, and at least one bug key to
/// switch.
pub fn huntable(scenario: &Scenario) -> bool {
    draws_chaos(scenario) && base_variant(scenario).is_some() && !keys(scenario).is_empty()
}

/// The arms of one scenario: every bug key of its model (optionally only those
/// in `only`), then the all-fixed control.
pub fn arms(scenario: &Scenario, only: &[String]) -> Vec<Arm> {
    let mut arms: Vec<Arm> = keys(scenario)
        .into_iter()
        .filter(|key| only.is_empty() || only.iter().any(|o| o == key))
        .map(Arm::Buggy)
        .collect();
    if !arms.is_empty() || only.is_empty() {
        arms.push(Arm::Fixed);
    }
    arms
}

/// For a scenario that picks builds: the variant one arm runs, unchanged (its
/// build's binary finds it by name).
fn build_variant<'a>(scenario: &'a Scenario, arm: &Arm) -> &'a Variant {
    let chosen = match arm.key() {
        Some(key) => variant_bugs(scenario)
            .into_iter()
            .find(|(_, bugs)| bugs.0.get(key) == Some(&BugMode::Buggy))
            .map(|(v, _)| v),
        None => base_variant(scenario),
    };
    chosen.expect("only keys some build has buggy are planned")
}

/// The variant one arm runs: the base variant with its bug modes replaced, or
/// for a scenario that picks builds, its variant on the arm's build.
pub fn variant(scenario: &Scenario, arm: &Arm) -> Variant {
    if by_build(scenario) {
        let v = build_variant(scenario, arm);
        return Variant {
            name: v.name.clone(),
            loc: v.loc,
            target: v.target.clone(),
            bugs: v.bugs.clone(),
            params: v.params.clone(),
            expect: without_known(&v.expect),
        };
    }
    let base = base_variant(scenario).expect("only huntable scenarios are planned");
    let mut bugs = BugSet::default();
    for bug in &scenario.model.info().bugs {
        let mode = if arm.key() == Some(bug.key) {
            BugMode::Buggy
        } else {
            BugMode::Fixed
        };
        bugs.0.insert(bug.key.to_string(), mode);
    }
    Variant {
        name: arm.variant_name(),
        loc: base.loc,
        target: base.target.clone(),
        bugs,
        params: base.params.clone(),
        expect: without_known(&base.expect),
    }
}

/// An arm's expectation: the variant's without its known defects
/// (`expect.except`), so that a hunt counts every find of them.
fn without_known(expect: &crate::lang::scenario::Expect) -> crate::lang::scenario::Expect {
    crate::lang::scenario::Expect {
        known: Vec::new(),
        ..expect.clone()
    }
}

/// The command that replays one hunted run with the stock CLI: the base variant
/// with the arm's bug switched on, or the arm's build's variant as it is.
pub fn replay_command(scenario: &Scenario, arm: &Arm, seed: u64) -> String {
    if by_build(scenario) {
        let v = build_variant(scenario, arm);
        return crate::sim::runner::replay_command(
            &scenario.file,
            &v.name,
            seed,
            &BugSet::default(),
        );
    }
    let base = base_variant(scenario).expect("only huntable scenarios are planned");
    let mut overrides = BugSet::default();
    if let Some(key) = arm.key() {
        overrides.0.insert(key.to_string(), BugMode::Buggy);
    }
    crate::sim::runner::replay_command(&scenario.file, &base.name, seed, &overrides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::scenario::load_str;

    const CHAOS: &str = r#"
name: hunted
model: ozone-om
nodes: [om1, om2, om3]
variants:
  nightly:
    bugs: {HDDS-17603: fixed}
    expect: converged
steps:
  - await: {leader: any, within: 10s}
chaos:
  window: 1s
  faults: {crash: 1}
"#;

    #[test]
    fn one_arm_per_bug_key_then_the_fixed_control() {
        let scenario = load_str("hunted.yaml", CHAOS).expect("valid");
        assert!(huntable(&scenario));
        let arms = arms(&scenario, &[]);
        let names: Vec<String> = arms.iter().map(Arm::variant_name).collect();
        assert_eq!(
            names,
            [
                "hunt:HDDS-17603",
                "hunt:HDDS-10798",
                "hunt:HDDS-17670",
                "hunt:fixed"
            ]
        );
        let v = variant(&scenario, &arms[1]);
        assert_eq!(v.bugs.0["HDDS-10798"], BugMode::Buggy);
        assert_eq!(v.bugs.0["HDDS-17603"], BugMode::Fixed);
        assert_eq!(v.bugs.0["HDDS-17670"], BugMode::Fixed);
        let fixed = variant(&scenario, &arms[3]);
        assert!(fixed.bugs.0.values().all(|m| *m == BugMode::Fixed));
        assert_eq!(
            replay_command(&scenario, &arms[1], 7),
            "faultline run hunted.yaml --variant nightly --seed 7 --bug HDDS-10798=buggy"
        );
    }

    #[test]
    fn a_key_filter_keeps_the_control() {
        let scenario = load_str("hunted.yaml", CHAOS).expect("valid");
        let arms = arms(&scenario, &["HDDS-17670".to_string()]);
        assert_eq!(arms, [Arm::Buggy("HDDS-17670".into()), Arm::Fixed]);
        assert!(super::arms(&scenario, &["NOPE".to_string()]).is_empty());
    }

    #[test]
    fn scripted_scenarios_are_not_hunted() {
        let text = CHAOS.split("chaos:").next().expect("head");
        let scenario = load_str("scripted.yaml", text).expect("valid");
        assert!(!huntable(&scenario));
    }

    #[test]
    fn a_chaos_section_that_plays_a_given_schedule_is_not_hunted() {
        let bundled = |name: &str| {
            let path = format!("{}/../scenarios/ozone/{name}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).expect("bundled");
            load_str(name, &text).expect("valid")
        };
        // A shrunk find: its chaos section gives the schedule and the ops.
        let shrunk = bundled("hdds-17670-found-by-chaos.yaml");
        assert!(shrunk.chaos.as_ref().is_some_and(|c| c.schedule.is_some()));
        assert!(!huntable(&shrunk));
        // The file it was found on draws them from the seed.
        let auto = bundled("ozone-om-auto.yaml");
        assert!(auto.chaos.as_ref().is_some_and(|c| c.schedule.is_none()));
        assert!(huntable(&auto));
    }
}
