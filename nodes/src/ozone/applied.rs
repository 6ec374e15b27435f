//! The OM's applied-index bookkeeping (OzoneManagerStateMachine after HDDS-10546):
//! `lastAppliedTermIndex` ("ozoneApplied"), advanced only by a double buffer flush
//! or by the notify rule; `lastNotifiedTermIndex` and `lastSkippedIndex`, fed by
//! `notifyTermIndexUpdated` for the entries that never reach the state machine
//! (the leader's STARTUP_ENTRY and Ratis metadata entries). None of these is
//! persisted. Leader readiness (Ratis 2.x `LeaderStateImpl.isReady`) reads
//! `lastAppliedTermIndex` on every call.

use super::types::TermIndex;

/// What one `updateLastAppliedTermIndex` call decided, for the trail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    pub requested: TermIndex,
    /// C1: `new.index < lastNotified.index`.
    pub c1: bool,
    /// The left side of C2: the old `lastApplied.index` (HDDS-10798 bug) or the
    /// new index (fix).
    pub c2_left: i64,
    pub c2: bool,
    pub last_skipped: i64,
    pub last_notified: TermIndex,
    pub before: TermIndex,
    pub after: TermIndex,
}

impl Update {
    pub fn describe(&self, buggy: bool) -> String {
        let left = if buggy { "ozoneApplied" } else { "newIndex" };
        format!(
            "updateLastAppliedIndex{}: C1 {} < lastNotified {} is {}, C2 {left} {} >= lastSkipped {} is {} -> ozoneApplied {} -> {}",
            self.requested,
            self.requested.index,
            self.last_notified.index,
            self.c1,
            self.c2_left,
            self.last_skipped,
            self.c2,
            self.before.index,
            self.after.index
        )
    }
}

/// What one `notifyTermIndexUpdated` call did, for the trail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notify {
    pub notified: TermIndex,
    pub skipped_before: i64,
    pub skipped_after: i64,
    pub notified_before: TermIndex,
    pub applied_before: TermIndex,
    pub update: Option<Update>,
}

impl Notify {
    pub fn describe(&self, buggy: bool) -> String {
        let skipped = if self.skipped_before == self.skipped_after {
            format!("lastSkipped {} (unchanged)", self.skipped_after)
        } else {
            format!(
                "lastSkipped {} -> {}",
                self.skipped_before, self.skipped_after
            )
        };
        let update = match &self.update {
            Some(update) => update.describe(buggy),
            None => format!(
                "no update ({} - ozoneApplied {} != 1)",
                self.notified.index, self.applied_before.index
            ),
        };
        format!(
            "notifyTermIndexUpdated{}: {skipped}, lastNotified {} -> {}; {update}",
            self.notified, self.notified_before.index, self.notified.index
        )
    }
}

#[derive(Clone, Debug)]
pub struct AppliedTracker {
    last_applied: TermIndex,
    last_notified: TermIndex,
    last_skipped: i64,
    /// HDDS-10798: compare the old applied index, not the new one, with lastSkipped.
    buggy: bool,
}

impl AppliedTracker {
    /// At OM start: `lastApplied` is TRANSACTION_INFO; the rest starts fresh.
    pub fn new(transaction_info: TermIndex, buggy: bool) -> Self {
        AppliedTracker {
            last_applied: transaction_info,
            last_notified: TermIndex::INITIAL_NOTIFIED,
            last_skipped: -1,
            buggy,
        }
    }

    pub fn last_applied(&self) -> TermIndex {
        self.last_applied
    }
    pub fn last_notified(&self) -> TermIndex {
        self.last_notified
    }
    pub fn last_skipped(&self) -> i64 {
        self.last_skipped
    }

    /// `notifyTermIndexUpdated(term, index)`: only non-state-machine entries, in order.
    pub fn notify_term_index_updated(&mut self, notified: TermIndex) -> Notify {
        let skipped_before = self.last_skipped;
        let notified_before = self.last_notified;
        let applied_before = self.last_applied;
        if notified.index - self.last_notified.index > 1 {
            self.last_skipped = notified.index - 1;
        }
        assert!(
            notified > self.last_notified,
            "lastNotified must increase: {} after {}",
            notified,
            self.last_notified
        );
        self.last_notified = notified;
        let update = (self.last_notified.index - self.last_applied.index == 1)
            .then(|| self.update_last_applied(self.last_notified));
        Notify {
            notified,
            skipped_before,
            skipped_after: self.last_skipped,
            notified_before,
            applied_before,
            update,
        }
    }

    /// `updateLastAppliedTermIndex(new)`: called by the notify rule and once per
    /// flushed batch with the batch's highest term-index.
    pub fn update_last_applied(&mut self, requested: TermIndex) -> Update {
        assert!(
            requested >= self.last_applied,
            "applied index went backwards: {} after {}",
            requested,
            self.last_applied
        );
        let before = self.last_applied;
        let c1 = requested.index < self.last_notified.index;
        let c2_left = if self.buggy {
            before.index
        } else {
            requested.index
        };
        let c2 = c2_left >= self.last_skipped;
        let after = if c1 && c2 {
            self.last_notified
        } else {
            requested
        };
        self.last_applied = after;
        Update {
            requested,
            c1,
            c2_left,
            c2,
            last_skipped: self.last_skipped,
            last_notified: self.last_notified,
            before,
            after,
        }
    }
}

/// Ratis 2.x leader readiness as the OM sees it: a leader whose state machine has
/// applied its startup entry. Evaluated on every write and every service run.
pub fn leader_ready(startup_index: Option<u64>, last_applied: TermIndex) -> bool {
    match startup_index {
        Some(startup) => last_applied.index >= startup as i64,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ti(term: u64, index: i64) -> TermIndex {
        TermIndex::new(term, index)
    }

    /// Steps 0-3 of Tsz-wo Sze's table on HDDS-10798.
    fn through_step_3(buggy: bool) -> AppliedTracker {
        // Step 0: OM startup, ratisApplied = ozoneApplied = 9.
        let mut om = AppliedTracker::new(ti(1, 9), buggy);
        assert_eq!((om.last_skipped(), om.last_notified().index), (-1, -1));
        // Step 1: applyTransaction(10) only buffers: nothing changes here.
        assert_eq!(om.last_applied(), ti(1, 9));
        // Step 2: STARTUP_ENTRY at 11.
        let step2 = om.notify_term_index_updated(ti(2, 11));
        assert_eq!((step2.skipped_before, step2.skipped_after), (-1, 10));
        assert_eq!(om.last_notified(), ti(2, 11));
        assert_eq!(step2.update, None, "11 - 9 != 1");
        assert!(!leader_ready(Some(11), om.last_applied()));
        // Step 3: META_ENTRY at 12.
        let step3 = om.notify_term_index_updated(ti(2, 12));
        assert_eq!(step3.skipped_after, 10, "12 - 11 = 1 leaves lastSkipped");
        assert_eq!(om.last_notified(), ti(2, 12));
        assert_eq!(step3.update, None, "12 - 9 != 1");
        om
    }

    #[test]
    fn step_4_buggy_leader_stays_not_ready() {
        let mut om = through_step_3(true);
        let update = om.update_last_applied(ti(1, 10));
        assert!(update.c1, "10 < 12");
        assert_eq!(update.c2_left, 9);
        assert!(!update.c2, "9 >= 10 is false");
        assert_eq!(om.last_applied(), ti(1, 10));
        assert!(!leader_ready(Some(11), om.last_applied()));
        assert!(update
            .describe(true)
            .contains("C2 ozoneApplied 9 >= lastSkipped 10 is false"));
    }

    #[test]
    fn step_4_fixed_leader_becomes_ready() {
        let mut om = through_step_3(false);
        let update = om.update_last_applied(ti(1, 10));
        assert!(update.c1 && update.c2, "10 < 12 and 10 >= 10");
        assert_eq!(om.last_applied(), ti(2, 12));
        assert!(leader_ready(Some(11), om.last_applied()));
    }

    #[test]
    fn the_buggy_leader_recovers_only_by_a_restart() {
        let mut om = through_step_3(true);
        om.update_last_applied(ti(1, 10));
        // Restart: lastApplied = TRANSACTION_INFO (10); the log replays 11 and 12.
        let mut restarted = AppliedTracker::new(ti(1, 10), true);
        let replay = restarted.notify_term_index_updated(ti(2, 11));
        assert!(replay.update.is_some(), "11 - 10 == 1 updates directly");
        restarted.notify_term_index_updated(ti(2, 12));
        assert_eq!(restarted.last_applied(), ti(2, 12));
        assert!(leader_ready(Some(11), restarted.last_applied()));
    }

    #[test]
    fn note_3_last_skipped_is_the_gap_before_the_last_notification() {
        let mut om = AppliedTracker::new(ti(1, 203), false);
        for index in [204, 206, 209, 210] {
            om.notify_term_index_updated(ti(1, index));
        }
        assert_eq!(om.last_skipped(), 208);
        assert_eq!(om.last_notified().index, 210);
    }

    #[test]
    fn a_flush_before_the_startup_entry_is_notified_is_ready_in_both_modes() {
        for buggy in [true, false] {
            let mut om = AppliedTracker::new(ti(1, 9), buggy);
            om.update_last_applied(ti(1, 10));
            let notify = om.notify_term_index_updated(ti(2, 11));
            assert!(notify.update.is_some(), "11 - 10 == 1");
            assert_eq!(om.last_applied(), ti(2, 11));
            assert!(leader_ready(Some(11), om.last_applied()));
        }
    }

    #[test]
    fn a_fresh_cluster_leader_is_ready_after_its_first_startup_entry() {
        let mut om = AppliedTracker::new(ti(0, 0), true);
        let notify = om.notify_term_index_updated(ti(1, 1));
        assert_eq!(notify.skipped_after, 0);
        assert_eq!(om.last_applied(), ti(1, 1));
        assert!(leader_ready(Some(1), om.last_applied()));
        assert!(
            !leader_ready(None, om.last_applied()),
            "followers are never ready"
        );
    }

    #[test]
    #[should_panic(expected = "applied index went backwards")]
    fn applied_never_goes_backwards() {
        let mut om = AppliedTracker::new(ti(1, 9), false);
        om.update_last_applied(ti(1, 8));
    }
}
