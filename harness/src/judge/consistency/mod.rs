//! Did what clients saw make sense? A consistency checker over a
//! [`History`](crate::judge::history::History): Wing & Gong's linearizability search
//! with Lowe's memoisation ([`search`]), split by key (P-compositionality,
//! [`partition`]), under a step budget (over it the verdict is `unknown`, never a
//! pass), with violations shrunk to a small witness ([`witness`]).
//!
//! Models ([`spec::Spec`]): [`register::Register`] (a register per key),
//! [`list_append::ListAppend`] (a list per key),
//! [`zookeeper::ZooKeeper`] (linearizable writes, reads that may be stale but
//! never go back in time for one session, `sync` + read linearizable), and
//! [`own::Own`] (a model's own specification, through the node API).
//! `docs/history.md` describes the models and verdicts.

pub mod appends;
pub mod bench;
pub mod chains;
pub mod check;
pub mod hasher;
pub mod judge;
pub mod list_append;
pub mod own;
pub mod partition;
pub mod register;
pub mod report;
pub mod search;
pub mod spec;
pub mod texts;
pub mod witness;
pub mod zones;
pub mod zookeeper;

pub use check::{check, Budget};
pub use report::{Report, Witness, WitnessOp, CHECKER};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod zookeeper_tests;

#[cfg(test)]
mod against_search;

#[cfg(test)]
mod zones_tests;

#[cfg(test)]
mod appends_tests;
