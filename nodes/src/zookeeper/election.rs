//! FastLeaderElection as a pure state machine: votes ordered by epoch, then last
//! processed zxid, then server id; notifications; the finalize wait; joining an
//! established ensemble through FOLLOWING/LEADING votes. The shell moves
//! [`Notification`]s over datagrams and drives [`Election::tick`] on a timer.

use super::zxid::Zxid;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// How long a server waits, once a quorum agrees, for a better vote (finalizeWait).
pub const FINALIZE_WAIT_MS: u64 = 200;
/// First resend interval of notifications (minNotificationInterval).
pub const NOTIFICATION_INTERVAL_MS_MIN: u64 = 200;
/// Cap of the exponential resend backoff. ZooKeeper's is 60 s; a short cap keeps a
/// lone LOOKING server quick to notice peers that come back in a short simulation.
pub const NOTIFICATION_INTERVAL_MS_MAX: u64 = 1_600;
/// Bound on notifications a LOOKING server processes from itself per input.
const SELF_DELIVERIES_MAX: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Looking,
    Following,
    Leading,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// The proposed leader's server id.
    pub leader: u64,
    /// The proposed leader's last processed zxid (`getLastLoggedZxid`, which reads
    /// the data tree's `lastProcessedZxid`, not the last durable zxid).
    pub zxid: Zxid,
    /// The proposed leader's current epoch.
    pub peer_epoch: u32,
}

/// `totalOrderPredicate`: is `new` a better vote than `cur`? Epoch first, then
/// zxid, then server id.
pub fn newer(new: &Vote, cur: &Vote) -> bool {
    (new.peer_epoch, new.zxid, new.leader) > (cur.peer_epoch, cur.zxid, cur.leader)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    pub sid: u64,
    pub vote: Vote,
    pub election_epoch: u64,
    pub state: ServerState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ballot {
    vote: Vote,
    election_epoch: u64,
    state: ServerState,
}

impl Ballot {
    /// `Vote.equals`: while either side is LOOKING every field counts; between
    /// FOLLOWING/LEADING votes only the leader and its epoch do (ZOOKEEPER-1732).
    fn same(&self, other: &Ballot) -> bool {
        if self.state == ServerState::Looking || other.state == ServerState::Looking {
            self.vote == other.vote && self.election_epoch == other.election_epoch
        } else {
            self.vote.leader == other.vote.leader && self.vote.peer_epoch == other.vote.peer_epoch
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    Send {
        to: u64,
        notification: Notification,
    },
    /// The election ended: follow or lead `vote.leader`.
    Decided {
        state: ServerState,
        vote: Vote,
        election_epoch: u64,
    },
}

pub struct Election {
    me: u64,
    voters: Vec<u64>,
    logical_clock: u64,
    looking: bool,
    /// This server's own vote for the current round.
    init: Vote,
    proposal: Vote,
    recv: BTreeMap<u64, Ballot>,
    out_of_election: BTreeMap<u64, Ballot>,
    finalize_at_ms: Option<u64>,
    resend_at_ms: u64,
    interval_ms: u64,
    /// What this server reports to LOOKING peers while it follows or leads.
    current: Option<(Vote, u64)>,
    self_inbox: VecDeque<Notification>,
    outputs: Vec<Output>,
}

impl Election {
    pub fn new(me: u64, voters: Vec<u64>) -> Election {
        assert!(voters.contains(&me), "a voter elects");
        let init = Vote {
            leader: me,
            zxid: Zxid::ZERO,
            peer_epoch: 0,
        };
        Election {
            me,
            voters,
            logical_clock: 0,
            looking: false,
            init,
            proposal: init,
            recv: BTreeMap::new(),
            out_of_election: BTreeMap::new(),
            finalize_at_ms: None,
            resend_at_ms: 0,
            interval_ms: NOTIFICATION_INTERVAL_MS_MIN,
            current: None,
            self_inbox: VecDeque::new(),
            outputs: Vec::new(),
        }
    }

    fn quorum(&self) -> usize {
        self.voters.len() / 2 + 1
    }

    pub fn logical_clock(&self) -> u64 {
        self.logical_clock
    }

    pub fn proposal(&self) -> Vote {
        self.proposal
    }

    pub fn is_looking(&self) -> bool {
        self.looking
    }

    /// `lookForLeader`: a new round with this server's own vote.
    pub fn start(&mut self, now_ms: u64, init: Vote) {
        assert_eq!(init.leader, self.me, "a server starts by voting for itself");
        self.logical_clock += 1;
        self.looking = true;
        self.init = init;
        self.proposal = init;
        self.recv.clear();
        self.out_of_election.clear();
        self.finalize_at_ms = None;
        self.interval_ms = NOTIFICATION_INTERVAL_MS_MIN;
        self.broadcast(now_ms);
        self.deliver_to_self(now_ms);
    }

    /// A notification arrived. `my_state` is the server's state now: a server that
    /// follows or leads answers LOOKING peers with the vote it ended its election with.
    pub fn receive(&mut self, now_ms: u64, n: Notification, my_state: ServerState) {
        if !self.voters.contains(&n.sid) || !self.voters.contains(&n.vote.leader) {
            return;
        }
        if my_state != ServerState::Looking || !self.looking {
            if n.state == ServerState::Looking {
                if let Some((vote, election_epoch)) = self.current {
                    self.send(n.sid, vote, election_epoch, my_state);
                }
            }
            return;
        }
        // WorkerReceiver: a LOOKING peer that lags a round hears our proposal.
        if n.state == ServerState::Looking && n.election_epoch < self.logical_clock {
            self.send(
                n.sid,
                self.proposal,
                self.logical_clock,
                ServerState::Looking,
            );
        }
        self.resend_at_ms = now_ms + self.interval_ms;
        self.process(now_ms, n);
        self.deliver_to_self(now_ms);
    }

    /// Time passed: end the finalize wait, or resend with backoff.
    pub fn tick(&mut self, now_ms: u64) {
        if !self.looking {
            return;
        }
        if let Some(at) = self.finalize_at_ms {
            if now_ms >= at {
                self.decide(self.proposal, self.logical_clock);
            }
            return;
        }
        if now_ms >= self.resend_at_ms {
            self.interval_ms = (self.interval_ms * 2).min(NOTIFICATION_INTERVAL_MS_MAX);
            self.broadcast(now_ms);
            self.deliver_to_self(now_ms);
        }
    }

    pub fn next_deadline_ms(&self) -> Option<u64> {
        if !self.looking {
            return None;
        }
        Some(self.finalize_at_ms.unwrap_or(self.resend_at_ms))
    }

    /// `updateElectionVote`: after syncing with (or becoming) the leader of a new
    /// epoch, report that epoch so late joiners match the ensemble's votes.
    pub fn update_epoch(&mut self, epoch: u32) {
        if let Some((vote, _)) = &mut self.current {
            vote.peer_epoch = epoch;
        }
    }

    pub fn drain(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.outputs)
    }

    fn send(&mut self, to: u64, vote: Vote, election_epoch: u64, state: ServerState) {
        let notification = Notification {
            sid: self.me,
            vote,
            election_epoch,
            state,
        };
        self.outputs.push(Output::Send { to, notification });
    }

    /// `sendNotifications`: to every voter; our own copy comes back through our queue.
    fn broadcast(&mut self, now_ms: u64) {
        self.resend_at_ms = now_ms + self.interval_ms;
        let own = Notification {
            sid: self.me,
            vote: self.proposal,
            election_epoch: self.logical_clock,
            state: ServerState::Looking,
        };
        for to in self.voters.clone() {
            if to == self.me {
                self.self_inbox.push_back(own);
            } else {
                self.send(to, self.proposal, self.logical_clock, ServerState::Looking);
            }
        }
    }

    fn deliver_to_self(&mut self, now_ms: u64) {
        for _ in 0..SELF_DELIVERIES_MAX {
            let Some(n) = self.self_inbox.pop_front() else {
                return;
            };
            if self.looking {
                self.process(now_ms, n);
            }
        }
        // Our own vote can change the proposal at most once per input, so the
        // queue drains within the bound.
        assert!(self.self_inbox.is_empty(), "self notifications bounded");
    }

    fn count(votes: &BTreeMap<u64, Ballot>, ballot: &Ballot) -> usize {
        votes.values().filter(|b| b.same(ballot)).count()
    }

    /// `checkLeader`: follow another server only once it says it leads; lead only
    /// in the round we are in.
    fn check_leader(
        &self,
        votes: &BTreeMap<u64, Ballot>,
        leader: u64,
        election_epoch: u64,
    ) -> bool {
        if leader != self.me {
            votes
                .get(&leader)
                .is_some_and(|b| b.state == ServerState::Leading)
        } else {
            self.logical_clock == election_epoch
        }
    }

    fn process(&mut self, now_ms: u64, n: Notification) {
        if self.finalize_at_ms.is_some() {
            // The finalize wait consumes notifications; only a better vote resumes
            // the round, every other one is dropped.
            if !newer(&n.vote, &self.proposal) {
                return;
            }
            self.finalize_at_ms = None;
        }
        match n.state {
            ServerState::Looking => self.process_looking(now_ms, n),
            ServerState::Following | ServerState::Leading => self.process_established(n),
        }
    }

    fn process_looking(&mut self, now_ms: u64, n: Notification) {
        if n.election_epoch > self.logical_clock {
            self.logical_clock = n.election_epoch;
            self.recv.clear();
            self.proposal = if newer(&n.vote, &self.init) {
                n.vote
            } else {
                self.init
            };
            self.broadcast(now_ms);
        } else if n.election_epoch < self.logical_clock {
            return;
        } else if newer(&n.vote, &self.proposal) {
            self.proposal = n.vote;
            self.broadcast(now_ms);
        }
        let ballot = Ballot {
            vote: n.vote,
            election_epoch: n.election_epoch,
            state: ServerState::Looking,
        };
        self.recv.insert(n.sid, ballot);
        let mine = Ballot {
            vote: self.proposal,
            election_epoch: self.logical_clock,
            state: ServerState::Looking,
        };
        if Self::count(&self.recv, &mine) >= self.quorum() {
            self.finalize_at_ms = Some(now_ms + FINALIZE_WAIT_MS);
        }
    }

    fn process_established(&mut self, n: Notification) {
        let ballot = Ballot {
            vote: n.vote,
            election_epoch: n.election_epoch,
            state: n.state,
        };
        if n.election_epoch == self.logical_clock {
            self.recv.insert(n.sid, ballot);
            if Self::count(&self.recv, &ballot) >= self.quorum()
                && self.check_leader(&self.recv, n.vote.leader, n.election_epoch)
            {
                self.decide(n.vote, n.election_epoch);
                return;
            }
        }
        // Joining an ensemble that already has a leader: a quorum must follow it.
        self.out_of_election.insert(n.sid, ballot);
        if Self::count(&self.out_of_election, &ballot) >= self.quorum()
            && self.check_leader(&self.out_of_election, n.vote.leader, n.election_epoch)
        {
            self.logical_clock = n.election_epoch;
            self.decide(n.vote, n.election_epoch);
        }
    }

    fn decide(&mut self, vote: Vote, election_epoch: u64) {
        self.looking = false;
        self.finalize_at_ms = None;
        self.self_inbox.clear();
        self.current = Some((vote, election_epoch));
        let state = if vote.leader == self.me {
            ServerState::Leading
        } else {
            ServerState::Following
        };
        self.outputs.push(Output::Decided {
            state,
            vote,
            election_epoch,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(leader: u64, epoch: u32, counter: u32, vote_epoch: u32) -> Vote {
        Vote {
            leader,
            zxid: Zxid::new(epoch, counter),
            peer_epoch: vote_epoch,
        }
    }

    #[test]
    fn votes_order_by_epoch_then_zxid_then_sid() {
        // Same epoch and zxid: the higher server id wins (zk2 over zk1).
        assert!(newer(&vote(2, 1, 3, 1), &vote(1, 1, 3, 1)));
        assert!(!newer(&vote(1, 1, 3, 1), &vote(2, 1, 3, 1)));
        // A higher zxid beats a higher server id.
        assert!(newer(&vote(1, 1, 3, 1), &vote(3, 1, 2, 1)));
        // A higher epoch beats a higher zxid.
        assert!(newer(&vote(1, 1, 1, 2), &vote(3, 1, 9, 1)));
        // A vote is not newer than itself.
        assert!(!newer(&vote(2, 1, 3, 1), &vote(2, 1, 3, 1)));
    }

    /// Three election machines on a lossless network; `up` says who can talk.
    struct Net {
        /// Server id of each machine, by index.
        ids: Vec<u64>,
        nodes: Vec<Election>,
        states: Vec<ServerState>,
        up: Vec<bool>,
        decided: Vec<Option<(ServerState, Vote)>>,
        now_ms: u64,
    }

    impl Net {
        fn new(n: u64) -> Net {
            Net::with_ids(&(1..=n).collect::<Vec<_>>())
        }

        /// Machine `i` has server id `ids[i]` (explicit `myid`s, any order).
        fn with_ids(ids: &[u64]) -> Net {
            let n = ids.len();
            Net {
                ids: ids.to_vec(),
                nodes: ids
                    .iter()
                    .map(|&id| Election::new(id, ids.to_vec()))
                    .collect(),
                states: vec![ServerState::Looking; n],
                up: vec![true; n],
                decided: vec![None; n],
                now_ms: 0,
            }
        }

        fn index(&self, id: u64) -> usize {
            self.ids.iter().position(|&i| i == id).expect("a server id")
        }

        fn start(&mut self, id: u64, zxid: Zxid, epoch: u32) {
            let i = self.index(id);
            self.states[i] = ServerState::Looking;
            self.decided[i] = None;
            let now = self.now_ms;
            self.nodes[i].start(
                now,
                Vote {
                    leader: id,
                    zxid,
                    peer_epoch: epoch,
                },
            );
        }

        /// Deliver every message and advance time until nothing is pending.
        fn run(&mut self, until_ms: u64) {
            while self.now_ms <= until_ms {
                let mut sends = Vec::new();
                for i in 0..self.nodes.len() {
                    for output in self.nodes[i].drain() {
                        match output {
                            Output::Send { to, notification } => sends.push((to, notification)),
                            Output::Decided { state, vote, .. } => {
                                self.states[i] = state;
                                self.decided[i] = Some((state, vote));
                            }
                        }
                    }
                }
                if sends.is_empty() {
                    self.now_ms += 10;
                    let now = self.now_ms;
                    for node in &mut self.nodes {
                        node.tick(now);
                    }
                    continue;
                }
                for (to, notification) in sends {
                    let (from_i, to_i) = (self.index(notification.sid), self.index(to));
                    if self.up[from_i] && self.up[to_i] {
                        let now = self.now_ms;
                        let state = self.states[to_i];
                        self.nodes[to_i].receive(now, notification, state);
                    }
                }
            }
        }
    }

    #[test]
    fn fresh_ensemble_elects_the_highest_server_id() {
        let mut net = Net::new(3);
        for id in 1..=3 {
            net.start(id, Zxid::ZERO, 0);
        }
        net.run(2_000);
        assert_eq!(net.decided[2].unwrap().0, ServerState::Leading);
        assert_eq!(
            net.decided[0].unwrap(),
            (ServerState::Following, vote(3, 0, 0, 0))
        );
        assert_eq!(net.decided[1].unwrap().1.leader, 3);
    }

    #[test]
    fn with_the_leader_gone_equal_zxids_elect_zk2_over_zk1() {
        // The report's election: zk3 is down, zk1 votes with the zxid it applied
        // (Z) although Z is not in its log; zk2 has the same Z.
        let z = Zxid::new(1, 3);
        let mut net = Net::new(3);
        net.up[2] = false;
        net.nodes[0].logical_clock = 1;
        net.nodes[1].logical_clock = 1;
        net.start(1, z, 1);
        net.start(2, z, 1);
        net.run(2_000);
        assert_eq!(
            net.decided[1].unwrap(),
            (ServerState::Leading, vote(2, 1, 3, 1))
        );
        assert_eq!(
            net.decided[0].unwrap(),
            (ServerState::Following, vote(2, 1, 3, 1))
        );
    }

    #[test]
    fn explicit_server_ids_decide_the_tie_not_the_node_order() {
        // zk1, zk2, zk3 with myids 2, 1, 3: a fresh ensemble elects zk3 (id 3);
        // with zk3 gone and zk1, zk2 tied on epoch and zxid, zk1 (id 2) wins.
        let mut net = Net::with_ids(&[2, 1, 3]);
        for id in [2, 1, 3] {
            net.start(id, Zxid::ZERO, 0);
        }
        net.run(2_000);
        assert_eq!(net.decided[2].unwrap().0, ServerState::Leading);
        let z = Zxid::new(1, 3);
        let mut net = Net::with_ids(&[2, 1, 3]);
        net.up[2] = false;
        net.start(2, z, 1);
        net.start(1, z, 1);
        net.run(2_000);
        assert_eq!(
            net.decided[0].unwrap(),
            (ServerState::Leading, vote(2, 1, 3, 1))
        );
        assert_eq!(net.decided[1].unwrap().1.leader, 2);
    }

    #[test]
    fn a_vote_with_the_durable_zxid_instead_would_elect_differently() {
        // Had zk1 voted with its last durable zxid (X < Z) while zk2 has X too, the
        // tie would still go to zk2; with zk1 ahead (Z) and zk2 behind (X), zk1 wins.
        let (x, z) = (Zxid::new(1, 2), Zxid::new(1, 3));
        let mut net = Net::new(3);
        net.up[2] = false;
        net.start(1, z, 1);
        net.start(2, x, 1);
        net.run(2_000);
        assert_eq!(net.decided[0].unwrap().0, ServerState::Leading);
        assert_eq!(net.decided[1].unwrap().1.leader, 1);
    }

    #[test]
    fn a_restarted_server_joins_the_established_leader() {
        let mut net = Net::new(3);
        for id in 1..=3 {
            net.start(id, Zxid::ZERO, 0);
        }
        net.run(2_000);
        // zk3 leads epoch 1; everyone reports epoch 1 after syncing.
        for node in &mut net.nodes {
            node.update_epoch(1);
        }
        // zk1 restarts with a fresh logical clock and a newer zxid than zk3's vote.
        net.nodes[0] = Election::new(1, vec![1, 2, 3]);
        net.start(1, Zxid::new(1, 5), 1);
        net.run(4_000);
        assert_eq!(net.decided[0].unwrap().0, ServerState::Following);
        assert_eq!(net.decided[0].unwrap().1.leader, 3);
        assert_eq!(net.states[2], ServerState::Leading);
    }

    #[test]
    fn a_lone_server_keeps_looking_and_backs_off() {
        let mut net = Net::new(3);
        net.up[1] = false;
        net.up[2] = false;
        net.start(1, Zxid::ZERO, 0);
        net.run(10_000);
        assert!(net.decided[0].is_none());
        assert_eq!(net.nodes[0].interval_ms, NOTIFICATION_INTERVAL_MS_MAX);
    }
}
