//! openraft's log storage on the node's simulated disk.
//!
//! The log is an append-only file of checksummed records (entries, truncations,
//! purges), replayed on start. `append` writes and returns at once, as openraft
//! asks: the entries are readable but volatile. A writer task fsyncs in order
//! and only then tells openraft they are durable; the `log.flush` fail point sits
//! in front of the fsync, so a test can hold a node's flush while it keeps
//! receiving and sending. The committed log id is written atomically (durable on
//! return).
//!
//! The vote goes through the same writer, behind every append before it:
//! openraft requires write IO to be serialized ("saving a vote and appending a
//! log entry must be serialized too", `RaftLogStorage`), and it leans on that. A
//! follower answers an AppendEntries once its flushed IO reaches the request's,
//! and IO ids order by vote first, so a newer vote made durable ahead of older
//! entries reads as "those entries are flushed": the follower acknowledges
//! entries it does not hold, and a leader commits them on a minority (found by
//! the chaos scenario, alpha.25 seed 9, as `committed_on_quorum`).

use crate::oracle::Oracle;
use crate::points::Point;
use crate::probes::OpenraftProbe;
use crate::types::{Entry, Kv, LogId, Vote};
use faultline_api::{NodeCtx, RecordLog};
use openraft::storage::IOFlushed;
use openraft::storage::RaftLogStorage;
use openraft::{LogState, RaftLogReader};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::ops::RangeBounds;
use std::rc::Rc;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

const LOG_FILE: &str = "raft.log";
const VOTE_FILE: &str = "vote";
const COMMITTED_FILE: &str = "committed";

#[derive(Serialize, Deserialize)]
enum Record {
    Entry(Entry),
    /// Every entry after this index is gone (`None`: all of them).
    TruncateAfter(Option<u64>),
    Purge(LogId),
}

pub struct LogInner {
    pub entries: BTreeMap<u64, Entry>,
    pub purged: Option<LogId>,
    vote: Option<Vote>,
    committed: Option<LogId>,
    /// The last log id fsynced (what a crash keeps).
    pub durable: Option<LogId>,
}

impl LogInner {
    /// The vote as the log store holds it.
    pub fn vote(&self) -> Option<Vote> {
        self.vote.clone()
    }

    /// index -> log id of the entries in the log.
    pub fn log_ids(&self) -> BTreeMap<u64, LogId> {
        self.entries.iter().map(|(i, e)| (*i, e.log_id)).collect()
    }
}

struct Flush {
    ids: Vec<LogId>,
    callback: IOFlushed<Kv>,
}

/// One write of the writer task, done in submission order.
enum Job {
    /// Appended entries to fsync; the callback tells openraft.
    Flush(Flush),
    /// A vote to persist once every earlier job is durable.
    Vote(Vote, oneshot::Sender<io::Result<()>>),
}

#[derive(Clone)]
pub struct LogStore {
    pub inner: Rc<RefCell<LogInner>>,
    ctx: Rc<NodeCtx>,
    records: RecordLog,
    writer: UnboundedSender<Job>,
    oracle: Rc<RefCell<Oracle>>,
    id: u64,
}

fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> io::Result<T> {
    serde_json::from_slice(bytes).map_err(io::Error::other)
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("log records serialize")
}

impl LogStore {
    /// Open the log from disk and start its flusher.
    pub fn open(ctx: Rc<NodeCtx>, oracle: Rc<RefCell<Oracle>>, id: u64) -> io::Result<LogStore> {
        let records = RecordLog::new(ctx.disk(), LOG_FILE);
        let mut entries = BTreeMap::new();
        let mut purged = None;
        for record in records.read_all()? {
            match decode::<Record>(&record)? {
                Record::Entry(entry) => {
                    entries.split_off(&entry.log_id.index);
                    entries.insert(entry.log_id.index, entry);
                }
                Record::TruncateAfter(last) => {
                    entries.split_off(&last.map_or(0, |l| l + 1));
                }
                Record::Purge(upto) => {
                    entries = entries.split_off(&(upto.index + 1));
                    purged = Some(upto);
                }
            }
        }
        // A process restart keeps writes that were never fsynced (the page cache
        // survives it, a machine crash would not). openraft takes what it reads
        // here as persisted, so make it so before telling anyone.
        records.sync()?;
        let disk = ctx.disk();
        let vote = disk.read(VOTE_FILE)?.map(|b| decode(&b)).transpose()?;
        let committed = disk.read(COMMITTED_FILE)?.map(|b| decode(&b)).transpose()?;
        // Whatever survived on disk is durable.
        let durable = entries
            .values()
            .next_back()
            .map(|e: &Entry| e.log_id)
            .or(purged);
        {
            let mut oracle = oracle.borrow_mut();
            oracle.truncated(id, None);
            oracle.flushed(id, entries.values().map(|e: &Entry| e.log_id));
        }
        let inner = Rc::new(RefCell::new(LogInner {
            entries,
            purged,
            vote,
            committed,
            durable,
        }));
        let (writer, jobs) = unbounded_channel();
        let store = LogStore {
            inner,
            ctx,
            records,
            writer,
            oracle: oracle.clone(),
            id,
        };
        store.spawn_writer(jobs, oracle, id);
        Ok(store)
    }

    fn spawn_writer(&self, mut jobs: UnboundedReceiver<Job>, oracle: Rc<RefCell<Oracle>>, id: u64) {
        let store = self.clone();
        crate::spawn(async move {
            // A job taken from the queue while batching that is not a flush.
            let mut next: Option<Job> = None;
            loop {
                let job = match next.take() {
                    Some(job) => job,
                    None => match jobs.recv().await {
                        Some(job) => job,
                        None => return,
                    },
                };
                let first = match job {
                    Job::Vote(vote, done) => {
                        let _ = done.send(store.write_vote(&vote));
                        continue;
                    }
                    Job::Flush(first) => first,
                };
                let mut batch = vec![first];
                if let Err(kind) = store.ctx.faults().hit(Point::LogFlush).await {
                    let error = io::Error::other(format!("injected log flush error: {kind}"));
                    for job in batch {
                        job.callback
                            .io_completed(Err(io::Error::new(error.kind(), error.to_string())));
                    }
                    continue;
                }
                // Every append queued while this flush waited goes out with it;
                // a vote queued behind them waits for this fsync.
                while let Ok(job) = jobs.try_recv() {
                    match job {
                        Job::Flush(flush) => batch.push(flush),
                        vote @ Job::Vote(..) => {
                            next = Some(vote);
                            break;
                        }
                    }
                }
                if let Err(error) = store.records.sync() {
                    for job in batch {
                        job.callback
                            .io_completed(Err(io::Error::new(error.kind(), error.to_string())));
                    }
                    continue;
                }
                {
                    let mut inner = store.inner.borrow_mut();
                    let mut oracle = oracle.borrow_mut();
                    for job in &batch {
                        // Entries truncated since they were appended are not in the log.
                        let kept: Vec<LogId> = job
                            .ids
                            .iter()
                            .filter(|l| inner.entries.get(&l.index).map(|e| e.log_id) == Some(**l))
                            .copied()
                            .collect();
                        if let Some(last) = kept.last() {
                            inner.durable = Some(*last);
                        }
                        oracle.flushed(id, kept);
                    }
                }
                for job in batch {
                    job.callback.io_completed(Ok(()));
                }
            }
        });
    }

    fn write_vote(&self, vote: &Vote) -> io::Result<()> {
        self.ctx.disk().write_atomic(VOTE_FILE, &encode(vote))?;
        self.inner.borrow_mut().vote = Some(*vote);
        Ok(())
    }

    pub fn last_log_id(&self) -> Option<LogId> {
        let inner = self.inner.borrow();
        inner
            .entries
            .values()
            .next_back()
            .map(|e| e.log_id)
            .or(inner.purged)
    }
}

impl RaftLogReader<Kv> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        if let Err(kind) = self.ctx.faults().hit(Point::LogRead).await {
            return Err(io::Error::other(format!("injected log read error: {kind}")));
        }
        let inner = self.inner.borrow();
        Ok(inner.entries.range(range).map(|(_, e)| e.clone()).collect())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        Ok(self.inner.borrow().vote)
    }
}

impl RaftLogStorage<Kv> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<Kv>, io::Error> {
        let purged = self.inner.borrow().purged;
        Ok(LogState {
            last_purged_log_id: purged,
            last_log_id: self.last_log_id(),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        // Durable on return, and never ahead of an append submitted before it.
        let (done, written) = oneshot::channel();
        self.writer
            .send(Job::Vote(*vote, done))
            .map_err(|_| io::Error::other("the log writer has stopped"))?;
        written
            .await
            .map_err(|_| io::Error::other("the log writer has stopped"))?
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), io::Error> {
        // openraft may report an index committed before this node's own copy of
        // it is fsynced (a follower learns the commit from the leader). Persisted
        // as given, a crash leaves a committed index past the durable log and
        // openraft cannot start again ("Failed to get log entries"). The durable
        // tail is committed too (it is in the same log, before it), so that is
        // what is written; the file catches up on the next call.
        let durable = self.inner.borrow().durable;
        let persisted = match (committed, durable) {
            (Some(c), Some(d)) if c.index > d.index => Some(d),
            (Some(_), None) => None,
            (c, _) => c,
        };
        if persisted != committed {
            self.ctx.probe(OpenraftProbe::CommittedPastOwnFlush);
        }
        self.ctx
            .disk()
            .write_atomic(COMMITTED_FILE, &encode(&persisted))?;
        self.inner.borrow_mut().committed = committed;
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, io::Error> {
        Ok(self.inner.borrow().committed)
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<Kv>) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry>,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        if let Some(first) = entries.first() {
            let last = self.last_log_id().map(|l| l.index);
            let ctx = &self.ctx;
            let name = |n: u64| crate::node::name_of(ctx, n);
            let found = self
                .oracle
                .borrow_mut()
                .appended(self.id, first.log_id.index, last, &name);
            if let Some(message) = found {
                let invariant = crate::oracle::LOG_CONTIGUOUS;
                ctx.note(format!("invariant {invariant} violated: {message}"));
                ctx.violation(invariant, &message);
            }
        }
        let records: Vec<Vec<u8>> = entries
            .iter()
            .map(|e| encode(&Record::Entry(e.clone())))
            .collect();
        self.records.append(&records)?;
        let ids: Vec<LogId> = entries.iter().map(|e| e.log_id).collect();
        {
            let mut inner = self.inner.borrow_mut();
            for entry in entries {
                inner.entries.split_off(&entry.log_id.index);
                inner.entries.insert(entry.log_id.index, entry);
            }
        }
        self.writer
            .send(Job::Flush(Flush { ids, callback }))
            .map_err(|_| io::Error::other("the log writer has stopped"))
    }

    async fn truncate_after(&mut self, last: Option<LogId>) -> Result<(), io::Error> {
        let last = last.map(|l| l.index);
        self.records
            .append(&[encode(&Record::TruncateAfter(last))])?;
        // A truncation is made durable at once: a crash must not bring back
        // entries openraft was told are gone.
        self.records.sync()?;
        self.oracle.borrow_mut().truncated(self.id, last);
        let mut inner = self.inner.borrow_mut();
        let removed = inner.entries.split_off(&last.map_or(0, |l| l + 1));
        if !removed.is_empty() {
            self.ctx.probe(OpenraftProbe::LogTruncated);
        }
        inner.durable = inner
            .entries
            .values()
            .next_back()
            .map(|e| e.log_id)
            .or(inner.purged);
        Ok(())
    }

    async fn purge(&mut self, upto: LogId) -> Result<(), io::Error> {
        self.records.append(&[encode(&Record::Purge(upto))])?;
        let mut inner = self.inner.borrow_mut();
        inner.entries = inner.entries.split_off(&(upto.index + 1));
        inner.purged = Some(upto);
        Ok(())
    }
}
