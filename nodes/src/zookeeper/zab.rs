//! Zab bookkeeping as pure state machines: the leader's outstanding proposals and
//! their quorum of ACKs, the follower's commit processor (pending txns committed in
//! order), and the leader's choice of DIFF, TRUNC or SNAP for a connecting learner.

use super::zxid::Zxid;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The leader's proposals awaiting a quorum of ACKs (`outstandingProposals`).
#[derive(Clone, Debug)]
pub struct Proposals {
    quorum: usize,
    outstanding: BTreeMap<Zxid, BTreeSet<u64>>,
    last_committed: Zxid,
    last_proposed: Zxid,
}

/// Bound on outstanding proposals (ZooKeeper throttles clients far below this).
pub const OUTSTANDING_MAX: usize = 10_000;

impl Proposals {
    pub fn new(quorum: usize, last_committed: Zxid) -> Self {
        assert!(quorum > 0);
        Proposals {
            quorum,
            outstanding: BTreeMap::new(),
            last_committed,
            last_proposed: last_committed,
        }
    }

    pub fn len(&self) -> usize {
        self.outstanding.len()
    }

    pub fn is_empty(&self) -> bool {
        self.outstanding.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.outstanding.len() >= OUTSTANDING_MAX
    }

    pub fn last_proposed(&self) -> Zxid {
        self.last_proposed
    }

    /// Outstanding zxids after `zxid`, in order (`startForwarding`).
    pub fn after(&self, zxid: Zxid) -> Vec<Zxid> {
        self.outstanding
            .range(Zxid(zxid.0 + 1)..)
            .map(|(z, _)| *z)
            .collect()
    }

    pub fn propose(&mut self, zxid: Zxid) {
        assert!(zxid > self.last_proposed, "proposals in zxid order");
        assert!(!self.is_full(), "outstanding proposals bounded");
        self.outstanding.insert(zxid, BTreeSet::new());
        self.last_proposed = zxid;
    }

    /// `processAck`: record `sid`'s ACK; returns the zxids that commit now, in
    /// order. A proposal commits only after every earlier one did (`tryToCommit`).
    pub fn ack(&mut self, sid: u64, zxid: Zxid) -> Vec<Zxid> {
        if zxid <= self.last_committed {
            return Vec::new();
        }
        let Some(acks) = self.outstanding.get_mut(&zxid) else {
            return Vec::new();
        };
        acks.insert(sid);
        let mut committed = Vec::new();
        while let Some((&first, acks)) = self.outstanding.iter().next() {
            if acks.len() < self.quorum {
                break;
            }
            self.outstanding.remove(&first);
            self.last_committed = first;
            committed.push(first);
        }
        committed
    }
}

/// Why a follower cannot commit a zxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitError {
    /// "Committing zxid without seeing txn": logged and ignored.
    NoPending,
    /// "Committing zxid but next pending txn is ...": the follower exits.
    Mismatch { next: Zxid },
}

/// The follower's `pendingTxns`: proposals logged (or being logged) and awaiting
/// their COMMIT. Committing hands the txn to the commit processor, which applies it
/// whether or not the sync thread has made it durable.
#[derive(Clone, Debug)]
pub struct PendingTxns<T> {
    pending: VecDeque<(Zxid, T)>,
}

impl<T> Default for PendingTxns<T> {
    fn default() -> Self {
        PendingTxns {
            pending: VecDeque::new(),
        }
    }
}

impl<T> PendingTxns<T> {
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    pub fn push(&mut self, zxid: Zxid, txn: T) {
        assert!(self.pending.len() < OUTSTANDING_MAX, "pending txns bounded");
        self.pending.push_back((zxid, txn));
    }

    pub fn commit(&mut self, zxid: Zxid) -> Result<T, CommitError> {
        let Some((first, _)) = self.pending.front() else {
            return Err(CommitError::NoPending);
        };
        if *first != zxid {
            return Err(CommitError::Mismatch { next: *first });
        }
        Ok(self.pending.pop_front().expect("checked").1)
    }

    /// The commit processor shuts down: uncommitted proposals are dropped here
    /// (they survive only in the txn log, if the sync thread wrote them).
    pub fn clear(&mut self) {
        self.pending.clear();
    }
}

/// How the leader brings a learner in sync (`LearnerHandler.syncFollower`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncPlan {
    /// DIFF: these committed proposals follow (each as PROPOSAL + COMMIT). Empty
    /// when the learner already has everything: no snapshot is taken for a DIFF.
    Diff { proposals: Vec<Zxid> },
    /// TRUNC to `to`, then these committed proposals.
    TruncDiff { to: Zxid, proposals: Vec<Zxid> },
    /// The learner is ahead of the leader's committed log: TRUNC to its end.
    Trunc { to: Zxid },
    /// SNAP: the leader's whole tree.
    Snap,
}

impl SyncPlan {
    /// The zxid the learner is in sync to once the plan is sent (`startForwarding`
    /// forwards outstanding proposals after it).
    pub fn synced_to(&self, peer_last: Zxid, leader_last: Zxid) -> Zxid {
        match self {
            SyncPlan::Diff { proposals } => proposals.last().copied().unwrap_or(peer_last),
            SyncPlan::TruncDiff { to, proposals } => proposals.last().copied().unwrap_or(*to),
            SyncPlan::Trunc { to } => *to,
            SyncPlan::Snap => leader_last,
        }
    }

    pub fn describe(&self, peer_last: Zxid) -> String {
        match self {
            SyncPlan::Diff { proposals } if proposals.is_empty() => {
                format!("DIFF (empty: learner already at {peer_last})")
            }
            SyncPlan::Diff { proposals } => {
                format!("DIFF of {}", super::zxid::ranges(proposals.iter().copied()))
            }
            SyncPlan::TruncDiff { to, proposals } => format!(
                "TRUNC to {to}, then DIFF of {}",
                super::zxid::ranges(proposals.iter().copied())
            ),
            SyncPlan::Trunc { to } => format!("TRUNC to {to}"),
            SyncPlan::Snap => "SNAP".to_string(),
        }
    }
}

/// `syncFollower` + `queueCommittedProposals`, from the leader's committed log
/// (zxids in order), its last processed zxid and the learner's last zxid. Syncing
/// from the on-disk txn log (beyond the in-memory committed log) is not modelled:
/// those learners get a SNAP.
pub fn select_sync(committed: &[Zxid], last_processed: Zxid, peer_last: Zxid) -> SyncPlan {
    let peer_new_epoch = peer_last.counter() == 0;
    let (min, max) = match (committed.first(), committed.last()) {
        (Some(min), Some(max)) => (*min, *max),
        _ => (last_processed, last_processed),
    };
    if last_processed == peer_last {
        return SyncPlan::Diff {
            proposals: Vec::new(),
        };
    }
    if peer_last > max && !peer_new_epoch {
        return SyncPlan::Trunc { to: max };
    }
    if min <= peer_last && peer_last <= max {
        return queue_committed(committed, peer_last);
    }
    SyncPlan::Snap
}

fn queue_committed(committed: &[Zxid], peer_last: Zxid) -> SyncPlan {
    let peer_new_epoch = peer_last.counter() == 0;
    let mut op: Option<Option<Zxid>> = None; // Some(None): DIFF; Some(Some(z)): TRUNC to z
    let mut prev: Option<Zxid> = None;
    let mut queued = peer_last;
    let mut proposals = Vec::new();
    for &zxid in committed {
        if zxid < peer_last {
            prev = Some(zxid);
            continue;
        }
        if op.is_none() {
            if zxid == peer_last {
                op = Some(None);
                continue;
            }
            if peer_new_epoch {
                op = Some(None);
            } else if zxid > peer_last {
                // The learner has a txn the leader never saw (it may have led).
                if zxid.epoch() != peer_last.epoch() {
                    // A TRUNC may not cross an epoch boundary: send a snapshot.
                    return SyncPlan::Snap;
                }
                let to = prev.expect("min <= peer_last, so an earlier zxid exists");
                op = Some(Some(to));
                queued = to;
            }
        }
        if zxid <= queued {
            continue;
        }
        proposals.push(zxid);
        queued = zxid;
    }
    if op.is_none() && peer_new_epoch {
        op = Some(None);
    }
    match op {
        Some(None) => SyncPlan::Diff { proposals },
        Some(Some(to)) => SyncPlan::TruncDiff { to, proposals },
        // "Unhandled scenario for peer: fall back to use snapshot".
        None => SyncPlan::Snap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z(epoch: u32, counter: u32) -> Zxid {
        Zxid::new(epoch, counter)
    }

    #[test]
    fn proposals_commit_in_order_on_a_quorum() {
        let mut p = Proposals::new(2, Zxid::ZERO);
        p.propose(z(1, 1));
        p.propose(z(1, 2));
        // The second gets its quorum first: it waits for the first.
        assert_eq!(p.ack(3, z(1, 2)), vec![]);
        assert_eq!(p.ack(2, z(1, 2)), vec![]);
        assert_eq!(p.ack(3, z(1, 1)), vec![]);
        assert_eq!(p.ack(1, z(1, 1)), vec![z(1, 1), z(1, 2)]);
        // A late ACK of a committed proposal is ignored.
        assert_eq!(p.ack(2, z(1, 1)), vec![]);
        assert!(p.is_empty());
    }

    #[test]
    fn outstanding_after_a_zxid_are_forwarded() {
        let mut p = Proposals::new(2, z(1, 0));
        for c in 1..=3 {
            p.propose(z(1, c));
        }
        assert_eq!(p.after(z(1, 1)), vec![z(1, 2), z(1, 3)]);
    }

    #[test]
    fn follower_commits_pending_txns_in_order() {
        let mut p = PendingTxns::default();
        assert_eq!(p.commit(z(1, 1)), Err(CommitError::NoPending));
        p.push(z(1, 1), "X");
        p.push(z(1, 2), "Z");
        assert_eq!(
            p.commit(z(1, 2)),
            Err(CommitError::Mismatch { next: z(1, 1) })
        );
        assert_eq!(p.commit(z(1, 1)), Ok("X"));
        assert_eq!(p.commit(z(1, 2)), Ok("Z"));
    }

    #[test]
    fn equal_zxids_get_an_empty_diff() {
        let log = [z(1, 1), z(1, 2), z(1, 3)];
        assert_eq!(
            select_sync(&log, z(1, 3), z(1, 3)),
            SyncPlan::Diff { proposals: vec![] }
        );
        // Also with an empty committed log (a fresh ensemble).
        assert_eq!(
            select_sync(&[], Zxid::ZERO, Zxid::ZERO),
            SyncPlan::Diff { proposals: vec![] }
        );
    }

    #[test]
    fn a_learner_behind_gets_the_missing_proposals() {
        let log = [z(1, 1), z(1, 2), z(1, 3), z(2, 1)];
        assert_eq!(
            select_sync(&log, z(2, 1), z(1, 3)),
            SyncPlan::Diff {
                proposals: vec![z(2, 1)]
            }
        );
    }

    #[test]
    fn a_learner_ahead_is_truncated() {
        let log = [z(1, 1), z(1, 2)];
        assert_eq!(
            select_sync(&log, z(1, 2), z(1, 4)),
            SyncPlan::Trunc { to: z(1, 2) }
        );
    }

    #[test]
    fn a_learner_with_an_unknown_txn_is_truncated_then_diffed() {
        // The learner logged 0x100000003 that never committed; the leader's history
        // went on with 0x100000004.
        let log = [z(1, 1), z(1, 2), z(1, 4), z(1, 5)];
        assert_eq!(
            select_sync(&log, z(1, 5), z(1, 3)),
            SyncPlan::TruncDiff {
                to: z(1, 2),
                proposals: vec![z(1, 4), z(1, 5)]
            }
        );
        // Across an epoch boundary it cannot truncate: SNAP.
        let log = [z(1, 1), z(1, 2), z(2, 1)];
        assert_eq!(select_sync(&log, z(2, 1), z(1, 3)), SyncPlan::Snap);
    }

    #[test]
    fn a_learner_below_the_committed_log_gets_a_snapshot() {
        let log = [z(1, 5), z(1, 6)];
        assert_eq!(select_sync(&log, z(1, 6), z(1, 2)), SyncPlan::Snap);
    }

    #[test]
    fn a_learner_at_a_new_epoch_boundary_gets_a_diff() {
        let log = [z(1, 1), z(2, 1), z(2, 2)];
        assert_eq!(
            select_sync(&log, z(2, 2), z(2, 0)),
            SyncPlan::Diff {
                proposals: vec![z(2, 1), z(2, 2)]
            }
        );
    }
}
