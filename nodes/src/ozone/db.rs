//! The RocksDB stand-in: tables of string keys and JSON values, changed only by
//! atomic batches. Every batch is one checksummed record of a write-ahead log,
//! appended and fsynced before it is applied in memory; opening the DB replays
//! the log, so a crash keeps exactly the batches that were committed. The log is
//! compacted into one image record (an atomic rewrite) once it grows long.

use super::types::{snap_key, BatchOp, Table, TermIndex, TRANSACTION_INFO_KEY};
use faultline_api::RecordLog;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;

/// Records after which the log is rewritten as one image.
const COMPACT_AFTER_RECORDS: usize = 256;

/// Where the DB's records live: the simulated disk, or memory in unit tests.
pub trait Wal {
    fn read_all(&self) -> io::Result<Vec<Vec<u8>>>;
    /// Append one record and make it durable before returning.
    fn append_synced(&self, record: Vec<u8>) -> io::Result<()>;
    /// Replace every record atomically.
    fn rewrite(&self, records: Vec<Vec<u8>>) -> io::Result<()>;
}

impl Wal for RecordLog {
    fn read_all(&self) -> io::Result<Vec<Vec<u8>>> {
        RecordLog::read_all(self)
    }
    fn append_synced(&self, record: Vec<u8>) -> io::Result<()> {
        self.append(&[record])?;
        self.sync()
    }
    fn rewrite(&self, records: Vec<Vec<u8>>) -> io::Result<()> {
        RecordLog::rewrite(self, &records)
    }
}

/// An in-memory log for unit tests: a "crash" is dropping the `Db` and opening
/// a new one on the same records.
#[derive(Default)]
pub struct MemWal {
    pub records: RefCell<Vec<Vec<u8>>>,
}

impl Wal for &MemWal {
    fn read_all(&self) -> io::Result<Vec<Vec<u8>>> {
        Ok(self.records.borrow().clone())
    }
    fn append_synced(&self, record: Vec<u8>) -> io::Result<()> {
        self.records.borrow_mut().push(record);
        Ok(())
    }
    fn rewrite(&self, records: Vec<Vec<u8>>) -> io::Result<()> {
        *self.records.borrow_mut() = records;
        Ok(())
    }
}

type Rows = BTreeMap<String, String>;

#[derive(Serialize, Deserialize)]
enum Record {
    Batch(Vec<BatchOp>),
    Image(BTreeMap<Table, Rows>),
}

pub struct Db<W: Wal> {
    wal: W,
    tables: BTreeMap<Table, Rows>,
    records: usize,
}

impl<W: Wal> Db<W> {
    /// Open: replay every intact record of the log.
    pub fn open(wal: W) -> io::Result<Self> {
        let mut db = Db {
            wal,
            tables: BTreeMap::new(),
            records: 0,
        };
        for bytes in db.wal.read_all()? {
            // A record that does not parse ends the log, like a torn tail.
            let Ok(record) = serde_json::from_slice::<Record>(&bytes) else {
                break;
            };
            match record {
                Record::Batch(ops) => db.apply(&ops),
                Record::Image(tables) => db.tables = tables,
            }
            db.records += 1;
        }
        Ok(db)
    }

    /// Commit one atomic batch: durable when this returns.
    pub fn commit(&mut self, ops: Vec<BatchOp>) -> io::Result<()> {
        let record = serde_json::to_vec(&Record::Batch(ops.clone())).expect("batches serialize");
        self.wal.append_synced(record)?;
        self.records += 1;
        self.apply(&ops);
        if self.records >= COMPACT_AFTER_RECORDS {
            let image =
                serde_json::to_vec(&Record::Image(self.tables.clone())).expect("serializes");
            self.wal.rewrite(vec![image])?;
            self.records = 1;
        }
        Ok(())
    }

    pub fn get(&self, table: Table, key: &str) -> Option<&String> {
        self.tables.get(&table).and_then(|rows| rows.get(key))
    }

    /// Rows of a table whose key starts with `prefix`, in key order.
    pub fn scan(&self, table: Table, prefix: &str) -> Vec<(String, String)> {
        let Some(rows) = self.tables.get(&table) else {
            return Vec::new();
        };
        rows.range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// TRANSACTION_INFO: the highest index of the last flushed batch; (0, 0) on
    /// a fresh DB.
    pub fn transaction_info(&self) -> TermIndex {
        self.get(Table::TransactionInfo, TRANSACTION_INFO_KEY)
            .map(|v| serde_json::from_str(v).expect("TRANSACTION_INFO parses"))
            .unwrap_or(TermIndex::new(0, 0))
    }

    fn apply(&mut self, ops: &[BatchOp]) {
        for op in ops {
            match op {
                BatchOp::Put { table, key, value } => {
                    self.tables
                        .entry(*table)
                        .or_default()
                        .insert(key.clone(), value.clone());
                }
                BatchOp::Delete { table, key } => {
                    if let Some(rows) = self.tables.get_mut(table) {
                        rows.remove(key);
                    }
                }
                BatchOp::Checkpoint {
                    bucket,
                    snapshot_id,
                } => self.checkpoint(bucket, snapshot_id),
                BatchOp::HandOver { snapshot_id, to } => self.hand_over(snapshot_id, to.as_deref()),
            }
        }
    }

    /// Move the bucket's rows of the active deleted tables into the snapshot.
    fn checkpoint(&mut self, bucket: &str, snapshot_id: &str) {
        let prefix = format!("{bucket}/");
        for (from, to) in [
            (Table::DeletedDir, Table::SnapDeletedDir),
            (Table::Deleted, Table::SnapDeleted),
        ] {
            for (key, value) in self.scan(from, &prefix) {
                self.tables.entry(from).or_default().remove(&key);
                self.tables
                    .entry(to)
                    .or_default()
                    .insert(snap_key(snapshot_id, &key), value);
            }
        }
    }

    /// Move a snapshot's remaining deleted rows to the next snapshot, or back to
    /// the active object store.
    fn hand_over(&mut self, snapshot_id: &str, to: Option<&str>) {
        let prefix = snap_key(snapshot_id, "");
        for (own, active) in [
            (Table::SnapDeletedDir, Table::DeletedDir),
            (Table::SnapDeleted, Table::Deleted),
        ] {
            for (key, value) in self.scan(own, &prefix) {
                self.tables.entry(own).or_default().remove(&key);
                let row_key = key[prefix.len()..].to_string();
                let (table, new_key) = match to {
                    Some(next) => (own, snap_key(next, &row_key)),
                    None => (active, row_key),
                };
                self.tables.entry(table).or_default().insert(new_key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(table: Table, key: &str, value: &str) -> BatchOp {
        BatchOp::Put {
            table,
            key: key.into(),
            value: value.into(),
        }
    }

    fn txinfo(term: u64, index: i64) -> BatchOp {
        put(
            Table::TransactionInfo,
            TRANSACTION_INFO_KEY,
            &serde_json::to_string(&TermIndex::new(term, index)).unwrap(),
        )
    }

    #[test]
    fn committed_batches_survive_a_reopen_and_nothing_else_exists() {
        let wal = MemWal::default();
        {
            let mut db = Db::open(&wal).unwrap();
            assert_eq!(db.transaction_info(), TermIndex::new(0, 0));
            db.commit(vec![put(Table::Volume, "/v", "{}"), txinfo(1, 3)])
                .unwrap();
            db.commit(vec![
                BatchOp::Delete {
                    table: Table::Volume,
                    key: "/v".into(),
                },
                txinfo(1, 4),
            ])
            .unwrap();
        }
        let db = Db::open(&wal).unwrap();
        assert_eq!(db.get(Table::Volume, "/v"), None);
        assert_eq!(db.transaction_info(), TermIndex::new(1, 4));
    }

    #[test]
    fn a_torn_last_record_loses_only_that_batch() {
        let wal = MemWal::default();
        let mut db = Db::open(&wal).unwrap();
        db.commit(vec![put(Table::Volume, "/a", "{}"), txinfo(1, 1)])
            .unwrap();
        db.commit(vec![put(Table::Volume, "/b", "{}"), txinfo(1, 2)])
            .unwrap();
        let last = wal.records.borrow().len() - 1;
        wal.records.borrow_mut()[last].truncate(5);
        let db = Db::open(&wal).unwrap();
        assert!(db.get(Table::Volume, "/a").is_some());
        assert!(db.get(Table::Volume, "/b").is_none());
        assert_eq!(db.transaction_info(), TermIndex::new(1, 1));
    }

    #[test]
    fn compaction_keeps_the_contents() {
        let wal = MemWal::default();
        let mut db = Db::open(&wal).unwrap();
        for i in 0..(COMPACT_AFTER_RECORDS as i64 + 10) {
            db.commit(vec![
                put(Table::Dir, &format!("/v/b/d{i:04}"), "{}"),
                txinfo(1, i),
            ])
            .unwrap();
        }
        assert!(wal.records.borrow().len() < 20);
        let db = Db::open(&wal).unwrap();
        assert_eq!(
            db.scan(Table::Dir, "/v/b/").len(),
            COMPACT_AFTER_RECORDS + 10
        );
        assert_eq!(
            db.transaction_info(),
            TermIndex::new(1, COMPACT_AFTER_RECORDS as i64 + 9)
        );
    }

    #[test]
    fn checkpoint_moves_the_bucket_rows_and_hand_over_moves_them_back() {
        let wal = MemWal::default();
        let mut db = Db::open(&wal).unwrap();
        db.commit(vec![
            put(Table::DeletedDir, "/v/b/d#5", "d"),
            put(Table::Deleted, "/v/b/d/f#6", "f"),
            put(Table::DeletedDir, "/v/c/x#9", "other bucket"),
        ])
        .unwrap();
        db.commit(vec![BatchOp::Checkpoint {
            bucket: "/v/b".into(),
            snapshot_id: "snap-7".into(),
        }])
        .unwrap();
        assert_eq!(db.scan(Table::DeletedDir, "/v/b/"), vec![]);
        assert_eq!(db.scan(Table::DeletedDir, "/v/c/").len(), 1);
        assert_eq!(
            db.get(Table::SnapDeletedDir, "snap-7|/v/b/d#5")
                .map(String::as_str),
            Some("d")
        );
        assert!(db.get(Table::SnapDeleted, "snap-7|/v/b/d/f#6").is_some());
        db.commit(vec![BatchOp::HandOver {
            snapshot_id: "snap-7".into(),
            to: None,
        }])
        .unwrap();
        assert!(db.get(Table::DeletedDir, "/v/b/d#5").is_some());
        assert!(db.get(Table::Deleted, "/v/b/d/f#6").is_some());
        assert_eq!(db.scan(Table::SnapDeletedDir, ""), vec![]);
    }
}
