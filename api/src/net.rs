//! Datagram messaging between nodes over `turmoil::net`.
//!
//! Models talk over UDP: turmoil 0.7.2's TCP has no retransmission, so a segment
//! dropped by a partition wedges a stream forever. Datagrams model loss honestly;
//! protocols retry on their own timers, as they would over a lossy network.

use crate::ctx::{NodeCtx, NodeHandle};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io;
use std::rc::Rc;
use turmoil::net::UdpSocket;

/// The biggest datagram a model may send; protocols bound their batches under it.
pub const DATAGRAM_BYTES_MAX: usize = 64 * 1024;

/// A node's socket. Cheap to clone: every task of the node may send; one task receives.
#[derive(Clone)]
pub struct Net {
    socket: Rc<UdpSocket>,
    port: u16,
    node: NodeHandle,
}

impl Net {
    pub async fn bind(ctx: &NodeCtx, port: u16) -> io::Result<Net> {
        let socket = UdpSocket::bind(("0.0.0.0", port)).await?;
        Ok(Net {
            socket: Rc::new(socket),
            port,
            node: ctx.handle(),
        })
    }

    /// Send one message; `kind` names it for the space-time diagram. A full socket
    /// buffer or an unreachable peer drops the message, as UDP does.
    pub fn send<M: Serialize>(&self, to: &str, kind: &str, message: &M) {
        let bytes = serde_json::to_vec(message).expect("messages serialize");
        assert!(
            bytes.len() <= DATAGRAM_BYTES_MAX,
            "message of {} bytes over the datagram limit",
            bytes.len()
        );
        self.node.message(to, kind);
        let _ = self.socket.try_send_to(&bytes, (to, self.port));
    }

    /// Receive the next message that parses as `M`; returns the sender's name.
    /// `buffer` must hold [`DATAGRAM_BYTES_MAX`] bytes.
    pub async fn recv<M: DeserializeOwned>(&self, buffer: &mut [u8]) -> io::Result<(String, M)> {
        loop {
            let (len, from) = self.socket.recv_from(buffer).await?;
            let Some(name) = turmoil::reverse_lookup(from.ip()) else {
                continue;
            };
            // A datagram that does not parse is dropped, like a corrupt packet.
            if let Ok(message) = serde_json::from_slice(&buffer[..len]) {
                return Ok((name, message));
            }
        }
    }

    /// A receive buffer of the right size.
    pub fn buffer() -> Vec<u8> {
        vec![0; DATAGRAM_BYTES_MAX]
    }
}
