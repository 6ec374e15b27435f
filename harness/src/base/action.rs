//! One type for everything the harness does to a cluster: a client op sent, a
//! leadership transfer, a partition, a heal, a crash, a fail point armed, ...
//!
//! The interpreter turns scenario steps into actions (resolving `leader` when the
//! step runs); the chaos nemesis draws them at random. Either way the runner
//! performs them in one place and records each on the trail with its result, so a
//! trail is a list of actions at simulated times: `faultline shrink` turns them
//! back into scenario steps with [`Action::to_step`], the bench replays them on a
//! bare simulation, and a search can edit them (shift, drop, retarget) and run
//! them again. An action names its nodes, so it means the same thing wherever it
//! is read; it never says *when*: its time is the trail event's.
//!
//! Every `match` over [`Action`] is exhaustive: a new kind of action fails to
//! compile until the runner performs it, the bench replays it, the shrinker writes
//! it and the trail describes it. The trail decides an action's event kind
//! (`trail::Data::kind`), so this module depends on nothing of the harness.
//! What an action means over a trail (what it affects, what undoes it, when
//! a fault was in effect) is the `effect` module's.

use crate::base::duration::format as fmt_duration;
use faultline_api::ParsedOp;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Send a client op to `node` (the step's wait is the step's, not the action's).
    Client {
        node: String,
        op: ParsedOp,
    },
    /// Ask `from` (the leader when the action was taken) to hand leadership to `to`.
    TransferLeader {
        from: String,
        to: String,
    },
    /// Cut every link between two different groups, both ways.
    Partition {
        groups: Vec<Vec<String>>,
    },
    /// Drop `from`'s messages to each of `to`.
    PartitionOneWay {
        from: String,
        to: Vec<String>,
    },
    /// Repair every cut link.
    Heal,
    /// Hold the messages between two nodes until a release.
    Hold {
        between: [String; 2],
    },
    /// Deliver the held messages between two nodes.
    Release {
        between: [String; 2],
    },
    /// Fix a link's latency; `None` puts it back on the scenario's range.
    Latency {
        between: [String; 2],
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay_ms: Option<u64>,
    },
    /// Kill the process; unsynced writes are lost.
    Crash {
        node: String,
    },
    /// Kill (if up) and start from durable state.
    Restart {
        node: String,
    },
    /// A clean shutdown.
    Stop {
        node: String,
    },
    /// Start a down node from durable state.
    Start {
        node: String,
    },
    ArmFailPoint {
        node: String,
        point: String,
        fault: FaultAction,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        probability: Option<f64>,
        /// Not an error when it never fires.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        optional: bool,
    },
    ClearFailPoint {
        node: String,
        point: String,
    },
    /// Wake the tasks stalled on a fail point "until release".
    ReleaseFailPoint {
        node: String,
        point: String,
    },
}

impl Action {
    /// The kind of action as the coverage ledger counts it (`crash`, `partition`,
    /// `failpoint`, ...): a step kind's name.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Client { .. } => "client",
            Action::TransferLeader { .. } => "transfer_leader",
            Action::Partition { .. } => "partition",
            Action::PartitionOneWay { .. } => "oneway",
            Action::Heal => "heal",
            Action::Hold { .. } => "hold",
            Action::Release { .. } => "release",
            Action::Latency { .. } => "latency",
            Action::Crash { .. } => "crash",
            Action::Restart { .. } => "restart",
            Action::Stop { .. } => "stop",
            Action::Start { .. } => "start",
            Action::ArmFailPoint { .. } => "failpoint",
            Action::ClearFailPoint { .. } => "clear_failpoint",
            Action::ReleaseFailPoint { .. } => "release_failpoint",
        }
    }

    /// The node the action is about, for the trail event's `node` (network
    /// actions are about links: none).
    pub fn node(&self) -> Option<&str> {
        match self {
            Action::Client { node, .. }
            | Action::Crash { node }
            | Action::Restart { node }
            | Action::Stop { node }
            | Action::Start { node }
            | Action::ArmFailPoint { node, .. }
            | Action::ClearFailPoint { node, .. }
            | Action::ReleaseFailPoint { node, .. } => Some(node),
            Action::TransferLeader { from, .. } => Some(from),
            Action::Partition { .. }
            | Action::PartitionOneWay { .. }
            | Action::Heal
            | Action::Hold { .. }
            | Action::Release { .. }
            | Action::Latency { .. } => None,
        }
    }

    /// Every node the action names (to check an edited action against a cluster).
    pub fn nodes(&self) -> Vec<&str> {
        match self {
            Action::Client { node, .. }
            | Action::Crash { node }
            | Action::Restart { node }
            | Action::Stop { node }
            | Action::Start { node }
            | Action::ArmFailPoint { node, .. }
            | Action::ClearFailPoint { node, .. }
            | Action::ReleaseFailPoint { node, .. } => vec![node],
            Action::TransferLeader { from, to } => vec![from, to],
            Action::Partition { groups } => groups.iter().flatten().map(String::as_str).collect(),
            Action::PartitionOneWay { from, to } => std::iter::once(from)
                .chain(to)
                .map(String::as_str)
                .collect(),
            Action::Heal => Vec::new(),
            Action::Hold { between }
            | Action::Release { between }
            | Action::Latency { between, .. } => between.iter().map(String::as_str).collect(),
        }
    }

    /// The action as a scenario step with every target resolved (`{"crash": "n1"}`):
    /// what `faultline shrink` writes. Replaying the step performs this action
    /// (a transfer is asked of whoever leads when the step runs).
    pub fn to_step(&self) -> Value {
        match self {
            Action::Client { node, op } => {
                let mut body = op.op.clone();
                if let Value::Object(map) = &mut body {
                    map.insert("on".into(), json!(node));
                    map.insert("wait".into(), json!(false));
                }
                json!({ "client": body })
            }
            Action::TransferLeader { to, .. } => json!({ "transfer_leader": { "to": to } }),
            Action::Partition { groups } => json!({ "partition": { "groups": groups } }),
            Action::PartitionOneWay { from, to } => {
                json!({ "partition": { "from": from, "to": to } })
            }
            Action::Heal => json!({ "heal": "all" }),
            Action::Hold { between } => json!({ "hold": { "between": between } }),
            Action::Release { between } => json!({ "release": { "between": between } }),
            Action::Latency { between, delay_ms } => {
                let delay = match delay_ms {
                    Some(ms) => fmt_duration(Duration::from_millis(*ms)),
                    None => "default".into(),
                };
                json!({ "latency": { "between": between, "delay": delay } })
            }
            Action::Crash { node } => json!({ "crash": node }),
            Action::Restart { node } => json!({ "restart": node }),
            Action::Stop { node } => json!({ "stop": node }),
            Action::Start { node } => json!({ "start": node }),
            Action::ArmFailPoint {
                node,
                point,
                fault,
                count,
                probability,
                optional,
            } => {
                let action = match fault {
                    FaultAction::Error(kind) => json!({ "error": kind }),
                    FaultAction::Panic => json!("panic"),
                    FaultAction::Stall(d) => json!({ "stall": fmt_duration(*d) }),
                    FaultAction::StallUntilRelease => json!({ "stall": "release" }),
                };
                let mut body = json!({ "node": node, "point": point, "action": action });
                if let Some(count) = count {
                    body["count"] = json!(count);
                }
                if let Some(p) = probability {
                    body["probability"] = json!(p);
                }
                if *optional {
                    body["optional"] = json!(true);
                }
                json!({ "failpoint": body })
            }
            Action::ClearFailPoint { node, point } => {
                json!({ "clear_failpoint": { "node": node, "point": point } })
            }
            Action::ReleaseFailPoint { node, point } => {
                json!({ "release": { "node": node, "failpoint": point } })
            }
        }
    }
}

/// An action at its simulated time, as a trail replays it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    pub t_ms: u64,
    pub action: Action,
    /// The trail's line for it (for people reading a shrunk scenario).
    pub detail: String,
}

/// What an armed fail point does when it fires (serialised as `{"error":
/// "disk_full"}`, `"panic"`, `{"stall_ms": 3000}`, `"stall_until_release"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    Error(String),
    Panic,
    #[serde(rename = "stall_ms")]
    Stall(#[serde(with = "crate::base::duration::ms")] Duration),
    StallUntilRelease,
}

impl fmt::Display for FaultAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultAction::Error(kind) => write!(f, "error {kind}"),
            FaultAction::Panic => write!(f, "panic"),
            FaultAction::Stall(d) => write!(f, "stall {}", fmt_duration(*d)),
            FaultAction::StallUntilRelease => write!(f, "stall until release"),
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// "1 held message" / "3 held messages": what a crash took with it.
fn held_messages(n: usize) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{n} held message{s} it had sent")
}

fn lost_held_note(n: usize) -> String {
    format!("; {} lost", held_messages(n))
}

/// What performing an action did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionResult {
    /// Done as asked.
    Done,
    /// The op or command went to the node's inbox as op `op`.
    Sent { op: u64 },
    /// The node was down: a client op fails at once, a crash or stop does nothing.
    NodeDown,
    /// The node was up already: a start does nothing.
    NodeUp,
    /// The node is up but its process has not opened its inbox yet.
    NotAccepting,
    /// A heal repaired this many cut links.
    Healed { links: usize },
    /// A restart killed the node first (`was_up`) or only started it. A crash
    /// loses what the node had sent that a held link had not delivered yet
    /// (`lost_held` messages): those sat in the crashed machine's send buffers.
    Restarted {
        was_up: bool,
        #[serde(default, skip_serializing_if = "is_zero")]
        lost_held: usize,
    },
    /// A crash of an up node that lost `lost_held` (at least one) messages it
    /// had sent over a held link (a crash that lost none is `done`).
    Crashed { lost_held: usize },
    /// A release of held messages: whether anything was held.
    Released { held: bool },
    /// A clear: whether the point was armed.
    Cleared { armed: bool },
    /// A fail-point release woke this many stalled tasks.
    Woken { tasks: usize },
}

impl ActionResult {
    /// Whether the action changed anything: only those replay as steps.
    pub fn took_effect(&self) -> bool {
        match self {
            ActionResult::NodeDown | ActionResult::NodeUp | ActionResult::NotAccepting => false,
            ActionResult::Done
            | ActionResult::Sent { .. }
            | ActionResult::Healed { .. }
            | ActionResult::Restarted { .. }
            | ActionResult::Crashed { .. }
            | ActionResult::Released { .. }
            | ActionResult::Cleared { .. }
            | ActionResult::Woken { .. } => true,
        }
    }
}

fn not_accepting(f: &mut fmt::Formatter<'_>, result: &ActionResult) -> fmt::Result {
    if *result == ActionResult::NotAccepting {
        write!(f, " -> error node not accepting commands")?;
    }
    Ok(())
}

fn crash_text(f: &mut fmt::Formatter<'_>, result: &ActionResult) -> fmt::Result {
    write!(f, "crash (unsynced writes lost")?;
    if let ActionResult::Crashed { lost_held } = result {
        write!(f, "{}", lost_held_note(*lost_held))?;
    }
    write!(f, ")")
}

fn restart_text(f: &mut fmt::Formatter<'_>, result: &ActionResult) -> fmt::Result {
    if let ActionResult::Restarted { was_up: false, .. } = result {
        return write!(f, "restart: start from durable state (was down)");
    }
    write!(f, "restart: crash")?;
    if let ActionResult::Restarted {
        lost_held: lost @ 1..,
        ..
    } = result
    {
        write!(f, " ({} lost)", held_messages(*lost))?;
    }
    write!(f, ", then start from durable state")
}

/// An action as the trail records it: what was done and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Acted {
    pub action: Action,
    pub result: ActionResult,
    /// The chaos schedule's entry this action begins or ends (`None`: a
    /// scripted step's, or the heal phase's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<u32>,
}

impl fmt::Display for Acted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let result = &self.result;
        match &self.action {
            Action::Client { op, .. } => {
                write!(f, "{}", op.summary)?;
                if *result == ActionResult::NodeDown {
                    write!(f, " -> error node down")?;
                }
                not_accepting(f, result)
            }
            Action::TransferLeader { from, to } => {
                write!(f, "transfer leadership {from} -> {to}")?;
                not_accepting(f, result)
            }
            Action::Partition { groups } => {
                let shown: Vec<String> = groups.iter().map(|g| g.join(",")).collect();
                write!(f, "partition {}", shown.join(" | "))
            }
            Action::PartitionOneWay { from, to } => {
                write!(f, "partition {from} -/-> {}", to.join(","))
            }
            Action::Heal => {
                let links = if let ActionResult::Healed { links } = result {
                    *links
                } else {
                    0
                };
                write!(f, "heal: repaired {links} cut link(s)")
            }
            Action::Hold { between: [a, b] } => write!(f, "hold messages between {a} and {b}"),
            Action::Release { between: [a, b] } => {
                write!(f, "release messages between {a} and {b}")
            }
            Action::Latency {
                between: [a, b],
                delay_ms,
            } => match delay_ms {
                Some(ms) => write!(
                    f,
                    "latency {} between {a} and {b}",
                    fmt_duration(Duration::from_millis(*ms))
                ),
                None => write!(f, "latency back to default between {a} and {b}"),
            },
            Action::Crash { .. } if *result == ActionResult::NodeDown => {
                write!(f, "crash: already down")
            }
            Action::Crash { .. } => crash_text(f, result),
            Action::Restart { .. } => restart_text(f, result),
            Action::Stop { .. } if *result == ActionResult::NodeDown => {
                write!(f, "stop: already down")
            }
            Action::Stop { .. } => write!(f, "stop: clean shutdown requested"),
            Action::Start { .. } if *result == ActionResult::NodeUp => {
                write!(f, "start: already up")
            }
            Action::Start { .. } => write!(f, "start from durable state"),
            Action::ArmFailPoint {
                point,
                fault,
                count,
                probability,
                ..
            } => {
                write!(f, "{point}: {fault}")?;
                if let Some(count) = count {
                    write!(f, ", {count} time(s)")?;
                }
                match probability {
                    Some(p) => write!(f, ", p={p}"),
                    None => Ok(()),
                }
            }
            Action::ClearFailPoint { point, .. }
                if *result == (ActionResult::Cleared { armed: false }) =>
            {
                write!(f, "{point}: was not armed")
            }
            Action::ClearFailPoint { point, .. } => write!(f, "{point}: cleared"),
            Action::ReleaseFailPoint { point, .. } => {
                let tasks = if let ActionResult::Woken { tasks } = result {
                    *tasks
                } else {
                    0
                };
                write!(f, "{point}: released {tasks} stalled task(s)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::trail::Kind;

    fn op() -> ParsedOp {
        ParsedOp {
            op: json!({"op": "put", "key": "a", "value": "1"}),
            summary: "put a=1".into(),
        }
    }

    #[test]
    fn steps_read_as_scenario_steps() {
        let client = Action::Client {
            node: "n1".into(),
            op: op(),
        };
        assert_eq!(
            client.to_step(),
            json!({"client": {"op": "put", "key": "a", "value": "1", "on": "n1", "wait": false}})
        );
        let arm = Action::ArmFailPoint {
            node: "n2".into(),
            point: "apply".into(),
            fault: FaultAction::Stall(Duration::from_millis(1500)),
            count: Some(2),
            probability: None,
            optional: true,
        };
        assert_eq!(
            arm.to_step(),
            json!({"failpoint": {"node": "n2", "point": "apply", "action": {"stall": "1500ms"}, "count": 2, "optional": true}})
        );
        let latency = Action::Latency {
            between: ["n1".into(), "n3".into()],
            delay_ms: None,
        };
        assert_eq!(
            latency.to_step(),
            json!({"latency": {"between": ["n1", "n3"], "delay": "default"}})
        );
    }

    #[test]
    fn an_action_round_trips_through_its_serialised_form() {
        let actions = vec![
            Action::Client {
                node: "n1".into(),
                op: op(),
            },
            Action::Partition {
                groups: vec![vec!["n1".into()], vec!["n2".into(), "n3".into()]],
            },
            Action::Heal,
            Action::ArmFailPoint {
                node: "n2".into(),
                point: "propose".into(),
                fault: FaultAction::Error("disk_full".into()),
                count: None,
                probability: Some(0.5),
                optional: false,
            },
        ];
        for action in actions {
            let text = serde_json::to_string(&action).unwrap();
            let back: Action = serde_json::from_str(&text).unwrap();
            assert_eq!(back, action, "{text}");
        }
    }

    #[test]
    fn results_decide_kind_text_and_replay() {
        let sent = Acted {
            action: Action::Client {
                node: "n1".into(),
                op: op(),
            },
            result: ActionResult::Sent { op: 4 },
            fault: None,
        };
        assert_eq!(
            (Kind::of_action(&sent), sent.to_string()),
            (Kind::OpInvoke, "put a=1".into())
        );
        let down = Acted {
            result: ActionResult::NodeDown,
            ..sent.clone()
        };
        assert_eq!(Kind::of_action(&down), Kind::OpError);
        assert_eq!(down.to_string(), "put a=1 -> error node down");
        assert!(!down.result.took_effect());
        let restart = Acted {
            action: Action::Restart { node: "n2".into() },
            result: ActionResult::Restarted {
                was_up: false,
                lost_held: 0,
            },
            fault: None,
        };
        assert_eq!(
            restart.to_string(),
            "restart: start from durable state (was down)"
        );
    }
}
