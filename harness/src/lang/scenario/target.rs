//! The plain data a scenario's steps and a chaos schedule share: node
//! references, partitions as written, fail-point armings. A leaf: it names
//! nothing else of the scenario, so the schedule can use it while the scenario
//! holds schedules.

use crate::base::action::FaultAction;
use faultline_api::FailPointInfo;

pub type NodeId = usize;

/// A node reference (docs/scenario-format.md, "Node references"). In an action it
/// names one node when the step runs; in a condition, every node it may denote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The node that leads (highest term among up nodes).
    Leader,
    /// A node other than the leader; an action picks one with the run's seed.
    Follower,
    /// Any node; an action picks one with the run's seed.
    Any,
    /// Any node of this role (`datanode`), for a model whose nodes differ by
    /// role; an action picks one with the run's seed. A node's own name wins
    /// over a role of the same name.
    Role(&'static str),
    Node(NodeId),
}

impl Target {
    /// The reference as a file writes it.
    pub fn describe(self, names: &[String]) -> String {
        match self {
            Target::Leader => "leader".into(),
            Target::Follower => "follower".into(),
            Target::Any => "any".into(),
            Target::Role(role) => role.into(),
            Target::Node(n) => names[n].clone(),
        }
    }
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

/// A fail-point arming; the node is given where it is resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ArmStep {
    pub point: &'static FailPointInfo,
    pub action: FaultAction,
    /// Fire at most this many times; `None`: until cleared.
    pub count: Option<u32>,
    /// Fire with this probability per hit, drawn from the run's seed.
    pub probability: Option<f64>,
    /// Not an error when it never fires.
    pub optional: bool,
}
