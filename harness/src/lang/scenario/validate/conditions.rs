//! `await` steps: the conditions a script waits for.

use super::expectations::MatchPlace;
use super::names::Reader;
use crate::lang::scenario::raw;
use crate::lang::scenario::{Condition, Since, StepKind, Target};
use crate::lang::yaml::{Node, Spanned, Value};
use schemars::{json_schema, Schema, SchemaGenerator};
use std::time::Duration;

const DEFAULT_WITHIN: Duration = Duration::from_secs(30);

const CONDITIONS: &str =
    "one of `leader`, `applied`, `up`, `down`, `ops_done`, `quiescent`, `observed`, `event`";

/// The keys of an await mapping that are conditions, in the order of `given`
/// in [`Reader::await_step`] (the JSON Schema asks for exactly one).
const CONDITION_KEYS: [&str; 8] = [
    "leader",
    "applied",
    "up",
    "down",
    "ops_done",
    "quiescent",
    "observed",
    "event",
];

/// The words an await may be (`- await: leader`).
const AWAIT_WORDS: [&str; 3] = ["leader", "ops_done", "quiescent"];

impl Reader<'_, '_> {
    pub(super) fn await_step(&mut self, body: &Node) -> Option<StepKind> {
        if let Value::Str(word) = &body.value {
            return self.await_word(body, word);
        }
        let raw = self.e.read::<raw::Await>(body)?;
        let given = [
            raw.leader.is_some(),
            raw.applied.is_some(),
            raw.up.is_some(),
            raw.down.is_some(),
            raw.ops_done.is_some(),
            raw.quiescent.is_some(),
            raw.observed.is_some(),
            raw.event.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            self.e
                .error_hint(body.loc, "`await` needs exactly one condition", CONDITIONS);
            return None;
        }
        if raw.nodes.is_some() && raw.applied.is_none() {
            self.e
                .error(body.loc, "`nodes` belongs to an `applied` await");
            return None;
        }
        if let (Some(since), None) = (&raw.since, &raw.event) {
            self.e
                .error(since.loc, "`since` belongs to an `event` await");
            return None;
        }
        let within = self.e.duration_or(&raw.within, DEFAULT_WITHIN);
        let condition = self.condition(&raw, body)?;
        let variants = match &raw.variants {
            None => Vec::new(),
            Some(names) if names.is_empty() => {
                self.e.error_hint(
                    body.loc,
                    "`variants: []` names no variant, so the step would never run",
                    "leave `variants` out to run it in every variant",
                );
                return None;
            }
            Some(names) => self.step_variants(names)?,
        };
        Some(StepKind::Await {
            condition,
            within,
            variants,
        })
    }

    /// `- await: leader`, `- await: ops_done`, `- await: quiescent`.
    fn await_word(&mut self, body: &Node, word: &str) -> Option<StepKind> {
        let condition = match word {
            "leader" => Condition::Leader(None),
            "ops_done" => Condition::OpsDone,
            "quiescent" => Condition::Quiescent,
            other => {
                self.e
                    .unknown_name(body.loc, "await condition", other, AWAIT_WORDS);
                return None;
            }
        };
        if condition == Condition::Leader(None) && !self.info.has_leader {
            self.e.error(body.loc, "this model has no leader to await");
            return None;
        }
        Some(StepKind::Await {
            condition,
            within: DEFAULT_WITHIN,
            variants: Vec::new(),
        })
    }

    /// The one condition of an await mapping (exactly one is given).
    fn condition(&mut self, raw: &raw::Await, body: &Node) -> Option<Condition> {
        if let Some(leader) = &raw.leader {
            return self.leader_condition(leader);
        }
        if let Some(applied) = &raw.applied {
            let mut nodes = Vec::new();
            for name in raw.nodes.iter().flatten() {
                nodes.push(self.target(name)?);
            }
            return Some(Condition::Applied {
                index: applied.value,
                nodes,
            });
        }
        if let Some(up) = &raw.up {
            return self.target(up).map(Condition::Up);
        }
        if let Some(down) = &raw.down {
            let target = self.target(down)?;
            if target == Target::Leader {
                self.e.error_hint(
                    down.loc,
                    "the leader is an up node by definition, so it is never down",
                    "name the node, or await `{down: any}`",
                );
                return None;
            }
            return Some(Condition::Down(target));
        }
        if raw.ops_done.is_some() {
            return Some(Condition::OpsDone);
        }
        if raw.quiescent.is_some() {
            return Some(Condition::Quiescent);
        }
        if let Some(event) = &raw.event {
            let since = match &raw.since {
                None => Since::Step,
                Some(s) if s.value == "step" => Since::Step,
                Some(s) if s.value == "run" => Since::Run,
                Some(s) => {
                    self.e.unknown_name(s.loc, "`since`", &s.value, SINCE_WORDS);
                    return None;
                }
            };
            let event = self.trail_match(event, MatchPlace::Await)?;
            return Some(Condition::Event { event, since });
        }
        let observed = body.get("observed").expect("one condition given");
        self.observed_match(observed).map(Condition::Observed)
    }

    /// `leader: NODE` (that node leads) or `leader: any` (some node leads).
    fn leader_condition(&mut self, leader: &Spanned<String>) -> Option<Condition> {
        if !self.info.has_leader {
            self.e
                .error(leader.loc, "this model has no leader to await");
            return None;
        }
        match self.target(leader)? {
            Target::Any => Some(Condition::Leader(None)),
            Target::Node(node) => Some(Condition::Leader(Some(node))),
            Target::Leader | Target::Follower | Target::Role(_) => {
                self.e.error_hint(
                    leader.loc,
                    format!("`leader: {}` awaits nothing", leader.value),
                    "name the node that must lead, or write `any`",
                );
                None
            }
        }
    }
}

/// What `since:` may be.
const SINCE_WORDS: [&str; 2] = ["step", "run"];

// ---- The JSON Schema of what this module reads from the tree. ----

/// An `await` step's value, as [`Reader::await_step`] reads it.
pub(super) fn await_body_schema(generator: &mut SchemaGenerator) -> Schema {
    let full = generator.subschema_for::<raw::Await>();
    json_schema!({"anyOf": [{"enum": AWAIT_WORDS}, full]})
}

/// `since:` of an event await.
pub(in crate::lang::scenario) fn since_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"enum": SINCE_WORDS})
}

/// What [`Reader::await_step`] asks of a mapping: exactly one condition,
/// `nodes` only with `applied`, `since` only with `event`.
pub(in crate::lang::scenario) fn await_shape(schema: &mut Schema) {
    let one: Vec<serde_json::Value> = CONDITION_KEYS
        .iter()
        .map(|key| serde_json::json!({"required": [key]}))
        .collect();
    schema.insert("oneOf".into(), one.into());
    schema.insert(
        "dependentRequired".into(),
        serde_json::json!({"nodes": ["applied"], "since": ["event"]}),
    );
}
