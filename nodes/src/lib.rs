//! Simulated systems for faultline.
//!
//! Every model implements [`faultline_api::Model`] and is registered in [`registry`].
//! Models see only the node API, the `faultline-api` crate; they never import harness
//! types.

pub mod hdds;
pub mod ozone;
pub mod raft;
pub mod raftkv;
pub mod registry;
pub mod testing;
pub mod zookeeper;
