//! Quorum packets on learner connections: length-prefixed JSON frames over turmoil
//! TCP, so that a leader's clean shutdown closes the streams (the follower reads
//! end-of-stream) and a crashed peer resets them. turmoil 0.7.2 TCP does not
//! retransmit: a partition silently swallows segments, so every read has a timeout
//! (ZooKeeper's initLimit/syncLimit ticks) and a stale connection is closed, never
//! reused. Election notifications travel as datagrams (`api::Net`).

use super::tree::{DataTree, Txn};
use super::zxid::Zxid;
use faultline_api::NodeHandle;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::watch;
use turmoil::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

pub const QUORUM_PORT: u16 = 2888;
pub const ELECTION_PORT: u16 = 3888;
/// Bound on one frame (a SNAP carries the whole tree).
const FRAME_BYTES_MAX: usize = 8 << 20;
/// Bound on packets queued on one connection before it counts as broken (a peer
/// that stopped reading, a partition that swallows every segment).
const SEND_QUEUE_MAX: usize = 20_000;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Packet {
    /// Learner -> leader: who I am and the last epoch I accepted.
    FollowerInfo {
        sid: u64,
        accepted_epoch: u32,
    },
    /// Leader -> learner: the epoch it proposes.
    LeaderInfo {
        epoch: u32,
    },
    /// Learner -> leader: my state summary. `current_epoch: None` (ZooKeeper's -1)
    /// means "already accepted this epoch": the zxid counts, the ack does not.
    AckEpoch {
        current_epoch: Option<u32>,
        last_zxid: Zxid,
    },
    Diff {
        zxid: Zxid,
    },
    Trunc {
        zxid: Zxid,
    },
    Snap {
        zxid: Zxid,
        tree: DataTree,
    },
    Proposal {
        zxid: Zxid,
        txn: Txn,
    },
    Commit {
        zxid: Zxid,
    },
    NewLeader {
        zxid: Zxid,
    },
    UpToDate,
    Ack {
        zxid: Zxid,
    },
    Ping,
}

impl Packet {
    pub fn kind(&self) -> &'static str {
        match self {
            Packet::FollowerInfo { .. } => "FOLLOWERINFO",
            Packet::LeaderInfo { .. } => "LEADERINFO",
            Packet::AckEpoch { .. } => "ACKEPOCH",
            Packet::Diff { .. } => "DIFF",
            Packet::Trunc { .. } => "TRUNC",
            Packet::Snap { .. } => "SNAP",
            Packet::Proposal { .. } => "PROPOSAL",
            Packet::Commit { .. } => "COMMIT",
            Packet::NewLeader { .. } => "NEWLEADER",
            Packet::UpToDate => "UPTODATE",
            Packet::Ack { .. } => "ACK",
            Packet::Ping => "PING",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Nothing arrived within the read timeout (SocketTimeoutException).
    Timeout,
    /// The peer closed the stream.
    Eof,
    Io(String),
    Corrupt(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Timeout => f.write_str("read timed out"),
            ReadError::Eof => f.write_str("end of stream (the peer closed the socket)"),
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Corrupt(e) => write!(f, "corrupt packet: {e}"),
        }
    }
}

async fn read_exact(read: &mut OwnedReadHalf, buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = poll_fn(|cx| {
            let mut rb = ReadBuf::new(&mut buf[filled..]);
            match Pin::new(&mut *read).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => Poll::Ready(Ok(rb.filled().len())),
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            }
        })
        .await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
    }
    Ok(())
}

async fn write_all(write: &mut OwnedWriteHalf, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = poll_fn(|cx| Pin::new(&mut *write).poll_write(cx, buf)).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
    }
    Ok(())
}

#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "std::io::ErrorKind is not our enum (and non-exhaustive): every other kind is an I/O error"
)]
fn read_failed(error: io::Error) -> ReadError {
    match error.kind() {
        io::ErrorKind::UnexpectedEof => ReadError::Eof,
        _ => ReadError::Io(error.to_string()),
    }
}

async fn read_frame(read: &mut OwnedReadHalf) -> Result<Packet, ReadError> {
    let mut len = [0u8; 4];
    read_exact(read, &mut len).await.map_err(read_failed)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > FRAME_BYTES_MAX {
        return Err(ReadError::Corrupt(format!("frame of {len} bytes")));
    }
    let mut body = vec![0u8; len];
    read_exact(read, &mut body).await.map_err(read_failed)?;
    serde_json::from_slice(&body).map_err(|e| ReadError::Corrupt(e.to_string()))
}

/// Read one packet, waiting at most `timeout` (the socket's soTimeout). A read cut
/// short by the timeout leaves the stream unusable: the caller closes it.
pub async fn read_packet(read: &mut OwnedReadHalf, timeout: Duration) -> Result<Packet, ReadError> {
    match tokio::time::timeout(timeout, read_frame(read)).await {
        Ok(result) => result,
        Err(_) => Err(ReadError::Timeout),
    }
}

/// The write side of one connection. Packets go out in order through a writer
/// task; [`Conn::close`] closes the socket (what is queued is still written, then
/// the stream ends). Writing to a closed connection fails at once, as writing to a
/// closed `Socket` throws.
pub struct Conn {
    tx: RefCell<Option<UnboundedSender<Vec<u8>>>>,
    queued: Rc<Cell<usize>>,
    broken: Rc<RefCell<Option<String>>>,
    closed: watch::Sender<bool>,
    to: String,
    /// Counts what is sent, as the node that owns the connection.
    node: NodeHandle,
}

impl Conn {
    pub fn spawn(write: OwnedWriteHalf, to: &str, node: NodeHandle) -> Rc<Conn> {
        let (tx, mut rx) = unbounded_channel::<Vec<u8>>();
        let queued = Rc::new(Cell::new(0usize));
        let broken: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
        {
            let queued = queued.clone();
            let broken = broken.clone();
            tokio::task::spawn_local(async move {
                let mut write = write;
                while let Some(bytes) = rx.recv().await {
                    queued.set(queued.get().saturating_sub(1));
                    if let Err(e) = write_all(&mut write, &bytes).await {
                        *broken.borrow_mut() = Some(e.to_string());
                        return;
                    }
                }
                // Dropping the write half sends FIN.
            });
        }
        let (closed, _) = watch::channel(false);
        Rc::new(Conn {
            tx: RefCell::new(Some(tx)),
            queued,
            broken,
            closed,
            to: to.to_string(),
            node,
        })
    }

    pub fn send(&self, packet: &Packet) -> io::Result<()> {
        if let Some(error) = self.broken.borrow().clone() {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, error));
        }
        let tx = self.tx.borrow();
        let Some(tx) = tx.as_ref() else {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "Socket closed"));
        };
        if self.queued.get() >= SEND_QUEUE_MAX {
            *self.broken.borrow_mut() = Some("send queue full".to_string());
            return Err(io::Error::new(io::ErrorKind::TimedOut, "send queue full"));
        }
        let body = serde_json::to_vec(packet).expect("packets serialize");
        assert!(body.len() <= FRAME_BYTES_MAX, "frame over its bound");
        let mut frame = (body.len() as u32).to_le_bytes().to_vec();
        frame.extend_from_slice(&body);
        self.node.message(&self.to, packet.kind());
        self.queued.set(self.queued.get() + 1);
        tx.send(frame)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "Broken pipe"))
    }

    pub fn close(&self) {
        self.tx.borrow_mut().take();
        self.closed.send_replace(true);
    }

    pub fn is_closed(&self) -> bool {
        self.tx.borrow().is_none()
    }

    /// Resolves once the connection is closed.
    pub fn closed(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }
}
