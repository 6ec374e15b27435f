//! The async shell of one Ozone Manager. Tasks:
//! - the apply loop (Ratis StateMachineUpdater plus the OM's single apply
//!   executor): committed entries in order; state-machine entries run their
//!   request against the table cache and go to the double buffer, configuration
//!   and metadata entries reach the OM only through `notifyTermIndexUpdated`;
//!   client commands are taken between entries;
//! - the flush task: batches to the DB, TRANSACTION_INFO, `updateLastAppliedIndex`;
//! - service runs and their workers (`services.rs`), each a task of its own.
//!
//! Durable: the Raft log and hard state (the Raft shell) and the DB. Everything
//! else (cache, chain, bookkeeping, buffer) is rebuilt on start from the DB.

use super::applied::{leader_ready, AppliedTracker};
use super::buffer::{Added, Batch, DoubleBuffer};
use super::chain::SnapshotChain;
use super::db::Db;
use super::invariants::{
    FACT_COVERED_FAILED, FACT_NOT_READY_SINCE, FACT_READY_BOUND, FACT_READY_WAIT_MAX,
};
use super::request::{self, OmRequest, ReadError, Store};
use super::services::{self, Services};
use super::types::{
    is_critical_error, BatchOp, BucketRow, DeletedRow, DirRow, FileRow, Response, SnapshotRow,
    Table, TermIndex,
};
use super::{
    ExitOrder, OmOp, OmPoint, OmProbe, Params, BUG_10798, BUG_17603, BUG_17670,
    LEADER_READY_BOUND_MS_DEFAULT,
};
use crate::raft::{role_name, Config, EntryBody, ProposeError, Raft, RaftEvent, Role, Tuning};
use faultline_api::{
    ApplyResult, Command, Fault, NodeCtx, NodeEvent, Observation, OpResult, RecordLog,
};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::{oneshot, watch, Notify};

const PORT: u16 = 9872;
const DB_FILE: &str = "om.db";
const AUDIT_KEY: &str = "covered_failed";

/// A state-machine entry as it travels in the log.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct LogCommand {
    pub request: OmRequest,
    /// Who submitted it: "client", or the service run that built it.
    pub origin: String,
}

/// The table cache: per (table, key) the value or a tombstone, tagged with the
/// index of the entry that wrote it. Entries up to a flushed index are dropped.
#[derive(Default)]
struct Cache {
    entries: BTreeMap<(Table, String), (Option<String>, u64)>,
}

impl Cache {
    fn get(&self, table: Table, key: &str) -> Option<&Option<String>> {
        self.entries.get(&(table, key.to_string())).map(|(v, _)| v)
    }

    fn put(&mut self, table: Table, key: &str, value: Option<String>, index: u64) {
        assert!(table.cached(), "{} has no table cache", table.name());
        self.entries
            .insert((table, key.to_string()), (value, index));
    }

    fn cleanup(&mut self, flushed: u64) {
        self.entries.retain(|_, (_, index)| *index > flushed);
    }

    fn overlay(&self, table: Table, prefix: &str, rows: &mut BTreeMap<String, String>) {
        let from = (table, prefix.to_string());
        for ((t, key), (value, _)) in self.entries.range(from..) {
            if *t != table || !key.starts_with(prefix) {
                break;
            }
            match value {
                Some(v) => rows.insert(key.clone(), v.clone()),
                None => rows.remove(key),
            };
        }
    }
}

/// What a request sees while it runs at `index`.
struct OmStore<'a> {
    db: &'a Db<RecordLog>,
    cache: &'a mut Cache,
    chain: &'a mut SnapshotChain,
    index: u64,
    ctx: &'a NodeCtx,
    fault_key: Option<&'a str>,
    /// The request is a SnapshotPurge (for its probe).
    purge: bool,
}

impl Store for OmStore<'_> {
    fn read(&mut self, table: Table, key: &str, name: &str) -> Result<Option<String>, ReadError> {
        if let Some(value) = self.cache.get(table, key) {
            return Ok(value.clone());
        }
        if self.purge && table == Table::SnapshotInfo {
            self.ctx.probe(OmProbe::SnapshotPurgeReadFromDb);
        }
        let point = match table {
            Table::SnapshotInfo => Some(OmPoint::SnapshotTableRead),
            Table::File => Some(OmPoint::KeyTableRead),
            Table::Volume
            | Table::Bucket
            | Table::Dir
            | Table::DeletedDir
            | Table::Deleted
            | Table::SnapDeletedDir
            | Table::SnapDeleted
            | Table::TransactionInfo
            | Table::Audit => None,
        };
        let targeted = self.fault_key.is_none_or(|k| k == name);
        if let (Some(point), true) = (point, targeted) {
            if let Some(fault) = self.ctx.faults().eval(point) {
                let kind = error_kind(fault);
                let message = format!("injected {kind} error reading {name} from the DB");
                return Err(match kind.as_str() {
                    "codec" => ReadError::Codec(message),
                    _ => ReadError::RocksDb(message),
                });
            }
        }
        Ok(self.db.get(table, key).cloned())
    }

    fn scan(&self, table: Table, prefix: &str) -> Vec<(String, String)> {
        let mut rows: BTreeMap<String, String> = self.db.scan(table, prefix).into_iter().collect();
        self.cache.overlay(table, prefix, &mut rows);
        rows.into_iter().collect()
    }

    fn cache(&mut self, table: Table, key: &str, value: Option<&str>) {
        self.cache
            .put(table, key, value.map(str::to_string), self.index);
    }

    fn chain(&mut self) -> &mut SnapshotChain {
        self.chain
    }
}

/// The kind of an error fault; the points read here declare errors only.
fn error_kind(fault: Fault) -> String {
    match fault {
        Fault::Error(kind) => kind,
        other @ (Fault::Panic(_) | Fault::Stall(_) | Fault::StallUntilRelease(_)) => {
            panic!("fail point declares errors only, got {other:?}")
        }
    }
}

/// Who waits for the reply to this leader's proposal.
enum Waiter {
    Client {
        id: u64,
        term: u64,
    },
    /// An internal service's submit (`OzoneManagerRatisUtils.submitRequest`).
    Service {
        term: u64,
        reply: oneshot::Sender<Result<String, String>>,
    },
}

impl Waiter {
    fn term(&self) -> u64 {
        match self {
            Waiter::Client { term, .. } | Waiter::Service { term, .. } => *term,
        }
    }

    fn complete(self, ctx: &NodeCtx, result: Result<OpResult, String>) {
        match self {
            Waiter::Client { id, .. } => {
                let result = result.unwrap_or_else(OpResult::error);
                ctx.complete(id, result);
            }
            Waiter::Service { reply, .. } => {
                let text = result.and_then(|r| {
                    if r.ok {
                        Ok(r.value.unwrap_or_else(|| "OK".into()))
                    } else {
                        Err(r.error.unwrap_or_default())
                    }
                });
                // The service may have stopped waiting (its timeout).
                let _ = reply.send(text);
            }
        }
    }
}

/// How long this node, as leader, has been waiting to be ready.
#[derive(Default)]
struct Readiness {
    /// When Raft applied this leader's startup entry (the clock of the bound).
    startup_applied_ms: Option<u64>,
    not_ready_since_ms: Option<u64>,
    wait_max_ms: u64,
}

impl Readiness {
    fn note(&mut self, now_ms: u64, leader: bool, ready: bool) {
        let Some(start) = self.startup_applied_ms else {
            self.not_ready_since_ms = None;
            return;
        };
        if leader && !ready {
            self.not_ready_since_ms = Some(start);
            return;
        }
        // Ready, or no longer leader: the episode is over.
        self.wait_max_ms = self.wait_max_ms.max(now_ms.saturating_sub(start));
        self.startup_applied_ms = None;
        self.not_ready_since_ms = None;
    }
}

pub(super) struct Om {
    pub(super) db: Db<RecordLog>,
    cache: Cache,
    pub(super) chain: SnapshotChain,
    tracker: AppliedTracker,
    buffer: DoubleBuffer,
    /// The index Raft has handed out (StateMachineUpdater's applied index).
    ratis_applied: u64,
    role: Role,
    term: u64,
    leader: Option<String>,
    /// Proposals of this leader awaiting apply: index -> waiter.
    waiting: BTreeMap<u64, Waiter>,
    /// ExitFirst termination: the process is gone before any further flush.
    exiting: bool,
    readiness: Readiness,
    covered_failed: Option<String>,
    pub(super) services: Services,
}

pub(super) struct Node {
    pub(super) ctx: NodeCtx,
    pub(super) raft: Raft,
    pub(super) params: Params,
    bug_10798: bool,
    pub(super) bug_17670: bool,
    pub(super) om: RefCell<Om>,
    flush_wake: Notify,
    space: Notify,
    /// The highest index a flush has written as TRANSACTION_INFO.
    flushed: watch::Sender<i64>,
}

pub(super) type Shared = Rc<Node>;

/// How long a service waits for the reply to its submit.
const SUBMIT_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(ctx: NodeCtx) -> turmoil::Result {
    let params = Params::of(&ctx);
    let db = Db::open(RecordLog::new(ctx.disk(), DB_FILE))?;
    let txinfo = db.transaction_info();
    let chain = load_chain(&ctx, &db);
    let covered_failed = db.get(Table::Audit, AUDIT_KEY).cloned();
    let peers: Vec<String> = ctx.nodes().iter().map(|n| n.name.clone()).collect();
    let config = raft_config(&ctx, &params);
    let applied = u64::try_from(txinfo.index).expect("TRANSACTION_INFO is never negative");
    let (raft, events) = Raft::start(&ctx, config, peers, PORT, applied).await?;
    if raft.last_index() > applied {
        ctx.probe(OmProbe::RestartAboveTransactionInfo);
    }
    ctx.note(
        format!(
            "OM start: TRANSACTION_INFO = {txinfo}, ozoneApplied = {txinfo}, lastNotified = -1, lastSkipped = -1; caches empty; snapshot chain {}; Raft applies from index {}",
            if chain.is_corrupted() { "CORRUPTED" } else { "loaded" },
            applied + 1
        ),
    );
    let buggy_17603 = ctx.bugs().buggy(&BUG_17603);
    let bug_10798 = ctx.bugs().buggy(&BUG_10798);
    let bug_17670 = ctx.bugs().buggy(&BUG_17670);
    let om = Om {
        db,
        cache: Cache::default(),
        chain,
        tracker: AppliedTracker::new(txinfo, bug_10798),
        buffer: DoubleBuffer::new(buggy_17603),
        ratis_applied: applied,
        role: Role::Follower,
        term: raft.term(),
        leader: None,
        waiting: BTreeMap::new(),
        exiting: false,
        readiness: Readiness::default(),
        covered_failed,
        services: Services::default(),
    };
    let (flushed, _) = watch::channel(txinfo.index);
    let node = Rc::new(Node {
        ctx,
        raft,
        params,
        bug_10798,
        bug_17670,
        om: RefCell::new(om),
        flush_wake: Notify::new(),
        space: Notify::new(),
        flushed,
    });
    tokio::task::spawn_local(flush_loop(node.clone()));
    services::start_timers(&node);
    main_loop(node, events).await
}

/// Rebuild the chain from the snapshot info table; a read error marks it corrupted.
fn load_chain(ctx: &NodeCtx, db: &Db<RecordLog>) -> SnapshotChain {
    if let Some(fault) = ctx.faults().eval(OmPoint::SnapshotChainLoad) {
        let kind = error_kind(fault);
        ctx.note(format!(
            "snapshot chain load: {kind} error iterating snapshotInfoTable; chain marked corrupted"
        ));
        return SnapshotChain::corrupted();
    }
    let rows: Vec<(String, SnapshotRow)> = db
        .scan(Table::SnapshotInfo, "")
        .into_iter()
        .map(|(k, v)| (k, serde_json::from_str(&v).expect("snapshot rows parse")))
        .collect();
    match SnapshotChain::load(&rows) {
        Ok(chain) => chain,
        Err(message) => {
            ctx.note(format!(
                "snapshot chain load failed: {message}; chain marked corrupted"
            ));
            SnapshotChain::corrupted()
        }
    }
}

fn raft_config(ctx: &NodeCtx, params: &Params) -> Config {
    let mut config = Config::tuned(Tuning {
        metadata_entries: params.metadata_entries,
        heartbeat_ms: params.heartbeat_ms,
        election_timeout_ms_min: params.election_timeout_ms_min,
        election_timeout_ms_max: params.election_timeout_ms_max,
    });
    if params.preferred_leader.as_deref() == Some(ctx.name()) {
        // Always below everyone else's minimum: this node campaigns first.
        let min = config.election_timeout_ms_min.max(2);
        config.election_timeout_ms_min = min / 2;
        config.election_timeout_ms_max = min - 1;
    }
    config
}

async fn main_loop(node: Shared, mut events: UnboundedReceiver<RaftEvent>) -> turmoil::Result {
    let mut inbox = node.ctx.take_inbox();
    publish(&node);
    loop {
        tokio::select! {
            biased;
            Some(event) = events.recv() => on_raft_event(&node, event).await,
            Some(command) = inbox.recv() => on_command(&node, command),
            else => return Ok(()),
        }
        publish(&node);
    }
}

async fn on_raft_event(node: &Shared, event: RaftEvent) {
    match event {
        RaftEvent::Apply(entry) => match entry.body {
            EntryBody::Sm(text) => apply_entry(node, entry.term, entry.index, &text).await,
            EntryBody::Conf => notify(node, entry.term, entry.index, "STARTUP_ENTRY (conf)"),
            EntryBody::Meta { commit } => notify(
                node,
                entry.term,
                entry.index,
                &format!("META_ENTRY (commit {commit})"),
            ),
        },
        RaftEvent::Role { role, term, leader } => on_role(node, role, term, leader),
        // The main loop publishes after every event.
        RaftEvent::LogChanged { .. } => {}
    }
}

/// A non-state-machine entry: `notifyTermIndexUpdated` only.
fn notify(node: &Shared, term: u64, index: u64, what: &str) {
    let ti = TermIndex::new(term, index as i64);
    let mut om = node.om.borrow_mut();
    assert_eq!(
        index,
        om.ratis_applied + 1,
        "Raft hands entries out in order"
    );
    om.ratis_applied = index;
    let step = om.tracker.notify_term_index_updated(ti);
    let startup = node.raft.is_leader() && node.raft.startup_index() == Some(index);
    if startup {
        om.readiness.startup_applied_ms = Some(node.ctx.now_ms());
        if ti.index - step.applied_before.index > 1 {
            node.ctx.probe(OmProbe::StartupNotifiedWithLag);
        }
    }
    let marker = if startup {
        " [this leader's startup entry]"
    } else {
        ""
    };
    node.ctx.record(NodeEvent::Apply {
        term: Some(term),
        index: Some(index),
        what: what.to_string(),
        // Configuration and metadata entries reach the OM only as an index.
        result: ApplyResult::Skipped {
            reason: "notifyTermIndexUpdated only".into(),
        },
        keys: Vec::new(),
        text: format!(
            "apply {ti} {what}{marker}: {}",
            step.describe(node.bug_10798)
        ),
    });
}

/// A state-machine entry: `runCommand` (request against the cache, response to
/// the double buffer), then `processResponse`.
async fn apply_entry(node: &Shared, term: u64, index: u64, text: &str) {
    while !node.om.borrow().buffer.has_space() {
        node.space.notified().await;
    }
    let command: LogCommand = serde_json::from_str(text).expect("the log holds valid commands");
    let ti = TermIndex::new(term, index as i64);
    let summary = command.request.summary();
    {
        let mut om = node.om.borrow_mut();
        assert_eq!(
            index,
            om.ratis_applied + 1,
            "Raft hands entries out in order"
        );
        om.ratis_applied = index;
    }
    if let Some(fault) = node.ctx.faults().eval(OmPoint::ApplyUnchecked) {
        node.ctx.record(NodeEvent::Apply {
            term: Some(term),
            index: Some(index),
            what: summary.clone(),
            result: ApplyResult::Failed {
                error: "RuntimeException (unchecked)".into(),
            },
            keys: Vec::new(),
            text: format!("apply {ti} {summary} -> RuntimeException (unchecked): runCommand terminates before anything is buffered"),
        });
        if let Fault::Panic(_) = fault {
            let _ = node.ctx.faults().act(fault).await;
        }
        let reason = format!(
            "ExitUtils.terminate in runCommand: RuntimeException applying {summary} at {ti}"
        );
        match terminate(node, reason).await {}
    }
    let response = run_request(node, index, &command.request);
    let critical = is_critical_error(&response);
    record_apply(node, ti, &summary, &command.origin, &response);
    let added = {
        let mut om = node.om.borrow_mut();
        if response.aos_purge {
            // DeletingServiceMetrics.setLastAOSTransactionInfo (the DDS flush check).
            om.services.last_aos_purge_index = index;
        }
        om.buffer.add(ti, response.clone())
    };
    if added == Added::DroppedCritical {
        node.ctx.note(
            format!("double buffer: response of {ti} not added (critical error, the OM terminates); TRANSACTION_INFO will not cover it"),
        );
    }
    node.flush_wake.notify_one();
    if critical {
        node.ctx.probe(OmProbe::CriticalErrorTerminates);
        let reason = format!(
            "ExitUtils.terminate in processResponse: {summary} at {ti} failed with {}",
            response.describe()
        );
        match terminate(node, reason).await {}
    }
    answer(node, index, term, &response);
}

fn run_request(node: &Shared, index: u64, request: &OmRequest) -> Response {
    let mut om = node.om.borrow_mut();
    let om = &mut *om;
    let mut store = OmStore {
        db: &om.db,
        cache: &mut om.cache,
        chain: &mut om.chain,
        index,
        ctx: &node.ctx,
        fault_key: node.params.fault_key_of(node.ctx.name()),
        purge: matches!(request, OmRequest::SnapshotPurge { .. }),
    };
    request::apply(&mut store, index, request)
}

fn record_apply(node: &Shared, ti: TermIndex, summary: &str, origin: &str, response: &Response) {
    let mut text = format!("apply {ti} {summary} ({origin}) -> {}", response.describe());
    if let Some(usage) = &response.usage {
        text.push_str(&format!("; {usage}"));
    }
    let result = if response.is_ok() {
        ApplyResult::Ok
    } else {
        ApplyResult::Failed {
            error: response.describe(),
        }
    };
    node.ctx.record(NodeEvent::Apply {
        term: Some(ti.term),
        index: u64::try_from(ti.index).ok(),
        what: summary.to_string(),
        result,
        keys: Vec::new(),
        text,
    });
}

/// The process terminates. By default the flush that the failed entry's `add`
/// woke completes first (the report's observed ordering). A node blocked here
/// still reports what it has applied: it publishes before it waits.
async fn terminate(node: &Shared, reason: String) -> Infallible {
    publish(node);
    match node.params.exit_order_of(node.ctx.name()) {
        ExitOrder::FlushFirst => {
            let target = node.om.borrow().buffer.last_added().map(|t| t.index);
            if let Some(target) = target {
                let mut flushed = node.flushed.subscribe();
                let _ = flushed.wait_for(|f| *f >= target).await;
            }
        }
        ExitOrder::ExitFirst => node.om.borrow_mut().exiting = true,
    }
    node.ctx.exit(&reason).await
}

/// Reply to whoever proposed this leader's entry at `index`.
fn answer(node: &Shared, index: u64, term: u64, response: &Response) {
    let Some(waiter) = node.om.borrow_mut().waiting.remove(&index) else {
        return;
    };
    let result = if waiter.term() != term {
        Err("indeterminate: entry replaced".to_string())
    } else if response.is_ok() {
        Ok(match &response.value {
            Some(value) => OpResult::value(value.clone()),
            None => OpResult::ok(),
        })
    } else {
        Ok(OpResult::error(response.describe()))
    };
    waiter.complete(&node.ctx, result);
}

fn on_role(node: &Shared, role: Role, term: u64, leader: Option<String>) {
    let mut om = node.om.borrow_mut();
    if role == Role::Leader && !om.buffer.is_empty() {
        node.ctx.probe(OmProbe::LeaderWithUnflushedBuffer);
    }
    if role != Role::Leader {
        for (_, waiter) in std::mem::take(&mut om.waiting) {
            let lost = "indeterminate: leadership lost before the reply".to_string();
            waiter.complete(&node.ctx, Err(lost));
        }
    }
    om.role = role;
    om.term = term;
    om.leader = leader;
}

async fn flush_loop(node: Shared) {
    loop {
        while node.om.borrow().buffer.is_empty() {
            node.flush_wake.notified().await;
        }
        // A stall here holds only the flush task; the OM keeps applying.
        if let Err(kind) = node.ctx.faults().hit(OmPoint::DoubleBufferFlush).await {
            panic!("double_buffer.flush declares no errors, got {kind}");
        }
        if node.om.borrow().exiting {
            // The process is going away before this flush writes anything.
            std::future::pending::<()>().await;
        }
        let batches = node.om.borrow_mut().buffer.take_batches();
        node.space.notify_waiters();
        for batch in batches {
            flush_batch(&node, batch);
        }
        publish(&node);
    }
}

fn flush_batch(node: &Shared, batch: Batch) {
    let last = batch.last();
    let mut ops = batch.writes();
    let critical: Vec<String> = batch
        .critical_entries()
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e.ti,
                e.response.cmd.name(),
                e.response.status.code()
            )
        })
        .collect();
    // The pair of the buffer's own drop: in fixed mode no critical response
    // reaches a flush, so TRANSACTION_INFO never covers a failed entry.
    assert!(
        critical.is_empty() || node.om.borrow().buffer.buggy(),
        "a fixed-mode double buffer flushed critical responses: {critical:?}"
    );
    let audit = (!critical.is_empty()).then(|| {
        format!(
            "TRANSACTION_INFO {last} covers {} whose effects are not in the DB",
            critical.join(", ")
        )
    });
    if let Some(text) = &audit {
        // A ghost row for the checker, written in the same atomic batch.
        ops.push(BatchOp::Put {
            table: Table::Audit,
            key: AUDIT_KEY.to_string(),
            value: text.clone(),
        });
    }
    let mut om = node.om.borrow_mut();
    om.db.commit(ops).expect("simulated disk write");
    om.cache.cleanup(last.index as u64);
    let update = om.tracker.update_last_applied(last);
    if audit.is_some() {
        om.covered_failed = audit;
    }
    drop(om);
    if update.c1 {
        node.ctx.probe(OmProbe::FlushBelowNotified);
        if !update.c2 {
            node.ctx.probe(OmProbe::FlushKeptBelowNotified);
        }
    }
    node.ctx.record(NodeEvent::Storage {
        what: "TRANSACTION_INFO".into(),
        term: Some(last.term),
        index: u64::try_from(last.index).ok(),
        entries: batch
            .entries
            .iter()
            .filter_map(|e| u64::try_from(e.ti.index).ok())
            .collect(),
        text: format!(
            "flush {}: TRANSACTION_INFO = {last}; {}",
            batch.describe(),
            update.describe(node.bug_10798)
        ),
    });
    node.flushed.send_replace(last.index);
}

fn on_command(node: &Shared, command: Command) {
    match command {
        Command::Op { id, op } => {
            let op: OmOp = serde_json::from_value(op).expect("validated by parse_op");
            on_op(node, id, op);
        }
        Command::TransferLeader { id, to } => match node.raft.transfer_leadership(&to) {
            Ok(()) => node.ctx.complete(id, OpResult::ok()),
            Err(e) => node
                .ctx
                .complete(id, OpResult::error(format!("transfer refused: {e:?}"))),
        },
        Command::Stop => {
            let node = node.clone();
            tokio::task::spawn_local(async move { stop(node).await });
        }
    }
}

/// Clean shutdown: let the double buffer drain, then report stopped.
async fn stop(node: Shared) {
    let target = node.om.borrow().buffer.last_added().map(|t| t.index);
    if let Some(target) = target {
        let mut flushed = node.flushed.subscribe();
        let _ = flushed.wait_for(|f| *f >= target).await;
    }
    node.ctx.stopped();
}

fn on_op(node: &Shared, id: u64, op: OmOp) {
    let request = match op {
        OmOp::GetBucket { bucket } => return read_op(node, id, |om| get_bucket(om, &bucket)),
        OmOp::ListSnapshots { bucket } => {
            return read_op(node, id, |om| list_snapshots(om, &bucket))
        }
        OmOp::RunDds {} => return services::trigger_dds(node, Some(id)),
        OmOp::RunKds {} => return services::trigger_kds(node, Some(id)),
        OmOp::CreateVolume { volume } => OmRequest::CreateVolume { volume },
        OmOp::CreateBucket {
            bucket,
            quota_namespace,
        } => OmRequest::CreateBucket {
            bucket,
            quota_namespace: quota_namespace.unwrap_or(-1),
        },
        OmOp::SetQuota { bucket, namespace } => OmRequest::SetQuota { bucket, namespace },
        OmOp::Mkdir { path } => OmRequest::Mkdir { path },
        OmOp::PutFile { path, size } => OmRequest::PutFile { path, size },
        OmOp::Delete { path, recursive } => OmRequest::Delete { path, recursive },
        OmOp::CreateSnapshot { bucket, name } => OmRequest::CreateSnapshot { bucket, name },
        OmOp::DeleteSnapshot { bucket, name } => OmRequest::DeleteSnapshot { bucket, name },
        OmOp::PurgeSnapshots { snapshots } => OmRequest::SnapshotPurge { keys: snapshots },
    };
    if let Err(message) = check_leader(node) {
        node.ctx.complete(id, OpResult::error(message));
        return;
    }
    let command = LogCommand {
        request,
        origin: "client".into(),
    };
    match propose(node, &command, |term| Waiter::Client { id, term }) {
        Ok(_) => {}
        Err(ProposeError::NotLeader { leader }) => {
            let hint = node
                .raft
                .leader_hint(leader)
                .unwrap_or_else(|| "unknown".into());
            node.ctx.complete(
                id,
                OpResult::error(format!("OMNotLeaderException (leader: {hint})")),
            );
        }
        Err(ProposeError::TransferInProgress) => {
            node.ctx
                .complete(id, OpResult::error("leadership transfer in progress"));
        }
    }
}

/// Submit an internal request through Raft, as a service does: accepted when
/// this OM is the leader at the time of the call and Ratis considers it ready
/// (Ratis 2.x `checkLeaderState`); then wait for the reply (its apply here).
/// `who` names the submitter on the trail.
pub(super) async fn submit_internal(
    node: &Shared,
    request: OmRequest,
    who: &str,
) -> Result<String, String> {
    check_leader(node)?;
    let summary = request.summary();
    let command = LogCommand {
        request,
        origin: who.to_string(),
    };
    let (reply, answer) = oneshot::channel();
    let (term, index) = propose(node, &command, |term| Waiter::Service { term, reply })
        .map_err(|e| format!("submit refused: {e:?}"))?;
    node.ctx.record(NodeEvent::Submit {
        by: who.to_string(),
        what: summary.clone(),
        term: Some(term),
        index: Some(index),
        text: format!("{who} submits {summary}: appended at index {index} in term {term}"),
    });
    match tokio::time::timeout(SUBMIT_REPLY_TIMEOUT, answer).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) | Err(_) => Err("no reply to the submit".to_string()),
    }
}

/// Append a command to the log and register who waits for its reply. The one
/// way into the log: the waiter counts as pending work and the node publishes at
/// once, so the harness never sees a quiescent node with a request in flight (a
/// service submits from its own task, outside the main loop that publishes after
/// every event). Returns the entry's term and index.
fn propose(
    node: &Shared,
    command: &LogCommand,
    waiter: impl FnOnce(u64) -> Waiter,
) -> Result<(u64, u64), ProposeError> {
    let text = serde_json::to_string(command).expect("serializes");
    let index = node.raft.propose(text)?;
    let term = node.raft.term();
    node.om.borrow_mut().waiting.insert(index, waiter(term));
    publish(node);
    Ok((term, index))
}

/// The OM's leader check on every request: leader, and ready.
pub(super) fn check_leader(node: &Shared) -> Result<(), String> {
    let me = node.ctx.name();
    if !node.raft.is_leader() {
        let hint = node.raft.leader().unwrap_or_else(|| "unknown".into());
        return Err(format!(
            "OMNotLeaderException: {me} is not the leader (leader: {hint})"
        ));
    }
    let applied = node.om.borrow().tracker.last_applied();
    let startup = node.raft.startup_index();
    if !leader_ready(startup, applied) {
        return Err(format!(
            "OMLeaderNotReadyException: {me} is Leader but not ready to process request yet (ozoneApplied {} < startup index {})",
            applied.index,
            startup.map_or("-".to_string(), |s| s.to_string())
        ));
    }
    Ok(())
}

fn read_op(node: &Shared, id: u64, read: impl FnOnce(&Om) -> Result<String, String>) {
    let result = check_leader(node).and_then(|()| read(&node.om.borrow()));
    let result = match result {
        Ok(value) => OpResult::value(value),
        Err(message) => OpResult::error(message),
    };
    node.ctx.complete(id, result);
}

pub(super) fn merged(om: &Om, table: Table, prefix: &str) -> BTreeMap<String, String> {
    let mut rows: BTreeMap<String, String> = om.db.scan(table, prefix).into_iter().collect();
    om.cache.overlay(table, prefix, &mut rows);
    rows
}

fn get_bucket(om: &Om, bucket: &str) -> Result<String, String> {
    let rows = merged(om, Table::Bucket, bucket);
    let row: BucketRow = rows
        .get(bucket)
        .map(|v| serde_json::from_str(v).expect("bucket rows parse"))
        .ok_or_else(|| format!("BUCKET_NOT_FOUND: {bucket}"))?;
    Ok(format!(
        "usedBytes={} usedNamespace={} quotaInNamespace={}",
        row.total_bytes(),
        row.total_namespace(),
        row.quota_namespace
    ))
}

fn list_snapshots(om: &Om, bucket: &str) -> Result<String, String> {
    let rows = merged(om, Table::SnapshotInfo, &format!("{bucket}/"));
    let names: Vec<String> = rows
        .values()
        .map(|v| serde_json::from_str::<SnapshotRow>(v).expect("snapshot rows parse"))
        .map(|s| format!("{}({})", s.name, s.id))
        .collect();
    Ok(format!("[{}]", names.join(", ")))
}

/// The replicated state, per key, as replicas must agree on it.
fn state(om: &Om) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    for key in merged(om, Table::Volume, "").into_keys() {
        state.insert(format!("volume.{key}"), "exists".to_string());
    }
    for (key, value) in merged(om, Table::Bucket, "") {
        let row: BucketRow = serde_json::from_str(&value).expect("bucket rows parse");
        for (name, number) in [
            ("objectId", row.object_id as i64),
            ("usedBytes", row.used_bytes),
            ("usedNamespace", row.used_namespace),
            ("snapshotUsedBytes", row.snapshot_used_bytes),
            ("snapshotUsedNamespace", row.snapshot_used_namespace),
            ("quotaInNamespace", row.quota_namespace),
        ] {
            state.insert(format!("bucket.{key}.{name}"), number.to_string());
        }
    }
    for (key, value) in merged(om, Table::Dir, "") {
        let row: DirRow = serde_json::from_str(&value).expect("dir rows parse");
        state.insert(format!("dir.{key}"), format!("obj={}", row.object_id));
    }
    for (key, value) in merged(om, Table::File, "") {
        let row: FileRow = serde_json::from_str(&value).expect("file rows parse");
        state.insert(
            format!("file.{key}"),
            format!("obj={} size={}", row.object_id, row.size),
        );
    }
    for table in [
        Table::DeletedDir,
        Table::Deleted,
        Table::SnapDeletedDir,
        Table::SnapDeleted,
    ] {
        for (key, value) in merged(om, table, "") {
            let row: DeletedRow = serde_json::from_str(&value).expect("deleted rows parse");
            state.insert(
                format!("{}.{key}", table.name()),
                format!("bucketId={} size={}", row.bucket_id, row.size),
            );
        }
    }
    for (key, value) in merged(om, Table::SnapshotInfo, "") {
        let row: SnapshotRow = serde_json::from_str(&value).expect("snapshot rows parse");
        state.insert(format!("snapshot.{key}"), row.describe());
    }
    state.extend(om.chain.state());
    state
}

pub(super) fn publish(node: &Shared) {
    let now = node.ctx.now_ms();
    let leader = node.raft.is_leader();
    let startup = node.raft.startup_index();
    let mut om = node.om.borrow_mut();
    let ready = leader && leader_ready(startup, om.tracker.last_applied());
    om.readiness.note(now, leader, ready);
    let mut facts = BTreeMap::new();
    let mut fact = |k: &str, v: String| {
        facts.insert(k.to_string(), v);
    };
    let last_applied = om.tracker.last_applied();
    fact("ratis_applied", om.ratis_applied.to_string());
    fact("om_applied", last_applied.index.to_string());
    fact("om_applied_term_index", last_applied.to_string());
    fact(
        "last_notified",
        om.tracker.last_notified().index.to_string(),
    );
    fact("last_skipped", om.tracker.last_skipped().to_string());
    fact("transaction_info", om.db.transaction_info().to_string());
    fact(
        "startup_index",
        startup.map_or("-".to_string(), |s| s.to_string()),
    );
    fact("ready", ready.to_string());
    fact("buffered", om.buffer.len().to_string());
    // Proposals of this leader (client ops and service submits) awaiting apply.
    fact("in_flight", om.waiting.len().to_string());
    fact("commit", node.raft.commit_index().to_string());
    fact("last_index", node.raft.last_index().to_string());
    fact("chain_corrupted", om.chain.is_corrupted().to_string());
    fact(
        FACT_READY_BOUND,
        node.params
            .leader_ready_bound_ms
            .unwrap_or(LEADER_READY_BOUND_MS_DEFAULT)
            .to_string(),
    );
    fact(FACT_READY_WAIT_MAX, om.readiness.wait_max_ms.to_string());
    if let Some(since) = om.readiness.not_ready_since_ms {
        fact(FACT_NOT_READY_SINCE, since.to_string());
    }
    if let Some(what) = &om.covered_failed {
        fact(FACT_COVERED_FAILED, what.clone());
    }
    om.services.facts(&mut fact);
    let observation = Observation {
        role: Some(role_name(om.role).to_string()),
        term: Some(om.term),
        leader: om.leader.clone(),
        applied: Some(om.ratis_applied),
        state: state(&om),
        facts,
        pending: (om.buffer.len() + om.waiting.len()) as u64,
        // A chain that failed to load is not a replica of anything: every
        // snapshot request meets it as an IOException (INTERNAL_ERROR, the OM
        // terminates) until a restart loads it again.
        unvouched: if om.chain.is_corrupted() {
            [super::chain::PREFIX.to_string()].into()
        } else {
            Default::default()
        },
        ..Default::default()
    };
    drop(om);
    node.ctx.publish(observation);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_entries_shadow_the_db_until_their_index_is_flushed() {
        let mut cache = Cache::default();
        cache.put(Table::Dir, "/v/b/a", Some("x".into()), 5);
        cache.put(Table::Dir, "/v/b/b", None, 7);
        let mut rows = BTreeMap::from([("/v/b/b".to_string(), "db".to_string())]);
        cache.overlay(Table::Dir, "/v/b/", &mut rows);
        assert_eq!(rows.keys().collect::<Vec<_>>(), vec!["/v/b/a"]);
        cache.cleanup(5);
        assert!(cache.get(Table::Dir, "/v/b/a").is_none());
        assert_eq!(cache.get(Table::Dir, "/v/b/b"), Some(&None));
    }

    #[test]
    fn readiness_episodes_are_measured_from_the_startup_entry() {
        let mut r = Readiness {
            startup_applied_ms: Some(1_000),
            ..Readiness::default()
        };
        r.note(2_000, true, false);
        assert_eq!(r.not_ready_since_ms, Some(1_000));
        r.note(5_000, true, true);
        assert_eq!((r.not_ready_since_ms, r.wait_max_ms), (None, 4_000));
        r.note(9_000, true, true);
        assert_eq!(r.wait_max_ms, 4_000, "no episode is open");
    }
}
