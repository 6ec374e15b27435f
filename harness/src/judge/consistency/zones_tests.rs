//! The zones against the search: on random small register histories (writes of
//! different values, reads of written, initial and unwritten values, lost
//! writes and reads, any overlap), both give the same verdict, and every
//! violation the zones name fails on its own.

use super::register::Register;
use super::report::Report;
use super::search::{linearize, Found, Meter};
use super::spec::{Decided, Spec};
use super::{check, Budget};
use crate::judge::check::Verdict;
use crate::judge::history::{CompletionKind, History};
use serde_json::{json, Value};

/// splitmix64: the cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

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
    let mut rng = Rng(17);
    let (mut passed, mut failed, mut decided) = (0, 0, 0);
    for case in 0..20_000 {
        let history = random_history(&mut rng);
        let fast: Report = check(Register::default(), &history, &Budget::default());
        let slow: Report = check(
            Register::default().search_only(),
            &history,
            &Budget::default(),
        );
        assert_eq!(
            fast.verdict, slow.verdict,
            "case {case}: zones `{}`, search `{}`: {history:?}",
            fast.message, slow.message
        );
        match fast.verdict {
            Verdict::Pass => passed += 1,
            Verdict::Fail => failed += 1,
            Verdict::Unknown => {}
        }
        // The decision itself, on the prepared group, and its named ops alone.
        let mut spec = Register::default();
        let groups = super::partition::groups(&mut spec, &history).unwrap();
        for group in groups {
            let entries = spec.prepare(group.entries);
            match spec.decide(&entries) {
                Some(Decided::Violation(ops)) => {
                    decided += 1;
                    let few: Vec<_> = ops.iter().map(|&i| entries[i].clone()).collect();
                    let found = linearize(&spec, &few, &mut Meter::new(1_000_000));
                    assert!(
                        matches!(found, Found::Violation { .. }),
                        "case {case}: {ops:?} of {entries:?} is {found:?}"
                    );
                }
                Some(Decided::Linearizable) => decided += 1,
                None => {}
            }
        }
    }
    // Both verdicts are well represented, and the zones decided nearly all.
    assert!(
        passed > 5_000 && failed > 5_000,
        "{passed} passed, {failed} failed"
    );
    assert!(decided > 15_000, "{decided} decided");
}
