//! The linearizability search of Wing & Gong, with Lowe's memoisation ("Testing
//! for linearizability", 2017), in the iterative form Horn & Kroening describe
//! ("Faster linearizability checking via P-compositionality", 2015).
//!
//! Events (invokes and completions) sit in one doubly linked list in history
//! order. Walking it, an invoke is a candidate: if the specification accepts the
//! op next, and the pair (set of linearized ops, state) is new, the op is
//! linearized and lifted out of the list (its invoke and completion), and the
//! walk restarts at the head. Reaching the completion of an op not yet
//! linearized means the current order cannot be extended: undo the last choice
//! and try the next candidate after it. Indeterminate ops complete "at infinity":
//! they may be linearized anywhere after their invoke, or never, so reaching one
//! of their completions means every determinate op is placed.
//!
//! The memo key is exact but compact: with ops numbered in invoke order, the set
//! of linearized ops is "everything below `high`, except these few", and the few
//! are the ops still open in the window (plus indeterminate ones never placed).

use super::hasher::FixedSet;
use super::spec::{Entry, Spec};

/// Steps the search may take: one step is one call of the specification. And
/// the memory one search's memo may hold: a step budget alone does not bound it
/// when each state is large (one ZooKeeper group of ~450 ops once held 15 GB
/// within its steps).
#[derive(Clone, Copy, Debug)]
pub struct Meter {
    pub left: u64,
    pub used: u64,
    pub memo_max_bytes: u64,
    /// Set when a search stopped because its memo reached `memo_max_bytes`.
    pub memo_full: bool,
}

/// A search's memo, at most (over it the verdict is `unknown`).
pub const MEMO_MAX_BYTES: u64 = 256 << 20;

impl Meter {
    pub fn new(steps: u64) -> Meter {
        Meter::with_memo(steps, MEMO_MAX_BYTES)
    }

    pub fn with_memo(steps: u64, memo_max_bytes: u64) -> Meter {
        Meter {
            left: steps,
            used: 0,
            memo_max_bytes,
            memo_full: false,
        }
    }

    fn tick(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        self.used += 1;
        true
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Every determinate op placed; the order (entry positions) is a witness.
    Linearizable { order: Vec<usize> },
    /// No order exists. `longest` is the longest prefix placed, `stuck` the op
    /// whose completion came with it still unplaced.
    Violation { longest: Vec<usize>, stuck: usize },
    /// The meter ran out first.
    OverBudget,
}

const HEAD: usize = 0;

struct List {
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl List {
    fn remove(&mut self, x: usize) {
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p] = n;
        self.prev[n] = p;
    }
    /// Undo [`List::remove`]; removals must be undone last-first.
    fn restore(&mut self, x: usize) {
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p] = x;
        self.prev[n] = x;
    }
}

#[derive(Clone, Copy)]
struct Event {
    op: usize,
    call: bool,
}

#[derive(PartialEq, Eq, Hash)]
struct Key<S> {
    high: u32,
    holes: Box<[u32]>,
    state: S,
}

struct Placed {
    bits: Vec<u64>,
    /// Every op below `low` is placed.
    low: usize,
    /// No op at or above `high` is placed.
    high: usize,
}

impl Placed {
    fn has(&self, i: usize) -> bool {
        self.bits[i / 64] & (1 << (i % 64)) != 0
    }
    fn set(&mut self, i: usize) {
        self.bits[i / 64] |= 1 << (i % 64);
        while self.low < self.high.max(i + 1) && self.has(self.low) {
            self.low += 1;
        }
    }
    fn clear(&mut self, i: usize) {
        self.bits[i / 64] &= !(1 << (i % 64));
        self.low = self.low.min(i);
    }
    /// The memo key of this set plus op `extra`.
    fn key<S>(&self, extra: usize, state: S) -> Key<S> {
        let high = self.high.max(extra + 1);
        let mut holes = Vec::new();
        let mut i = self.low;
        while i < high {
            // Bits at or above `high` are never set, so a full word is all placed.
            if i.is_multiple_of(64) && self.bits[i / 64] == u64::MAX {
                i += 64;
                continue;
            }
            if !self.has(i) && i != extra {
                holes.push(i as u32);
            }
            i += 1;
        }
        Key {
            high: high as u32,
            holes: holes.into_boxed_slice(),
            state,
        }
    }
}

/// The ops' calls and returns in history order (indeterminate completions after
/// everything), as a linked list between a head sentinel (slot 0) and a tail
/// sentinel (the last slot), with each op's call and return slot.
fn event_list<O>(entries: &[Entry<O>]) -> (Vec<Event>, Vec<usize>, Vec<usize>, List) {
    let n = entries.len();
    // Events in history order; indeterminate completions after everything.
    let mut order: Vec<(u64, u64, Event)> = Vec::with_capacity(2 * n);
    for (i, e) in entries.iter().enumerate() {
        order.push((e.call, 0, Event { op: i, call: true }));
        let at = e.ret.map(|r| (r, 0)).unwrap_or((u64::MAX, i as u64));
        order.push((at.0, at.1, Event { op: i, call: false }));
    }
    order.sort_by_key(|&(a, b, _)| (a, b));
    // Slot 0 is the head sentinel, slot m + 1 the tail.
    let m = order.len();
    let tail = m + 1;
    let mut events = Vec::with_capacity(m + 2);
    events.push(Event { op: 0, call: false });
    let mut call_at = vec![0usize; n];
    let mut ret_at = vec![0usize; n];
    for (slot, &(_, _, ev)) in order.iter().enumerate() {
        let slot = slot + 1;
        if ev.call {
            call_at[ev.op] = slot;
        } else {
            ret_at[ev.op] = slot;
        }
        events.push(ev);
    }
    events.push(Event { op: 0, call: false });
    let list = List {
        next: (0..m + 2).map(|i| (i + 1).min(tail)).collect(),
        prev: (0..m + 2).map(|i| i.saturating_sub(1)).collect(),
    };
    (events, call_at, ret_at, list)
}

/// Search for a linearization of `entries` (sorted by invoke index).
pub fn linearize<S: Spec>(spec: &S, entries: &[Entry<S::Op>], meter: &mut Meter) -> Found {
    let n = entries.len();
    debug_assert!(entries.windows(2).all(|w| w[0].call < w[1].call));
    let (events, call_at, ret_at, mut list) = event_list(entries);
    let tail = events.len() - 1;
    let mut placed = Placed {
        bits: vec![0; n.div_ceil(64).max(1)],
        low: 0,
        high: 0,
    };
    let mut left = entries.iter().filter(|e| e.determinate()).count();
    let mut seen: FixedSet<Key<S::State>> = FixedSet::default();
    let mut memo_bytes: u64 = 0;
    // (op, state before it, high before it)
    let mut stack: Vec<(usize, S::State, usize)> = Vec::new();
    let mut state = spec.init(entries);
    let mut longest: Vec<usize> = Vec::new();
    let mut stuck = 0usize;
    let mut recorded = false;
    let mut slot = list.next[HEAD];
    loop {
        if left == 0 {
            return Found::Linearizable {
                order: stack.iter().map(|(op, _, _)| *op).collect(),
            };
        }
        if slot == tail {
            // Only reachable with nothing determinate left, handled above.
            unreachable!("the list ends with determinate ops unplaced");
        }
        let ev = events[slot];
        if ev.call {
            if !meter.tick() {
                return Found::OverBudget;
            }
            let entry = &entries[ev.op];
            if let Some(next) = spec.step(&state, entry) {
                let key = placed.key(ev.op, next.clone());
                let key_bytes = std::mem::size_of::<Key<S::State>>()
                    + 4 * key.holes.len()
                    + spec.state_heap_bytes(&next);
                if seen.insert(key) {
                    memo_bytes += key_bytes as u64;
                    if memo_bytes > meter.memo_max_bytes {
                        meter.memo_full = true;
                        return Found::OverBudget;
                    }
                    stack.push((ev.op, std::mem::replace(&mut state, next), placed.high));
                    placed.high = placed.high.max(ev.op + 1);
                    placed.set(ev.op);
                    list.remove(call_at[ev.op]);
                    list.remove(ret_at[ev.op]);
                    if entry.determinate() {
                        left -= 1;
                    }
                    slot = list.next[HEAD];
                    continue;
                }
            }
            slot = list.next[slot];
        } else {
            if !entries[ev.op].determinate() {
                // Everything from here on completes at infinity.
                unreachable!("left == 0 whenever an indeterminate completion is reached");
            }
            if !recorded || stack.len() > longest.len() {
                longest = stack.iter().map(|(op, _, _)| *op).collect();
                stuck = ev.op;
                recorded = true;
            }
            let Some((op, before, high)) = stack.pop() else {
                return Found::Violation { longest, stuck };
            };
            state = before;
            placed.clear(op);
            placed.high = high;
            list.restore(ret_at[op]);
            list.restore(call_at[op]);
            if entries[op].determinate() {
                left += 1;
            }
            slot = list.next[call_at[op]];
        }
    }
}
