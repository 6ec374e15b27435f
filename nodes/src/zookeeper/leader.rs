//! Leading (Leader.lead + LearnerHandler): snapshot the tree, agree on a new epoch
//! with a quorum, sync every learner by DIFF/TRUNC/SNAP, then propose, count ACKs
//! and commit. A clean shutdown closes every learner socket.

use super::election::ServerState;
use super::server::{Active, Server};
use super::storage::EpochFile;
use super::sync_thread::{AckTarget, LogRequest, SyncThread};
use super::tree::{DataTree, Txn};
use super::wire::{read_packet, Conn, Packet, QUORUM_PORT};
use super::zab::{select_sync, Proposals, SyncPlan};
use super::zxid::Zxid;
use super::{ZkPoint, ZkProbe};
use faultline_api::{Fault, NodeEvent, OpResult, Role};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use turmoil::net::tcp::OwnedReadHalf;
use turmoil::net::{TcpListener, TcpStream};

/// Learner connections a leader serves at once (a few per peer while they reconnect).
const HANDLER_TASKS_MAX: usize = 32;

/// One learner connection (LearnerHandler).
struct Handler {
    sid: u64,
    conn: Rc<Conn>,
    /// Proposals and commits are forwarded once the learner was synced.
    forwarding: Cell<bool>,
    /// The learner is synced while it speaks before this deadline.
    deadline_ms: Cell<u64>,
}

/// Why leading ended.
enum LeadEnd {
    /// Leader.shutdown(reason): back to LOOKING.
    Shutdown(String),
    /// The process shuts down cleanly and exits.
    Exit(String),
}

pub(crate) struct LeaderCore {
    epoch: Cell<Option<u32>>,
    established: Cell<bool>,
    /// Learners (and this server) that registered, with their accepted epochs.
    connecting: RefCell<BTreeMap<u64, u32>>,
    electing: RefCell<BTreeSet<u64>>,
    newleader_acks: RefCell<BTreeSet<u64>>,
    /// The leader's state summary (current epoch, last zxid) at election.
    summary: Cell<(u32, Zxid)>,
    changed: watch::Sender<u64>,
    shutdown: watch::Sender<Option<String>>,
    handlers: RefCell<BTreeMap<u64, Rc<Handler>>>,
    tasks: RefCell<Vec<JoinHandle<()>>>,
    proposals: RefCell<Proposals>,
    txns: RefCell<BTreeMap<Zxid, Txn>>,
    /// Client ops waiting for their txn to commit.
    waiting: RefCell<BTreeMap<Zxid, u64>>,
    /// The tree with every outstanding proposal applied (PrepRequestProcessor's view).
    prep: RefCell<DataTree>,
    counter: Cell<u32>,
    pub sync: RefCell<Option<Rc<SyncThread>>>,
}

impl LeaderCore {
    fn new(quorum: usize) -> LeaderCore {
        LeaderCore {
            epoch: Cell::new(None),
            established: Cell::new(false),
            connecting: RefCell::new(BTreeMap::new()),
            electing: RefCell::new(BTreeSet::new()),
            newleader_acks: RefCell::new(BTreeSet::new()),
            summary: Cell::new((0, Zxid::ZERO)),
            changed: watch::channel(0).0,
            shutdown: watch::channel(None).0,
            handlers: RefCell::new(BTreeMap::new()),
            tasks: RefCell::new(Vec::new()),
            proposals: RefCell::new(Proposals::new(quorum, Zxid::ZERO)),
            txns: RefCell::new(BTreeMap::new()),
            waiting: RefCell::new(BTreeMap::new()),
            prep: RefCell::new(DataTree::default()),
            counter: Cell::new(0),
            sync: RefCell::new(None),
        }
    }

    pub fn is_established(&self) -> bool {
        self.established.get()
    }

    pub fn outstanding(&self) -> usize {
        self.proposals.borrow().len() + self.waiting.borrow().len()
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    pub fn request_shutdown(&self, reason: String) {
        if self.shutdown.borrow().is_none() {
            self.shutdown.send_replace(Some(reason));
        }
    }

    /// Wait until `done` holds, the leader shuts down, or `timeout` passes.
    async fn wait(
        &self,
        server: &Server,
        timeout: Duration,
        what: &str,
        done: impl Fn(&LeaderCore) -> bool,
    ) -> Result<(), LeadEnd> {
        let mut changed = self.changed.subscribe();
        let mut shutdown = self.shutdown.subscribe();
        let mut stop = server.stop.subscribe();
        let waiting = async {
            loop {
                if done(self) {
                    return Ok(());
                }
                tokio::select! {
                    biased;
                    _ = stop.wait_for(|s| *s) => {
                        return Err(LeadEnd::Shutdown("quorum peer shutdown".into()))
                    }
                    r = shutdown.wait_for(|r| r.is_some()) => {
                        let why = r.ok().and_then(|r| r.clone()).unwrap_or_default();
                        return Err(LeadEnd::Shutdown(why));
                    }
                    _ = changed.changed() => {}
                }
            }
        };
        match tokio::time::timeout(timeout, waiting).await {
            Ok(result) => result,
            Err(_) => Err(LeadEnd::Shutdown(format!("timeout waiting for {what}"))),
        }
    }

    /// `getEpochToPropose`: the new epoch is one past the highest accepted epoch of
    /// the first quorum (this server included) to register.
    fn offer_epoch(&self, server: &Server, sid: u64, accepted: u32) {
        if self.epoch.get().is_some() {
            return;
        }
        let mut connecting = self.connecting.borrow_mut();
        connecting.insert(sid, accepted);
        if connecting.contains_key(&server.sid) && connecting.len() >= server.quorum() {
            let epoch = connecting.values().max().copied().unwrap_or(0) + 1;
            drop(connecting);
            server
                .set_epoch(EpochFile::Accepted, epoch)
                .expect("simulated disk write");
            self.epoch.set(Some(epoch));
            self.bump();
        }
    }

    /// `waitForEpochAck`'s bookkeeping; a learner ahead of the leader is refused.
    fn epoch_ack(&self, sid: u64, current: Option<u32>, last: Zxid) -> Result<(), String> {
        if let Some(current) = current {
            let (leader_epoch, leader_zxid) = self.summary.get();
            if (current, last) > (leader_epoch, leader_zxid) {
                return Err(format!(
                    "follower is ahead of the leader (epoch {current}, zxid {last} > epoch {leader_epoch}, zxid {leader_zxid})"
                ));
            }
            self.electing.borrow_mut().insert(sid);
            self.bump();
        }
        Ok(())
    }

    fn quorum_of(set: &BTreeSet<u64>, server: &Server) -> bool {
        set.contains(&server.sid) && set.len() >= server.quorum()
    }

    fn add_handler(&self, handler: Rc<Handler>) {
        if let Some(old) = self.handlers.borrow_mut().insert(handler.sid, handler) {
            old.conn.close();
        }
    }

    fn remove_handler(&self, sid: u64, conn: &Rc<Conn>) {
        let mut handlers = self.handlers.borrow_mut();
        if handlers
            .get(&sid)
            .is_some_and(|h| Rc::ptr_eq(&h.conn, conn))
        {
            handlers.remove(&sid);
        }
    }

    fn forward(&self, packet: &Packet) {
        for handler in self.handlers.borrow().values() {
            if handler.forwarding.get() {
                // A failed send surfaces as that handler's read error.
                let _ = handler.conn.send(packet);
            }
        }
    }

    /// A client write: check it against the outstanding view, propose it, log it.
    pub fn submit(&self, server: &Server, id: u64, txn: Txn) {
        let epoch = self.epoch.get().expect("established");
        if self.proposals.borrow().is_full() || self.counter.get() == u32::MAX {
            server.ctx.complete(
                id,
                OpResult::error("throttled: too many outstanding proposals"),
            );
            return;
        }
        // A refused request is proposed too, as an error txn: the client hears
        // the refusal once it commits, after every proposal it was checked
        // against (PrepRequestProcessor.pRequest's `catch (KeeperException e)`).
        let checked = self.prep.borrow().check(&txn);
        let txn = match checked {
            Ok(()) => txn,
            Err(error) => Txn::Error {
                error,
                request: txn.summary(),
            },
        };
        self.counter.set(self.counter.get() + 1);
        let zxid = Zxid::new(epoch, self.counter.get());
        self.prep
            .borrow_mut()
            .apply(zxid, &txn)
            .expect("checked against the same tree");
        self.proposals.borrow_mut().propose(zxid);
        self.txns.borrow_mut().insert(zxid, txn.clone());
        self.waiting.borrow_mut().insert(zxid, id);
        server.record(NodeEvent::Submit {
            by: "leader".into(),
            what: txn.summary(),
            term: Some(u64::from(zxid.epoch())),
            index: Some(zxid.0),
            text: format!("propose {zxid} {}", txn.summary()),
        });
        self.forward(&Packet::Proposal {
            zxid,
            txn: txn.clone(),
        });
        let sync = self.sync.borrow().clone().expect("established");
        sync.enqueue(LogRequest { zxid, txn });
        server.publish();
    }

    /// `processAck`: commit what reached a quorum, in order; apply; answer clients.
    pub fn process_ack(&self, server: &Server, sid: u64, zxid: Zxid) {
        if !self.established.get() {
            return;
        }
        let commits = self.proposals.borrow_mut().ack(sid, zxid);
        for zxid in commits {
            let txn = self
                .txns
                .borrow_mut()
                .remove(&zxid)
                .expect("an outstanding proposal has its txn");
            self.forward(&Packet::Commit { zxid });
            let result = server.apply_committed(zxid, &txn);
            if let Some(id) = self.waiting.borrow_mut().remove(&zxid) {
                let answer = match (result, txn.clone()) {
                    (Ok(()), Txn::Create { path, .. }) => OpResult::value(path),
                    (Ok(()), Txn::Error { error, .. }) | (Err(error), _) => {
                        OpResult::error(error.to_string())
                    }
                    (
                        Ok(()),
                        Txn::CreateSession { .. }
                        | Txn::CloseSession { .. }
                        | Txn::Delete { .. }
                        | Txn::SetData { .. },
                    ) => OpResult::ok(),
                };
                server.ctx.complete(id, answer);
            }
        }
        server.publish();
    }

    /// Bring one learner in sync and start forwarding to it (`syncFollower` +
    /// `startForwarding`), then queue NEWLEADER. Synchronous: nothing is proposed
    /// in between.
    fn sync_learner(&self, server: &Server, handler: &Handler, peer_last: Zxid) {
        let epoch = self.epoch.get().expect("decided before sync");
        let db = server.db.borrow();
        let committed: Vec<Zxid> = db.committed.iter().map(|(z, _)| *z).collect();
        let last = db.tree.last_processed();
        let plan = select_sync(&committed, last, peer_last);
        let txn_of = |zxid: &Zxid| {
            db.committed
                .iter()
                .find(|(z, _)| z == zxid)
                .map(|(_, t)| t.clone())
                .expect("planned from the committed log")
        };
        let conn = &handler.conn;
        let mut send = |packet: Packet| {
            let _ = conn.send(&packet);
        };
        let diff = |send: &mut dyn FnMut(Packet), proposals: &[Zxid]| {
            for zxid in proposals {
                send(Packet::Proposal {
                    zxid: *zxid,
                    txn: txn_of(zxid),
                });
                send(Packet::Commit { zxid: *zxid });
            }
        };
        if matches!(&plan, SyncPlan::Diff { proposals } if proposals.is_empty())
            && peer_last != Zxid::ZERO
        {
            server.ctx.probe(ZkProbe::EmptyDiff);
        }
        match &plan {
            SyncPlan::Diff { proposals } => {
                send(Packet::Diff {
                    zxid: committed.last().copied().unwrap_or(last),
                });
                diff(&mut send, proposals);
            }
            SyncPlan::TruncDiff { to, proposals } => {
                send(Packet::Trunc { zxid: *to });
                diff(&mut send, proposals);
            }
            SyncPlan::Trunc { to } => send(Packet::Trunc { zxid: *to }),
            SyncPlan::Snap => send(Packet::Snap {
                zxid: last,
                tree: db.tree.clone(),
            }),
        }
        server.note(format!(
            "sync {}: {}",
            server.name_of(handler.sid),
            plan.describe(peer_last)
        ));
        drop(db);
        let from = plan.synced_to(peer_last, last);
        let outstanding = self.proposals.borrow().after(from);
        for zxid in outstanding {
            let txn = self.txns.borrow()[&zxid].clone();
            send(Packet::Proposal { zxid, txn });
        }
        handler.forwarding.set(true);
        send(Packet::NewLeader {
            zxid: Zxid::new(epoch, 0),
        });
    }

    /// Count this server and every learner heard from within syncLimit.
    fn synced(&self, server: &Server) -> (bool, Vec<u64>) {
        let now = server.now_ms();
        let mut sids = vec![server.sid];
        sids.extend(
            self.handlers
                .borrow()
                .values()
                .filter(|h| h.deadline_ms.get() >= now)
                .map(|h| h.sid),
        );
        (sids.len() >= server.quorum(), sids)
    }

    /// `LearnerHandler.ping()`: only learners whose sync was sent; a syncing one
    /// would take a PING for its sync packet.
    fn ping_all(&self) {
        for handler in self.handlers.borrow().values() {
            if handler.forwarding.get() {
                let _ = handler.conn.send(&Packet::Ping);
            }
        }
    }
}

/// One LEADING session.
pub(crate) async fn lead(server: &Rc<Server>) {
    server.state.set(ServerState::Leading);
    server.established.set(false);
    server.leader_sid.set(Some(server.sid));
    let core = Rc::new(LeaderCore::new(server.quorum()));
    *server.active.borrow_mut() = Active::Leader(core.clone());
    server.publish();
    let end = match TcpListener::bind(("0.0.0.0", QUORUM_PORT)).await {
        Ok(listener) => {
            let accept =
                tokio::task::spawn_local(accept_loop(server.clone(), core.clone(), listener));
            core.tasks.borrow_mut().push(accept);
            lead_phases(server, &core).await
        }
        Err(e) => LeadEnd::Shutdown(format!("cannot listen for learners: {e}")),
    };
    let (reason, exit) = match end {
        LeadEnd::Shutdown(reason) => (reason, false),
        LeadEnd::Exit(reason) => (reason, true),
    };
    shutdown(server, &core, &reason).await;
    *server.active.borrow_mut() = Active::None;
    if exit {
        server.exit(&reason).await;
    }
}

async fn lead_phases(server: &Rc<Server>, core: &Rc<LeaderCore>) -> LeadEnd {
    match establish(server, core).await {
        Ok(()) => broadcast(server, core).await,
        Err(end) => end,
    }
}

/// Discovery and synchronization: epoch, epoch acks, NEWLEADER acks.
async fn establish(server: &Rc<Server>, core: &Rc<LeaderCore>) -> Result<(), LeadEnd> {
    let init = server.cfg.init_timeout();
    // Leader.lead -> zk.loadData(): a clean snapshot of the tree it leads with.
    server.ensure_loaded();
    server.take_snapshot("new leader").await;
    core.summary
        .set((server.current_epoch(), server.last_processed()));
    core.offer_epoch(server, server.sid, server.accepted_epoch());
    core.wait(server, init, "a quorum of learners to register", |c| {
        c.epoch.get().is_some()
    })
    .await?;
    let epoch = core.epoch.get().expect("decided");
    core.epoch_ack(server.sid, Some(core.summary.get().0), core.summary.get().1)
        .expect("the leader is not ahead of itself");
    core.wait(server, init, "a quorum to ack the new epoch", |c| {
        LeaderCore::quorum_of(&c.electing.borrow(), server)
    })
    .await?;
    server
        .set_epoch(EpochFile::Current, epoch)
        .expect("simulated disk write");
    core.newleader_acks.borrow_mut().insert(server.sid);
    core.bump();
    core.wait(server, init, "a quorum to ack NEWLEADER", |c| {
        LeaderCore::quorum_of(&c.newleader_acks.borrow(), server)
    })
    .await?;
    // startZkServer: the broadcast pipeline with the leader's own sync thread.
    let last = server.last_processed();
    *core.proposals.borrow_mut() = Proposals::new(server.quorum(), last);
    *core.prep.borrow_mut() = server.db.borrow().tree.clone();
    let sync = SyncThread::start(server, AckTarget::Leader(Rc::downgrade(core)));
    *core.sync.borrow_mut() = Some(sync);
    core.established.set(true);
    core.bump();
    server.election.borrow_mut().update_epoch(epoch);
    server.established.set(true);
    let acks: Vec<&str> = core
        .newleader_acks
        .borrow()
        .iter()
        .map(|s| server.name_of(*s))
        .collect::<Vec<_>>();
    let text = format!(
        "leader term {epoch}: NEWLEADER acked by {}, last zxid {last}",
        acks.join(", ")
    );
    server.role_changed(Role::Leader, epoch, Some(server.name()), text);
    server.publish();
    Ok(())
}

/// The broadcast phase: every tick/2 ping learners; every tick check that a quorum
/// is still synced (Leader.lead's loop).
async fn broadcast(server: &Rc<Server>, core: &Rc<LeaderCore>) -> LeadEnd {
    let mut stop = server.stop.subscribe();
    let mut shutdown = core.shutdown.subscribe();
    let mut tick_skip = true;
    loop {
        tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => return LeadEnd::Shutdown("quorum peer shutdown".into()),
            r = shutdown.wait_for(|r| r.is_some()) => {
                let why = r.ok().and_then(|r| r.clone()).unwrap_or_default();
                return LeadEnd::Shutdown(why);
            }
            _ = tokio::time::sleep(server.cfg.half_tick()) => {}
        }
        match server.ctx.faults().eval(ZkPoint::LeaderShutdown) {
            None => {}
            Some(Fault::Error(kind)) if kind == "process" => {
                return LeadEnd::Exit("clean shutdown and exit (fail point leader.shutdown)".into())
            }
            Some(Fault::Error(_)) => {
                return LeadEnd::Shutdown("Leader.shutdown (fail point leader.shutdown)".into())
            }
            Some(fault @ (Fault::Panic(_) | Fault::Stall(_) | Fault::StallUntilRelease(_))) => {
                let _ = server.ctx.faults().act(fault).await;
            }
        }
        if !tick_skip {
            let (ok, sids) = core.synced(server);
            if !ok {
                let names: Vec<&str> = sids.iter().map(|s| server.name_of(*s)).collect();
                return LeadEnd::Shutdown(format!(
                    "Not sufficient followers synced, only synced with [{}]",
                    names.join(", ")
                ));
            }
        }
        tick_skip = !tick_skip;
        core.ping_all();
    }
}

/// `Leader.shutdown(reason)`: stop the server (its own sync thread drains), then
/// close every learner socket.
async fn shutdown(server: &Rc<Server>, core: &Rc<LeaderCore>, reason: &str) {
    // The peer goes back to LOOKING.
    let text = format!("leading ended: {reason}");
    server.role_changed(Role::Candidate, server.current_epoch(), None, text);
    core.request_shutdown(reason.to_string());
    core.established.set(false);
    server.established.set(false);
    if let Some(accept) = core.tasks.borrow_mut().first() {
        accept.abort();
    }
    let sync = core.sync.borrow().clone();
    if let Some(sync) = sync {
        sync.shutdown(server).await;
    }
    server.fast_forward();
    let handlers: Vec<Rc<Handler>> = core.handlers.borrow_mut().values().cloned().collect();
    core.handlers.borrow_mut().clear();
    for handler in handlers {
        handler.conn.close();
    }
    for task in core.tasks.borrow_mut().drain(..) {
        task.abort();
    }
    let waiting = std::mem::take(&mut *core.waiting.borrow_mut());
    for (_, id) in waiting {
        server.ctx.complete(
            id,
            OpResult::error(format!("connection loss: the leader shut down ({reason})")),
        );
    }
    server.publish();
}

async fn accept_loop(server: Rc<Server>, core: Rc<LeaderCore>, listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let mut tasks = core.tasks.borrow_mut();
        // Keep the accept task (first) and every live handler.
        let mut index = 0;
        tasks.retain(|t| {
            index += 1;
            index == 1 || !t.is_finished()
        });
        if tasks.len() > HANDLER_TASKS_MAX {
            continue;
        }
        let task = tokio::task::spawn_local(learner_handler(server.clone(), core.clone(), stream));
        tasks.push(task);
    }
}

async fn read(read: &mut OwnedReadHalf, timeout: Duration) -> Result<Packet, String> {
    read_packet(read, timeout).await.map_err(|e| e.to_string())
}

async fn learner_handler(server: Rc<Server>, core: Rc<LeaderCore>, stream: TcpStream) {
    let peer = stream
        .peer_addr()
        .ok()
        .and_then(|a| turmoil::reverse_lookup(a.ip()))
        .unwrap_or_else(|| "?".to_string());
    let (mut rd, wr) = stream.into_split();
    let conn = Conn::spawn(wr, &peer, server.ctx.handle());
    let mut sid = None;
    let result = handle(&server, &core, &mut rd, &conn, &mut sid).await;
    conn.close();
    if let Some(sid) = sid {
        core.remove_handler(sid, &conn);
    }
    if let Err(reason) = result {
        server.note(format!("learner handler for {peer} ended: {reason}"));
    }
}

async fn handle(
    server: &Rc<Server>,
    core: &Rc<LeaderCore>,
    rd: &mut OwnedReadHalf,
    conn: &Rc<Conn>,
    sid_out: &mut Option<u64>,
) -> Result<(), String> {
    let init = server.cfg.init_timeout();
    // Each handshake read takes one packet kind; any other, now or added later,
    // is a protocol error.
    let packet = read(rd, init).await?;
    let Packet::FollowerInfo {
        sid,
        accepted_epoch: accepted,
    } = packet
    else {
        return Err(format!("expected FOLLOWERINFO, got {}", packet.kind()));
    };
    if sid == server.sid || !server.ids.contains_key(&sid) {
        return Err(format!("FOLLOWERINFO from unknown server id {sid}"));
    }
    *sid_out = Some(sid);
    let handler = Rc::new(Handler {
        sid,
        conn: conn.clone(),
        forwarding: Cell::new(false),
        deadline_ms: Cell::new(
            server.now_ms() + (init + server.cfg.sync_timeout()).as_millis() as u64,
        ),
    });
    core.add_handler(handler.clone());
    core.offer_epoch(server, sid, accepted);
    core.wait(server, init, "a quorum of learners to register", |c| {
        c.epoch.get().is_some()
    })
    .await
    .map_err(end_reason)?;
    let epoch = core.epoch.get().expect("decided");
    conn.send(&Packet::LeaderInfo { epoch })
        .map_err(|e| e.to_string())?;
    let packet = read(rd, init).await?;
    let Packet::AckEpoch {
        current_epoch: current,
        last_zxid,
    } = packet
    else {
        return Err(format!("expected ACKEPOCH, got {}", packet.kind()));
    };
    core.epoch_ack(sid, current, last_zxid)?;
    core.wait(server, init, "a quorum to ack the new epoch", |c| {
        LeaderCore::quorum_of(&c.electing.borrow(), server)
    })
    .await
    .map_err(end_reason)?;
    core.sync_learner(server, &handler, last_zxid);
    let packet = read(rd, init).await?;
    if !matches!(packet, Packet::Ack { zxid } if zxid == Zxid::new(epoch, 0)) {
        return Err(format!("expected the NEWLEADER ACK, got {}", packet.kind()));
    }
    core.newleader_acks.borrow_mut().insert(sid);
    core.bump();
    core.wait(server, init, "the leader to start serving", |c| {
        c.established.get()
    })
    .await
    .map_err(end_reason)?;
    conn.send(&Packet::UpToDate).map_err(|e| e.to_string())?;
    let sync_timeout = server.cfg.sync_timeout();
    loop {
        let packet = read(rd, sync_timeout).await?;
        handler
            .deadline_ms
            .set(server.now_ms() + sync_timeout.as_millis() as u64);
        match packet {
            Packet::Ack { zxid } if zxid.counter() != 0 => core.process_ack(server, sid, zxid),
            Packet::Ack { .. } | Packet::Ping => {}
            other @ (Packet::FollowerInfo { .. }
            | Packet::LeaderInfo { .. }
            | Packet::AckEpoch { .. }
            | Packet::Diff { .. }
            | Packet::Trunc { .. }
            | Packet::Snap { .. }
            | Packet::Proposal { .. }
            | Packet::Commit { .. }
            | Packet::NewLeader { .. }
            | Packet::UpToDate) => {
                server.note(format!(
                    "unexpected {} from {}",
                    other.kind(),
                    server.name_of(sid)
                ));
            }
        }
    }
}

fn end_reason(end: LeadEnd) -> String {
    match end {
        LeadEnd::Shutdown(reason) | LeadEnd::Exit(reason) => reason,
    }
}
