//! A model's own sequential specification ([`faultline_api::Sequential`]) as a
//! [`Spec`]: the model says which object an op acts on and what it does there;
//! the search, the budget and the witness are the checker's own.
//!
//! A group's state is every object's state the group's ops reached so far (a
//! JSON object, object -> the model's state); states are interned to small
//! integers, and each (state, op) step the model was asked is remembered, so
//! the search hashes integers and asks the model at most once per pair.

use super::hasher::FixedMap;
use super::spec::{Entry, Scope, Spec};
use crate::judge::history::{text, CompletionKind, Op};
use faultline_api::{OpResult, Sequential};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// One op as the model reads it: the validated op and, if it completed, its answer.
#[derive(Clone, Debug)]
pub struct OwnOp {
    /// Distinct per op of the history: the key of the step cache.
    id: u32,
    /// The objects it acts on.
    objects: Rc<[String]>,
    op: Rc<Value>,
    answer: Option<OpResult>,
}

#[derive(Default)]
struct States {
    ids: BTreeMap<String, u32>,
    values: Vec<Value>,
    /// (state, op, answer known) -> the state after, or `None`.
    steps: FixedMap<(u32, u32, bool), Option<u32>>,
}

impl States {
    fn id(&mut self, value: Value) -> u32 {
        let key = value.to_string();
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.values.len() as u32;
        self.ids.insert(key, id);
        self.values.push(value);
        id
    }
}

pub struct Own<'m> {
    name: &'static str,
    spec: &'m dyn Sequential,
    /// The run's model params: objects start as the model says they do.
    params: Value,
    states: RefCell<States>,
    next_id: u32,
}

impl<'m> Own<'m> {
    /// `name`: the model's, for reports; `params`: the run's model params.
    pub fn new(name: &'static str, spec: &'m dyn Sequential, params: Value) -> Own<'m> {
        Own {
            name,
            spec,
            params,
            states: RefCell::new(States::default()),
            next_id: 0,
        }
    }
}

/// The op as the model validated it: the arguments with the `op` tag back.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn op_json(op: &Op) -> Value {
    let mut map = match &op.args {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    map.insert("op".into(), Value::String(op.f.clone()));
    Value::Object(map)
}

/// The answer as the node gave it: an `ok` completion with an error is a
/// definite "no".
fn answer(op: &Op) -> Option<OpResult> {
    let c = op
        .completion
        .as_ref()
        .filter(|c| c.kind == CompletionKind::Ok)?;
    Some(OpResult {
        ok: c.error.is_none(),
        value: (!c.value.is_null()).then(|| text(&c.value)),
        error: c.error.clone(),
    })
}

impl Spec for Own<'_> {
    type State = u32;
    type Op = OwnOp;

    fn name(&self) -> &'static str {
        self.name
    }

    fn interpret(&mut self, op: &Op) -> Result<(Scope, OwnOp), String> {
        let json = op_json(op);
        let objects = self.spec.objects(&json, op.node.as_deref().unwrap_or(""));
        if objects.is_empty() {
            return Err(format!("the model names no object for `{}`", op.f));
        }
        let id = self.next_id;
        self.next_id += 1;
        Ok((
            Scope::Objects(objects.clone()),
            OwnOp {
                id,
                objects: objects.into(),
                op: Rc::new(json),
                answer: answer(op),
            },
        ))
    }

    fn init(&self, entries: &[Entry<OwnOp>]) -> u32 {
        let mut all = Map::new();
        for entry in entries {
            for object in entry.op.objects.iter() {
                if !all.contains_key(object) {
                    let initial = self.spec.initial(object, &self.params);
                    all.insert(object.clone(), initial);
                }
            }
        }
        self.states.borrow_mut().id(Value::Object(all))
    }

    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
    )]
    fn step(&self, state: &u32, entry: &Entry<OwnOp>) -> Option<u32> {
        let known = entry.determinate();
        let key = (*state, entry.op.id, known);
        if let Some(&after) = self.states.borrow().steps.get(&key) {
            return after;
        }
        let mut group = match &self.states.borrow().values[*state as usize] {
            Value::Object(map) => map.clone(),
            _ => Map::new(),
        };
        let objects = &entry.op.objects;
        let before: Vec<Value> = objects
            .iter()
            .map(|o| {
                group
                    .get(o)
                    .cloned()
                    .unwrap_or_else(|| self.spec.initial(o, &self.params))
            })
            .collect();
        let answer = if known {
            entry.op.answer.as_ref()
        } else {
            None
        };
        let after = self
            .spec
            .step(&before, &entry.op.op, answer)
            .filter(|after| after.len() == objects.len())
            .map(|after| {
                for (object, value) in objects.iter().zip(after) {
                    group.insert(object.clone(), value);
                }
                Value::Object(group)
            });
        let mut states = self.states.borrow_mut();
        let after = after.map(|value| states.id(value));
        states.steps.insert(key, after);
        after
    }

    fn prepare(&self, entries: Vec<Entry<OwnOp>>) -> Vec<Entry<OwnOp>> {
        // Nothing is known of the model's ops beyond their steps: keep them all.
        entries
    }

    fn shrink_rank(&self, _: &OwnOp) -> u8 {
        1
    }

    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
    )]
    fn describe(&self, entry: &Entry<OwnOp>) -> String {
        let op = &entry.op.op;
        let f = op.get("op").map(text).unwrap_or_default();
        let args: Vec<String> = match op.as_ref() {
            Value::Object(map) => map
                .iter()
                .filter(|(k, _)| k.as_str() != "op")
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect(),
            _ => Vec::new(),
        };
        let answer = match (&entry.op.answer, entry.determinate()) {
            (_, false) | (None, _) => "?".to_string(),
            (Some(a), true) => match (&a.error, &a.value) {
                (Some(e), _) => e.clone(),
                (None, Some(v)) => v.clone(),
                (None, None) => "ok".into(),
            },
        };
        format!("{f}({}) -> {answer}", args.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::Verdict;
    use crate::judge::consistency::{check, Budget};
    use crate::judge::history::History;
    use serde_json::json;

    /// A counter per key that answers its new value: enough to tell orders apart.
    struct Counter;

    impl Sequential for Counter {
        fn objects(&self, op: &Value, _node: &str) -> Vec<String> {
            vec![op["key"].as_str().unwrap_or("").to_string()]
        }
        fn step(
            &self,
            states: &[Value],
            _op: &Value,
            answer: Option<&OpResult>,
        ) -> Option<Vec<Value>> {
            let next = states[0].as_u64().unwrap_or(0) + 1;
            match answer {
                Some(a) if a.value.as_deref() != Some(next.to_string().as_str()) => None,
                _ => Some(vec![json!(next)]),
            }
        }
    }

    fn history(answers: &[(u64, u64, u64, &str)]) -> History {
        // (process, invoke ms, complete ms, answer); each op a separate increment.
        let mut events: Vec<(u64, usize, bool)> = Vec::new();
        for (i, (_, call, ret, _)) in answers.iter().enumerate() {
            events.push((*call, i, false));
            events.push((*ret, i, true));
        }
        events.sort();
        let mut h = History::new();
        let mut ids = vec![0; answers.len()];
        for (t, i, done) in events {
            let (p, _, _, value) = answers[i];
            if done {
                h.complete(ids[i], CompletionKind::Ok, json!(value), None, t)
                    .unwrap();
            } else {
                ids[i] = h.invoke(p, "incr", json!({"key": "k"}), None, t).unwrap();
            }
        }
        h
    }

    #[test]
    fn the_models_own_steps_decide() {
        // Overlapping increments may answer 1 and 2 in either order.
        let ok = history(&[(0, 0, 10, "2"), (1, 1, 5, "1")]);
        let report = check(
            Own::new("counter", &Counter, Value::Null),
            &ok,
            &Budget::default(),
        );
        assert_eq!(report.verdict, Verdict::Pass, "{}", report.message);
        // One after the other, the second cannot answer 1.
        let bad = history(&[(0, 0, 2, "1"), (1, 3, 5, "1")]);
        let report = check(
            Own::new("counter", &Counter, Value::Null),
            &bad,
            &Budget::default(),
        );
        assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
        let witness = report.witness.expect("a witness");
        assert_eq!(witness.key, "k");
        assert!(
            witness.ops[0].reads_as.starts_with("incr(key=k) -> "),
            "{:?}",
            witness.ops
        );
    }
}
