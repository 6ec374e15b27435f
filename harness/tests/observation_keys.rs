//! Every model declares the keys its nodes publish (`ModelInfo::observations`,
//! what `observed:` can match and `faultline list` shows), and the declaration
//! is held to what runs publish: every state key and fact a node published in
//! a run of a bundled scenario is declared, and every declaration was
//! published by some run.

mod common;

use faultline::sim::runner::{self, env::PublishedKey};
use faultline_api::ModelInfo;
use std::collections::{BTreeMap, BTreeSet};

/// Seeds each variant of each bundled scenario runs with (chaos and workload
/// variants draw differently per seed).
const SEEDS: [u64; 2] = [1, 2];

/// Every key published by runs of the bundled scenarios, per model.
fn published() -> BTreeMap<&'static str, BTreeSet<PublishedKey>> {
    let mut by_model: BTreeMap<&'static str, BTreeSet<PublishedKey>> = BTreeMap::new();
    for scenario in common::bundled() {
        let model = scenario.model.info().name;
        for variant in &scenario.variants {
            for seed in SEEDS {
                let ((), keys) = runner::env::published_keys(|| {
                    runner::run(&scenario, variant, seed);
                });
                by_model.entry(model).or_default().extend(keys);
            }
        }
    }
    by_model
}

/// What is wrong with one model's declaration, given what its runs published.
fn mismatches(info: &ModelInfo, keys: &BTreeSet<PublishedKey>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (kind, key) in keys {
        if info.observation(*kind, key).is_none() {
            wrong.push(format!(
                "{}: published {} `{key}`, which no declaration in `observations` matches",
                info.name,
                kind.name()
            ));
        }
    }
    for declared in &info.observations {
        let seen = keys
            .iter()
            .any(|(kind, key)| *kind == declared.kind && declared.matches(key));
        if !seen {
            wrong.push(format!(
                "{}: declared {} `{}` was published by no run (remove it, or add a bundled scenario that reaches it)",
                info.name,
                declared.kind.name(),
                declared.key
            ));
        }
    }
    wrong
}

#[test]
fn every_published_key_is_declared_and_every_declaration_is_published() {
    let published = published();
    let mut wrong = Vec::new();
    for model in nodes::registry::models() {
        let info = model.info();
        let Some(keys) = published.get(info.name) else {
            wrong.push(format!("{}: no bundled scenario ran it", info.name));
            continue;
        };
        assert!(!keys.is_empty(), "{}: its runs published no key", info.name);
        wrong.extend(mismatches(info, keys));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
