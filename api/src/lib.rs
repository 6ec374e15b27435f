//! The node API: the small contract between a simulated system and the harness.
//!
//! A model sees only this crate. The harness implements [`Env`] (trail, fail-point
//! decisions, observations, process exit, the run's shared state and reported
//! violations) and builds a [`NodeCtx`] for every start of every node; the node
//! sees the context, never the `Env`. Nothing here knows about scenarios, runners
//! or reports, and this crate depends on no other crate of faultline's.
//!
//! The modules form no import circle: `env` (what the harness hands a node and
//! implements for it) and `bugs` (bug modes) are leaves with `event`, `observe`,
//! `disk`, `chaos` and `params`; `faults`, `probe` and `promise` build on them;
//! `ctx` (the node's context) on those; `model` (the contract) and `net` on top;
//! `kit` (the adapter kit: RPC, durable log, Raft oracle) on top of all of them.

mod bugs;
mod chaos;
mod ctx;
mod disk;
mod env;
mod event;
mod faults;
pub mod kit;
mod model;
mod net;
mod observe;
mod params;
mod probe;
mod promise;
#[cfg(test)]
mod testenv;

pub use bugs::{BugInfo, BugMode, BugSet};
pub use chaos::{ChaosDomain, PointChaos};
pub use ctx::{NodeCtx, NodeHandle};
pub use disk::{Disk, RecordLog};
pub use env::{node_stream, Command, Env, Fault, NodeSpec, NodeStart, OpResult, Shared};
pub use event::{ApplyResult, NodeEvent, Role};
pub use faults::{fail_point_name, FailPoint, FailPointInfo, FailScope};
pub use model::{
    parse_json, Check, ClusterView, IndexFormat, InvariantInfo, InvariantKind, LinkFault, Model,
    ModelInfo, NodeView, OpInfo, ParsedOp, RoleInfo, Violation,
};
pub use net::Net;
pub use observe::{pattern_matches, Observation, ObservationInfo, ObservationKind};
pub use params::{ParamChaos, ParamInfo, ParamKind, ParamValue, PerNode, WEEK_MS};
pub use probe::{check_probe_table, Probe, ProbeInfo, Probes};
pub use promise::{AnswerKind, Answers, Consistency, HistoryModel, Sequential};
