//! Tests of the shrinker: compaction of waits, ddmin over actions.

use super::*;

#[test]
fn compact_shortens_every_wait_as_far_as_the_finding_allows() {
    let at = |t_ms: u64| Timed {
        t_ms,
        action: crate::base::action::Action::Heal,
        detail: String::new(),
    };
    // Fails while the first action comes at 100 ms or later and the second
    // at least 300 ms after it; the end may come at once.
    let mut calls = 0;
    let mut fails = |a: &[Timed], end: u64| {
        calls += 1;
        a[0].t_ms >= 100 && a[1].t_ms >= a[0].t_ms + 300 && end >= a[1].t_ms
    };
    let c = compact(vec![at(1_000), at(5_000)], 9_000, 200, &mut fails);
    assert!(!c.exhausted);
    let (first, second) = (c.actions[0].t_ms, c.actions[1].t_ms);
    assert!((100..=115).contains(&first), "first at {first}");
    let wait = second - first;
    assert!(
        (300..=340).contains(&wait),
        "second {wait} ms after the first"
    );
    assert!(
        c.end_ms - second <= 1,
        "the end comes at once: {}",
        c.end_ms
    );
    assert!(fails(&c.actions, c.end_ms), "what is kept still fails");
    assert_eq!(c.runs + 1, calls);
    // Out of budget: it stops, says so, and keeps what already failed.
    let mut always = |_: &[Timed], _: u64| true;
    let c = compact(vec![at(1_000), at(5_000)], 9_000, 3, &mut always);
    assert!(c.exhausted && c.runs == 3);
    assert!(c.actions[0].t_ms < 1_000 && c.actions[1].t_ms - c.actions[0].t_ms == 4_000);
}

#[test]
fn ddmin_finds_a_minimal_failing_pair() {
    // Fails whenever both 3 and 7 are present.
    let mut calls = 0;
    let (kept, runs, exhausted) = ddmin((0..20).collect(), 1000, &mut |s: &[i32]| {
        calls += 1;
        s.contains(&3) && s.contains(&7)
    });
    assert_eq!(kept, vec![3, 7]);
    assert_eq!(runs, calls);
    assert!(!exhausted);
}

#[test]
fn ddmin_respects_its_budget() {
    let (kept, runs, exhausted) = ddmin((0..64).collect(), 5, &mut |s: &[i32]| s.contains(&40));
    assert!(runs <= 5);
    assert!(exhausted);
    assert!(kept.contains(&40));
}
