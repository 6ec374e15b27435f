//! openraft's log storage: the kit's durable log (`faultline_api::kit::log`) on
//! the node's simulated disk, behind `RaftLogStorage`.
//!
//! `append` writes and returns at once, as openraft asks; the kit's writer task
//! fsyncs in order and only then calls openraft's `IOFlushed` (the `log.flush`
//! fail point sits in front of the fsync). The committed log id is written
//! atomically (durable on return).
//!
//! The vote goes through the same writer (`DurableLog::save`), behind every
//! append before it: openraft requires write IO to be serialized ("saving a vote
//! and appending a log entry must be serialized too", `RaftLogStorage`), and it
//! leans on that. A follower answers an AppendEntries once its flushed IO reaches
//! the request's, and IO ids order by vote first, so a newer vote made durable
//! ahead of older entries reads as "those entries are flushed": the follower
//! acknowledges entries it does not hold, and a leader commits them on a minority
//! (found by the chaos scenario, alpha.25 seed 9, as `committed_on_quorum`).

use crate::probes::OpenraftProbe;
use crate::types::{Entry, Kv, LogId, Oracle, Vote};
use faultline_api::NodeCtx;
use faultline_api::kit::log::{Change, DurableLog, EntryKey};
use faultline_api::kit::raft::{self, RaftEvent};
use openraft::storage::{IOFlushed, RaftLogStorage};
use openraft::{LogState, RaftLogReader};
use std::cell::Cell;
use std::fmt::Debug;
use std::io;
use std::ops::RangeBounds;
use std::rc::Rc;

const LOG_FILE: &str = "raft.log";
const VOTE_FILE: &str = "vote";
const COMMITTED_FILE: &str = "committed";

const KEY: EntryKey<Entry, LogId> = EntryKey {
    id: |entry| entry.log_id,
    index: |id| id.index,
};

#[derive(Clone)]
pub struct LogStore {
    pub log: DurableLog<Entry, LogId>,
    ctx: Rc<NodeCtx>,
    /// The run's oracle, and this node's id in it (an append is checked for a
    /// gap before it is written).
    oracle: Rc<Oracle>,
    id: u64,
    vote: Rc<Cell<Option<Vote>>>,
    committed: Rc<Cell<Option<LogId>>>,
}

impl LogStore {
    /// Open the log from disk and start its writer; the oracle hears what node
    /// `id` holds durably.
    pub fn open(ctx: Rc<NodeCtx>, oracle: Rc<Oracle>, id: u64) -> io::Result<LogStore> {
        let listened = oracle.clone();
        let listener = move |change: Change<'_, LogId>| {
            let event = match change {
                Change::Flushed(ids) => RaftEvent::Flushed {
                    node: id,
                    entries: ids.iter().map(|l| (l.index, *l)).collect(),
                },
                Change::Truncated(after) => RaftEvent::Truncated { node: id, after },
            };
            // Neither event can break an invariant: nothing to report.
            listened.borrow_mut().observe(event, &|n| n.to_string());
        };
        let log = DurableLog::open(ctx.clone(), LOG_FILE, KEY, crate::spawn, listener)?;
        Ok(LogStore {
            vote: Rc::new(Cell::new(log.load(VOTE_FILE)?)),
            committed: Rc::new(Cell::new(log.load(COMMITTED_FILE)?)),
            log,
            ctx,
            oracle,
            id,
        })
    }

    /// The vote as the log store holds it.
    pub fn vote(&self) -> Option<Vote> {
        self.vote.get()
    }
}

impl RaftLogReader<Kv> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        self.log.read(range).await
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        Ok(self.vote.get())
    }
}

impl RaftLogStorage<Kv> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<Kv>, io::Error> {
        Ok(LogState {
            last_purged_log_id: self.log.state().purged,
            last_log_id: self.log.last_id(),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        // Durable on return, and never ahead of an append submitted before it.
        let bytes = serde_json::to_vec(vote).expect("votes serialize");
        self.log.save(VOTE_FILE, bytes).await?;
        self.vote.set(Some(*vote));
        Ok(())
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), io::Error> {
        // openraft may report an index committed before this node's own copy of
        // it is fsynced (a follower learns the commit from the leader). Persisted
        // as given, a crash leaves a committed index past the durable log and
        // openraft cannot start again ("Failed to get log entries"). The durable
        // tail is committed too (it is in the same log, before it), so that is
        // what is written; the file catches up on the next call.
        let durable = self.log.state().durable;
        let persisted = match (committed, durable) {
            (Some(c), Some(d)) if c.index > d.index => Some(d),
            (Some(_), None) => None,
            (c, _) => c,
        };
        if persisted != committed {
            self.ctx.probe(OpenraftProbe::CommittedPastOwnFlush);
        }
        let bytes = serde_json::to_vec(&persisted).expect("log ids serialize");
        self.ctx.disk().write_atomic(COMMITTED_FILE, &bytes)?;
        self.committed.set(committed);
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, io::Error> {
        Ok(self.committed.get())
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<Kv>) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry>,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        if let Some(first) = entries.first() {
            let event = RaftEvent::Appended {
                node: self.id,
                first: first.log_id.index,
                last: self.log.last_id().map(|l| l.index),
            };
            let ctx = &self.ctx;
            raft::observe(ctx, &self.oracle, event, &|n| crate::node::name_of(ctx, n));
        }
        let flushed = move |result| callback.io_completed(result);
        self.log.append(entries, flushed).await
    }

    async fn truncate_after(&mut self, last: Option<LogId>) -> Result<(), io::Error> {
        if self.log.truncate_after(last.map(|l| l.index))? {
            self.ctx.probe(OpenraftProbe::LogTruncated);
        }
        Ok(())
    }

    async fn purge(&mut self, upto: LogId) -> Result<(), io::Error> {
        self.log.purge(upto)
    }
}
