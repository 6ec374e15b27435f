//! Simulated systems for faultline.
//!
//! Every model implements [`api::Model`] and is registered in [`registry`]. Models see
//! only the node API in [`api`]; they never import harness types.

pub mod api;
pub mod hdds;
pub mod ozone;
pub mod raft;
pub mod raftkv;
pub mod registry;
pub mod testing;
pub mod zookeeper;
