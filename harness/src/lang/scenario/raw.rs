//! The scenario file as serde sees it. Every struct rejects unknown keys. Fields
//! whose shape varies (a node name or a mapping) are read by `validate` from the
//! YAML tree, which keeps their locations.
//!
//! The same types give the file's JSON Schema (`faultline schema scenario`,
//! docs/schema/scenario.schema.json): each derives `JsonSchema` (doc comments
//! become descriptions, `deny_unknown_fields` becomes `additionalProperties:
//! false`), and each field read from the tree names, with `schema_with`, a
//! placeholder of `parts` that `scenario::schema` fills in from the description
//! kept beside the `validate` code that reads it. This file imports no reader:
//! it is a leaf of the scenario language. Durations name
//! `crate::base::duration::schema`.

use super::parts;
use crate::lang::yaml::Spanned;
use schemars::JsonSchema;
use serde::Deserialize;

/// Top-level keys, except `steps` and `variants`, which are read one entry at a
/// time so that every entry's errors are reported (the schema adds them:
/// the `schema` module of `scenario`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "faultline scenario", transform = parts::top_level_shape)]
pub struct Header {
    /// The scenario's name in reports (default: the file's stem).
    pub name: Option<Spanned<String>>,
    /// Free text, shown in reports.
    pub description: Option<String>,
    /// A registered model (`faultline list` shows them), or a target build's model.
    pub model: Spanned<String>,
    // The shapes of these are checked by `validate`; serde only sees that they exist.
    /// The nodes: a name, or `{name, role}`.
    #[schemars(schema_with = "parts::nodes_schema")]
    pub nodes: serde::de::IgnoredAny,
    /// Model parameters (`faultline list MODEL` shows each); variants may lay their own over them.
    #[serde(default)]
    #[schemars(schema_with = "parts::params_schema")]
    pub params: Option<serde::de::IgnoredAny>,
    /// Seed, tick, latency, op timeout, random order, limits.
    #[serde(default)]
    pub defaults: Option<Defaults>,
    /// The heal phase: `true` (the default phase), `false` (none), or `{within, settle, final, unjudged}`.
    #[serde(default)]
    #[schemars(schema_with = "parts::heal_schema")]
    pub heal: Option<serde::de::IgnoredAny>,
    /// The expectation of the single implicit variant `default` (or give `variants`).
    #[serde(default)]
    #[schemars(schema_with = "parts::expect_schema")]
    pub expect: Option<serde::de::IgnoredAny>,
    /// A random nemesis and workload after the steps (or `{auto: true}`: the model's whole domain).
    #[serde(default)]
    #[schemars(schema_with = "parts::chaos_schema")]
    pub chaos: Option<serde::de::IgnoredAny>,
    /// The judgment of what clients saw.
    #[serde(default)]
    pub history: Option<HistorySpec>,
    /// Client processes that send ops from `workload: start` to `workload: stop`.
    /// Read by `validate` (the chaos workload's reader).
    #[serde(default)]
    #[schemars(schema_with = "parts::workload_schema")]
    pub workload: Option<serde::de::IgnoredAny>,
}

/// `history:` the judgment of what clients saw.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistorySpec {
    /// `false`: record the history, do not judge it.
    pub check: Option<bool>,
    /// The checker's budget in specification steps; over it the verdict is unknown.
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub steps: Option<Spanned<u64>>,
    /// Steps for shrinking a violation to its witness.
    #[schemars(range(min = 1, max = 1_000_000_000))]
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

/// A node with a role other than the model's first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeFull {
    /// 1-32 of `[A-Za-z0-9_-]`, not `leader`, `follower`, `any`, `all` or `none`.
    #[schemars(schema_with = "parts::node_name_schema")]
    pub name: Spanned<String>,
    /// One of the model's roles (`faultline list MODEL`).
    pub role: Spanned<String>,
}

/// `defaults:` run settings.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// The seed of a run without `--seed`.
    pub seed: Option<Spanned<u64>>,
    /// The simulation step, a whole number of ms in 1ms..=1s.
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub tick: Option<Spanned<String>>,
    /// Per-message network latency range.
    pub latency: Option<Latency>,
    /// Default wait for client ops and leader transfers.
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub op_timeout: Option<Spanned<String>>,
    /// Bounds of a run; reaching one ends it `stuck`.
    pub limits: Option<RawLimits>,
    /// Shuffle host order per tick (seeded).
    pub random_order: Option<bool>,
}

/// A network latency range.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub min: Spanned<String>,
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub max: Spanned<String>,
}

/// `defaults.limits`: simulated time, steps, trail events, messages in flight.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    /// Simulated time.
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub duration: Option<Spanned<String>>,
    /// Simulation steps and executed scenario steps together.
    #[schemars(range(min = 1))]
    pub steps: Option<Spanned<u64>>,
    /// Trail events.
    #[schemars(range(min = 1))]
    pub events: Option<Spanned<u64>>,
    /// Messages in flight at once.
    #[schemars(range(min = 1))]
    pub messages_in_flight: Option<Spanned<u64>>,
}

/// `heal: {within, settle, final, unjudged}`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealSpec {
    /// How long the replicas may take to agree (default 30s).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub within: Option<Spanned<String>>,
    /// How long agreement must hold (default 1s).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
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
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// How long the chaos window lasts.
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub window: Spanned<String>,
    /// Each fault: a fault step with `at`, `for` (a lasting fault) and `pick`.
    #[schemars(schema_with = "parts::scheduled_faults_schema")]
    pub faults: serde::de::IgnoredAny,
    /// The client ops (without it the seed's workload runs).
    #[serde(default)]
    #[schemars(schema_with = "parts::scheduled_ops_schema")]
    pub ops: Option<serde::de::IgnoredAny>,
}

/// One op of a schedule.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleOp {
    /// When it is sent, from the window's start.
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub at: Spanned<String>,
    /// The node it is sent to (a node reference).
    pub on: Spanned<String>,
    /// The number that decides a `follower` or `any`.
    pub pick: Option<u32>,
    /// The op, checked by the model.
    #[schemars(schema_with = "parts::op_schema")]
    pub op: serde::de::IgnoredAny,
}

/// One variant: its build, bug modes, params and expectation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// A build of a real system: `NAME@RELEASE` (faultline-targets.yaml).
    #[serde(default)]
    pub target: Option<Spanned<String>>,
    /// Bug modes: report key -> `buggy` or `fixed` (unmentioned: fixed).
    #[serde(default)]
    #[schemars(schema_with = "parts::bugs_schema")]
    pub bugs: Option<serde::de::IgnoredAny>,
    /// Model params laid over the top-level ones.
    #[serde(default)]
    #[schemars(schema_with = "parts::params_schema")]
    pub params: Option<serde::de::IgnoredAny>,
    /// What the variant must end as.
    #[schemars(schema_with = "parts::expect_schema")]
    pub expect: serde::de::IgnoredAny,
}

/// An expectation with evidence.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectFull {
    /// An outcome, or a list of them.
    #[schemars(schema_with = "parts::outcomes_schema")]
    pub outcome: serde::de::IgnoredAny,
    /// Events that must appear (the mechanism's evidence).
    #[serde(default)]
    pub trail: Vec<Spanned<TrailMatch>>,
    /// Events that must not appear.
    #[serde(default)]
    pub absent: Vec<Spanned<TrailMatch>>,
    /// Final observations: a state key, else a fact.
    /// Read item by item by `validate` (each is an observed match).
    #[serde(default)]
    #[schemars(schema_with = "parts::observed_list_schema")]
    pub observed: Option<serde::de::IgnoredAny>,
    /// Events that must occur in this order (at least two).
    #[serde(default)]
    #[schemars(length(min = 2))]
    pub sequence: Vec<Spanned<TrailMatch>>,
    /// The checker whose findings alone decide the outcome.
    #[serde(default)]
    pub checker: Option<Spanned<String>>,
    /// Known defects: one `{key, checker}` or a list of them, read by `validate`.
    #[serde(default)]
    #[schemars(schema_with = "parts::except_schema")]
    pub except: Option<serde::de::IgnoredAny>,
}

/// One known defect of a variant (`expect.except`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnownDefect {
    /// A bug key the variant has buggy.
    pub key: Spanned<String>,
    /// The checker whose findings it explains (`consistency`, `invariant:NAME`, ...).
    pub checker: Spanned<String>,
}

/// A match of trail events.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = parts::trail_match_shape)]
pub struct TrailMatch {
    /// A node name.
    pub node: Option<Spanned<String>>,
    /// An event kind.
    #[serde(default)]
    #[schemars(schema_with = "parts::event_kind_schema")]
    pub kind: Option<Spanned<String>>,
    /// A substring of the event's text.
    pub contains: Option<String>,
    /// Exactly this many events (in `trail` and `absent` only).
    pub count: Option<Spanned<usize>>,
    /// Some event of the match comes before some event matching this (in `trail` only).
    pub before: Option<Box<Spanned<TrailMatch>>>,
    /// Some event of the match comes after some event matching this (in `trail` only).
    pub after: Option<Box<Spanned<TrailMatch>>>,
}

/// An observed match; `absent` and the comparisons take several shapes and are
/// read from the YAML tree by `validate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = parts::observed_shape)]
pub struct Observed {
    /// A node reference.
    pub node: Spanned<String>,
    /// A state key, else a fact.
    pub key: Spanned<String>,
    /// The value is exactly this text.
    pub value: Option<String>,
    /// The value contains this text.
    pub contains: Option<String>,
    /// The value matches this regular expression (Rust `regex` syntax).
    #[schemars(length(max = 1000))]
    pub matches: Option<Spanned<String>>,
    /// `true`: not there; `removed`: held and removed; `never`: never held.
    #[serde(default)]
    #[schemars(schema_with = "parts::absent_schema")]
    pub absent: Option<serde::de::IgnoredAny>,
    /// Read as a number, less than this.
    #[serde(default)]
    #[schemars(schema_with = "parts::bound_schema")]
    pub lt: Option<serde::de::IgnoredAny>,
    /// Read as a number, at most this.
    #[serde(default)]
    #[schemars(schema_with = "parts::bound_schema")]
    pub le: Option<serde::de::IgnoredAny>,
    /// Read as a number, greater than this.
    #[serde(default)]
    #[schemars(schema_with = "parts::bound_schema")]
    pub gt: Option<serde::de::IgnoredAny>,
    /// Read as a number, at least this.
    #[serde(default)]
    #[schemars(schema_with = "parts::bound_schema")]
    pub ge: Option<serde::de::IgnoredAny>,
}

// ---- steps ----

/// Options of a `client` step; every other key of the mapping belongs to the op.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientOptions {
    /// The node (default: the leader, in a model with leaders).
    pub on: Option<Spanned<String>>,
    /// Wait for the answer (default true).
    pub wait: Option<bool>,
    /// How long to wait (default `defaults.op_timeout`).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub timeout: Option<Spanned<String>>,
    /// `ok`, `error`, or `error: TEXT`.
    #[schemars(regex(pattern = r"^\s*(ok|error(:[\s\S]*)?)\s*$"))]
    pub expect: Option<Spanned<String>>,
}

pub const CLIENT_OPTION_KEYS: &[&str] = &["on", "wait", "timeout", "expect"];

/// `transfer_leader: {to, timeout, optional}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferLeader {
    /// The node that must lead (or `follower`, `any`).
    pub to: Spanned<String>,
    /// How long to wait (default `defaults.op_timeout`).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub timeout: Option<Spanned<String>>,
    /// A transfer that cannot happen or does not complete is no failure.
    #[serde(default)]
    pub optional: bool,
}

/// `partition:` one of `groups`, `isolate`, or `from` + `to`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = parts::partition_shape)]
pub struct Partition {
    /// Every link between groups is cut, both ways (at least two non-empty groups).
    #[schemars(length(min = 2), inner(length(min = 1)))]
    pub groups: Option<Vec<Vec<Spanned<String>>>>,
    /// This node is cut from every other.
    pub isolate: Option<Spanned<String>>,
    /// One-way: this node's messages to `to` are dropped.
    pub from: Option<Spanned<String>>,
    /// One-way: the nodes `from` can no longer reach.
    #[schemars(length(min = 1))]
    pub to: Option<Vec<Spanned<String>>>,
}

/// `{between: [a, b]}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Between {
    /// The two ends of a link.
    #[schemars(length(min = 2, max = 2))]
    pub between: Spanned<Vec<Spanned<String>>>,
}

/// `latency: {between, delay}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Latency2 {
    /// The two ends of a link.
    #[schemars(length(min = 2, max = 2))]
    pub between: Spanned<Vec<Spanned<String>>>,
    /// A duration, or `default` (the scenario's latency range).
    #[schemars(schema_with = "parts::delay_schema")]
    pub delay: Spanned<String>,
}

/// `crash`, `restart`, `stop`, `start` of one node.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Process {
    /// A node reference.
    pub node: Spanned<String>,
    /// No error when the step has no effect (a crash of a down node).
    #[serde(default)]
    pub optional: bool,
}

/// `failpoint:` arm a fail point of the model.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailPoint {
    /// A node reference.
    pub node: Spanned<String>,
    /// One of the model's fail points (`faultline list MODEL`).
    pub point: Spanned<String>,
    /// What happens when it fires.
    pub action: Spanned<Action>,
    /// Fire at most this many times.
    #[schemars(range(min = 1))]
    pub count: Option<Spanned<u32>>,
    /// Fire each time with this probability, in (0, 1].
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 1))]
    pub probability: Option<Spanned<f64>>,
    /// A point armed but never fired does not fail the run.
    #[serde(default)]
    pub optional: bool,
}

/// What a fail point does when it fires.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `{error: KIND}`: the operation fails with an error of KIND (one of the point's kinds).
    Error(String),
    /// `panic`: the process dies at that point.
    Panic,
    /// `{stall: 3s}` or `{stall: release}`: the task waits that long, or until a `release`.
    #[schemars(schema_with = "parts::stall_schema")]
    Stall(String),
}

/// `{node, point}` of a fail point.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointRef {
    /// A node reference.
    pub node: Spanned<String>,
    /// One of the model's fail points.
    pub point: Spanned<String>,
}

/// `release:` held messages (`between`) or a stalled fail point (`node` + `failpoint`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = parts::release_shape)]
pub struct Release {
    /// The link whose held messages are delivered now.
    #[schemars(length(min = 2, max = 2))]
    pub between: Option<Spanned<Vec<Spanned<String>>>>,
    /// The node of the stalled fail point.
    pub node: Option<Spanned<String>>,
    /// The stalled fail point.
    pub failpoint: Option<Spanned<String>>,
}

/// `await:` exactly one condition, with its deadline.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = parts::await_shape)]
pub struct Await {
    /// This node leads (`any`: some node leads).
    pub leader: Option<Spanned<String>>,
    /// Every up node (or every one of `nodes`) applied at least this index.
    pub applied: Option<Spanned<u64>>,
    /// With `applied`: these nodes only.
    pub nodes: Option<Vec<Spanned<String>>>,
    /// This node is up.
    pub up: Option<Spanned<String>>,
    /// This node is down.
    pub down: Option<Spanned<String>>,
    /// Every op sent has an answer (or timed out).
    pub ops_done: Option<bool>,
    /// Same applied index, one leader, nothing pending.
    pub quiescent: Option<bool>,
    /// An observed match, read from the YAML tree by `validate`.
    #[serde(default)]
    #[schemars(schema_with = "parts::observed_schema")]
    pub observed: Option<serde::de::IgnoredAny>,
    /// A trail event that matches.
    pub event: Option<Spanned<TrailMatch>>,
    /// `step` (default) or `run`: which events an `event` await considers.
    #[serde(default)]
    #[schemars(schema_with = "parts::since_schema")]
    pub since: Option<Spanned<String>>,
    /// The deadline (default 30s).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub within: Option<Spanned<String>>,
    /// Only in these variants; the others skip the step.
    #[schemars(length(min = 1))]
    pub variants: Option<Vec<Spanned<String>>>,
}

/// `check:` `{converged: true, within}` or `{invariant: NAME}`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = parts::check_shape)]
pub struct Check {
    /// Wait for quiescence, then compare the replicas.
    pub converged: Option<bool>,
    /// One of the model's invariants, now.
    pub invariant: Option<Spanned<String>>,
    /// How long to wait for quiescence (default 30s).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub within: Option<Spanned<String>>,
}

/// `repeat: {count, steps}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// How many times, 1..=100000.
    #[schemars(range(min = 1, max = 100_000))]
    pub count: Spanned<u32>,
    /// Read entry by entry by `validate`.
    #[schemars(schema_with = "parts::steps_schema")]
    pub steps: serde::de::IgnoredAny,
}

// ---- chaos ----

/// `chaos:` a random nemesis and workload.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chaos {
    /// How long the window lasts (a `schedule:` gives its own).
    #[serde(default)]
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub window: Option<Spanned<String>>,
    /// Build the section from the model's chaos domain; what it names overrides.
    pub auto: Option<Spanned<bool>>,
    /// Swarm testing (default: on with `auto`, else off).
    pub swarm: Option<bool>,
    /// The seed whose draw configures the section (swarm weights, pacing,
    /// drawn params); default: the run's own seed.
    pub config_seed: Option<u64>,
    /// Faults active at once (default 2).
    #[schemars(range(min = 1))]
    pub concurrent_max: Option<Spanned<u32>>,
    /// Between two fault starts (default 200ms..2s).
    pub spacing: Option<Range>,
    /// How long a lasting fault lasts (default 500ms..5s).
    pub duration: Option<Range>,
    /// Read entry by entry by `validate` (a weight, or a mapping with `weight`).
    #[serde(default)]
    #[schemars(schema_with = "parts::chaos_faults_schema")]
    pub faults: Option<serde::de::IgnoredAny>,
    /// The client ops sent over the window.
    #[serde(default)]
    #[schemars(schema_with = "parts::workload_schema")]
    pub workload: Option<serde::de::IgnoredAny>,
    /// Model params drawn per seed: `name: {min, max}` or `name: [choices]`.
    #[serde(default)]
    #[schemars(schema_with = "parts::chaos_params_schema")]
    pub params: Option<serde::de::IgnoredAny>,
    /// The faults (and ops) to play: a file's path, or the schedule itself.
    #[serde(default)]
    #[schemars(schema_with = "parts::schedule_ref_schema")]
    pub schedule: Option<serde::de::IgnoredAny>,
    /// Start a node whose process ended itself again after a delay in
    /// `{min, max}` (a supervisor), or `false`; read by `validate`.
    #[serde(default)]
    #[schemars(schema_with = "parts::restart_exited_schema")]
    pub restart_exited: Option<serde::de::IgnoredAny>,
}

/// A range of durations.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Range {
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub min: Spanned<String>,
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub max: Spanned<String>,
}

/// An integer range of a drawn model param.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntRange {
    pub min: Spanned<i64>,
    pub max: Spanned<i64>,
}

/// A chaos fault kind with its weight and options.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChaosFault {
    /// Relative frequency (0 switches the kind off).
    pub weight: Spanned<u32>,
    /// `latency` only.
    pub delay: Option<Range>,
    /// `failpoint` only.
    pub points: Option<Vec<Spanned<ChaosPoint>>>,
}

/// A fail point the nemesis may arm.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChaosPoint {
    /// One of the model's fail points.
    pub point: Spanned<String>,
    /// An action as in a `failpoint` step, or `{stall: {min, max}}`: read by
    /// `validate` from the tree.
    #[schemars(schema_with = "parts::point_action_schema")]
    pub action: serde::de::IgnoredAny,
    /// Armed on one of these (node references; default: any node).
    pub nodes: Option<Vec<Spanned<String>>>,
    /// Relative frequency among the kind's points (default 1).
    #[schemars(range(min = 1))]
    pub weight: Option<Spanned<u32>>,
    /// Fire at most this many times per arming (default: every hit while armed).
    #[schemars(range(min = 1))]
    pub count: Option<Spanned<u32>>,
}

/// A workload: client ops at a rate.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// One op per interval.
    #[schemars(schema_with = "crate::base::duration::schema")]
    pub every: Spanned<String>,
    /// Where ops without their own `on` go (default: the leader).
    pub on: Option<Spanned<String>>,
    /// Concurrent client processes, each with one op at a time.
    #[schemars(range(min = 1, max = 100))]
    pub clients: Option<Spanned<u64>>,
    /// Op templates, checked by `validate`.
    #[schemars(schema_with = "parts::workload_ops_schema")]
    pub ops: serde::de::IgnoredAny,
}
