//! An oracle for Raft-like systems: ground truth of one run, for invariants
//! only; it never steers a node.
//!
//! Every node reports, as typed [`RaftEvent`]s, what it holds durably in its log
//! (its log store knows exactly: [`crate::kit::DurableLog`] reports it), what it
//! saw committed, and when it became leader. The invariants are checked at the
//! moment the state changes, so a commit that no quorum holds is caught when it
//! happens, not after the cluster repaired it:
//!
//! - [`ELECTION_SAFETY`]: at most one node leads a term;
//! - [`COMMITTED_AGREE`]: no two nodes report different entries committed at one
//!   index (log matching on committed entries; a lost committed entry);
//! - [`COMMITTED_ON_QUORUM`]: when a leader commits an entry, a majority of each
//!   voter configuration holds it durably;
//! - [`LEADER_COMPLETENESS`]: a new leader holds every entry committed in its
//!   term or an earlier one (Raft's Leader Completeness: "present in the logs
//!   of the leaders for all higher-numbered terms", and a leader never drops
//!   an entry of its own term; a candidate of a stale term may still win with
//!   a late vote, and is not bound by what a later term committed);
//! - [`LEADER_MEMBERSHIP`]: a new leader's membership config comes from an entry
//!   no other committed entry replaced at its index;
//! - [`LOG_CONTIGUOUS`]: an append continues or overwrites a node's log, never
//!   leaving a gap (log matching);
//! - [`MEMBERSHIP_IN_LOG`]: a node's membership config is the latest
//!   configuration its log holds, where the log includes its snapshot (Raft
//!   §6: a server uses the latest configuration in its log, committed or not).
//!
//! A violation is found once per invariant; [`report`] puts it on the trail (a
//! note from the node that found it) and hands it to the harness
//! (`NodeCtx::violation`), which fails the invariant. The nodes of a run share one
//! oracle as the run's shared state: `ctx.shared::<RefCell<RaftOracle<Id>>>()`.
//!
//! Nodes are numbered (`u64`); an entry is `(index, id)`, where the id is the
//! system's own (a log id, a term): equal ids at one index are the same entry.

use crate::ctx::{NodeCtx, NodeHandle};
use crate::model::{InvariantInfo, InvariantKind};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

pub const ELECTION_SAFETY: &str = "election_safety";
pub const COMMITTED_ON_QUORUM: &str = "committed_on_quorum";
pub const COMMITTED_AGREE: &str = "committed_entries_agree";
pub const LEADER_COMPLETENESS: &str = "leader_completeness";
pub const LEADER_MEMBERSHIP: &str = "leader_membership_committed";
pub const LOG_CONTIGUOUS: &str = "log_contiguous";
pub const MEMBERSHIP_IN_LOG: &str = "membership_in_log";

const fn safety(name: &'static str, summary: &'static str) -> InvariantInfo {
    InvariantInfo {
        name,
        kind: InvariantKind::Safety,
        summary,
    }
}

/// Every invariant the oracle checks, declared once; a model lists those it
/// feeds events for with [`declare`].
pub const INVARIANTS: [InvariantInfo; 7] = [
    safety(ELECTION_SAFETY, "at most one node leads a term"),
    safety(
        COMMITTED_ON_QUORUM,
        "when a leader commits an entry, a majority of each voter configuration holds it durably (checked at the commit)",
    ),
    safety(
        COMMITTED_AGREE,
        "no two nodes report different entries committed at one index (log matching; a lost committed entry)",
    ),
    safety(
        LEADER_COMPLETENESS,
        "a node that becomes leader holds every entry committed in its term or an earlier one",
    ),
    safety(
        LEADER_MEMBERSHIP,
        "a node becomes leader under a membership config whose entry is not replaced by another committed at its index",
    ),
    safety(
        LOG_CONTIGUOUS,
        "an append continues or overwrites a node's log (after its last entry, purge point or snapshot), never leaving a gap",
    ),
    safety(
        MEMBERSHIP_IN_LOG,
        "a node's membership config is the latest its log holds: one from an entry its snapshot covers is the snapshot's own",
    ),
];

/// The declarations of these oracle invariants, in this order, for a model's
/// `info().invariants`. A name the oracle does not check is the caller's
/// mistake: it panics.
pub fn declare(names: &[&str]) -> Vec<InvariantInfo> {
    names
        .iter()
        .map(|name| {
            INVARIANTS
                .iter()
                .find(|i| i.name == *name)
                .unwrap_or_else(|| panic!("the Raft oracle checks no invariant `{name}`"))
                .clone()
        })
        .collect()
}

/// Node names for messages.
pub type Namer<'a> = &'a dyn Fn(u64) -> String;

/// What a node tells the oracle.
pub enum RaftEvent<'a, Id> {
    /// These entries are durable on `node` (fsynced).
    Flushed { node: u64, entries: Vec<(u64, Id)> },
    /// `node` removed every entry after `after` from its log (`None`: all).
    Truncated { node: u64, after: Option<u64> },
    /// `node` holds a snapshot (built or installed) up to this entry, whose
    /// membership config is from `membership` (`None`: the initial one, from
    /// no entry).
    Snapshot {
        node: u64,
        last: (u64, Id),
        membership: Option<(u64, Id)>,
    },
    /// `node` now uses the membership config of this entry (`None`: the
    /// initial one), with its snapshot ending at `snapshot` as it reports it.
    /// A config from an entry the snapshot covers must be the snapshot's own:
    /// the snapshot replaced every entry up to its end.
    Membership {
        node: u64,
        entry: Option<(u64, Id)>,
        snapshot: Option<(u64, Id)>,
    },
    /// `node` became leader of `term` with this log (index -> id); entries up to
    /// `covered` are in its snapshot.
    Leader {
        node: u64,
        term: u64,
        log: &'a BTreeMap<u64, Id>,
        covered: Option<u64>,
    },
    /// `node` reports these entries committed.
    Committed { node: u64, entries: Vec<(u64, Id)> },
    /// Leader `node` committed this entry with these voters (one set per
    /// configuration; joint consensus has two). `earlier`: the leader's voters
    /// before, when its membership changed in the same observation as the
    /// commit (a system that publishes its state coalesced, as openraft's
    /// metrics do, can show a commit decided under the old configuration
    /// together with a membership entry appended right after it): a majority
    /// of every configuration of either then suffices.
    LeaderCommitted {
        node: u64,
        entry: (u64, Id),
        voters: &'a [BTreeSet<u64>],
        earlier: Option<&'a [BTreeSet<u64>]>,
    },
    /// `node`, leading now, took its membership config from this entry
    /// (`None`: the initial one, from no entry).
    LeaderMembership { node: u64, entry: Option<(u64, Id)> },
    /// `node` appends entries from index `first` to a log that ends at `last`
    /// (its last entry or purge point, whichever is highest; `None`: empty).
    /// Its snapshot, as reported, ends the log too.
    Appended {
        node: u64,
        first: u64,
        last: Option<u64>,
    },
}

/// A violated invariant, found now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub invariant: &'static str,
    pub message: String,
}

struct NodeLog<Id> {
    /// index -> id of every entry fsynced and not truncated since.
    durable: BTreeMap<u64, Id>,
    /// Entries up to here are held in a snapshot.
    snapshot: Option<(u64, Id)>,
    /// The membership entry of that snapshot's config (`None`: the initial).
    snapshot_membership: Option<(u64, Id)>,
}

impl<Id> Default for NodeLog<Id> {
    fn default() -> Self {
        NodeLog {
            durable: BTreeMap::new(),
            snapshot: None,
            snapshot_membership: None,
        }
    }
}

impl<Id: PartialEq> NodeLog<Id> {
    fn holds(&self, index: u64, id: &Id) -> bool {
        self.durable.get(&index) == Some(id) || self.snapshot.as_ref().is_some_and(|s| s.0 >= index)
    }
}

/// An entry reported committed.
struct Commit<Id> {
    id: Id,
    /// The first node that reported it.
    by: u64,
    /// The term it was committed in, or a later one: the highest term led when
    /// it was first reported, or its leader's term when that is lower (`None`:
    /// no term had a leader then).
    term: Option<u64>,
}

/// The oracle (see the module docs).
pub struct RaftOracle<Id> {
    logs: BTreeMap<u64, NodeLog<Id>>,
    /// index -> the entry reported committed there.
    committed: BTreeMap<u64, Commit<Id>>,
    /// term -> the node that led it.
    leaders: BTreeMap<u64, u64>,
    /// invariant -> message, the first of each.
    violations: BTreeMap<&'static str, String>,
}

impl<Id> Default for RaftOracle<Id> {
    fn default() -> Self {
        RaftOracle {
            logs: BTreeMap::new(),
            committed: BTreeMap::new(),
            leaders: BTreeMap::new(),
            violations: BTreeMap::new(),
        }
    }
}

/// Who reports what the oracle found: a node's context, or the handle its
/// protocol shell keeps.
pub trait Reporter {
    /// A violation, as a note of this node on the trail and to the harness.
    fn found(&self, invariant: &str, message: &str);
}

impl Reporter for NodeCtx {
    fn found(&self, invariant: &str, message: &str) {
        self.note(format!("invariant {invariant} violated: {message}"));
        self.violation(invariant, message);
    }
}

impl Reporter for NodeHandle {
    fn found(&self, invariant: &str, message: &str) {
        self.record(crate::NodeEvent::note(format!(
            "invariant {invariant} violated: {message}"
        )));
        self.violation(invariant, message);
    }
}

impl<R: Reporter + ?Sized> Reporter for std::rc::Rc<R> {
    fn found(&self, invariant: &str, message: &str) {
        (**self).found(invariant, message);
    }
}

/// Tell the run's oracle, and report what it found.
pub fn observe<Id: Copy + PartialEq + Display>(
    ctx: &impl Reporter,
    oracle: &RefCell<RaftOracle<Id>>,
    event: RaftEvent<'_, Id>,
    name: Namer<'_>,
) {
    let found = oracle.borrow_mut().observe(event, name);
    report(ctx, found);
}

/// Put a violation on the trail as a note of this node and fail its invariant.
pub fn report(ctx: &impl Reporter, found: Option<Found>) {
    if let Some(Found { invariant, message }) = found {
        ctx.found(invariant, &message);
    }
}

impl<Id: Copy + PartialEq + Display> RaftOracle<Id> {
    /// Take in one event; a violation it shows, when newly found.
    pub fn observe(&mut self, event: RaftEvent<'_, Id>, name: Namer<'_>) -> Option<Found> {
        match event {
            RaftEvent::Flushed { node, entries } => {
                let log = self.logs.entry(node).or_default();
                log.durable.extend(entries);
                None
            }
            RaftEvent::Truncated { node, after } => {
                let from = after.map_or(0, |l| l + 1);
                let log = self.logs.entry(node).or_default();
                log.durable.retain(|index, _| *index < from);
                None
            }
            RaftEvent::Snapshot {
                node,
                last,
                membership,
            } => {
                let log = self.logs.entry(node).or_default();
                if log.snapshot.as_ref().is_none_or(|s| last.0 > s.0) {
                    log.snapshot = Some(last);
                    log.snapshot_membership = membership;
                }
                None
            }
            RaftEvent::Membership {
                node,
                entry,
                snapshot,
            } => self.membership(node, entry, snapshot?, name),
            RaftEvent::Leader {
                node,
                term,
                log,
                covered,
            } => self
                .leader(node, term, name)
                .or_else(|| self.complete(node, log, covered, name)),
            RaftEvent::Committed { node, entries } => self.committed(node, entries, name),
            RaftEvent::LeaderCommitted {
                node,
                entry,
                voters,
                earlier,
            } => {
                self.led_commit(node, entry);
                if earlier.is_some_and(|e| e.iter().all(|c| self.majority_holds(c, &entry))) {
                    return None;
                }
                self.on_quorum(node, entry, voters, name)
            }
            RaftEvent::LeaderMembership { node, entry } => {
                self.leader_membership(node, entry?, name)
            }
            RaftEvent::Appended { node, first, last } => self.appended(node, first, last, name),
        }
    }

    /// The last entry of `node`'s snapshot, as the node reported it.
    pub fn snapshot_of(&self, node: u64) -> Option<Id> {
        self.logs.get(&node).and_then(|l| l.snapshot).map(|s| s.1)
    }

    /// The violations found so far: invariant -> the first message.
    pub fn violations(&self) -> &BTreeMap<&'static str, String> {
        &self.violations
    }

    fn leader(&mut self, node: u64, term: u64, name: Namer<'_>) -> Option<Found> {
        let first = *self.leaders.entry(term).or_insert(node);
        if first == node {
            return None;
        }
        let message = format!("{} and {} both led term {term}", name(first), name(node));
        self.violate(ELECTION_SAFETY, message)
    }

    /// Whether a majority of `config` holds `entry` durably.
    fn majority_holds(&self, config: &BTreeSet<u64>, (index, id): &(u64, Id)) -> bool {
        let holding = config
            .iter()
            .filter(|n| self.logs.get(n).is_some_and(|l| l.holds(*index, id)))
            .count();
        holding * 2 > config.len()
    }

    /// A leader holds every committed entry, so its effective membership comes
    /// from the committed log or from entries after it; one the cluster
    /// replaced (an uncommitted entry of a deposed leader) counted a quorum of
    /// voters the cluster no longer has.
    fn leader_membership(
        &mut self,
        node: u64,
        (index, id): (u64, Id),
        name: Namer<'_>,
    ) -> Option<Found> {
        let commit = self.committed.get(&index)?;
        if commit.id == id || !bound(self.led(node), commit.term) {
            return None;
        }
        let message = format!(
            "{} became leader under the membership config of entry {id} (index {index}), which the cluster replaced: {} is committed there (on {})",
            name(node),
            commit.id,
            name(commit.by)
        );
        self.violate(LEADER_MEMBERSHIP, message)
    }

    /// A config from an entry at or below the end of the node's snapshot must
    /// be the snapshot's: that entry is no longer in the log, and the snapshot
    /// holds the latest configuration up to its end. Judged only against the
    /// snapshot the oracle was told of, so that a report that runs ahead of the
    /// snapshot's write (or behind it) is not mistaken for a stale config.
    fn membership(
        &mut self,
        node: u64,
        entry: Option<(u64, Id)>,
        snapshot: (u64, Id),
        name: Namer<'_>,
    ) -> Option<Found> {
        let log = self.logs.get(&node)?;
        let (last, snapshot_membership) = (log.snapshot?, log.snapshot_membership);
        if last != snapshot {
            return None;
        }
        let (index, id) = entry?;
        if index > last.0 || snapshot_membership == Some((index, id)) {
            return None;
        }
        let theirs = snapshot_membership.map_or_else(
            || "the initial config".to_string(),
            |(i, m)| format!("entry {m} (index {i})"),
        );
        let message = format!(
            "{} uses the membership config of entry {id} (index {index}), but its snapshot up to {} (index {}) covers that index and its config is {theirs}: a config its log no longer holds",
            name(node),
            last.1,
            last.0
        );
        self.violate(MEMBERSHIP_IN_LOG, message)
    }

    /// An append continues the log or overwrites it; it never leaves a gap.
    fn appended(
        &mut self,
        node: u64,
        first: u64,
        last: Option<u64>,
        name: Namer<'_>,
    ) -> Option<Found> {
        let snapshot = self
            .logs
            .get(&node)
            .and_then(|l| l.snapshot.as_ref())
            .map(|s| s.0);
        let last = last.max(snapshot);
        let next = last.map_or(0, |l| l + 1);
        if first <= next {
            return None;
        }
        let message = format!(
            "{} appended entries from index {first} to a log that ends at {}: indexes {next} to {} are missing",
            name(node),
            last.map_or_else(|| "nothing".to_string(), |l| format!("index {l}")),
            first - 1
        );
        self.violate(LOG_CONTIGUOUS, message)
    }

    fn on_quorum(
        &mut self,
        leader: u64,
        (index, id): (u64, Id),
        voters: &[BTreeSet<u64>],
        name: Namer<'_>,
    ) -> Option<Found> {
        for config in voters {
            let holding: Vec<u64> = config
                .iter()
                .copied()
                .filter(|n| self.logs.get(n).is_some_and(|l| l.holds(index, &id)))
                .collect();
            if holding.len() * 2 <= config.len() {
                let names =
                    |ids: &[u64]| ids.iter().map(|n| name(*n)).collect::<Vec<_>>().join(", ");
                let config: Vec<u64> = config.iter().copied().collect();
                let message = format!(
                    "leader {} committed {id} (index {index}), held durably by [{}] of voters [{}]: not a majority",
                    name(leader),
                    names(&holding),
                    names(&config),
                );
                return self.violate(COMMITTED_ON_QUORUM, message);
            }
        }
        None
    }

    fn committed(&mut self, node: u64, entries: Vec<(u64, Id)>, name: Namer<'_>) -> Option<Found> {
        let mut found = None;
        for (index, id) in entries {
            match self.committed.get(&index) {
                None => {
                    let term = self.leaders.keys().next_back().copied();
                    self.committed.insert(index, Commit { id, by: node, term });
                }
                Some(first) if first.id != id => {
                    let message = format!(
                        "index {index} committed as {} on {} and as {id} on {}",
                        first.id,
                        name(first.by),
                        name(node)
                    );
                    found = found.or(self.violate(COMMITTED_AGREE, message));
                }
                Some(_) => {}
            }
        }
        found
    }

    fn complete(
        &mut self,
        node: u64,
        log: &BTreeMap<u64, Id>,
        covered: Option<u64>,
        name: Namer<'_>,
    ) -> Option<Found> {
        let led = self.led(node);
        let missing = self.committed.iter().find(|(index, c)| {
            bound(led, c.term)
                && covered.is_none_or(|s| **index > s)
                && log.get(index) != Some(&c.id)
        });
        let (index, Commit { id, by, .. }) = missing?;
        let message = format!(
            "{} became leader without committed entry {id} (index {index}, committed on {}); its log has {}",
            name(node),
            name(*by),
            log.get(index)
                .map(|l| l.to_string())
                .unwrap_or_else(|| "nothing there".into())
        );
        self.violate(LEADER_COMPLETENESS, message)
    }

    /// A leader's commit dates the entry's commit to its own latest term (a
    /// node's report of a commit dates it only to the highest term led then,
    /// which a deposed leader's late commit can exceed).
    fn led_commit(&mut self, node: u64, (index, id): (u64, Id)) {
        // The leader's own latest term.
        let term = self.led(node);
        match self.committed.get_mut(&index) {
            None => {
                self.committed.insert(index, Commit { id, by: node, term });
            }
            Some(first) if first.id == id => {
                first.term = [first.term, term].into_iter().flatten().min();
            }
            Some(_) => {}
        }
    }

    /// The latest term `node` led.
    fn led(&self, node: u64) -> Option<u64> {
        self.leaders
            .iter()
            .rev()
            .find(|(_, n)| **n == node)
            .map(|(term, _)| *term)
    }

    fn violate(&mut self, invariant: &'static str, message: String) -> Option<Found> {
        if self.violations.contains_key(invariant) {
            return None;
        }
        self.violations.insert(invariant, message.clone());
        Some(Found { invariant, message })
    }
}

/// Whether a node leading now, whose latest term led is `led`, is bound to
/// hold an entry whose commit is dated `when` ([`Commit::term`]): `led` is at
/// least that. The entry was committed in that term or before, so a leader of
/// a later term must hold it (Raft's Leader Completeness), and so must the
/// leader of that very term (it never drops an entry it holds: a leader
/// restored in its old term without one is openraft's leader-restore defect).
/// A leader of an earlier term (a stale candidate that won with a vote that
/// came late) need not.
fn bound(led: Option<u64>, when: Option<u64>) -> bool {
    when.is_none_or(|when| led.is_none_or(|led| led >= when))
}

#[cfg(test)]
mod tests;
