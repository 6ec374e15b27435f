//! The node API: the small contract between a simulated system and the harness.
//!
//! A model sees only this module. The harness implements [`Env`] (trail, fail-point
//! decisions, observations, process exit) and builds a [`NodeCtx`] for every start
//! of every node. Nothing here knows about scenarios, runners or reports.

mod chaos;
mod ctx;
mod disk;
mod event;
mod faults;
mod model;
mod net;
mod observe;
mod params;
mod probe;
mod promise;

pub use chaos::{ChaosDomain, ParamChaos, PointChaos};
pub use ctx::{node_stream, Command, Env, NodeCtx, NodeSpec, NodeStart, OpResult};
pub use disk::{Disk, RecordLog};
pub use event::{ApplyResult, NodeEvent, Role};
pub use faults::{fail_point_name, FailPoint, FailPointInfo, FailScope, Fault};
pub use model::{
    parse_json, BugInfo, BugMode, BugSet, Check, ClusterView, IndexFormat, InvariantInfo,
    InvariantKind, Model, ModelInfo, NodeView, OpInfo, ParsedOp, RoleInfo,
};
pub use net::Net;
pub use observe::{pattern_matches, Observation, ObservationInfo, ObservationKind};
pub use params::{ParamInfo, ParamKind, ParamValue, PerNode, WEEK_MS};
pub use probe::{check_probe_table, Probe, ProbeInfo, Probes};
pub use promise::{AnswerKind, Answers, Consistency, HistoryModel, Sequential};
