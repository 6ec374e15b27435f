//! Tests for the Raft core, driven by a small deterministic in-memory network
//! (no simulator): messages get a random delay (so they reorder), may be
//! dropped at random or by partitions, and time jumps from event to event.

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

/// What one node keeps across crashes, plus its live core.
struct Node {
    core: Option<RaftCore>,
    hard: HardState,
    log: Vec<Entry>,
    /// Every entry handed out as `Apply`; the state machine survives restarts.
    applied: Vec<Entry>,
    restarts: u64,
}

struct Envelope {
    from: NodeId,
    to: NodeId,
    msg: Message,
}

struct Net {
    nodes: Vec<Node>,
    config: Config,
    seed: u64,
    now_ms: u64,
    rng: ChaCha8Rng,
    seq: u64,
    /// Keyed by (delivery time, send order) so delivery is deterministic.
    in_flight: BTreeMap<(u64, u64), Envelope>,
    /// Directed links that drop everything.
    cut: BTreeSet<(NodeId, NodeId)>,
    drop_per_mille: u32,
    delay_max_ms: u64,
    /// Election safety: the one leader seen for each term.
    leaders_by_term: BTreeMap<u64, NodeId>,
}

impl Net {
    fn new(n: usize, seed: u64, config: Config) -> Net {
        let nodes = (0..n)
            .map(|_| Node {
                core: None,
                hard: HardState::default(),
                log: Vec::new(),
                applied: Vec::new(),
                restarts: 0,
            })
            .collect();
        let mut net = Net {
            nodes,
            config,
            seed,
            now_ms: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            seq: 0,
            in_flight: BTreeMap::new(),
            cut: BTreeSet::new(),
            drop_per_mille: 0,
            delay_max_ms: 5,
            leaders_by_term: BTreeMap::new(),
        };
        for i in 0..n {
            net.start(i);
        }
        net
    }

    /// (Re)starts node `i` from its durable state.
    fn start(&mut self, i: NodeId) {
        let n = self.nodes.len();
        let node = &mut self.nodes[i];
        let rng_seed = self.seed.wrapping_mul(1_000_003) + (i as u64) * 1_000 + node.restarts;
        let core = RaftCore::new(
            i,
            n,
            self.config.clone(),
            node.hard.clone(),
            node.log.clone(),
            node.applied.len() as u64,
            ChaCha8Rng::seed_from_u64(rng_seed),
            self.now_ms,
        );
        node.core = Some(core);
        node.restarts += 1;
    }

    fn crash(&mut self, i: NodeId) {
        self.nodes[i].core = None;
    }

    fn core(&self, i: NodeId) -> &RaftCore {
        self.nodes[i].core.as_ref().expect("node is up")
    }

    fn core_mut(&mut self, i: NodeId) -> &mut RaftCore {
        self.nodes[i].core.as_mut().expect("node is up")
    }

    fn up(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes.len()).filter(|&i| self.nodes[i].core.is_some())
    }

    /// Executes node `i`'s outputs the way a shell would, checking them as it goes.
    fn flush(&mut self, i: NodeId) {
        let outputs = self.core_mut(i).drain_outputs();
        for output in outputs {
            match output {
                Output::PersistHardState(hard) => self.nodes[i].hard = hard,
                Output::PersistLog {
                    truncate_from,
                    entries,
                } => {
                    let log = &mut self.nodes[i].log;
                    if let Some(from) = truncate_from {
                        log.truncate(from as usize - 1);
                    }
                    log.extend(entries);
                }
                Output::Send { to, msg } => self.enqueue(i, to, msg),
                Output::Apply(entry) => {
                    let applied = &mut self.nodes[i].applied;
                    assert_eq!(
                        entry.index,
                        applied.len() as u64 + 1,
                        "node {i} applied out of order"
                    );
                    applied.push(entry);
                }
                Output::RoleChanged { role, term, .. } => self.note_role(i, role, term),
            }
        }
        let core = self.core(i);
        assert_eq!(
            self.nodes[i].log,
            core.log(),
            "node {i}: persisted log differs"
        );
        assert_eq!(
            &self.nodes[i].hard,
            core.hard_state(),
            "node {i}: persisted hard state differs"
        );
    }

    fn note_role(&mut self, i: NodeId, role: Role, term: u64) {
        if role == Role::Leader {
            let first = *self.leaders_by_term.entry(term).or_insert(i);
            assert_eq!(first, i, "two leaders in term {term}");
        }
    }

    fn enqueue(&mut self, from: NodeId, to: NodeId, msg: Message) {
        let dropped = self.rng.random_range(0..1000) < self.drop_per_mille;
        if dropped || self.cut.contains(&(from, to)) {
            return;
        }
        let at_ms = self.now_ms + self.rng.random_range(1..=self.delay_max_ms);
        self.seq += 1;
        self.in_flight
            .insert((at_ms, self.seq), Envelope { from, to, msg });
    }

    fn next_event_ms(&self) -> u64 {
        let message_ms = self.in_flight.keys().next().map_or(u64::MAX, |k| k.0);
        let timer_ms = self
            .up()
            .map(|i| self.core(i).next_deadline_ms())
            .min()
            .unwrap_or(u64::MAX);
        message_ms.min(timer_ms)
    }

    /// Runs the next batch of events if it is due by `until_ms`.
    fn step(&mut self, until_ms: u64) -> bool {
        let next_ms = self.next_event_ms();
        if next_ms > until_ms {
            self.now_ms = self.now_ms.max(until_ms);
            return false;
        }
        self.now_ms = self.now_ms.max(next_ms);
        while let Some(entry) = self.in_flight.first_entry() {
            if entry.key().0 > self.now_ms {
                break;
            }
            let Envelope { from, to, msg } = entry.remove();
            // A partition also swallows what was already on the wire.
            if self.nodes[to].core.is_some() && !self.cut.contains(&(from, to)) {
                let now_ms = self.now_ms;
                self.core_mut(to).receive(now_ms, from, msg);
                self.flush(to);
            }
        }
        for i in self.up().collect::<Vec<_>>() {
            let now_ms = self.now_ms;
            if self.core(i).next_deadline_ms() <= now_ms {
                self.core_mut(i).tick(now_ms);
                self.flush(i);
                assert!(
                    self.core(i).next_deadline_ms() > now_ms,
                    "node {i}: tick left a due timer"
                );
            }
        }
        true
    }

    fn run_for(&mut self, duration_ms: u64) {
        let until_ms = self.now_ms + duration_ms;
        while self.step(until_ms) {}
    }

    /// Runs until `done` holds (checked after every step) or `limit_ms` passes.
    fn run_until(&mut self, limit_ms: u64, done: impl Fn(&Net) -> bool) -> bool {
        let until_ms = self.now_ms + limit_ms;
        loop {
            if done(self) {
                return true;
            }
            if !self.step(until_ms) {
                return done(self);
            }
        }
    }

    /// The live leader of the highest term, if any.
    fn leader(&self) -> Option<NodeId> {
        self.up()
            .filter(|&i| self.core(i).role() == Role::Leader)
            .max_by_key(|&i| self.core(i).term())
    }

    /// A leader that every live node agrees on.
    fn stable_leader(&self) -> Option<NodeId> {
        let leader = self.leader()?;
        let term = self.core(leader).term();
        let agreed = self
            .up()
            .all(|i| self.core(i).term() == term && self.core(i).leader() == Some(leader));
        agreed.then_some(leader)
    }

    fn wait_for_leader(&mut self) -> NodeId {
        if !self.run_until(10_000, |net| net.stable_leader().is_some()) {
            dump(self);
            panic!("no leader emerged (seed {})", self.seed);
        }
        self.stable_leader().expect("leader")
    }

    fn propose(&mut self, i: NodeId, command: &str) -> Result<u64, ProposeError> {
        let now_ms = self.now_ms;
        let result = self.core_mut(i).propose(now_ms, command.to_string());
        self.flush(i);
        result
    }

    fn transfer(&mut self, i: NodeId, to: NodeId) -> Result<(), TransferError> {
        let now_ms = self.now_ms;
        let result = self.core_mut(i).transfer_leadership(now_ms, to);
        self.flush(i);
        result
    }

    /// Cuts every link between different groups.
    fn partition(&mut self, groups: &[&[NodeId]]) {
        for (a, group_a) in groups.iter().enumerate() {
            for (b, group_b) in groups.iter().enumerate() {
                if a != b {
                    for &x in group_a.iter() {
                        for &y in group_b.iter() {
                            self.cut.insert((x, y));
                        }
                    }
                }
            }
        }
    }

    fn heal(&mut self) {
        self.cut.clear();
    }

    fn applied_commands(&self, i: NodeId) -> Vec<String> {
        self.nodes[i]
            .applied
            .iter()
            .filter_map(|e| sm_command(e).map(str::to_string))
            .collect()
    }

    fn applied_everywhere(&self, index: u64) -> bool {
        self.nodes.iter().all(|n| n.applied.len() as u64 >= index)
    }

    /// The first index at which two nodes applied different entries.
    fn applied_divergence(&self) -> Option<u64> {
        let longest = self
            .nodes
            .iter()
            .map(|n| n.applied.len())
            .max()
            .unwrap_or(0);
        (0..longest).find_map(|k| {
            let mut seen = self.nodes.iter().filter_map(|n| n.applied.get(k));
            let first = seen.next()?;
            seen.any(|e| e != first).then_some(k as u64 + 1)
        })
    }

    fn assert_logs_agree(&self) {
        let reference = self.core(0).log();
        for i in self.up() {
            assert_eq!(
                self.core(i).log(),
                reference,
                "node {i} log differs from node 0"
            );
        }
    }
}

fn sm_command(entry: &Entry) -> Option<&str> {
    match &entry.body {
        EntryBody::Sm(command) => Some(command),
        EntryBody::Conf | EntryBody::Meta { .. } => None,
    }
}

fn log_contains(log: &[Entry], command: &str) -> bool {
    log.iter().any(|e| sm_command(e) == Some(command))
}

fn lone_core(id: NodeId, hard: HardState, log: Vec<Entry>) -> RaftCore {
    RaftCore::new(
        id,
        3,
        Config::default(),
        hard,
        log,
        0,
        ChaCha8Rng::seed_from_u64(7),
        0,
    )
}

fn sends(outputs: &[Output]) -> Vec<(NodeId, Message)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send { to, msg } => Some((*to, msg.clone())),
            Output::PersistHardState(_)
            | Output::PersistLog { .. }
            | Output::Apply(_)
            | Output::RoleChanged { .. } => None,
        })
        .collect()
}

// ----- elections -----

#[test]
fn elects_a_single_leader_in_three_nodes() {
    let mut net = Net::new(3, 1, Config::default());
    let leader = net.wait_for_leader();
    net.run_for(2_000);
    assert_eq!(
        net.stable_leader(),
        Some(leader),
        "a healthy leader keeps its term"
    );
    let leaders: Vec<_> = net
        .up()
        .filter(|&i| net.core(i).role() == Role::Leader)
        .collect();
    assert_eq!(leaders, vec![leader]);
    assert_eq!(
        net.leaders_by_term.len(),
        1,
        "no extra elections on a healthy network"
    );
}

#[test]
fn single_node_cluster_leads_and_commits_alone() {
    let config = Config::default();
    let mut core = RaftCore::new(
        0,
        1,
        config,
        HardState::default(),
        vec![],
        0,
        ChaCha8Rng::seed_from_u64(3),
        0,
    );
    let deadline_ms = core.next_deadline_ms();
    core.tick(deadline_ms);
    assert_eq!(core.role(), Role::Leader);
    let index = core
        .propose(deadline_ms, "x".into())
        .expect("leader accepts");
    assert_eq!(core.commit_index(), core.last_index());
    assert_eq!(core.applied_index(), core.last_index());
    assert_eq!(
        core.entry(index).map(|e| &e.body),
        Some(&EntryBody::Sm("x".into()))
    );
}

#[test]
fn candidate_persists_its_vote_before_requesting_votes() {
    let mut core = lone_core(0, HardState::default(), vec![]);
    let deadline_ms = core.next_deadline_ms();
    assert!(
        (150..=300).contains(&deadline_ms),
        "timeout drawn from [min, max]"
    );
    core.tick(deadline_ms);
    let outputs = core.drain_outputs();
    let first_send = outputs
        .iter()
        .position(|o| matches!(o, Output::Send { .. }))
        .expect("sends");
    let persist = outputs
        .iter()
        .position(|o| matches!(o, Output::PersistHardState(_)))
        .expect("persists");
    assert!(persist < first_send);
    assert_eq!(
        core.hard_state(),
        &HardState {
            term: 1,
            voted_for: Some(0)
        }
    );
    assert_eq!(sends(&outputs).len(), 2, "one RequestVote per peer");
}

#[test]
fn restart_from_persisted_state_never_votes_twice_in_a_term() {
    let mut core = lone_core(0, HardState::default(), vec![]);
    let vote = |term| Message::RequestVote {
        term,
        last_log_index: 0,
        last_log_term: 0,
        transfer: false,
    };
    core.receive(10, 1, vote(5));
    let outputs = core.drain_outputs();
    let persisted = outputs.iter().rev().find_map(|o| match o {
        Output::PersistHardState(hard) => Some(hard.clone()),
        Output::PersistLog { .. }
        | Output::Send { .. }
        | Output::Apply(_)
        | Output::RoleChanged { .. } => None,
    });
    assert_eq!(
        persisted,
        Some(HardState {
            term: 5,
            voted_for: Some(1)
        })
    );
    assert_eq!(
        sends(&outputs),
        vec![(
            1,
            Message::VoteResponse {
                term: 5,
                granted: true
            }
        )]
    );

    // Restart from what was persisted: node 2 asks in the same term.
    let mut restarted = lone_core(0, core.hard_state().clone(), core.log().to_vec());
    restarted.receive(20, 2, vote(5));
    let outputs = restarted.drain_outputs();
    assert_eq!(
        sends(&outputs),
        vec![(
            2,
            Message::VoteResponse {
                term: 5,
                granted: false
            }
        )]
    );
    restarted.receive(21, 1, vote(5));
    let outputs = restarted.drain_outputs();
    assert_eq!(
        sends(&outputs),
        vec![(
            1,
            Message::VoteResponse {
                term: 5,
                granted: true
            }
        )],
        "retry is fine"
    );
}

#[test]
fn vote_requires_an_up_to_date_log() {
    let log = vec![Entry {
        term: 2,
        index: 1,
        body: EntryBody::Conf,
    }];
    let mut core = lone_core(
        0,
        HardState {
            term: 2,
            voted_for: None,
        },
        log,
    );
    let stale = Message::RequestVote {
        term: 3,
        last_log_index: 5,
        last_log_term: 1,
        transfer: false,
    };
    core.receive(1, 1, stale);
    let outputs = core.drain_outputs();
    assert_eq!(
        sends(&outputs),
        vec![(
            1,
            Message::VoteResponse {
                term: 3,
                granted: false
            }
        )]
    );
    assert_eq!(
        core.term(),
        3,
        "the higher term is adopted even when the vote is refused"
    );
}

#[test]
fn sticky_follower_ignores_ordinary_vote_requests_but_not_transfers() {
    let mut core = lone_core(0, HardState::default(), vec![]);
    let heartbeat = Message::AppendEntries {
        term: 1,
        prev_index: 0,
        prev_term: 0,
        entries: vec![],
        leader_commit: 0,
    };
    core.receive(100, 1, heartbeat);
    core.drain_outputs();
    let vote = |transfer| Message::RequestVote {
        term: 2,
        last_log_index: 9,
        last_log_term: 1,
        transfer,
    };
    core.receive(120, 2, vote(false));
    assert!(
        core.drain_outputs().is_empty(),
        "disruptive request ignored"
    );
    assert_eq!((core.term(), core.leader()), (1, Some(1)));
    core.receive(121, 2, vote(true));
    let outputs = core.drain_outputs();
    assert_eq!(
        sends(&outputs),
        vec![(
            2,
            Message::VoteResponse {
                term: 2,
                granted: true
            }
        )]
    );
    // Once the leader has been silent for election_timeout_ms_min, requests count again.
    let mut quiet = lone_core(0, HardState::default(), vec![]);
    let heartbeat = Message::AppendEntries {
        term: 1,
        prev_index: 0,
        prev_term: 0,
        entries: vec![],
        leader_commit: 0,
    };
    quiet.receive(100, 1, heartbeat);
    quiet.receive(100 + 150, 2, vote(false));
    assert_eq!(quiet.term(), 2);
}

// ----- replication -----

#[test]
fn replicates_commits_and_applies_in_order_everywhere() {
    let mut net = Net::new(3, 2, Config::default());
    let leader = net.wait_for_leader();
    let commands: Vec<String> = (0..20).map(|k| format!("op-{k}")).collect();
    let mut last = 0;
    for command in &commands {
        last = net.propose(leader, command).expect("leader accepts");
        net.run_for(3);
    }
    assert!(
        net.run_until(5_000, |net| net.applied_everywhere(last)),
        "all nodes apply"
    );
    net.run_for(500);
    for i in 0..3 {
        assert_eq!(
            net.applied_commands(i),
            commands,
            "node {i} applied in proposal order"
        );
        assert_eq!(net.core(i).commit_index(), net.core(i).last_index());
    }
    assert_eq!(net.applied_divergence(), None);
    net.assert_logs_agree();
}

#[test]
fn replication_survives_message_loss_and_large_backlogs() {
    let config = Config {
        entries_per_append_max: 4,
        ..Config::default()
    };
    let mut net = Net::new(5, 3, config);
    let leader = net.wait_for_leader();
    net.drop_per_mille = 200;
    let mut last = 0;
    for k in 0..100 {
        if net.core(leader).role() != Role::Leader {
            break;
        }
        last = net
            .propose(leader, &format!("op-{k}"))
            .expect("leader accepts");
    }
    net.drop_per_mille = 0;
    assert!(net.run_until(10_000, |net| net.applied_everywhere(last)));
    assert_eq!(net.applied_divergence(), None);
}

#[test]
fn stale_and_reordered_appends_do_not_truncate_matching_entries() {
    let mut core = lone_core(0, HardState::default(), vec![]);
    let sm = |index| Entry {
        term: 1,
        index,
        body: EntryBody::Sm(format!("e{index}")),
    };
    let append = |prev_index, entries: Vec<Entry>, leader_commit| Message::AppendEntries {
        term: 1,
        prev_index,
        prev_term: if prev_index == 0 { 0 } else { 1 },
        entries,
        leader_commit,
    };
    core.receive(1, 1, append(0, vec![sm(1), sm(2), sm(3)], 0));
    core.drain_outputs();
    core.receive(2, 1, append(0, vec![sm(1)], 3)); // delayed duplicate of an older send
    let outputs = core.drain_outputs();
    assert!(
        !outputs
            .iter()
            .any(|o| matches!(o, Output::PersistLog { .. })),
        "nothing to persist"
    );
    assert_eq!(core.last_index(), 3);
    assert_eq!(
        core.commit_index(),
        1,
        "commit only up to what the message vouches for"
    );
    assert_eq!(
        sends(&outputs),
        vec![(
            1,
            Message::AppendResponse {
                term: 1,
                success: true,
                match_index: 1
            }
        )]
    );
    // A gap is refused with a hint at the follower's end.
    core.receive(3, 1, append(7, vec![], 3));
    let outputs = core.drain_outputs();
    assert_eq!(
        sends(&outputs),
        vec![(
            1,
            Message::AppendResponse {
                term: 1,
                success: false,
                match_index: 3
            }
        )]
    );
}

#[test]
fn follower_truncates_a_conflicting_suffix() {
    let old = |index| Entry {
        term: 1,
        index,
        body: EntryBody::Sm(format!("old{index}")),
    };
    let mut core = lone_core(
        0,
        HardState {
            term: 1,
            voted_for: None,
        },
        vec![old(1), old(2), old(3)],
    );
    let new = Entry {
        term: 2,
        index: 2,
        body: EntryBody::Conf,
    };
    let append = Message::AppendEntries {
        term: 2,
        prev_index: 1,
        prev_term: 1,
        entries: vec![new.clone()],
        leader_commit: 2,
    };
    core.receive(5, 1, append);
    let outputs = core.drain_outputs();
    let persist = Output::PersistLog {
        truncate_from: Some(2),
        entries: vec![new.clone()],
    };
    let persist_at = outputs
        .iter()
        .position(|o| *o == persist)
        .expect("truncating persist");
    let send_at = outputs
        .iter()
        .position(|o| matches!(o, Output::Send { .. }))
        .expect("response");
    assert!(persist_at < send_at, "persist before acknowledging");
    assert_eq!(core.log(), &[old(1), new]);
    assert_eq!(core.commit_index(), 2);
}

#[test]
fn minority_leader_cannot_commit_and_its_suffix_is_truncated_after_heal() {
    let mut net = Net::new(5, 4, Config::default());
    let old = net.wait_for_leader();
    let old_term = net.core(old).term();
    let buddy = (old + 1) % 5;
    let majority: Vec<NodeId> = (0..5).filter(|&i| i != old && i != buddy).collect();
    net.partition(&[&[old, buddy], &majority]);
    let lost = net
        .propose(old, "lost")
        .expect("still leader right after the cut");
    net.run_for(100);
    assert!(
        log_contains(net.core(buddy).log(), "lost"),
        "the minority follower holds it"
    );
    assert!(net.core(old).commit_index() < lost, "no quorum, no commit");

    let new = net.run_until(5_000, |net| {
        majority.iter().any(|&i| net.core(i).role() == Role::Leader)
    });
    assert!(new);
    let new = net.leader().expect("majority leader");
    assert!(majority.contains(&new) && net.core(new).term() > old_term);
    let kept = net.propose(new, "kept").expect("new leader accepts");
    assert!(net.run_until(2_000, |net| majority
        .iter()
        .all(|&i| net.core(i).applied_index() >= kept)));
    let demoted = net.run_until(1_000, |net| net.core(old).role() == Role::Follower);
    assert!(demoted, "check_quorum demotes the cut-off leader");

    net.heal();
    assert!(net.run_until(5_000, |net| net
        .applied_everywhere(net.core(new).commit_index())));
    net.run_for(500);
    net.assert_logs_agree();
    for i in 0..5 {
        assert!(
            !log_contains(net.core(i).log(), "lost"),
            "node {i} kept the uncommitted entry"
        );
        assert!(!net.applied_commands(i).contains(&"lost".to_string()));
        assert!(net.applied_commands(i).contains(&"kept".to_string()));
    }
    assert_eq!(net.applied_divergence(), None);
}

#[test]
fn restarted_cluster_recovers_its_log_without_reapplying() {
    let mut net = Net::new(3, 5, Config::default());
    let leader = net.wait_for_leader();
    let first = net.propose(leader, "before").expect("leader accepts");
    assert!(net.run_until(2_000, |net| net.applied_everywhere(first)));
    for i in 0..3 {
        net.crash(i);
    }
    net.in_flight.clear();
    net.run_for(1_000);
    for i in 0..3 {
        net.start(i);
        assert_eq!(
            net.core(i).applied_index(),
            net.nodes[i].applied.len() as u64
        );
    }
    let leader = net.wait_for_leader();
    let second = net.propose(leader, "after").expect("leader accepts");
    assert!(net.run_until(2_000, |net| net.applied_everywhere(second)));
    for i in 0..3 {
        assert_eq!(
            net.applied_commands(i),
            vec!["before", "after"],
            "node {i}: each command applied once"
        );
    }
    assert_eq!(net.applied_divergence(), None);
}

// ----- Conf and Meta entries -----

#[test]
fn conf_opens_each_term_and_meta_follows_commits_without_looping() {
    let mut net = Net::new(3, 6, Config::default());
    let leader = net.wait_for_leader();
    net.run_for(1_000);
    let term = net.core(leader).term();
    assert_eq!(net.core(leader).startup_index(), Some(1));
    let expected = vec![
        Entry {
            term,
            index: 1,
            body: EntryBody::Conf,
        },
        Entry {
            term,
            index: 2,
            body: EntryBody::Meta { commit: 1 },
        },
    ];
    assert_eq!(
        net.core(leader).log(),
        expected.as_slice(),
        "fresh leader ends Conf, Meta"
    );

    let index = net.propose(leader, "x").expect("leader accepts");
    net.run_for(2_000);
    let log = net.core(leader).log();
    assert_eq!(log.len(), 4, "exactly one Meta per client commit");
    assert_eq!(log[3].body, EntryBody::Meta { commit: index });
    net.assert_logs_agree();

    // A transfer starts a new term, which opens with its own Conf.
    let target = (leader + 1) % 3;
    net.transfer(leader, target).expect("transfer starts");
    assert!(net.run_until(2_000, |net| net.stable_leader() == Some(target)));
    net.run_for(1_000);
    let startup = net.core(target).startup_index().expect("leader");
    assert_eq!(startup, 5);
    let log = net.core(target).log();
    assert_eq!(log[4].body, EntryBody::Conf);
    assert_eq!(log[5].body, EntryBody::Meta { commit: 5 });
    assert_eq!(log.len(), 6);
}

/// Raft §5.4.2 (Figure 8): a majority holding an older-term entry is not
/// enough; it commits only once an entry of the leader's own term is on a majority.
#[test]
fn leader_commits_older_terms_only_through_its_own_entry() {
    let old = |term, index| Entry {
        term,
        index,
        body: EntryBody::Sm(format!("t{term}")),
    };
    let mut core = lone_core(
        0,
        HardState {
            term: 2,
            voted_for: None,
        },
        vec![old(1, 1), old(2, 2)],
    );
    let deadline_ms = core.next_deadline_ms();
    core.tick(deadline_ms);
    core.receive(
        deadline_ms + 1,
        1,
        Message::VoteResponse {
            term: 3,
            granted: true,
        },
    );
    assert_eq!(core.role(), Role::Leader);
    assert_eq!(core.startup_index(), Some(3));
    let ack = |match_index| Message::AppendResponse {
        term: 3,
        success: true,
        match_index,
    };
    core.receive(deadline_ms + 2, 1, ack(2));
    assert_eq!(
        core.commit_index(),
        0,
        "index 2 is on a majority but from term 2"
    );
    core.receive(deadline_ms + 3, 1, ack(3));
    assert_eq!(core.commit_index(), 3);
    let applied: Vec<u64> = core
        .drain_outputs()
        .iter()
        .filter_map(|o| match o {
            Output::Apply(e) => Some(e.index),
            Output::PersistHardState(_)
            | Output::PersistLog { .. }
            | Output::Send { .. }
            | Output::RoleChanged { .. } => None,
        })
        .collect();
    assert_eq!(applied, vec![1, 2, 3]);
    assert_eq!(
        core.entry(4).map(|e| &e.body),
        Some(&EntryBody::Meta { commit: 3 })
    );
}

#[test]
fn without_metadata_entries_only_conf_and_commands_are_logged() {
    let config = Config {
        metadata_entries: false,
        ..Config::default()
    };
    let mut net = Net::new(3, 7, config);
    let leader = net.wait_for_leader();
    net.propose(leader, "x").expect("leader accepts");
    net.run_for(1_000);
    let bodies: Vec<_> = net
        .core(leader)
        .log()
        .iter()
        .map(|e| e.body.clone())
        .collect();
    assert_eq!(bodies, vec![EntryBody::Conf, EntryBody::Sm("x".into())]);
    assert!(net.applied_everywhere(2));
}

// ----- proposals and transfers -----

#[test]
fn proposals_rejected_on_followers_and_during_transfer() {
    let mut net = Net::new(3, 8, Config::default());
    let leader = net.wait_for_leader();
    let follower = (leader + 1) % 3;
    let other = (leader + 2) % 3;
    let rejected = net.propose(follower, "nope");
    assert_eq!(
        rejected,
        Err(ProposeError::NotLeader {
            leader: Some(leader)
        })
    );
    assert_eq!(net.transfer(follower, other), Err(TransferError::NotLeader));
    assert_eq!(net.transfer(leader, leader), Err(TransferError::SelfTarget));
    assert_eq!(net.transfer(leader, 3), Err(TransferError::UnknownTarget));

    // Cut the target off so the transfer cannot finish.
    net.partition(&[&[follower], &[leader, other]]);
    net.transfer(leader, follower).expect("transfer starts");
    assert_eq!(net.core(leader).transfer_target(), Some(follower));
    assert_eq!(
        net.propose(leader, "nope"),
        Err(ProposeError::TransferInProgress)
    );
    assert_eq!(
        net.transfer(leader, other),
        Err(TransferError::AlreadyInProgress)
    );

    net.run_for(net.config.transfer_timeout_ms + 10);
    assert_eq!(net.core(leader).role(), Role::Leader);
    assert_eq!(
        net.core(leader).transfer_target(),
        None,
        "abandoned after the timeout"
    );
    let index = net.propose(leader, "yes").expect("proposals resume");
    net.run_for(50);
    net.heal();
    assert!(net.run_until(2_000, |net| net.applied_everywhere(index)));
}

#[test]
fn leadership_transfer_moves_to_a_lagging_target_in_the_next_term() {
    let mut net = Net::new(3, 9, Config::default());
    let leader = net.wait_for_leader();
    let target = (leader + 1) % 3;
    let other = (leader + 2) % 3;
    // Let the target fall behind first, so the transfer has to catch it up.
    net.partition(&[&[target], &[leader, other]]);
    let mut last = 0;
    for k in 0..10 {
        last = net
            .propose(leader, &format!("op-{k}"))
            .expect("leader accepts");
    }
    net.run_for(20); // shorter than any election timeout: the target stays a follower
    net.heal();
    assert!(net.core(target).last_index() < last);
    let old_term = net.core(leader).term();
    net.transfer(leader, target).expect("transfer starts");
    assert!(net.run_until(2_000, |net| net.stable_leader() == Some(target)));
    assert_eq!(net.core(target).term(), old_term + 1);
    assert_eq!(net.core(leader).role(), Role::Follower);
    assert_eq!(net.core(leader).transfer_target(), None);
    let index = net
        .propose(target, "after-transfer")
        .expect("new leader accepts");
    assert!(net.run_until(2_000, |net| net.applied_everywhere(index)));
    assert_eq!(net.applied_divergence(), None);
}

#[test]
fn check_quorum_demotes_an_isolated_leader_in_the_same_term() {
    let mut net = Net::new(3, 10, Config::default());
    let leader = net.wait_for_leader();
    let term = net.core(leader).term();
    let others: Vec<NodeId> = (0..3).filter(|&i| i != leader).collect();
    net.partition(&[&[leader], &others]);
    let max_ms = net.config.election_timeout_ms_max;
    assert!(net.run_until(max_ms + 10, |net| net.core(leader).role() != Role::Leader));
    assert_eq!(net.core(leader).role(), Role::Follower);
    assert_eq!(net.core(leader).leader(), None);
    assert_eq!(
        net.core(leader).term(),
        term,
        "stepping down does not bump the term"
    );
}

// ----- the canary defect -----

#[test]
fn canary_lets_a_minority_leader_apply_an_entry_the_majority_overwrites() {
    let config = Config {
        bug_commit_without_quorum: true,
        check_quorum: false,
        ..Config::default()
    };
    let mut net = Net::new(3, 11, config);
    let old = net.wait_for_leader();
    let majority: Vec<NodeId> = (0..3).filter(|&i| i != old).collect();
    net.partition(&[&[old], &majority]);
    let ghost = net.propose(old, "ghost").expect("leader accepts");
    assert!(
        net.applied_commands(old).contains(&"ghost".to_string()),
        "applied with no quorum"
    );

    assert!(net.run_until(5_000, |net| majority
        .iter()
        .any(|&i| net.core(i).role() == Role::Leader)));
    let new = majority
        .iter()
        .copied()
        .find(|&i| net.core(i).role() == Role::Leader)
        .expect("leader");
    let real = net.propose(new, "real").expect("new leader accepts");
    net.run_for(500);
    net.heal();
    assert!(net.run_until(5_000, |net| net.stable_leader() == Some(new)));
    net.run_for(1_000);
    net.assert_logs_agree();
    assert!(
        !log_contains(net.core(old).log(), "ghost"),
        "the majority overwrote it"
    );
    assert!(net.applied_commands(old).contains(&"ghost".to_string()));
    assert!(!net.applied_commands(new).contains(&"ghost".to_string()));
    assert!(
        net.applied_commands(old).contains(&"real".to_string()),
        "later entries still flow"
    );
    assert!(real > ghost);
    assert_eq!(
        net.applied_divergence(),
        Some(ghost),
        "the state machines diverged at the ghost"
    );
}

// ----- property: election safety and state-machine safety -----

/// Varies the knobs that change code paths, keeping timeouts sane.
fn chaos_config(chaos: &mut ChaCha8Rng) -> Config {
    let election_timeout_ms_min = chaos.random_range(100..=200);
    Config {
        election_timeout_ms_min,
        election_timeout_ms_max: election_timeout_ms_min + chaos.random_range(50..=150),
        heartbeat_ms: chaos.random_range(20..=50),
        entries_per_append_max: chaos.random_range(1..=8),
        metadata_entries: chaos.random_bool(0.7),
        check_quorum: chaos.random_bool(0.7),
        transfer_timeout_ms: chaos.random_range(200..=1_000),
        bug_commit_without_quorum: false,
    }
}

/// One random run: drops, shifting partitions, crashes and proposals; then heal
/// and check the cluster converges.
fn chaos_run(seed: u64) {
    let n = [3, 5][seed as usize % 2];
    let mut chaos = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut net = Net::new(n, seed, chaos_config(&mut chaos));
    net.drop_per_mille = chaos.random_range(0..300);
    net.delay_max_ms = chaos.random_range(1..=40);
    let mut proposed = 0u64;
    for round in 0..40 {
        match chaos.random_range(0..10) {
            0..=2 => net.heal(),
            3..=5 => {
                let split = chaos.random_range(1..n);
                let mut ids: Vec<NodeId> = (0..n).collect();
                ids.rotate_left(chaos.random_range(0..n));
                net.heal();
                net.partition(&[&ids[..split], &ids[split..]]);
            }
            6 => {
                let victim = chaos.random_range(0..n);
                if net.nodes[victim].core.is_some() {
                    net.crash(victim);
                }
            }
            _ => {}
        }
        if chaos.random_bool(0.3) {
            for i in 0..n {
                if net.nodes[i].core.is_none() {
                    net.start(i);
                }
            }
        }
        if let Some(leader) = net.leader() {
            if net.propose(leader, &format!("s{seed}-r{round}")).is_ok() {
                proposed += 1;
            }
        }
        if chaos.random_bool(0.05) {
            if let Some(leader) = net.leader() {
                let _ = net.transfer(leader, chaos.random_range(0..n));
            }
        }
        let pause_ms = chaos.random_range(10..200);
        net.run_for(pause_ms);
        assert_eq!(
            net.applied_divergence(),
            None,
            "seed {seed}: state machines diverged"
        );
    }
    settle(&mut net, seed, proposed);
}

/// After the chaos: everyone up, no loss, and a final command must reach
/// every state machine. A final command can itself be lost to a leader change
/// (a restarted node may still disrupt the term), so it is retried.
fn settle(net: &mut Net, seed: u64, proposed: u64) {
    net.heal();
    net.drop_per_mille = 0;
    for i in 0..net.nodes.len() {
        if net.nodes[i].core.is_none() {
            net.start(i);
        }
    }
    let mut attempts = 0;
    let converged = loop {
        attempts += 1;
        if attempts > 20 {
            break false;
        }
        let leader = net.wait_for_leader();
        let command = format!("final-{attempts}");
        let Ok(index) = net.propose(leader, &command) else {
            net.run_for(500); // a transfer is still pending
            continue;
        };
        let everywhere = |net: &Net| {
            let slot = index as usize - 1;
            net.nodes
                .iter()
                .all(|n| n.applied.get(slot).and_then(sm_command) == Some(command.as_str()))
        };
        if net.run_until(3_000, everywhere) {
            break true;
        }
    };
    if !converged {
        dump(net);
        panic!("seed {seed}: did not converge");
    }
    assert_eq!(
        net.applied_divergence(),
        None,
        "seed {seed}: state machines diverged"
    );
    net.run_for(1_000);
    net.assert_logs_agree();
    let applied = net.applied_commands(0).len() as u64;
    assert!(
        applied <= proposed + attempts,
        "seed {seed}: more commands applied than proposed"
    );
}

fn dump(net: &Net) {
    for (i, node) in net.nodes.iter().enumerate() {
        let Some(core) = &node.core else { continue };
        eprintln!(
            "node {i}: {:?} term {} leader {:?} commit {} last {} applied {} deadline {} now {}",
            core.role(),
            core.term(),
            core.leader(),
            core.commit_index(),
            core.last_index(),
            node.applied.len(),
            core.next_deadline_ms(),
            net.now_ms
        );
    }
}

#[test]
fn election_and_state_machine_safety_across_200_random_seeds() {
    for seed in 0..200 {
        chaos_run(seed);
    }
}
