//! One register that only ever grows by appends of different texts, decided
//! without a search. raftkv's clients append `+N` with a fresh `N` each time,
//! so every read's text spells out which appends took effect and in which
//! order. The order of the appends is then known, and what is left is a check
//! in one pass:
//!
//! - every read's text is a sequence of appended texts, each at most once (one
//!   way only: a text that splits two ways leaves the key to the search);
//! - the reads' sequences are prefixes of one sequence `S`, the longest read's;
//! - a *cluster* is an append of `S` and the reads that end with it (cluster 0:
//!   the reads of the absent key). Clusters are linearized in the order of `S`,
//!   each append before the reads of its cluster; an append no read shows is
//!   linearized after all of them, or never if it was indeterminate;
//! - that order has a linearization exactly when no op completed before an op
//!   that must come before it was invoked. Placing every op as early as it can
//!   go (each cluster's reads by invoke) finds one when there is one, so the
//!   check keeps only the latest invoke so far and compares each completion
//!   with it.
//!
//! This is what makes a stalled leader's pile-up tractable: ninety concurrent
//! appends are 2^90 subsets to the search and one sort here (raftkv-auto seeds
//! 2078, 2979, 4732 and 6224 ran the search's budget out on one key each).
//! Violations name the few ops that make them: the two ops out of order, a read
//! that shows their order, and the appends those reads show, which cannot be
//! linearized on their own either.

use std::collections::{BTreeMap, BTreeSet};

/// An op as this check sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendOp<'t> {
    Append(&'t str),
    /// A read that answered "absent".
    ReadAbsent,
    /// A read that answered this text.
    Read(&'t str),
    /// A read that answered something no append makes (not a text).
    ReadOther,
}

/// One op with its invoke and completion event indices (`None`: indeterminate).
#[derive(Clone, Copy, Debug)]
pub struct Timed<'t> {
    pub op: AppendOp<'t>,
    pub call: u64,
    pub ret: Option<u64>,
}

/// The answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Appends {
    Linearizable,
    /// The positions (in the input) of ops that cannot be linearized together.
    Violation(Vec<usize>),
    /// Not a history this check decides (an append text repeated or empty, a
    /// read that splits two ways, more text than [`SPLIT_WORK_MAX`]): the search
    /// decides instead.
    Undecided,
}

/// Most substring lookups spent splitting texts into appends, over one key:
/// the longest text's bytes times the number of distinct append lengths, at
/// most half the search's default step budget. A 100,000-op history's longest
/// text (about 37,000 bytes, five lengths) takes about 190,000; over the limit
/// the key goes to the search.
pub const SPLIT_WORK_MAX: u64 = 5_000_000;

/// A time: an indeterminate completion comes after every event.
type Time = i128;
const BEFORE_ALL: Time = -1;

fn ret_time(t: &Timed) -> Time {
    t.ret.map_or(Time::MAX, Time::from)
}

/// A read's text as appends (positions in the input), when it splits one way
/// only.
enum Split {
    One(Vec<usize>),
    None,
    Many,
}

struct Tokens<'t> {
    by_text: BTreeMap<&'t str, usize>,
    /// Append position → its text's length.
    len_of: BTreeMap<usize, usize>,
    lengths: BTreeSet<usize>,
}

impl Tokens<'_> {
    /// The appends read `i`'s text shows, or the answer when it does not split
    /// one way into different appends.
    fn split_one(&self, text: &str, i: usize, work: &mut u64) -> Result<Vec<usize>, Appends> {
        match self.split(text, work) {
            None | Some(Split::Many) => Err(Appends::Undecided),
            Some(Split::None) => Err(Appends::Violation(vec![i])),
            Some(Split::One(shown)) => {
                let distinct: BTreeSet<usize> = shown.iter().copied().collect();
                if distinct.len() < shown.len() {
                    // An append taken twice: the read and its appends alone fail.
                    return Err(sorted(distinct.into_iter().chain([i])));
                }
                Ok(shown)
            }
        }
    }

    fn split(&self, text: &str, work: &mut u64) -> Option<Split> {
        let n = text.len();
        // ways[p]: in how many ways text[p..] splits (0, 1, or 2 for "more");
        // next[p]: the append that starts the one way.
        let mut ways = vec![0u8; n + 1];
        let mut next = vec![usize::MAX; n + 1];
        ways[n] = 1;
        for p in (0..n).rev() {
            if !text.is_char_boundary(p) {
                continue;
            }
            for &len in &self.lengths {
                *work += 1;
                if *work > SPLIT_WORK_MAX {
                    return None;
                }
                if p + len > n {
                    break;
                }
                let Some(piece) = text.get(p..p + len) else {
                    continue;
                };
                let Some(&at) = self.by_text.get(piece) else {
                    continue;
                };
                if ways[p + len] > 0 {
                    ways[p] = (ways[p] + ways[p + len]).min(2);
                    next[p] = at;
                }
            }
        }
        Some(match ways[0] {
            0 => Split::None,
            1 => {
                let mut out = Vec::new();
                let mut p = 0;
                while p < n {
                    let at = next[p];
                    out.push(at);
                    p += self.len_of[&at];
                }
                Split::One(out)
            }
            _ => Split::Many,
        })
    }
}

/// Decide `ops`, one key that starts absent and that only appends change.
/// Indeterminate reads constrain nothing and are skipped.
pub fn decide(ops: &[Timed]) -> Appends {
    let mut tokens = Tokens {
        by_text: BTreeMap::new(),
        len_of: BTreeMap::new(),
        lengths: BTreeSet::new(),
    };
    for (i, t) in ops.iter().enumerate() {
        if let AppendOp::Append(text) = t.op {
            if text.is_empty() || tokens.by_text.insert(text, i).is_some() {
                return Appends::Undecided;
            }
            tokens.lengths.insert(text.len());
            tokens.len_of.insert(i, text.len());
        }
    }
    // The determinate reads' texts (`None`: absent).
    let mut texts: Vec<(usize, Option<&str>)> = Vec::new();
    for (i, t) in ops.iter().enumerate() {
        if t.ret.is_none() {
            continue;
        }
        match t.op {
            AppendOp::Append(_) => {}
            AppendOp::ReadAbsent => texts.push((i, None)),
            // From absent, appends of non-empty texts never make "" or a value
            // that is not a text: the read cannot be linearized even alone.
            AppendOp::ReadOther | AppendOp::Read("") => return Appends::Violation(vec![i]),
            AppendOp::Read(text) => texts.push((i, Some(text))),
        }
    }
    // S: the appends the longest text shows. Only it is split in full; a read
    // whose text is a prefix of it ending between two appends shows those
    // before the end (one way only, as the whole splits one way only), and any
    // other read shows something S does not begin with.
    let mut work = 0u64;
    let longest = texts
        .iter()
        .filter_map(|&(i, text)| Some((i, text?)))
        .max_by_key(|&(i, t)| (t.len(), std::cmp::Reverse(i)));
    let (s, ends): (Vec<usize>, BTreeMap<usize, usize>) = match longest {
        None => (Vec::new(), BTreeMap::new()),
        Some((l, text)) => match tokens.split_one(text, l, &mut work) {
            Err(answer) => return answer,
            Ok(s) => {
                let mut ends = BTreeMap::new();
                let mut at = 0;
                for (k, a) in s.iter().enumerate() {
                    at += tokens.len_of[a];
                    ends.insert(at, k + 1);
                }
                (s, ends)
            }
        },
    };
    let s_text = longest.map_or("", |(_, t)| t);
    // Each read as how many appends of S it shows.
    let mut reads: Vec<(usize, usize)> = Vec::with_capacity(texts.len());
    for &(i, text) in &texts {
        let shown = match text.map(|t| (t, ends.get(&t.len()))) {
            None => 0,
            Some((t, Some(&k))) if s_text.starts_with(t) => k,
            Some((t, _)) => {
                // Not a prefix of S: the two reads cannot both be right.
                let (l, _) = longest.expect("a text was read");
                return match tokens.split_one(t, i, &mut work) {
                    Err(answer) => answer,
                    Ok(shown) => sorted(shown.into_iter().chain(s.iter().copied()).chain([i, l])),
                };
            }
        };
        reads.push((i, shown));
    }
    let cluster_of: BTreeMap<usize, usize> =
        s.iter().enumerate().map(|(k, &a)| (a, k + 1)).collect();
    let mut clusters: Vec<Vec<usize>> = vec![Vec::new(); s.len() + 1];
    for &(i, shown) in &reads {
        clusters[shown].push(i);
    }
    for reads in &mut clusters {
        reads.sort_by_key(|&i| ops[i].call);
    }
    // What each read shows, for the witnesses.
    let shows: BTreeMap<usize, usize> = reads.into_iter().collect();
    let witness = Witness {
        s: &s,
        shows: &shows,
        cluster_of: &cluster_of,
    };
    // The latest invoke so far in the forced order, and whose it is.
    let mut latest: (Time, Option<usize>) = (BEFORE_ALL, None);
    for (k, reads) in clusters.iter().enumerate() {
        let append = k.checked_sub(1).map(|a| s[a]);
        for i in append.into_iter().chain(reads.iter().copied()) {
            if ret_time(&ops[i]) < latest.0 {
                return witness.of(i, latest.1.expect("a later invoke is an op's"));
            }
            latest = latest.max((Time::from(ops[i].call), Some(i)));
        }
    }
    // Appends no read shows: after everything else, unless they never happened.
    for &i in tokens.len_of.keys() {
        if !cluster_of.contains_key(&i) && ops[i].ret.is_some() && ret_time(&ops[i]) < latest.0 {
            return witness.of(i, latest.1.expect("a later invoke is an op's"));
        }
    }
    Appends::Linearizable
}

fn sorted(ops: impl IntoIterator<Item = usize>) -> Appends {
    let set: BTreeSet<usize> = ops.into_iter().collect();
    Appends::Violation(set.into_iter().collect())
}

/// The ops that show why `done` (completed before `later` was invoked) cannot
/// come after `later`, as the order of `S` requires.
struct Witness<'w> {
    s: &'w [usize],
    /// Read → how many appends of `S` it shows.
    shows: &'w BTreeMap<usize, usize>,
    /// Append of `S` → its cluster (1-based position in `S`).
    cluster_of: &'w BTreeMap<usize, usize>,
}

impl Witness<'_> {
    fn of(&self, done: usize, later: usize) -> Appends {
        let mut ops = vec![done, later];
        // How much of S the witness needs, and whether a read must show the
        // order of two appends (neither op is a read that shows it).
        let reach = |i: usize| self.shows.get(&i).or(self.cluster_of.get(&i)).copied();
        let mut upto = [done, later]
            .iter()
            .filter_map(|&i| reach(i))
            .max()
            .unwrap_or(0);
        let is_read = |i: usize| self.shows.contains_key(&i);
        if !is_read(done) && !is_read(later) {
            // Two appends (or an append no read shows and one of S): the
            // shortest read that shows the later one's cluster fixes the order.
            let need = reach(later).unwrap_or(0).max(reach(done).unwrap_or(0));
            if let Some((&read, &len)) = self
                .shows
                .iter()
                .filter(|(_, &len)| len >= need)
                .min_by_key(|(&i, &len)| (len, i))
            {
                ops.push(read);
                upto = upto.max(len);
            }
        }
        ops.extend(self.s[..upto].iter().copied());
        sorted(ops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(text: &str, call: u64, ret: u64) -> Timed<'_> {
        Timed {
            op: AppendOp::Append(text),
            call,
            ret: Some(ret),
        }
    }
    fn r(text: &str, call: u64, ret: u64) -> Timed<'_> {
        Timed {
            op: if text.is_empty() {
                AppendOp::ReadAbsent
            } else {
                AppendOp::Read(text)
            },
            call,
            ret: Some(ret),
        }
    }

    #[test]
    fn concurrent_appends_take_the_order_the_reads_show() {
        let ops = [
            a("+1", 0, 10),
            a("+2", 1, 11),
            a("+3", 2, 12),
            r("+2+1", 3, 13),
            r("+2+1+3", 14, 15),
        ];
        assert_eq!(decide(&ops), Appends::Linearizable);
        // A read after every append completed must show all of them.
        let ops = [a("+1", 0, 1), a("+2", 2, 3), r("+1", 4, 5)];
        assert_eq!(decide(&ops), Appends::Violation(vec![0, 1, 2]));
    }

    #[test]
    fn reads_that_disagree_on_the_order_or_go_back_fail() {
        let ops = [
            a("+1", 0, 10),
            a("+2", 1, 11),
            r("+1+2", 12, 13),
            r("+2+1", 14, 15),
        ];
        assert_eq!(decide(&ops), Appends::Violation(vec![0, 1, 2, 3]));
        // A read after both appends completed that shows one: its read alone
        // with the appends fails, without the read that showed both.
        let ops = [
            a("+1", 0, 10),
            a("+2", 1, 11),
            r("+1+2", 12, 13),
            r("+1", 14, 15),
        ];
        assert_eq!(decide(&ops), Appends::Violation(vec![0, 1, 3]));
        // An absent read after an append completed.
        let ops = [a("+1", 0, 1), r("", 2, 3)];
        assert_eq!(decide(&ops), Appends::Violation(vec![0, 1]));
    }

    #[test]
    fn appends_completed_out_of_the_shown_order_fail_with_the_read_that_shows_it() {
        let ops = [a("+1", 5, 6), a("+2", 0, 1), r("+1+2", 7, 8)];
        assert_eq!(decide(&ops), Appends::Violation(vec![0, 1, 2]));
    }

    #[test]
    fn texts_that_are_not_appends_or_split_two_ways() {
        assert_eq!(decide(&[r("+9", 0, 1)]), Appends::Violation(vec![0]));
        assert_eq!(
            decide(&[a("+1", 0, 1), r("+1+1", 2, 3)]),
            Appends::Violation(vec![0, 1])
        );
        let two_ways = [a("a", 0, 1), a("b", 0, 1), a("ab", 0, 1), r("ab", 2, 3)];
        assert_eq!(decide(&two_ways), Appends::Undecided);
        assert_eq!(decide(&[a("x", 0, 1), a("x", 2, 3)]), Appends::Undecided);
    }

    #[test]
    fn an_indeterminate_append_may_never_happen_or_happen_late() {
        let lost = Timed {
            op: AppendOp::Append("+1"),
            call: 0,
            ret: None,
        };
        assert_eq!(
            decide(&[lost, a("+2", 1, 2), r("+2", 3, 4)]),
            Appends::Linearizable
        );
        assert_eq!(
            decide(&[lost, a("+2", 1, 2), r("+2+1", 3, 4)]),
            Appends::Linearizable
        );
        // A determinate append no read shows must come after every read.
        assert_eq!(
            decide(&[a("+1", 0, 1), a("+2", 2, 3), r("+2", 4, 5)]),
            Appends::Violation(vec![0, 1, 2])
        );
    }
}
