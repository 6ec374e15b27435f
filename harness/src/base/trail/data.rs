//! The typed payloads of trail events ([`Data`]): what the harness did, what it
//! observed, what a node said, each with the human line it gives.

use super::Kind;
use crate::base::action::{Acted, FaultAction};
use crate::base::duration::format as fmt_duration;
use faultline_api::{NodeEvent, OpResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// What an event is about. Harness payloads are tagged by their meaning
/// (`{"action": ...}`, `{"op_end": ...}`); a node's payload is its own
/// [`NodeEvent`] (`{"leader": {"role": "leader", "term": 3}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Data {
    /// The harness acted on the cluster (a scripted step or the nemesis).
    Action(Acted),
    /// A client op or admin command ended: answered, or given up on.
    OpEnd(OpEnd),
    /// A client step's node reference named no node (no leader, no up node).
    NoNode {
        op: String,
        why: String,
    },
    /// An op template expanded to an op the model refused (a scripted client
    /// step's, or the chaos workload's).
    InvalidOp {
        workload: bool,
        message: String,
    },
    /// An armed fail point was reached.
    FailPointHit(Hit),
    /// A node's process terminated itself; the harness stopped its host.
    Exited {
        reason: String,
    },
    /// A clean stop ended: the node said it stopped, or it was killed after the
    /// stop timeout.
    Stopped {
        clean: bool,
        timeout_ms: u64,
    },
    Sleep {
        ms: u64,
    },
    Await(Awaited),
    Check(Checked),
    Heal(HealStep),
    Limit {
        message: String,
    },
    Chaos(ChaosMark),
    /// A workload started, stopped, or was asked to do what it already did.
    Workload(WorkloadMark),
    /// An event a node recorded.
    #[serde(untagged)]
    Node(NodeEvent),
}

impl Data {
    /// The trail kind this payload is recorded under: one mapping, so an event's
    /// kind and payload can never disagree.
    pub fn kind(&self) -> Kind {
        match self {
            Data::Action(acted) => Kind::of_action(acted),
            Data::OpEnd(end) => end.kind(),
            Data::NoNode { .. } | Data::InvalidOp { .. } => Kind::OpError,
            Data::FailPointHit(_) => Kind::FailPointHit,
            Data::Exited { .. } => Kind::Crash,
            Data::Stopped { .. } => Kind::Stop,
            Data::Sleep { .. } => Kind::Sleep,
            Data::Await(_) => Kind::Await,
            Data::Check(_) => Kind::Check,
            Data::Heal(HealStep::Start) => Kind::Start,
            Data::Heal(HealStep::Began { .. } | HealStep::Ended { .. }) => Kind::Heal,
            Data::Limit { .. } => Kind::Limit,
            Data::Chaos(_) | Data::Workload(_) => Kind::Note,
            Data::Node(event) => Kind::of_node(event),
        }
    }
}

impl fmt::Display for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Data::Action(acted) => acted.fmt(f),
            Data::OpEnd(end) => end.fmt(f),
            Data::NoNode { op, why } => write!(f, "{op} -> error {why}"),
            Data::InvalidOp { workload, message } => write!(
                f,
                "{}op template expanded to an invalid op: {message}",
                if *workload { "workload " } else { "" }
            ),
            Data::FailPointHit(hit) => hit.fmt(f),
            Data::Exited { reason } => write!(f, "process exited: {reason}"),
            Data::Stopped { clean: true, .. } => write!(f, "stopped cleanly"),
            Data::Stopped {
                clean: false,
                timeout_ms,
            } => write!(
                f,
                "did not stop cleanly within {}; killed",
                fmt_duration(Duration::from_millis(*timeout_ms))
            ),
            Data::Sleep { ms } => write!(f, "sleep {}", fmt_duration(Duration::from_millis(*ms))),
            Data::Await(awaited) => awaited.fmt(f),
            Data::Check(checked) => checked.fmt(f),
            Data::Heal(step) => step.fmt(f),
            Data::Limit { message } => f.write_str(message),
            Data::Chaos(mark) => mark.fmt(f),
            Data::Workload(mark) => mark.fmt(f),
            Data::Node(event) => event.fmt(f),
        }
    }
}

/// The end of a client op or admin command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpEnd {
    /// The op id the invoking action's result named.
    pub op: u64,
    pub summary: String,
    /// A transfer's answer, not a client op's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin: bool,
    pub end: OpEndKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpEndKind {
    /// The node answered; `late` when the step had stopped waiting.
    Answered {
        result: OpResult,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        late: bool,
    },
    /// The client gave up (the op may still take effect).
    GaveUp(GiveUp),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GiveUp {
    /// The node went down with the op in hand.
    NodeDown,
    /// The step's own wait ran out.
    StepTimeout { timeout_ms: u64 },
    /// Unanswered for longer than the scenario's op timeout.
    OpTimeout,
}

impl GiveUp {
    /// Why the client stopped waiting, in words (the history's `info` error).
    pub fn reason(&self) -> String {
        match self {
            GiveUp::NodeDown => "no answer: the node went down".to_string(),
            GiveUp::StepTimeout { timeout_ms } => format!(
                "no answer within {}",
                fmt_duration(Duration::from_millis(*timeout_ms))
            ),
            GiveUp::OpTimeout => "no answer within the op timeout".to_string(),
        }
    }
}

impl OpEnd {
    pub fn kind(&self) -> Kind {
        match (&self.end, self.admin) {
            (_, true) => Kind::Transfer,
            (OpEndKind::Answered { result, .. }, false) if result.ok => Kind::OpOk,
            (OpEndKind::Answered { .. }, false) => Kind::OpError,
            (OpEndKind::GaveUp(_), false) => Kind::OpTimeout,
        }
    }
}

impl fmt::Display for OpEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.end {
            OpEndKind::Answered { result, late } => {
                let late = if *late {
                    " (after the step timed out)"
                } else {
                    ""
                };
                write!(f, "{} -> {result}{late}", self.summary)
            }
            OpEndKind::GaveUp(GiveUp::NodeDown) => {
                write!(f, "{} -> no answer: the node went down", self.summary)
            }
            OpEndKind::GaveUp(GiveUp::StepTimeout { timeout_ms }) => write!(
                f,
                "{} -> no answer within {}",
                self.summary,
                fmt_duration(Duration::from_millis(*timeout_ms))
            ),
            OpEndKind::GaveUp(GiveUp::OpTimeout) => {
                write!(f, "{} -> no answer within the op timeout", self.summary)
            }
        }
    }
}

/// A node reached an armed fail point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub point: String,
    /// What it did; `None`: the probability draw said no.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired: Option<FaultAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
}

impl fmt::Display for Hit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fired {
            Some(action) => write!(f, "{} fired: {action}", self.point),
            None => write!(
                f,
                "{} reached, not fired (p={})",
                self.point,
                self.probability.unwrap_or_default()
            ),
        }
    }
}

/// How an `await` step ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Awaited {
    /// The condition, described (`zk2 leading`, `quiescence`).
    pub what: String,
    pub end: AwaitEnd,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AwaitEnd {
    Reached {
        took_ms: u64,
    },
    Missed {
        deadline_ms: u64,
        /// What the node showed instead (an `observed` await), or empty.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        seen: String,
    },
}

impl fmt::Display for Awaited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.end {
            AwaitEnd::Reached { took_ms } => write!(
                f,
                "await {}: reached after {}",
                self.what,
                fmt_duration(Duration::from_millis(*took_ms))
            ),
            AwaitEnd::Missed { deadline_ms, seen } => write!(
                f,
                "await {}: missed its deadline of {}{seen}",
                self.what,
                fmt_duration(Duration::from_millis(*deadline_ms))
            ),
        }
    }
}

/// A mid-run `check` step's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// `converged`, `invariant NAME`.
    pub what: String,
    /// The finding's message; `None`: the check passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl Checked {
    pub fn passed(&self) -> bool {
        self.failed.is_none()
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failed {
            None => write!(f, "check {}: pass", self.what),
            Some(message) => write!(f, "check {}: {message}", self.what),
        }
    }
}

/// The heal phase: it begins by removing every fault, starts each down node,
/// and ends when the replicas settled (or the heal window ran out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealStep {
    Began {
        cuts: usize,
        holds: usize,
        latencies: usize,
        /// `node/point` of every fail point cleared.
        cleared: Vec<String>,
        /// The down nodes it starts.
        starting: Vec<String>,
    },
    /// One down node started (the event's node).
    Start,
    Ended {
        settled: bool,
    },
}

impl fmt::Display for HealStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HealStep::Began {
                cuts,
                holds,
                latencies,
                cleared,
                starting,
            } => write!(
                f,
                "heal: repaired {cuts} cut(s), released {holds} hold(s), reset latency on {latencies} link(s), cleared fail points [{}], starting [{}]",
                cleared.join(", "),
                starting.join(", ")
            ),
            HealStep::Start => write!(f, "heal: start from durable state"),
            HealStep::Ended { settled: true } => write!(f, "heal: replicas settled"),
            HealStep::Ended { settled: false } => {
                write!(f, "heal: replicas did not settle within the heal window")
            }
        }
    }
}

/// A workload's life (`runner/workload.rs`): `source` is `workload` (the
/// scenario's section) or `chaos` (the chaos window's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadMark {
    Started {
        source: String,
        /// `None`: a client per op (ops never wait for each other); absent in
        /// JSON, as the report schema says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clients: Option<u64>,
        every_ms: u64,
    },
    Stopped {
        source: String,
        sent: u64,
        /// Ticks that found every client busy and sent nothing.
        busy_ticks: u64,
    },
    /// A start of a running workload, or a stop of one that is not running.
    Unchanged { source: String, running: bool },
}

impl fmt::Display for WorkloadMark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadMark::Started {
                source,
                clients,
                every_ms,
            } => {
                let every = fmt_duration(Duration::from_millis(*every_ms));
                match clients {
                    Some(n) => write!(
                        f,
                        "{source}: start, {n} client(s) with one op each at a time, an op every {every}"
                    ),
                    None => write!(f, "{source}: start, an op every {every}"),
                }
            }
            WorkloadMark::Stopped {
                source,
                sent,
                busy_ticks,
            } => {
                write!(f, "{source}: stop after {sent} op(s)")?;
                if *busy_ticks > 0 {
                    write!(
                        f,
                        "; {busy_ticks} tick(s) found every client busy and sent nothing"
                    )?;
                }
                Ok(())
            }
            WorkloadMark::Unchanged { source, running } => {
                let state = if *running {
                    "already running"
                } else {
                    "not running"
                };
                write!(f, "{source}: {state}")
            }
        }
    }
}

/// The chaos window's bounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChaosMark {
    Began {
        window_ms: u64,
        /// The fault kinds this run draws from.
        faults: Vec<String>,
        swarm: bool,
    },
    /// What this seed drew for the window (swarm testing, drawn params).
    Drew(SwarmDraw),
    /// A scheduled fault found nothing to act on when its time came (no
    /// leader, a partition already in effect, ...): it did nothing and undoes
    /// nothing.
    Skipped {
        fault: u32,
        why: String,
    },
    /// A node whose process ended itself is started again by the window's
    /// supervisor (`restart_exited`), this long after it went down.
    Supervisor {
        node: String,
        after_ms: u64,
    },
    Ended,
}

/// What one seed drew, for the trail and the report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwarmDraw {
    /// Whether the section asked for swarm testing (else only params were drawn).
    pub swarm: bool,
    /// The seed this was drawn from when it is not the run's own (a derived
    /// run of guided search takes its parent's, a file may name one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_seed: Option<u64>,
    /// Fault kinds on, with their weights.
    pub faults: Vec<(String, u32)>,
    /// Fail points the `failpoint` kind may arm (`point: action`).
    pub points: Vec<String>,
    /// Workload ops on (index in the section's list, op name, weight).
    pub ops: Vec<(usize, String, u32)>,
    pub spacing_ms: (u64, u64),
    pub duration_ms: (u64, u64),
    pub concurrent_max: usize,
    /// Params drawn from `chaos.params`.
    pub params: BTreeMap<String, serde_json::Value>,
}

impl SwarmDraw {
    /// One line for the trail.
    pub fn describe(&self) -> String {
        let faults: Vec<String> = self
            .faults
            .iter()
            .map(|(k, w)| format!("{k}:{w}"))
            .collect();
        let ops: Vec<String> = self
            .ops
            .iter()
            .map(|(_, op, w)| format!("{op}:{w}"))
            .collect();
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut text = if self.swarm {
            format!(
                "swarm: faults [{}], points [{}], ops [{}], spacing {}..{} ms, duration {}..{} ms, concurrent {}",
                faults.join(", "),
                self.points.join(", "),
                ops.join(", "),
                self.spacing_ms.0,
                self.spacing_ms.1,
                self.duration_ms.0,
                self.duration_ms.1,
                self.concurrent_max
            )
        } else {
            "chaos draw".to_string()
        };
        if !params.is_empty() {
            text.push_str(&format!(", params {{{}}}", params.join(", ")));
        }
        if let Some(seed) = self.config_seed {
            text.push_str(&format!(" (configured by seed {seed})"));
        }
        text
    }
}

impl fmt::Display for ChaosMark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChaosMark::Began {
                window_ms,
                faults,
                swarm,
            } => write!(
                f,
                "chaos: window {}, faults [{}]{}",
                fmt_duration(Duration::from_millis(*window_ms)),
                faults.join(", "),
                if *swarm { " (swarm)" } else { "" }
            ),
            ChaosMark::Drew(draw) => f.write_str(&draw.describe()),
            ChaosMark::Skipped { fault, why } => {
                write!(f, "chaos: fault #{fault} skipped: {why}")
            }
            ChaosMark::Supervisor { node, after_ms } => write!(
                f,
                "chaos: supervisor starts {node} again, {} after its process ended",
                fmt_duration(Duration::from_millis(*after_ms))
            ),
            ChaosMark::Ended => write!(f, "chaos: window over, every fault undone"),
        }
    }
}
