//! One seed decides everything: the same scenario and seed give a byte-identical
//! trail, and different seeds explore different trails.

mod common;

use faultline::sim::runner;

#[test]
fn every_bundled_scenario_meets_its_expectation_and_replays_byte_for_byte() {
    let mut failures = Vec::new();
    for scenario in common::bundled() {
        for variant in &scenario.variants {
            let seed = scenario.settings.seed;
            let first = runner::run(&scenario, variant, seed);
            let second = runner::run(&scenario, variant, seed);
            let label = format!("{} [{}] seed {seed}", scenario.file, variant.name);
            if !first.passed {
                failures.push(format!(
                    "{label}: {} (expected {:?}): {:?}",
                    first.outcome, first.expected, first.findings
                ));
            }
            if first.trail_digest != second.trail_digest {
                let diff = faultline::base::trail::first_difference(
                    &first.trail.events,
                    &second.trail.events,
                );
                failures.push(format!(
                    "{label}: digests differ; first difference {diff:?}"
                ));
            }
            assert!(!first.trail.is_empty(), "{label}: empty trail");
            // A probe on the trail is one its model declares (what a sweep's
            // ledger counts); whether chaos reaches each is the ledger's judgment.
            for event in first.trail.iter() {
                if let Some(faultline_api::NodeEvent::Probe { probe, .. }) = event.node_event() {
                    if scenario.model.info().probe(probe).is_none() {
                        failures.push(format!("{label}: probe `{probe}` is not declared"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn different_seeds_give_different_trails_where_timeouts_are_random() {
    let scenario = common::bundled()
        .into_iter()
        .find(|s| s.name == "raftkv-leader-crash")
        .unwrap();
    let variant = &scenario.variants[0];
    let runs: Vec<_> = (1..=5)
        .map(|seed| runner::run(&scenario, variant, seed))
        .collect();
    assert!(runs.iter().all(|r| r.passed));
    let digests: std::collections::BTreeSet<&str> =
        runs.iter().map(|r| r.trail_digest.as_str()).collect();
    assert_eq!(digests.len(), runs.len(), "every seed gives its own trail");
    // Election timeouts are drawn from the seed, so the first leader appears at
    // different times (two seeds may tie by chance; five all tying would not be chance).
    let first_leader: std::collections::BTreeSet<u64> = runs
        .iter()
        .filter_map(|r| {
            r.trail
                .iter()
                .find(|e| e.detail.starts_with("leader term"))
                .map(|e| e.t_ms)
        })
        .collect();
    assert!(first_leader.len() > 1, "{first_leader:?}");
}
