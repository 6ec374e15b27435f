//! The contract every simulated system implements, and its static description.

use crate::bugs::BugInfo;
use crate::chaos::ChaosDomain;
use crate::ctx::NodeCtx;
use crate::env::NodeSpec;
use crate::faults::FailPointInfo;
use crate::observe::{Observation, ObservationInfo, ObservationKind};
use crate::params::ParamInfo;
use crate::probe::ProbeInfo;
use crate::promise::{Answers, Consistency, HistoryModel, Sequential};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvariantKind {
    /// Must hold in the final state, judged after the heal phase.
    Safety,
    /// Must hold in every observed state ("always"): checked whenever a node
    /// publishes, so a violation is seen even if a later event would repair it.
    Always,
    /// Must come true within a bound; failing it makes the run `stuck`.
    Liveness,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantInfo {
    pub name: &'static str,
    pub kind: InvariantKind,
    pub summary: &'static str,
}

#[derive(Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// A scenario line showing the op, e.g. `{op: put, key: a, value: "1"}`.
    pub example: &'static str,
    /// What a client may rely on: the history checker judges it.
    pub consistency: Consistency,
    /// How its error answers read: which are definite, which mean "not applied".
    pub answers: Answers,
    /// Its argument generators for a chaos run's workload, as workload op
    /// templates in flow form (`"{op: put, key: \"k{1..5}\", value: \"v{seq}\"}"`,
    /// `weight:` and `on:` as in a workload); empty: chaos never sends it.
    pub chaos: &'static [&'static str],
}

#[derive(Debug, PartialEq, Eq)]
pub struct RoleInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub count_min: usize,
    pub count_max: usize,
}

/// Everything `faultline list` shows and validation checks against.
#[derive(Debug)]
pub struct ModelInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The first role is the default for nodes listed by name only.
    pub roles: Vec<RoleInfo>,
    pub ops: Vec<OpInfo>,
    pub fail_points: Vec<&'static FailPointInfo>,
    pub invariants: Vec<InvariantInfo>,
    pub bugs: Vec<&'static BugInfo>,
    /// Code paths a run can report reaching (`NodeCtx::probe`).
    pub probes: Vec<&'static ProbeInfo>,
    /// How the model's log positions (`Observation::applied`, event indices) are
    /// written for people.
    pub index_format: IndexFormat,
    /// Whether the model has leaders: `on: leader` resolves, `await: leader` makes sense.
    pub has_leader: bool,
    /// Whether `transfer_leader` steps are supported.
    pub leader_transfer: bool,
    /// Every key the model's `params` accept, with type, bounds and default.
    pub params: Vec<ParamInfo>,
    /// Every state key and fact its nodes publish (what `observed:` can
    /// match); empty for a model whose keys are not known here (one built
    /// into a target's binary).
    pub observations: Vec<ObservationInfo>,
    /// Whether observations list the state keys a node held and removed
    /// ([`Observation::removed`]), so that "removed" and "never there" differ.
    pub reports_removed: bool,
    /// The sequential model the ops' history is judged against.
    pub history: HistoryModel,
    /// What a chaos run may do to the model (`chaos: {auto: true}`), beyond
    /// what its fail points, params and ops say of themselves.
    pub chaos: ChaosDomain,
}

impl OpInfo {
    /// The same op, with its argument generators for a chaos run's workload.
    pub fn with_chaos(self, chaos: &'static [&'static str]) -> OpInfo {
        OpInfo { chaos, ..self }
    }
}

/// How a model writes a log position. One form everywhere a person reads one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndexFormat {
    /// `25`: a Raft index.
    #[default]
    Decimal,
    /// `0x100000003`: a ZooKeeper zxid, as ZooKeeper logs it.
    Hex,
}

impl IndexFormat {
    pub fn show(self, index: u64) -> String {
        match self {
            IndexFormat::Decimal => index.to_string(),
            IndexFormat::Hex => format!("0x{index:x}"),
        }
    }
}

impl ModelInfo {
    pub fn probe(&self, name: &str) -> Option<&'static ProbeInfo> {
        self.probes.iter().copied().find(|p| p.name == name)
    }
    pub fn fail_point(&self, name: &str) -> Option<&'static FailPointInfo> {
        self.fail_points.iter().copied().find(|p| p.name == name)
    }
    pub fn bug(&self, key: &str) -> Option<&'static BugInfo> {
        self.bugs.iter().copied().find(|b| b.key == key)
    }
    pub fn invariant(&self, name: &str) -> Option<&InvariantInfo> {
        self.invariants.iter().find(|i| i.name == name)
    }
    /// The declaration a published key of this kind is, if any.
    pub fn observation(&self, kind: ObservationKind, key: &str) -> Option<&ObservationInfo> {
        self.observations
            .iter()
            .find(|o| o.kind == kind && o.matches(key))
    }
    pub fn op(&self, name: &str) -> Option<&OpInfo> {
        self.ops.iter().find(|o| o.name == name)
    }
    pub fn role(&self, name: &str) -> Option<&RoleInfo> {
        self.roles.iter().find(|r| r.name == name)
    }
    pub fn param(&self, name: &str) -> Option<&ParamInfo> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Default node-set check: every role's count within its bounds.
    pub fn check_nodes(&self, nodes: &[NodeSpec]) -> Result<(), String> {
        for role in &self.roles {
            let count = nodes.iter().filter(|n| n.role == role.name).count();
            if count < role.count_min || count > role.count_max {
                return Err(format!(
                    "model `{}` needs {}..={} node(s) with role `{}`, found {count}",
                    self.name, role.count_min, role.count_max, role.name
                ));
            }
        }
        Ok(())
    }
}

/// A validated client operation: canonical JSON handed to the node, plus a short
/// human summary for the trail ("put a=1").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParsedOp {
    pub op: serde_json::Value,
    pub summary: String,
}

/// One node as the checkers see it at judgment time.
#[derive(Clone, Debug, Serialize)]
pub struct NodeView {
    pub name: String,
    pub role: String,
    pub up: bool,
    pub observation: Observation,
}

/// A declared invariant a node found broken while the run went on
/// ([`NodeCtx::violation`]): the first one reported of each invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub invariant: String,
    /// The node that found it.
    pub node: String,
    /// When, in simulated ms since the start of the run.
    pub t_ms: u64,
    pub message: String,
}

/// The cluster as the checkers see it.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterView {
    pub now_ms: u64,
    pub nodes: Vec<NodeView>,
    /// The invariants nodes reported broken so far, in the order found, the
    /// first of each: the harness fails each one with its message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// Every link a network fault has touched so far, with the last time one
    /// was in effect on it. A liveness bound that counts from when two nodes
    /// could talk starts no earlier than that: a message lost to a cut, or
    /// held, is not the node's failure to answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub link_faults: Vec<LinkFault>,
}

/// A link between two nodes that a network fault touched (a cut either way or
/// one way, held messages, added latency), and the last time one was in
/// effect on it, in either direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkFault {
    /// The two nodes, `a` before `b` in the scenario's node order.
    pub a: String,
    pub b: String,
    /// Simulated ms since the start of the run: when the last fault on the
    /// link ended, or the view's `now_ms` while one is still in effect.
    pub until_ms: u64,
}

impl ClusterView {
    pub fn node(&self, name: &str) -> Option<&NodeView> {
        self.nodes.iter().find(|n| n.name == name)
    }
    /// The last time a network fault was in effect on the link between `a`
    /// and `b`, either way; `None` if none ever was.
    pub fn link_faulted_until(&self, a: &str, b: &str) -> Option<u64> {
        self.link_faults
            .iter()
            .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
            .map(|l| l.until_ms)
    }
    /// The violation of `invariant` a node reported, if any.
    pub fn violation(&self, invariant: &str) -> Option<&Violation> {
        self.violations.iter().find(|v| v.invariant == invariant)
    }
}

/// The result of one invariant check. A checker that panics is turned into
/// `unknown` by the harness, never into a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    Pass,
    Fail(String),
    /// A liveness invariant that cannot be judged from what the run saw: its
    /// condition does not hold yet and its bound has not passed (a leader not
    /// ready for 8 s of a 30 s bound). Never a pass: the harness goes on for
    /// `wait_ms` more when the run may (the heal phase's bound), then reports
    /// it as not judged, saying `why`; `None`: no longer run would tell.
    Unjudged {
        why: String,
        wait_ms: Option<u64>,
    },
}

/// A simulated system.
pub trait Model {
    fn info(&self) -> &ModelInfo;

    /// Check the scenario's node list (roles and counts).
    fn check_nodes(&self, nodes: &[NodeSpec]) -> Result<(), String> {
        self.info().check_nodes(nodes)
    }

    /// Validate a client op (`{op: put, key: a, value: "1"}`); the op name is
    /// already known to be one of `info().ops`.
    fn parse_op(&self, op: &serde_json::Value) -> Result<ParsedOp, String>;

    /// Validate the scenario's `params` for this model (unknown keys are errors).
    fn parse_params(&self, params: &serde_json::Value) -> Result<(), String>;

    /// The host software of one node: runs until the host is crashed.
    fn start(&self, ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>>;

    /// Evaluate one declared invariant over the final (or mid-run) cluster view.
    fn check(&self, invariant: &str, cluster: &ClusterView) -> Check;

    /// The release of a real system this model runs, when it is a build of one
    /// (`0.10.0-alpha.24`). A scenario's variant picks a build with
    /// `target: NAME@RELEASE`; a process runs the variants whose target it has.
    fn release(&self) -> Option<&'static str> {
        None
    }

    /// Whether every run needs a process of its own: the system under test keeps
    /// process-global state that no run can reset (a thread-local RNG seeded from a
    /// process-wide counter), so a second run in one process would not replay the
    /// first. The harness then starts a child process per run.
    fn one_run_per_process(&self) -> bool {
        false
    }

    /// The model's own sequential specification, for [`HistoryModel::Own`].
    fn sequential(&self) -> Option<&dyn Sequential> {
        None
    }
}

/// Helper for models: deserialize params with unknown keys rejected.
pub fn parse_json<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|e| e.to_string())
}
