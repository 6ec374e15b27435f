//! The async shell of one server (QuorumPeer): the ZK database, the peer loop
//! LOOKING -> FOLLOWING/LEADING -> LOOKING, the election's datagrams, client
//! commands, and what the server publishes.

use super::election::{Election, Notification, Output, ServerState, Vote};
use super::follower::{self, FollowerServer};
use super::leader::{self, LeaderCore};
use super::storage::{EpochFile, Storage};
use super::sync_thread::SyncThread;
use super::tree::{DataTree, Txn, ZkError};
use super::wire::ELECTION_PORT;
use super::zxid::{self, Zxid};
use super::{server_ids, Config, Params, ZkOp, ZkPoint, ZkProbe, BUG_4541};
use faultline_api::{
    parse_json, ApplyResult, Command, Net, NodeCtx, NodeEvent, Observation, OpResult, Role,
};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// What a server that is not serving clients (looking, syncing) answers.
pub const NOT_SERVING: &str = "This ZooKeeper instance is not currently serving requests";

/// Committed proposals kept in memory for DIFF syncs (ZooKeeper's commitLogCount).
pub const COMMITTED_LOG_MAX: usize = 500;
/// Election notifications queued for the LOOKING loop at most; more are dropped.
const NOTIFICATION_QUEUE_MAX: usize = 256;

/// The in-memory database (ZKDatabase): the tree and the recent committed log.
pub(crate) struct ZkDb {
    pub tree: DataTree,
    pub committed: VecDeque<(Zxid, Txn)>,
    /// False after a full shutdown cleared it: the next use reloads from disk.
    pub initialized: bool,
}

/// The ZooKeeperServer a peer runs in its current role.
pub(crate) enum Active {
    None,
    Follower(Rc<FollowerServer>),
    Leader(Rc<LeaderCore>),
}

pub(crate) struct Server {
    pub ctx: NodeCtx,
    pub sid: u64,
    /// Server names by server id (position in `nodes`, or the `sid` param).
    pub ids: BTreeMap<u64, String>,
    pub cfg: Config,
    pub buggy: bool,
    pub storage: Storage,
    pub db: RefCell<ZkDb>,
    pub state: Cell<ServerState>,
    /// Following a synced leader, or leading an established epoch.
    pub established: Cell<bool>,
    pub leader_sid: Cell<Option<u64>>,
    current_epoch: Cell<u32>,
    accepted_epoch: Cell<u32>,
    pub election: RefCell<Election>,
    net: Net,
    pub active: RefCell<Active>,
    /// Every sync thread of this incarnation (for facts), bounded.
    pub threads: RefCell<Vec<Rc<SyncThread>>>,
    pub next_thread: Cell<u32>,
    pub deaths: Cell<u32>,
    /// Applied zxids that a dead sync thread held and never logged.
    pub lost: RefCell<BTreeSet<Zxid>>,
    pub stop: watch::Sender<bool>,
    snap_rng: RefCell<ChaCha8Rng>,
    snap_roll: Cell<u64>,
    txns_since_snapshot: Cell<u64>,
}

/// Sync threads remembered per incarnation for the report.
const THREADS_KEPT_MAX: usize = 16;

pub(crate) async fn run(ctx: NodeCtx) -> turmoil::Result {
    let inbox = ctx.take_inbox();
    let server = Server::open(ctx).await?;
    let (notifications, receiver) = mpsc::channel(NOTIFICATION_QUEUE_MAX);
    tokio::task::spawn_local(election_receiver(server.clone(), notifications));
    tokio::task::spawn_local(command_loop(server.clone(), inbox));
    server.main_loop(receiver).await;
    Ok(())
}

impl Server {
    async fn open(ctx: NodeCtx) -> std::io::Result<Rc<Server>> {
        let params: Params = parse_json(ctx.params()).unwrap_or_default();
        let cfg = Config::from_params(&params);
        let names: Vec<String> = ctx.nodes().iter().map(|n| n.name.clone()).collect();
        let sids =
            server_ids(&names, params.sid.as_ref()).expect("validated by the sid param's check");
        let sid = sids[ctx.index()];
        let voters = sids.clone();
        let ids: BTreeMap<u64, String> = sids.into_iter().zip(names).collect();
        let storage = Storage::open(ctx.disk());
        let current_epoch = storage.epoch(EpochFile::Current)?;
        let accepted_epoch = storage.epoch(EpochFile::Accepted)?;
        let net = Net::bind(&ctx, ELECTION_PORT).await?;
        let buggy = ctx.bugs().buggy(&BUG_4541);
        let mut snap_rng = ctx.rng_seed_for("snapshot");
        let snap_roll = snap_rng.random_range(0..(cfg.snap_count / 2).max(1));
        let (stop, _) = watch::channel(false);
        let server = Rc::new(Server {
            sid,
            ids,
            cfg,
            buggy,
            storage,
            db: RefCell::new(ZkDb {
                tree: DataTree::default(),
                committed: VecDeque::new(),
                initialized: false,
            }),
            state: Cell::new(ServerState::Looking),
            established: Cell::new(false),
            leader_sid: Cell::new(None),
            current_epoch: Cell::new(current_epoch),
            accepted_epoch: Cell::new(accepted_epoch),
            election: RefCell::new(Election::new(sid, voters)),
            net,
            active: RefCell::new(Active::None),
            threads: RefCell::new(Vec::new()),
            next_thread: Cell::new(1),
            deaths: Cell::new(0),
            lost: RefCell::new(BTreeSet::new()),
            stop,
            snap_rng: RefCell::new(snap_rng),
            snap_roll: Cell::new(snap_roll),
            txns_since_snapshot: Cell::new(0),
            ctx,
        });
        server.load_database()?;
        if server.ctx.incarnation() > 0 && !server.db.borrow().committed.is_empty() {
            server.ctx.probe(ZkProbe::RestartReplaysLog);
        }
        Ok(server)
    }

    pub fn name(&self) -> &str {
        self.ctx.name()
    }

    /// The name of a voter (every sid the server uses is one of `ids`: a
    /// FOLLOWERINFO or notification from an unknown id is refused first).
    pub fn name_of(&self, sid: u64) -> &str {
        self.ids
            .get(&sid)
            .map(String::as_str)
            .expect("a known server id")
    }

    pub fn sid_of(&self, name: &str) -> Option<u64> {
        self.ids
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(sid, _)| *sid)
    }

    pub fn quorum(&self) -> usize {
        self.ids.len() / 2 + 1
    }

    pub fn now_ms(&self) -> u64 {
        self.ctx.now_ms()
    }

    pub fn record(&self, event: NodeEvent) {
        self.ctx.record(event);
    }

    pub fn note(&self, text: impl Into<String>) {
        self.ctx.note(text);
    }

    /// A role change: `term` is the Zab epoch.
    pub fn role_changed(&self, role: Role, epoch: u32, leader: Option<&str>, text: String) {
        self.record(NodeEvent::Leader {
            role,
            term: u64::from(epoch),
            leader: leader.map(str::to_string),
            text,
        });
    }

    pub fn current_epoch(&self) -> u32 {
        self.current_epoch.get()
    }

    pub fn accepted_epoch(&self) -> u32 {
        self.accepted_epoch.get()
    }

    pub fn set_epoch(&self, which: EpochFile, epoch: u32) -> std::io::Result<()> {
        self.storage.set_epoch(which, epoch)?;
        match which {
            EpochFile::Current => self.current_epoch.set(epoch),
            EpochFile::Accepted => self.accepted_epoch.set(epoch),
        }
        Ok(())
    }

    pub fn last_processed(&self) -> Zxid {
        self.db.borrow().tree.last_processed()
    }

    /// `ZKDatabase.loadDataBase`: snapshot + durable log, nothing else.
    pub fn load_database(&self) -> std::io::Result<()> {
        let loaded = self.storage.load()?;
        let last = loaded.tree.last_processed();
        let replayed = zxid::ranges(loaded.replayed.iter().map(|(z, _)| *z));
        {
            let mut db = self.db.borrow_mut();
            db.tree = loaded.tree;
            db.committed = loaded.replayed.into_iter().collect();
            while db.committed.len() > COMMITTED_LOG_MAX {
                db.committed.pop_front();
            }
            db.initialized = true;
        }
        self.record(durable(
            "snapshot and txn log loaded",
            &[last],
            format!(
                "loaded snapshot {} + txn log {replayed}: last processed {last}",
                loaded.snapshot_zxid
            ),
        ));
        for (zxid, error) in loaded.failed {
            self.note(format!("replay of {zxid} failed on the tree: {error}"));
        }
        Ok(())
    }

    pub fn ensure_loaded(&self) {
        if !self.db.borrow().initialized {
            self.load_database().expect("simulated disk read");
        }
    }

    /// A full shutdown (mid-SNAP): the tree is dropped and reloaded when needed.
    pub fn clear_database(&self) {
        let mut db = self.db.borrow_mut();
        db.tree = DataTree::default();
        db.committed.clear();
        db.initialized = false;
    }

    /// Apply a committed txn to the tree (FinalRequestProcessor / processTxn).
    pub fn apply_committed(&self, zxid: Zxid, txn: &Txn) -> Result<(), ZkError> {
        let result = {
            let mut db = self.db.borrow_mut();
            let result = db.tree.apply(zxid, txn);
            db.committed.push_back((zxid, txn.clone()));
            while db.committed.len() > COMMITTED_LOG_MAX {
                db.committed.pop_front();
            }
            result
        };
        let (outcome, keys, applied) = match &result {
            Ok(keys) => ("ok".to_string(), keys.clone(), ApplyResult::Ok),
            Err(error) => (
                format!("{error} (this tree disagrees)"),
                Vec::new(),
                ApplyResult::Failed {
                    error: error.to_string(),
                },
            ),
        };
        self.record(NodeEvent::Apply {
            term: Some(u64::from(zxid.epoch())),
            index: Some(zxid.0),
            what: txn.summary(),
            result: applied,
            keys,
            text: format!("apply {zxid} {}: {outcome}", txn.summary()),
        });
        result.map(|_| ())
    }

    /// `zkDb.fastForwardDataBase()`: apply what the txn log holds beyond the tree.
    pub fn fast_forward(&self) {
        let last = self.last_processed();
        let records = self
            .storage
            .records_after(last)
            .expect("simulated disk read");
        if records.is_empty() {
            return;
        }
        let zxids = zxid::ranges(records.iter().map(|(z, _)| *z));
        for (zxid, txn) in &records {
            let _ = self.apply_committed(*zxid, txn);
        }
        self.note(format!("fast-forward from the txn log: applied {zxids}"));
    }

    /// `takeSnapshot`: the whole in-memory tree. A failed snapshot is fatal.
    pub async fn take_snapshot(&self, why: &str) {
        if let Err(kind) = self.ctx.faults().hit(ZkPoint::SnapshotTake).await {
            let reason = format!("Severe unrecoverable error, exiting: snapshot failed ({kind})");
            self.exit(&reason).await;
        }
        self.write_snapshot(why);
        self.txns_since_snapshot.set(0);
    }

    /// The snapshot admin command (`takeSnapshot(false, false)`): an IOException
    /// is the command's error, not a reason to exit. Answers the snapshot's zxid.
    async fn take_snapshot_now(&self) -> OpResult {
        if let Err(kind) = self.ctx.faults().hit(ZkPoint::SnapshotTake).await {
            let why = format!("snapshot failed: IOException ({kind})");
            self.note(format!("snapshot admin command: {why}"));
            return OpResult::error(why);
        }
        OpResult::value(self.write_snapshot("snapshot admin command").to_string())
    }

    /// Save the live data tree as the latest snapshot (FileTxnSnapLog.save).
    fn write_snapshot(&self, why: &str) -> Zxid {
        let tree = self.db.borrow().tree.clone();
        self.storage
            .save_snapshot(&tree)
            .expect("simulated disk write");
        let at = tree.last_processed();
        self.record(durable(
            "snapshot",
            &[at],
            format!("snapshot at {at} ({why})"),
        ));
        at
    }

    /// SyncRequestProcessor.shouldSnapshot after an append: snapCount/2 plus a
    /// random roll, so servers do not all snapshot at once. ZooKeeper snapshots on
    /// a separate thread; here the sync task takes it inline, which only delays the
    /// sync thread (the snapshot is of the live tree either way).
    pub async fn after_append(&self) {
        let count = self.txns_since_snapshot.get() + 1;
        self.txns_since_snapshot.set(count);
        if count > self.cfg.snap_count / 2 + self.snap_roll.get() {
            let roll = self
                .snap_rng
                .borrow_mut()
                .random_range(0..(self.cfg.snap_count / 2).max(1));
            self.snap_roll.set(roll);
            self.take_snapshot("snap_count reached").await;
        }
    }

    pub fn register_thread(&self, thread: Rc<SyncThread>) {
        let mut threads = self.threads.borrow_mut();
        if threads.len() >= THREADS_KEPT_MAX {
            // Forget a finished thread, else the oldest (a leaked, idle one keeps
            // running; only the report stops counting it).
            let i = threads.iter().position(|t| !t.is_running()).unwrap_or(0);
            threads.remove(i);
        }
        threads.push(thread);
    }

    fn active_thread(&self) -> Option<Rc<SyncThread>> {
        match &*self.active.borrow() {
            Active::None => None,
            Active::Follower(f) => f.sync.borrow().clone(),
            Active::Leader(l) => l.sync.borrow().clone(),
        }
    }

    fn send_notifications(&self, outputs: Vec<Output>) -> Option<(ServerState, Vote, u64)> {
        let mut decided = None;
        for output in outputs {
            match output {
                Output::Send { to, notification } => {
                    self.net
                        .send(self.name_of(to), "notification", &notification);
                }
                Output::Decided {
                    state,
                    vote,
                    election_epoch,
                } => decided = Some((state, vote, election_epoch)),
            }
        }
        decided
    }

    async fn main_loop(self: &Rc<Self>, mut notifications: mpsc::Receiver<Notification>) {
        loop {
            if *self.stop.borrow() {
                break;
            }
            let Some((state, vote)) = self.look_for_leader(&mut notifications).await else {
                break;
            };
            match state {
                ServerState::Leading => leader::lead(self).await,
                ServerState::Following => follower::follow(self, vote.leader).await,
                ServerState::Looking => unreachable!("an election decides to follow or lead"),
            }
            self.state.set(ServerState::Looking);
            self.established.set(false);
            self.leader_sid.set(None);
            self.publish();
        }
        self.note("QuorumPeer shut down cleanly");
        self.publish();
        self.ctx.stopped();
        std::future::pending::<()>().await;
    }

    /// `lookForLeader`, with the vote's zxid read from the tree (lastProcessedZxid).
    async fn look_for_leader(
        &self,
        notifications: &mut mpsc::Receiver<Notification>,
    ) -> Option<(ServerState, Vote)> {
        self.state.set(ServerState::Looking);
        self.ensure_loaded();
        let init = Vote {
            leader: self.sid,
            zxid: self.last_processed(),
            peer_epoch: self.current_epoch(),
        };
        let outputs = {
            let mut election = self.election.borrow_mut();
            election.start(self.now_ms(), init);
            election.drain()
        };
        let text = format!(
            "looking: vote epoch {} zxid {} sid {} (round {})",
            init.peer_epoch,
            init.zxid,
            init.leader,
            self.election.borrow().logical_clock()
        );
        self.role_changed(Role::Candidate, init.peer_epoch, None, text);
        self.publish();
        let mut stop = self.stop.subscribe();
        let mut decided = self.send_notifications(outputs);
        loop {
            if let Some((state, vote, round)) = decided {
                let tie = (vote.peer_epoch, vote.zxid) == (init.peer_epoch, init.zxid);
                if tie && vote.leader != self.sid && init.zxid != Zxid::ZERO {
                    self.ctx.probe(ZkProbe::ElectionTieBySid);
                }
                let leader = self.name_of(vote.leader).to_string();
                let what = match state {
                    ServerState::Leading => "elected leader".to_string(),
                    ServerState::Following | ServerState::Looking => format!("elected {leader}"),
                };
                self.note(format!(
                    "{what} in round {round} with vote epoch {} zxid {} sid {}",
                    vote.peer_epoch, vote.zxid, vote.leader
                ));
                return Some((state, vote));
            }
            let now = self.now_ms();
            let due = self.election.borrow().next_deadline_ms().unwrap_or(now);
            let wait = Duration::from_millis(due.saturating_sub(now));
            tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s) => return None,
                Some(n) = notifications.recv() => {
                    self.election.borrow_mut().receive(self.now_ms(), n, ServerState::Looking);
                }
                _ = tokio::time::sleep(wait) => {
                    self.election.borrow_mut().tick(self.now_ms());
                }
            }
            let outputs = self.election.borrow_mut().drain();
            decided = self.send_notifications(outputs);
        }
    }

    // ---- client operations ----

    fn on_op(self: &Rc<Self>, id: u64, op: serde_json::Value) {
        let op: ZkOp = serde_json::from_value(op).expect("validated by parse_op");
        let Some(txn) = op.txn() else {
            match &op {
                ZkOp::Get { path } => {
                    // A server serves clients only while its ZooKeeperServer runs (a
                    // synced follower or an established leader); a looking or syncing
                    // one refuses the connection. Its tree may then hold txns it only
                    // logged (fast-forwarded at the end of leading), never committed.
                    if !self.established.get() {
                        self.ctx.complete(id, OpResult::error(NOT_SERVING));
                        return;
                    }
                    let answer = match self.db.borrow().tree.get(path) {
                        Some(node) => OpResult::value(node.data.clone()),
                        None => OpResult::error(ZkError::NoNode.to_string()),
                    };
                    self.ctx.complete(id, answer);
                }
                ZkOp::Snapshot {} => self.snapshot_command(id),
                ZkOp::Create { .. }
                | ZkOp::Delete { .. }
                | ZkOp::SetData { .. }
                | ZkOp::OpenSession { .. }
                | ZkOp::CloseSession { .. } => unreachable!("writes become txns"),
            }
            return;
        };
        let leader = match &*self.active.borrow() {
            Active::Leader(core) if core.is_established() => Some(core.clone()),
            Active::Leader(_) | Active::Follower(_) | Active::None => None,
        };
        match leader {
            Some(core) => core.submit(self, id, txn),
            None => {
                let hint = self
                    .leader_sid
                    .get()
                    .filter(|s| *s != self.sid)
                    .map(|s| self.name_of(s).to_string())
                    .unwrap_or_else(|| "unknown".into());
                self.ctx
                    .complete(id, OpResult::error(format!("not leader (leader: {hint})")));
            }
        }
    }

    /// The admin server's `snapshot` command: it needs a running ZooKeeperServer
    /// (a synced follower or an established leader), then snapshots the live tree
    /// on a task of its own (a stalled snapshot holds only the command).
    fn snapshot_command(self: &Rc<Self>, id: u64) {
        if !self.established.get() {
            self.ctx.complete(id, OpResult::error(NOT_SERVING));
            return;
        }
        let server = self.clone();
        tokio::task::spawn_local(async move {
            let result = server.take_snapshot_now().await;
            server.ctx.complete(id, result);
            server.publish();
        });
    }

    // ---- observations ----

    /// The process terminates (ZooKeeper's `ServiceUtils.requestSystemExit`). It
    /// publishes first: a node that dies still reports what it had applied.
    pub async fn exit(&self, reason: &str) {
        self.publish();
        let _ = self.ctx.exit(reason).await;
    }

    pub fn publish(&self) {
        let db = self.db.borrow();
        let role = match (self.state.get(), self.established.get()) {
            (ServerState::Looking, _) => "looking",
            (ServerState::Following, true) => "follower",
            (ServerState::Following, false) => "syncing",
            (ServerState::Leading, true) => "leader",
            (ServerState::Leading, false) => "leading",
        };
        let mut facts = BTreeMap::new();
        let mut fact = |k: &str, v: String| {
            facts.insert(k.to_string(), v);
        };
        fact("last_processed", db.tree.last_processed().to_string());
        fact("current_epoch", self.current_epoch().to_string());
        fact("accepted_epoch", self.accepted_epoch().to_string());
        fact("log_zxids", zxid::ranges(self.storage.durable()));
        fact("log_unsynced", self.storage.unsynced().to_string());
        fact(
            "log_unsynced_zxids",
            zxid::ranges(self.storage.unsynced_zxids()),
        );
        fact("snapshot_zxid", self.storage.snapshot_zxid().to_string());
        let vote = self.election.borrow().proposal();
        fact(
            "vote",
            format!(
                "epoch {} zxid {} sid {}",
                vote.peer_epoch, vote.zxid, vote.leader
            ),
        );
        let active_thread = self.active_thread();
        fact(
            "sync_thread",
            active_thread
                .as_ref()
                .map(|t| t.status())
                .unwrap_or_else(|| "none".into()),
        );
        fact(
            "sync_queue",
            active_thread.as_ref().map_or(0, |t| t.len()).to_string(),
        );
        let threads = self.threads.borrow();
        let leaked = threads
            .iter()
            .filter(|t| t.is_running())
            .filter(|t| !active_thread.as_ref().is_some_and(|a| Rc::ptr_eq(a, t)))
            .count();
        fact("sync_threads_leaked", leaked.to_string());
        fact("sync_thread_deaths", self.deaths.get().to_string());
        let lost = self.lost.borrow();
        if !lost.is_empty() {
            fact("lost_zxids", zxid::ranges(lost.iter().copied()));
        }
        let mut pending: u64 = threads
            .iter()
            .filter(|t| t.is_running())
            .map(|t| t.len() as u64)
            .sum();
        match &*self.active.borrow() {
            Active::None => {}
            Active::Follower(f) => {
                let n = f.pending.borrow().len();
                fact("pending_txns", n.to_string());
                pending += n as u64;
            }
            Active::Leader(l) => {
                let n = l.outstanding();
                fact("outstanding_proposals", n.to_string());
                pending += n as u64;
            }
        }
        if !self.established.get() {
            // Electing or syncing is work in hand: not quiescent yet.
            pending += 1;
        }
        let leader = self.leader_sid.get().map(|s| self.name_of(s).to_string());
        if self.established.get() {
            // Who this server serves under, once synced (or established as leader).
            fact("synced_with", leader.clone().unwrap_or_default());
        }
        self.ctx.publish(Observation {
            role: Some(role.to_string()),
            term: Some(u64::from(self.current_epoch())),
            leader,
            applied: Some(db.tree.last_processed().0),
            state: db.tree.view(),
            facts,
            pending,
            ..Default::default()
        });
    }
}

/// Datagrams from other servers: queued for the LOOKING loop, or answered with our
/// current vote when we follow or lead.
async fn election_receiver(server: Rc<Server>, notifications: mpsc::Sender<Notification>) {
    let mut buffer = Net::buffer();
    loop {
        let Ok((from, n)) = server.net.recv::<Notification>(&mut buffer).await else {
            continue;
        };
        if server.sid_of(&from) != Some(n.sid) {
            continue;
        }
        let state = server.state.get();
        if state == ServerState::Looking {
            // A full queue drops the notification, as a lossy network would.
            let _ = notifications.try_send(n);
            continue;
        }
        let outputs = {
            let mut election = server.election.borrow_mut();
            election.receive(server.now_ms(), n, state);
            election.drain()
        };
        let decided = server.send_notifications(outputs);
        assert!(decided.is_none(), "only a LOOKING server decides");
    }
}

async fn command_loop(
    server: Rc<Server>,
    mut inbox: tokio::sync::mpsc::UnboundedReceiver<Command>,
) {
    while let Some(command) = inbox.recv().await {
        match command {
            Command::Op { id, op } => server.on_op(id, op),
            Command::TransferLeader { id, .. } => server.ctx.complete(
                id,
                OpResult::error("the zookeeper model does not transfer leadership"),
            ),
            Command::Stop => {
                server.note("QuorumPeer.shutdown: clean shutdown requested");
                server.stop.send_replace(true);
            }
        }
    }
}

/// A storage event over zxids: durable through the highest, covering each.
pub(crate) fn durable(what: &str, zxids: &[Zxid], text: String) -> NodeEvent {
    let last = zxids.iter().copied().max();
    NodeEvent::Storage {
        what: what.to_string(),
        term: last.map(|z| u64::from(z.epoch())),
        index: last.map(|z| z.0),
        entries: zxids.iter().map(|z| z.0).collect(),
        text,
    }
}
