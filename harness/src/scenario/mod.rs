//! Scenarios: the validated, typed form the runner executes.
//!
//! `raw` mirrors the file with serde (`deny_unknown_fields`); `validate` resolves
//! every name (nodes, ops, fail points, bugs, invariants) and duration, reporting
//! every error with file:line:col. The runner never interprets a string.

pub mod raw;
mod validate;

pub use validate::{expand_template, load, load_str, LoadError};

use crate::outcome::Outcome;
use crate::trail::Kind;
use crate::yaml::Loc;
use nodes::api::{BugSet, FailPointInfo, Model, NodeSpec, ParsedOp};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub type NodeId = usize;

pub struct Scenario {
    /// The path as given on the command line.
    pub file: String,
    pub name: String,
    pub description: String,
    /// sha256 of the file's bytes.
    pub sha256: String,
    pub model: &'static dyn Model,
    pub nodes: Vec<NodeSpec>,
    pub settings: Settings,
    pub variants: Vec<Variant>,
    pub steps: Vec<Step>,
    /// A random nemesis and workload run after the steps, before the heal phase.
    pub chaos: Option<Chaos>,
}

impl Scenario {
    pub fn node_name(&self, id: NodeId) -> &str {
        &self.nodes[id].name
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub seed: u64,
    pub tick: Duration,
    pub latency_min: Duration,
    pub latency_max: Duration,
    pub op_timeout: Duration,
    pub limits: Limits,
    /// `None`: the scenario switched the heal phase off.
    pub heal: Option<Heal>,
    /// Shuffle host order every tick (seeded): an exploration knob.
    pub random_order: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Heal {
    /// How long the heal phase may wait for the replicas to agree.
    pub within: Duration,
    /// How long agreement must hold before the runner judges.
    pub settle: Duration,
}

/// Bounds on one run; hitting one ends the run `stuck`, never a hang.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub duration: Duration,
    pub steps: u64,
    pub events: usize,
    pub messages_in_flight: usize,
}

pub struct Variant {
    pub name: String,
    pub loc: Loc,
    pub bugs: BugSet,
    /// Scenario params with this variant's params laid over them, validated by the model.
    pub params: serde_json::Value,
    pub expect: Expect,
}

#[derive(Clone, Debug, Default)]
pub struct Expect {
    pub outcomes: Vec<Outcome>,
    /// Events that must appear in the trail: the evidence of the mechanism.
    pub trail: Vec<TrailMatch>,
    /// Events that must not appear.
    pub absent: Vec<TrailMatch>,
    /// Final observations that must hold.
    pub observed: Vec<ObservedMatch>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrailMatch {
    pub loc: Loc,
    pub node: Option<String>,
    pub kind: Option<Kind>,
    pub contains: Option<String>,
    /// Exact number of matching events; `None`: at least one.
    pub count: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ObservedMatch {
    pub loc: Loc,
    pub node: NodeId,
    /// A key of the node's replicated state, or else of its facts.
    pub key: String,
    pub value: String,
}

pub struct Step {
    pub loc: Loc,
    pub kind: StepKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Leader,
    Node(NodeId),
}

pub enum StepKind {
    Client(ClientStep),
    /// `to: None`: the first up node, in node order, that does not lead.
    TransferLeader {
        to: Option<NodeId>,
        timeout: Duration,
    },
    Partition(Partition),
    Heal,
    Hold {
        a: NodeId,
        b: NodeId,
    },
    Release {
        a: NodeId,
        b: NodeId,
    },
    /// `delay: None` puts the link back on the scenario's latency range.
    Latency {
        a: NodeId,
        b: NodeId,
        delay: Option<Duration>,
    },
    Crash(ProcessStep),
    Restart(ProcessStep),
    Stop(ProcessStep),
    Start(ProcessStep),
    FailPoint(ArmStep),
    ClearFailPoint {
        node: NodeId,
        point: &'static FailPointInfo,
    },
    ReleaseFailPoint {
        node: NodeId,
        point: &'static FailPointInfo,
    },
    Sleep(Duration),
    Await {
        condition: Condition,
        within: Duration,
        /// Only in these variants (empty: every variant). An await that checks one
        /// variant's path, e.g. the buggy path of an imported counterexample
        /// (docs/trail-import.md), which the fixed variant leaves by design.
        variants: Vec<String>,
    },
    Check(CheckStep),
    Repeat {
        count: u32,
        steps: Vec<Step>,
    },
}

/// A partition as written; `leader` is resolved when the step runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Partition {
    /// Every link between two different groups is cut, both ways.
    Groups(Vec<Vec<Target>>),
    /// One node cut from every other node.
    Isolate(Target),
    /// `from`'s messages to each of `to` are dropped.
    OneWay { from: Target, to: Vec<Target> },
}

/// One link cut by a partition: `from` can no longer reach `to` (and, unless
/// `oneway`, the other way round).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cut {
    pub from: NodeId,
    pub to: NodeId,
    pub oneway: bool,
}

impl Cut {
    /// Every link between two different groups, cut both ways.
    pub fn between_groups(groups: &[Vec<NodeId>]) -> Vec<Cut> {
        let mut cuts = Vec::new();
        for (i, a) in groups.iter().enumerate() {
            for b in &groups[i + 1..] {
                for &x in a {
                    for &y in b.iter().filter(|&&y| y != x) {
                        cuts.push(Cut {
                            from: x,
                            to: y,
                            oneway: false,
                        });
                    }
                }
            }
        }
        cuts
    }
}

pub struct ClientStep {
    pub target: Target,
    pub op: ParsedOp,
    pub wait: bool,
    pub timeout: Duration,
    pub expect: Option<OpExpect>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum OpExpect {
    Ok,
    /// An error; with a text, the error must contain it.
    Error(Option<String>),
}

#[derive(Clone, Copy, Debug)]
pub struct ProcessStep {
    /// A node, or whichever node leads when the step runs.
    pub target: Target,
    /// Not an error when the step has no effect (the node is already down/up).
    pub optional: bool,
}

#[derive(Clone, Debug)]
pub struct ArmStep {
    pub node: NodeId,
    pub point: &'static FailPointInfo,
    pub action: FaultAction,
    /// Fire at most this many times; `None`: until cleared.
    pub count: Option<u32>,
    /// Fire with this probability per hit, drawn from the run's seed.
    pub probability: Option<f64>,
    /// Not an error when it never fires.
    pub optional: bool,
}

/// What an armed fail point does when it fires (serialised on the trail as
/// `{"error": "disk_full"}`, `"panic"`, `{"stall_ms": 3000}`, `"stall_until_release"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    Error(String),
    Panic,
    #[serde(rename = "stall_ms")]
    Stall(#[serde(with = "crate::duration::ms")] Duration),
    StallUntilRelease,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// Some up node leads (any, or the named one), as seen by a majority of... itself.
    Leader(Option<NodeId>),
    /// Every listed node (all up nodes when empty) has applied at least `index`.
    Applied {
        index: u64,
        nodes: Vec<NodeId>,
    },
    Up(NodeId),
    Down(NodeId),
    /// Every client operation sent so far has completed.
    OpsDone,
    /// Replicas agree on their applied index, no op is in flight, no node has pending work.
    Quiescent,
    /// A node's state key (or fact) has exactly this value.
    Observed {
        node: NodeId,
        key: String,
        value: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum CheckStep {
    /// Wait up to `within` for quiescence, then compare the replicas.
    Converged {
        within: Duration,
    },
    Invariant(&'static str),
}

/// A nemesis that injects faults at random over a window, plus a workload. Every
/// draw comes from the run's seed.
#[derive(Clone, Debug)]
pub struct Chaos {
    pub loc: Loc,
    pub window: Duration,
    /// Each seed also picks which fault kinds are enabled at all.
    pub swarm: bool,
    pub concurrent_max: usize,
    /// Time between the starts of two faults.
    pub spacing: (Duration, Duration),
    /// How long a lasting fault (partition, crash, fail point, ...) lasts.
    pub duration: (Duration, Duration),
    pub faults: Vec<ChaosFault>,
    pub workload: Option<Workload>,
}

#[derive(Clone, Debug)]
pub struct ChaosFault {
    pub kind: ChaosKind,
    pub weight: u32,
}

#[derive(Clone, Debug)]
pub enum ChaosKind {
    /// Two random groups, cut both ways.
    Partition,
    /// One node's messages to some others dropped.
    OneWay,
    Hold,
    Latency {
        min: Duration,
        max: Duration,
    },
    Crash,
    Restart,
    Stop,
    TransferLeader,
    FailPoint(Vec<ChaosPoint>),
}

impl ChaosKind {
    pub fn name(&self) -> &'static str {
        match self {
            ChaosKind::Partition => "partition",
            ChaosKind::OneWay => "oneway",
            ChaosKind::Hold => "hold",
            ChaosKind::Latency { .. } => "latency",
            ChaosKind::Crash => "crash",
            ChaosKind::Restart => "restart",
            ChaosKind::Stop => "stop",
            ChaosKind::TransferLeader => "transfer_leader",
            ChaosKind::FailPoint(_) => "failpoint",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ChaosPoint {
    pub point: &'static FailPointInfo,
    pub action: FaultAction,
    /// Nodes it may be armed on (all when empty).
    pub nodes: Vec<NodeId>,
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub every: Duration,
    /// The workload's `on`: where an op without its own `on` goes. `None` only when
    /// every op names its node.
    pub target: Option<Target>,
    pub ops: Vec<WorkloadOp>,
}

#[derive(Clone, Debug)]
pub struct WorkloadOp {
    /// The op's own `on`, when it goes elsewhere than the workload's target (e.g.
    /// container events to a datanode, block deletions to its manager).
    pub target: Option<Target>,
    /// The op template without `on`: string values may hold `{A..B}` (a number
    /// drawn in A..=B) and `{seq}` (the op's sequence number).
    pub template: serde_json::Value,
}
