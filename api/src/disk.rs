//! Durable storage on turmoil's simulated filesystem.
//!
//! turmoil's filesystem is POSIX-strict: a write is lost on crash unless the file was
//! `sync_all`ed *and* its directory entry synced. [`Disk`] makes the two kinds of write
//! explicit: [`Disk::append`] and [`Disk::write`] are volatile until [`Disk::sync`];
//! [`Disk::write_atomic`] is durable when it returns. Everything else a node holds is
//! volatile and dies with the host.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use turmoil::fs::shim::std::fs;

/// One node's data directory. The filesystem is per host, so every node can use the
/// same root.
#[derive(Clone, Debug)]
pub struct Disk {
    root: PathBuf,
}

impl Disk {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Disk { root: root.into() }
    }

    fn path(&self, name: &str) -> PathBuf {
        assert!(!name.contains(".."), "disk names are relative and flat");
        self.root.join(name)
    }

    fn ensure_root(&self) -> io::Result<()> {
        if !fs::exists(&self.root) {
            fs::create_dir_all(&self.root)?;
            // The root's own entry in `/` must be durable too.
            fs::sync_dir(Path::new("/"))?;
        }
        Ok(())
    }

    /// Read a whole file; `None` when it does not exist.
    pub fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let path = self.path(name);
        if !fs::exists(&path) {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        fs::File::open(&path)?.read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    pub fn exists(&self, name: &str) -> bool {
        fs::exists(self.path(name))
    }

    /// Append bytes (volatile until [`Disk::sync`]).
    pub fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.ensure_root()?;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(name))?;
        file.write_all(bytes)
    }

    /// Replace a file's contents (volatile until [`Disk::sync`]).
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.ensure_root()?;
        let mut file = fs::File::create(self.path(name))?;
        file.write_all(bytes)
    }

    /// fsync a file and its directory entry: what was written survives a crash.
    pub fn sync(&self, name: &str) -> io::Result<()> {
        self.ensure_root()?;
        let file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(name))?;
        file.sync_all()?;
        fs::sync_dir(&self.root)
    }

    /// Write to a temporary file, fsync, rename over `name`, fsync the directory.
    /// After a crash the file holds either the old or the new contents.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.ensure_root()?;
        self.forget_unsynced_writes(name)?;
        let tmp = self.path(&format!("{name}.tmp"));
        {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
        }
        fs::rename(&tmp, self.path(name))?;
        fs::sync_dir(&self.root)
    }

    /// Before a file is replaced or removed: on POSIX its unsynced writes go with
    /// the old inode. turmoil 0.7.2 queues them under the path instead and lays
    /// them over whatever file holds that path later (a rename's target, a new
    /// file of the same name), so a truncated log got its dropped tail back.
    /// Syncing the old file first is the same here: its bytes are replaced in the
    /// same step, with no await in between for a crash to land in.
    fn forget_unsynced_writes(&self, name: &str) -> io::Result<()> {
        if fs::exists(self.path(name)) {
            fs::OpenOptions::new()
                .append(true)
                .open(self.path(name))?
                .sync_all()?;
        }
        Ok(())
    }

    pub fn remove(&self, name: &str) -> io::Result<()> {
        let path = self.path(name);
        if fs::exists(&path) {
            self.forget_unsynced_writes(name)?;
            fs::remove_file(&path)?;
            fs::sync_dir(&self.root)?;
        }
        Ok(())
    }
}

/// An append-only file of checksummed records (a WAL, a Raft log, a transaction log).
/// Reading stops at the first torn or corrupt record, as a real log reader would.
#[derive(Clone, Debug)]
pub struct RecordLog {
    disk: Disk,
    name: String,
}

const RECORD_HEADER_BYTES: usize = 8;

impl RecordLog {
    pub fn new(disk: &Disk, name: &str) -> Self {
        RecordLog {
            disk: disk.clone(),
            name: name.to_string(),
        }
    }

    /// Append records (volatile until [`RecordLog::sync`]).
    pub fn append(&self, records: &[Vec<u8>]) -> io::Result<()> {
        let mut bytes = Vec::new();
        for record in records {
            encode_record(record, &mut bytes);
        }
        self.disk.append(&self.name, &bytes)
    }

    pub fn sync(&self) -> io::Result<()> {
        self.disk.sync(&self.name)
    }

    /// Replace the whole log atomically (after a truncation).
    pub fn rewrite(&self, records: &[Vec<u8>]) -> io::Result<()> {
        let mut bytes = Vec::new();
        for record in records {
            encode_record(record, &mut bytes);
        }
        self.disk.write_atomic(&self.name, &bytes)
    }

    /// Every intact record, in order.
    pub fn read_all(&self) -> io::Result<Vec<Vec<u8>>> {
        Ok(self.read_intact()?.0)
    }

    /// Every intact record, in order, and whether bytes after them (a torn or
    /// corrupt tail) were left out. Records appended after such a tail would
    /// never be read back: [`RecordLog::repair`] cuts it off first.
    pub fn read_intact(&self) -> io::Result<(Vec<Vec<u8>>, bool)> {
        let Some(bytes) = self.disk.read(&self.name)? else {
            return Ok((Vec::new(), false));
        };
        let records = decode_records(&bytes);
        let intact: usize = records.iter().map(|r| RECORD_HEADER_BYTES + r.len()).sum();
        Ok((records, intact < bytes.len()))
    }

    /// Read the intact records and, if a torn tail follows them, rewrite the log
    /// without it (atomically), so later appends are read back.
    pub fn repair(&self) -> io::Result<Vec<Vec<u8>>> {
        let (records, torn) = self.read_intact()?;
        if torn {
            self.rewrite(&records)?;
        }
        Ok(records)
    }
}

fn checksum(bytes: &[u8]) -> u32 {
    // FNV-1a: enough to tell a torn tail from a record; not a security boundary.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

fn encode_record(record: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(record.len()).expect("record under 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&checksum(record).to_le_bytes());
    out.extend_from_slice(record);
}

fn decode_records(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut records = Vec::new();
    let mut at = 0;
    while at + RECORD_HEADER_BYTES <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let sum = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap());
        let start = at + RECORD_HEADER_BYTES;
        let Some(record) = bytes.get(start..start + len) else {
            break;
        };
        if checksum(record) != sum {
            break;
        }
        records.push(record.to_vec());
        at = start + len;
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `body` on one host of a simulation with turmoil's filesystem.
    fn on_a_host(body: impl Fn() -> io::Result<()> + 'static) {
        let mut sim = turmoil::Builder::new().rng_seed(1).build();
        sim.client("n", async move {
            body()?;
            Ok(())
        });
        sim.run().expect("the host's body succeeds");
    }

    #[test]
    fn a_rewrite_drops_the_replaced_files_unsynced_tail() {
        on_a_host(|| {
            let disk = Disk::new("/data");
            let log = RecordLog::new(&disk, "log");
            log.append(&[b"one".to_vec()])?;
            log.sync()?;
            log.append(&[b"two".to_vec(), b"three".to_vec()])?;
            log.rewrite(&[b"one".to_vec(), b"two".to_vec()])?;
            assert_eq!(log.read_all()?, vec![b"one".to_vec(), b"two".to_vec()]);
            // A later append and fsync must not bring the old tail back either.
            log.append(&[b"four".to_vec()])?;
            log.sync()?;
            assert_eq!(
                log.read_all()?,
                vec![b"one".to_vec(), b"two".to_vec(), b"four".to_vec()]
            );
            Ok(())
        });
    }

    #[test]
    fn a_removed_files_unsynced_writes_do_not_reach_its_successor() {
        on_a_host(|| {
            let disk = Disk::new("/data");
            disk.write("f", b"old contents")?;
            disk.remove("f")?;
            disk.append("f", b"new")?;
            assert_eq!(disk.read("f")?, Some(b"new".to_vec()));
            Ok(())
        });
    }

    #[test]
    fn a_repaired_log_drops_its_torn_tail_and_reads_later_appends() {
        on_a_host(|| {
            let disk = Disk::new("/data");
            let log = RecordLog::new(&disk, "log");
            log.append(&[b"one".to_vec()])?;
            // Half a record: a header that promises more than follows.
            disk.append("log", &[9, 0, 0, 0, 1, 2])?;
            log.sync()?;
            assert_eq!(log.read_intact()?, (vec![b"one".to_vec()], true));
            assert_eq!(log.repair()?, vec![b"one".to_vec()]);
            log.append(&[b"two".to_vec()])?;
            log.sync()?;
            assert_eq!(
                log.read_intact()?,
                (vec![b"one".to_vec(), b"two".to_vec()], false)
            );
            Ok(())
        });
    }

    #[test]
    fn records_round_trip_and_stop_at_a_torn_tail() {
        let mut bytes = Vec::new();
        encode_record(b"one", &mut bytes);
        encode_record(b"two", &mut bytes);
        let whole = bytes.len();
        encode_record(b"three", &mut bytes);
        assert_eq!(
            decode_records(&bytes),
            vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
        );
        // A crash in the middle of the third record leaves the first two.
        assert_eq!(
            decode_records(&bytes[..whole + 5]),
            vec![b"one".to_vec(), b"two".to_vec()]
        );
        // A flipped byte in the second record hides it and everything after.
        let mut corrupt = bytes.clone();
        corrupt[RECORD_HEADER_BYTES * 2 + 3 + 1] ^= 0xff;
        assert_eq!(decode_records(&corrupt), vec![b"one".to_vec()]);
    }
}
