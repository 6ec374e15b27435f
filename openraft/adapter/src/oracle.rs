//! Ground truth of one run, for the invariants only; it never steers a node.
//!
//! openraft's own turmoil fuzzer checks its invariants against a snapshot of
//! every node taken after each tick. Here every node reports what it has
//! durably in its log (its log store knows exactly), what it saw committed and
//! when it became leader, and the invariants are checked at the moment the
//! state changes, so a commit that no quorum holds is caught when it happens,
//! not after the cluster repaired it. A violation is recorded once, put on the
//! trail by the node that found it (a note), and reported to the harness as a
//! typed violation (`NodeCtx::violation`), which fails the invariant.
//!
//! The nodes of a run share it as the run's shared state (`NodeCtx::shared`):
//! the harness keeps one per run and drops it with the run.

use crate::types::LogId;
use std::collections::{BTreeMap, BTreeSet};

pub const COMMITTED_ON_QUORUM: &str = "committed_on_quorum";
pub const COMMITTED_AGREE: &str = "committed_entries_agree";
pub const LEADER_COMPLETENESS: &str = "leader_completeness";
pub const LEADER_MEMBERSHIP: &str = "leader_membership_committed";
pub const LOG_CONTIGUOUS: &str = "log_contiguous";

#[derive(Default)]
struct NodeLog {
    /// index -> log id of every entry fsynced and not truncated since.
    durable: BTreeMap<u64, LogId>,
    /// Entries up to here are held in an installed or built snapshot.
    snapshot: Option<LogId>,
}

impl NodeLog {
    fn holds(&self, id: &LogId) -> bool {
        self.durable.get(&id.index) == Some(id)
            || self.snapshot.as_ref().is_some_and(|s| s.index >= id.index)
    }
}

#[derive(Default)]
pub struct Oracle {
    logs: BTreeMap<u64, NodeLog>,
    /// index -> (log id, the first node that reported it committed).
    committed: BTreeMap<u64, (LogId, u64)>,
    /// (invariant, message), the first of each invariant.
    violations: BTreeMap<&'static str, String>,
}

/// Node names for messages: `n{id}` is replaced by the caller's naming.
pub type Namer<'a> = &'a dyn Fn(u64) -> String;

impl Oracle {
    /// `node` fsynced these entries.
    pub fn flushed(&mut self, node: u64, ids: impl IntoIterator<Item = LogId>) {
        let log = self.logs.entry(node).or_default();
        for id in ids {
            log.durable.insert(id.index, id);
        }
    }

    /// `node` removed every entry after `last` from its log.
    pub fn truncated(&mut self, node: u64, last: Option<u64>) {
        let log = self.logs.entry(node).or_default();
        let from = last.map_or(0, |l| l + 1);
        log.durable.retain(|index, _| *index < from);
    }

    /// `node` holds a snapshot up to `last`.
    pub fn snapshot(&mut self, node: u64, last: Option<LogId>) {
        let log = self.logs.entry(node).or_default();
        if last.as_ref().map(|l| l.index) > log.snapshot.as_ref().map(|s| s.index) {
            log.snapshot = last;
        }
    }

    /// The last log id of `node`'s durable snapshot, as its state machine wrote
    /// it (built or installed): openraft's metrics may report it later than the
    /// commit the snapshot brought.
    pub fn snapshot_of(&self, node: u64) -> Option<LogId> {
        self.logs.get(&node).and_then(|l| l.snapshot)
    }

    /// A leader committed `id` with `voters` (one set per configuration; joint
    /// membership has two): a majority of each must hold it durably.
    /// `earlier`: the leader's voters before, when its membership changed in
    /// the same observation as the commit. The commit may have been decided
    /// under either (a membership entry appended right after the commit is
    /// published with it), so a majority of every configuration of either
    /// suffices. Returns the violation message when it was newly found.
    pub fn leader_committed(
        &mut self,
        leader: u64,
        id: &LogId,
        voters: &[BTreeSet<u64>],
        earlier: Option<&[BTreeSet<u64>]>,
        name: Namer<'_>,
    ) -> Option<String> {
        let majority = |config: &BTreeSet<u64>| {
            let holding = config
                .iter()
                .filter(|n| self.logs.get(n).is_some_and(|l| l.holds(id)))
                .count();
            holding * 2 > config.len()
        };
        if earlier.is_some_and(|e| e.iter().all(majority)) {
            return None;
        }
        for config in voters {
            let holding: Vec<u64> = config
                .iter()
                .copied()
                .filter(|n| self.logs.get(n).is_some_and(|l| l.holds(id)))
                .collect();
            if holding.len() * 2 <= config.len() {
                let names = |ids: &mut dyn Iterator<Item = u64>| {
                    ids.map(name).collect::<Vec<_>>().join(", ")
                };
                let message = format!(
                    "leader {} committed {} (index {}), held durably by [{}] of voters [{}]: not a majority",
                    name(leader),
                    id,
                    id.index,
                    names(&mut holding.iter().copied()),
                    names(&mut config.iter().copied()),
                );
                return self.violate(COMMITTED_ON_QUORUM, message);
            }
        }
        None
    }

    /// `node` reports these entries of its log committed. Every node must agree
    /// on what each index committed (log matching on committed entries; a
    /// committed entry that a later leader overwrote shows up here).
    pub fn node_committed(
        &mut self,
        node: u64,
        ids: impl IntoIterator<Item = LogId>,
        name: Namer<'_>,
    ) -> Option<String> {
        let mut found = None;
        for id in ids {
            match self.committed.get(&id.index) {
                None => {
                    self.committed.insert(id.index, (id, node));
                }
                Some((first, by)) if *first != id => {
                    let message = format!(
                        "index {} committed as {} on {} and as {} on {}",
                        id.index,
                        first,
                        name(*by),
                        id,
                        name(node)
                    );
                    found = found.or(self.violate(COMMITTED_AGREE, message));
                }
                Some(_) => {}
            }
        }
        found
    }

    /// `node` became leader with this log: it must hold every committed entry.
    pub fn became_leader(
        &mut self,
        node: u64,
        log: &BTreeMap<u64, LogId>,
        snapshot: Option<u64>,
        name: Namer<'_>,
    ) -> Option<String> {
        let missing = self.committed.iter().find(|(index, (id, _))| {
            snapshot.is_none_or(|s| **index > s) && log.get(index) != Some(id)
        });
        let (index, (id, by)) = missing?;
        let message = format!(
            "{} became leader without committed entry {} (index {index}, committed on {}); its log has {}",
            name(node),
            id,
            name(*by),
            log.get(index)
                .map(|l| l.to_string())
                .unwrap_or_else(|| "nothing there".into())
        );
        self.violate(LEADER_COMPLETENESS, message)
    }

    /// `node` became leader under the membership config of the entry
    /// `membership`: no other entry may be committed at that index. A leader
    /// holds every committed entry, so its effective membership comes from the
    /// committed log or from entries after it; one the cluster replaced (an
    /// uncommitted entry of a deposed leader) counted a quorum of voters the
    /// cluster no longer has.
    pub fn leader_membership(
        &mut self,
        node: u64,
        membership: Option<LogId>,
        name: Namer<'_>,
    ) -> Option<String> {
        let membership = membership?;
        let (committed, by) = self.committed.get(&membership.index)?;
        if *committed == membership {
            return None;
        }
        let message = format!(
            "{} became leader under the membership config of entry {} (index {}), which the cluster replaced: {} is committed there (on {})",
            name(node),
            membership,
            membership.index,
            committed,
            name(*by)
        );
        self.violate(LEADER_MEMBERSHIP, message)
    }

    /// `node` appends entries from index `first` to a log whose entries end at
    /// `last` (the last entry, the purge point or the node's snapshot,
    /// whichever is highest): an append continues the log or overwrites it,
    /// it never leaves a gap (log matching: an entry is accepted only after
    /// the one before it).
    pub fn appended(
        &mut self,
        node: u64,
        first: u64,
        last: Option<u64>,
        name: Namer<'_>,
    ) -> Option<String> {
        let last = last.max(self.snapshot_of(node).map(|s| s.index));
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

    fn violate(&mut self, invariant: &'static str, message: String) -> Option<String> {
        if self.violations.contains_key(invariant) {
            return None;
        }
        self.violations.insert(invariant, message.clone());
        Some(message)
    }

    #[cfg(test)]
    pub fn violations(&self) -> &BTreeMap<&'static str, String> {
        &self.violations
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::impls::leader_id_std::LeaderId;
    use openraft::vote::RaftLeaderId;

    fn id(term: u64, index: u64) -> LogId {
        LogId::new(LeaderId::<u64, u64>::new(term, 1).to_committed(), index)
    }

    fn name(n: u64) -> String {
        format!("n{n}")
    }

    #[test]
    fn a_commit_held_by_a_minority_is_a_violation_and_a_majority_is_not() {
        let mut oracle = Oracle::default();
        let voters = vec![BTreeSet::from([1, 2, 3, 4, 5])];
        oracle.flushed(3, [id(1, 7)]);
        oracle.flushed(4, [id(1, 7)]);
        let found = oracle.leader_committed(1, &id(1, 7), &voters, None, &name);
        let message = found.expect("two of five is not a majority");
        assert!(message.contains("[n3, n4]"), "{message}");
        let mut fine = Oracle::default();
        for n in [1, 3, 4] {
            fine.flushed(n, [id(1, 7)]);
        }
        assert_eq!(
            fine.leader_committed(1, &id(1, 7), &voters, None, &name),
            None
        );
        // A truncated entry is no longer held.
        fine.truncated(4, Some(6));
        assert!(
            fine.leader_committed(1, &id(1, 7), &voters, None, &name)
                .is_some()
        );
    }

    #[test]
    fn a_commit_published_with_a_membership_change_may_hold_either_quorum() {
        let old = vec![BTreeSet::from([1, 2, 3])];
        let new = vec![BTreeSet::from([1, 2, 3]), BTreeSet::from([3, 4, 5])];
        let mut oracle = Oracle::default();
        for n in [1, 2] {
            oracle.flushed(n, [id(1, 7)]);
        }
        // Decided under [1, 2, 3], published with the joint config appended
        // after it: no violation.
        assert_eq!(
            oracle.leader_committed(1, &id(1, 7), &new, Some(&old), &name),
            None
        );
        // Without the earlier config, the joint one's second half lacks it.
        let found = oracle.leader_committed(1, &id(1, 7), &new, None, &name);
        assert!(found.is_some_and(|m| m.contains("of voters [n3, n4, n5]")));
        // Neither holds it: a violation.
        let mut none = Oracle::default();
        none.flushed(4, [id(1, 7)]);
        let found = none.leader_committed(1, &id(1, 7), &new, Some(&old), &name);
        assert!(found.is_some_and(|m| m.contains("of voters [n1, n2, n3]")));
    }

    #[test]
    fn an_append_past_the_end_of_the_log_leaves_a_gap() {
        let mut oracle = Oracle::default();
        // Continuing, or overwriting, is fine.
        assert_eq!(oracle.appended(2, 0, None, &name), None);
        assert_eq!(oracle.appended(2, 8, Some(7), &name), None);
        assert_eq!(oracle.appended(2, 3, Some(7), &name), None);
        // An installed snapshot ends the log too.
        oracle.snapshot(2, Some(id(1, 19)));
        assert_eq!(oracle.appended(2, 20, None, &name), None);
        let found = oracle
            .appended(3, 20, None, &name)
            .expect("nothing before index 20");
        assert!(found.contains("indexes 0 to 19 are missing"), "{found}");
        assert!(oracle.violations().contains_key(LOG_CONTIGUOUS));
    }

    #[test]
    fn two_nodes_committing_different_entries_at_one_index_disagree() {
        let mut oracle = Oracle::default();
        assert_eq!(oracle.node_committed(1, [id(1, 5)], &name), None);
        assert_eq!(oracle.node_committed(2, [id(1, 5)], &name), None);
        let found = oracle
            .node_committed(3, [id(2, 5)], &name)
            .expect("disagree");
        assert!(
            found.contains("on n1") && found.contains("on n3"),
            "{found}"
        );
        assert!(oracle.violations().contains_key(COMMITTED_AGREE));
    }

    #[test]
    fn a_leader_under_a_replaced_membership_entry_is_a_violation() {
        let mut oracle = Oracle::default();
        oracle.node_committed(2, [id(1, 8), id(3, 9)], &name);
        // n1's membership entry 2.9 was never committed; 3.9 was.
        let found = oracle
            .leader_membership(1, Some(id(2, 9)), &name)
            .expect("a replaced entry");
        assert!(
            found.contains("n1 became leader") && found.contains("on n2"),
            "{found}"
        );
        assert!(oracle.violations().contains_key(LEADER_MEMBERSHIP));
        // The committed entry itself, an index nobody reported committed, or
        // no membership entry at all are fine.
        let mut fine = Oracle::default();
        fine.node_committed(2, [id(3, 9)], &name);
        assert_eq!(fine.leader_membership(1, Some(id(3, 9)), &name), None);
        assert_eq!(fine.leader_membership(1, Some(id(3, 10)), &name), None);
        assert_eq!(fine.leader_membership(1, None, &name), None);
    }

    #[test]
    fn a_leader_missing_a_committed_entry_breaks_completeness() {
        let mut oracle = Oracle::default();
        oracle.node_committed(1, [id(1, 1), id(1, 2)], &name);
        let mut log = BTreeMap::from([(1, id(1, 1))]);
        assert!(oracle.became_leader(2, &log, None, &name).is_some());
        log.insert(2, id(1, 2));
        let mut again = Oracle::default();
        again.node_committed(1, [id(1, 1), id(1, 2)], &name);
        assert_eq!(again.became_leader(2, &log, None, &name), None);
        // Entries under the leader's snapshot are held there.
        assert_eq!(
            again.became_leader(3, &BTreeMap::new(), Some(2), &name),
            None
        );
    }
}
