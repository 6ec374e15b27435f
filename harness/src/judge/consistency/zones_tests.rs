//! The zones against the search: on random small register histories (writes of
//! different values, reads of written, initial and unwritten values, lost
//! writes and reads, any overlap), both give the same verdict, and every
//! violation the zones name fails on its own.

use super::against_search::{agree, Rng};
use crate::judge::history::{CompletionKind, History};
use serde_json::{json, Value};

/// Up to seven ops on one key, invokes and completions interleaved at random.
fn random_history(rng: &mut Rng) -> History {
    let n = 1 + rng.below(7) as usize;
    let mut h = History::new();
    let mut written = 0u64;
    let mut open: Vec<(usize, bool)> = Vec::new();
    let (mut started, mut t) = (0usize, 0u64);
    while started < n || !open.is_empty() {
        t += 1_000_000;
        if started < n && (open.is_empty() || rng.below(2) == 0) {
            let write = rng.below(2) == 0;
            let args = if write {
                written += 1;
                json!({"key": "k", "value": written})
            } else {
                json!({"key": "k"})
            };
            let f = if write { "put" } else { "get" };
            let id = h.invoke(started as u64, f, args, None, t).unwrap();
            open.push((id, write));
            started += 1;
        } else {
            let (id, write) = open.swap_remove(rng.below(open.len() as u64) as usize);
            let lost = rng.below(5) == 0;
            let (kind, value, error) = match (lost, write) {
                (true, _) => (CompletionKind::Info, Value::Null, Some("timeout")),
                (false, true) => (CompletionKind::Ok, Value::Null, None),
                (false, false) => match rng.below(written + 2) {
                    0 => (CompletionKind::Ok, Value::Null, Some("not found")),
                    v if v <= written => (CompletionKind::Ok, json!(v), None),
                    // A value nobody wrote (yet, or ever).
                    _ => (CompletionKind::Ok, json!(written + 1), None),
                },
            };
            h.complete(id, kind, value, error.map(str::to_string), t)
                .unwrap();
        }
    }
    h
}

#[test]
fn the_zones_and_the_search_agree_on_every_small_register_history() {
    let seen = agree(17, 20_000, random_history, |_| true);
    // Both verdicts are well represented, and the zones decided nearly all.
    assert!(
        seen.passed > 5_000 && seen.failed > 5_000,
        "{} passed, {} failed",
        seen.passed,
        seen.failed
    );
    assert!(seen.decided > 15_000, "{} decided", seen.decided);
}
