//! The adapter kit: the plumbing every adapter of a real library needs, so an
//! adapter holds only what is particular to its library. docs/your-own-service.md
//! teaches it, with an example per part.
//!
//! - [`rpc`]: request and response over turmoil TCP, one connection per call
//!   (turmoil's TCP does not retransmit), a deadline on every call, and a server
//!   with a request and a response fail point around each handled call.
//! - [`log`]: a durable log on the simulated disk: append (readable at once,
//!   durable after a batched fsync that reports back), truncate, purge, metadata
//!   written in order behind earlier appends, replay after a crash with torn tails
//!   dropped, and its fail points ([`LogPoint`]) declared here once.
//! - [`raft`]: an oracle for Raft-like systems (election safety, committed entries
//!   agree, committed on a quorum, leader completeness), fed by typed events and
//!   kept in the run's shared state.
//! - [`message_point`]: the declaration of a network fail point (lost or late).

pub mod log;
mod points;
pub mod raft;
pub mod rpc;

pub use log::{Change, DurableLog, EntryKey, LogPoint, LogState};
pub use points::{disk_point, message_point, message_point_within};
pub use raft::{RaftEvent, RaftOracle};
pub use rpc::{CallError, Task};
