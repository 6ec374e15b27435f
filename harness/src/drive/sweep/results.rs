//! The results file of a sweep: one JSON line per finished run, appended as each run
//! ends, so a killed sweep loses no finished run.
//!
//! Reading it tells three things apart. A whole line (ended by a newline) is a
//! record or, if it does not parse, an unreadable line, counted with its line
//! number and never deleted. Bytes after the last newline are a torn line, left by
//! a kill in the middle of a write; only those are ever cut, when a sweep resumes.

use crate::base::fsio;
use crate::report::RunRecord;
use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

pub const RESULTS_FILE: &str = "results.jsonl";

/// The longest line read as a record; a longer one is unreadable (and skipped
/// without holding it in memory).
pub const LINE_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// A run's identity in a sweep.
/// File, variant, seed, and the run's number in a guided search (0 for a run
/// of a plain sweep: a guided search's derived run plays another schedule under
/// its seed than that seed's plain run).
pub type RunKey = (String, String, u64, u64);

pub fn key(record: &RunRecord) -> RunKey {
    (
        record.file.clone(),
        record.variant.clone(),
        record.seed,
        record.guided.as_ref().map_or(0, |g| g.run),
    )
}

/// What a results file holds.
#[derive(Debug, Default)]
pub struct Contents {
    pub records: Vec<RunRecord>,
    /// Byte length up to the end of the last whole line.
    pub intact: u64,
    /// 1-based numbers of whole lines that are not records.
    pub unreadable: Vec<u64>,
    /// Whether bytes follow the last newline (a torn final line).
    pub torn: bool,
}

/// Every record of a results file (none if the file does not exist).
pub fn read(path: &Path) -> Result<Contents, fsio::Error> {
    let file = match fsio::open_regular(path) {
        Ok(file) => file,
        Err(e) if e.is_not_found() => return Ok(Contents::default()),
        Err(e) => return Err(e),
    };
    read_from(file).map_err(|source| fsio::Error {
        path: path.to_path_buf(),
        kind: fsio::ErrorKind::Io {
            doing: "reading",
            source,
        },
    })
}

fn read_from(file: File) -> io::Result<Contents> {
    let mut reader = BufReader::new(file);
    let mut contents = Contents::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(LINE_BYTES_MAX + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if line.last() != Some(&b'\n') {
            if n as u64 <= LINE_BYTES_MAX {
                // End of file without a newline: a kill mid-write.
                contents.torn = true;
                break;
            }
            // An overlong line: skip to its end without keeping it.
            number += 1;
            let ended = skip_line(&mut reader)?;
            if !ended {
                contents.torn = true;
                break;
            }
            contents.unreadable.push(number);
            contents.intact = reader_position(&mut reader)?;
            continue;
        }
        number += 1;
        match serde_json::from_slice::<RunRecord>(&line[..line.len() - 1]) {
            Ok(record) => contents.records.push(record),
            Err(_) => contents.unreadable.push(number),
        }
        contents.intact += n as u64;
    }
    Ok(contents)
}

/// Consume up to and including the next newline; false if the file ended first.
fn skip_line(reader: &mut BufReader<File>) -> io::Result<bool> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(true);
            }
            None => {
                let len = buf.len();
                reader.consume(len);
            }
        }
    }
}

fn reader_position(reader: &mut BufReader<File>) -> io::Result<u64> {
    use std::io::Seek;
    reader.stream_position()
}

/// Why a sweep cannot continue a results file.
#[derive(Debug)]
pub enum OpenError {
    Io(fsio::Error),
    /// Whole lines that are not records: resuming would have to drop or keep
    /// them blindly, so the sweep stops and names them.
    Unreadable {
        path: PathBuf,
        lines: Vec<u64>,
    },
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "{e}"),
            OpenError::Unreadable { path, lines } => write!(
                f,
                "{}: {} unreadable line(s) ({}); the sweep will not resume over records it \
                 cannot read: repair or remove those lines, or choose another --out",
                crate::base::text::printable(&path.display().to_string()),
                lines.len(),
                line_list(lines)
            ),
        }
    }
}

/// "line 3, 9 and 12" (at most ten numbers, then "and N more").
pub fn line_list(lines: &[u64]) -> String {
    let shown: Vec<String> = lines.iter().take(10).map(u64::to_string).collect();
    let mut text = format!(
        "line{} {}",
        if lines.len() == 1 { "" } else { "s" },
        shown.join(", ")
    );
    if lines.len() > 10 {
        text.push_str(&format!(" and {} more", lines.len() - 10));
    }
    text
}

pub struct ResultsFile {
    file: File,
    path: PathBuf,
    seen: BTreeSet<RunKey>,
}

impl ResultsFile {
    /// Open for appending, keeping every record and cutting only a torn last line.
    /// The file must not be a symlink.
    pub fn open(dir: &Path) -> Result<(ResultsFile, Contents), OpenError> {
        let dir = fsio::tree_dir(dir, Path::new("")).map_err(OpenError::Io)?;
        let path = dir.join(RESULTS_FILE);
        fsio::refuse_link(&path).map_err(OpenError::Io)?;
        let file = fsio::open_append(&path).map_err(OpenError::Io)?;
        let contents = read(&path).map_err(OpenError::Io)?;
        if !contents.unreadable.is_empty() {
            return Err(OpenError::Unreadable {
                path,
                lines: contents.unreadable,
            });
        }
        if contents.torn {
            file.set_len(contents.intact).map_err(|source| {
                OpenError::Io(fsio::Error {
                    path: path.clone(),
                    kind: fsio::ErrorKind::Io {
                        doing: "cutting the torn last line of",
                        source,
                    },
                })
            })?;
        }
        let seen = contents.records.iter().map(key).collect();
        Ok((ResultsFile { file, path, seen }, contents))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::Outcome;

    fn record(seed: u64) -> RunRecord {
        RunRecord {
            schema_version: crate::report::RECORD_SCHEMA_VERSION,
            scenario: "s".into(),
            file: "s.yaml".into(),
            variant: "v".into(),
            seed,
            outcome: Outcome::Converged,
            expected: vec![Outcome::Converged],
            passed: true,
            trail_digest: "d".into(),
            sim_elapsed_ms: 1,
            wall_ms: 1,
            ..RunRecord::default()
        }
    }

    fn line(seed: u64) -> String {
        serde_json::to_string(&record(seed)).unwrap() + "\n"
    }

    #[test]
    fn a_bad_line_is_counted_and_the_records_after_it_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULTS_FILE);
        let text = line(1) + "garbage\n" + &line(2) + "{\"half\n" + &line(3) + "{\"torn";
        std::fs::write(&path, &text).unwrap();
        let c = read(&path).unwrap();
        assert_eq!(
            c.records.iter().map(|r| r.seed).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert_eq!(c.unreadable, vec![2, 4]);
        assert!(c.torn);
        assert_eq!(c.intact as usize, text.len() - "{\"torn".len());
        // Resuming over unreadable lines is refused, and the file is untouched.
        let Err(OpenError::Unreadable { lines, .. }) = ResultsFile::open(dir.path()) else {
            panic!("opened a damaged results file")
        };
        assert_eq!(lines, vec![2, 4]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn only_a_torn_last_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULTS_FILE);
        let text = line(1) + &line(2) + "{\"sce";
        std::fs::write(&path, &text).unwrap();
        let (_file, c) = ResultsFile::open(dir.path()).unwrap();
        assert_eq!(c.records.len(), 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), line(1) + &line(2));
    }

    #[test]
    fn an_overlong_line_is_unreadable_without_being_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULTS_FILE);
        let mut f = File::create(&path).unwrap();
        f.write_all(line(1).as_bytes()).unwrap();
        f.write_all(&vec![b'x'; LINE_BYTES_MAX as usize + 10])
            .unwrap();
        f.write_all(b"\n").unwrap();
        f.write_all(line(2).as_bytes()).unwrap();
        drop(f);
        let c = read(&path).unwrap();
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.unreadable, vec![2]);
        assert!(!c.torn);
    }
}
