//! Following a leader (Follower.followLeader + Learner): connect, register, sync
//! (DIFF/TRUNC/SNAP), then log proposals through the sync thread and apply commits
//! through the commit processor. When the leader is lost the learner closes its
//! socket (nulling the field) and shuts its server down before LOOKING again.

use super::election::ServerState;
use super::server::{durable, Active, Server};
use super::storage::EpochFile;
use super::sync_thread::{AckTarget, LogRequest, SyncThread};
use super::tree::Txn;
use super::wire::{read_packet, Conn, Packet, QUORUM_PORT};
use super::zab::{CommitError, PendingTxns};
use super::zxid::{self, Zxid};
use super::ZkProbe;
use faultline_api::{NodeEvent, Role};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::watch;
use turmoil::net::tcp::OwnedReadHalf;
use turmoil::net::TcpStream;

/// Connection attempts to an elected leader (Learner.connectToLeader).
const CONNECT_TRIES_MAX: u32 = 5;
const CONNECT_RETRY_DELAY: Duration = Duration::from_millis(100);
/// Packets a syncing learner buffers before NEWLEADER/UPTODATE at most.
const SYNC_PACKETS_MAX: usize = 100_000;

/// The learner's view of its connection: `sock` is the field that
/// `closeSocket()` sets to null.
pub(crate) struct Learner {
    pub leader: String,
    sock: RefCell<Option<Rc<Conn>>>,
}

impl Learner {
    fn new(leader: &str) -> Learner {
        Learner {
            leader: leader.to_string(),
            sock: RefCell::new(None),
        }
    }

    /// `writePacket`: a write on a closed socket throws.
    pub fn write(&self, packet: &Packet) -> io::Result<()> {
        match &*self.sock.borrow() {
            Some(conn) => conn.send(packet),
            None => Err(io::Error::new(io::ErrorKind::NotConnected, "Socket closed")),
        }
    }

    /// The `sock` field as it is now: `None` once `closeSocket()` ran.
    pub fn sock(&self) -> Option<Rc<Conn>> {
        self.sock.borrow().clone()
    }

    /// `closeSocket()`: close the socket and null the field; a no-op when closed.
    pub fn close_socket(&self) {
        if let Some(conn) = self.sock.borrow_mut().take() {
            conn.close();
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ZkState {
    Initial,
    Running,
    Shutdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncMode {
    None,
    Diff,
    Snap,
    Trunc,
}

/// FollowerZooKeeperServer: one per FOLLOWING session, with its own sync thread.
pub(crate) struct FollowerServer {
    pub learner: Rc<Learner>,
    pub sync: RefCell<Option<Rc<SyncThread>>>,
    pub pending: RefCell<PendingTxns<Txn>>,
    state: Cell<ZkState>,
    /// Set when a critical thread of this server died (State.ERROR).
    pub error: watch::Sender<Option<String>>,
    sync_mode: Cell<SyncMode>,
}

impl FollowerServer {
    fn new(learner: Rc<Learner>) -> FollowerServer {
        FollowerServer {
            learner,
            sync: RefCell::new(None),
            pending: RefCell::new(PendingTxns::default()),
            state: Cell::new(ZkState::Initial),
            error: watch::channel(None).0,
            sync_mode: Cell::new(SyncMode::None),
        }
    }

    /// `logRequest`: pending for its COMMIT, and queued on the sync thread.
    fn log_request(&self, zxid: Zxid, txn: Txn) {
        self.pending.borrow_mut().push(zxid, txn.clone());
        let sync = self.sync.borrow().clone().expect("started before logging");
        sync.enqueue(LogRequest { zxid, txn });
    }

    /// `commit`: the commit processor applies the txn, logged or not.
    async fn commit(&self, server: &Server, zxid: Zxid) {
        let result = self.pending.borrow_mut().commit(zxid);
        match result {
            Ok(txn) => {
                if server.storage.last_durable().is_none_or(|d| d < zxid) {
                    server.ctx.probe(ZkProbe::AppliedBeforeLogged);
                }
                let _ = server.apply_committed(zxid, &txn);
            }
            Err(CommitError::NoPending) => {
                server.note(format!("committing {zxid} without seeing txn"))
            }
            Err(CommitError::Mismatch { next }) => {
                let reason = format!("committing zxid {zxid} but next pending txn {next}");
                server.exit(&reason).await;
            }
        }
    }
}

/// One FOLLOWING session: follow until the leader is lost, then shut down.
pub(crate) async fn follow(server: &Rc<Server>, leader_sid: u64) {
    server.state.set(ServerState::Following);
    server.established.set(false);
    server.leader_sid.set(Some(leader_sid));
    let leader = server.name_of(leader_sid).to_string();
    let learner = Rc::new(Learner::new(&leader));
    let fzk = Rc::new(FollowerServer::new(learner.clone()));
    *server.active.borrow_mut() = Active::Follower(fzk.clone());
    server.publish();
    let reason = follow_leader(server, &fzk).await;
    // The peer goes back to LOOKING.
    let text = format!("following {leader} ended: {reason}");
    server.role_changed(Role::Candidate, server.current_epoch(), None, text);
    // Follower.followLeader's catch: close the socket (the field becomes null).
    learner.close_socket();
    server.established.set(false);
    server.publish();
    shutdown(server, &fzk).await;
    *server.active.borrow_mut() = Active::None;
}

/// `Learner.shutdown()` -> `zk.shutdown(fullyShutDown)`.
async fn shutdown(server: &Rc<Server>, fzk: &Rc<FollowerServer>) {
    fzk.learner.close_socket();
    let fully = fzk.sync_mode.get() == SyncMode::Snap;
    if fzk.state.get() == ZkState::Running {
        let sync = fzk.sync.borrow().clone();
        if let Some(sync) = sync {
            if sync.is_running() && sync.len() > 0 {
                server.ctx.probe(ZkProbe::SyncBusyAtFollowerShutdown);
            }
            if server.buggy {
                // ZooKeeperServer.shutdown(boolean) is what Learner.shutdown calls;
                // LearnerZooKeeperServer only overrides shutdown(), which stops the
                // sync thread. This one leaves it running with its queue.
                if sync.is_running() {
                    server.record(NodeEvent::service(
                        "SyncThread",
                        format!(
                            "follower shutdown does not stop {} ({} request(s) in hand: {}): it leaks",
                            sync.name,
                            sync.len(),
                            sync.queued_zxids()
                        ),
                    ));
                }
            } else {
                sync.shutdown(server).await;
            }
        }
        // The commit processor stops: uncommitted proposals survive only in the log.
        fzk.pending.borrow_mut().clear();
        if !fully {
            server.fast_forward();
        }
        fzk.state.set(ZkState::Shutdown);
    }
    if fully {
        server.clear_database();
    }
    server.publish();
}

async fn connect_to_leader(server: &Server, leader: &str) -> Result<TcpStream, String> {
    let budget = server.cfg.init_timeout();
    let start = server.ctx.now();
    let mut last = String::from("no attempt");
    let mut stop = server.stop.subscribe();
    for _ in 0..CONNECT_TRIES_MAX {
        let spent = server.ctx.now().saturating_sub(start);
        let Some(remaining) = budget.checked_sub(spent).filter(|d| !d.is_zero()) else {
            break;
        };
        match tokio::time::timeout(remaining, TcpStream::connect((leader, QUORUM_PORT))).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => last = "connect timed out".to_string(),
        }
        tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => return Err("server shutting down".into()),
            _ = tokio::time::sleep(CONNECT_RETRY_DELAY) => {}
        }
    }
    Err(format!("cannot connect to {leader}: {last}"))
}

/// The read side of the learner connection, with everything that ends a read.
struct Link {
    read: OwnedReadHalf,
    closed: watch::Receiver<bool>,
    error: watch::Receiver<Option<String>>,
    stop: watch::Receiver<bool>,
}

impl Link {
    async fn read(&mut self, timeout: Duration) -> Result<Packet, String> {
        let Link {
            read,
            closed,
            error,
            stop,
        } = self;
        tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => Err("server shutting down".into()),
            _ = closed.wait_for(|c| *c) => Err("socket closed".into()),
            e = error.wait_for(|e| e.is_some()) => {
                let why = e.ok().and_then(|e| e.clone()).unwrap_or_default();
                Err(format!("server in ERROR state: {why}"))
            }
            packet = read_packet(read, timeout) => packet.map_err(|e| e.to_string()),
        }
    }
}

fn send(learner: &Learner, packet: &Packet) -> Result<(), String> {
    learner
        .write(packet)
        .map_err(|e| format!("{} failed: {e}", packet.kind()))
}

/// `Follower.followLeader`; returns why it ended.
async fn follow_leader(server: &Rc<Server>, fzk: &Rc<FollowerServer>) -> String {
    let learner = fzk.learner.clone();
    let stream = match connect_to_leader(server, &learner.leader).await {
        Ok(stream) => stream,
        Err(reason) => return reason,
    };
    let (read, write) = stream.into_split();
    let conn = Conn::spawn(write, &learner.leader, server.ctx.handle());
    *learner.sock.borrow_mut() = Some(conn.clone());
    let mut link = Link {
        read,
        closed: conn.closed(),
        error: fzk.error.subscribe(),
        stop: server.stop.subscribe(),
    };
    drop(conn);
    let epoch = match register(server, &learner, &mut link).await {
        Ok(epoch) => epoch,
        Err(reason) => return reason,
    };
    if let Err(reason) = sync_with_leader(server, fzk, &mut link, epoch).await {
        return reason;
    }
    loop {
        let packet = match link.read(server.cfg.sync_timeout()).await {
            Ok(packet) => packet,
            Err(reason) => return reason,
        };
        if let Err(reason) = process_packet(server, fzk, packet).await {
            return reason;
        }
        server.publish();
    }
}

/// FOLLOWERINFO -> LEADERINFO -> ACKEPOCH; returns the new epoch.
async fn register(server: &Server, learner: &Learner, link: &mut Link) -> Result<u32, String> {
    let info = Packet::FollowerInfo {
        sid: server.sid,
        accepted_epoch: server.accepted_epoch(),
    };
    send(learner, &info)?;
    // One packet kind is the handshake's next step; any other, now or added
    // later, is a protocol error.
    let packet = link.read(server.cfg.init_timeout()).await?;
    let Packet::LeaderInfo { epoch } = packet else {
        return Err(format!("expected LEADERINFO, got {}", packet.kind()));
    };
    let accepted = server.accepted_epoch();
    let current_epoch = if epoch > accepted {
        server
            .set_epoch(EpochFile::Accepted, epoch)
            .expect("simulated disk write");
        Some(server.current_epoch())
    } else if epoch == accepted {
        // Already accepted this epoch: our zxid counts, a second epoch ack does not.
        None
    } else {
        return Err(format!(
            "leader's epoch {epoch} is less than our accepted epoch {accepted}"
        ));
    };
    let ack = Packet::AckEpoch {
        current_epoch,
        last_zxid: server.last_processed(),
    };
    send(learner, &ack)?;
    Ok(epoch)
}

/// `Learner.syncWithLeader`, as upstream does it now: committed txns that arrive
/// before NEWLEADER are logged and fsynced before the NEWLEADER ACK (ZOOKEEPER-
/// 3911/4646); the sync thread starts with the server at UPTODATE.
async fn sync_with_leader(
    server: &Rc<Server>,
    fzk: &Rc<FollowerServer>,
    link: &mut Link,
    epoch: u32,
) -> Result<(), String> {
    let learner = fzk.learner.clone();
    let init = server.cfg.init_timeout();
    let (how, snapshot_needed) = match link.read(init).await? {
        Packet::Diff { zxid } => {
            fzk.sync_mode.set(SyncMode::Diff);
            (format!("DIFF at {zxid}"), false)
        }
        Packet::Snap { zxid, mut tree } => {
            fzk.sync_mode.set(SyncMode::Snap);
            tree.set_last_processed(zxid);
            let mut db = server.db.borrow_mut();
            db.tree = tree;
            db.committed.clear();
            db.initialized = true;
            (format!("SNAP at {zxid}"), true)
        }
        Packet::Trunc { zxid } => {
            fzk.sync_mode.set(SyncMode::Trunc);
            let dropped = server.storage.truncate(zxid).expect("simulated disk write");
            server.load_database().expect("simulated disk read");
            server.db.borrow_mut().tree.set_last_processed(zxid);
            (
                format!("TRUNC to {zxid} ({dropped} record(s) dropped)"),
                true,
            )
        }
        other @ (Packet::FollowerInfo { .. }
        | Packet::LeaderInfo { .. }
        | Packet::AckEpoch { .. }
        | Packet::Proposal { .. }
        | Packet::Commit { .. }
        | Packet::NewLeader { .. }
        | Packet::UpToDate
        | Packet::Ack { .. }
        | Packet::Ping) => return Err(format!("unexpected {} from the leader", other.kind())),
    };
    let mut not_logged: VecDeque<(Zxid, Txn)> = VecDeque::new();
    let mut committed: VecDeque<Zxid> = VecDeque::new();
    let mut write_to_txn_log = !snapshot_needed;
    loop {
        match link.read(init).await? {
            Packet::Proposal { zxid, txn } => {
                if not_logged.len() >= SYNC_PACKETS_MAX {
                    return Err("too many proposals during sync".into());
                }
                not_logged.push_back((zxid, txn));
            }
            Packet::Commit { zxid } => {
                if write_to_txn_log {
                    committed.push_back(zxid);
                } else if not_logged.front().is_some_and(|(z, _)| *z == zxid) {
                    // Before the NEWLEADER snapshot: applied in memory only; the
                    // snapshot makes it durable.
                    let (zxid, txn) = not_logged.pop_front().expect("checked");
                    let _ = server.apply_committed(zxid, &txn);
                }
            }
            Packet::NewLeader { zxid } => {
                if snapshot_needed {
                    server.take_snapshot("synced with the leader").await;
                }
                write_to_txn_log = true;
                persist_committed(server, &mut not_logged, &mut committed);
                server
                    .set_epoch(EpochFile::Current, epoch)
                    .expect("simulated disk write");
                fzk.sync_mode.set(SyncMode::None);
                send(&learner, &Packet::Ack { zxid })?;
            }
            Packet::UpToDate => break,
            // Pings come once the leader sent the sync; they need no answer yet.
            Packet::Ping => {}
            other @ (Packet::FollowerInfo { .. }
            | Packet::LeaderInfo { .. }
            | Packet::AckEpoch { .. }
            | Packet::Diff { .. }
            | Packet::Trunc { .. }
            | Packet::Snap { .. }
            | Packet::Ack { .. }) => {
                server.note(format!("ignoring {} during sync", other.kind()));
            }
        }
    }
    send(
        &learner,
        &Packet::Ack {
            zxid: Zxid::new(epoch, 0),
        },
    )?;
    // zk.startup(): a new FollowerZooKeeperServer pipeline with a new sync thread.
    let sync = SyncThread::start(
        server,
        AckTarget::Follower {
            learner: learner.clone(),
            server: Rc::downgrade(fzk),
        },
    );
    *fzk.sync.borrow_mut() = Some(sync);
    fzk.state.set(ZkState::Running);
    server.election.borrow_mut().update_epoch(epoch);
    let logged = zxid::ranges(not_logged.iter().map(|(z, _)| *z));
    for (zxid, txn) in not_logged {
        fzk.log_request(zxid, txn);
    }
    for zxid in committed {
        fzk.commit(server, zxid).await;
    }
    server.established.set(true);
    let text = format!(
        "following {} in epoch {epoch}: synced by {how}, last processed {}, then logging {logged}",
        learner.leader,
        server.last_processed()
    );
    server.role_changed(Role::Follower, epoch, Some(&learner.leader), text);
    server.publish();
    Ok(())
}

/// At NEWLEADER: append, apply and fsync the txns the leader already committed.
fn persist_committed(
    server: &Server,
    not_logged: &mut VecDeque<(Zxid, Txn)>,
    committed: &mut VecDeque<Zxid>,
) {
    if committed.is_empty() {
        return;
    }
    let mut logged = Vec::new();
    while let Some(zxid) = committed.pop_front() {
        if not_logged.front().is_none_or(|(z, _)| *z != zxid) {
            server.note(format!(
                "committing {zxid} during sync, but it is not the next proposal"
            ));
            continue;
        }
        let (zxid, txn) = not_logged.pop_front().expect("checked");
        server
            .storage
            .append(zxid, &txn)
            .expect("simulated disk write");
        let _ = server.apply_committed(zxid, &txn);
        logged.push(zxid);
    }
    server.storage.sync().expect("simulated disk write");
    let text = format!(
        "txn log fsync {} (committed during sync, before the NEWLEADER ack)",
        zxid::ranges(logged.iter().copied())
    );
    server.record(durable("txn log", &logged, text));
}

/// `Follower.processPacket`.
async fn process_packet(
    server: &Server,
    fzk: &Rc<FollowerServer>,
    packet: Packet,
) -> Result<(), String> {
    match packet {
        Packet::Ping => send(&fzk.learner, &Packet::Ping),
        Packet::Proposal { zxid, txn } => {
            fzk.log_request(zxid, txn);
            Ok(())
        }
        Packet::Commit { zxid } => {
            fzk.commit(server, zxid).await;
            Ok(())
        }
        Packet::UpToDate => {
            server.note("UPTODATE after Zab 1.0 sync: ignored");
            Ok(())
        }
        other @ (Packet::FollowerInfo { .. }
        | Packet::LeaderInfo { .. }
        | Packet::AckEpoch { .. }
        | Packet::Diff { .. }
        | Packet::Trunc { .. }
        | Packet::Snap { .. }
        | Packet::NewLeader { .. }
        | Packet::Ack { .. }) => {
            server.note(format!("unexpected {} while following", other.kind()));
            Ok(())
        }
    }
}
