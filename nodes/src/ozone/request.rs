//! OM write requests as they travel in the Raft log, and their
//! `validateAndUpdateCache`: each runs against a [`Store`] (table cache over the
//! DB, and the snapshot chain), updates the cache and the chain as it goes, and
//! returns a [`Response`] with the DB writes its `addToDBBatch` would make. An
//! error leaves the effects already made in the cache and the chain in place
//! (they vanish only with the process), and its DB writes are never made.
//!
//! Apply is blind in both modes of every bug: the purges do not check that the
//! rows they name are still pending.

use super::chain::SnapshotChain;
use super::types::{
    delete_key, fso_key, name_of, parent_of, snap_key, split_path, BatchOp, BucketRow, Cmd,
    DeletedRow, DirRow, FileRow, Response, SnapshotRow, SnapshotStatus, Status, Table, VolumeRow,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A failed DB read, by the exception the OM would see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// A `CodecException` (an IOException): INTERNAL_ERROR.
    Codec(String),
    /// A `RocksDBException` cause: METADATA_ERROR.
    RocksDb(String),
}

/// What a request sees of the OM.
pub trait Store {
    /// A read through the table cache; a miss reads the DB and may fail.
    /// `name` is what the fail points' key filter (`fault_key`) matches: the
    /// key, or for a directory or file row the path the client named.
    fn read(&mut self, table: Table, key: &str, name: &str) -> Result<Option<String>, ReadError>;
    /// Rows whose key starts with `prefix`: cache over DB for cached tables.
    fn scan(&self, table: Table, prefix: &str) -> Vec<(String, String)>;
    /// Update the table cache of a cached table (`None`: a tombstone).
    fn cache(&mut self, table: Table, key: &str, value: Option<&str>);
    fn chain(&mut self) -> &mut SnapshotChain;
}

/// One path of a `PurgeDirectories` request (PurgePathRequest).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PurgePath {
    pub bucket: String,
    pub bucket_id: u64,
    /// Row key of the deleted directory to remove, when all its children are in
    /// this request.
    pub deleted_dir: Option<String>,
    pub sub_files: Vec<DeletedRow>,
    pub sub_dirs: Vec<DeletedRow>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum OmRequest {
    CreateVolume {
        volume: String,
    },
    CreateBucket {
        bucket: String,
        quota_namespace: i64,
    },
    SetQuota {
        bucket: String,
        namespace: i64,
    },
    Mkdir {
        path: String,
    },
    PutFile {
        path: String,
        size: i64,
    },
    Delete {
        path: String,
        recursive: bool,
    },
    CreateSnapshot {
        bucket: String,
        name: String,
    },
    DeleteSnapshot {
        bucket: String,
        name: String,
    },
    SnapshotPurge {
        keys: Vec<String>,
    },
    PurgeDirectories {
        snapshot_key: Option<String>,
        expected_prev: Option<String>,
        paths: Vec<PurgePath>,
    },
    PurgeKeys {
        expected_prev: Option<String>,
        keys: Vec<(String, DeletedRow)>,
    },
    SetSnapshotProperty {
        key: String,
        deep_cleaned_dir: bool,
    },
}

impl OmRequest {
    pub fn cmd(&self) -> Cmd {
        match self {
            OmRequest::CreateVolume { .. } => Cmd::CreateVolume,
            OmRequest::CreateBucket { .. } => Cmd::CreateBucket,
            OmRequest::SetQuota { .. } => Cmd::SetQuota,
            OmRequest::Mkdir { .. } => Cmd::Mkdir,
            OmRequest::PutFile { .. } => Cmd::PutFile,
            OmRequest::Delete { .. } => Cmd::Delete,
            OmRequest::CreateSnapshot { .. } => Cmd::CreateSnapshot,
            OmRequest::DeleteSnapshot { .. } => Cmd::DeleteSnapshot,
            OmRequest::SnapshotPurge { .. } => Cmd::SnapshotPurge,
            OmRequest::PurgeDirectories { .. } => Cmd::PurgeDirectories,
            OmRequest::PurgeKeys { .. } => Cmd::PurgeKeys,
            OmRequest::SetSnapshotProperty { .. } => Cmd::SetSnapshotProperty,
        }
    }

    /// A short text for the trail.
    pub fn summary(&self) -> String {
        let name = self.cmd().name();
        match self {
            OmRequest::CreateVolume { volume } => format!("{name} /{volume}"),
            OmRequest::CreateBucket { bucket, .. } => format!("{name} {bucket}"),
            OmRequest::SetQuota { bucket, namespace } => {
                format!("{name} {bucket} quotaInNamespace={namespace}")
            }
            OmRequest::Mkdir { path } => format!("{name} {path}"),
            OmRequest::PutFile { path, size } => format!("{name} {path} size={size}"),
            OmRequest::Delete { path, recursive } => {
                format!("{name} {path}{}", if *recursive { " -r" } else { "" })
            }
            OmRequest::CreateSnapshot { bucket, name: snap }
            | OmRequest::DeleteSnapshot { bucket, name: snap } => format!("{name} {bucket}/{snap}"),
            OmRequest::SnapshotPurge { keys } => format!("{name} [{}]", keys.join(", ")),
            OmRequest::PurgeDirectories {
                snapshot_key,
                paths,
                ..
            } => {
                let from = snapshot_key.as_deref().unwrap_or("active object store");
                format!("{name} from {from} {}", describe_paths(paths))
            }
            OmRequest::PurgeKeys { keys, .. } => {
                let keys: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
                format!("{name} [{}]", keys.join(", "))
            }
            OmRequest::SetSnapshotProperty {
                key,
                deep_cleaned_dir,
            } => format!("{name} {key} deepCleanedDeletedDir={deep_cleaned_dir}"),
        }
    }
}

pub fn describe_paths(paths: &[PurgePath]) -> String {
    let parts: Vec<String> = paths
        .iter()
        .map(|p| {
            let mut part = p.deleted_dir.clone().unwrap_or_else(|| "(keep dir)".into());
            if !p.sub_files.is_empty() {
                let files: Vec<&str> = p.sub_files.iter().map(|f| f.path.as_str()).collect();
                part.push_str(&format!(" files=[{}]", files.join(", ")));
            }
            if !p.sub_dirs.is_empty() {
                let dirs: Vec<&str> = p.sub_dirs.iter().map(|d| d.path.as_str()).collect();
                part.push_str(&format!(" subdirs=[{}]", dirs.join(", ")));
            }
            part
        })
        .collect();
    format!("[{}]", parts.join("; "))
}

/// A failure inside a request: its status and message.
type Fail = (Status, String);

/// The writes of one request: the cache as it goes, the DB ops for the response.
struct Txn<'a, S: Store> {
    store: &'a mut S,
    ops: Vec<BatchOp>,
    index: u64,
    usage: Option<String>,
}

impl<S: Store> Txn<'_, S> {
    fn get<T: DeserializeOwned>(&mut self, table: Table, key: &str) -> Result<Option<T>, Fail> {
        self.get_named(table, key, key)
    }

    /// A read of a directory or file row by its key, named by the client's path.
    fn get_named<T: DeserializeOwned>(
        &mut self,
        table: Table,
        key: &str,
        name: &str,
    ) -> Result<Option<T>, Fail> {
        match self.store.read(table, key, name) {
            Ok(Some(text)) => Ok(Some(serde_json::from_str(&text).expect("rows parse"))),
            Ok(None) => Ok(None),
            Err(ReadError::Codec(message)) => Err((
                Status::InternalError,
                format!("CodecException reading {} {name}: {message}", table.name()),
            )),
            Err(ReadError::RocksDb(message)) => Err((
                Status::MetadataError,
                format!(
                    "RocksDBException reading {} {name}: {message}",
                    table.name()
                ),
            )),
        }
    }

    fn put<T: Serialize>(&mut self, table: Table, key: &str, row: &T) {
        let value = serde_json::to_string(row).expect("rows serialize");
        if table.cached() {
            self.store.cache(table, key, Some(&value));
        }
        self.ops.push(BatchOp::Put {
            table,
            key: key.to_string(),
            value,
        });
    }

    fn delete(&mut self, table: Table, key: &str) {
        if table.cached() {
            self.store.cache(table, key, None);
        }
        self.ops.push(BatchOp::Delete {
            table,
            key: key.to_string(),
        });
    }

    fn bucket(&mut self, key: &str) -> Result<BucketRow, Fail> {
        self.get(Table::Bucket, key)?
            .ok_or((Status::BucketNotFound, format!("Bucket not found: {key}")))
    }

    fn put_bucket(&mut self, key: &str, row: &BucketRow) {
        self.put(Table::Bucket, key, row);
        self.usage = Some(format!("bucket {key} ({})", row.counters()));
    }

    fn snapshot(&mut self, key: &str) -> Result<SnapshotRow, Fail> {
        self.get(Table::SnapshotInfo, key)?.ok_or((
            Status::FileNotFound,
            format!("Snapshot does not exist: {key}"),
        ))
    }
}

/// `validateAndUpdateCache` of one request at log index `index`.
pub fn apply<S: Store>(store: &mut S, index: u64, request: &OmRequest) -> Response {
    let cmd = request.cmd();
    let mut txn = Txn {
        store,
        ops: Vec::new(),
        index,
        usage: None,
    };
    let result = run(&mut txn, request);
    let usage = txn.usage.take();
    let mut response = match result {
        Ok(value) => {
            let mut response = Response::ok(cmd, txn.ops);
            response.value = value;
            response
        }
        Err((status, message)) => Response::error(cmd, status, message),
    };
    response.usage = usage;
    response.aos_purge = response.is_ok()
        && match request {
            OmRequest::PurgeDirectories { snapshot_key, .. } => snapshot_key.is_none(),
            // The model's KeyDeletingService purges the active object store only.
            OmRequest::PurgeKeys { .. } => true,
            OmRequest::CreateVolume { .. }
            | OmRequest::CreateBucket { .. }
            | OmRequest::SetQuota { .. }
            | OmRequest::Mkdir { .. }
            | OmRequest::PutFile { .. }
            | OmRequest::Delete { .. }
            | OmRequest::CreateSnapshot { .. }
            | OmRequest::DeleteSnapshot { .. }
            | OmRequest::SnapshotPurge { .. }
            | OmRequest::SetSnapshotProperty { .. } => false,
        };
    response
}

fn run<S: Store>(txn: &mut Txn<'_, S>, request: &OmRequest) -> Result<Option<String>, Fail> {
    match request {
        OmRequest::CreateVolume { volume } => create_volume(txn, volume).map(|_| None),
        OmRequest::CreateBucket {
            bucket,
            quota_namespace,
        } => create_bucket(txn, bucket, *quota_namespace).map(|_| None),
        OmRequest::SetQuota { bucket, namespace } => {
            let mut row = txn.bucket(bucket)?;
            row.quota_namespace = *namespace;
            txn.put_bucket(bucket, &row);
            Ok(None)
        }
        OmRequest::Mkdir { path } => mkdir(txn, path).map(|_| None),
        OmRequest::PutFile { path, size } => put_file(txn, path, *size).map(|_| None),
        OmRequest::Delete { path, recursive } => delete(txn, path, *recursive).map(|_| None),
        OmRequest::CreateSnapshot { bucket, name } => create_snapshot(txn, bucket, name).map(Some),
        OmRequest::DeleteSnapshot { bucket, name } => {
            delete_snapshot(txn, bucket, name).map(|_| None)
        }
        OmRequest::SnapshotPurge { keys } => snapshot_purge(txn, keys).map(|_| None),
        OmRequest::PurgeDirectories {
            snapshot_key,
            expected_prev,
            paths,
        } => purge_directories(
            txn,
            snapshot_key.as_deref(),
            expected_prev.as_deref(),
            paths,
        )
        .map(|_| None),
        OmRequest::PurgeKeys {
            expected_prev,
            keys,
        } => purge_keys(txn, expected_prev.as_deref(), keys).map(|_| None),
        OmRequest::SetSnapshotProperty {
            key,
            deep_cleaned_dir,
        } => {
            let mut row = txn.snapshot(key)?;
            row.deep_cleaned_dir = *deep_cleaned_dir;
            txn.put(Table::SnapshotInfo, key, &row);
            Ok(None)
        }
    }
}

fn create_volume<S: Store>(txn: &mut Txn<'_, S>, volume: &str) -> Result<(), Fail> {
    let key = format!("/{volume}");
    if txn.get::<VolumeRow>(Table::Volume, &key)?.is_some() {
        return Err((Status::VolumeAlreadyExists, format!("Volume exists: {key}")));
    }
    let row = VolumeRow {
        object_id: txn.index,
    };
    txn.put(Table::Volume, &key, &row);
    Ok(())
}

fn create_bucket<S: Store>(txn: &mut Txn<'_, S>, bucket: &str, quota: i64) -> Result<(), Fail> {
    let (volume, _, _) = split_path(bucket).expect("validated bucket path");
    let volume_key = format!("/{volume}");
    if txn.get::<VolumeRow>(Table::Volume, &volume_key)?.is_none() {
        return Err((
            Status::VolumeNotFound,
            format!("Volume not found: {volume_key}"),
        ));
    }
    if txn.get::<BucketRow>(Table::Bucket, bucket)?.is_some() {
        return Err((
            Status::BucketAlreadyExists,
            format!("Bucket exists: {bucket}"),
        ));
    }
    // Object ids derive from the transaction index, as OmUtils.getObjectIdFromTxId.
    let row = BucketRow {
        object_id: txn.index,
        used_bytes: 0,
        used_namespace: 0,
        snapshot_used_bytes: 0,
        snapshot_used_namespace: 0,
        quota_namespace: quota,
    };
    txn.put_bucket(bucket, &row);
    Ok(())
}

/// The bucket key (`/v/b`) of a path inside a bucket.
fn bucket_key(path: &str) -> String {
    let (volume, bucket, _) = split_path(path).expect("validated path");
    format!("/{volume}/{bucket}")
}

/// Where a path lives in the directory and file tables.
struct Located {
    /// Object id of the parent directory, or of the bucket.
    parent_id: u64,
    /// `fso_key(bucket, parent_id, name)`.
    key: String,
}

/// Resolve `path` from the bucket down, one directory row at a time, by the
/// parent's object id (OMFileRequest's path walk): `None` when a parent
/// directory does not exist.
fn locate<S: Store>(
    txn: &mut Txn<'_, S>,
    path: &str,
    bucket: &str,
    bucket_row: &BucketRow,
) -> Result<Option<Located>, Fail> {
    let rest = path
        .strip_prefix(bucket)
        .and_then(|r| r.strip_prefix('/'))
        .expect("validated path inside its bucket");
    let mut parent_id = bucket_row.object_id;
    let mut walked = bucket.to_string();
    let mut components: Vec<&str> = rest.split('/').collect();
    let name = components.pop().expect("split yields at least one part");
    for component in components {
        walked.push('/');
        walked.push_str(component);
        let key = fso_key(bucket, parent_id, component);
        match txn.get_named::<DirRow>(Table::Dir, &key, &walked)? {
            Some(dir) => parent_id = dir.object_id,
            None => return Ok(None),
        }
    }
    Ok(Some(Located {
        parent_id,
        key: fso_key(bucket, parent_id, name),
    }))
}

/// The parent of `path` must be the bucket or an existing directory.
fn locate_parent<S: Store>(
    txn: &mut Txn<'_, S>,
    path: &str,
    bucket: &str,
    bucket_row: &BucketRow,
) -> Result<Located, Fail> {
    locate(txn, path, bucket, bucket_row)?.ok_or_else(|| {
        (
            Status::DirectoryNotFound,
            format!("Parent directory not found: {}", parent_of(path)),
        )
    })
}

/// `checkBucketQuotaInNamespace`: the total namespace (used + snapshot used) is
/// what the quota is checked against.
fn check_quota_namespace(row: &BucketRow, bucket: &str, allocated: i64) -> Result<(), Fail> {
    let wanted = row.total_namespace() + allocated;
    if row.quota_namespace >= 0 && row.quota_namespace < wanted {
        return Err((
            Status::QuotaExceeded,
            format!(
                "The namespace quota of Bucket:{bucket} exceeded: quotaInNamespace: {} but namespace consumed: {wanted}.",
                row.quota_namespace
            ),
        ));
    }
    Ok(())
}

fn mkdir<S: Store>(txn: &mut Txn<'_, S>, path: &str) -> Result<(), Fail> {
    let bucket = bucket_key(path);
    let mut row = txn.bucket(&bucket)?;
    let at = locate_parent(txn, path, &bucket, &row)?;
    if txn
        .get_named::<DirRow>(Table::Dir, &at.key, path)?
        .is_some()
    {
        return Err((
            Status::DirectoryAlreadyExists,
            format!("Directory exists: {path}"),
        ));
    }
    if txn
        .get_named::<FileRow>(Table::File, &at.key, path)?
        .is_some()
    {
        return Err((
            Status::FileAlreadyExists,
            format!("A file exists at {path}"),
        ));
    }
    check_quota_namespace(&row, &bucket, 1)?;
    txn.put(
        Table::Dir,
        &at.key,
        &DirRow {
            object_id: txn.index,
        },
    );
    row.used_namespace += 1;
    txn.put_bucket(&bucket, &row);
    Ok(())
}

fn put_file<S: Store>(txn: &mut Txn<'_, S>, path: &str, size: i64) -> Result<(), Fail> {
    let bucket = bucket_key(path);
    let mut row = txn.bucket(&bucket)?;
    let at = locate_parent(txn, path, &bucket, &row)?;
    if txn
        .get_named::<DirRow>(Table::Dir, &at.key, path)?
        .is_some()
    {
        return Err((
            Status::DirectoryAlreadyExists,
            format!("A directory exists at {path}"),
        ));
    }
    // The key table is not fully cached: this read can reach the DB.
    if txn
        .get_named::<FileRow>(Table::File, &at.key, path)?
        .is_some()
    {
        return Err((Status::FileAlreadyExists, format!("File exists: {path}")));
    }
    check_quota_namespace(&row, &bucket, 1)?;
    txn.put(
        Table::File,
        &at.key,
        &FileRow {
            object_id: txn.index,
            size,
        },
    );
    row.used_namespace += 1;
    row.used_bytes += size;
    txn.put_bucket(&bucket, &row);
    Ok(())
}

/// Delete a file, or a directory (recursive: its children stay in the tables for
/// DirectoryDeletingService, under the directory's object id). What is deleted
/// moves from used to snapshot-used (OMKeyDeleteRequestWithFSO); an empty file
/// is released at once.
fn delete<S: Store>(txn: &mut Txn<'_, S>, path: &str, recursive: bool) -> Result<(), Fail> {
    let bucket = bucket_key(path);
    let mut row = txn.bucket(&bucket)?;
    let not_found = || (Status::KeyNotFound, format!("Key not found: {path}"));
    let Some(at) = locate(txn, path, &bucket, &row)? else {
        return Err(not_found());
    };
    if let Some(file) = txn.get_named::<FileRow>(Table::File, &at.key, path)? {
        txn.delete(Table::File, &at.key);
        row.used_bytes -= file.size;
        row.used_namespace -= 1;
        if file.size > 0 {
            row.snapshot_used_bytes += file.size;
            row.snapshot_used_namespace += 1;
            let deleted = DeletedRow {
                path: path.to_string(),
                object_id: file.object_id,
                parent_id: at.parent_id,
                bucket: bucket.clone(),
                bucket_id: row.object_id,
                size: file.size,
            };
            txn.put(Table::Deleted, &delete_key(path, file.object_id), &deleted);
        }
        txn.put_bucket(&bucket, &row);
        return Ok(());
    }
    let Some(dir) = txn.get_named::<DirRow>(Table::Dir, &at.key, path)? else {
        return Err(not_found());
    };
    // OMFileRequest.hasChildren: rows whose parent is this directory's object id.
    let prefix = fso_key(&bucket, dir.object_id, "");
    let has_children = !txn.store.scan(Table::Dir, &prefix).is_empty()
        || !txn.store.scan(Table::File, &prefix).is_empty();
    if has_children && !recursive {
        return Err((
            Status::DirectoryNotEmpty,
            format!("Directory is not empty: {path}"),
        ));
    }
    txn.delete(Table::Dir, &at.key);
    let deleted = DeletedRow {
        path: path.to_string(),
        object_id: dir.object_id,
        parent_id: at.parent_id,
        bucket: bucket.clone(),
        bucket_id: row.object_id,
        size: 0,
    };
    txn.put(
        Table::DeletedDir,
        &delete_key(path, dir.object_id),
        &deleted,
    );
    row.used_namespace -= 1;
    row.snapshot_used_namespace += 1;
    txn.put_bucket(&bucket, &row);
    Ok(())
}

fn create_snapshot<S: Store>(
    txn: &mut Txn<'_, S>,
    bucket: &str,
    name: &str,
) -> Result<String, Fail> {
    txn.bucket(bucket)?;
    let key = format!("{bucket}/{name}");
    if txn.get::<SnapshotRow>(Table::SnapshotInfo, &key)?.is_some() {
        return Err((
            Status::FileAlreadyExists,
            format!("Snapshot already exists: {key}"),
        ));
    }
    let chain = txn.store.chain();
    let row = SnapshotRow {
        id: format!("snap-{}", txn.index),
        name: name.to_string(),
        bucket: bucket.to_string(),
        status: SnapshotStatus::Active,
        global_prev: chain.latest_global().cloned(),
        path_prev: chain.latest_in_path(bucket).cloned(),
        deep_clean: false,
        deep_cleaned_dir: false,
        created_index: txn.index,
        // OMSnapshotCreateRequest sets lastTransactionInfo to the create entry:
        // the deleting services wait until the checkpoint is flushed
        // (areSnapshotChangesFlushedToDB).
        last_txn: txn.index,
    };
    // An IOException from the chain (not an OMException): INTERNAL_ERROR.
    chain
        .add(&key, &row)
        .map_err(|message| (Status::InternalError, message))?;
    txn.put(Table::SnapshotInfo, &key, &row);
    txn.ops.push(BatchOp::Checkpoint {
        bucket: bucket.to_string(),
        snapshot_id: row.id.clone(),
    });
    Ok(row.id)
}

fn delete_snapshot<S: Store>(txn: &mut Txn<'_, S>, bucket: &str, name: &str) -> Result<(), Fail> {
    let key = format!("{bucket}/{name}");
    let mut row = txn.snapshot(&key)?;
    if row.status != SnapshotStatus::Active {
        return Err((
            Status::FileNotFound,
            format!("Snapshot is not active: {key}"),
        ));
    }
    row.status = SnapshotStatus::Deleted;
    // OMSnapshotDeleteRequest sets lastTransactionInfo too.
    row.last_txn = txn.index;
    txn.put(Table::SnapshotInfo, &key, &row);
    Ok(())
}

/// OMSnapshotPurgeRequest: for each key in order, read it (cache, else DB), reset
/// the deep-clean flags of the next snapshot, relink the chains around it, and
/// tombstone it. A read error aborts with the effects on earlier keys kept in
/// the cache and the chain.
fn snapshot_purge<S: Store>(txn: &mut Txn<'_, S>, keys: &[String]) -> Result<(), Fail> {
    for key in keys {
        let Some(purged) = txn.get::<SnapshotRow>(Table::SnapshotInfo, key)? else {
            continue;
        };
        let next_path = txn.store.chain().next_in_path(&purged.id).cloned();
        let next_global = txn.store.chain().next_global(&purged.id).cloned();
        if let Some(next) = &next_path {
            let next_key = chain_key(txn, next)?;
            let mut row = txn.snapshot(&next_key)?;
            row.deep_clean = false;
            row.deep_cleaned_dir = false;
            row.path_prev = purged.path_prev.clone();
            // OMSnapshotPurgeRequest: every snapshot it updates gets the purge's
            // lastTransactionInfo.
            row.last_txn = txn.index;
            txn.put(Table::SnapshotInfo, &next_key, &row);
        }
        if let Some(next) = &next_global {
            let next_key = chain_key(txn, next)?;
            let mut row = txn.snapshot(&next_key)?;
            row.global_prev = purged.global_prev.clone();
            row.last_txn = txn.index;
            txn.put(Table::SnapshotInfo, &next_key, &row);
        }
        txn.store
            .chain()
            .remove(&purged.id)
            .map_err(|message| (Status::InternalError, message))?;
        txn.ops.push(BatchOp::HandOver {
            snapshot_id: purged.id.clone(),
            to: next_path,
        });
        txn.delete(Table::SnapshotInfo, key);
    }
    Ok(())
}

fn chain_key<S: Store>(txn: &mut Txn<'_, S>, id: &str) -> Result<String, Fail> {
    txn.store.chain().table_key(id).cloned().ok_or((
        Status::InternalError,
        format!("Snapshot chain has no table key for {id}"),
    ))
}

/// `validatePreviousSnapshotId`: the chain must not have changed since the scan.
fn check_previous<S: Store>(
    txn: &mut Txn<'_, S>,
    from: Option<&SnapshotRow>,
    expected: Option<&str>,
) -> Result<(), Fail> {
    let chain = txn.store.chain();
    // Every SnapshotChainManager getter calls validateSnapshotChain first: on a
    // chain whose load failed it throws IOException("Snapshot chain is
    // corrupted."), which the request answers as INTERNAL_ERROR (a critical
    // error: the OM terminates), never as a validation mismatch.
    if chain.is_corrupted() {
        return Err((Status::InternalError, super::chain::CORRUPTED.to_string()));
    }
    let actual = match from {
        Some(snapshot) => chain.previous_in_path(&snapshot.id).cloned(),
        None => chain.latest_global().cloned(),
    };
    if actual.as_deref() != expected {
        return Err((
            Status::InvalidSnapshotError,
            format!("Snapshot validation failed. Expected previous snapshotId : {expected:?} but was {actual:?}"),
        ));
    }
    Ok(())
}

/// OMDirectoriesPurgeRequestWithFSO: moves the usage of every entry named,
/// without checking that it is still pending.
fn purge_directories<S: Store>(
    txn: &mut Txn<'_, S>,
    snapshot_key: Option<&str>,
    expected_prev: Option<&str>,
    paths: &[PurgePath],
) -> Result<(), Fail> {
    let from = match snapshot_key {
        Some(key) => Some(txn.snapshot(key)?),
        None => None,
    };
    check_previous(txn, from.as_ref(), expected_prev)?;
    let (dir_table, file_table) = match from {
        Some(_) => (Table::SnapDeletedDir, Table::SnapDeleted),
        None => (Table::DeletedDir, Table::Deleted),
    };
    let store_key = |key: &str| match &from {
        Some(snapshot) => snap_key(&snapshot.id, key),
        None => key.to_string(),
    };
    for path in paths {
        let mut bucket = txn.get::<BucketRow>(Table::Bucket, &path.bucket)?;
        let matches = bucket
            .as_ref()
            .is_some_and(|b| b.object_id == path.bucket_id);
        for dir in &path.sub_dirs {
            let key = fso_key(&path.bucket, dir.parent_id, name_of(&dir.path));
            if let (true, Some(row)) = (matches, bucket.as_mut()) {
                row.used_namespace -= 1;
                row.snapshot_used_namespace += 1;
                txn.store.cache(Table::Dir, &key, None);
            }
            txn.ops.push(BatchOp::Delete {
                table: Table::Dir,
                key,
            });
            txn.put(
                dir_table,
                &store_key(&delete_key(&dir.path, dir.object_id)),
                dir,
            );
        }
        for file in &path.sub_files {
            let key = fso_key(&path.bucket, file.parent_id, name_of(&file.path));
            if let (true, Some(row)) = (matches, bucket.as_mut()) {
                row.used_bytes -= file.size;
                row.snapshot_used_bytes += file.size;
                row.used_namespace -= 1;
                row.snapshot_used_namespace += 1;
                txn.store.cache(Table::File, &key, None);
            }
            txn.ops.push(BatchOp::Delete {
                table: Table::File,
                key,
            });
            txn.put(
                file_table,
                &store_key(&delete_key(&file.path, file.object_id)),
                file,
            );
        }
        if let Some(deleted_dir) = &path.deleted_dir {
            if let (true, Some(row)) = (matches, bucket.as_mut()) {
                row.snapshot_used_namespace -= 1;
            }
            txn.delete(dir_table, &store_key(deleted_dir));
        }
        if let (true, Some(row)) = (matches, bucket) {
            txn.put_bucket(&path.bucket, &row);
        }
    }
    if let (Some(key), Some(mut snapshot)) = (snapshot_key, from) {
        snapshot.last_txn = txn.index;
        txn.put(Table::SnapshotInfo, key, &snapshot);
    }
    Ok(())
}

/// OMKeyPurgeRequest for the active object store: releases the snapshot usage of
/// each file it names, again without checking that the row is still pending.
fn purge_keys<S: Store>(
    txn: &mut Txn<'_, S>,
    expected_prev: Option<&str>,
    keys: &[(String, DeletedRow)],
) -> Result<(), Fail> {
    check_previous(txn, None, expected_prev)?;
    for (key, file) in keys {
        txn.delete(Table::Deleted, key);
        let Some(mut row) = txn.get::<BucketRow>(Table::Bucket, &file.bucket)? else {
            continue;
        };
        if row.object_id == file.bucket_id {
            row.snapshot_used_bytes -= file.size;
            row.snapshot_used_namespace -= 1;
            txn.put_bucket(&file.bucket, &row);
        }
    }
    Ok(())
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A store where the cache is the DB: enough to test accounting and errors.
    #[derive(Default)]
    pub struct MemStore {
        pub rows: BTreeMap<(Table, String), String>,
        pub chain: SnapshotChain,
        /// Keys whose reads fail.
        pub failing: BTreeMap<String, ReadError>,
    }

    impl MemStore {
        /// Apply a response's DB writes (what the flush would do) to the rows.
        pub fn flush(&mut self, response: &Response) {
            for op in &response.ops {
                match op {
                    BatchOp::Put { table, key, value } => {
                        self.rows.insert((*table, key.clone()), value.clone());
                    }
                    BatchOp::Delete { table, key } => {
                        self.rows.remove(&(*table, key.clone()));
                    }
                    BatchOp::Checkpoint {
                        bucket,
                        snapshot_id,
                    } => {
                        let prefix = format!("{bucket}/");
                        for (from, to) in [
                            (Table::DeletedDir, Table::SnapDeletedDir),
                            (Table::Deleted, Table::SnapDeleted),
                        ] {
                            for (key, value) in self.scan(from, &prefix) {
                                self.rows.remove(&(from, key.clone()));
                                self.rows.insert((to, snap_key(snapshot_id, &key)), value);
                            }
                        }
                    }
                    BatchOp::HandOver { .. } => {}
                }
            }
        }

        pub fn bucket(&self, key: &str) -> BucketRow {
            serde_json::from_str(&self.rows[&(Table::Bucket, key.to_string())]).unwrap()
        }

        pub fn count(&self, table: Table) -> usize {
            self.rows.keys().filter(|(t, _)| *t == table).count()
        }
    }

    impl Store for MemStore {
        fn read(
            &mut self,
            table: Table,
            key: &str,
            name: &str,
        ) -> Result<Option<String>, ReadError> {
            if let Some(error) = self.failing.get(name) {
                return Err(error.clone());
            }
            Ok(self.rows.get(&(table, key.to_string())).cloned())
        }
        fn scan(&self, table: Table, prefix: &str) -> Vec<(String, String)> {
            self.rows
                .iter()
                .filter(|((t, k), _)| *t == table && k.starts_with(prefix))
                .map(|((_, k), v)| (k.clone(), v.clone()))
                .collect()
        }
        fn cache(&mut self, table: Table, key: &str, value: Option<&str>) {
            match value {
                Some(v) => self.rows.insert((table, key.to_string()), v.to_string()),
                None => self.rows.remove(&(table, key.to_string())),
            };
        }
        fn chain(&mut self) -> &mut SnapshotChain {
            &mut self.chain
        }
    }

    /// Apply and flush in one go, returning the response.
    pub fn step(store: &mut MemStore, index: u64, request: OmRequest) -> Response {
        let response = apply(store, index, &request);
        if response.is_ok() {
            store.flush(&response);
        }
        response
    }

    fn counters(store: &MemStore) -> (i64, i64, i64, i64) {
        let b = store.bucket("/v/b");
        (
            b.used_bytes,
            b.used_namespace,
            b.snapshot_used_bytes,
            b.snapshot_used_namespace,
        )
    }

    fn setup() -> MemStore {
        let mut store = MemStore::default();
        let requests = vec![
            OmRequest::CreateVolume { volume: "v".into() },
            OmRequest::CreateBucket {
                bucket: "/v/b".into(),
                quota_namespace: -1,
            },
        ];
        for (i, request) in requests.into_iter().enumerate() {
            assert!(step(&mut store, i as u64 + 1, request).is_ok());
        }
        store
    }

    /// The report's active object store setup: (1024, 1, 0, 2) with d1, d2 deleted.
    fn deleted_dirs() -> MemStore {
        let mut store = setup();
        let requests = vec![
            OmRequest::Mkdir {
                path: "/v/b/d1".into(),
            },
            OmRequest::Mkdir {
                path: "/v/b/d2".into(),
            },
            OmRequest::PutFile {
                path: "/v/b/d2/f".into(),
                size: 1024,
            },
        ];
        for (i, request) in requests.into_iter().enumerate() {
            assert!(step(&mut store, i as u64 + 10, request).is_ok());
        }
        assert_eq!(counters(&store), (1024, 3, 0, 0));
        assert!(step(
            &mut store,
            20,
            OmRequest::Delete {
                path: "/v/b/d1".into(),
                recursive: false
            }
        )
        .is_ok());
        let refused = step(
            &mut store,
            21,
            OmRequest::Delete {
                path: "/v/b/d2".into(),
                recursive: false,
            },
        );
        assert_eq!(refused.status, Status::DirectoryNotEmpty);
        assert!(step(
            &mut store,
            22,
            OmRequest::Delete {
                path: "/v/b/d2".into(),
                recursive: true
            }
        )
        .is_ok());
        assert_eq!(counters(&store), (1024, 1, 0, 2));
        assert_eq!(store.count(Table::DeletedDir), 2);
        store
    }

    fn purge_request(store: &MemStore) -> OmRequest {
        let bucket_id = store.bucket("/v/b").object_id;
        let file = DeletedRow {
            path: "/v/b/d2/f".into(),
            object_id: 12,
            parent_id: 11,
            bucket: "/v/b".into(),
            bucket_id,
            size: 1024,
        };
        OmRequest::PurgeDirectories {
            snapshot_key: None,
            expected_prev: None,
            paths: vec![
                PurgePath {
                    bucket: "/v/b".into(),
                    bucket_id,
                    deleted_dir: Some("/v/b/d1#10".into()),
                    sub_files: vec![],
                    sub_dirs: vec![],
                },
                PurgePath {
                    bucket: "/v/b".into(),
                    bucket_id,
                    deleted_dir: Some("/v/b/d2#11".into()),
                    sub_files: vec![file],
                    sub_dirs: vec![],
                },
            ],
        }
    }

    #[test]
    fn one_purge_moves_usage_as_the_report_lists() {
        let mut store = deleted_dirs();
        let request = purge_request(&store);
        let response = step(&mut store, 30, request);
        assert!(response.is_ok() && response.aos_purge);
        assert_eq!(counters(&store), (0, 0, 1024, 1));
        assert_eq!(store.count(Table::DeletedDir), 0);
        assert_eq!(store.count(Table::Deleted), 1);
        assert_eq!(store.count(Table::File), 0);
    }

    #[test]
    fn a_purge_on_a_corrupted_chain_is_an_internal_error_not_a_validation_failure() {
        let mut store = deleted_dirs();
        store.chain = SnapshotChain::corrupted();
        let before = counters(&store);
        let request = purge_request(&store);
        let response = apply(&mut store, 30, &request);
        assert_eq!(response.status, Status::InternalError);
        assert!(super::super::types::is_critical_error(&response));
        assert_eq!(counters(&store), before);
    }

    #[test]
    fn a_repeated_purge_is_applied_blindly_and_gives_the_reports_counters() {
        let mut store = deleted_dirs();
        let request = purge_request(&store);
        step(&mut store, 30, request.clone());
        assert!(step(&mut store, 40, request).is_ok());
        assert_eq!(counters(&store), (-1024, -1, 2048, 0));
        assert_eq!(
            store.count(Table::Deleted),
            1,
            "f is put again under the same key"
        );
        let (key, row) = store.scan(Table::Deleted, "").remove(0);
        let row: DeletedRow = serde_json::from_str(&row).unwrap();
        let purge = OmRequest::PurgeKeys {
            expected_prev: None,
            keys: vec![(key, row)],
        };
        let purged = step(&mut store, 41, purge);
        assert!(purged.is_ok());
        assert!(
            purged.aos_purge,
            "PurgeKeys sets lastAOSTransactionInfo too"
        );
        assert_eq!(counters(&store), (-1024, -1, 1024, -1));
        // The client reads a total namespace of -2, so a quota of 1 admits 3 keys.
        assert!(step(
            &mut store,
            42,
            OmRequest::SetQuota {
                bucket: "/v/b".into(),
                namespace: 1
            }
        )
        .is_ok());
        let accepted = (0..4)
            .filter(|i| {
                let put = OmRequest::PutFile {
                    path: format!("/v/b/k{i}"),
                    size: 0,
                };
                step(&mut store, 50 + i, put).is_ok()
            })
            .count();
        assert_eq!(accepted, 3);
    }

    #[test]
    fn key_purge_after_a_single_dir_purge_brings_usage_to_zero() {
        let mut store = deleted_dirs();
        let request = purge_request(&store);
        step(&mut store, 30, request);
        let (key, row) = store.scan(Table::Deleted, "").remove(0);
        let row: DeletedRow = serde_json::from_str(&row).unwrap();
        step(
            &mut store,
            31,
            OmRequest::PurgeKeys {
                expected_prev: None,
                keys: vec![(key, row)],
            },
        );
        assert_eq!(counters(&store), (0, 0, 0, 0));
        step(
            &mut store,
            32,
            OmRequest::SetQuota {
                bucket: "/v/b".into(),
                namespace: 1,
            },
        );
        let first = step(
            &mut store,
            33,
            OmRequest::PutFile {
                path: "/v/b/k0".into(),
                size: 0,
            },
        );
        let second = step(
            &mut store,
            34,
            OmRequest::PutFile {
                path: "/v/b/k1".into(),
                size: 0,
            },
        );
        assert!(first.is_ok());
        assert_eq!(second.status, Status::QuotaExceeded);
    }

    #[test]
    fn a_directory_recreated_at_a_deleted_path_does_not_see_the_old_children() {
        let mut store = setup();
        let mkdir = |path: &str| OmRequest::Mkdir { path: path.into() };
        let put = |path: &str, size: i64| OmRequest::PutFile {
            path: path.into(),
            size,
        };
        let delete = |path: &str, recursive: bool| OmRequest::Delete {
            path: path.into(),
            recursive,
        };
        assert!(step(&mut store, 10, mkdir("/v/b/d")).is_ok());
        assert!(step(&mut store, 11, put("/v/b/d/f", 100)).is_ok());
        assert!(step(&mut store, 12, delete("/v/b/d", true)).is_ok());
        // f stays in the file table under d's object id (10) for DDS.
        assert!(store
            .rows
            .contains_key(&(Table::File, "/v/b/10/f".to_string())));
        assert_eq!(
            step(&mut store, 13, put("/v/b/d/g", 1)).status,
            Status::DirectoryNotFound
        );
        assert!(step(&mut store, 14, mkdir("/v/b/d")).is_ok());
        // The new d (object id 14) is empty: no DIRECTORY_NOT_EMPTY, and a new f
        // does not collide with the old one.
        assert!(step(&mut store, 15, put("/v/b/d/f", 7)).is_ok());
        assert!(store
            .rows
            .contains_key(&(Table::File, "/v/b/14/f".to_string())));
        assert!(step(&mut store, 16, delete("/v/b/d/f", false)).is_ok());
        assert!(step(&mut store, 17, delete("/v/b/d", false)).is_ok());
        // The two deleted d rows are different rows with different children.
        assert_eq!(store.count(Table::DeletedDir), 2);
        assert_eq!(store.count(Table::File), 1, "only the old f is left");
        assert_eq!(counters(&store), (100, 1, 7, 3));
    }

    #[test]
    fn delete_moves_usage_to_snapshot_used_and_empty_files_are_released() {
        let mut store = setup();
        step(
            &mut store,
            10,
            OmRequest::PutFile {
                path: "/v/b/f".into(),
                size: 100,
            },
        );
        step(
            &mut store,
            11,
            OmRequest::PutFile {
                path: "/v/b/e".into(),
                size: 0,
            },
        );
        assert_eq!(counters(&store), (100, 2, 0, 0));
        step(
            &mut store,
            12,
            OmRequest::Delete {
                path: "/v/b/f".into(),
                recursive: false,
            },
        );
        step(
            &mut store,
            13,
            OmRequest::Delete {
                path: "/v/b/e".into(),
                recursive: false,
            },
        );
        assert_eq!(counters(&store), (0, 0, 100, 1));
        assert_eq!(store.count(Table::Deleted), 1);
        let missing = step(
            &mut store,
            14,
            OmRequest::Delete {
                path: "/v/b/f".into(),
                recursive: false,
            },
        );
        assert_eq!(missing.status, Status::KeyNotFound);
    }

    #[test]
    fn snapshot_deep_clean_purge_twice_leaves_snapshot_used_namespace_at_minus_one() {
        let mut store = setup();
        step(
            &mut store,
            10,
            OmRequest::Mkdir {
                path: "/v/b/d".into(),
            },
        );
        step(
            &mut store,
            11,
            OmRequest::Delete {
                path: "/v/b/d".into(),
                recursive: false,
            },
        );
        let snap = step(
            &mut store,
            12,
            OmRequest::CreateSnapshot {
                bucket: "/v/b".into(),
                name: "s".into(),
            },
        );
        assert_eq!(snap.value.as_deref(), Some("snap-12"));
        let row: SnapshotRow =
            serde_json::from_str(&store.rows[&(Table::SnapshotInfo, "/v/b/s".to_string())])
                .unwrap();
        assert_eq!(row.last_txn, 12, "lastTransactionInfo is the create entry");
        assert_eq!(
            store.count(Table::DeletedDir),
            0,
            "the snapshot took the deleted rows"
        );
        assert_eq!(store.count(Table::SnapDeletedDir), 1);
        assert_eq!(counters(&store), (0, 0, 0, 1));
        let bucket_id = store.bucket("/v/b").object_id;
        let request = OmRequest::PurgeDirectories {
            snapshot_key: Some("/v/b/s".into()),
            expected_prev: None,
            paths: vec![PurgePath {
                bucket: "/v/b".into(),
                bucket_id,
                deleted_dir: Some("/v/b/d#10".into()),
                sub_files: vec![],
                sub_dirs: vec![],
            }],
        };
        let first = step(&mut store, 20, request.clone());
        assert!(first.is_ok() && !first.aos_purge);
        assert_eq!(counters(&store), (0, 0, 0, 0));
        assert_eq!(store.count(Table::SnapDeletedDir), 0);
        step(&mut store, 30, request);
        assert_eq!(counters(&store).3, -1);
    }

    #[test]
    fn a_purge_scanned_before_a_snapshot_was_taken_is_refused() {
        let mut store = deleted_dirs();
        let request = purge_request(&store);
        step(
            &mut store,
            25,
            OmRequest::CreateSnapshot {
                bucket: "/v/b".into(),
                name: "s".into(),
            },
        );
        let refused = step(&mut store, 30, request);
        assert_eq!(refused.status, Status::InvalidSnapshotError);
        assert_eq!(counters(&store), (1024, 1, 0, 2));
    }

    #[test]
    fn purge_read_error_keeps_the_partial_chain_change_and_reports_internal_error() {
        let mut store = setup();
        step(
            &mut store,
            10,
            OmRequest::CreateSnapshot {
                bucket: "/v/b".into(),
                name: "s1".into(),
            },
        );
        step(
            &mut store,
            11,
            OmRequest::CreateSnapshot {
                bucket: "/v/b".into(),
                name: "s2".into(),
            },
        );
        assert_eq!(store.chain.state()["chain./v/b"], "snap-10>snap-11");
        store
            .failing
            .insert("/v/b/s1".into(), ReadError::Codec("bad bytes".into()));
        let purge = OmRequest::SnapshotPurge {
            keys: vec!["/v/b/s2".into(), "/v/b/s1".into()],
        };
        let failed = apply(&mut store, 12, &purge);
        assert_eq!(failed.status, Status::InternalError);
        assert_eq!(
            store.chain.state()["chain./v/b"],
            "snap-10",
            "s2 is gone in memory"
        );
        store
            .failing
            .insert("/v/b/s1".into(), ReadError::RocksDb("io".into()));
        let failed = apply(&mut store, 13, &purge);
        assert_eq!(failed.status, Status::MetadataError);
    }

    #[test]
    fn create_on_a_corrupted_chain_is_an_internal_error() {
        let mut store = setup();
        store.chain = SnapshotChain::corrupted();
        let failed = step(
            &mut store,
            10,
            OmRequest::CreateSnapshot {
                bucket: "/v/b".into(),
                name: "s1".into(),
            },
        );
        assert_eq!(failed.status, Status::InternalError);
        assert_eq!(failed.message, "Snapshot chain is corrupted.");
    }
}
