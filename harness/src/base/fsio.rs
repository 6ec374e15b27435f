//! Every file faultline reads or writes goes through here, because its inputs and
//! its report directories may be hostile (issue: fifos that hang a read, devices
//! read until memory runs out, symlinks planted in a shared report directory).
//!
//! - Reads accept only regular files (after following a symlink the user gave) and
//!   stop at a hard cap, so no input can cost more than the cap.
//! - Writes go to a temporary file with an unpredictable name created with
//!   `O_EXCL` (the `tempfile` crate) and mode 0666 less the umask, are fsynced
//!   and renamed into place: a killed process or a full disk leaves the old file
//!   or the new one, never half of one and never a stray temporary file.
//! - Inside a report tree (the `--out` or `--report-dir` the user named), no
//!   component may be a symlink: faultline refuses to write through one rather
//!   than follow it out of the tree. The tree's root itself is the user's choice
//!   and may be a link. (A process that can write the tree concurrently could
//!   still swap a checked directory for a link between the check and the write;
//!   the window is a few system calls.)

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Why a file could not be read or written; always names the path.
#[derive(Debug)]
pub struct Error {
    pub path: PathBuf,
    pub kind: ErrorKind,
}

#[derive(Debug)]
pub enum ErrorKind {
    /// The operating system said no; `doing` is "reading", "writing", ...
    Io {
        doing: &'static str,
        source: io::Error,
    },
    /// Not a regular file: a directory, fifo, device or socket.
    NotRegular(&'static str),
    /// Larger than the cap for this kind of input.
    TooLarge { limit: u64 },
    /// A symlink inside a report tree, which faultline will not write through.
    Symlink,
}

impl Error {
    fn io(path: &Path, doing: &'static str, source: io::Error) -> Error {
        Error {
            path: path.to_path_buf(),
            kind: ErrorKind::Io { doing, source },
        }
    }

    /// Whether the file is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.kind, ErrorKind::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = crate::base::text::printable(&self.path.display().to_string()).into_owned();
        match &self.kind {
            ErrorKind::Io { doing, source } => write!(f, "{path}: {doing}: {}", io_text(source)),
            ErrorKind::NotRegular(what) => {
                write!(
                    f,
                    "{path}: is {what}, not a regular file; give a regular file"
                )
            }
            ErrorKind::TooLarge { limit } => {
                write!(f, "{path}: file is larger than the limit of {limit} bytes")
            }
            ErrorKind::Symlink => write!(
                f,
                "{path}: is a symbolic link inside the report directory; faultline does not \
                 write through links there (remove it, or choose another directory)"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// An OS error in words a user can act on (ELOOP is "too many levels of symbolic
/// links" in libc's words; we say what that usually means).
pub fn io_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ELOOP) => "a symbolic link loop (a link that leads back to itself)".into(),
        Some(libc::ENOENT) => "no such file or directory".into(),
        Some(libc::ENOSPC) => "no space left on the device".into(),
        _ => {
            let text = e.to_string();
            // Drop the " (os error N)" tail: the words say it.
            match text.find(" (os error") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        }
    }
}

/// What a non-regular file is, for messages.
pub fn file_kind(ty: std::fs::FileType) -> &'static str {
    if ty.is_dir() {
        "a directory"
    } else if ty.is_fifo() {
        "a fifo (named pipe)"
    } else if ty.is_char_device() {
        "a character device"
    } else if ty.is_block_device() {
        "a block device"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_symlink() {
        "a symbolic link"
    } else {
        "a regular file"
    }
}

/// Read a whole regular file of at most `limit` bytes. A fifo or device is refused
/// without blocking on it: the file is opened non-blocking and checked before any
/// byte is read.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    // One byte more than the cap tells "exactly at the cap" from "over it".
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "reading", e))?;
    if bytes.len() as u64 > limit {
        return Err(Error {
            path: path.to_path_buf(),
            kind: ErrorKind::TooLarge { limit },
        });
    }
    Ok(bytes)
}

/// The text of a file faultline is about to rewrite while keeping part of it (a
/// doc whose hand-written notes survive a `--out` rewrite): empty when the file
/// is not there yet, else its text; an error when it cannot be read, is not a
/// regular file, is over `limit` or is not UTF-8, so nothing is overwritten unread.
pub fn read_existing_text(path: &Path, limit: u64) -> Result<String, Error> {
    match read_capped(path, limit) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            Error::io(
                path,
                "reading",
                io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"),
            )
        }),
        Err(e) if e.is_not_found() => Ok(String::new()),
        Err(e) => Err(e),
    }
}

/// Open a regular file for reading (following a symlink), refusing anything else.
pub fn open_regular(path: &Path) -> Result<File, Error> {
    let file = OpenOptions::new()
        .read(true)
        // Opening a fifo for reading blocks until a writer appears; non-blocking, it
        // returns at once, and the type check below refuses it.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let ty = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot read", e))?
        .file_type();
    if !ty.is_file() {
        return Err(Error {
            path: path.to_path_buf(),
            kind: ErrorKind::NotRegular(file_kind(ty)),
        });
    }
    Ok(file)
}

/// Write `bytes` to `path` atomically: a temporary file beside it, fsync, rename.
/// The temporary file has an unpredictable name, is created exclusively (never
/// through an existing file or link), and is removed if anything fails.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = parent(path);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "creating the directory", e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    // Mode 0666 less the umask, as every other tool creates files (tempfile's
    // own default is 0600, which hides reports from a shared CI reader).
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, "creating a temporary file in", e))?;
    // A failure here drops `tmp`, which deletes the temporary file.
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| Error::io(path, "writing", e))?;
    // rename(2) replaces a link at `path` itself; it never writes through it.
    tmp.persist(path)
        .map_err(|e| Error::io(path, "renaming into place", e.error))?;
    // Make the rename itself durable.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The components of `relative`, refusing `..`, absolute parts and anything else
/// that could leave the tree.
fn tree_components(relative: &Path) -> Result<Vec<&std::ffi::OsStr>, Error> {
    let mut parts = Vec::new();
    for c in relative.components() {
        match c {
            Component::Normal(n) => parts.push(n),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Error::io(
                    relative,
                    "writing",
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "a report path must stay inside the report directory",
                    ),
                ));
            }
        }
    }
    Ok(parts)
}

/// Create the directory `root/relative` (and the ones above it, up to `root`),
/// refusing a symlink at any component below `root`. Returns the full path.
pub fn tree_dir(root: &Path, relative: &Path) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, "creating the directory", e))?;
    let mut at = root.to_path_buf();
    for part in tree_components(relative)? {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error {
                    path: at,
                    kind: ErrorKind::Symlink,
                })
            }
            Ok(m) if m.is_dir() => {}
            Ok(m) => {
                return Err(Error {
                    path: at,
                    kind: ErrorKind::NotRegular(file_kind(m.file_type())),
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::create_dir(&at) {
                Ok(()) => {}
                // Another process made it meanwhile: check it again on the next write.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(&at, "creating the directory", e)),
            },
            Err(e) => return Err(Error::io(&at, "cannot inspect", e)),
        }
    }
    Ok(at)
}

/// Refuse `path` if it is a symlink (a planted link must not be written through,
/// nor silently replaced where a user may expect it to be followed).
pub fn refuse_link(path: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error {
            path: path.to_path_buf(),
            kind: ErrorKind::Symlink,
        }),
        Ok(m) if !m.is_file() => Err(Error {
            path: path.to_path_buf(),
            kind: ErrorKind::NotRegular(file_kind(m.file_type())),
        }),
        _ => Ok(()),
    }
}

/// Write the file `root/relative` atomically, with no symlink below `root` on the
/// way (see the module doc). Returns the full path.
pub fn tree_write(root: &Path, relative: &Path, bytes: &[u8]) -> Result<PathBuf, Error> {
    let dir = tree_dir(root, parent_rel(relative))?;
    let name = relative.file_name().ok_or_else(|| {
        Error::io(
            relative,
            "writing",
            io::Error::new(io::ErrorKind::InvalidInput, "no file name"),
        )
    })?;
    let path = dir.join(name);
    refuse_link(&path)?;
    atomic_write(&path, bytes)?;
    Ok(path)
}

fn parent_rel(relative: &Path) -> &Path {
    relative.parent().unwrap_or(Path::new(""))
}

/// Open `path` for appending, creating it, never through a symlink (`O_NOFOLLOW`),
/// and only if it is a regular file.
pub fn open_append(path: &Path) -> Result<File, Error> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                Error {
                    path: path.to_path_buf(),
                    kind: ErrorKind::Symlink,
                }
            } else {
                Error::io(path, "opening", e)
            }
        })?;
    let ty = file
        .metadata()
        .map_err(|e| Error::io(path, "opening", e))?
        .file_type();
    if !ty.is_file() {
        return Err(Error {
            path: path.to_path_buf(),
            kind: ErrorKind::NotRegular(file_kind(ty)),
        });
    }
    Ok(file)
}

/// An advisory, exclusive lock on a directory, held until dropped: two sweeps (or
/// a sweep and a merge) never write one output directory at once.
pub struct DirLock {
    _file: File,
}

/// The lock file's name inside a locked directory.
pub const LOCK_FILE: &str = ".faultline.lock";

/// Why a directory could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it.
    Held(PathBuf),
    /// The path names a file, not a directory.
    NotADirectory(PathBuf),
    Io(Error),
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Held(dir) => write!(
                f,
                "{}: another faultline process is writing this directory (it holds {}); \
                 wait for it to finish, or choose another directory",
                crate::base::text::printable(&dir.display().to_string()),
                LOCK_FILE
            ),
            LockError::NotADirectory(path) => write!(
                f,
                "{}: is a file, not a directory; give a directory",
                crate::base::text::printable(&path.display().to_string())
            ),
            LockError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl DirLock {
    /// Take the lock on `dir` (created if missing) without waiting.
    pub fn try_new(dir: &Path) -> Result<DirLock, LockError> {
        use fs4::FileExt;
        if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(LockError::NotADirectory(dir.to_path_buf()));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| LockError::Io(Error::io(dir, "creating the directory", e)))?;
        let path = dir.join(LOCK_FILE);
        let file = open_append(&path).map_err(LockError::Io)?;
        match FileExt::try_lock(&file) {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(fs4::TryLockError::WouldBlock) => Err(LockError::Held(dir.to_path_buf())),
            Err(fs4::TryLockError::Error(e)) => Err(LockError::Io(Error::io(&path, "locking", e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_text_is_empty_when_absent_and_refused_when_unreadable() {
        let d = dir("existing");
        let path = d.path().join("doc.md");
        assert_eq!(read_existing_text(&path, 100).unwrap(), "");
        std::fs::write(&path, "notes").unwrap();
        assert_eq!(read_existing_text(&path, 100).unwrap(), "notes");
        assert!(matches!(
            read_existing_text(&path, 2).unwrap_err().kind,
            ErrorKind::TooLarge { limit: 2 }
        ));
        std::fs::write(&path, b"\xff\xfe").unwrap();
        assert!(read_existing_text(&path, 100)
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
        assert!(matches!(
            read_existing_text(d.path(), 100).unwrap_err().kind,
            ErrorKind::NotRegular(_)
        ));
    }

    fn dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("faultline-fsio-{name}-"))
            .tempdir()
            .unwrap()
    }

    #[test]
    fn atomic_write_replaces_whole_files_and_leaves_no_temporary_file() {
        let d = dir("atomic");
        let path = d.path().join("x.json");
        atomic_write(&path, b"old").unwrap();
        atomic_write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn reads_refuse_fifos_devices_and_oversized_files() {
        let d = dir("read");
        let fifo = d.path().join("f.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_capped(&fifo, 10).unwrap_err();
        assert!(e.to_string().contains("is a fifo"), "{e}");
        let e = read_capped(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let big = d.path().join("big");
        std::fs::write(&big, [b'x'; 11]).unwrap();
        assert!(matches!(
            read_capped(&big, 10).unwrap_err().kind,
            ErrorKind::TooLarge { limit: 10 }
        ));
        assert_eq!(read_capped(&big, 11).unwrap().len(), 11);
    }

    #[test]
    fn tree_writes_refuse_planted_links_and_paths_that_leave_the_tree() {
        let d = dir("tree");
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let root = d.path().join("root");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("runs")).unwrap();
        let e = tree_write(&root, Path::new("runs/a/report.json"), b"x").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        std::os::unix::fs::symlink(outside.join("target"), root.join("junit.xml")).unwrap();
        let e = tree_write(&root, Path::new("junit.xml"), b"x").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        assert!(tree_write(&root, Path::new("../escape"), b"x").is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let written = tree_write(&root, Path::new("a/b/c.json"), b"ok").unwrap();
        assert_eq!(std::fs::read(written).unwrap(), b"ok");
    }

    #[test]
    fn appends_never_follow_a_link_and_a_lock_is_exclusive() {
        let d = dir("append");
        let target = d.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = d.path().join("results.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            open_append(&link).unwrap_err().kind,
            ErrorKind::Symlink
        ));
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let out = d.path().join("out");
        let held = DirLock::try_new(&out).unwrap();
        assert!(matches!(DirLock::try_new(&out), Err(LockError::Held(_))));
        drop(held);
        assert!(DirLock::try_new(&out).is_ok());
        let file = d.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let e = DirLock::try_new(&file).err().unwrap().to_string();
        assert!(e.contains("is a file, not a directory"), "{e}");
    }
}
