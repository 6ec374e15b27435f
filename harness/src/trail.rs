//! The one history of a run: every client operation, fault, fail-point hit, leader
//! change, crash and restart, in simulated time. Checkers read it; reports print it;
//! its digest proves that a seed replays byte for byte.
//!
//! Every event carries a typed payload ([`Data`]): what the harness did (an
//! [`Action`] and its result), what it observed (an op's answer, an await's end),
//! or what a node said ([`NodeEvent`]). Checkers and reports read the payload;
//! `detail` is the human line, derived from it, for people and for `contains:`.

use crate::action::{Acted, Action, ActionResult, FaultAction, Timed};
use crate::duration::format as fmt_duration;
use faultline_api::{NodeEvent, OpResult};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// Declares the trail kinds once: the enum and `Kind::ALL` (every kind, in
/// declaration order) come from one list, so `ALL` can never miss a kind.
macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Kind {
            $($(#[$doc])* $kind,)*
        }

        impl Kind {
            /// Every kind, in declaration order (what `kind:` accepts).
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),*];
        }
    };
}

kinds! {
    /// A client operation was sent to a node.
    OpInvoke,
    OpOk,
    OpError,
    /// No answer within the step's timeout (the op may still take effect).
    OpTimeout,
    /// A network fault applied or repaired: partition, heal, hold, release, latency.
    Network,
    Crash,
    Restart,
    Stop,
    Start,
    /// Leadership transfer requested.
    Transfer,
    FailPointArm,
    /// An armed fail point fired on a node.
    FailPointHit,
    FailPointClear,
    FailPointRelease,
    Sleep,
    Await,
    Check,
    /// The heal phase began or ended.
    Heal,
    /// A limit was hit.
    Limit,
    // Events recorded by nodes themselves.
    Leader,
    Apply,
    Storage,
    Service,
    Submit,
    Exit,
    /// A declared probe was reached.
    Probe,
    Note,
}

impl Kind {
    /// The kind of an action's event.
    pub fn of_action(acted: &Acted) -> Kind {
        let Acted { action, result, .. } = acted;
        match action {
            // A client op that never left the harness failed at once.
            Action::Client { .. }
                if matches!(result, ActionResult::NodeDown | ActionResult::NotAccepting) =>
            {
                Kind::OpError
            }
            Action::Client { .. } => Kind::OpInvoke,
            Action::TransferLeader { .. } => Kind::Transfer,
            Action::Partition { .. }
            | Action::PartitionOneWay { .. }
            | Action::Heal
            | Action::Hold { .. }
            | Action::Release { .. }
            | Action::Latency { .. } => Kind::Network,
            Action::Crash { .. } => Kind::Crash,
            Action::Restart { .. } => Kind::Restart,
            Action::Stop { .. } => Kind::Stop,
            Action::Start { .. } => Kind::Start,
            Action::ArmFailPoint { .. } => Kind::FailPointArm,
            Action::ClearFailPoint { .. } => Kind::FailPointClear,
            Action::ReleaseFailPoint { .. } => Kind::FailPointRelease,
        }
    }

    /// The kind of a node's event.
    pub fn of_node(event: &NodeEvent) -> Kind {
        match event {
            NodeEvent::Leader { .. } => Kind::Leader,
            NodeEvent::Apply { .. } => Kind::Apply,
            NodeEvent::Storage { .. } => Kind::Storage,
            NodeEvent::Service { .. } => Kind::Service,
            NodeEvent::Submit { .. } => Kind::Submit,
            NodeEvent::Exit { .. } => Kind::Exit,
            NodeEvent::Probe { .. } => Kind::Probe,
            NodeEvent::Note { .. } => Kind::Note,
        }
    }

    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// A client op's event: sent, answered, failed, timed out.
    pub fn is_op(self) -> bool {
        match self {
            Kind::OpInvoke | Kind::OpOk | Kind::OpError | Kind::OpTimeout => true,
            Kind::Network
            | Kind::Crash
            | Kind::Restart
            | Kind::Stop
            | Kind::Start
            | Kind::Transfer
            | Kind::FailPointArm
            | Kind::FailPointHit
            | Kind::FailPointClear
            | Kind::FailPointRelease
            | Kind::Sleep
            | Kind::Await
            | Kind::Check
            | Kind::Heal
            | Kind::Limit
            | Kind::Leader
            | Kind::Apply
            | Kind::Storage
            | Kind::Service
            | Kind::Submit
            | Kind::Exit
            | Kind::Probe
            | Kind::Note => false,
        }
    }

    /// Faults the scenario injected (the shrinker's unit of work, the report's bands).
    pub fn is_fault(self) -> bool {
        match self {
            Kind::Network
            | Kind::Crash
            | Kind::Restart
            | Kind::Stop
            | Kind::Start
            | Kind::Transfer
            | Kind::FailPointArm => true,
            Kind::OpInvoke
            | Kind::OpOk
            | Kind::OpError
            | Kind::OpTimeout
            | Kind::FailPointHit
            | Kind::FailPointClear
            | Kind::FailPointRelease
            | Kind::Sleep
            | Kind::Await
            | Kind::Check
            | Kind::Heal
            | Kind::Limit
            | Kind::Leader
            | Kind::Apply
            | Kind::Storage
            | Kind::Service
            | Kind::Submit
            | Kind::Exit
            | Kind::Probe
            | Kind::Note => false,
        }
    }
}

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Simulated time, in milliseconds since the start of the run.
    pub t_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Always `data.kind()` (events are built with [`Event::new`]).
    pub kind: Kind,
    /// The human line: `data`'s text.
    pub detail: String,
    /// The scenario line of the step that caused it (harness events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub data: Data,
}

impl Event {
    /// An event whose kind and detail follow from its payload. A node's event
    /// gives its text up to `detail` (the trail stores it once).
    pub fn new(t_ms: u64, node: Option<&str>, line: Option<u32>, mut data: Data) -> Event {
        let detail = match &mut data {
            Data::Node(event) => event.take_text(),
            other @ (Data::Action(_)
            | Data::OpEnd(_)
            | Data::NoNode { .. }
            | Data::InvalidOp { .. }
            | Data::FailPointHit(_)
            | Data::Exited { .. }
            | Data::Stopped { .. }
            | Data::Sleep { .. }
            | Data::Await(_)
            | Data::Check(_)
            | Data::Heal(_)
            | Data::Limit { .. }
            | Data::Chaos(_)
            | Data::Workload(_)) => other.to_string(),
        };
        Event {
            t_ms,
            node: node.map(str::to_string),
            kind: data.kind(),
            detail,
            line,
            data,
        }
    }

    /// The action this event records, if it took effect (what replays as a step).
    pub fn action(&self) -> Option<&Action> {
        let Data::Action(acted) = &self.data else {
            return None;
        };
        acted.result.took_effect().then_some(&acted.action)
    }

    /// The node event this is, if a node recorded it.
    pub fn node_event(&self) -> Option<&NodeEvent> {
        if let Data::Node(event) = &self.data {
            Some(event)
        } else {
            None
        }
    }

    /// Replicated-state keys the event touched.
    pub fn keys(&self) -> &[String] {
        self.node_event().map_or(&[], NodeEvent::keys)
    }

    /// A typed field of the payload by name (`term`, `role`, `index`, `point`,
    /// `result`, ...). The payload's variant tags are looked through (`{"leader":
    /// {"role": ...}}` has the fields `role`, `term`, `leader`); a name not among
    /// the fields is looked for inside them, depth first, in serialised order
    /// (`error` inside an apply's `result`). The generic way to match on fields.
    pub fn field(&self, name: &str) -> Option<serde_json::Value> {
        let value = serde_json::to_value(&self.data).ok()?;
        find_field(untag(&value), name).cloned()
    }
}

/// Strip the variant tags around a payload's fields: a one-key object whose
/// value is an object is a tag.
fn untag(mut value: &serde_json::Value) -> &serde_json::Value {
    while let Some(map) = value.as_object() {
        let Some(inner) = map
            .values()
            .next()
            .filter(|v| map.len() == 1 && v.is_object())
        else {
            break;
        };
        value = inner;
    }
    value
}

fn find_field<'v>(value: &'v serde_json::Value, name: &str) -> Option<&'v serde_json::Value> {
    let map = value.as_object()?;
    if let Some(found) = map.get(name) {
        return Some(found);
    }
    map.values().find_map(|v| find_field(v, name))
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Trail {
    pub events: Vec<Event>,
}

impl Trail {
    pub fn push(&mut self, event: Event) {
        assert_eq!(
            event.kind,
            event.data.kind(),
            "a trail event's kind follows from its payload"
        );
        self.events.push(event);
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Put events in simulated-time order. Hosts of one tick run one after another,
    /// each with its own clock inside the tick, so appends can be slightly out of
    /// order; the sort is stable, so equal times keep their (deterministic) order.
    pub fn finish(&mut self) {
        self.events.sort_by_key(|e| e.t_ms);
    }

    /// One canonical JSON line per event.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.events
            .iter()
            .map(|e| serde_json::to_string(e).expect("events serialize"))
    }

    /// sha256 over the canonical lines: equal digests mean byte-identical trails.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for line in self.lines() {
            hasher.update(line.as_bytes());
            hasher.update(b"\n");
        }
        hex(&hasher.finalize())
    }

    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.events.iter()
    }

    /// Every action that took effect, at its time, in trail order: what a
    /// replay performs.
    pub fn actions(&self) -> Vec<Timed> {
        self.events
            .iter()
            .filter_map(|e| {
                e.action().map(|action| Timed {
                    t_ms: e.t_ms,
                    action: action.clone(),
                    detail: e.detail.clone(),
                })
            })
            .collect()
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first index where two trails differ (for determinism failures).
pub fn first_difference<'a>(
    a: &'a [Event],
    b: &'a [Event],
) -> Option<(usize, Option<&'a Event>, Option<&'a Event>)> {
    let n = a.len().max(b.len());
    (0..n)
        .find(|&i| a.get(i) != b.get(i))
        .map(|i| (i, a.get(i), b.get(i)))
}

/// Typed events for hand-written trails in tests.
#[cfg(test)]
pub(crate) mod sample {
    use super::*;
    use crate::action::ActionResult;
    use faultline_api::{ApplyResult, ParsedOp, Role};

    pub fn node(t_ms: u64, node: &str, event: NodeEvent) -> Event {
        Event::new(t_ms, Some(node), None, Data::Node(event))
    }

    /// `leader term N`, as the Raft shell says it.
    pub fn leader(t_ms: u64, name: &str, term: u64) -> Event {
        node(
            t_ms,
            name,
            NodeEvent::role(Role::Leader, term, Some(name.into())),
        )
    }

    pub fn role(t_ms: u64, name: &str, role: Role, term: u64) -> Event {
        node(t_ms, name, NodeEvent::role(role, term, None))
    }

    pub fn note(t_ms: u64, name: &str, text: &str) -> Event {
        node(t_ms, name, NodeEvent::note(text))
    }

    pub fn apply(t_ms: u64, name: &str, index: u64, keys: &[&str], text: &str) -> Event {
        let event = NodeEvent::Apply {
            term: Some(1),
            index: Some(index),
            what: text.into(),
            result: ApplyResult::Ok,
            keys: keys.iter().map(|k| k.to_string()).collect(),
            text: text.into(),
        };
        node(t_ms, name, event)
    }

    pub fn act(t_ms: u64, action: Action, result: ActionResult) -> Event {
        let node = action.node().map(str::to_string);
        Event::new(
            t_ms,
            node.as_deref(),
            None,
            Data::Action(Acted {
                action,
                result,
                fault: None,
            }),
        )
    }

    pub fn done(t_ms: u64, action: Action) -> Event {
        act(t_ms, action, ActionResult::Done)
    }

    pub fn parsed(summary: &str) -> ParsedOp {
        ParsedOp {
            op: serde_json::json!({ "op": "put" }),
            summary: summary.into(),
        }
    }

    /// A client op sent to `name` as op `op`.
    pub fn invoke(t_ms: u64, name: &str, op: u64, summary: &str) -> Event {
        let action = Action::Client {
            node: name.into(),
            op: parsed(summary),
        };
        act(t_ms, action, ActionResult::Sent { op })
    }

    /// The answer to op `op`.
    pub fn answer(t_ms: u64, name: &str, op: u64, summary: &str, result: OpResult) -> Event {
        let end = OpEnd {
            op,
            summary: summary.into(),
            admin: false,
            end: OpEndKind::Answered {
                result,
                late: false,
            },
        };
        Event::new(t_ms, Some(name), None, Data::OpEnd(end))
    }

    pub fn hit(t_ms: u64, name: &str, point: &str, fault: FaultAction) -> Event {
        let hit = Hit {
            point: point.into(),
            fired: Some(fault),
            probability: None,
        };
        Event::new(t_ms, Some(name), None, Data::FailPointHit(hit))
    }

    pub fn harness(t_ms: u64, node: Option<&str>, data: Data) -> Event {
        Event::new(t_ms, node, None, data)
    }

    pub fn heal_began(t_ms: u64) -> Event {
        let began = HealStep::Began {
            cuts: 0,
            holds: 0,
            latencies: 0,
            cleared: vec![],
            starting: vec![],
        };
        harness(t_ms, None, Data::Heal(began))
    }

    pub fn heal_ended(t_ms: u64) -> Event {
        harness(t_ms, None, Data::Heal(HealStep::Ended { settled: true }))
    }

    pub fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    pub fn pair(a: &str, b: &str) -> [String; 2] {
        [a.to_string(), b.to_string()]
    }

    pub fn partition(groups: &[&[&str]]) -> Action {
        Action::Partition {
            groups: groups.iter().map(|g| names(g)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::ActionResult;
    use faultline_api::{ApplyResult, Role};

    fn note(t_ms: u64, text: &str) -> Event {
        Event::new(t_ms, Some("n1"), None, Data::Node(NodeEvent::note(text)))
    }

    #[test]
    fn digest_is_order_and_content_sensitive() {
        let mut a = Trail::default();
        a.push(note(1, "x"));
        a.push(note(2, "y"));
        let mut b = Trail::default();
        b.push(note(1, "x"));
        b.push(note(2, "y"));
        assert_eq!(a.digest(), b.digest());
        b.events[1].detail = "z".into();
        assert_ne!(a.digest(), b.digest());
        assert_eq!(first_difference(&a.events, &b.events).unwrap().0, 1);
    }

    #[test]
    fn finish_sorts_stably_by_time() {
        let mut t = Trail::default();
        t.push(note(5, "a"));
        t.push(note(3, "b"));
        t.push(note(5, "c"));
        t.finish();
        let details: Vec<_> = t.iter().map(|e| e.detail.as_str()).collect();
        assert_eq!(details, ["b", "a", "c"]);
    }

    #[test]
    fn every_kind_is_listed_once_and_names_itself() {
        let names: std::collections::BTreeSet<String> =
            Kind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), Kind::ALL.len());
        for &kind in Kind::ALL {
            let back: Kind = serde_json::from_value(serde_json::json!(kind.name())).unwrap();
            assert_eq!(back, kind);
        }
    }

    fn samples() -> Vec<Event> {
        vec![
            Event::new(
                1,
                Some("zk2"),
                None,
                Data::Node(NodeEvent::Leader {
                    role: Role::Leader,
                    term: 2,
                    leader: Some("zk2".into()),
                    text: "leader term 2: NEWLEADER acked by zk1, zk2, last zxid 0x100000003"
                        .into(),
                }),
            ),
            Event::new(
                2,
                Some("om2"),
                None,
                Data::Node(NodeEvent::Apply {
                    term: Some(1),
                    index: Some(9),
                    what: "CreateSnapshot /v/b/s1".into(),
                    result: ApplyResult::Failed {
                        error: "INTERNAL_ERROR".into(),
                    },
                    keys: vec!["chain./v/b".into()],
                    text: "apply (t:1, i:9) CreateSnapshot /v/b/s1 (client) -> INTERNAL_ERROR"
                        .into(),
                }),
            ),
            Event::new(
                3,
                Some("n1"),
                Some(7),
                Data::Action(Acted {
                    action: Action::Crash { node: "n1".into() },
                    result: ActionResult::Done,
                    fault: None,
                }),
            ),
            Event::new(4, None, None, Data::Heal(HealStep::Ended { settled: true })),
            Event::new(
                5,
                Some("n1"),
                None,
                Data::FailPointHit(Hit {
                    point: "apply".into(),
                    fired: Some(FaultAction::StallUntilRelease),
                    probability: None,
                }),
            ),
        ]
    }

    #[test]
    fn events_round_trip_with_their_kind_detail_and_payload() {
        for event in samples() {
            let line = serde_json::to_string(&event).unwrap();
            let back: Event = serde_json::from_str(&line).unwrap();
            assert_eq!(back, event, "{line}");
            assert_eq!(back.kind, back.data.kind());
        }
        let events = samples();
        assert_eq!(events[0].kind, Kind::Leader);
        assert!(events[0].detail.starts_with("leader term 2: NEWLEADER"));
        assert_eq!(events[2].detail, "crash (unsynced writes lost)");
        assert_eq!(
            events[2].action(),
            Some(&Action::Crash { node: "n1".into() })
        );
        assert_eq!(events[4].detail, "apply fired: stall until release");
    }

    #[test]
    fn typed_fields_are_found_by_name() {
        let events = samples();
        assert_eq!(events[0].field("term"), Some(serde_json::json!(2)));
        assert_eq!(events[0].field("role"), Some(serde_json::json!("leader")));
        assert_eq!(events[1].field("index"), Some(serde_json::json!(9)));
        assert_eq!(
            events[1].field("error"),
            Some(serde_json::json!("INTERNAL_ERROR"))
        );
        assert_eq!(events[2].field("node"), Some(serde_json::json!("n1")));
        assert_eq!(events[3].field("settled"), Some(serde_json::json!(true)));
        assert_eq!(events[4].field("point"), Some(serde_json::json!("apply")));
        assert_eq!(events[0].field("nope"), None);
        assert_eq!(
            events[1].field("result"),
            Some(serde_json::json!({"failed": {"error": "INTERNAL_ERROR"}}))
        );
        // A field named like its variant's tag is the field, not the tag.
        let probe = NodeEvent::Probe {
            probe: "purge.window".into(),
            text: "probe purge.window: ...".into(),
        };
        let probe = Event::new(6, Some("om1"), None, Data::Node(probe));
        assert_eq!(probe.kind, Kind::Probe);
        assert_eq!(
            probe.field("probe"),
            Some(serde_json::json!("purge.window"))
        );
        assert_eq!(events[1].keys(), ["chain./v/b".to_string()]);
    }

    #[test]
    #[should_panic(expected = "kind follows from its payload")]
    fn a_kind_that_disagrees_with_the_payload_is_refused() {
        let mut event = note(1, "x");
        event.kind = Kind::Apply;
        Trail::default().push(event);
    }
}
