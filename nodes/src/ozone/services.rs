//! DirectoryDeletingService (DDS) and KeyDeletingService (KDS) of one OM.
//!
//! A DDS run checks leader readiness once, at its start (`shouldRun`), then runs
//! one store task for the active object store and, with deep cleaning, one per
//! snapshot. A task's worker tasks take deleted directories from a shared
//! supplier, build `PurgePath`s from the tables, and submit `PurgeDirectories`
//! through Raft, which accepts them whenever this OM is the (ready) leader at
//! the time of the submit. A snapshot task whose workers found nothing ends with
//! `SetSnapshotProperty(deepCleanedDeletedDir)`. Every stall here holds only the
//! task it is in: the OM keeps serving Raft and can lose and regain leadership.
//!
//! HDDS-17670 fix: the run reads the Raft term before its leader check and hands
//! it to its workers; a submit is skipped (the worker stops, as after a failed
//! submit) when the current term differs. Apply is blind in both modes.

use super::chain::SnapshotChain;
use super::node::{check_leader, merged, publish, submit_internal, Shared};
use super::request::{describe_paths, OmRequest, PurgePath};
use super::types::{
    delete_key, fso_key, snap_key, DeletedRow, DirRow, FileRow, SnapshotRow, Table,
};
use super::{OmPoint, OmProbe};
use faultline_api::{NodeEvent, OpResult};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

const PATH_LIMIT_DEFAULT: usize = 1000;
/// Paths per PurgeDirectories request (the Ratis byte limit's stand-in).
const PATHS_PER_REQUEST_MAX: usize = 256;
/// Keys per PurgeKeys request.
const KEYS_PER_REQUEST_MAX: usize = 256;

/// The services' node-local state.
#[derive(Debug, Default)]
pub(super) struct Services {
    /// Index of the last active-object-store PurgeDirectories applied here
    /// (`DeletingServiceMetrics.lastAOSTransactionInfo`).
    pub last_aos_purge_index: u64,
    dds_running: bool,
    kds_running: bool,
    dds_runs: u64,
    kds_runs: u64,
    /// Interval runs that shouldRun skipped (kept off the trail: every follower
    /// skips every interval).
    quiet_skips: u64,
}

impl Services {
    pub fn facts(&self, fact: &mut impl FnMut(&str, String)) {
        fact("dds_runs", self.dds_runs.to_string());
        fact("dds_running", self.dds_running.to_string());
        fact("kds_runs", self.kds_runs.to_string());
        fact("kds_running", self.kds_running.to_string());
        fact(
            "last_aos_purge_index",
            self.last_aos_purge_index.to_string(),
        );
        fact("service_interval_skips", self.quiet_skips.to_string());
    }
}

/// One DDS run, as its tasks and workers see it.
struct Run {
    label: String,
    /// HDDS-17670 fix: the term read before the leader check (None when buggy).
    term: Option<u64>,
    /// The term at the run's leader check, in both modes: its workers scan in
    /// it (for the probes: a batch scanned in one term submitted in a later
    /// one is HDDS-17670's precondition; a run held before its check scans
    /// afresh in the new term, and its submit is harmless).
    scan_term: u64,
}

/// One store task of a run.
struct StoreTask {
    /// "active object store" or "snapshot /v/b/s".
    store: String,
    snapshot: Option<SnapshotRow>,
    snapshot_key: Option<String>,
    expected_prev: Option<String>,
}

/// Services on an interval, when the params ask for one.
pub(super) fn start_timers(node: &Shared) {
    if let Some(ms) = node.params.dds_interval_ms {
        let node = node.clone();
        tokio::task::spawn_local(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                trigger_dds(&node, None);
            }
        });
    }
    if let Some(ms) = node.params.kds_interval_ms {
        let node = node.clone();
        tokio::task::spawn_local(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                trigger_kds(&node, None);
            }
        });
    }
}

/// Start a DDS run unless one is in progress; `op` is answered when it ends.
pub(super) fn trigger_dds(node: &Shared, op: Option<u64>) {
    {
        let mut om = node.om.borrow_mut();
        if om.services.dds_running {
            drop(om);
            if let Some(id) = op {
                let busy = "a DirectoryDeletingService run is in progress";
                node.ctx.complete(id, OpResult::error(busy));
            }
            return;
        }
        om.services.dds_running = true;
        om.services.dds_runs += 1;
    }
    let node = node.clone();
    tokio::task::spawn_local(async move {
        let summary = dds_run(&node, op.is_some()).await;
        node.om.borrow_mut().services.dds_running = false;
        publish(&node);
        if let Some(id) = op {
            node.ctx.complete(id, OpResult::value(summary));
        }
    });
}

async fn dds_run(node: &Shared, by_step: bool) -> String {
    let number = node.om.borrow().services.dds_runs;
    let me = node.ctx.name().to_string();
    // The fix reads the term BEFORE the leader check, so that a leader change
    // between the two fails the comparison instead of becoming the run's term.
    let start_term = node.raft.term();
    let term = (!node.bug_17670).then_some(start_term);
    let label = format!("DDS run {number} on {me} (started in term {start_term})");
    // Between the term read and the leader check: a leader change inside a
    // stall here must fail the fix's comparison, not become the run's term.
    if let Err(kind) = node
        .ctx
        .faults()
        .hit(OmPoint::DirDeletingPostTermRead)
        .await
    {
        panic!("dir_deleting.post_term_read declares no errors, got {kind}");
    }
    if let Err(why) = check_leader(node) {
        return skipped(node, "DDS", &label, &why, by_step);
    }
    let tasks = store_tasks(node);
    let stores: Vec<&str> = tasks.iter().map(|t| t.store.as_str()).collect();
    let recorded = run_term_note(term, node.raft.term());
    node.ctx.record(NodeEvent::service(
        "DDS",
        format!(
            "{label}: shouldRun (leader ready) checked once{recorded}; tasks: {}",
            stores.join(", ")
        ),
    ));
    let run = Rc::new(Run {
        label,
        term,
        scan_term: node.raft.term(),
    });
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|task| tokio::task::spawn_local(store_task(node.clone(), run.clone(), task)))
        .collect();
    let mut results = Vec::new();
    for handle in handles {
        results.push(handle.await.unwrap_or_else(|e| format!("task failed: {e}")));
    }
    let summary = results.join("; ");
    node.ctx.record(NodeEvent::service(
        "DDS",
        format!("{} ends: {summary}", run.label),
    ));
    summary
}

/// `shouldRun` was false: on the trail when a step asked for the run.
fn skipped(node: &Shared, service: &str, label: &str, why: &str, by_step: bool) -> String {
    let summary = format!("skipped: shouldRun is false ({why})");
    if by_step {
        node.ctx
            .record(NodeEvent::service(service, format!("{label}: {summary}")));
    } else {
        node.om.borrow_mut().services.quiet_skips += 1;
    }
    summary
}

/// The active object store, then (deep cleaning) every snapshot in chain order.
fn store_tasks(node: &Shared) -> Vec<StoreTask> {
    let om = node.om.borrow();
    let mut tasks = vec![StoreTask {
        store: "active object store".into(),
        snapshot: None,
        snapshot_key: None,
        expected_prev: om.chain.latest_global().cloned(),
    }];
    if !node.params.dds_deep_clean.unwrap_or(true) {
        return tasks;
    }
    let rows = merged(&om, Table::SnapshotInfo, "");
    for id in om.chain.global_ids() {
        let Some(key) = om.chain.table_key(id) else {
            continue;
        };
        let Some(row) = rows.get(key) else {
            continue;
        };
        let row: SnapshotRow = serde_json::from_str(row).expect("snapshot rows parse");
        tasks.push(StoreTask {
            store: format!("snapshot {key}"),
            expected_prev: om.chain.previous_in_path(id).cloned(),
            snapshot_key: Some(key.clone()),
            snapshot: Some(row),
        });
    }
    tasks
}

async fn store_task(node: Shared, run: Rc<Run>, task: StoreTask) -> String {
    if let Some(skip) = skip_reason(&node, &task) {
        return format!("{}: skipped ({skip})", task.store);
    }
    let limit = node.params.dds_path_limit.unwrap_or(PATH_LIMIT_DEFAULT);
    let pending = pending_dirs(&node, &task, limit);
    let supplier = Rc::new(RefCell::new(VecDeque::from(pending)));
    let task = Rc::new(task);
    let workers = node.params.dds_workers.unwrap_or(1);
    let handles: Vec<_> = (1..=workers)
        .map(|n| {
            let worker = worker(node.clone(), run.clone(), task.clone(), supplier.clone(), n);
            tokio::task::spawn_local(worker)
        })
        .collect();
    let mut all_empty = true;
    let mut texts = Vec::new();
    for handle in handles {
        let (empty, text) = handle
            .await
            .unwrap_or_else(|e| (false, format!("worker failed: {e}")));
        all_empty &= empty;
        texts.push(text);
    }
    let mut summary = format!("{}: {}", task.store, texts.join(", "));
    if let (true, Some(key)) = (all_empty, &task.snapshot_key) {
        let request = OmRequest::SetSnapshotProperty {
            key: key.clone(),
            deep_cleaned_dir: true,
        };
        let who = format!("{} task {}", run.label, task.store);
        let result = submit(&node, &run, &who, request, false).await;
        summary.push_str(&match result {
            Ok(_) => ", SetSnapshotProperty(deepCleanedDeletedDir) submitted".to_string(),
            Err(why) => format!(", SetSnapshotProperty not submitted ({why})"),
        });
    }
    summary
}

/// The checks a store task makes at its start, besides the run's leader check.
fn skip_reason(node: &Shared, task: &StoreTask) -> Option<String> {
    let om = node.om.borrow();
    let flushed = u64::try_from(om.db.transaction_info().index).unwrap_or(0);
    match &task.snapshot {
        Some(row) if row.deep_cleaned_dir => Some("already deep cleaned".into()),
        // OmSnapshotManager.areSnapshotChangesFlushedToDB
        Some(row) if row.last_txn > flushed => Some("its changes are not flushed yet".into()),
        Some(_) => None,
        None => {
            drop(om);
            aos_purge_unflushed(node)
        }
    }
}

/// `isPreviousPurgeTransactionFlushed` (HDDS-13760), shared by both services: the
/// last active-object-store purge applied here (PurgeDirectories or PurgeKeys)
/// is above TRANSACTION_INFO.
fn aos_purge_unflushed(node: &Shared) -> Option<String> {
    let om = node.om.borrow();
    let flushed = u64::try_from(om.db.transaction_info().index).unwrap_or(0);
    let last = om.services.last_aos_purge_index;
    (last > flushed).then(|| {
        format!("the previous purge (index {last}) is not flushed yet (TRANSACTION_INFO index {flushed})")
    })
}

/// The store's deleted directories (from the DB: the deleted tables have no
/// cache), as (row key within the store, row).
fn pending_dirs(node: &Shared, task: &StoreTask, limit: usize) -> Vec<(String, DeletedRow)> {
    let om = node.om.borrow();
    let (table, prefix) = match &task.snapshot {
        Some(row) => (Table::SnapDeletedDir, snap_key(&row.id, "")),
        None => (Table::DeletedDir, String::new()),
    };
    om.db
        .scan(table, &prefix)
        .into_iter()
        .take(limit)
        .map(|(key, value)| {
            let row: DeletedRow = serde_json::from_str(&value).expect("deleted rows parse");
            (key[prefix.len()..].to_string(), row)
        })
        .collect()
}

/// One worker: take deleted directories from the shared supplier, build their
/// purge paths (and those of the sub-directories found), submit.
/// Returns (found nothing, what it did).
async fn worker(
    node: Shared,
    run: Rc<Run>,
    task: Rc<StoreTask>,
    supplier: Rc<RefCell<VecDeque<(String, DeletedRow)>>>,
    n: usize,
) -> (bool, String) {
    let mut remain = node.params.dds_path_limit.unwrap_or(PATH_LIMIT_DEFAULT);
    let mut paths: Vec<PurgePath> = Vec::new();
    let mut sub_dirs: Vec<DeletedRow> = Vec::new();
    while remain > 0 {
        let next = supplier.borrow_mut().pop_front();
        let Some((key, row)) = next else {
            break;
        };
        // ReclaimableDirFilter.apply: an IOException here leaves
        // processDeletedDirectories before it submits anything.
        if let Err(why) = previous_snapshots_flushed(&node, &row.bucket, task.snapshot.as_ref(), 1)
        {
            let text = format!("worker {n} failed ({why}); will retry at next run");
            let who = format!("{} ({})", run.label, task.store);
            node.ctx
                .record(NodeEvent::service("DDS", format!("{who}: {text}")));
            return (false, text);
        }
        paths.extend(prepare(&node, &row, key, &mut remain, &mut sub_dirs));
        // Let the other workers of the task take from the supplier too.
        tokio::task::yield_now().await;
    }
    // optimizeDirDeletesAndSubmitRequest: the sub-directories just found are
    // deleted directories too; handle them in the same request. Here the
    // filter's IOException only ends the loop: what was found is submitted.
    let mut at = 0;
    while at < sub_dirs.len() && remain > 0 {
        let row = sub_dirs[at].clone();
        at += 1;
        if previous_snapshots_flushed(&node, &row.bucket, task.snapshot.as_ref(), 1).is_err() {
            break;
        }
        let key = delete_key(&row.path, row.object_id);
        paths.extend(prepare(&node, &row, key, &mut remain, &mut sub_dirs));
    }
    if paths.is_empty() {
        return (true, format!("worker {n} found nothing"));
    }
    let who = format!("{} worker {n} ({})", run.label, task.store);
    for chunk in paths.chunks(PATHS_PER_REQUEST_MAX) {
        let request = OmRequest::PurgeDirectories {
            snapshot_key: task.snapshot_key.clone(),
            expected_prev: task.expected_prev.clone(),
            paths: chunk.to_vec(),
        };
        if let Err(why) = submit(&node, &run, &who, request, true).await {
            return (false, format!("worker {n} stopped ({why})"));
        }
    }
    (
        false,
        format!("worker {n} purged {}", describe_paths(&paths)),
    )
}

/// `ReclaimableFilter.getLastNSnapshotInChain`: before it decides on a row of
/// `bucket`, a deleting service's filter takes the `count` snapshots before the
/// store in the bucket's chain (for the active object store: the latest ones)
/// and throws an IOException ("Changes made to the snapshot ... have not been
/// flushed to the disk") when one of them has a lastTransactionInfo above
/// TRANSACTION_INFO (`areSnapshotChangesFlushedToDB`). This is what keeps a
/// service from reading the active deleted tables from the DB while a
/// CreateSnapshot is applied but its checkpoint, which takes those rows over,
/// is not flushed: the chain (in memory) already names the new snapshot, so the
/// request's expected previous snapshot would pass at apply, and its purge
/// would release usage that the snapshot now holds.
fn previous_snapshots_flushed(
    node: &Shared,
    bucket: &str,
    store: Option<&SnapshotRow>,
    count: usize,
) -> Result<(), String> {
    let om = node.om.borrow();
    let flushed = om.db.transaction_info().index;
    // SnapshotUtils.getSnapshotInfo: through the table cache.
    let rows = merged(&om, Table::SnapshotInfo, &format!("{bucket}/"));
    let row_of = |key: &str| {
        rows.get(key)
            .map(|v| serde_json::from_str::<SnapshotRow>(v).expect("snapshot rows parse"))
    };
    unflushed_previous(&om.chain, row_of, flushed, bucket, store, count)
}

/// The pure part of [`previous_snapshots_flushed`]: `Err` names the first of the
/// `count` snapshots before `store` (the active object store: `None`) in
/// `bucket`'s chain whose last transaction is above `flushed`.
fn unflushed_previous(
    chain: &SnapshotChain,
    row_of: impl Fn(&str) -> Option<SnapshotRow>,
    flushed: i64,
    bucket: &str,
    store: Option<&SnapshotRow>,
    count: usize,
) -> Result<(), String> {
    let mut next = match store {
        None => chain.latest_in_path(bucket).cloned(),
        Some(row) => chain.previous_in_path(&row.id).cloned(),
    };
    for _ in 0..count {
        let Some(id) = next else {
            return Ok(());
        };
        let key = chain.table_key(&id).cloned().unwrap_or_default();
        if let Some(row) = row_of(&key).filter(|r| r.last_txn as i64 > flushed) {
            return Err(format!(
                "IOException: changes made to the snapshot {key} (last transaction {}) have not been flushed to the disk (TRANSACTION_INFO index {flushed})",
                row.last_txn
            ));
        }
        next = chain.previous_in_path(&id).cloned();
    }
    Ok(())
}

/// `prepareDeleteDirRequest`: the directory's direct children within the limit;
/// the directory itself is purged when all of them are in this request. Every
/// directory is reclaimable here (no earlier snapshot references it).
fn prepare(
    node: &Shared,
    dir: &DeletedRow,
    key: String,
    remain: &mut usize,
    sub_dirs: &mut Vec<DeletedRow>,
) -> Option<PurgePath> {
    let om = node.om.borrow();
    // getPendingDeletionSubDirs / SubFiles: the rows whose parent is this
    // directory's object id (a directory re-created at the same path has
    // another object id, and its children are not these).
    let prefix = fso_key(&dir.bucket, dir.object_id, "");
    let child = |key: &str, object_id: u64, size: i64| DeletedRow {
        path: format!("{}/{}", dir.path, &key[prefix.len()..]),
        object_id,
        parent_id: dir.object_id,
        bucket: dir.bucket.clone(),
        bucket_id: dir.bucket_id,
        size,
    };
    let all_dirs: Vec<DeletedRow> = merged(&om, Table::Dir, &prefix)
        .into_iter()
        .map(|(key, value)| {
            let row: DirRow = serde_json::from_str(&value).expect("dir rows parse");
            child(&key, row.object_id, 0)
        })
        .collect();
    let all_files: Vec<DeletedRow> = merged(&om, Table::File, &prefix)
        .into_iter()
        .map(|(key, value)| {
            let row: FileRow = serde_json::from_str(&value).expect("file rows parse");
            child(&key, row.object_id, row.size)
        })
        .collect();
    let dirs: Vec<DeletedRow> = all_dirs.iter().take(*remain).cloned().collect();
    *remain -= dirs.len();
    let files: Vec<DeletedRow> = all_files.iter().take(*remain).cloned().collect();
    *remain -= files.len();
    let purge_dir = dirs.len() == all_dirs.len() && files.len() == all_files.len();
    if !purge_dir && dirs.is_empty() && files.is_empty() {
        return None;
    }
    if purge_dir {
        *remain = remain.saturating_sub(1);
    }
    sub_dirs.extend(dirs.iter().cloned());
    Some(PurgePath {
        bucket: dir.bucket.clone(),
        bucket_id: dir.bucket_id,
        deleted_dir: purge_dir.then_some(key),
        sub_files: files,
        sub_dirs: dirs,
    })
}

/// Submit one request of the run. Workers pass the pre-submit fail point, then
/// (fix) the term comparison, then the post-check fail point; the task's
/// SetSnapshotProperty gets the same term comparison.
async fn submit(
    node: &Shared,
    run: &Run,
    who: &str,
    request: OmRequest,
    from_worker: bool,
) -> Result<String, String> {
    let faults = node.ctx.faults();
    if from_worker {
        if let Err(kind) = faults.hit(OmPoint::DirDeletingPreSubmit).await {
            panic!("dir_deleting.pre_submit declares no errors, got {kind}");
        }
    }
    if node.raft.term() != run.scan_term {
        node.ctx.probe(OmProbe::DdsSubmitInLaterTerm);
        if node.raft.is_leader() {
            node.ctx.probe(OmProbe::DdsSubmitAfterTermChange);
        }
    }
    if let Some(why) = stale_run(run.term, node.raft.term()) {
        let why = format!("{why}: {} not submitted", request.cmd().name());
        node.ctx
            .record(NodeEvent::service("DDS", format!("{who}: {why}")));
        return Err(why);
    }
    if from_worker {
        if let Err(kind) = faults.hit(OmPoint::DirDeletingPostTermCheck).await {
            panic!("dir_deleting.post_term_check declares no errors, got {kind}");
        }
    }
    submit_internal(node, request, who).await.map_err(|why| {
        node.ctx.record(NodeEvent::service(
            "DDS",
            format!("{who}: submit failed: {why}"),
        ));
        why
    })
}

/// How the trail names the run's recorded term: only when the term moved
/// between the read and the leader check (the fix read it first on purpose).
/// Otherwise it is the term the run's label names, and the fixed run's event
/// reads as the buggy one's, so that the two trails part where they behave
/// differently (a worker's submit in a later term), not at every run's start.
fn run_term_note(run_term: Option<u64>, at_check: u64) -> String {
    match run_term {
        Some(t) if t == at_check => String::new(),
        Some(t) => format!(
            ", run term {t} recorded for the workers (read before the leader check, which ran in term {at_check})"
        ),
        None => String::new(),
    }
}

/// The HDDS-17670 fix's check before each submit of a run: `Some(reason)` when
/// the run's recorded term is not the current one. Without the fix (no recorded
/// term) every submit goes ahead.
fn stale_run(run_term: Option<u64>, now: u64) -> Option<String> {
    let run_term = run_term?;
    (now != run_term).then(|| format!("term is {now}, not the run's term {run_term}"))
}

/// Start a KDS run unless one is in progress; `op` is answered when it ends.
pub(super) fn trigger_kds(node: &Shared, op: Option<u64>) {
    {
        let mut om = node.om.borrow_mut();
        if om.services.kds_running {
            drop(om);
            if let Some(id) = op {
                let busy = "a KeyDeletingService run is in progress";
                node.ctx.complete(id, OpResult::error(busy));
            }
            return;
        }
        om.services.kds_running = true;
        om.services.kds_runs += 1;
    }
    let node = node.clone();
    tokio::task::spawn_local(async move {
        let summary = kds_run(&node, op.is_some()).await;
        node.om.borrow_mut().services.kds_running = false;
        publish(&node);
        if let Some(id) = op {
            node.ctx.complete(id, OpResult::value(summary));
        }
    });
}

/// KeyDeletingService on the active object store: purge the deleted files (their
/// blocks are taken as deleted at once).
async fn kds_run(node: &Shared, by_step: bool) -> String {
    let number = node.om.borrow().services.kds_runs;
    let label = format!(
        "KDS run {number} on {} (started in term {})",
        node.ctx.name(),
        node.raft.term()
    );
    if let Err(why) = check_leader(node) {
        return skipped(node, "KDS", &label, &why, by_step);
    }
    // isPreviousPurgeTransactionFlushed (HDDS-13760), as for DDS: the deleted
    // table is read from the DB, which must hold the last purge applied here.
    if let Some(skip) = aos_purge_unflushed(node) {
        let summary = format!("skipped ({skip})");
        node.ctx
            .record(NodeEvent::service("KDS", format!("{label}: {summary}")));
        return summary;
    }
    let (keys, expected_prev) = {
        let om = node.om.borrow();
        let keys: Vec<(String, DeletedRow)> = om
            .db
            .scan(Table::Deleted, "")
            .into_iter()
            .take(KEYS_PER_REQUEST_MAX)
            .map(|(k, v)| (k, serde_json::from_str(&v).expect("deleted rows parse")))
            .collect();
        (keys, om.chain.latest_global().cloned())
    };
    // ReclaimableKeyFilter (two previous snapshots) on every key: its
    // IOException ends the run before anything is submitted.
    for (_, row) in &keys {
        if let Err(why) = previous_snapshots_flushed(node, &row.bucket, None, 2) {
            let summary = format!("failed ({why}); will retry at next run");
            node.ctx
                .record(NodeEvent::service("KDS", format!("{label}: {summary}")));
            return summary;
        }
    }
    let summary = if keys.is_empty() {
        "nothing to purge".to_string()
    } else {
        let request = OmRequest::PurgeKeys {
            expected_prev,
            keys,
        };
        match submit_internal(node, request, &label).await {
            Ok(_) => "PurgeKeys submitted".to_string(),
            Err(why) => format!("submit failed: {why}"),
        }
    };
    node.ctx.record(NodeEvent::service(
        "KDS",
        format!("{label} ends: {summary}"),
    ));
    summary
}

#[cfg(test)]
mod tests {
    use super::{run_term_note, stale_run, unflushed_previous};
    use crate::ozone::chain::SnapshotChain;
    use crate::ozone::types::{SnapshotRow, SnapshotStatus};
    use std::collections::BTreeMap;

    fn snapshot(name: &str, index: u64, chain: &SnapshotChain) -> SnapshotRow {
        SnapshotRow {
            id: format!("snap-{index}"),
            name: name.into(),
            bucket: "/v/b".into(),
            status: SnapshotStatus::Active,
            global_prev: chain.latest_global().cloned(),
            path_prev: chain.latest_in_path("/v/b").cloned(),
            deep_clean: false,
            deep_cleaned_dir: false,
            created_index: index,
            last_txn: index,
        }
    }

    #[test]
    fn the_filters_wait_for_the_previous_snapshots_to_be_flushed() {
        let mut chain = SnapshotChain::default();
        let mut rows = BTreeMap::new();
        for (name, index) in [("s1", 10), ("s2", 20)] {
            let row = snapshot(name, index, &chain);
            let key = format!("/v/b/{name}");
            chain.add(&key, &row).unwrap();
            rows.insert(key, row);
        }
        let row_of = |key: &str| rows.get(key).cloned();
        // The active object store looks at the latest snapshot (created at 20).
        assert!(unflushed_previous(&chain, row_of, 19, "/v/b", None, 1)
            .unwrap_err()
            .contains("/v/b/s2"));
        assert_eq!(
            unflushed_previous(&chain, row_of, 20, "/v/b", None, 1),
            Ok(())
        );
        // A snapshot's task looks at the snapshots before it.
        let s2 = &rows["/v/b/s2"];
        assert_eq!(
            unflushed_previous(&chain, row_of, 10, "/v/b", Some(s2), 2),
            Ok(())
        );
        assert!(unflushed_previous(&chain, row_of, 9, "/v/b", Some(s2), 1).is_err());
        // KeyDeletingService takes two snapshots; another bucket has none.
        assert!(unflushed_previous(&chain, row_of, 15, "/v/b", None, 2).is_err());
        assert_eq!(
            unflushed_previous(&chain, row_of, 0, "/v/c", None, 2),
            Ok(())
        );
    }

    #[test]
    fn only_the_fix_stops_a_submit_after_a_term_change() {
        assert_eq!(stale_run(Some(1), 1), None);
        assert_eq!(
            stale_run(Some(1), 3).as_deref(),
            Some("term is 3, not the run's term 1")
        );
        assert_eq!(stale_run(None, 3), None, "buggy: no term was recorded");
    }

    /// The fix's ordering: the term is read before the leader check. A leader
    /// change between the two (om1 leads in term 1, loses and regains leadership,
    /// the check passes in term 3) leaves the run with term 1, and every submit
    /// is refused. A term read after the check would be 3 and pass.
    #[test]
    fn a_term_read_before_the_leader_check_catches_a_change_between_them() {
        let (read_first, at_check) = (1, 3);
        assert_eq!(
            run_term_note(Some(read_first), at_check),
            ", run term 1 recorded for the workers (read before the leader check, which ran in term 3)"
        );
        assert!(stale_run(Some(read_first), at_check).is_some());
        let read_after_check = at_check;
        assert_eq!(stale_run(Some(read_after_check), at_check), None);
        assert_eq!(
            run_term_note(Some(3), 3),
            "",
            "the term the label names: the fixed run reads as the buggy one"
        );
        assert_eq!(run_term_note(None, 3), "", "buggy: no term");
    }
}
