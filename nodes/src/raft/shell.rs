//! The async shell around [`RaftCore`]: datagrams on the simulated network, the
//! durable log and hard state on the simulated disk, timers in simulated time.
//!
//! The shell persists before it sends (the core orders its outputs so), and hands
//! committed entries and role changes to the state machine through a channel, so
//! the state machine applies at its own pace (the OM's apply path has its own
//! tasks and may stop applying altogether when it terminates).
//!
//! It also tells the run's Raft oracle (`faultline_api::kit::raft`, shared by
//! the run's nodes) what the node holds durably, what it saw committed, what it
//! committed as leader and when it became leader; the oracle checks Raft's
//! safety properties at the moment they could break ([`invariants`]).

use super::{
    Config, Entry, HardState, Message, Output, ProposeError, RaftCore, Role, TransferError,
};
use faultline_api::kit::raft::{self as oracle, RaftEvent as Observed};
use faultline_api::kit::RaftOracle;
use faultline_api::{Disk, InvariantInfo, Net, NodeCtx, NodeEvent, NodeHandle, Probes, RecordLog};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

const HARD_STATE_FILE: &str = "raft.hard";
const LOG_FILE: &str = "raft.log";

/// The run's oracle: an entry's id is its term.
type Oracle = RefCell<RaftOracle<u64>>;

/// The oracle invariants this shell feeds events for (election, durable log,
/// applies, leader commits; no snapshots or membership changes).
const FED: [&str; 4] = [
    oracle::ELECTION_SAFETY,
    oracle::COMMITTED_ON_QUORUM,
    oracle::COMMITTED_AGREE,
    oracle::LEADER_COMPLETENESS,
];

/// Their declarations, for a model on this Raft (its `ModelInfo` lists them
/// beside its own; its `check` passes them, as a violation is reported by the
/// node that sees it).
pub fn invariants() -> Vec<InvariantInfo> {
    oracle::declare(&FED)
}

/// Whether `invariant` is one the oracle checks here ([`invariants`]).
pub fn oracle_checks(invariant: &str) -> bool {
    FED.contains(&invariant)
}

/// What the state machine hears from Raft, in order.
#[derive(Clone, Debug)]
pub enum RaftEvent {
    /// A committed entry (state-machine, configuration or metadata).
    Apply(Entry),
    /// This node's role, term or known leader changed.
    Role {
        role: Role,
        term: u64,
        leader: Option<String>,
    },
    /// The durable log changed (appended or truncated): the state machine
    /// publishes, so that what the harness sees of the log is never stale.
    LogChanged { last_index: u64 },
}

/// A handle to this node's Raft server. Cheap to clone.
#[derive(Clone)]
pub struct Raft {
    inner: Rc<Inner>,
}

struct Inner {
    core: RefCell<RaftCore>,
    /// The log exactly as persisted, to rewrite it after a truncation.
    persisted: RefCell<Vec<Entry>>,
    peers: Vec<String>,
    net: Net,
    disk: Disk,
    log: RecordLog,
    events: UnboundedSender<RaftEvent>,
    kick: Notify,
    node: NodeHandle,
    probes: Probes,
    id: u64,
    oracle: std::rc::Rc<Oracle>,
    /// The highest index this node has told the oracle it committed as leader.
    leader_committed: Cell<u64>,
}

impl Raft {
    /// Load the durable log and hard state, start the driver task, and return the
    /// handle plus the event stream. `peers` lists every member (this node too) in
    /// canonical order; `applied` is what the state machine has durably applied.
    pub async fn start(
        ctx: &NodeCtx,
        config: Config,
        peers: Vec<String>,
        port: u16,
        applied: u64,
    ) -> std::io::Result<(Raft, UnboundedReceiver<RaftEvent>)> {
        let me = ctx.name().to_string();
        let id = peers
            .iter()
            .position(|p| *p == me)
            .expect("this node is a member");
        let disk = ctx.disk().clone();
        let hard = match disk.read(HARD_STATE_FILE)? {
            Some(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
            None => HardState::default(),
        };
        let log = RecordLog::new(&disk, LOG_FILE);
        let entries = load_log(&log)?;
        let seed = ctx.rng_seed_for("raft");
        let now = ctx.now_ms();
        let core = RaftCore::new(
            id,
            peers.len(),
            config,
            hard,
            entries.clone(),
            applied,
            seed,
            now,
        );
        let net = Net::bind(ctx, port).await?;
        let (tx, rx) = unbounded_channel();
        let commit = core.commit_index();
        let raft = Raft {
            inner: Rc::new(Inner {
                core: RefCell::new(core),
                persisted: RefCell::new(entries),
                peers,
                net,
                disk,
                log,
                events: tx,
                kick: Notify::new(),
                node: ctx.handle(),
                probes: ctx.probes(),
                id: id as u64,
                oracle: ctx.shared::<Oracle>(),
                leader_committed: Cell::new(commit),
            }),
        };
        // What survived on disk is all this node holds now.
        raft.observe(Observed::Truncated {
            node: id as u64,
            after: None,
        });
        raft.observe(Observed::Flushed {
            node: id as u64,
            entries: raft.durable(1),
        });
        let driver = raft.clone();
        tokio::task::spawn_local(async move { driver.drive().await });
        Ok((raft, rx))
    }

    async fn drive(&self) {
        let mut buffer = Net::buffer();
        loop {
            let now = self.now_ms();
            let due = self.inner.core.borrow().next_deadline_ms();
            let wait = Duration::from_millis(due.saturating_sub(now));
            tokio::select! {
                biased;
                received = self.inner.net.recv::<Message>(&mut buffer) => {
                    let Ok((from, message)) = received else { continue };
                    let Some(from) = self.inner.peers.iter().position(|p| *p == from) else { continue };
                    self.inner.core.borrow_mut().receive(self.now_ms(), from, message);
                }
                _ = self.inner.kick.notified() => {}
                _ = tokio::time::sleep(wait) => {
                    self.inner.core.borrow_mut().tick(self.now_ms());
                }
            }
            self.flush();
        }
    }

    fn now_ms(&self) -> u64 {
        self.inner.node.now_ms()
    }

    /// Report the core's probe hits, then execute its outputs in order: persist,
    /// then send, apply, announce.
    fn flush(&self) {
        let probes = self.inner.core.borrow_mut().drain_probes();
        for probe in probes {
            self.inner.probes.hit(probe);
        }
        let outputs = self.inner.core.borrow_mut().drain_outputs();
        for output in outputs {
            match output {
                Output::PersistHardState(hard) => {
                    let bytes = serde_json::to_vec(&hard).expect("serializes");
                    self.inner
                        .disk
                        .write_atomic(HARD_STATE_FILE, &bytes)
                        .expect("simulated disk write");
                }
                Output::PersistLog {
                    truncate_from,
                    entries,
                } => {
                    let first = truncate_from.or(entries.first().map(|e| e.index));
                    self.persist_log(truncate_from, entries);
                    if let Some(from) = truncate_from {
                        self.observe(Observed::Truncated {
                            node: self.inner.id,
                            after: from.checked_sub(1).filter(|a| *a > 0),
                        });
                    }
                    if let Some(first) = first {
                        self.observe(Observed::Flushed {
                            node: self.inner.id,
                            entries: self.durable(first),
                        });
                    }
                    let last_index = self.inner.persisted.borrow().len() as u64;
                    let _ = self.inner.events.send(RaftEvent::LogChanged { last_index });
                }
                Output::Send { to, msg } => {
                    let kind = message_kind(&msg);
                    self.inner.net.send(&self.inner.peers[to], kind, &msg);
                }
                Output::Apply(entry) => {
                    self.observe(Observed::Committed {
                        node: self.inner.id,
                        entries: vec![(entry.index, entry.term)],
                    });
                    let _ = self.inner.events.send(RaftEvent::Apply(entry));
                }
                Output::RoleChanged { role, term, leader } => {
                    if role == Role::Leader {
                        let log: BTreeMap<u64, u64> = self.durable(1).into_iter().collect();
                        self.observe(Observed::Leader {
                            node: self.inner.id,
                            term,
                            log: &log,
                            covered: None,
                        });
                    }
                    let leader = leader.map(|l| self.inner.peers[l].clone());
                    let event = NodeEvent::role(api_role(role), term, leader.clone());
                    self.inner.node.record(event);
                    let _ = self
                        .inner
                        .events
                        .send(RaftEvent::Role { role, term, leader });
                }
            }
        }
        self.observe_leader_commits();
    }

    /// Tell the oracle of the entries this node committed as leader since it
    /// last told it (with every member a voter: the membership is static).
    fn observe_leader_commits(&self) {
        let (leading, commit) = {
            let core = self.inner.core.borrow();
            (core.role() == Role::Leader, core.commit_index())
        };
        let done = self
            .inner
            .leader_committed
            .replace(commit.max(self.inner.leader_committed.get()));
        if !leading || commit <= done {
            return;
        }
        let voters = [(0..self.inner.peers.len() as u64).collect::<BTreeSet<u64>>()];
        for index in done + 1..=commit {
            let Some(term) = self.entry_term(index) else {
                continue;
            };
            self.observe(Observed::LeaderCommitted {
                node: self.inner.id,
                entry: (index, term),
                voters: &voters,
                earlier: None,
            });
        }
    }

    /// This node's durable entries from `first` on, as (index, term) (the
    /// persisted log holds indices 1, 2, ... in order).
    fn durable(&self, first: u64) -> Vec<(u64, u64)> {
        let persisted = self.inner.persisted.borrow();
        let from: Vec<(u64, u64)> = persisted
            .iter()
            .skip(first.saturating_sub(1) as usize)
            .map(|e| (e.index, e.term))
            .collect();
        debug_assert!(
            from.iter().zip(first.max(1)..).all(|(e, i)| e.0 == i),
            "the persisted log holds indices 1, 2, ... in order"
        );
        from
    }

    /// Tell the run's oracle; a violation it finds is reported from this node.
    fn observe(&self, event: Observed<'_, u64>) {
        let peers = &self.inner.peers;
        let name = |n: u64| {
            peers
                .get(n as usize)
                .cloned()
                .unwrap_or_else(|| format!("#{n}"))
        };
        oracle::observe(&self.inner.node, &self.inner.oracle, event, &name);
    }

    fn persist_log(&self, truncate_from: Option<u64>, entries: Vec<Entry>) {
        let mut persisted = self.inner.persisted.borrow_mut();
        let records = |list: &[Entry]| -> Vec<Vec<u8>> {
            list.iter()
                .map(|e| serde_json::to_vec(e).expect("serializes"))
                .collect()
        };
        match truncate_from {
            Some(from) => {
                persisted.truncate(from.saturating_sub(1) as usize);
                persisted.extend(entries);
                self.inner
                    .log
                    .rewrite(&records(&persisted))
                    .expect("simulated disk write");
            }
            None => {
                self.inner
                    .log
                    .append(&records(&entries))
                    .expect("simulated disk write");
                self.inner.log.sync().expect("simulated disk sync");
                persisted.extend(entries);
            }
        }
    }

    /// Append a state-machine entry (leader only). Returns its index.
    pub fn propose(&self, command: String) -> Result<u64, ProposeError> {
        let result = self.inner.core.borrow_mut().propose(self.now_ms(), command);
        self.flush();
        result
    }

    pub fn transfer_leadership(&self, to: &str) -> Result<(), TransferError> {
        let Some(to) = self.inner.peers.iter().position(|p| p == to) else {
            return Err(TransferError::UnknownTarget);
        };
        let result = self
            .inner
            .core
            .borrow_mut()
            .transfer_leadership(self.now_ms(), to);
        self.flush();
        self.inner.kick.notify_one();
        result
    }

    pub fn role(&self) -> Role {
        self.inner.core.borrow().role()
    }
    pub fn is_leader(&self) -> bool {
        self.role() == Role::Leader
    }
    pub fn term(&self) -> u64 {
        self.inner.core.borrow().term()
    }
    pub fn leader(&self) -> Option<String> {
        self.inner
            .core
            .borrow()
            .leader()
            .map(|l| self.inner.peers[l].clone())
    }
    pub fn commit_index(&self) -> u64 {
        self.inner.core.borrow().commit_index()
    }
    pub fn last_index(&self) -> u64 {
        self.inner.core.borrow().last_index()
    }
    pub fn startup_index(&self) -> Option<u64> {
        self.inner.core.borrow().startup_index()
    }
    pub fn entry_term(&self, index: u64) -> Option<u64> {
        self.inner.core.borrow().entry(index).map(|e| e.term)
    }
    pub fn leader_hint(&self, leader: Option<usize>) -> Option<String> {
        leader.map(|l| self.inner.peers[l].clone())
    }
}

/// The node API's role for a Raft role (what checkers read).
pub fn api_role(role: Role) -> faultline_api::Role {
    match role {
        Role::Leader => faultline_api::Role::Leader,
        Role::Follower => faultline_api::Role::Follower,
        Role::Candidate => faultline_api::Role::Candidate,
    }
}

pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Leader => "leader",
        Role::Follower => "follower",
        Role::Candidate => "candidate",
    }
}

fn message_kind(message: &Message) -> &'static str {
    match message {
        Message::RequestVote { .. } => "RequestVote",
        Message::VoteResponse { .. } => "VoteResponse",
        Message::AppendEntries { entries, .. } if entries.is_empty() => "Heartbeat",
        Message::AppendEntries { .. } => "AppendEntries",
        Message::AppendResponse { .. } => "AppendResponse",
        Message::TimeoutNow { .. } => "TimeoutNow",
    }
}

/// The durable log: every intact record, kept while indices are contiguous from 1.
fn load_log(log: &RecordLog) -> std::io::Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = Vec::new();
    for record in log.read_all()? {
        let Ok(entry) = serde_json::from_slice::<Entry>(&record) else {
            break;
        };
        if entry.index != entries.len() as u64 + 1 {
            break;
        }
        entries.push(entry);
    }
    Ok(entries)
}
