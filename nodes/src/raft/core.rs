//! The Raft state machine: elections, replication, commit, apply, leadership
//! transfer and check-quorum. Every public method runs to completion, queues
//! its effects in `outputs`, and re-checks the invariants before returning.

use std::collections::BTreeSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::log::RaftLog;
use super::{
    Config, Entry, EntryBody, HardState, Message, NodeId, Output, ProposeError, RaftProbe, Role,
    TransferError,
};

/// Replication and transfer state that exists only while this node leads.
#[derive(Debug)]
struct LeaderState {
    /// First index to send to each peer. It moves forward only on
    /// acknowledgements, so every send from it retransmits whatever a lossy
    /// network dropped; heartbeats double as the retry timer.
    next_index: Vec<u64>,
    /// Highest index known to match on each peer (the leader's own slot is unused).
    match_index: Vec<u64>,
    /// When each peer last answered this leader, for check_quorum.
    heard_ms: Vec<u64>,
    heartbeat_due_ms: u64,
    /// Index of this term's `Conf` entry.
    startup_index: u64,
    transfer: Option<Transfer>,
}

#[derive(Debug, Clone, Copy)]
struct Transfer {
    target: NodeId,
    deadline_ms: u64,
}

/// The fields of an AppendEntries message, so handlers stay short.
struct AppendRequest {
    term: u64,
    prev_index: u64,
    prev_term: u64,
    entries: Vec<Entry>,
    leader_commit: u64,
}

pub struct RaftCore {
    id: NodeId,
    cluster_size: usize,
    config: Config,
    hard: HardState,
    log: RaftLog,
    role: Role,
    leader: Option<NodeId>,
    commit: u64,
    applied: u64,
    rng: ChaCha8Rng,
    outputs: Vec<Output>,
    /// Probe hits since the last drain: observations, apart from `outputs`.
    probes: Vec<RaftProbe>,
    election_due_ms: u64,
    /// Last time the current leader's AppendEntries arrived (leader stickiness).
    leader_contact_ms: Option<u64>,
    /// Votes granted to this node in its current candidacy.
    votes: BTreeSet<NodeId>,
    /// `Some` exactly while `role == Leader`.
    lead: Option<LeaderState>,
    /// The (role, term, leader) last announced with `RoleChanged`.
    reported: (Role, u64, Option<NodeId>),
}

impl RaftCore {
    /// `applied`: the index the state machine has durably applied (entries
    /// `<= applied` are never handed out again). The commit index starts at
    /// `applied`. `log` is the durable log as persisted (contiguous from 1).
    #[allow(
        clippy::too_many_arguments,
        reason = "the shell's restart contract, kept flat on purpose"
    )]
    pub fn new(
        id: NodeId,
        cluster_size: usize,
        config: Config,
        hard: HardState,
        log: Vec<Entry>,
        applied: u64,
        rng: ChaCha8Rng,
        now_ms: u64,
    ) -> Self {
        validate_config(&config);
        assert!(
            id < cluster_size,
            "node {id} outside a cluster of {cluster_size}"
        );
        let log = RaftLog::new(log);
        assert!(
            log.last_term() <= hard.term,
            "persisted log is ahead of the persisted term"
        );
        // Only the canary can have applied an entry that a later leader truncated.
        if !config.bug_commit_without_quorum {
            assert!(
                applied <= log.last_index(),
                "applied {applied} beyond the durable log"
            );
        }
        let mut core = RaftCore {
            id,
            cluster_size,
            config,
            reported: (Role::Follower, hard.term, None),
            hard,
            commit: applied.min(log.last_index()),
            log,
            role: Role::Follower,
            leader: None,
            applied,
            rng,
            outputs: Vec::new(),
            probes: Vec::new(),
            election_due_ms: 0,
            leader_contact_ms: None,
            votes: BTreeSet::new(),
            lead: None,
        };
        core.reset_election_timer(now_ms);
        core.check_invariants();
        core
    }

    /// Fires any due timer: election timeout, heartbeat, transfer timeout, check-quorum.
    pub fn tick(&mut self, now_ms: u64) {
        if self.role == Role::Leader {
            self.leader_tick(now_ms);
        } else if now_ms >= self.election_due_ms {
            self.start_election(now_ms, false);
        }
        self.check_invariants();
    }

    pub fn receive(&mut self, now_ms: u64, from: NodeId, msg: Message) {
        assert!(
            from < self.cluster_size && from != self.id,
            "message from unknown peer {from}"
        );
        if self.withholds_vote(now_ms, &msg) {
            self.probes.push(RaftProbe::VoteWithheld);
            return;
        }
        let term = message_term(&msg);
        if term > self.hard.term {
            let leader = matches!(msg, Message::AppendEntries { .. }).then_some(from);
            self.step_up(now_ms, term, leader);
        }
        match msg {
            Message::RequestVote {
                term,
                last_log_index,
                last_log_term,
                ..
            } => self.on_request_vote(now_ms, from, term, (last_log_term, last_log_index)),
            Message::VoteResponse { term, granted } => {
                self.on_vote_response(now_ms, from, term, granted)
            }
            Message::AppendEntries {
                term,
                prev_index,
                prev_term,
                entries,
                leader_commit,
            } => {
                let request = AppendRequest {
                    term,
                    prev_index,
                    prev_term,
                    entries,
                    leader_commit,
                };
                self.on_append_entries(now_ms, from, request)
            }
            Message::AppendResponse {
                term,
                success,
                match_index,
            } => self.on_append_response(now_ms, from, term, success, match_index),
            Message::TimeoutNow { term } => self.on_timeout_now(now_ms, term),
        }
        self.check_invariants();
    }

    /// Appends `Sm(command)` on the leader and starts replicating it at once.
    pub fn propose(&mut self, now_ms: u64, command: String) -> Result<u64, ProposeError> {
        self.expire_transfer(now_ms);
        let Some(lead) = &self.lead else {
            return Err(ProposeError::NotLeader {
                leader: self.leader,
            });
        };
        if lead.transfer.is_some() {
            return Err(ProposeError::TransferInProgress);
        }
        let index = self.append_local(EntryBody::Sm(command));
        self.advance_commit();
        self.broadcast_append();
        self.check_invariants();
        Ok(index)
    }

    /// Ratis transferLeadership: catch `to` up, then tell it to campaign.
    pub fn transfer_leadership(&mut self, now_ms: u64, to: NodeId) -> Result<(), TransferError> {
        self.expire_transfer(now_ms);
        let deadline_ms = now_ms.saturating_add(self.config.transfer_timeout_ms);
        let (cluster_size, id) = (self.cluster_size, self.id);
        let Some(lead) = &mut self.lead else {
            return Err(TransferError::NotLeader);
        };
        if to >= cluster_size {
            return Err(TransferError::UnknownTarget);
        }
        if to == id {
            return Err(TransferError::SelfTarget);
        }
        if lead.transfer.is_some() {
            return Err(TransferError::AlreadyInProgress);
        }
        lead.transfer = Some(Transfer {
            target: to,
            deadline_ms,
        });
        self.send_append(to);
        self.check_invariants();
        Ok(())
    }

    /// The earliest time `tick` has something to do.
    pub fn next_deadline_ms(&self) -> u64 {
        let Some(lead) = &self.lead else {
            return self.election_due_ms;
        };
        let transfer_ms = lead.transfer.map_or(u64::MAX, |t| t.deadline_ms);
        lead.heartbeat_due_ms
            .min(transfer_ms)
            .min(self.quorum_deadline_ms())
    }

    /// Outputs in the order they must be executed.
    pub fn drain_outputs(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.outputs)
    }

    /// The probes hit since the last drain, in order (repeats included).
    pub fn drain_probes(&mut self) -> Vec<RaftProbe> {
        std::mem::take(&mut self.probes)
    }

    pub fn id(&self) -> NodeId {
        self.id
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn term(&self) -> u64 {
        self.hard.term
    }

    pub fn hard_state(&self) -> &HardState {
        &self.hard
    }

    pub fn leader(&self) -> Option<NodeId> {
        self.leader
    }

    pub fn commit_index(&self) -> u64 {
        self.commit
    }

    pub fn last_index(&self) -> u64 {
        self.log.last_index()
    }

    /// The last index emitted as `Apply` (or the `applied` given at construction).
    pub fn applied_index(&self) -> u64 {
        self.applied
    }

    /// Leader only: index of this term's `Conf` entry.
    pub fn startup_index(&self) -> Option<u64> {
        self.lead.as_ref().map(|l| l.startup_index)
    }

    pub fn entry(&self, index: u64) -> Option<&Entry> {
        self.log.get(index)
    }

    pub fn log(&self) -> &[Entry] {
        self.log.entries()
    }

    pub fn transfer_target(&self) -> Option<NodeId> {
        self.lead
            .as_ref()
            .and_then(|l| l.transfer)
            .map(|t| t.target)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    // ----- timers -----

    fn leader_tick(&mut self, now_ms: u64) {
        if now_ms >= self.quorum_deadline_ms() {
            // A leader cut off from a majority cannot commit anything; stepping
            // down lets clients find the real leader instead of waiting.
            self.probes.push(RaftProbe::CheckQuorumStepDown);
            self.become_follower(now_ms, None);
            return;
        }
        self.expire_transfer(now_ms);
        let heartbeat_ms = self.config.heartbeat_ms;
        let lead = self.lead_mut();
        if now_ms >= lead.heartbeat_due_ms {
            lead.heartbeat_due_ms = now_ms + heartbeat_ms;
            self.broadcast_append();
        }
    }

    fn expire_transfer(&mut self, now_ms: u64) {
        if let Some(lead) = &mut self.lead {
            if lead.transfer.is_some_and(|t| now_ms >= t.deadline_ms) {
                lead.transfer = None;
                self.probes.push(RaftProbe::TransferTimedOut);
            }
        }
    }

    /// When a leader that keeps hearing nothing from a majority must step down.
    fn quorum_deadline_ms(&self) -> u64 {
        let Some(lead) = &self.lead else {
            return u64::MAX;
        };
        let peers_needed = self.majority() - 1;
        if !self.config.check_quorum || peers_needed == 0 {
            return u64::MAX;
        }
        let mut heard_ms: Vec<u64> = self.peers().map(|p| lead.heard_ms[p]).collect();
        heard_ms.sort_unstable_by(|a, b| b.cmp(a));
        heard_ms[peers_needed - 1].saturating_add(self.config.election_timeout_ms_max)
    }

    fn reset_election_timer(&mut self, now_ms: u64) {
        let (min_ms, max_ms) = (
            self.config.election_timeout_ms_min,
            self.config.election_timeout_ms_max,
        );
        self.election_due_ms = now_ms.saturating_add(self.rng.random_range(min_ms..=max_ms));
    }

    // ----- roles and terms -----

    /// A higher term was seen: adopt it with no vote cast yet.
    fn step_up(&mut self, now_ms: u64, term: u64, leader: Option<NodeId>) {
        self.set_hard_state(HardState {
            term,
            voted_for: None,
        });
        self.become_follower(now_ms, leader);
    }

    /// Also drops any leader state, which abandons a transfer in progress.
    fn become_follower(&mut self, now_ms: u64, leader: Option<NodeId>) {
        if self.role != Role::Follower {
            // Leader and candidate timers are stale; a follower's own timer is
            // reset only by a leader or a granted vote, so a stream of doomed
            // candidates cannot keep postponing this node's election.
            self.reset_election_timer(now_ms);
        }
        self.role = Role::Follower;
        self.leader = leader;
        self.lead = None;
        self.votes.clear();
        self.note_role();
    }

    fn start_election(&mut self, now_ms: u64, transfer: bool) {
        let term = self.hard.term + 1;
        self.set_hard_state(HardState {
            term,
            voted_for: Some(self.id),
        });
        self.role = Role::Candidate;
        self.leader = None;
        self.lead = None;
        self.votes = BTreeSet::from([self.id]);
        self.note_role();
        self.reset_election_timer(now_ms);
        if self.votes.len() >= self.majority() {
            self.become_leader(now_ms);
            return;
        }
        let msg = Message::RequestVote {
            term,
            last_log_index: self.log.last_index(),
            last_log_term: self.log.last_term(),
            transfer,
        };
        for peer in self.peers().collect::<Vec<_>>() {
            self.send(peer, msg.clone());
        }
    }

    fn become_leader(&mut self, now_ms: u64) {
        let n = self.cluster_size;
        let startup_index = self.log.last_index() + 1;
        self.role = Role::Leader;
        self.leader = Some(self.id);
        self.votes.clear();
        self.lead = Some(LeaderState {
            next_index: vec![startup_index; n],
            match_index: vec![0; n],
            // A fresh leader gets a full check-quorum period of grace.
            heard_ms: vec![now_ms; n],
            heartbeat_due_ms: now_ms + self.config.heartbeat_ms,
            startup_index,
            transfer: None,
        });
        self.note_role();
        let index = self.append_local(EntryBody::Conf);
        debug_assert_eq!(index, startup_index);
        self.advance_commit();
        self.broadcast_append();
    }

    fn set_hard_state(&mut self, hard: HardState) {
        assert!(hard.term >= self.hard.term, "term went backwards");
        if hard != self.hard {
            self.hard = hard.clone();
            self.outputs.push(Output::PersistHardState(hard));
        }
    }

    fn note_role(&mut self) {
        let now = (self.role, self.hard.term, self.leader);
        if now != self.reported {
            self.reported = now;
            let (role, term, leader) = now;
            self.outputs
                .push(Output::RoleChanged { role, term, leader });
        }
    }

    // ----- votes -----

    /// Leader stickiness: a follower that hears from a live leader ignores
    /// ordinary vote requests, so a node returning from a partition with an
    /// inflated term cannot depose a healthy leader through it.
    fn withholds_vote(&self, now_ms: u64, msg: &Message) -> bool {
        let Message::RequestVote {
            transfer: false, ..
        } = msg
        else {
            return false;
        };
        let min_ms = self.config.election_timeout_ms_min;
        self.role == Role::Follower
            && self.leader.is_some()
            && self
                .leader_contact_ms
                .is_some_and(|t| now_ms < t.saturating_add(min_ms))
    }

    /// `candidate_last` is the candidate's (last log term, last log index).
    fn on_request_vote(
        &mut self,
        now_ms: u64,
        from: NodeId,
        term: u64,
        candidate_last: (u64, u64),
    ) {
        let free = self.hard.voted_for.is_none_or(|v| v == from);
        let up_to_date = candidate_last >= (self.log.last_term(), self.log.last_index());
        let granted = term == self.hard.term && free && up_to_date;
        if granted {
            self.set_hard_state(HardState {
                term,
                voted_for: Some(from),
            });
            self.reset_election_timer(now_ms);
        }
        self.send(
            from,
            Message::VoteResponse {
                term: self.hard.term,
                granted,
            },
        );
    }

    fn on_vote_response(&mut self, now_ms: u64, from: NodeId, term: u64, granted: bool) {
        if term != self.hard.term || self.role != Role::Candidate || !granted {
            return;
        }
        self.votes.insert(from);
        if self.votes.len() >= self.majority() {
            self.become_leader(now_ms);
        }
    }

    fn on_timeout_now(&mut self, now_ms: u64, term: u64) {
        // A stale TimeoutNow (older term) must not trigger a second election.
        if term == self.hard.term && self.role == Role::Follower {
            self.start_election(now_ms, true);
        }
    }

    // ----- follower side of replication -----

    fn on_append_entries(&mut self, now_ms: u64, from: NodeId, request: AppendRequest) {
        let last_index = self.log.last_index();
        if request.term < self.hard.term {
            // Tell the stale leader about the newer term so it steps down.
            self.send_append_response(from, false, last_index);
            return;
        }
        assert!(
            self.role != Role::Leader,
            "two leaders in term {}",
            request.term
        );
        self.become_follower(now_ms, Some(from));
        self.leader_contact_ms = Some(now_ms);
        self.reset_election_timer(now_ms);
        match self.log.term_at(request.prev_index) {
            None => return self.send_append_response(from, false, last_index),
            Some(term) if term != request.prev_term => {
                let hint = self.log.conflict_hint(request.prev_index);
                return self.send_append_response(from, false, hint);
            }
            Some(_) => {}
        }
        // Only entries this message vouches for may be committed: anything
        // beyond them could be a stale suffix from an older leader.
        let last_new = request.prev_index + request.entries.len() as u64;
        self.merge_entries(request.entries);
        let commit = request.leader_commit.min(last_new);
        if commit > self.commit {
            self.commit = commit;
            self.apply_committed();
        }
        self.send_append_response(from, true, last_new);
    }

    /// Appends what is new; truncates only from the first entry whose term
    /// differs, so stale or reordered appends never drop matching entries.
    fn merge_entries(&mut self, entries: Vec<Entry>) {
        let Some(first_new) = entries
            .iter()
            .position(|e| self.log.term_at(e.index) != Some(e.term))
        else {
            return;
        };
        let new_entries = entries[first_new..].to_vec();
        let from = new_entries[0].index;
        let truncate_from = (from <= self.log.last_index()).then_some(from);
        if let Some(from) = truncate_from {
            self.probes.push(RaftProbe::TruncatedConflict);
            self.truncate_conflict(from);
        }
        for entry in &new_entries {
            self.log.append(entry.clone());
        }
        self.outputs.push(Output::PersistLog {
            truncate_from,
            entries: new_entries,
        });
    }

    fn truncate_conflict(&mut self, from: u64) {
        if from <= self.commit {
            // Committed entries are never overwritten in Raft; only the canary
            // defect can get here, and the harness is meant to see the damage.
            assert!(
                self.config.bug_commit_without_quorum,
                "committed entry {from} conflicts with the leader (commit {})",
                self.commit
            );
            self.commit = from - 1;
        }
        self.log.truncate_from(from);
    }

    fn send_append_response(&mut self, to: NodeId, success: bool, match_index: u64) {
        let term = self.hard.term;
        self.send(
            to,
            Message::AppendResponse {
                term,
                success,
                match_index,
            },
        );
    }

    // ----- leader side of replication -----

    fn on_append_response(&mut self, now_ms: u64, from: NodeId, term: u64, ok: bool, index: u64) {
        if term != self.hard.term || self.role != Role::Leader {
            return;
        }
        let last_index = self.log.last_index();
        let lead = self.lead_mut();
        lead.heard_ms[from] = now_ms;
        if ok {
            assert!(
                index <= last_index,
                "peer {from} acked {index} beyond {last_index}"
            );
            lead.match_index[from] = lead.match_index[from].max(index);
            lead.next_index[from] = lead.next_index[from].max(lead.match_index[from] + 1);
            self.after_ack(from);
        } else {
            // Never below what the peer has acknowledged: a stale rejection
            // must not undo progress.
            let floor = lead.match_index[from] + 1;
            lead.next_index[from] = lead.next_index[from]
                .min(index.saturating_add(1))
                .max(floor);
            self.send_append(from);
        }
    }

    fn after_ack(&mut self, from: NodeId) {
        let before = (self.commit, self.log.last_index());
        self.advance_commit();
        if (self.commit, self.log.last_index()) != before {
            // Spread the new commit index (and any Meta entry) right away.
            self.broadcast_append();
        } else if self.lead().match_index[from] < self.log.last_index() {
            self.send_append(from);
        } else {
            self.maybe_send_timeout_now(from);
        }
    }

    fn append_local(&mut self, body: EntryBody) -> u64 {
        let index = self.log.last_index() + 1;
        let entry = Entry {
            term: self.hard.term,
            index,
            body,
        };
        self.log.append(entry.clone());
        self.outputs.push(Output::PersistLog {
            truncate_from: None,
            entries: vec![entry],
        });
        index
    }

    /// Commits as far as allowed, applies, and appends a `Meta` entry after
    /// every advance that did not land on a `Meta` (which is what ends the chain).
    fn advance_commit(&mut self) {
        loop {
            let target = self.committable_index();
            if target <= self.commit {
                return;
            }
            // Terms never decrease along the log: the first newly committed entry
            // is the oldest one. Raft commits it only through this term's entry.
            let first_term = self.log.term_at(self.commit + 1);
            if first_term.is_some_and(|t| t < self.hard.term) {
                self.probes.push(RaftProbe::CommittedEarlierTerm);
            }
            self.commit = target;
            self.apply_committed();
            let on_meta = matches!(
                self.log.get(target).map(|e| &e.body),
                Some(EntryBody::Meta { .. })
            );
            if !self.config.metadata_entries || on_meta {
                return;
            }
            self.append_local(EntryBody::Meta { commit: target });
        }
    }

    /// The highest index a majority holds, if it is from this term (Raft §5.4.2:
    /// older-term entries commit only indirectly).
    fn committable_index(&self) -> u64 {
        let last_index = self.log.last_index();
        if self.config.bug_commit_without_quorum {
            return last_index;
        }
        let lead = self.lead();
        let mut matched: Vec<u64> = (0..self.cluster_size)
            .map(|p| {
                if p == self.id {
                    last_index
                } else {
                    lead.match_index[p]
                }
            })
            .collect();
        matched.sort_unstable_by(|a, b| b.cmp(a));
        let index = matched[self.majority() - 1];
        if self.log.term_at(index) == Some(self.hard.term) {
            index
        } else {
            0
        }
    }

    fn broadcast_append(&mut self) {
        for peer in self.peers().collect::<Vec<_>>() {
            self.send_append(peer);
        }
    }

    /// Sends from `next_index` (an empty append is the heartbeat).
    fn send_append(&mut self, peer: NodeId) {
        let next = self.lead().next_index[peer];
        let prev_index = next - 1;
        let prev_term = self
            .log
            .term_at(prev_index)
            .expect("next_index stays within the log");
        let msg = Message::AppendEntries {
            term: self.hard.term,
            prev_index,
            prev_term,
            entries: self.log.slice(next, self.config.entries_per_append_max),
            leader_commit: self.commit,
        };
        self.send(peer, msg);
        self.maybe_send_timeout_now(peer);
    }

    /// Repeated on every heartbeat while the target stays caught up, so a lost
    /// TimeoutNow only delays the transfer; the target ignores it once it has
    /// moved to the next term.
    fn maybe_send_timeout_now(&mut self, peer: NodeId) {
        let last_index = self.log.last_index();
        let lead = self.lead();
        let is_target = lead.transfer.is_some_and(|t| t.target == peer);
        if is_target && lead.match_index[peer] == last_index {
            self.send(
                peer,
                Message::TimeoutNow {
                    term: self.hard.term,
                },
            );
        }
    }

    fn apply_committed(&mut self) {
        while self.applied < self.commit {
            self.applied += 1;
            let entry = self
                .log
                .get(self.applied)
                .expect("committed entries are in the log");
            self.outputs.push(Output::Apply(entry.clone()));
        }
    }

    // ----- helpers -----

    fn send(&mut self, to: NodeId, msg: Message) {
        debug_assert_ne!(to, self.id);
        self.outputs.push(Output::Send { to, msg });
    }

    fn majority(&self) -> usize {
        self.cluster_size / 2 + 1
    }

    fn peers(&self) -> impl Iterator<Item = NodeId> {
        let id = self.id;
        (0..self.cluster_size).filter(move |&p| p != id)
    }

    fn lead(&self) -> &LeaderState {
        self.lead.as_ref().expect("leader state while leading")
    }

    fn lead_mut(&mut self) -> &mut LeaderState {
        self.lead.as_mut().expect("leader state while leading")
    }

    fn check_invariants(&self) {
        let last_index = self.log.last_index();
        assert!(
            self.commit <= last_index,
            "commit {} beyond last {last_index}",
            self.commit
        );
        if !self.config.bug_commit_without_quorum {
            assert!(
                self.applied <= self.commit,
                "applied {} beyond commit {}",
                self.applied,
                self.commit
            );
        }
        assert!(
            self.log.last_term() <= self.hard.term,
            "log term beyond current term"
        );
        assert_eq!(self.role == Role::Leader, self.lead.is_some());
        if let Some(lead) = &self.lead {
            assert!(lead.startup_index <= last_index);
            for peer in self.peers() {
                let (next, matched) = (lead.next_index[peer], lead.match_index[peer]);
                debug_assert!(
                    matched < next && next <= last_index + 1,
                    "peer {peer}: {matched}/{next}"
                );
            }
        }
    }
}

fn message_term(msg: &Message) -> u64 {
    match msg {
        Message::RequestVote { term, .. }
        | Message::VoteResponse { term, .. }
        | Message::AppendEntries { term, .. }
        | Message::AppendResponse { term, .. }
        | Message::TimeoutNow { term } => *term,
    }
}

fn validate_config(config: &Config) {
    assert!(
        config.election_timeout_ms_min >= 1,
        "election timeout must be positive"
    );
    assert!(config.election_timeout_ms_min <= config.election_timeout_ms_max);
    assert!(config.heartbeat_ms >= 1, "heartbeat must be positive");
    assert!(
        config.entries_per_append_max >= 1,
        "appends must carry entries"
    );
}
