//! Expectations: outcomes, trail evidence, final observations.

use super::names::Reader;
use crate::outcome::Outcome;
use crate::scenario::raw;
use crate::scenario::{Expect, ObservedMatch, TrailMatch};
use crate::trail::Kind;
use crate::yaml::{from_node, Node, Spanned, Value};

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
                expect.trail = full
                    .trail
                    .iter()
                    .filter_map(|m| self.trail_match(m))
                    .collect();
                expect.absent = full
                    .absent
                    .iter()
                    .filter_map(|m| self.trail_match(m))
                    .collect();
                expect.observed = full
                    .observed
                    .iter()
                    .filter_map(|o| self.observed(o))
                    .collect();
            }
            _ => {
                self.e.error(node.loc, "`expect` is an outcome, a list of outcomes, or {outcome, trail, absent, observed}");
                return None;
            }
        }
        Some(expect)
    }

    pub(super) fn outcomes(&mut self, node: &Node) -> Option<Vec<Outcome>> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) if !items.is_empty() => items.iter().collect(),
            _ => {
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

    pub(super) fn trail_match(&mut self, m: &Spanned<raw::TrailMatch>) -> Option<TrailMatch> {
        let raw = &m.value;
        if let Some(node) = &raw.node {
            self.node_ref(node)?;
        }
        let kind = match &raw.kind {
            None => None,
            Some(kind) => {
                match serde_json::from_value::<Kind>(serde_json::Value::String(kind.value.clone()))
                {
                    Ok(k) => Some(k),
                    Err(_) => {
                        let names: Vec<String> = all_kinds().iter().map(|k| k.name()).collect();
                        self.e.unknown_name(
                            kind.loc,
                            "event kind",
                            &kind.value,
                            names.iter().map(String::as_str),
                        );
                        return None;
                    }
                }
            }
        };
        if raw.node.is_none() && kind.is_none() && raw.contains.is_none() {
            self.e.error(
                m.loc,
                "a trail match needs at least one of `node`, `kind`, `contains`",
            );
            return None;
        }
        Some(TrailMatch {
            loc: m.loc,
            node: raw.node.as_ref().map(|n| n.value.clone()),
            kind,
            contains: raw.contains.clone(),
            count: raw.count,
        })
    }

    pub(super) fn observed(&mut self, o: &Spanned<raw::Observed>) -> Option<ObservedMatch> {
        let node = self.node_ref(&o.value.node)?;
        Some(ObservedMatch {
            loc: o.loc,
            node,
            key: o.value.key.clone(),
            value: o.value.value.clone(),
        })
    }
}

fn all_kinds() -> Vec<Kind> {
    use Kind::*;
    vec![
        OpInvoke,
        OpOk,
        OpError,
        OpTimeout,
        Network,
        Crash,
        Restart,
        Stop,
        Start,
        Transfer,
        FailPointArm,
        FailPointHit,
        FailPointClear,
        FailPointRelease,
        Sleep,
        Await,
        Check,
        Heal,
        Limit,
        Leader,
        Apply,
        Storage,
        Service,
        Submit,
        Exit,
        Note,
    ]
}
