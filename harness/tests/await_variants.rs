//! `await` limited to some variants (`variants: [..]`): the other variants skip it,
//! and a missed `observed` await says what the node published instead.

mod common;

use faultline::base::outcome::Outcome;
use faultline::sim::runner;

const SCENARIO: &str = r#"
model: raftkv
nodes: [n1, n2, n3]
variants:
  loose: {expect: converged}
  strict: {expect: stuck}
steps:
  - await: {leader: any, within: 5s}
  - client: {op: put, key: a, value: "1", expect: ok}
  - await: {observed: {node: n1, key: a, value: "1"}, within: 5s}
  # Never true: only the strict variant waits for it.
  - await: {observed: {node: n1, key: a, value: "2"}, within: 1s, variants: [strict]}
"#;

#[test]
fn an_await_limited_to_a_variant_is_skipped_by_the_others() {
    let scenario = common::load_text("await-variants.yaml", SCENARIO);
    let loose = runner::run(&scenario, scenario.variant("loose").unwrap(), 1);
    assert_eq!(loose.outcome, Outcome::Converged, "{:?}", loose.findings);
    assert!(loose.passed, "{:?}", loose.findings);

    let strict = runner::run(&scenario, scenario.variant("strict").unwrap(), 1);
    assert_eq!(strict.outcome, Outcome::Stuck);
    assert!(strict.passed, "{:?}", strict.findings);
    let missed = strict
        .findings
        .iter()
        .find(|f| f.message.contains("missed its deadline"))
        .expect("the strict variant's await misses");
    assert!(
        missed.message.contains(
            "await-variants.yaml:12:5: await n1.a = \"2\" missed its deadline of 1s (it is \"1\")"
        ),
        "{}",
        missed.message
    );
}

#[test]
fn variants_must_be_declared_and_not_empty() {
    let unknown = SCENARIO.replace("variants: [strict]", "variants: [strcit]");
    let err = faultline::lang::scenario::load_str("x.yaml", &unknown)
        .err()
        .expect("an unknown variant is an error")
        .to_string();
    assert!(
        err.contains("12:78: error: unknown variant `strcit`")
            && err.contains("did you mean `strict`?"),
        "{err}"
    );
    let empty = SCENARIO.replace("variants: [strict]", "variants: []");
    let err = faultline::lang::scenario::load_str("x.yaml", &empty)
        .err()
        .expect("an empty list is an error")
        .to_string();
    assert!(err.contains("names no variant"), "{err}");
}
