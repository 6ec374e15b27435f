//! The sync thread (SyncRequestProcessor -> SendAckRequestProcessor on a follower,
//! -> AckRequestProcessor on the leader): one task per server pipeline, driving the
//! pure [`SyncQueue`]. The fsync fail point stalls this task only; everything queued
//! behind it waits. How a failed ACK is handled is where ZOOKEEPER-4541 lives.

use super::follower::{FollowerServer, Learner};
use super::leader::LeaderCore;
use super::server::{durable, Server};
use super::sync_queue::{Next, QueueState, SyncQueue, BATCH_MAX};
use super::tree::Txn;
use super::wire::Packet;
use super::zxid::{self, Zxid};
use super::{ZkPoint, ZkProbe};
use faultline_api::NodeEvent;
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use tokio::sync::{watch, Notify};

#[derive(Clone, Debug)]
pub(crate) struct LogRequest {
    pub zxid: Zxid,
    pub txn: Txn,
}

/// Where the thread's ACKs go after a flush.
pub(crate) enum AckTarget {
    /// SendAckRequestProcessor: over the learner connection. The thread keeps the
    /// Learner it was built with, whatever becomes of that session.
    Follower {
        learner: Rc<Learner>,
        server: Weak<FollowerServer>,
    },
    /// AckRequestProcessor: the leader acknowledges its own proposals.
    Leader(Weak<LeaderCore>),
}

pub(crate) struct SyncThread {
    pub name: String,
    queue: RefCell<SyncQueue<LogRequest>>,
    wake: Notify,
    target: AckTarget,
    exited: watch::Sender<bool>,
    death: RefCell<Option<String>>,
}

impl SyncThread {
    pub fn start(server: &Rc<Server>, target: AckTarget) -> Rc<SyncThread> {
        let n = server.next_thread.get();
        server.next_thread.set(n + 1);
        let thread = Rc::new(SyncThread {
            name: format!("SyncThread:{}#{n}", server.sid),
            queue: RefCell::new(SyncQueue::new(BATCH_MAX)),
            wake: Notify::new(),
            target,
            exited: watch::channel(false).0,
            death: RefCell::new(None),
        });
        server.register_thread(thread.clone());
        tokio::task::spawn_local(thread.clone().run(server.clone()));
        thread
    }

    pub fn enqueue(&self, request: LogRequest) {
        self.queue.borrow_mut().push(request);
        self.wake.notify_one();
    }

    pub fn len(&self) -> usize {
        self.queue.borrow().len()
    }

    pub fn is_running(&self) -> bool {
        self.queue.borrow().state() == QueueState::Running
    }

    pub fn status(&self) -> String {
        match self.queue.borrow().state() {
            QueueState::Running => "running".to_string(),
            QueueState::Exited => "exited".to_string(),
            QueueState::Dead => {
                format!("dead: {}", self.death.borrow().clone().unwrap_or_default())
            }
        }
    }

    /// Zxids in hand, for the trail.
    pub fn queued_zxids(&self) -> String {
        zxid::ranges(self.queue.borrow().requests().iter().map(|r| r.zxid))
    }

    async fn run(self: Rc<Self>, server: Rc<Server>) {
        loop {
            let next = self.queue.borrow_mut().next_step();
            match next {
                Next::Idle => self.wake.notified().await,
                Next::Append(request) => {
                    if let Err(e) = server.storage.append(request.zxid, &request.txn) {
                        self.die(
                            &server,
                            format!("IOException appending to the txn log: {e}"),
                        );
                        return;
                    }
                    server.after_append().await;
                }
                Next::Flush(batch) => match self.flush(&server, &batch).await {
                    Ok(()) => self.queue.borrow_mut().flushed(),
                    Err(reason) => {
                        self.die(&server, reason);
                        return;
                    }
                },
                Next::Exit => {
                    self.exited.send_replace(true);
                    return;
                }
                Next::Stopped => return,
            }
            server.publish();
        }
    }

    /// `flush()`: fsync the log, then ACK every request of the batch.
    async fn flush(&self, server: &Server, batch: &[LogRequest]) -> Result<(), String> {
        if batch.is_empty() {
            return Ok(());
        }
        if let Err(kind) = server.ctx.faults().hit(ZkPoint::Fsync).await {
            return Err(format!("IOException: fsync of the txn log failed ({kind})"));
        }
        server
            .storage
            .sync()
            .map_err(|e| format!("IOException: fsync of the txn log failed ({e})"))?;
        let zxids: Vec<Zxid> = batch.iter().map(|r| r.zxid).collect();
        let text = format!(
            "{}: txn log fsync {}",
            self.name,
            zxid::ranges(zxids.iter().copied())
        );
        server.record(durable("txn log", &zxids, text));
        for request in batch {
            self.send_ack(server, request.zxid)?;
        }
        Ok(())
    }

    fn send_ack(&self, server: &Server, zxid: Zxid) -> Result<(), String> {
        let learner = match &self.target {
            AckTarget::Leader(core) => {
                if let Some(core) = core.upgrade() {
                    core.process_ack(server, server.sid, zxid);
                }
                return Ok(());
            }
            AckTarget::Follower { learner, .. } => learner,
        };
        let Err(error) = learner.write(&Packet::Ack { zxid }) else {
            return Ok(());
        };
        if learner.sock().is_none() {
            server.ctx.probe(ZkProbe::AckAfterSocketClosed);
        }
        server.note(format!(
            "{}: ACK {zxid} to {} failed: {error}",
            self.name, learner.leader
        ));
        if server.buggy {
            // SendAckRequestProcessor before ZOOKEEPER-4409:
            //   if (!learner.sock.isClosed()) learner.sock.close();
            // dereferences the field that closeSocket() has set to null.
            match learner.sock() {
                None => {
                    return Err(format!(
                        "NullPointerException in SendAckRequestProcessor: learner.sock is null (closed when {} was lost)",
                        learner.leader
                    ))
                }
                Some(conn) => {
                    if !conn.is_closed() {
                        conn.close();
                    }
                }
            }
        } else {
            // ZOOKEEPER-4409: learner.closeSocket(), a no-op when already closed.
            learner.close_socket();
        }
        Ok(())
    }

    /// An exception escaped the loop ("SyncRequestProcessor exited!").
    fn die(&self, server: &Server, reason: String) {
        server.ctx.probe(ZkProbe::SyncThreadDied);
        let lost = self.queue.borrow_mut().die();
        *self.death.borrow_mut() = Some(reason.clone());
        server.deaths.set(server.deaths.get() + 1);
        let last = server.last_processed();
        let unlogged: Vec<Zxid> = lost.unlogged.iter().map(|r| r.zxid).collect();
        let applied: Vec<Zxid> = unlogged.iter().copied().filter(|z| *z <= last).collect();
        server.lost.borrow_mut().extend(applied.iter().copied());
        server.record(NodeEvent::service(
            "SyncThread",
            format!(
                "{} exited: {reason}; {} queued request(s) never logged: {} (already applied to the data tree: {})",
                self.name,
                unlogged.len(),
                zxid::ranges(unlogged.iter().copied()),
                zxid::ranges(applied.iter().copied()),
            ),
        ));
        match &self.target {
            AckTarget::Follower { server: fzk, .. } => {
                if let Some(fzk) = fzk.upgrade() {
                    // ZooKeeperCriticalThread: the server it belongs to goes to ERROR.
                    fzk.error.send_replace(Some(format!("{} died", self.name)));
                }
            }
            AckTarget::Leader(core) => {
                if let Some(core) = core.upgrade() {
                    core.request_shutdown(format!("Unexpected internal error: {} died", self.name));
                }
            }
        }
        // A dead thread joins at once.
        self.exited.send_replace(true);
        server.publish();
    }

    /// `SyncRequestProcessor.shutdown()`: request of death behind everything
    /// queued, join, then flush what the loop appended.
    pub async fn shutdown(&self, server: &Server) {
        let in_hand = self.len();
        let zxids = self.queued_zxids();
        self.queue.borrow_mut().push_death();
        self.wake.notify_one();
        let mut exited = self.exited.subscribe();
        let _ = exited.wait_for(|e| *e).await;
        let rest = self.queue.borrow_mut().take_unflushed();
        if let Err(reason) = self.flush(server, &rest).await {
            server.record(NodeEvent::service(
                "SyncThread",
                format!("{}: flush at shutdown failed: {reason}", self.name),
            ));
        }
        server.record(NodeEvent::service(
            "SyncThread",
            format!(
                "{} shut down: drained {in_hand} request(s) in hand ({zxids}); txn log durable to {}",
                self.name,
                server.storage.durable().last().copied().unwrap_or(Zxid::ZERO)
            ),
        ));
        server.publish();
    }
}
