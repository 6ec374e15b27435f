//! What a server keeps on its disk: the txn log (appended, durable only once
//! fsynced), the retained snapshots of the data tree, and the two epoch files. A
//! restart rebuilds the tree from the snapshot plus the durable log, nothing else.

use super::tree::{DataTree, Txn, ZkError};
use super::zxid::Zxid;
use faultline_api::{Disk, RecordLog};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::io;

const LOG_FILE: &str = "txnlog";
/// Snapshots are kept, newest first, in this many files (`snapshot.0` ..):
/// ZooKeeper keeps every snapshot unless autopurge is on (it is off by
/// default), and a TRUNC that drops the newest falls back to an older one. The
/// oldest goes when the slots are full.
const SNAPSHOT_SLOTS: usize = 8;

fn snapshot_file(slot: usize) -> String {
    format!("snapshot.{slot}")
}
const CURRENT_EPOCH_FILE: &str = "currentEpoch";
const ACCEPTED_EPOCH_FILE: &str = "acceptedEpoch";

#[derive(Serialize, Deserialize)]
struct LogRecord {
    zxid: Zxid,
    txn: Txn,
}

#[derive(Serialize, Deserialize)]
struct SnapshotFile {
    zxid: Zxid,
    tree: DataTree,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpochFile {
    Current,
    Accepted,
}

/// The result of rebuilding the tree from disk.
pub struct Loaded {
    pub tree: DataTree,
    pub snapshot_zxid: Zxid,
    /// Log records replayed on top of the snapshot, in log order.
    pub replayed: Vec<(Zxid, Txn)>,
    /// Replayed records that failed on the tree (a repeated segment, a hole).
    pub failed: Vec<(Zxid, ZkError)>,
}

pub struct Storage {
    disk: Disk,
    log: RecordLog,
    /// Zxids of every record in the log file, in file order, synced or not.
    appended: RefCell<Vec<Zxid>>,
    /// How many of `appended` an fsync made durable.
    synced: Cell<usize>,
    snapshot_zxid: Cell<Zxid>,
}

fn disk_error(what: &str, error: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{what}: {error}"))
}

impl Storage {
    pub fn open(disk: &Disk) -> Storage {
        let log = RecordLog::new(disk, LOG_FILE);
        Storage {
            disk: disk.clone(),
            log,
            appended: RefCell::new(Vec::new()),
            synced: Cell::new(0),
            snapshot_zxid: Cell::new(Zxid::ZERO),
        }
    }

    fn records(&self) -> io::Result<Vec<LogRecord>> {
        self.log
            .read_all()?
            .iter()
            .map(|bytes| serde_json::from_slice(bytes).map_err(|e| disk_error("txn log", e)))
            .collect()
    }

    /// Every snapshot on disk as (slot, zxid), newest first.
    fn snapshots(&self) -> io::Result<Vec<(usize, Zxid)>> {
        let mut found = Vec::new();
        for slot in 0..SNAPSHOT_SLOTS {
            if let Some(snapshot) = self.read_snapshot(slot)? {
                found.push((slot, snapshot.zxid));
            }
        }
        found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(found)
    }

    fn read_snapshot(&self, slot: usize) -> io::Result<Option<SnapshotFile>> {
        match self.disk.read(&snapshot_file(slot))? {
            Some(bytes) => Ok(Some(
                serde_json::from_slice(&bytes).map_err(|e| disk_error("snapshot", e))?,
            )),
            None => Ok(None),
        }
    }

    /// `FileTxnSnapLog.restore`: the latest snapshot, then every log record after
    /// its zxid, in log order. No check for holes between zxids.
    pub fn load(&self) -> io::Result<Loaded> {
        let newest = self.snapshots()?.first().map(|&(slot, _)| slot);
        let snapshot = match newest {
            Some(slot) => self.read_snapshot(slot)?.expect("listed"),
            None => SnapshotFile {
                zxid: Zxid::ZERO,
                tree: DataTree::default(),
            },
        };
        let records = self.records()?;
        *self.appended.borrow_mut() = records.iter().map(|r| r.zxid).collect();
        self.synced.set(records.len());
        self.snapshot_zxid.set(snapshot.zxid);
        let mut tree = snapshot.tree;
        let mut replayed = Vec::new();
        let mut failed = Vec::new();
        for record in records.into_iter().filter(|r| r.zxid > snapshot.zxid) {
            if let Err(error) = tree.apply(record.zxid, &record.txn) {
                failed.push((record.zxid, error));
            }
            replayed.push((record.zxid, record.txn));
        }
        Ok(Loaded {
            tree,
            snapshot_zxid: snapshot.zxid,
            replayed,
            failed,
        })
    }

    /// Append a txn to the log: buffered, lost on a crash until [`Storage::sync`].
    pub fn append(&self, zxid: Zxid, txn: &Txn) -> io::Result<()> {
        let bytes = serde_json::to_vec(&LogRecord {
            zxid,
            txn: txn.clone(),
        })
        .expect("serializes");
        self.log.append(&[bytes])?;
        self.appended.borrow_mut().push(zxid);
        Ok(())
    }

    /// fsync the log: everything appended so far, by any thread, is durable.
    /// Returns how many records became durable.
    pub fn sync(&self) -> io::Result<usize> {
        self.log.sync()?;
        let total = self.appended.borrow().len();
        let newly = total - self.synced.get();
        self.synced.set(total);
        Ok(newly)
    }

    /// The last record an fsync made durable, if any.
    pub fn last_durable(&self) -> Option<Zxid> {
        let synced = self.synced.get();
        synced
            .checked_sub(1)
            .map(|last| self.appended.borrow()[last])
    }

    pub fn durable(&self) -> Vec<Zxid> {
        self.appended.borrow()[..self.synced.get()].to_vec()
    }

    /// Appended but not fsynced yet, in log order (the log's tail).
    pub fn unsynced_zxids(&self) -> Vec<Zxid> {
        self.appended.borrow()[self.synced.get()..].to_vec()
    }

    pub fn unsynced(&self) -> usize {
        self.appended.borrow().len() - self.synced.get()
    }

    pub fn snapshot_zxid(&self) -> Zxid {
        self.snapshot_zxid.get()
    }

    pub fn save_snapshot(&self, tree: &DataTree) -> io::Result<()> {
        let zxid = tree.last_processed();
        let bytes = serde_json::to_vec(&SnapshotFile {
            zxid,
            tree: tree.clone(),
        })
        .expect("serializes");
        // A free slot, else the oldest snapshot's.
        let taken = self.snapshots()?;
        let slot = (0..SNAPSHOT_SLOTS)
            .find(|s| taken.iter().all(|(t, _)| t != s))
            .unwrap_or_else(|| taken.last().expect("all slots taken").0);
        self.disk.write_atomic(&snapshot_file(slot), &bytes)?;
        self.snapshot_zxid.set(zxid);
        Ok(())
    }

    /// `truncateLog`: drop every record after `to`, and every snapshot newer
    /// than it (the load that follows falls back to the newest one left).
    pub fn truncate(&self, to: Zxid) -> io::Result<usize> {
        let records = self.records()?;
        let before = records.len();
        let kept: Vec<LogRecord> = records.into_iter().filter(|r| r.zxid <= to).collect();
        let bytes: Vec<Vec<u8>> = kept
            .iter()
            .map(|r| serde_json::to_vec(r).expect("serializes"))
            .collect();
        self.log.rewrite(&bytes)?;
        *self.appended.borrow_mut() = kept.iter().map(|r| r.zxid).collect();
        self.synced.set(kept.len());
        for (slot, zxid) in self.snapshots()? {
            if zxid > to {
                self.disk.remove(&snapshot_file(slot))?;
            }
        }
        let newest = self.snapshots()?.first().map_or(Zxid::ZERO, |&(_, z)| z);
        self.snapshot_zxid.set(newest);
        Ok(before - kept.len())
    }

    /// `fastForwardFromEdits`: log records after `zxid`, as the file holds them now
    /// (appended records are readable before they are durable).
    pub fn records_after(&self, zxid: Zxid) -> io::Result<Vec<(Zxid, Txn)>> {
        Ok(self
            .records()?
            .into_iter()
            .filter(|r| r.zxid > zxid)
            .map(|r| (r.zxid, r.txn))
            .collect())
    }

    fn epoch_name(which: EpochFile) -> &'static str {
        match which {
            EpochFile::Current => CURRENT_EPOCH_FILE,
            EpochFile::Accepted => ACCEPTED_EPOCH_FILE,
        }
    }

    pub fn epoch(&self, which: EpochFile) -> io::Result<u32> {
        match self.disk.read(Self::epoch_name(which))? {
            None => Ok(0),
            Some(bytes) => String::from_utf8_lossy(&bytes)
                .trim()
                .parse()
                .map_err(|e| disk_error("epoch file", e)),
        }
    }

    pub fn set_epoch(&self, which: EpochFile, epoch: u32) -> io::Result<()> {
        self.disk
            .write_atomic(Self::epoch_name(which), epoch.to_string().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(path: &str) -> Txn {
        Txn::Create {
            path: path.into(),
            data: String::new(),
            ephemeral: None,
        }
    }

    #[test]
    fn a_trunc_past_the_newest_snapshot_falls_back_to_an_older_one() {
        let mut sim = turmoil::Builder::new().rng_seed(1).build();
        sim.client("zk", async {
            let storage = Storage::open(&Disk::new("/data"));
            let mut tree = DataTree::default();
            // Epoch 1: /a, snapshot; epoch 2: /b (then truncated), snapshot.
            let (a, b) = (Zxid::new(1, 1), Zxid::new(2, 1));
            for (zxid, path) in [(a, "/a"), (b, "/b")] {
                storage.append(zxid, &create(path))?;
                storage.sync()?;
                tree.apply(zxid, &create(path)).expect("applies");
                storage.save_snapshot(&tree)?;
            }
            assert_eq!(storage.snapshot_zxid(), b);
            assert_eq!(storage.truncate(a)?, 1);
            // The snapshot holding /b is gone; the one at `a` is what loads,
            // not an empty tree replayed from a log that may have holes.
            assert_eq!(storage.snapshot_zxid(), a);
            let loaded = storage.load()?;
            assert_eq!(loaded.snapshot_zxid, a);
            assert!(loaded.tree.get("/a").is_some());
            assert!(loaded.tree.get("/b").is_none());
            Ok(())
        });
        sim.run().expect("the host's body succeeds");
    }

    #[test]
    fn snapshots_beyond_the_slots_replace_the_oldest() {
        let mut sim = turmoil::Builder::new().rng_seed(1).build();
        sim.client("zk", async {
            let storage = Storage::open(&Disk::new("/data"));
            let mut tree = DataTree::default();
            for counter in 1..=(SNAPSHOT_SLOTS as u32 + 3) {
                tree.set_last_processed(Zxid::new(1, counter));
                storage.save_snapshot(&tree)?;
            }
            let kept = storage.snapshots()?;
            assert_eq!(kept.len(), SNAPSHOT_SLOTS);
            assert_eq!(kept[0].1, Zxid::new(1, SNAPSHOT_SLOTS as u32 + 3));
            assert_eq!(kept.last().expect("kept").1, Zxid::new(1, 4));
            Ok(())
        });
        sim.run().expect("the host's body succeeds");
    }
}
