//! The key-value state machine and its snapshots.
//!
//! The map itself is volatile: after a restart openraft re-applies the log from
//! the last snapshot up to the committed index it persisted. Snapshots are one
//! file, written atomically; reading it is the `snapshot.read` fail point, and
//! every apply batch first passes the `apply` fail point.

use crate::points::Point;
use crate::probes::OpenraftProbe;
use crate::types::{Kv, LogId, Oracle, Request, Response, Snapshot, SnapshotData};
use faultline_api::kit::raft::RaftEvent;
use faultline_api::{ApplyResult, NodeCtx, NodeEvent};
use openraft::alias::{SnapshotMetaOf, StoredMembershipOf};
use openraft::storage::EntryResponder;
use openraft::storage::RaftStateMachine;
use openraft::{EntryPayload, RaftSnapshotBuilder};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Cursor};
use std::rc::Rc;

const SNAPSHOT_FILE: &str = "snapshot";

#[derive(Clone, Default, Serialize, Deserialize)]
pub struct Data {
    pub map: BTreeMap<String, String>,
    pub applied: Option<LogId>,
    pub membership: StoredMembershipOf<Kv>,
}

#[derive(Serialize, Deserialize)]
struct SnapshotFile {
    meta: SnapshotMetaOf<Kv>,
    data: Data,
}

#[derive(Clone)]
pub struct StateMachine {
    pub data: Rc<RefCell<Data>>,
    ctx: Rc<NodeCtx>,
    oracle: Rc<Oracle>,
    id: u64,
    /// Snapshots built so far, for the snapshot id (alpha.37 has no snapshot id).
    #[cfg(not(feature = "snapshot-data-on-state-machine"))]
    snapshots: Rc<RefCell<u64>>,
}

impl StateMachine {
    pub fn new(ctx: Rc<NodeCtx>, oracle: Rc<Oracle>, id: u64) -> io::Result<Self> {
        let sm = StateMachine {
            data: Default::default(),
            ctx,
            oracle,
            id,
            #[cfg(not(feature = "snapshot-data-on-state-machine"))]
            snapshots: Default::default(),
        };
        if let Some(file) = sm.read_snapshot_file()? {
            sm.snapshot_held(&file.meta);
            *sm.data.borrow_mut() = file.data;
        }
        Ok(sm)
    }

    fn read_snapshot_file(&self) -> io::Result<Option<SnapshotFile>> {
        match self.ctx.disk().read(SNAPSHOT_FILE)? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(io::Error::other),
        }
    }

    fn write_snapshot_file(&self, file: &SnapshotFile) -> io::Result<()> {
        let bytes = serde_json::to_vec(file).map_err(io::Error::other)?;
        self.ctx.disk().write_atomic(SNAPSHOT_FILE, &bytes)?;
        self.snapshot_held(&file.meta);
        Ok(())
    }

    /// Tell the oracle this node holds this snapshot.
    fn snapshot_held(&self, meta: &SnapshotMetaOf<Kv>) {
        if let Some(last) = meta.last_log_id {
            let event = RaftEvent::Snapshot {
                node: self.id,
                last: (last.index, last),
                membership: meta.last_membership.log_id().map(|l| (l.index, l)),
            };
            // A snapshot breaks no invariant: nothing to report.
            self.oracle.borrow_mut().observe(event, &|n| n.to_string());
        }
    }

    fn snapshot_of(file: SnapshotFile) -> io::Result<Snapshot> {
        let bytes = serde_json::to_vec(&file.data).map_err(io::Error::other)?;
        Ok(Snapshot {
            meta: file.meta,
            snapshot: Cursor::new(bytes),
        })
    }
}

/// A snapshot that became durable on this node (`built` from its own state
/// machine, or `installed` from the leader's).
fn snapshot_event(how: &str, last: Option<LogId>) -> NodeEvent {
    let index = last.map_or(0, |l| l.index);
    NodeEvent::Storage {
        what: "snapshot".into(),
        term: last.map(|l| l.leader_id.term),
        index: Some(index),
        entries: Vec::new(),
        text: format!("snapshot {how} up to {index}"),
    }
}

impl RaftSnapshotBuilder<Kv> for StateMachine {
    #[cfg(feature = "snapshot-data-on-state-machine")]
    type SnapshotData = SnapshotData;

    async fn build_snapshot(&mut self) -> Result<Snapshot, io::Error> {
        let data = self.data.borrow().clone();
        #[cfg(not(feature = "snapshot-data-on-state-machine"))]
        let number = {
            let mut n = self.snapshots.borrow_mut();
            *n += 1;
            *n
        };
        let meta = SnapshotMetaOf::<Kv> {
            last_log_id: data.applied,
            last_membership: data.membership.clone(),
            #[cfg(not(feature = "snapshot-data-on-state-machine"))]
            snapshot_id: format!(
                "{}-{}-{number}",
                data.applied.map_or(0, |l| l.index),
                self.ctx.incarnation()
            ),
        };
        let file = SnapshotFile { meta, data };
        self.write_snapshot_file(&file)?;
        self.ctx
            .record(snapshot_event("built", file.meta.last_log_id));
        Self::snapshot_of(file)
    }
}

impl RaftStateMachine<Kv> for StateMachine {
    #[cfg(feature = "snapshot-data-on-state-machine")]
    type SnapshotData = SnapshotData;
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId>, StoredMembershipOf<Kv>), io::Error> {
        let data = self.data.borrow();
        Ok((data.applied, data.membership.clone()))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: futures_util::Stream<Item = Result<EntryResponder<Kv>, io::Error>> + Unpin,
    {
        use futures_util::StreamExt;
        let mut first = true;
        while let Some(item) = entries.next().await {
            let (entry, responder) = item?;
            if first {
                first = false;
                if let Err(kind) = self.ctx.faults().hit(Point::Apply).await {
                    return Err(io::Error::other(format!("injected apply error: {kind}")));
                }
            }
            let index = entry.log_id.index;
            let term = entry.log_id.leader_id.term;
            let response = {
                let mut data = self.data.borrow_mut();
                data.applied = Some(entry.log_id);
                match entry.payload {
                    EntryPayload::Blank => {
                        // Recorded like every other entry, so that a log id two
                        // nodes hold with different payloads shows in the trail.
                        self.ctx.record(NodeEvent::Apply {
                            term: Some(term),
                            index: Some(index),
                            what: "blank".to_string(),
                            result: ApplyResult::Ok,
                            keys: Vec::new(),
                            text: format!("apply {index} blank (term {term})"),
                        });
                        Response::default()
                    }
                    EntryPayload::Normal(Request::Put { key, value }) => {
                        self.ctx.record(NodeEvent::Apply {
                            term: Some(term),
                            index: Some(index),
                            what: format!("put {key}={value}"),
                            result: ApplyResult::Ok,
                            keys: vec![key.clone()],
                            text: format!("apply {index} put {key}={value}"),
                        });
                        data.map.insert(key, value.clone());
                        Response { value: Some(value) }
                    }
                    EntryPayload::Normal(Request::Get { key }) => {
                        // A read goes through the log as an entry of its own, so it
                        // holds a log id like a write does.
                        let value = data.map.get(&key).cloned();
                        let seen = value.as_deref().unwrap_or("<absent>");
                        self.ctx.record(NodeEvent::Apply {
                            term: Some(term),
                            index: Some(index),
                            what: format!("get {key}"),
                            result: ApplyResult::Ok,
                            keys: vec![key.clone()],
                            text: format!("apply {index} get {key} -> {seen} (term {term})"),
                        });
                        Response { value }
                    }
                    EntryPayload::Membership(membership) => {
                        let what = format!(
                            "membership {}",
                            crate::node::membership_text(&membership, &self.ctx)
                        );
                        self.ctx.record(NodeEvent::Apply {
                            term: Some(term),
                            index: Some(index),
                            text: format!("apply {index} {what}"),
                            what,
                            result: ApplyResult::Ok,
                            keys: Vec::new(),
                        });
                        data.membership =
                            StoredMembershipOf::<Kv>::new(Some(entry.log_id), membership);
                        Response::default()
                    }
                }
            };
            if let Some(responder) = responder {
                responder.send(response);
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    // Gone in alpha.37: openraft receives a full snapshot in one piece.
    #[cfg(not(feature = "snapshot-data-on-state-machine"))]
    async fn begin_receiving_snapshot(&mut self) -> Result<SnapshotData, io::Error> {
        Ok(Cursor::new(Vec::new()))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMetaOf<Kv>,
        snapshot: SnapshotData,
    ) -> Result<(), io::Error> {
        let data: Data = serde_json::from_slice(snapshot.get_ref()).map_err(io::Error::other)?;
        let file = SnapshotFile {
            meta: meta.clone(),
            data: data.clone(),
        };
        self.write_snapshot_file(&file)?;
        *self.data.borrow_mut() = data;
        self.ctx
            .record(snapshot_event("installed", meta.last_log_id));
        self.ctx.probe(OpenraftProbe::SnapshotInstalled);
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, io::Error> {
        if let Err(kind) = self.ctx.faults().hit(Point::SnapshotRead).await {
            return Err(io::Error::other(format!(
                "injected snapshot read error: {kind}"
            )));
        }
        match self.read_snapshot_file()? {
            None => Ok(None),
            Some(file) => Self::snapshot_of(file).map(Some),
        }
    }
}
