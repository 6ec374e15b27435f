//! faultline: a deterministic fault-injection chaos harness on turmoil.
//!
//! A scenario (`scenario`) is validated from YAML (`yaml`), run on a fresh
//! simulation (`runner`) that records one trail (`trail`), judged by checkers
//! (`check`) into an outcome (`outcome`), and reported (`report`). `import` turns a
//! model checker's counterexample into a scenario.

pub mod action;
pub mod bench;
pub mod check;
pub mod cli;
pub mod consistency;
pub mod coverage;
pub mod diag;
pub mod duration;
pub mod effect;
pub mod faults;
pub mod fsio;
pub mod history;
pub mod hunt;
pub mod import;
pub mod models;
pub mod outcome;
pub mod panic;
pub mod progress;
pub mod report;
pub mod runner;
pub mod scenario;
pub use scenario::schedule;
pub mod shrink;
pub mod starter;
pub mod streams;
pub mod sweep;
pub mod targets;
pub mod text;
pub mod trail;
pub mod yaml;
