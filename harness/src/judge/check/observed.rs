//! The one test of an observed key, used by `await: {observed: ...}` while the
//! run goes and by `expect.observed` at the end. A key is looked up in the node's
//! replicated state, else in its facts.

use crate::lang::scenario::{Absence, Number, ValueTest};
use faultline_api::Observation;

/// What a node's observation says about one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup<'o> {
    Value(&'o str),
    /// Not there; the node says it held it and removed it.
    Removed,
    /// Not there (never held, or the model does not say).
    Missing,
}

pub fn lookup<'o>(observation: &'o Observation, key: &str) -> Lookup<'o> {
    match observation
        .state
        .get(key)
        .or_else(|| observation.facts.get(key))
    {
        Some(value) => Lookup::Value(value),
        None if observation.removed.contains(key) => Lookup::Removed,
        None => Lookup::Missing,
    }
}

/// Whether every test holds for `key` of `observation`.
pub fn passes(tests: &[ValueTest], observation: &Observation, key: &str) -> bool {
    let found = lookup(observation, key);
    tests.iter().all(|test| passes_one(test, found))
}

fn passes_one(test: &ValueTest, found: Lookup) -> bool {
    match (test, found) {
        (ValueTest::Absent(_), Lookup::Value(_)) => false,
        (ValueTest::Absent(Absence::Either), _) => true,
        (ValueTest::Absent(Absence::Removed), found) => found == Lookup::Removed,
        (ValueTest::Absent(Absence::Never), found) => found == Lookup::Missing,
        (_, Lookup::Removed | Lookup::Missing) => false,
        (ValueTest::Equals(want), Lookup::Value(v)) => v == want,
        (ValueTest::Contains(text), Lookup::Value(v)) => v.contains(text.as_str()),
        (ValueTest::Matches(pattern), Lookup::Value(v)) => pattern.0.is_match(v),
        (ValueTest::Compare(compare, bound), Lookup::Value(v)) => {
            Number::parse(v).is_some_and(|n| n.holds(*compare, *bound))
        }
    }
}

/// The tests as a reader would write them: `= "10"`, `>= 3, < 9`, `absent`.
pub fn describe(tests: &[ValueTest]) -> String {
    let parts: Vec<String> = tests
        .iter()
        .map(|test| match test {
            ValueTest::Equals(v) => format!("= {v:?}"),
            ValueTest::Contains(t) => format!("contains {t:?}"),
            ValueTest::Matches(p) => format!("matches /{}/", p.0.as_str()),
            ValueTest::Compare(c, n) => format!("{} {n}", c.symbol()),
            ValueTest::Absent(Absence::Either) => "absent".into(),
            ValueTest::Absent(Absence::Removed) => "removed".into(),
            ValueTest::Absent(Absence::Never) => "never present".into(),
        })
        .collect();
    parts.join(", ")
}

/// What the node published instead, for a miss: `"12"`, `absent (removed)`.
pub fn seen(observation: &Observation, key: &str) -> String {
    match lookup(observation, key) {
        Lookup::Value(v) => format!("{v:?}"),
        Lookup::Removed => "absent (removed)".into(),
        Lookup::Missing => "absent".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::scenario::{Compare, Pattern};

    fn obs() -> Observation {
        let mut o = Observation::default();
        o.state.insert("a".into(), "0x100000005".into());
        o.facts.insert("n".into(), "12".into());
        o.removed.insert("gone".into());
        o
    }

    #[test]
    fn every_test_kind_passes_and_fails() {
        let o = obs();
        let regex = Pattern(regex::Regex::new("^0x1[0-9]+$").unwrap());
        let cases = [
            (ValueTest::Equals("12".into()), "n", true),
            (ValueTest::Equals("13".into()), "n", false),
            (ValueTest::Contains("0005".into()), "a", true),
            (ValueTest::Matches(regex.clone()), "a", true),
            (ValueTest::Matches(regex), "n", false),
            (
                ValueTest::Compare(Compare::Ge, Number::Int(0x1_0000_0005)),
                "a",
                true,
            ),
            (
                ValueTest::Compare(Compare::Gt, Number::Int(0x1_0000_0005)),
                "a",
                false,
            ),
            (
                ValueTest::Compare(Compare::Lt, Number::Float(12.5)),
                "n",
                true,
            ),
            (ValueTest::Compare(Compare::Le, Number::Int(11)), "n", false),
            (
                ValueTest::Compare(Compare::Lt, Number::Int(1)),
                "gone",
                false,
            ),
            (ValueTest::Absent(Absence::Either), "gone", true),
            (ValueTest::Absent(Absence::Either), "never", true),
            (ValueTest::Absent(Absence::Either), "n", false),
            (ValueTest::Absent(Absence::Removed), "gone", true),
            (ValueTest::Absent(Absence::Removed), "never", false),
            (ValueTest::Absent(Absence::Never), "never", true),
            (ValueTest::Absent(Absence::Never), "gone", false),
        ];
        for (test, key, want) in cases {
            assert_eq!(
                passes(std::slice::from_ref(&test), &o, key),
                want,
                "{test:?} on {key}"
            );
        }
        assert_eq!(seen(&o, "gone"), "absent (removed)");
        assert_eq!(seen(&o, "n"), "\"12\"");
    }
}
