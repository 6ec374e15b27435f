//! The results file of a sweep: one JSON line per finished run, appended as each run
//! ends, so a killed sweep loses no finished run. A line torn by a kill is dropped
//! (and cut off) when the file is opened again.

use crate::report::RunRecord;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub const RESULTS_FILE: &str = "results.jsonl";

/// A run's identity in a sweep.
pub type RunKey = (String, String, u64);

pub fn key(record: &RunRecord) -> RunKey {
    (record.file.clone(), record.variant.clone(), record.seed)
}

/// Every intact record of a results file (none if the file does not exist), and
/// the byte length of the intact prefix.
pub fn read(path: &Path) -> io::Result<(Vec<RunRecord>, u64)> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut records = Vec::new();
    let mut intact = 0u64;
    let mut at = 0usize;
    while let Some(end) = bytes[at..].iter().position(|b| *b == b'\n') {
        let line = &bytes[at..at + end];
        // Only a line ended by a newline counts: a kill mid-write leaves none.
        match serde_json::from_slice::<RunRecord>(line) {
            Ok(record) => records.push(record),
            Err(_) => break,
        }
        at += end + 1;
        intact = at as u64;
    }
    Ok((records, intact))
}

pub struct ResultsFile {
    file: File,
    path: PathBuf,
    seen: BTreeSet<RunKey>,
}

impl ResultsFile {
    /// Open for appending, keeping the intact records and cutting any torn tail.
    pub fn open(dir: &Path) -> io::Result<(ResultsFile, Vec<RunRecord>)> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(RESULTS_FILE);
        let (records, intact) = read(&path)?;
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        file.set_len(intact)?;
        let seen = records.iter().map(key).collect();
        Ok((ResultsFile { file, path, seen }, records))
    }

    pub fn contains(&self, key: &RunKey) -> bool {
        self.seen.contains(key)
    }

    /// Append one record: a whole line in one write, so a kill leaves whole lines.
    pub fn append(&mut self, record: &RunRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).expect("records serialize");
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()?;
        self.seen.insert(key(record));
        Ok(())
    }

    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}
