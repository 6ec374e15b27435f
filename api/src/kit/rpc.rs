//! Request and response over turmoil TCP.
//!
//! turmoil 0.7.2's TCP does not retransmit: a segment lost in a partition wedges
//! its stream for good. So every call opens a connection of its own, sends one
//! frame, reads one frame back and closes, all within the call's deadline: a loss
//! becomes a timeout the caller retries, and every retry a fresh connection. A
//! frame is a little-endian `u32` length and that many bytes; the typed calls
//! carry JSON.
//!
//! The server ([`serve`]) reads one request per connection, passes the request
//! fail point (an error drops the request: the connection closes unanswered; a
//! stall holds it), hands it
//! to the node, passes the response fail point (an error drops the answer after
//! the node acted) and writes the answer.

use crate::ctx::NodeCtx;
use crate::faults::FailPoint;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

/// The largest frame a node accepts (a snapshot of a test-sized map fits).
pub const FRAME_BYTES_MAX: usize = 16 * 1024 * 1024;

/// A task of the node, handed to the node's own spawner (a library runtime may
/// need its tasks spawned its way, as openraft's seeded runtime does).
pub type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Why a call got no answer. The text names the peer and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// No connection: the peer is down, not listening, or cut off.
    Unreachable(String),
    /// The connection broke, the answer was not one, or the deadline passed
    /// (the request may have been handled).
    Failed(String),
}

impl CallError {
    pub fn text(&self) -> &str {
        match self {
            CallError::Unreachable(text) | CallError::Failed(text) => text,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl std::error::Error for CallError {}

/// Write one frame and flush it.
pub async fn write_frame(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other("frame too large"))?;
    stream.write_all(&len.to_le_bytes()).await?;
    stream.write_all(bytes).await?;
    stream.flush().await
}

/// Read one frame; one over [`FRAME_BYTES_MAX`] is an error.
pub async fn read_frame(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
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

/// One request to `to:port` on a fresh connection, answered within `deadline`.
/// `kind` names the message on the run's space-time diagram.
pub async fn call<Req: Serialize, Resp: DeserializeOwned>(
    ctx: &NodeCtx,
    to: &str,
    port: u16,
    kind: &str,
    request: &Req,
    deadline: Duration,
) -> Result<Resp, CallError> {
    ctx.message(to, kind);
    let bytes = serde_json::to_vec(request).expect("requests serialize");
    let exchange = async {
        let mut stream = TcpStream::connect((to, port))
            .await
            .map_err(|e| CallError::Unreachable(format!("connect to {to}: {e}")))?;
        let io = |e: io::Error| CallError::Failed(format!("{to}: {e}"));
        write_frame(&mut stream, &bytes).await.map_err(io)?;
        let reply = read_frame(&mut stream).await.map_err(io)?;
        serde_json::from_slice::<Resp>(&reply)
            .map_err(|e| CallError::Failed(format!("{to}: bad reply: {e}")))
    };
    match tokio::time::timeout(deadline, exchange).await {
        Ok(result) => result,
        Err(_) => Err(CallError::Failed(format!(
            "{to}: no answer within {} ms",
            deadline.as_millis()
        ))),
    }
}

/// Serve requests on `port` until the host goes down: each connection is handled
/// in a task of its own (spawned with `spawn`), through [`answer`].
pub async fn serve<Req, Resp, P, H, F>(
    ctx: Rc<NodeCtx>,
    port: u16,
    spawn: impl Fn(Task),
    points: fn(&Req) -> Option<(P, P)>,
    handler: H,
) -> io::Result<()>
where
    Req: DeserializeOwned + 'static,
    Resp: Serialize + 'static,
    P: FailPoint,
    H: Fn(Req) -> F + 'static,
    F: Future<Output = Resp> + 'static,
{
    let listener = TcpListener::bind(("0.0.0.0", port)).await?;
    let handler = Rc::new(handler);
    loop {
        let (stream, _) = listener.accept().await?;
        let (ctx, handler) = (ctx.clone(), handler.clone());
        spawn(Box::pin(async move {
            let _ = answer(&ctx, stream, points, &*handler).await;
        }));
    }
}

/// Answer the one request of a connection. `points` names the request's fail
/// points (request, response), if it has any.
pub async fn answer<Req, Resp, P, H, F>(
    ctx: &NodeCtx,
    mut stream: TcpStream,
    points: fn(&Req) -> Option<(P, P)>,
    handler: &H,
) -> io::Result<()>
where
    Req: DeserializeOwned,
    Resp: Serialize,
    P: FailPoint,
    H: Fn(Req) -> F,
    F: Future<Output = Resp>,
{
    let bytes = read_frame(&mut stream).await?;
    let request: Req = serde_json::from_slice(&bytes).map_err(io::Error::other)?;
    let points = points(&request);
    if let Some((before, _)) = points {
        if ctx.faults().hit(before).await.is_err() {
            // The request is lost: the connection closes unanswered.
            return Ok(());
        }
    }
    let reply = handler(request).await;
    if let Some((_, after)) = points {
        if ctx.faults().hit(after).await.is_err() {
            // Handled, but the answer is lost.
            return Ok(());
        }
    }
    let bytes = serde_json::to_vec(&reply).expect("replies serialize");
    write_frame(&mut stream, &bytes).await
}

#[cfg(test)]
mod tests;
