//! faultline: a deterministic fault-injection chaos harness on turmoil.
//!
//! A scenario is validated from YAML into typed steps, run on a fresh simulation
//! that records one trail, judged by checkers into an outcome, and reported;
//! sweep, hunt and shrink drive many runs. The folders are those stages, in the
//! order a run passes through them, and each imports only the ones listed
//! before it (`tests/architecture.rs` holds them to that order):
//! - `base`: what every stage speaks (actions and what each means, the trail,
//!   outcomes, the seed's streams, the model registry);
//! - `lang`: YAML with positions, scenarios validated into typed steps,
//!   diagnostics, target builds;
//! - `judge`: the checkers and the client-history consistency checkers;
//! - `sim`: the runner on turmoil (cluster, nemesis, workload, recorder);
//! - `report`: terminal, JSON, HTML and JUnit reports;
//! - `drive`: sweep, hunt, shrink, bench and import;
//! - `cli`: the command line.

pub mod base;
pub mod cli;
pub mod drive;
pub mod judge;
pub mod lang;
pub mod report;
pub mod sim;
