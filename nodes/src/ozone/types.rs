//! Vocabulary shared by the OM's parts: term-indices, table names, the rows the
//! tables hold, batch operations on the DB, and response statuses.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A Raft (term, index) pair, ordered by term first, as Ratis's `TermIndex`.
/// The index is signed because the OM's bookkeeping starts at -1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TermIndex {
    pub term: u64,
    pub index: i64,
}

impl TermIndex {
    pub const fn new(term: u64, index: i64) -> Self {
        TermIndex { term, index }
    }
    /// `lastNotifiedTermIndex` at construction of the state machine.
    pub const INITIAL_NOTIFIED: TermIndex = TermIndex::new(0, -1);
}

impl fmt::Display for TermIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(t:{}, i:{})", self.term, self.index)
    }
}

/// Column families of the OM DB stand-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    Volume,
    Bucket,
    Dir,
    File,
    /// Active object store `deletedDirTable`.
    DeletedDir,
    /// Active object store `deletedTable` (files waiting for KeyDeletingService).
    Deleted,
    SnapshotInfo,
    /// A snapshot's own `deletedDirTable`; keys are `<snapshot id>|<row key>`.
    SnapDeletedDir,
    /// A snapshot's own `deletedTable`; keys are `<snapshot id>|<row key>`.
    SnapDeleted,
    TransactionInfo,
    /// Ghost rows for the checkers (not part of the real DB): a flushed
    /// `TRANSACTION_INFO` that covers an entry whose effects were not written.
    Audit,
}

impl Table {
    /// Tables with a table cache in front of the DB. The deleted tables have none
    /// (the DB is written only by the double buffer flush), as in the OM.
    pub fn cached(self) -> bool {
        match self {
            Table::Volume | Table::Bucket | Table::Dir | Table::File | Table::SnapshotInfo => true,
            Table::DeletedDir
            | Table::Deleted
            | Table::SnapDeletedDir
            | Table::SnapDeleted
            | Table::TransactionInfo
            | Table::Audit => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Table::Volume => "volume",
            Table::Bucket => "bucket",
            Table::Dir => "dir",
            Table::File => "file",
            Table::DeletedDir => "deletedDir",
            Table::Deleted => "deleted",
            Table::SnapshotInfo => "snapshot",
            Table::SnapDeletedDir => "snapDeletedDir",
            Table::SnapDeleted => "snapDeleted",
            Table::TransactionInfo => "transactionInfo",
            Table::Audit => "audit",
        }
    }
}

pub const TRANSACTION_INFO_KEY: &str = "#TRANSACTIONINFO";

/// One write of an atomic DB batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BatchOp {
    Put {
        table: Table,
        key: String,
        value: String,
    },
    Delete {
        table: Table,
        key: String,
    },
    /// Snapshot checkpoint (OmSnapshotManager.createOmSnapshotCheckpoint): the
    /// snapshot takes over the bucket's rows of the active deleted tables. It is
    /// expanded against the DB when the batch commits, because the checkpoint is
    /// taken at flush time (which is why CreateSnapshot is a batch of its own).
    Checkpoint {
        bucket: String,
        snapshot_id: String,
    },
    /// A purged snapshot hands its remaining deleted rows to the next snapshot of
    /// its bucket, or back to the active object store (what SnapshotDeletingService
    /// does before it submits the purge).
    HandOver {
        snapshot_id: String,
        to: Option<String>,
    },
}

/// Result codes the model uses (OMException result codes, plus the two statuses
/// `processResponse` terminates on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Ok,
    VolumeAlreadyExists,
    VolumeNotFound,
    BucketAlreadyExists,
    BucketNotFound,
    DirectoryAlreadyExists,
    DirectoryNotFound,
    DirectoryNotEmpty,
    FileAlreadyExists,
    FileNotFound,
    KeyNotFound,
    QuotaExceeded,
    InvalidSnapshotError,
    InvalidRequest,
    InternalError,
    MetadataError,
}

impl Status {
    pub fn code(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::VolumeAlreadyExists => "VOLUME_ALREADY_EXISTS",
            Status::VolumeNotFound => "VOLUME_NOT_FOUND",
            Status::BucketAlreadyExists => "BUCKET_ALREADY_EXISTS",
            Status::BucketNotFound => "BUCKET_NOT_FOUND",
            Status::DirectoryAlreadyExists => "DIRECTORY_ALREADY_EXISTS",
            Status::DirectoryNotFound => "DIRECTORY_NOT_FOUND",
            Status::DirectoryNotEmpty => "DIRECTORY_NOT_EMPTY",
            Status::FileAlreadyExists => "FILE_ALREADY_EXISTS",
            Status::FileNotFound => "FILE_NOT_FOUND",
            Status::KeyNotFound => "KEY_NOT_FOUND",
            Status::QuotaExceeded => "QUOTA_EXCEEDED",
            Status::InvalidSnapshotError => "INVALID_SNAPSHOT_ERROR",
            Status::InvalidRequest => "INVALID_REQUEST",
            Status::InternalError => "INTERNAL_ERROR",
            Status::MetadataError => "METADATA_ERROR",
        }
    }
}

/// The request kinds, for batching and for the trail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cmd {
    CreateVolume,
    CreateBucket,
    SetQuota,
    Mkdir,
    PutFile,
    Delete,
    CreateSnapshot,
    DeleteSnapshot,
    SnapshotPurge,
    PurgeDirectories,
    PurgeKeys,
    SetSnapshotProperty,
}

impl Cmd {
    pub fn name(self) -> &'static str {
        match self {
            Cmd::CreateVolume => "CreateVolume",
            Cmd::CreateBucket => "CreateBucket",
            Cmd::SetQuota => "SetBucketProperty",
            Cmd::Mkdir => "CreateDirectory",
            Cmd::PutFile => "CreateFile",
            Cmd::Delete => "DeleteKey",
            Cmd::CreateSnapshot => "CreateSnapshot",
            Cmd::DeleteSnapshot => "DeleteSnapshot",
            Cmd::SnapshotPurge => "SnapshotPurge",
            Cmd::PurgeDirectories => "PurgeDirectories",
            Cmd::PurgeKeys => "PurgeKeys",
            Cmd::SetSnapshotProperty => "SetSnapshotProperty",
        }
    }

    /// `OzoneManagerDoubleBuffer.isStandaloneBatchCmdTypes`.
    pub fn standalone(self) -> bool {
        matches!(self, Cmd::CreateSnapshot | Cmd::SnapshotPurge)
    }
}

/// What a request's `validateAndUpdateCache` produced: the status the client
/// sees, and the DB writes `addToDBBatch` would make (used only when OK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub cmd: Cmd,
    pub status: Status,
    pub message: String,
    pub ops: Vec<BatchOp>,
    /// A value for the client (a snapshot id, a listing).
    pub value: Option<String>,
    /// Set by an active-object-store PurgeDirectories or PurgeKeys that
    /// applied (`DeletingServiceMetrics.setLastAOSTransactionInfo`, which both
    /// requests set; the flush check of both services reads it).
    pub aos_purge: bool,
    /// The counters of the bucket this request changed, after it (for the trail).
    pub usage: Option<String>,
}

impl Response {
    pub fn ok(cmd: Cmd, ops: Vec<BatchOp>) -> Self {
        Response {
            cmd,
            status: Status::Ok,
            message: String::new(),
            ops,
            value: None,
            aos_purge: false,
            usage: None,
        }
    }

    pub fn error(cmd: Cmd, status: Status, message: impl Into<String>) -> Self {
        assert!(
            status != Status::Ok,
            "an error response needs an error status"
        );
        Response {
            cmd,
            status,
            message: message.into(),
            ops: Vec::new(),
            value: None,
            aos_purge: false,
            usage: None,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    pub fn describe(&self) -> String {
        if self.message.is_empty() {
            self.status.code().to_string()
        } else {
            format!("{} {}", self.status.code(), self.message)
        }
    }
}

/// `OzoneManagerStateMachine.isCriticalError` (the HDDS-17603 patch): a response
/// on which `processResponse` terminates the OM. The double buffer's fix and
/// `processResponse` share this one predicate so they cannot drift apart.
pub fn is_critical_error(response: &Response) -> bool {
    !response.is_ok()
        && matches!(
            response.status,
            Status::InternalError | Status::MetadataError
        )
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeRow {
    pub object_id: u64,
}

/// The bucket row with its usage counters (OmBucketInfo).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketRow {
    pub object_id: u64,
    pub used_bytes: i64,
    pub used_namespace: i64,
    pub snapshot_used_bytes: i64,
    pub snapshot_used_namespace: i64,
    /// -1: no quota (OzoneConsts.QUOTA_RESET).
    pub quota_namespace: i64,
}

impl BucketRow {
    /// `getTotalBucketNamespace`: what the client and the quota check read.
    pub fn total_namespace(&self) -> i64 {
        self.used_namespace + self.snapshot_used_namespace
    }
    /// `getTotalBucketSpace`.
    pub fn total_bytes(&self) -> i64 {
        self.used_bytes + self.snapshot_used_bytes
    }
    pub fn counters(&self) -> String {
        format!(
            "usedBytes={}, usedNamespace={}, snapshotUsedBytes={}, snapshotUsedNamespace={}",
            self.used_bytes,
            self.used_namespace,
            self.snapshot_used_bytes,
            self.snapshot_used_namespace
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirRow {
    pub object_id: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRow {
    pub object_id: u64,
    pub size: i64,
}

/// A row of a deleted table (directory or file): enough to purge it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedRow {
    /// The path the client named (for the trail and the deleted-table key).
    pub path: String,
    pub object_id: u64,
    /// Object id of the directory (or bucket) it was created in: with the
    /// name, its key in the directory or file table (`fso_key`).
    pub parent_id: u64,
    pub bucket: String,
    pub bucket_id: u64,
    /// Files only.
    pub size: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SnapshotStatus {
    Active,
    Deleted,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRow {
    pub id: String,
    pub name: String,
    /// `/volume/bucket`: the snapshot path of the chain.
    pub bucket: String,
    pub status: SnapshotStatus,
    pub global_prev: Option<String>,
    pub path_prev: Option<String>,
    pub deep_clean: bool,
    pub deep_cleaned_dir: bool,
    /// Index of the entry that created it (chain order on load).
    pub created_index: u64,
    /// Index of the last PurgeDirectories applied from it (flush check of DDS).
    pub last_txn: u64,
}

impl SnapshotRow {
    pub fn describe(&self) -> String {
        let status = match self.status {
            SnapshotStatus::Active => "ACTIVE",
            SnapshotStatus::Deleted => "DELETED",
        };
        format!(
            "id={} status={status} pathPrev={} globalPrev={} deepCleanedDir={}",
            self.id,
            self.path_prev.as_deref().unwrap_or("-"),
            self.global_prev.as_deref().unwrap_or("-"),
            self.deep_cleaned_dir
        )
    }
}

/// Row key of a deleted row: the path plus the object id, as
/// `getOzoneDeletePathKey`, so a re-created path is a different row.
pub fn delete_key(path: &str, object_id: u64) -> String {
    format!("{path}#{object_id}")
}

/// Key of a directory or file table row: the bucket, the object id of the
/// parent directory (or of the bucket) and the name, as
/// `OMMetadataManager.getOzonePathKey` (`/volumeId/bucketId/parentId/name`; the
/// model keeps the volume and bucket names). A deleted directory's children
/// keep their parent's object id, so a directory re-created at the same path
/// (a new object id) does not see them, and a re-created child does not
/// collide with them.
pub fn fso_key(bucket: &str, parent_id: u64, name: &str) -> String {
    format!("{bucket}/{parent_id}/{name}")
}

/// The last component of a path: `f` of `/v/b/d/f`.
pub fn name_of(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Key of a snapshot-owned row.
pub fn snap_key(snapshot_id: &str, key: &str) -> String {
    format!("{snapshot_id}|{key}")
}

/// `(volume, bucket, rest)` of `/v/b/rest...`; `rest` may be empty.
pub fn split_path(path: &str) -> Option<(String, String, String)> {
    let trimmed = path.strip_prefix('/')?;
    let mut parts = trimmed.splitn(3, '/');
    let volume = parts.next().filter(|s| !s.is_empty())?;
    let bucket = parts.next().filter(|s| !s.is_empty())?;
    let rest = parts.next().unwrap_or("");
    Some((volume.to_string(), bucket.to_string(), rest.to_string()))
}

/// The parent path of `/v/b/a/c` is `/v/b/a`.
pub fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(at) => &path[..at],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_index_orders_by_term_first() {
        assert!(TermIndex::new(2, 11) > TermIndex::new(1, 12));
        assert!(TermIndex::new(1, 10) < TermIndex::new(1, 11));
        assert_eq!(TermIndex::new(1, 10).to_string(), "(t:1, i:10)");
    }

    #[test]
    fn critical_errors_are_internal_and_metadata_errors_only() {
        let ok = Response::ok(Cmd::Mkdir, vec![]);
        assert!(!is_critical_error(&ok));
        for status in [Status::InternalError, Status::MetadataError] {
            assert!(is_critical_error(&Response::error(
                Cmd::SnapshotPurge,
                status,
                "x"
            )));
        }
        assert!(!is_critical_error(&Response::error(
            Cmd::CreateSnapshot,
            Status::FileAlreadyExists,
            "x"
        )));
    }

    #[test]
    fn paths_split_into_volume_bucket_and_rest() {
        assert_eq!(
            split_path("/v/b/d2/f"),
            Some(("v".into(), "b".into(), "d2/f".into()))
        );
        assert_eq!(
            split_path("/v/b"),
            Some(("v".into(), "b".into(), "".into()))
        );
        assert_eq!(split_path("v/b"), None);
        assert_eq!(split_path("/v"), None);
        assert_eq!(parent_of("/v/b/d2/f"), "/v/b/d2");
        assert_eq!(name_of("/v/b/d2/f"), "f");
        assert_eq!(fso_key("/v/b", 7, "f"), "/v/b/7/f");
    }
}
