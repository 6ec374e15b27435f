//! A durable log on the node's simulated disk: an append-only file of
//! checksummed records (entries, truncations, purges) replayed on open, so a
//! crash keeps exactly what was fsynced and a torn tail is dropped.
//!
//! [`DurableLog::append`] writes and returns at once: the entries are readable
//! but volatile. A writer task fsyncs in submission order, batching every append
//! queued while it waited, and only then calls each append's `flushed` callback
//! (the flush notification a library such as openraft waits for). The
//! [`LogPoint::Flush`] fail point sits in front of the fsync, so a test can hold
//! a node's flush while it keeps receiving and sending.
//!
//! [`DurableLog::save`] writes a small file (a vote, a term) through the same
//! writer, behind every append before it, and is durable when it returns: write
//! IO stays serialized, as Raft libraries require (a newer vote made durable
//! ahead of older entries can acknowledge entries the node does not hold).
//! [`DurableLog::truncate_after`] is durable at once: a crash must not bring back
//! entries the library was told are gone.
//!
//! Every change of what the log holds durably is reported to a listener
//! ([`Change`]), which is how an oracle learns what each node really has.

use crate::ctx::NodeCtx;
use crate::disk::RecordLog;
use crate::faults::{FailPoint, FailPointInfo};
use crate::kit::rpc::Task;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::cell::{Ref, RefCell};
use std::collections::BTreeMap;
use std::io;
use std::ops::RangeBounds;
use std::rc::Rc;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

/// The durable log's fail points, declared here once: a model lists the ones it
/// exposes in its registry ([`LogPoint::info`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogPoint {
    Read,
    Write,
    Flush,
}

static LOG_READ: FailPointInfo = crate::kit::points::disk_point(
    "log.read",
    "entries are read from this node's log (replication, apply) (error: io; stall: slow read)",
    &["io"],
);
static LOG_WRITE: FailPointInfo = crate::kit::points::disk_point(
    "log.write",
    "entries are appended to this node's log, before the write (error: io; stall: slow write)",
    &["io"],
);
static LOG_FLUSH: FailPointInfo = crate::kit::points::disk_point(
    "log.flush",
    "before appended entries are fsynced and the node is told they are durable (error: io; stall: a slow disk)",
    &["io"],
);

impl FailPoint for LogPoint {
    fn info(self) -> &'static FailPointInfo {
        match self {
            LogPoint::Read => &LOG_READ,
            LogPoint::Write => &LOG_WRITE,
            LogPoint::Flush => &LOG_FLUSH,
        }
    }
}

/// How the log reads an entry: its id, and the index of an id.
pub struct EntryKey<E, Id> {
    pub id: fn(&E) -> Id,
    pub index: fn(&Id) -> u64,
}

impl<E, Id> Clone for EntryKey<E, Id> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, Id> Copy for EntryKey<E, Id> {}

/// What changed in the log's durable contents.
#[derive(Debug, PartialEq, Eq)]
pub enum Change<'a, Id> {
    /// These entries are durable (fsynced, and not truncated since appended).
    Flushed(&'a [Id]),
    /// Every entry after this index is gone (`None`: all of them).
    Truncated(Option<u64>),
}

#[derive(Serialize, Deserialize)]
enum Record<E, Id> {
    Entry(E),
    /// Every entry after this index is gone (`None`: all of them).
    TruncateAfter(Option<u64>),
    Purge(Id),
}

/// What the log holds.
pub struct LogState<E, Id> {
    /// index -> entry, volatile ones included.
    pub entries: BTreeMap<u64, E>,
    /// The last entry purged (entries up to it are gone, in a snapshot).
    pub purged: Option<Id>,
    /// The last id fsynced (what a crash keeps).
    pub durable: Option<Id>,
}

type Flushed = Box<dyn FnOnce(io::Result<()>)>;
/// Hears every [`Change`].
type Listener<Id> = Rc<dyn Fn(Change<'_, Id>)>;

/// One write of the writer task, done in submission order.
enum Job<Id> {
    /// Appended entries to fsync; the callback hears the outcome.
    Flush(Vec<Id>, Flushed),
    /// A file to write once every earlier job is durable.
    Save(String, Vec<u8>, oneshot::Sender<io::Result<()>>),
}

/// A node's durable log (see the module docs). Cheap to clone.
pub struct DurableLog<E, Id> {
    state: Rc<RefCell<LogState<E, Id>>>,
    ctx: Rc<NodeCtx>,
    records: RecordLog,
    writer: UnboundedSender<Job<Id>>,
    key: EntryKey<E, Id>,
    listener: Listener<Id>,
}

impl<E, Id> Clone for DurableLog<E, Id> {
    fn clone(&self) -> Self {
        DurableLog {
            state: self.state.clone(),
            ctx: self.ctx.clone(),
            records: self.records.clone(),
            writer: self.writer.clone(),
            key: self.key,
            listener: self.listener.clone(),
        }
    }
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("log records serialize")
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> io::Result<T> {
    serde_json::from_slice(bytes).map_err(io::Error::other)
}

fn stopped() -> io::Error {
    io::Error::other("the log writer has stopped")
}

/// The same error for every waiter of a batch.
fn copy(error: &io::Error) -> io::Error {
    io::Error::new(error.kind(), error.to_string())
}

impl<E, Id> DurableLog<E, Id>
where
    E: Clone + Serialize + DeserializeOwned + 'static,
    Id: Copy + PartialEq + Serialize + DeserializeOwned + 'static,
{
    /// Open the log in `file` on the node's disk, replaying what survived, and
    /// start its writer task with `spawn`. The listener first hears that the
    /// node's durable log is exactly what was read back.
    pub fn open(
        ctx: Rc<NodeCtx>,
        file: &str,
        key: EntryKey<E, Id>,
        spawn: impl Fn(Task),
        listener: impl Fn(Change<'_, Id>) + 'static,
    ) -> io::Result<Self> {
        let records = RecordLog::new(ctx.disk(), file);
        let mut entries = BTreeMap::new();
        let mut purged = None;
        // A torn tail (a record cut short by a crash) is dropped, and cut off the
        // file so that what is appended next is read back.
        for record in records.repair()? {
            match decode::<Record<E, Id>>(&record)? {
                Record::Entry(entry) => {
                    let index = (key.index)(&(key.id)(&entry));
                    entries.split_off(&index);
                    entries.insert(index, entry);
                }
                Record::TruncateAfter(last) => {
                    entries.split_off(&last.map_or(0, |l| l + 1));
                }
                Record::Purge(upto) => {
                    entries = entries.split_off(&((key.index)(&upto) + 1));
                    purged = Some(upto);
                }
            }
        }
        // A process restart keeps writes that were never fsynced (the page cache
        // survives it, a machine crash would not). The library takes what it
        // reads here as persisted, so make it so before telling anyone.
        records.sync()?;
        // Whatever survived on disk is durable.
        let durable = entries.values().next_back().map(key.id).or(purged);
        listener(Change::Truncated(None));
        let ids: Vec<Id> = entries.values().map(key.id).collect();
        listener(Change::Flushed(&ids));
        let state = LogState {
            entries,
            purged,
            durable,
        };
        let (writer, jobs) = unbounded_channel();
        let log = DurableLog {
            state: Rc::new(RefCell::new(state)),
            ctx,
            records,
            writer,
            key,
            listener: Rc::new(listener),
        };
        spawn(Box::pin(log.clone().write(jobs)));
        Ok(log)
    }

    /// What the log holds now.
    pub fn state(&self) -> Ref<'_, LogState<E, Id>> {
        self.state.borrow()
    }

    /// index -> id of the entries in the log.
    pub fn ids(&self) -> BTreeMap<u64, Id> {
        let state = self.state.borrow();
        state
            .entries
            .iter()
            .map(|(i, e)| (*i, (self.key.id)(e)))
            .collect()
    }

    /// The last id in the log, else the last purged.
    pub fn last_id(&self) -> Option<Id> {
        let state = self.state.borrow();
        state
            .entries
            .values()
            .next_back()
            .map(self.key.id)
            .or(state.purged)
    }

    /// Entries in `range` (volatile ones too), behind the read fail point.
    pub async fn read(&self, range: impl RangeBounds<u64>) -> io::Result<Vec<E>> {
        if let Err(kind) = self.ctx.faults().hit(LogPoint::Read).await {
            return Err(io::Error::other(format!("injected log read error: {kind}")));
        }
        let state = self.state.borrow();
        Ok(state.entries.range(range).map(|(_, e)| e.clone()).collect())
    }

    /// Append entries (each replaces its index and everything after it): written
    /// and readable on return, durable when `flushed` hears `Ok`.
    pub async fn append(
        &self,
        entries: Vec<E>,
        flushed: impl FnOnce(io::Result<()>) + 'static,
    ) -> io::Result<()> {
        if let Err(kind) = self.ctx.faults().hit(LogPoint::Write).await {
            return Err(io::Error::other(format!(
                "injected log write error: {kind}"
            )));
        }
        let records: Vec<Vec<u8>> = entries
            .iter()
            .map(|e| encode(&Record::<E, Id>::Entry(e.clone())))
            .collect();
        self.records.append(&records)?;
        let ids: Vec<Id> = entries.iter().map(self.key.id).collect();
        {
            let mut state = self.state.borrow_mut();
            for entry in entries {
                let index = (self.key.index)(&(self.key.id)(&entry));
                state.entries.split_off(&index);
                state.entries.insert(index, entry);
            }
        }
        self.writer
            .send(Job::Flush(ids, Box::new(flushed)))
            .map_err(|_| stopped())
    }

    /// Write `file` atomically once every earlier append is durable; durable on
    /// return.
    pub async fn save(&self, file: &str, bytes: Vec<u8>) -> io::Result<()> {
        let (done, written) = oneshot::channel();
        self.writer
            .send(Job::Save(file.to_string(), bytes, done))
            .map_err(|_| stopped())?;
        written.await.map_err(|_| stopped())?
    }

    /// Remove every entry after index `last` (`None`: all), durably at once.
    /// Returns whether an entry was removed.
    pub fn truncate_after(&self, last: Option<u64>) -> io::Result<bool> {
        self.records
            .append(&[encode(&Record::<E, Id>::TruncateAfter(last))])?;
        self.records.sync()?;
        (self.listener)(Change::Truncated(last));
        let mut state = self.state.borrow_mut();
        let removed = state.entries.split_off(&last.map_or(0, |l| l + 1));
        state.durable = state
            .entries
            .values()
            .next_back()
            .map(self.key.id)
            .or(state.purged);
        Ok(!removed.is_empty())
    }

    /// Drop every entry up to `upto` (it is in a snapshot now).
    pub fn purge(&self, upto: Id) -> io::Result<()> {
        self.records
            .append(&[encode(&Record::<E, Id>::Purge(upto))])?;
        let mut state = self.state.borrow_mut();
        let from = (self.key.index)(&upto) + 1;
        state.entries = state.entries.split_off(&from);
        state.purged = Some(upto);
        Ok(())
    }

    /// The writer task: fsyncs in submission order (see the module docs).
    async fn write(self, mut jobs: UnboundedReceiver<Job<Id>>) {
        // A job taken from the queue while batching that is not a flush.
        let mut next: Option<Job<Id>> = None;
        loop {
            let job = match next.take() {
                Some(job) => job,
                None => match jobs.recv().await {
                    Some(job) => job,
                    None => return,
                },
            };
            let first = match job {
                Job::Save(file, bytes, done) => {
                    let _ = done.send(self.ctx.disk().write_atomic(&file, &bytes));
                    continue;
                }
                Job::Flush(ids, flushed) => (ids, flushed),
            };
            if let Err(kind) = self.ctx.faults().hit(LogPoint::Flush).await {
                let error = io::Error::other(format!("injected log flush error: {kind}"));
                (first.1)(Err(copy(&error)));
                continue;
            }
            // Every append queued while this flush waited goes out with it; a
            // save queued behind them waits for this fsync.
            let mut batch = vec![first];
            while let Ok(job) = jobs.try_recv() {
                match job {
                    Job::Flush(ids, flushed) => batch.push((ids, flushed)),
                    save @ Job::Save(..) => {
                        next = Some(save);
                        break;
                    }
                }
            }
            if let Err(error) = self.records.sync() {
                for (_, flushed) in batch {
                    flushed(Err(copy(&error)));
                }
                continue;
            }
            self.flushed(&batch);
            for (_, flushed) in batch {
                flushed(Ok(()));
            }
        }
    }

    /// A batch is durable: record it and tell the listener.
    fn flushed(&self, batch: &[(Vec<Id>, Flushed)]) {
        let mut state = self.state.borrow_mut();
        for (ids, _) in batch {
            // Entries truncated since they were appended are not in the log.
            let kept: Vec<Id> = ids
                .iter()
                .filter(|id| {
                    let held = state.entries.get(&(self.key.index)(id));
                    held.map(self.key.id) == Some(**id)
                })
                .copied()
                .collect();
            if let Some(last) = kept.last() {
                state.durable = Some(*last);
            }
            (self.listener)(Change::Flushed(&kept));
        }
    }

    /// Read a file [`DurableLog::save`] wrote (`None`: never written).
    pub fn load<T: DeserializeOwned>(&self, file: &str) -> io::Result<Option<T>> {
        self.ctx.disk().read(file)?.map(|b| decode(&b)).transpose()
    }
}

#[cfg(test)]
mod tests;
