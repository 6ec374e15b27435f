//! Deterministic histories for tests and the benchmark: concurrent clients
//! against a simulated store that is linearizable by construction (every op takes
//! effect at one instant inside its interval), with random overlap, definite
//! failures and indeterminate (`info`) ops, some of which took effect.

use super::op::CompletionKind;
use super::record::History;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What the simulated store holds per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// `put` / `get` / `delete` of a register per key (`get` of an absent key
    /// answers `not found`).
    Register,
    /// `put` / `get` of a register per key, no `delete`: every value is written
    /// once (the histories the register checker decides by zones).
    PutGet,
    /// `append` of unique integers / `get` of the whole list, per key.
    ListAppend,
    /// `append` of the text `+N`, a fresh `N` each time, / `get` of the
    /// concatenated text (`not found` before the first), per key, as raftkv's
    /// clients do (the histories the register checker decides by `appends.rs`).
    TextAppend,
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub store: Store,
    /// Ops to invoke in all.
    pub ops: usize,
    pub clients: u64,
    pub keys: usize,
    /// Percentages of ops that end `info` (half of them took effect) and `fail`.
    pub info_percent: u32,
    pub fail_percent: u32,
    pub seed: u64,
}

impl Workload {
    pub fn new(store: Store, ops: usize, clients: u64, seed: u64) -> Workload {
        Workload {
            store,
            ops,
            clients,
            keys: 8,
            info_percent: 1,
            fail_percent: 2,
            seed,
        }
    }
}

enum Action {
    Invoke(u64),
    Apply(usize),
    Complete(usize),
}

struct Pending {
    id: usize,
    client: u64,
    f: &'static str,
    key: String,
    arg: Option<i64>,
    ends: CompletionKind,
    result: (Value, Option<String>),
}

/// A history of `workload.ops` ops; the same workload gives the same history.
pub fn generate(workload: &Workload) -> History {
    let mut rng = ChaCha8Rng::seed_from_u64(workload.seed);
    let mut queue: BTreeMap<(u64, u64), Action> = BTreeMap::new();
    let mut seq = 0u64;
    let mut push = |queue: &mut BTreeMap<(u64, u64), Action>, t: u64, a: Action| {
        seq += 1;
        queue.insert((t, seq), a);
    };
    for client in 0..workload.clients.max(1) {
        let t = rng.random_range(0..1_000_000);
        push(&mut queue, t, Action::Invoke(client));
    }
    let mut history = History::new();
    let mut registers: BTreeMap<String, i64> = BTreeMap::new();
    let mut lists: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut ops: Vec<Pending> = Vec::new();
    let mut invoked = 0usize;
    let mut next_value = 1i64;
    while let Some(((now, _), action)) = queue.pop_first() {
        match action {
            Action::Invoke(client) => {
                if invoked >= workload.ops {
                    continue;
                }
                invoked += 1;
                let key = format!("k{}", rng.random_range(0..workload.keys.max(1)));
                let roll = rng.random_range(0..100);
                let (f, arg) = match (workload.store, roll) {
                    (Store::Register, 0..45) | (Store::PutGet, 0..50) => ("put", Some(next_value)),
                    (Store::Register, 45..50) => ("delete", None),
                    (Store::ListAppend | Store::TextAppend, 0..50) => ("append", Some(next_value)),
                    _ => ("get", None),
                };
                if arg.is_some() {
                    next_value += 1;
                }
                let fate = rng.random_range(0..100);
                let (ends, applies) = if fate < workload.info_percent {
                    (CompletionKind::Info, rng.random_bool(0.5))
                } else if fate < workload.info_percent + workload.fail_percent {
                    (CompletionKind::Fail, false)
                } else {
                    (CompletionKind::Ok, true)
                };
                let mut args = json!({ "key": key });
                if let Some(v) = arg {
                    args["value"] = match workload.store {
                        Store::TextAppend => json!(format!("+{v}")),
                        Store::Register | Store::PutGet | Store::ListAppend => json!(v),
                    };
                }
                let id = history
                    .invoke(client, f, args, None, now)
                    .expect("one op per client at a time, time ascending");
                let index = ops.len();
                ops.push(Pending {
                    id,
                    client,
                    f,
                    key,
                    arg,
                    ends,
                    result: (Value::Null, None),
                });
                let apply_at = now + rng.random_range(50_000..3_000_000);
                if applies {
                    push(&mut queue, apply_at, Action::Apply(index));
                }
                let done_at = apply_at + rng.random_range(50_000..3_000_000);
                let done_at = match ends {
                    CompletionKind::Info => done_at + 5_000_000,
                    CompletionKind::Ok | CompletionKind::Fail => done_at,
                };
                push(&mut queue, done_at, Action::Complete(index));
            }
            Action::Apply(index) => {
                let op = &mut ops[index];
                op.result = apply(op, workload.store, &mut registers, &mut lists);
            }
            Action::Complete(index) => {
                let op = &ops[index];
                let (value, error) = match op.ends {
                    CompletionKind::Ok => op.result.clone(),
                    CompletionKind::Fail => (Value::Null, Some("not leader".into())),
                    CompletionKind::Info => (Value::Null, Some("timeout".into())),
                };
                history
                    .complete(op.id, op.ends, value, error, now)
                    .expect("each op completes once");
                let think = rng.random_range(0..1_000_000);
                push(&mut queue, now + think, Action::Invoke(op.client));
            }
        }
    }
    history
}

/// An op takes effect on the store: its result, as its completion will say it
/// when it completes `ok`.
fn apply(
    op: &Pending,
    store: Store,
    registers: &mut BTreeMap<String, i64>,
    lists: &mut BTreeMap<String, Vec<i64>>,
) -> (Value, Option<String>) {
    match (op.f, store) {
        ("put", _) => {
            registers.insert(op.key.clone(), op.arg.unwrap_or_default());
            (Value::Null, None)
        }
        ("delete", _) => match registers.remove(&op.key) {
            Some(_) => (Value::Null, None),
            None => (Value::Null, Some("not found".into())),
        },
        ("append", _) => {
            lists
                .entry(op.key.clone())
                .or_default()
                .push(op.arg.unwrap_or_default());
            (Value::Null, None)
        }
        (_, Store::Register | Store::PutGet) => match registers.get(&op.key) {
            Some(v) => (json!(v), None),
            None => (Value::Null, Some("not found".into())),
        },
        (_, Store::ListAppend) => (json!(lists.get(&op.key).cloned().unwrap_or_default()), None),
        (_, Store::TextAppend) => match lists.get(&op.key) {
            Some(list) => (
                json!(list.iter().map(|v| format!("+{v}")).collect::<String>()),
                None,
            ),
            None => (Value::Null, Some("not found".into())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_history_and_the_mix_is_there() {
        let w = Workload::new(Store::Register, 2_000, 5, 7);
        let (a, b) = (generate(&w), generate(&w));
        assert_eq!(a, b);
        assert_eq!(a.len(), 2_000);
        let info = a.ops().iter().filter(|o| o.is_indeterminate()).count();
        let fail = a.ops().iter().filter(|o| o.is_failed()).count();
        assert!(info > 0 && fail > 0, "info {info} fail {fail}");
        let overlapping = a
            .ops()
            .windows(2)
            .filter(|w| {
                w[0].completion
                    .as_ref()
                    .is_some_and(|c| c.at.index > w[1].invoke.index)
            })
            .count();
        assert!(overlapping > 100, "{overlapping} overlapping pairs");
        let other = generate(&Workload { seed: 8, ..w });
        assert_ne!(a, other);
    }
}
