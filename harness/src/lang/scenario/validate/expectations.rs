//! Expectations: outcomes, trail evidence (present, absent, in order), final
//! observations.

use super::names::Reader;
use crate::base::outcome::Outcome;
use crate::base::trail::Kind;
use crate::lang::scenario::raw;
use crate::lang::scenario::{Expect, KnownDefect, TrailMatch};
use crate::lang::yaml::{from_node, Node, Spanned, Value};
use faultline_api::{BugMode, BugSet};
use schemars::{json_schema, Schema, SchemaGenerator};

/// The words a node reference may be instead of a node name.
pub(super) const TARGET_WORDS: &[&str] = &["leader", "follower", "any"];

/// Where a trail match is written: what it may carry depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MatchPlace {
    /// `expect.trail`: `count`, `before`, `after`.
    Trail,
    /// `expect.absent`.
    Absent,
    /// An entry of `expect.sequence`.
    Sequence,
    /// The other side of a `before` or `after`.
    Order,
    /// `await: {event: ...}`.
    Await,
}

impl MatchPlace {
    fn name(self) -> &'static str {
        match self {
            MatchPlace::Trail => "in `trail`",
            MatchPlace::Absent => "in `absent`",
            MatchPlace::Sequence => "in a `sequence`",
            MatchPlace::Order => "in a `before`/`after` match",
            MatchPlace::Await => "in an event await",
        }
    }

    fn allows_count(self) -> bool {
        match self {
            MatchPlace::Trail | MatchPlace::Absent => true,
            MatchPlace::Sequence | MatchPlace::Order | MatchPlace::Await => false,
        }
    }
}

impl Reader<'_, '_> {
    pub(super) fn expect(&mut self, node: &Node) -> Option<Expect> {
        let mut expect = Expect::default();
        match &node.value {
            Value::Str(_) | Value::Seq(_) => expect.outcomes = self.outcomes(node)?,
            Value::Map(_) => {
                let full = match from_node::<raw::ExpectFull>(node) {
                    Ok(full) => full,
                    Err(e) => {
                        self.e.yaml_error(e);
                        return None;
                    }
                };
                expect.outcomes = self.outcomes(node.get("outcome").expect("serde checked"))?;
                expect.trail = self.trail_matches(&full.trail, MatchPlace::Trail);
                expect.absent = self.trail_matches(&full.absent, MatchPlace::Absent);
                expect.sequence = self.trail_matches(&full.sequence, MatchPlace::Sequence);
                if full.sequence.len() == 1 {
                    self.e.error_hint(
                        full.sequence[0].loc,
                        "a `sequence` of one match orders nothing",
                        "put the match in `trail:`, or add the events it must come before or after",
                    );
                }
                if let Some(observed) = node.get("observed") {
                    expect.observed = self.observed_list(observed);
                }
                if let Some(checker) = &full.checker {
                    expect.checker = self.expect_checker(checker, &expect.outcomes);
                }
                if let Some(except) = node.get("except") {
                    expect.known = self.known_defects(except);
                }
            }
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
                self.e.error(node.loc, "`expect` is an outcome, a list of outcomes, or {outcome, trail, absent, sequence, observed}");
                return None;
            }
        }
        Some(expect)
    }

    /// The checkers an expectation may name: the ones that decide outcomes.
    fn checker_names(&self) -> Vec<String> {
        let mut known: Vec<String> = ["consistency", "divergence", "election_safety"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        known.extend(
            self.info
                .invariants
                .iter()
                .map(|i| format!("invariant:{}", i.name)),
        );
        known
    }

    /// Whether `checker` names a checker, else an error at it.
    fn known_checker(&mut self, checker: &Spanned<String>) -> bool {
        let known = self.checker_names();
        if known.contains(&checker.value) {
            return true;
        }
        self.e.unknown_name(
            checker.loc,
            "checker",
            &checker.value,
            known.iter().map(String::as_str),
        );
        false
    }

    /// `except:` one `{key, checker}` or a list of them. Whether each key is
    /// buggy in the variant is checked with the variant (`known_defects_buggy`).
    fn known_defects(&mut self, node: &Node) -> Vec<KnownDefect> {
        let items: Vec<&Node> = match &node.value {
            Value::Map(_) => vec![node],
            Value::Seq(items) if !items.is_empty() => items.iter().collect(),
            Value::Seq(_)
            | Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_) => {
                self.e.error(
                    node.loc,
                    "`except` is a known defect `{key, checker}` or a list of them",
                );
                return Vec::new();
            }
        };
        let mut known = Vec::new();
        for item in items {
            let Some(raw) = self.e.read::<raw::KnownDefect>(item) else {
                continue;
            };
            // An unknown checker is reported here; the key is still checked
            // with the variant, so one pass names both mistakes.
            self.known_checker(&raw.checker);
            known.push(KnownDefect {
                loc: raw.key.loc,
                key: raw.key.value,
                checker: raw.checker.value,
            });
        }
        known
    }

    /// Every `except:` key is a bug this variant has buggy, in its own `bugs:`
    /// or in its build's (faultline-targets.yaml): an exception for a fixed
    /// bug would hide a regression of its fix.
    pub(super) fn known_defects_buggy(
        &mut self,
        known: &[KnownDefect],
        bugs: &BugSet,
        target: Option<&str>,
    ) {
        if known.is_empty() {
            return;
        }
        let build = crate::lang::targets::bugs_of(std::path::Path::new(self.e.file), target);
        for k in known {
            let mode = bugs.0.get(&k.key).or_else(|| build.0.get(&k.key)).copied();
            let model_key = self.info.bug(&k.key).is_some();
            match mode {
                Some(BugMode::Buggy) => {}
                Some(BugMode::Fixed) => self.e.error_hint(
                    k.loc,
                    format!("`{}` is fixed in this variant; an exception for it would hide a regression of the fix", k.key),
                    "name a bug the variant or its build has buggy",
                ),
                None if model_key => self.e.error_hint(
                    k.loc,
                    format!("`{}` is fixed in this variant (bugs default to fixed)", k.key),
                    format!("set `bugs: {{{}: buggy}}` in the variant, or drop the exception", k.key),
                ),
                None => {
                    let mut keys: Vec<String> = self.info.bugs.iter().map(|b| b.key.to_string()).collect();
                    keys.extend(build.0.keys().cloned());
                    if keys.is_empty() {
                        self.e.error(
                            k.loc,
                            format!("unknown bug key `{}`: neither the model nor this variant's build has known bugs", k.key),
                        );
                    } else {
                        self.e.unknown_name(k.loc, "bug key", &k.key, keys.iter().map(String::as_str));
                    }
                }
            }
        }
    }

    /// `checker:` names one checker that can decide an outcome other than converged.
    fn expect_checker(
        &mut self,
        checker: &Spanned<String>,
        outcomes: &[Outcome],
    ) -> Option<(crate::lang::yaml::Loc, String)> {
        if !self.known_checker(checker) {
            return None;
        }
        if outcomes.iter().all(|o| *o == Outcome::Converged) {
            self.e.error(
                checker.loc,
                "`checker` names what decides a failing outcome; a run expected to converge has none",
            );
            return None;
        }
        Some((checker.loc, checker.value.clone()))
    }

    fn trail_matches(
        &mut self,
        matches: &[Spanned<raw::TrailMatch>],
        place: MatchPlace,
    ) -> Vec<TrailMatch> {
        matches
            .iter()
            .filter_map(|m| self.trail_match(m, place))
            .collect()
    }

    pub(super) fn outcomes(&mut self, node: &Node) -> Option<Vec<Outcome>> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) if !items.is_empty() => items.iter().collect(),
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Seq(_)
            | Value::Map(_) => {
                self.e.error(node.loc, "an expected outcome is one of `converged`, `diverged`, `violated`, `stuck`, `crashed` (or a list of them)");
                return None;
            }
        };
        let mut outcomes = Vec::new();
        for item in items {
            let name = item.as_str().unwrap_or("");
            match Outcome::parse(name) {
                Some(o) => outcomes.push(o),
                None => self.e.unknown_name(
                    item.loc,
                    "outcome",
                    name,
                    Outcome::ALL.iter().map(|o| o.name()),
                ),
            }
        }
        (!outcomes.is_empty()).then_some(outcomes)
    }

    /// One trail match, read for `place` (which decides what it may carry).
    pub(super) fn trail_match(
        &mut self,
        m: &Spanned<raw::TrailMatch>,
        place: MatchPlace,
    ) -> Option<TrailMatch> {
        let raw = &m.value;
        let mut ok = true;
        if let Some(node) = &raw.node {
            if TARGET_WORDS.contains(&node.value.as_str()) {
                self.e.error_hint(
                    node.loc,
                    format!(
                        "a trail match names a node; `{}` is not one node over a whole run",
                        node.value
                    ),
                    "name the node, or leave `node` out to match every node",
                );
                ok = false;
            } else if self.node_ref(node).is_none() {
                ok = false;
            }
        }
        let kind = match &raw.kind {
            None => None,
            Some(kind) => {
                match serde_json::from_value::<Kind>(serde_json::Value::String(kind.value.clone()))
                {
                    Ok(k) => Some(k),
                    Err(_) => {
                        let names: Vec<String> = Kind::ALL.iter().map(|k| k.name()).collect();
                        self.e.unknown_name(
                            kind.loc,
                            "event kind",
                            &kind.value,
                            names.iter().map(String::as_str),
                        );
                        ok = false;
                        None
                    }
                }
            }
        };
        if raw.node.is_none() && raw.kind.is_none() && raw.contains.is_none() {
            self.e.error(
                m.loc,
                "a trail match needs at least one of `node`, `kind`, `contains`",
            );
            return None;
        }
        if let Some(count) = &raw.count {
            if !place.allows_count() {
                self.e.error_hint(
                    count.loc,
                    format!("`count` has no meaning {}", place.name()),
                    "write one match per expected event, or move the match to `trail:`",
                );
                ok = false;
            }
        }
        let before = self.order(&raw.before, "before", place, &mut ok);
        let after = self.order(&raw.after, "after", place, &mut ok);
        ok.then(|| TrailMatch {
            loc: m.loc,
            node: raw.node.as_ref().map(|n| n.value.clone()),
            kind,
            contains: raw.contains.clone(),
            count: raw.count.as_ref().map(|c| c.value),
            before,
            after,
        })
    }

    /// The other side of a `before` or `after` relation.
    fn order(
        &mut self,
        nested: &Option<Box<Spanned<raw::TrailMatch>>>,
        word: &str,
        place: MatchPlace,
        ok: &mut bool,
    ) -> Option<Box<TrailMatch>> {
        let nested = nested.as_ref()?;
        if place != MatchPlace::Trail {
            self.e.error_hint(
                nested.loc,
                format!(
                    "`{word}` is only for `trail:` matches, not {}",
                    place.name()
                ),
                "`sequence:` orders its own matches; `before`/`after` go on a `trail:` match",
            );
            *ok = false;
            return None;
        }
        let inner = self.trail_match(nested, MatchPlace::Order);
        if inner.is_none() {
            *ok = false;
        }
        inner.map(Box::new)
    }
}

// ---- The JSON Schema of what this module reads from the tree. ----

/// `expect:` as [`Reader::expect`] reads it.
pub(in crate::lang::scenario) fn expect_schema(generator: &mut SchemaGenerator) -> Schema {
    let full = generator.subschema_for::<raw::ExpectFull>();
    json_schema!({"anyOf": [outcomes_schema(generator), full]})
}

/// An outcome or a non-empty list of them, as [`Reader::outcomes`] reads it.
pub(in crate::lang::scenario) fn outcomes_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
    json_schema!({
        "anyOf": [
            {"enum": names},
            {"type": "array", "minItems": 1, "items": {"enum": names}},
        ],
    })
}

/// An event kind, as [`Reader::trail_match`] reads it.
pub(in crate::lang::scenario) fn event_kind_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<String> = Kind::ALL.iter().map(|k| k.name()).collect();
    json_schema!({"enum": names})
}

/// `except:` as [`Reader::known_defects`] reads it.
pub(in crate::lang::scenario) fn except_schema(generator: &mut SchemaGenerator) -> Schema {
    let one = generator.subschema_for::<raw::KnownDefect>();
    json_schema!({
        "anyOf": [one, {"type": "array", "minItems": 1, "items": one}],
    })
}

/// `observed:` of an expectation, as [`Reader::observed_list`] reads it.
pub(in crate::lang::scenario) fn observed_list_schema(generator: &mut SchemaGenerator) -> Schema {
    let one = generator.subschema_for::<raw::Observed>();
    json_schema!({"type": "array", "items": one})
}

/// What [`Reader::trail_match`] asks of every match: one of `node`, `kind`, `contains`.
pub(in crate::lang::scenario) fn trail_match_shape(schema: &mut Schema) {
    schema.insert(
        "anyOf".into(),
        serde_json::json!([
            {"required": ["node"]},
            {"required": ["kind"]},
            {"required": ["contains"]},
        ]),
    );
}
