//! openraft's network over turmoil TCP, through the kit's RPC helper
//! (`faultline_api::kit::rpc`): one connection per RPC, bounded by the RPC's
//! deadline (openraft's `RPCOption::hard_ttl`), so every loss is a timeout
//! openraft retries on a fresh connection; and the RPC server that hands
//! requests to openraft, with its request and response fail points.

use crate::points::Point;
use crate::probes::OpenraftProbe;
use crate::types::{Kv, Raft, Snapshot, Vote, node_index};
use faultline_api::NodeCtx;
use faultline_api::kit::rpc::{self, CallError};
use openraft::alias::SnapshotMetaOf;
use openraft::errors::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    VoteRequest, VoteResponse,
};
use openraft::{EmptyNode, RaftNetworkFactory, RaftNetworkV2};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::rc::Rc;
use std::time::Duration;

pub const PORT: u16 = 9100;

#[derive(Serialize, Deserialize)]
enum Rpc {
    Append(AppendEntriesRequest<Kv>),
    Vote(VoteRequest<Kv>),
    PreVote(VoteRequest<Kv>),
    Snapshot {
        vote: Vote,
        meta: SnapshotMetaOf<Kv>,
        data: Vec<u8>,
    },
    TransferLeader(TransferLeaderRequest<Kv>),
}

#[derive(Serialize, Deserialize)]
enum Reply {
    Append(AppendEntriesResponse<Kv>),
    Vote(VoteResponse<Kv>),
    Snapshot(SnapshotResponse<Kv>),
    /// The target accepted the transfer (`None`) or refused it (the reason).
    TransferLeader(Option<String>),
    /// openraft on the target failed (it is shutting down).
    Failed(String),
}

impl Rpc {
    fn kind(&self) -> &'static str {
        match self {
            Rpc::Append(r) if r.entries.is_empty() => "heartbeat",
            Rpc::Append(_) => "append_entries",
            Rpc::Vote(_) => "vote",
            Rpc::PreVote(_) => "pre_vote",
            Rpc::Snapshot { .. } => "snapshot",
            Rpc::TransferLeader(_) => "transfer_leader",
        }
    }

    /// The fail points around handling this request: (request, response).
    fn points(&self) -> Option<(Point, Point)> {
        match self {
            Rpc::Append(r) if r.entries.is_empty() => {
                Some((Point::HeartbeatRequest, Point::HeartbeatResponse))
            }
            Rpc::Append(_) => Some((Point::AppendRequest, Point::AppendResponse)),
            Rpc::Vote(_) | Rpc::PreVote(_) => Some((Point::VoteRequest, Point::VoteResponse)),
            Rpc::Snapshot { .. } | Rpc::TransferLeader(_) => None,
        }
    }
}

/// What the node's clients saw of transfers it asked for: the last refusal.
#[derive(Default)]
pub struct TransferSeen {
    pub refused: Option<(u64, String)>,
}

/// Makes one client per target; they share the node's context.
pub struct Network {
    pub ctx: Rc<NodeCtx>,
    pub transfers: Rc<RefCell<TransferSeen>>,
}

pub struct Client {
    ctx: Rc<NodeCtx>,
    target: u64,
    transfers: Rc<RefCell<TransferSeen>>,
}

impl RaftNetworkFactory<Kv> for Network {
    type Network = Client;

    async fn new_client(&mut self, target: u64, _node: &EmptyNode) -> Client {
        Client {
            ctx: self.ctx.clone(),
            target,
            transfers: self.transfers.clone(),
        }
    }
}

#[derive(Debug)]
struct Failure(String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

impl Client {
    fn target_name(&self) -> String {
        self.ctx.nodes()[node_index(self.target)].name.clone()
    }

    /// One RPC on a fresh connection, within `deadline`.
    async fn call(&self, rpc: Rpc, deadline: Duration) -> Result<Reply, RPCError<Kv>> {
        let to = self.target_name();
        let reply = rpc::call(&self.ctx, &to, PORT, rpc.kind(), &rpc, deadline).await;
        reply.map_err(|e| match e {
            CallError::Unreachable(text) => RPCError::Unreachable(Unreachable::new(&Failure(text))),
            CallError::Failed(text) => RPCError::Network(NetworkError::new(&Failure(text))),
        })
    }

    fn unexpected(&self, reply: Reply) -> RPCError<Kv> {
        let text = match reply {
            Reply::Failed(message) => message,
            _ => "a reply of the wrong kind".into(),
        };
        RPCError::Network(NetworkError::new(&Failure(format!(
            "{}: {text}",
            self.target_name()
        ))))
    }
}

impl RaftNetworkV2<Kv> for Client {
    #[cfg(feature = "snapshot-data-on-state-machine")]
    type SnapshotData = crate::types::SnapshotData;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<Kv>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<Kv>, RPCError<Kv>> {
        match self.call(Rpc::Append(rpc), option.hard_ttl()).await? {
            Reply::Append(resp) => Ok(resp),
            other => Err(self.unexpected(other)),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<Kv>,
        option: RPCOption,
    ) -> Result<VoteResponse<Kv>, RPCError<Kv>> {
        match self.call(Rpc::Vote(rpc), option.hard_ttl()).await? {
            Reply::Vote(resp) => Ok(resp),
            other => Err(self.unexpected(other)),
        }
    }

    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<Kv>,
        option: RPCOption,
    ) -> Result<VoteResponse<Kv>, RPCError<Kv>> {
        match self.call(Rpc::PreVote(rpc), option.hard_ttl()).await? {
            Reply::Vote(resp) => Ok(resp),
            other => Err(self.unexpected(other)),
        }
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: Snapshot,
        cancel: impl Future<Output = ReplicationClosed> + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<Kv>, StreamingError<Kv>> {
        let rpc = Rpc::Snapshot {
            vote,
            meta: snapshot.meta,
            data: snapshot.snapshot.into_inner(),
        };
        let call = self.call(rpc, option.hard_ttl());
        tokio::select! {
            biased;
            closed = cancel => Err(StreamingError::Closed(closed)),
            reply = call => match reply {
                Ok(Reply::Snapshot(resp)) => Ok(resp),
                Ok(other) => Err(StreamingError::from(self.unexpected(other))),
                Err(e) => Err(StreamingError::from(e)),
            },
        }
    }

    #[cfg(not(feature = "transfer-leader-response"))]
    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<Kv>,
        option: RPCOption,
    ) -> Result<(), RPCError<Kv>> {
        match self
            .call(Rpc::TransferLeader(req), option.hard_ttl())
            .await?
        {
            Reply::TransferLeader(None) => Ok(()),
            Reply::TransferLeader(Some(refusal)) => {
                self.refused(refusal);
                Ok(())
            }
            other => Err(self.unexpected(other)),
        }
    }

    #[cfg(feature = "transfer-leader-response")]
    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<Kv>,
        option: RPCOption,
    ) -> Result<openraft::raft::TransferLeaderResponse<Kv>, RPCError<Kv>> {
        let to = req.to_node_id().clone();
        match self
            .call(Rpc::TransferLeader(req), option.hard_ttl())
            .await?
        {
            Reply::TransferLeader(None) => Ok(Ok(())),
            Reply::TransferLeader(Some(refusal)) => {
                if self.target == to {
                    self.refused(refusal.clone());
                }
                Err(self.unexpected(Reply::Failed(refusal)))
            }
            other => Err(self.unexpected(other)),
        }
    }
}

impl Client {
    #[cfg_attr(not(feature = "transfer-leader-response"), allow(dead_code))]
    fn refused(&self, refusal: String) {
        let to = self.target_name();
        self.ctx
            .note(format!("transfer_leader to {to} refused: {refusal}"));
        self.ctx.probe(OpenraftProbe::TransferRefused);
        self.transfers.borrow_mut().refused = Some((self.target, refusal));
    }
}

/// Serve openraft's RPCs to this node until the host goes down.
pub async fn serve(ctx: Rc<NodeCtx>, raft: Raft) -> io::Result<()> {
    let handler = {
        let ctx = ctx.clone();
        move |rpc| handle(ctx.clone(), raft.clone(), rpc)
    };
    rpc::serve(ctx, PORT, crate::spawn, Rpc::points, handler).await
}

async fn handle(ctx: Rc<NodeCtx>, raft: Raft, rpc: Rpc) -> Reply {
    match rpc {
        Rpc::Append(req) => match raft.append_entries(req).await {
            Ok(resp) => Reply::Append(resp),
            Err(e) => Reply::Failed(e.to_string()),
        },
        Rpc::Vote(req) => match raft.vote(req).await {
            Ok(resp) => Reply::Vote(resp),
            Err(e) => Reply::Failed(e.to_string()),
        },
        Rpc::PreVote(req) => match raft.pre_vote(req).await {
            Ok(resp) => Reply::Vote(resp),
            Err(e) => Reply::Failed(e.to_string()),
        },
        Rpc::Snapshot { vote, meta, data } => {
            let snapshot = Snapshot {
                meta,
                snapshot: std::io::Cursor::new(data),
            };
            match raft.install_full_snapshot(vote, snapshot).await {
                Ok(resp) => Reply::Snapshot(resp),
                Err(e) => Reply::Failed(e.to_string()),
            }
        }
        Rpc::TransferLeader(req) => transfer(&ctx, &raft, req).await,
    }
}

#[cfg(not(feature = "transfer-leader-response"))]
async fn transfer(_ctx: &NodeCtx, raft: &Raft, req: TransferLeaderRequest<Kv>) -> Reply {
    match raft.handle_transfer_leader(req).await {
        Ok(()) => Reply::TransferLeader(None),
        Err(e) => Reply::Failed(e.to_string()),
    }
}

/// The target's answer is recorded where it is made: openraft's leader bounds
/// this RPC by election_timeout_min, the same time the target may wait for its
/// log before refusing, so the leader usually gives up before the refusal
/// arrives (measured: the leader's deadline fired 3 ms before the refusal).
#[cfg(feature = "transfer-leader-response")]
async fn transfer(ctx: &NodeCtx, raft: &Raft, req: TransferLeaderRequest<Kv>) -> Reply {
    let to = crate::node::name_of(ctx, *req.to_node_id());
    match raft.handle_transfer_leader(req).await {
        Ok(Ok(())) => Reply::TransferLeader(None),
        Ok(Err(refusal)) => {
            // The variant name (`LogNotFlushed`) leads, as a caller would match on it.
            let refusal = format!("{refusal:?}");
            if to == ctx.name() {
                ctx.note(format!("transfer_leader to {to} refused here: {refusal}"));
                ctx.probe(OpenraftProbe::TransferRefused);
            }
            Reply::TransferLeader(Some(refusal))
        }
        Err(e) => Reply::Failed(e.to_string()),
    }
}
