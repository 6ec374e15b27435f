//! The scenario file as serde sees it. Every struct rejects unknown keys. Fields
//! whose shape varies (a node name or a mapping) are read by `validate` from the
//! YAML tree, which keeps their locations.

use crate::yaml::Spanned;
use serde::Deserialize;

/// Top-level keys, except `steps` and `variants`, which are read one entry at a
/// time so that every entry's errors are reported.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
    pub model: Spanned<String>,
    // The shapes of these are checked by `validate`; serde only sees that they exist.
    pub nodes: serde::de::IgnoredAny,
    #[serde(default)]
    pub params: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub defaults: Option<Defaults>,
    #[serde(default)]
    pub heal: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub expect: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub chaos: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub history: Option<HistorySpec>,
    /// Read by `validate` (the chaos workload's reader).
    #[serde(default)]
    pub workload: Option<serde::de::IgnoredAny>,
}

/// `history:` the judgment of what clients saw.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySpec {
    /// `false`: record the history, do not judge it.
    pub check: Option<bool>,
    /// The checker's budget in specification steps; over it the verdict is unknown.
    pub steps: Option<Spanned<u64>>,
    /// Steps for shrinking a violation to its witness.
    pub shrink_steps: Option<Spanned<u64>>,
}

pub const TOP_LEVEL_KEYS: &[&str] = &[
    "name",
    "description",
    "model",
    "nodes",
    "params",
    "defaults",
    "heal",
    "expect",
    "variants",
    "steps",
    "chaos",
    "history",
    "workload",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeFull {
    pub name: Spanned<String>,
    pub role: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub seed: Option<Spanned<u64>>,
    pub tick: Option<Spanned<String>>,
    pub latency: Option<Latency>,
    pub op_timeout: Option<Spanned<String>>,
    pub limits: Option<RawLimits>,
    pub random_order: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    pub min: Spanned<String>,
    pub max: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub duration: Option<Spanned<String>>,
    pub steps: Option<Spanned<u64>>,
    pub events: Option<Spanned<u64>>,
    pub messages_in_flight: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealSpec {
    pub within: Option<Spanned<String>>,
    pub settle: Option<Spanned<String>>,
    /// The final generator: after the heal, the model's final ops must complete
    /// (default: on in a scenario with a chaos section).
    #[serde(rename = "final")]
    pub final_ops: Option<bool>,
    /// Liveness invariants this scenario accepts leaving unjudged (a sweep
    /// otherwise fails with exit 5 when a run could not judge one).
    pub unjudged: Option<Vec<Spanned<String>>>,
}

/// A schedule (`chaos: {schedule: ...}`, or a schedule file): read entry by
/// entry by `validate`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub window: Spanned<String>,
    pub faults: serde::de::IgnoredAny,
    pub ops: Option<serde::de::IgnoredAny>,
}

/// One op of a schedule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleOp {
    pub at: Spanned<String>,
    pub on: Spanned<String>,
    pub pick: Option<u32>,
    /// The op, checked by the model.
    pub op: serde::de::IgnoredAny,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    #[serde(default)]
    pub target: Option<Spanned<String>>,
    #[serde(default)]
    pub bugs: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub params: Option<serde::de::IgnoredAny>,
    pub expect: serde::de::IgnoredAny,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectFull {
    pub outcome: serde::de::IgnoredAny,
    #[serde(default)]
    pub trail: Vec<Spanned<TrailMatch>>,
    #[serde(default)]
    pub absent: Vec<Spanned<TrailMatch>>,
    /// Read item by item by `validate` (each is an observed match).
    #[serde(default)]
    pub observed: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub sequence: Vec<Spanned<TrailMatch>>,
    /// The checker whose findings alone decide the outcome.
    #[serde(default)]
    pub checker: Option<Spanned<String>>,
    /// Known defects: one `{key, checker}` or a list of them, read by `validate`.
    #[serde(default)]
    pub except: Option<serde::de::IgnoredAny>,
}

/// One known defect of a variant (`expect.except`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownDefect {
    pub key: Spanned<String>,
    pub checker: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrailMatch {
    pub node: Option<Spanned<String>>,
    pub kind: Option<Spanned<String>>,
    pub contains: Option<String>,
    pub count: Option<Spanned<usize>>,
    pub before: Option<Box<Spanned<TrailMatch>>>,
    pub after: Option<Box<Spanned<TrailMatch>>>,
}

/// An observed match; `absent` and the comparisons take several shapes and are
/// read from the YAML tree by `validate`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observed {
    pub node: Spanned<String>,
    pub key: Spanned<String>,
    pub value: Option<String>,
    pub contains: Option<String>,
    pub matches: Option<Spanned<String>>,
    pub absent: Option<serde::de::IgnoredAny>,
    pub lt: Option<serde::de::IgnoredAny>,
    pub le: Option<serde::de::IgnoredAny>,
    pub gt: Option<serde::de::IgnoredAny>,
    pub ge: Option<serde::de::IgnoredAny>,
}

// ---- steps ----

/// Options of a `client` step; every other key of the mapping belongs to the op.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientOptions {
    pub on: Option<Spanned<String>>,
    pub wait: Option<bool>,
    pub timeout: Option<Spanned<String>>,
    pub expect: Option<Spanned<String>>,
}

pub const CLIENT_OPTION_KEYS: &[&str] = &["on", "wait", "timeout", "expect"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferLeader {
    pub to: Spanned<String>,
    pub timeout: Option<Spanned<String>>,
    /// A transfer that cannot happen or does not complete is no failure.
    #[serde(default)]
    pub optional: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    pub groups: Option<Vec<Vec<Spanned<String>>>>,
    pub isolate: Option<Spanned<String>>,
    pub from: Option<Spanned<String>>,
    pub to: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Between {
    pub between: Spanned<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency2 {
    pub between: Spanned<Vec<Spanned<String>>>,
    pub delay: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    pub node: Spanned<String>,
    #[serde(default)]
    pub optional: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailPoint {
    pub node: Spanned<String>,
    pub point: Spanned<String>,
    pub action: Spanned<Action>,
    pub count: Option<Spanned<u32>>,
    pub probability: Option<Spanned<f64>>,
    #[serde(default)]
    pub optional: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `{error: codec}`
    Error(String),
    /// `panic`
    Panic,
    /// `{stall: 3s}` or `{stall: release}`
    Stall(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointRef {
    pub node: Spanned<String>,
    pub point: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    pub between: Option<Spanned<Vec<Spanned<String>>>>,
    pub node: Option<Spanned<String>>,
    pub failpoint: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Await {
    pub leader: Option<Spanned<String>>,
    pub applied: Option<Spanned<u64>>,
    pub nodes: Option<Vec<Spanned<String>>>,
    pub up: Option<Spanned<String>>,
    pub down: Option<Spanned<String>>,
    pub ops_done: Option<bool>,
    pub quiescent: Option<bool>,
    /// An observed match, read from the YAML tree by `validate`.
    pub observed: Option<serde::de::IgnoredAny>,
    pub event: Option<Spanned<TrailMatch>>,
    /// `step` (default) or `run`: which events an `event` await considers.
    pub since: Option<Spanned<String>>,
    pub within: Option<Spanned<String>>,
    /// Only in these variants; the others skip the step.
    pub variants: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub converged: Option<bool>,
    pub invariant: Option<Spanned<String>>,
    pub within: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    pub count: Spanned<u32>,
    /// Read entry by entry by `validate`.
    pub steps: serde::de::IgnoredAny,
}

// ---- chaos ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chaos {
    /// How long the window lasts (a `schedule:` gives its own).
    pub window: Option<Spanned<String>>,
    /// Build the section from the model's chaos domain; what it names overrides.
    pub auto: Option<Spanned<bool>>,
    /// Swarm testing (default: on with `auto`, else off).
    pub swarm: Option<bool>,
    pub concurrent_max: Option<Spanned<u32>>,
    pub spacing: Option<Range>,
    pub duration: Option<Range>,
    /// Read entry by entry by `validate` (a weight, or a mapping with `weight`).
    pub faults: Option<serde::de::IgnoredAny>,
    pub workload: Option<serde::de::IgnoredAny>,
    /// Model params drawn per seed: `name: {min, max}` or `name: [choices]`.
    pub params: Option<serde::de::IgnoredAny>,
    /// The faults (and ops) to play: a file's path, or the schedule itself.
    pub schedule: Option<serde::de::IgnoredAny>,
    /// Start a node whose process ended itself again after a delay in
    /// `{min, max}`, or `false`; read by `validate`.
    pub restart_exited: Option<serde::de::IgnoredAny>,
}

pub const CHAOS_FAULT_KINDS: &[&str] = &[
    "partition",
    "oneway",
    "hold",
    "latency",
    "crash",
    "restart",
    "stop",
    "transfer_leader",
    "failpoint",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub min: Spanned<String>,
    pub max: Spanned<String>,
}

/// An integer range of a drawn model param.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntRange {
    pub min: Spanned<i64>,
    pub max: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChaosFault {
    pub weight: Spanned<u32>,
    /// `latency` only.
    pub delay: Option<Range>,
    /// `failpoint` only.
    pub points: Option<Vec<Spanned<ChaosPoint>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChaosPoint {
    pub point: Spanned<String>,
    /// An action as in a `failpoint` step, or `{stall: {min, max}}`: read by
    /// `validate` from the tree.
    pub action: serde::de::IgnoredAny,
    pub nodes: Option<Vec<Spanned<String>>>,
    /// Relative frequency among the kind's points (default 1).
    pub weight: Option<Spanned<u32>>,
    /// Fire at most this many times per arming (default: every hit while armed).
    pub count: Option<Spanned<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub every: Spanned<String>,
    pub on: Option<Spanned<String>>,
    /// Concurrent client processes, each with one op at a time.
    pub clients: Option<Spanned<u64>>,
    /// Op templates, checked by `validate`.
    pub ops: serde::de::IgnoredAny,
}
