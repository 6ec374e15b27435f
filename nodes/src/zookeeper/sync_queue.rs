//! The queue of the sync thread (SyncRequestProcessor) as a pure state machine.
//!
//! One sequential worker: it appends queued requests to the txn log, and when the
//! queue runs dry (or a batch is full) it flushes: fsync, then an ACK per request.
//! While a flush is in progress nothing else moves, so a request queued behind a
//! stalled fsync waits for it. A request of death ends the loop without flushing;
//! `shutdown()` flushes what is left after joining the thread. A thread that dies
//! (an exception escapes its loop) drops everything still queued: those requests
//! are never appended. What it had appended and not flushed stays in `toFlush`,
//! so a later `shutdown()` flushes it again (an fsync that failed is retried).

use std::collections::VecDeque;

/// Requests per flush at most (ZooKeeper's `zookeeper.maxBatchSize` default).
pub const BATCH_MAX: usize = 1000;
/// Bound on queued requests; a follower holds at most the leader's outstanding
/// proposals, which clients bound long before this.
pub const QUEUE_MAX: usize = 100_000;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Item<R> {
    Request(R),
    Death,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueState {
    Running,
    /// Took the request of death: the loop ended cleanly.
    Exited,
    /// An exception escaped the loop.
    Dead,
}

/// What the worker does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next<R> {
    /// Append this request to the log (buffered, not durable).
    Append(R),
    /// fsync, then acknowledge these requests; report back with [`SyncQueue::flushed`].
    Flush(Vec<R>),
    /// Nothing queued: wait for a request.
    Idle,
    /// The request of death: leave the loop (unflushed requests stay for `shutdown`).
    Exit,
    /// The loop already ended.
    Stopped,
}

/// What a dying thread still held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost<R> {
    /// Queued, never appended to the log.
    pub unlogged: Vec<R>,
    /// Appended (and fsynced if the flush got that far) but never acknowledged.
    pub unacked: Vec<R>,
}

#[derive(Clone, Debug)]
pub struct SyncQueue<R> {
    queued: VecDeque<Item<R>>,
    to_flush: Vec<R>,
    flushing: bool,
    state: QueueState,
    batch_max: usize,
}

impl<R: Clone> SyncQueue<R> {
    pub fn new(batch_max: usize) -> Self {
        assert!(batch_max > 0);
        SyncQueue {
            queued: VecDeque::new(),
            to_flush: Vec::new(),
            flushing: false,
            state: QueueState::Running,
            batch_max,
        }
    }

    pub fn state(&self) -> QueueState {
        self.state
    }

    /// Requests in hand: queued plus appended-but-unflushed.
    pub fn len(&self) -> usize {
        let queued = self
            .queued
            .iter()
            .filter(|i| matches!(i, Item::Request(_)))
            .count();
        queued + self.to_flush.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Requests in hand, oldest first: appended-but-unflushed, then queued.
    pub fn requests(&self) -> Vec<R> {
        let queued = self.queued.iter().filter_map(|i| match i {
            Item::Request(r) => Some(r.clone()),
            Item::Death => None,
        });
        self.to_flush.iter().cloned().chain(queued).collect()
    }

    /// `processRequest`: enqueue. A dead or exited thread's queue still takes the
    /// request (a LinkedBlockingQueue nobody reads), which is how it gets lost.
    pub fn push(&mut self, request: R) {
        assert!(self.queued.len() < QUEUE_MAX, "sync queue over its bound");
        self.queued.push_back(Item::Request(request));
    }

    /// `shutdown()`'s first step: the request of death, behind everything queued.
    pub fn push_death(&mut self) {
        self.queued.push_back(Item::Death);
    }

    pub fn next_step(&mut self) -> Next<R> {
        assert!(!self.flushing, "the worker is in a flush");
        if self.state != QueueState::Running {
            return Next::Stopped;
        }
        if self.to_flush.len() >= self.batch_max {
            self.flushing = true;
            return Next::Flush(self.to_flush.clone());
        }
        match self.queued.pop_front() {
            None if self.to_flush.is_empty() => Next::Idle,
            None => {
                self.flushing = true;
                Next::Flush(self.to_flush.clone())
            }
            Some(Item::Death) => {
                self.state = QueueState::Exited;
                Next::Exit
            }
            Some(Item::Request(request)) => {
                self.to_flush.push(request.clone());
                Next::Append(request)
            }
        }
    }

    /// The flush handed out by [`SyncQueue::next_step`] completed.
    pub fn flushed(&mut self) {
        assert!(self.flushing, "no flush in progress");
        self.flushing = false;
        self.to_flush.clear();
    }

    /// After the thread exited (join), `shutdown()` flushes what it left.
    pub fn take_unflushed(&mut self) -> Vec<R> {
        assert_ne!(self.state, QueueState::Running, "join before flushing");
        self.flushing = false;
        std::mem::take(&mut self.to_flush)
    }

    /// An exception escaped the loop: the thread is gone with what it held.
    pub fn die(&mut self) -> Lost<R> {
        self.state = QueueState::Dead;
        self.flushing = false;
        let unlogged = self
            .queued
            .drain(..)
            .filter_map(|i| match i {
                Item::Request(r) => Some(r),
                Item::Death => None,
            })
            .collect();
        Lost {
            unlogged,
            unacked: self.to_flush.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_waits_behind_the_stalled_fsync_of_x() {
        let mut q = SyncQueue::new(BATCH_MAX);
        q.push("X");
        assert_eq!(q.next_step(), Next::Append("X"));
        assert_eq!(q.next_step(), Next::Flush(vec!["X"]));
        // The fsync of X stalls; Z arrives meanwhile and waits in the queue.
        q.push("Z");
        assert_eq!(q.len(), 2);
        q.flushed();
        assert_eq!(q.next_step(), Next::Append("Z"));
        assert_eq!(q.next_step(), Next::Flush(vec!["Z"]));
        q.flushed();
        assert_eq!(q.next_step(), Next::Idle);
    }

    #[test]
    fn a_thread_that_dies_after_the_flush_of_x_never_appends_z() {
        let mut q = SyncQueue::new(BATCH_MAX);
        q.push("X");
        q.next_step();
        assert_eq!(q.next_step(), Next::Flush(vec!["X"]));
        q.push("Z");
        // The ACK of X throws: the exception ends the loop.
        let lost = q.die();
        assert_eq!(lost.unlogged, vec!["Z"]);
        assert_eq!(lost.unacked, vec!["X"]);
        assert_eq!(q.state(), QueueState::Dead);
        assert_eq!(q.next_step(), Next::Stopped);
        // Nobody reads the queue any more.
        q.push("W");
        assert_eq!(q.next_step(), Next::Stopped);
        // shutdown() after the death flushes the batch the loop left: X, not Z.
        q.push_death();
        assert_eq!(q.take_unflushed(), vec!["X"]);
    }

    #[test]
    fn shutdown_drains_z_before_the_request_of_death() {
        let mut q = SyncQueue::new(BATCH_MAX);
        q.push("X");
        q.next_step();
        assert_eq!(q.next_step(), Next::Flush(vec!["X"]));
        q.push("Z");
        // shutdown(): the request of death goes behind Z, then join.
        q.push_death();
        q.flushed();
        assert_eq!(q.next_step(), Next::Append("Z"));
        assert_eq!(q.next_step(), Next::Exit);
        assert_eq!(q.next_step(), Next::Stopped);
        // After the join, shutdown() flushes what the loop appended.
        assert_eq!(q.take_unflushed(), vec!["Z"]);
    }

    #[test]
    fn a_full_batch_flushes_before_taking_more() {
        let mut q = SyncQueue::new(2);
        for r in ["a", "b", "c"] {
            q.push(r);
        }
        assert_eq!(q.next_step(), Next::Append("a"));
        assert_eq!(q.next_step(), Next::Append("b"));
        assert_eq!(q.next_step(), Next::Flush(vec!["a", "b"]));
        q.flushed();
        assert_eq!(q.next_step(), Next::Append("c"));
        assert_eq!(q.next_step(), Next::Flush(vec!["c"]));
    }

    #[test]
    fn queued_requests_batch_into_one_flush() {
        let mut q = SyncQueue::new(BATCH_MAX);
        q.push("a");
        q.push("b");
        assert_eq!(q.next_step(), Next::Append("a"));
        assert_eq!(q.next_step(), Next::Append("b"));
        assert_eq!(q.next_step(), Next::Flush(vec!["a", "b"]));
    }
}
