//! Scenarios: the validated, typed form the runner executes.
//!
//! `raw` mirrors the file with serde (`deny_unknown_fields`); `validate` resolves
//! every name (nodes, ops, fail points, bugs, invariants) and duration, reporting
//! every error with file:line:col. The runner never interprets a string.

mod fault_kind;
mod files;
pub mod overrides;
pub mod parts;
pub mod raw;
mod remote;
pub mod schedule;
pub mod schema;
pub mod target;
mod validate;

pub use fault_kind::FaultKind;
pub use files::{load, load_all, load_text, scenario_files, LoadFailure, LoadFailures};
pub use overrides::Overrides;
pub use remote::runs_elsewhere;
pub use validate::{
    expand_template, load_schedule, load_str, LoadError, EXPANDED_STEPS_MAX, FILE_BYTES_MAX,
    NODES_MAX,
};

use crate::base::outcome::Outcome;
use crate::base::trail::Kind;
use crate::lang::yaml::Loc;
use faultline_api::{BugSet, FailPointInfo, Model, NodeSpec, ParsedOp};
use std::time::Duration;

/// What a fail point does when it fires; an action's own type, named here too
/// because steps carry it.
pub use crate::base::action::FaultAction;

pub use target::{ArmStep, NodeId, Partition, Target};

pub struct Scenario {
    /// The path as given on the command line.
    pub file: String,
    pub name: String,
    /// Where the name is written (1:1 when it is the file's stem).
    pub name_loc: Loc,
    pub description: String,
    /// sha256 of the file's bytes.
    pub sha256: String,
    /// The file's text: a run in another process loads exactly what this one did.
    pub source: std::sync::Arc<str>,
    pub model: &'static dyn Model,
    pub nodes: Vec<NodeSpec>,
    pub settings: Settings,
    pub variants: Vec<Variant>,
    pub steps: Vec<Step>,
    /// A random nemesis and workload run after the steps, before the heal phase.
    pub chaos: Option<Chaos>,
    /// The workload `workload: start` steps start.
    pub workload: Option<Workload>,
    /// The final generator's ops (the model's, when the heal phase runs them):
    /// after the heal, each must complete (docs/scenario-format.md, "Heal").
    pub finale: Vec<WorkloadOp>,
}

impl Scenario {
    pub fn node_name(&self, id: NodeId) -> &str {
        &self.nodes[id].name
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// Why a variant cannot run now: its target's build is listed but missing
    /// (the message names the build command). Commands report such a variant
    /// as not run, and run the others.
    pub fn unbuilt(&self, variant: &Variant) -> Option<String> {
        crate::lang::targets::unbuilt(&self.file, variant.target.as_deref())
    }

    /// Every variant name of a set of scenarios, each once and sorted, for a
    /// message about a `--variant` none of them has: `a, b, c`.
    pub fn variants_of_all(scenarios: &[Scenario]) -> String {
        let names: std::collections::BTreeSet<String> = scenarios
            .iter()
            .flat_map(|s| s.variants.iter())
            .map(|v| crate::base::text::printable(&v.name).into_owned())
            .collect();
        names.into_iter().collect::<Vec<_>>().join(", ")
    }

    /// The names of the variants, for messages: `a, b, c`.
    pub fn variant_names(&self) -> String {
        let names: Vec<String> = self
            .variants
            .iter()
            .map(|v| crate::base::text::printable(&v.name).into_owned())
            .collect();
        names.join(", ")
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
    /// The judgment of the run's client history.
    pub history: HistoryCheck,
}

/// `history:` whether and within what budget the consistency checker judges
/// what clients saw (docs/history.md).
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryCheck {
    pub enabled: bool,
    /// Specification steps for the whole history; over them the verdict is unknown.
    pub steps: u64,
    /// Steps for shrinking a violation to its witness.
    pub shrink_steps: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Heal {
    /// How long the heal phase may wait for the replicas to agree.
    pub within: Duration,
    /// How long agreement must hold before the runner judges.
    pub settle: Duration,
    /// The final generator: after the heal, the model's final ops (a write,
    /// then a read) must complete, or the run is `stuck` (default: on in a
    /// scenario with a chaos section; `heal: {final: ...}`).
    pub final_ops: bool,
    /// Liveness invariants the scenario accepts leaving unjudged
    /// (`heal: {unjudged: [...]}`): a run still says it could not judge them,
    /// but they do not fail a sweep.
    pub allow_unjudged: Vec<String>,
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
    /// The build this variant runs on (`openraft@0.10.0-alpha.24`), for models that
    /// are builds of a real system; `None`: the model built into this process.
    pub target: Option<String>,
    pub bugs: BugSet,
    /// Scenario params with this variant's params laid over them, validated by the model.
    pub params: serde_json::Value,
    pub expect: Expect,
}

impl Variant {
    /// A copy to change (a variant holds no state of a run).
    pub fn copy(&self) -> Variant {
        Variant {
            name: self.name.clone(),
            loc: self.loc,
            target: self.target.clone(),
            bugs: self.bugs.clone(),
            params: self.params.clone(),
            expect: self.expect.clone(),
        }
    }
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
    /// Events that must appear in this order (each after the one before it).
    pub sequence: Vec<TrailMatch>,
    /// The checker whose findings alone decide the outcome (`consistency`:
    /// failed through the history, with divergence and invariants passing).
    pub checker: Option<(Loc, String)>,
    /// Known defects of this variant's build (`except:`): a run whose outcome
    /// is not the expected one, decided by these checkers alone, counts as the
    /// known defect (reported, counted, not failed). `hunt` drops them.
    pub known: Vec<KnownDefect>,
}

/// One `except: {key, checker}` entry: a bug the variant has buggy (in its
/// `bugs:` or its build's), and the checker whose findings are its signature.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownDefect {
    pub loc: Loc,
    pub key: String,
    pub checker: String,
}

/// Which trail events a match selects: every given field must agree.
#[derive(Clone, Debug, PartialEq)]
pub struct TrailMatch {
    pub loc: Loc,
    pub node: Option<String>,
    pub kind: Option<Kind>,
    pub contains: Option<String>,
    /// Exact number of matching events; `None`: at least one.
    pub count: Option<usize>,
    /// Some matching event comes before some event that matches this (`trail:` only).
    pub before: Option<Box<TrailMatch>>,
    /// Some matching event comes after some event that matches this (`trail:` only).
    pub after: Option<Box<TrailMatch>>,
}

/// A test of one node's observed key: every test must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedMatch {
    pub loc: Loc,
    /// A node, or (in a condition) any node the reference may denote now.
    pub node: Target,
    /// A key of the node's replicated state, or else of its facts.
    pub key: String,
    pub tests: Vec<ValueTest>,
}

/// One test of an observed value (docs/scenario-format.md, "Matching observed values").
#[derive(Clone, Debug, PartialEq)]
pub enum ValueTest {
    /// Exactly this text.
    Equals(String),
    Contains(String),
    /// A regular expression that must match somewhere in the value.
    Matches(Pattern),
    /// The value read as a number (decimal, or `0x` hex), compared with a bound.
    Compare(Compare, Number),
    /// The key is not there.
    Absent(Absence),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    pub fn name(self) -> &'static str {
        match self {
            Compare::Lt => "lt",
            Compare::Le => "le",
            Compare::Gt => "gt",
            Compare::Ge => "ge",
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Compare::Lt => "<",
            Compare::Le => "<=",
            Compare::Gt => ">",
            Compare::Ge => ">=",
        }
    }
}

/// A number in a comparison: integers exactly (zxids are 64-bit), else a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    /// Decimal or `0x` hex integers, else a finite decimal number.
    pub fn parse(text: &str) -> Option<Number> {
        let t = text.trim();
        let (negative, digits) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let int = match digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            Some(hex) => i128::from_str_radix(hex, 16).ok(),
            None => digits.parse::<i128>().ok(),
        };
        if let Some(n) = int {
            return Some(Number::Int(if negative { -n } else { n }));
        }
        t.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Number::Float)
    }

    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    /// `self` compared with `bound`, exactly when both are integers.
    pub fn holds(self, compare: Compare, bound: Number) -> bool {
        let ordering = match (self, bound) {
            (Number::Int(a), Number::Int(b)) => a.partial_cmp(&b),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        };
        let Some(ordering) = ordering else {
            return false;
        };
        match compare {
            Compare::Lt => ordering.is_lt(),
            Compare::Le => ordering.is_le(),
            Compare::Gt => ordering.is_gt(),
            Compare::Ge => ordering.is_ge(),
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// What `absent` asks of a key that is not there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absence {
    /// Not there, whatever the reason (`absent: true`).
    Either,
    /// Not there, and the node says it held it once (`absent: removed`).
    Removed,
    /// Not there, and the node says it never held it (`absent: never`).
    Never,
}

/// A compiled regular expression, compared by its source text.
#[derive(Clone, Debug)]
pub struct Pattern(pub regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

pub struct Step {
    pub loc: Loc,
    pub kind: StepKind,
}

pub enum StepKind {
    Client(ClientStep),
    /// `to` is never `Leader` (validated): `follower` and `any` pick with the seed.
    TransferLeader {
        to: Target,
        timeout: Duration,
        /// Not a failure when it cannot happen or does not complete (a chaos
        /// draw replayed as a step: the nemesis skips such a transfer too).
        optional: bool,
    },
    Partition(Partition),
    Heal,
    Hold {
        a: Target,
        b: Target,
    },
    Release {
        a: Target,
        b: Target,
    },
    /// `delay: None` puts the link back on the scenario's latency range.
    Latency {
        a: Target,
        b: Target,
        delay: Option<Duration>,
    },
    Crash(ProcessStep),
    Restart(ProcessStep),
    Stop(ProcessStep),
    Start(ProcessStep),
    FailPoint {
        node: Target,
        arm: ArmStep,
    },
    ClearFailPoint {
        node: Target,
        point: &'static FailPointInfo,
    },
    ReleaseFailPoint {
        node: Target,
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
    /// Start or stop the scenario's `workload:`.
    Workload(WorkloadStep),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadStep {
    Start,
    Stop,
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
    pub op: ClientOp,
    pub wait: bool,
    pub timeout: Duration,
    pub expect: Option<OpExpect>,
}

/// A scripted op: fixed, or a template with placeholders expanded when it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientOp {
    Fixed(ParsedOp),
    /// `{A..B}` and `{seq}` placeholders, as in workloads (checked at load time).
    Template(serde_json::Value),
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

#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// Some up node leads (any, or the named one), as seen by a majority of... itself.
    Leader(Option<NodeId>),
    /// Every listed node (all up nodes when empty) has applied at least `index`.
    Applied {
        index: u64,
        nodes: Vec<Target>,
    },
    Up(Target),
    Down(Target),
    /// Every client operation sent so far has completed.
    OpsDone,
    /// Replicas agree on their applied index, no op is in flight, no node has pending work.
    Quiescent,
    /// A node's state key (or fact) passes every test.
    Observed(ObservedMatch),
    /// A trail event matching `event` was recorded (since the await began, or at all).
    Event {
        event: TrailMatch,
        since: Since,
    },
}

/// Which events an event await considers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Since {
    /// Events recorded after the await began (the default).
    Step,
    /// Every event of the run so far.
    Run,
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
    /// Swarm testing: each seed also picks which fault kinds, fail points and
    /// workload ops are on, their weights, and sub-ranges of spacing and duration.
    pub swarm: bool,
    /// The seed whose swarm stream draws that configuration and the drawn
    /// params (`config_seed:`); `None`: the run's own seed.
    pub config_seed: Option<u64>,
    pub concurrent_max: usize,
    /// Time between the starts of two faults.
    pub spacing: (Duration, Duration),
    /// How long a lasting fault (partition, crash, fail point, ...) lasts.
    pub duration: (Duration, Duration),
    pub faults: Vec<ChaosFault>,
    pub workload: Option<Workload>,
    /// Model params drawn per seed (with or without swarm), laid over the variant's.
    pub params: Vec<ChaosParam>,
    /// The faults (and ops) to play instead of drawing them (`schedule:`).
    pub schedule: Option<crate::lang::scenario::schedule::Schedule>,
    /// Built from the model's chaos domain (`auto: true`).
    pub auto: bool,
    /// A node whose process ends itself in the window is started again after
    /// a delay drawn from this range (`restart_exited`); `None`: it stays down
    /// until the heal phase.
    pub restart_exited: Option<(Duration, Duration)>,
}

/// One model param a chaos section draws per seed.
#[derive(Clone, Debug)]
pub struct ChaosParam {
    pub name: String,
    pub loc: Loc,
    pub draw: ParamDraw,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamDraw {
    /// An integer in `min..=max`.
    Range { min: i64, max: i64 },
    /// One of these values.
    Choices(Vec<serde_json::Value>),
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
    /// Its row of the kinds' table.
    pub fn kind(&self) -> FaultKind {
        match self {
            ChaosKind::Partition => FaultKind::Partition,
            ChaosKind::OneWay => FaultKind::OneWay,
            ChaosKind::Hold => FaultKind::Hold,
            ChaosKind::Latency { .. } => FaultKind::Latency,
            ChaosKind::Crash => FaultKind::Crash,
            ChaosKind::Restart => FaultKind::Restart,
            ChaosKind::Stop => FaultKind::Stop,
            ChaosKind::TransferLeader => FaultKind::TransferLeader,
            ChaosKind::FailPoint(_) => FaultKind::FailPoint,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

#[derive(Clone, Debug)]
pub struct ChaosPoint {
    pub point: &'static FailPointInfo,
    pub action: PointAction,
    /// Nodes it may be armed on (all when empty), resolved when it is armed
    /// (`leader`: whichever node leads then; none: nothing is armed).
    pub nodes: Vec<Target>,
    /// Relative frequency among the kind's points (default 1).
    pub weight: u32,
    /// Fire at most this many times per arming (`None`: every hit while armed):
    /// a transient fault, such as one fsync that fails before the disk recovers.
    pub count: Option<u32>,
}

/// What a chaos fail point does when the nemesis arms it: one action, or a
/// stall whose length is drawn per arming (log-uniform over a range that spans
/// orders of magnitude).
#[derive(Clone, Debug, PartialEq)]
pub enum PointAction {
    Fixed(FaultAction),
    Stall { min: Duration, max: Duration },
}

impl std::fmt::Display for PointAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PointAction::Fixed(action) => write!(f, "{action}"),
            PointAction::Stall { min, max } => write!(
                f,
                "stall {}..{}",
                crate::base::duration::format(*min),
                crate::base::duration::format(*max)
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub loc: Loc,
    pub every: Duration,
    /// Concurrent clients, each with at most one op outstanding; a tick that
    /// finds every client busy sends nothing. `None`: a new client for every
    /// tick's op (ops never wait for each other).
    pub clients: Option<usize>,
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
    /// The op template without `on` and `weight`: string values may hold `{A..B}`
    /// (a number drawn in A..=B) and `{seq}` (the op's sequence number).
    pub template: serde_json::Value,
    /// Relative frequency among the workload's ops (default 1).
    pub weight: u32,
    /// Position in the section's `ops` list (a swarm draw names ops by it).
    pub index: usize,
}
