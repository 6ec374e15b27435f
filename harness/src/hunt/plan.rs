//! What a hunt runs: per chaos scenario, one variant per bug key of its model
//! (that key `buggy`, every other key `fixed`) and one with every key `fixed`.
//!
//! The differential design is what makes a find attributable: a failure that
//! appears only when one key is buggy was caused by that key's code, and the
//! all-fixed variant must stay at zero failures over the same (or more) seeds.

use crate::scenario::{Scenario, Variant};
use nodes::api::{BugMode, BugSet};

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

/// The scenario's variant a hunt builds on: the first whose bugs are all fixed (a
/// chaos scenario's nightly variant). Its params and expectations are kept.
pub fn base_variant(scenario: &Scenario) -> Option<&Variant> {
    scenario
        .variants
        .iter()
        .find(|v| v.bugs.0.values().all(|m| *m == BugMode::Fixed))
}

/// Whether a scenario takes part in a hunt: it has a chaos section, a variant
/// with every bug fixed, and its model declares at least one bug key.
pub fn huntable(scenario: &Scenario) -> bool {
    scenario.chaos.is_some()
        && base_variant(scenario).is_some()
        && !scenario.model.info().bugs.is_empty()
}

/// The arms of one scenario: every bug key of its model (optionally only those
/// in `only`), then the all-fixed control.
pub fn arms(scenario: &Scenario, only: &[String]) -> Vec<Arm> {
    let mut arms: Vec<Arm> = scenario
        .model
        .info()
        .bugs
        .iter()
        .map(|b| b.key)
        .filter(|key| only.is_empty() || only.iter().any(|o| o == key))
        .map(|key| Arm::Buggy(key.to_string()))
        .collect();
    if !arms.is_empty() || only.is_empty() {
        arms.push(Arm::Fixed);
    }
    arms
}

/// The variant one arm runs: the base variant with its bug modes replaced.
pub fn variant(scenario: &Scenario, arm: &Arm) -> Variant {
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
        bugs,
        params: base.params.clone(),
        expect: base.expect.clone(),
    }
}

/// The command that replays one hunted run with the stock CLI: the base variant
/// with the arm's bug switched on.
pub fn replay_command(scenario: &Scenario, arm: &Arm, seed: u64) -> String {
    let base = base_variant(scenario).expect("only huntable scenarios are planned");
    let plain = crate::runner::replay_command(&scenario.file, &base.name, seed);
    match arm.key() {
        Some(key) => format!("{plain} --bug {key}=buggy"),
        None => plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_str;

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
}
