//! A register's fast decisions (`zones.rs`, `appends.rs`) against the search,
//! on random small histories: the same verdict on each, and every violation a
//! fast decision names fails on its own.

use super::register::{Register, RegisterOp};
use super::report::Report;
use super::search::{linearize, Found, Meter};
use super::spec::{Decided, Entry, Spec};
use super::{check, Budget};
use crate::judge::check::Verdict;
use crate::judge::history::History;

/// splitmix64: the cases are the same on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What [`agree`] saw: histories that passed and failed, and groups a fast
/// decision settled (among those `counted` accepts).
pub struct Agreement {
    pub passed: usize,
    pub failed: usize,
    pub decided: usize,
}

/// Check `cases` histories drawn by `random` both ways; panics on the first
/// disagreement, or on a named violation that passes alone.
pub fn agree(
    seed: u64,
    cases: usize,
    random: impl Fn(&mut Rng) -> History,
    counted: impl Fn(&[Entry<RegisterOp>]) -> bool,
) -> Agreement {
    let mut rng = Rng(seed);
    let mut out = Agreement {
        passed: 0,
        failed: 0,
        decided: 0,
    };
    for case in 0..cases {
        let history = random(&mut rng);
        let fast: Report = check(Register::default(), &history, &Budget::default());
        let slow: Report = check(
            Register::default().search_only(),
            &history,
            &Budget::default(),
        );
        assert_eq!(
            fast.verdict, slow.verdict,
            "case {case}: decided `{}`, search `{}`: {history:?}",
            fast.message, slow.message
        );
        match fast.verdict {
            Verdict::Pass => out.passed += 1,
            Verdict::Fail => out.failed += 1,
            Verdict::Unknown => {}
        }
        // The decision itself, on the prepared group, and its named ops alone.
        let mut spec = Register::default();
        let groups = super::partition::groups(&mut spec, &history).unwrap();
        for group in groups {
            let entries = spec.prepare(group.entries);
            let decided = spec.decide(&entries);
            if let Some(Decided::Violation(ops)) = &decided {
                let few: Vec<_> = ops.iter().map(|&i| entries[i].clone()).collect();
                let found = linearize(&spec, &few, &mut Meter::new(1_000_000));
                assert!(
                    matches!(found, Found::Violation { .. }),
                    "case {case}: {ops:?} of {entries:?} is {found:?}"
                );
            }
            if decided.is_some() && counted(&entries) {
                out.decided += 1;
            }
        }
    }
    out
}
