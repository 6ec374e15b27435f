//! One register whose writes all write different values, decided without a
//! search. With every read's write known, linearizability of a read/write
//! register takes polynomial time (Gibbons & Korach, "Testing shared memories",
//! SIAM J. Comput. 26(4), 1997). This is the zone form of that result (Golab,
//! Li & Shah, "Analyzing consistency properties for fun and profit", PODC 2011):
//!
//! - a *cluster* is a write and the reads that return its value;
//! - its zone runs from the earliest completion `s` in the cluster to the latest
//!   invoke `f`: *forward* when `s < f` (some op of the cluster finished before
//!   another began, so the value had to survive from `s` to `f`), else
//!   *backward* `[f, s]`;
//! - the history is linearizable if and only if every read's write was invoked
//!   before the read completed, no two forward zones overlap, and no backward
//!   zone lies inside a forward one.
//!
//! The initial value is a write before every event. An indeterminate write
//! completes at infinity (it may take effect any time after its invoke); one no
//! read returns constrains nothing. This is what makes a pile-up tractable: a
//! stalled leader that answers ninety concurrent writes at once is 2^90 subsets
//! to the search and one sort here. Violations name the few ops that make them,
//! and those ops alone cannot be linearized either, so the search can shrink
//! them to a witness.

use std::collections::BTreeMap;

/// An op as the zones see it: a write or a read of a value id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneOp {
    Write(u32),
    Read(u32),
}

/// One op with its invoke and completion event indices (`None`: indeterminate).
#[derive(Clone, Copy, Debug)]
pub struct Timed {
    pub op: ZoneOp,
    pub call: u64,
    pub ret: Option<u64>,
}

/// The answer, when the history is one the zones can decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Zones {
    Linearizable,
    /// The positions (in the input) of ops that cannot be linearized together.
    Violation(Vec<usize>),
    /// Two writes of one value (or one of the initial value): the reads cannot
    /// be told apart, which the zones need. The search decides instead.
    NotUnique,
}

/// A time: the initial write sits before every event, an indeterminate
/// completion after every one.
type Time = i128;
const BEFORE_ALL: Time = -1;
const AFTER_ALL: Time = Time::MAX;

#[derive(Clone, Copy, Debug)]
struct Cluster {
    /// The write's position; `None` for the initial value.
    write: Option<usize>,
    write_call: Time,
    /// The earliest completion in the cluster, and whose it is.
    s: (Time, Option<usize>),
    /// The latest invoke in the cluster, and whose it is.
    f: (Time, Option<usize>),
}

impl Cluster {
    fn forward(&self) -> bool {
        self.s.0 < self.f.0
    }
    /// The ops that fix this cluster's zone.
    fn ops(&self) -> impl Iterator<Item = usize> {
        [self.write, self.s.1, self.f.1].into_iter().flatten()
    }
}

fn ret_time(t: &Timed) -> Time {
    t.ret.map_or(AFTER_ALL, Time::from)
}

/// Decide `ops`, one register starting at value `initial` (`None`: a value no
/// op reads or writes). Indeterminate reads constrain nothing and are skipped.
pub fn decide(ops: &[Timed], initial: Option<u32>) -> Zones {
    let mut clusters: BTreeMap<u32, Cluster> = BTreeMap::new();
    if let Some(v) = initial {
        clusters.insert(
            v,
            Cluster {
                write: None,
                write_call: BEFORE_ALL,
                s: (BEFORE_ALL, None),
                f: (BEFORE_ALL, None),
            },
        );
    }
    for (i, t) in ops.iter().enumerate() {
        if let ZoneOp::Write(v) = t.op {
            if clusters.contains_key(&v) {
                return Zones::NotUnique;
            }
            let call = Time::from(t.call);
            clusters.insert(
                v,
                Cluster {
                    write: Some(i),
                    write_call: call,
                    s: (ret_time(t), Some(i)),
                    f: (call, Some(i)),
                },
            );
        }
    }
    for (i, t) in ops.iter().enumerate() {
        let (ZoneOp::Read(v), Some(ret)) = (t.op, t.ret) else {
            continue;
        };
        let Some(c) = clusters.get_mut(&v) else {
            // A value nobody wrote.
            return Zones::Violation(vec![i]);
        };
        let (call, ret) = (Time::from(t.call), Time::from(ret));
        if ret < c.write_call {
            // Read before it was written.
            let mut ops: Vec<usize> = c.write.into_iter().chain([i]).collect();
            ops.sort_unstable();
            return Zones::Violation(ops);
        }
        if ret < c.s.0 {
            c.s = (ret, Some(i));
        }
        if call > c.f.0 {
            c.f = (call, Some(i));
        }
    }
    let mut forward: Vec<&Cluster> = clusters.values().filter(|c| c.forward()).collect();
    forward.sort_by_key(|c| c.s.0);
    let witness = |a: &Cluster, b: &Cluster| {
        let mut ops: Vec<usize> = a.ops().chain(b.ops()).collect();
        ops.sort_unstable();
        ops.dedup();
        Zones::Violation(ops)
    };
    // Sorted by start, forward zones are disjoint exactly when each starts after
    // the one before it ends.
    for pair in forward.windows(2) {
        if pair[1].s.0 < pair[0].f.0 {
            return witness(pair[0], pair[1]);
        }
    }
    for b in clusters.values().filter(|c| !c.forward()) {
        let (from, to) = (b.f.0, b.s.0);
        // The one forward zone that could hold `from`: the last to start before it.
        let at = forward.partition_point(|z| z.s.0 < from);
        if let Some(z) = at.checked_sub(1).map(|k| forward[k]) {
            if to < z.f.0 {
                return witness(z, b);
            }
        }
    }
    Zones::Linearizable
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(v: u32, call: u64, ret: u64) -> Timed {
        Timed {
            op: ZoneOp::Write(v),
            call,
            ret: Some(ret),
        }
    }
    fn r(v: u32, call: u64, ret: u64) -> Timed {
        Timed {
            op: ZoneOp::Read(v),
            call,
            ret: Some(ret),
        }
    }

    #[test]
    fn a_read_after_an_overwrite_is_a_backward_zone_inside_a_forward_one() {
        let ops = [w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(1, 6, 7)];
        assert_eq!(decide(&ops, None), Zones::Violation(vec![0, 2, 3]));
        // Read the new value instead and it is fine.
        let ops = [w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(2, 6, 7)];
        assert_eq!(decide(&ops, None), Zones::Linearizable);
    }

    #[test]
    fn two_writes_seen_in_both_orders_are_overlapping_forward_zones() {
        let ops = [w(1, 0, 10), w(2, 1, 11), r(1, 12, 13), r(2, 14, 15)];
        assert!(matches!(decide(&ops, None), Zones::Violation(_)));
        let ops = [w(1, 0, 10), w(2, 1, 11), r(2, 12, 13), r(2, 14, 15)];
        assert_eq!(decide(&ops, None), Zones::Linearizable);
    }

    #[test]
    fn the_initial_value_and_unwritten_or_future_values() {
        // Absent (value 0) read after a write completed.
        let ops = [w(1, 0, 1), r(0, 2, 3)];
        assert_eq!(decide(&ops, Some(0)), Zones::Violation(vec![0, 1]));
        assert_eq!(decide(&[r(0, 0, 1)], Some(0)), Zones::Linearizable);
        assert_eq!(decide(&[r(7, 0, 1)], Some(0)), Zones::Violation(vec![0]));
        assert_eq!(
            decide(&[r(1, 0, 1), w(1, 2, 3)], None),
            Zones::Violation(vec![0, 1])
        );
        assert_eq!(decide(&[w(0, 0, 1)], Some(0)), Zones::NotUnique);
        assert_eq!(decide(&[w(1, 0, 1), w(1, 2, 3)], None), Zones::NotUnique);
    }

    #[test]
    fn an_indeterminate_write_read_later_took_effect_at_some_time_after_its_invoke() {
        let lost = Timed {
            op: ZoneOp::Write(1),
            call: 0,
            ret: None,
        };
        assert_eq!(
            decide(&[lost, w(2, 1, 2), r(1, 3, 4)], None),
            Zones::Linearizable
        );
        // ... but not before a read of the value it overwrote that came later.
        assert!(matches!(
            decide(&[lost, w(2, 1, 2), r(1, 3, 4), r(2, 5, 6)], None),
            Zones::Violation(_)
        ));
    }
}
