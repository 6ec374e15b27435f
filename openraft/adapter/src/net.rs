//! openraft's network over turmoil TCP: one connection per RPC, a deadline on
//! every RPC, and the RPC server that hands requests to openraft.
//!
//! turmoil's TCP does not retransmit: a segment lost in a partition wedges its
//! stream. A connection per RPC, bounded by the RPC's deadline (openraft's
//! `RPCOption::hard_ttl`), turns every loss into a timeout openraft retries, and
//! every retry into a fresh connection.

use crate::points::Point;
use crate::probes::OpenraftProbe;
use crate::types::{Kv, Raft, Snapshot, Vote, node_index};
use faultline_api::NodeCtx;
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
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

pub const PORT: u16 = 9100;
/// The largest frame a node accepts (a snapshot of a test-sized map fits).
const FRAME_BYTES_MAX: usize = 16 * 1024 * 1024;

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

async fn write_frame(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other("frame too large"))?;
    stream.write_all(&len.to_le_bytes()).await?;
    stream.write_all(bytes).await?;
    stream.flush().await
}

async fn read_frame(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await?;
    let len = u32::from_le_bytes(len) as usize;
    if len > FRAME_BYTES_MAX {
        return Err(io::Error::other(format!(
            "frame of {len} bytes over the limit"
        )));
    }
    let mut bytes = vec![0; len];
    stream.read_exact(&mut bytes).await?;
    Ok(bytes)
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
        self.ctx.message(&to, rpc.kind());
        let bytes = serde_json::to_vec(&rpc).expect("rpcs serialize");
        let exchange = async {
            let mut stream = TcpStream::connect((to.as_str(), PORT)).await.map_err(|e| {
                RPCError::Unreachable(Unreachable::new(&Failure(format!("connect to {to}: {e}"))))
            })?;
            let io =
                |e: io::Error| RPCError::Network(NetworkError::new(&Failure(format!("{to}: {e}"))));
            write_frame(&mut stream, &bytes).await.map_err(io)?;
            let reply = read_frame(&mut stream).await.map_err(io)?;
            serde_json::from_slice::<Reply>(&reply).map_err(|e| {
                RPCError::Network(NetworkError::new(&Failure(format!("{to}: bad reply: {e}"))))
            })
        };
        match tokio::time::timeout(deadline, exchange).await {
            Ok(result) => result,
            Err(_) => Err(RPCError::Network(NetworkError::new(&Failure(format!(
                "{to}: no answer within {} ms",
                deadline.as_millis()
            ))))),
        }
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
    let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let ctx = ctx.clone();
        let raft = raft.clone();
        crate::spawn(async move {
            let _ = handle(ctx, raft, stream).await;
        });
    }
}

async fn handle(ctx: Rc<NodeCtx>, raft: Raft, mut stream: TcpStream) -> io::Result<()> {
    let bytes = read_frame(&mut stream).await?;
    let rpc: Rpc = serde_json::from_slice(&bytes).map_err(io::Error::other)?;
    let points = rpc.points();
    if let Some((request, _)) = points {
        if ctx.faults().hit(request).await.is_err() {
            // The request is lost: no answer; the sender's deadline runs out.
            return Ok(());
        }
    }
    let reply = match rpc {
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
    };
    if let Some((_, response)) = points {
        if ctx.faults().hit(response).await.is_err() {
            // Handled, but the answer is lost.
            return Ok(());
        }
    }
    let bytes = serde_json::to_vec(&reply).expect("replies serialize");
    write_frame(&mut stream, &bytes).await
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
