//! A chaos window as data: every fault it injects, drawn from the seed before the
//! window opens, and (when given) every op its workload sends.
//!
//! The nemesis draws the whole schedule from its own stream of the seed
//! ([`draw`]), so a fault's kind, target, time and length never depend on what
//! the cluster did: removing or moving one fault leaves every other where it
//! was, and the workload, drawn from a stream of its own, sends the same ops at
//! the same times. A target may be a role (`leader`, `follower`), resolved when
//! the fault takes effect; a fault that finds nothing to act on then is recorded
//! as such and undoes nothing.
//!
//! A schedule is written in the scenario language (each fault is a step with
//! `at:` and `for:`), so it reads like a scenario, loads with every error at
//! file:line:col (`chaos: {schedule: FILE}`), and travels in `report.json`: a
//! run can be replayed, edited and shrunk as a schedule, inside the chaos window,
//! with the same workload. Guided search and `faultline shrink` do exactly that.

pub mod draw;
pub mod edit;
pub mod render;

use crate::base::action::FaultAction;
use crate::base::duration::format as fmt_duration;
use crate::lang::scenario::target::{ArmStep, Partition, Target};
use crate::lang::scenario::FaultKind;
use faultline_api::ParsedOp;
use serde_json::{json, Value};
use std::time::Duration;

/// Most faults one schedule holds (a drawn one, a loaded one, an edited one).
pub const FAULTS_MAX: usize = 10_000;
/// Most ops one schedule holds.
pub const OPS_MAX: usize = 200_000;

/// One chaos window's faults and, when they are given, its workload's ops.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// How long the window lasts: faults still in effect at its end are undone.
    pub window: Duration,
    /// In time order (equal times in the order written).
    pub faults: Vec<Planned>,
    /// The workload's ops, in time order; `None`: the workload draws them from
    /// the seed when the window opens (as every drawn schedule does).
    pub ops: Option<Vec<PlannedOp>>,
}

/// One fault of a schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// From the window's start.
    pub at: Duration,
    /// How long it lasts; `None` for an instant fault (a restart, a transfer).
    pub lasts: Option<Duration>,
    /// Decides `follower` and `any` when the fault takes effect (the n-th
    /// candidate, modulo their number), so that resolving them draws nothing
    /// from any stream.
    pub pick: u32,
    pub fault: Fault,
}

/// What a scheduled fault does: a fault step of the scenario language.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Partition(Partition),
    Hold {
        a: Target,
        b: Target,
    },
    Latency {
        a: Target,
        b: Target,
        delay: Duration,
    },
    Crash(Target),
    Restart(Target),
    Stop(Target),
    TransferLeader {
        to: Target,
    },
    FailPoint {
        node: Target,
        arm: ArmStep,
    },
}

impl Fault {
    /// The chaos fault kind (`faults:` in a chaos section; the coverage ledger's).
    pub fn kind(&self) -> &'static str {
        self.fault_kind().name()
    }

    /// Its row of the kinds' table.
    pub fn fault_kind(&self) -> FaultKind {
        match self {
            Fault::Partition(Partition::OneWay { .. }) => FaultKind::OneWay,
            Fault::Partition(Partition::Groups(_) | Partition::Isolate(_)) => FaultKind::Partition,
            Fault::Hold { .. } => FaultKind::Hold,
            Fault::Latency { .. } => FaultKind::Latency,
            Fault::Crash(_) => FaultKind::Crash,
            Fault::Restart(_) => FaultKind::Restart,
            Fault::Stop(_) => FaultKind::Stop,
            Fault::TransferLeader { .. } => FaultKind::TransferLeader,
            Fault::FailPoint { .. } => FaultKind::FailPoint,
        }
    }

    /// Whether it lasts until undone (else it is over once it took effect).
    pub fn lasting(&self) -> bool {
        match self {
            Fault::Partition(_)
            | Fault::Hold { .. }
            | Fault::Latency { .. }
            | Fault::Crash(_)
            | Fault::Stop(_)
            | Fault::FailPoint { .. } => true,
            Fault::Restart(_) | Fault::TransferLeader { .. } => false,
        }
    }

    /// Whether it cuts links (one cut at a time: its undo repairs every cut).
    pub fn cuts(&self) -> bool {
        matches!(self, Fault::Partition(_))
    }

    /// Every node reference it holds, for editing (retarget) and checking.
    pub fn targets_mut(&mut self) -> Vec<&mut Target> {
        match self {
            Fault::Partition(Partition::Groups(groups)) => groups.iter_mut().flatten().collect(),
            Fault::Partition(Partition::Isolate(t)) => vec![t],
            Fault::Partition(Partition::OneWay { from, to }) => {
                std::iter::once(from).chain(to.iter_mut()).collect()
            }
            Fault::Hold { a, b } | Fault::Latency { a, b, .. } => vec![a, b],
            Fault::Crash(t) | Fault::Restart(t) | Fault::Stop(t) => vec![t],
            Fault::TransferLeader { to } => vec![to],
            Fault::FailPoint { node, .. } => vec![node],
        }
    }

    /// The fault as a scenario step (`{"crash": "leader"}`), nodes by name.
    pub fn to_step(&self, names: &[String]) -> Value {
        let d = |t: &Target| json!(t.describe(names));
        let ds = |ts: &[Target]| Value::Array(ts.iter().map(d).collect());
        match self {
            Fault::Partition(Partition::Groups(groups)) => {
                let groups: Vec<Value> = groups.iter().map(|g| ds(g)).collect();
                json!({ "partition": { "groups": groups } })
            }
            Fault::Partition(Partition::Isolate(t)) => json!({ "partition": { "isolate": d(t) } }),
            Fault::Partition(Partition::OneWay { from, to }) => {
                json!({ "partition": { "from": d(from), "to": ds(to) } })
            }
            Fault::Hold { a, b } => json!({ "hold": { "between": [d(a), d(b)] } }),
            Fault::Latency { a, b, delay } => json!({
                "latency": { "between": [d(a), d(b)], "delay": fmt_duration(*delay) }
            }),
            Fault::Crash(t) => json!({ "crash": d(t) }),
            Fault::Restart(t) => json!({ "restart": d(t) }),
            Fault::Stop(t) => json!({ "stop": d(t) }),
            Fault::TransferLeader { to } => json!({ "transfer_leader": { "to": d(to) } }),
            Fault::FailPoint { node, arm } => {
                let action = match &arm.action {
                    FaultAction::Error(kind) => json!({ "error": kind }),
                    FaultAction::Panic => json!("panic"),
                    FaultAction::Stall(d) => json!({ "stall": fmt_duration(*d) }),
                    FaultAction::StallUntilRelease => json!({ "stall": "release" }),
                };
                let mut body =
                    json!({ "node": d(node), "point": arm.point.name, "action": action });
                if let Some(count) = arm.count {
                    body["count"] = json!(count);
                }
                if let Some(p) = arm.probability {
                    body["probability"] = json!(p);
                }
                json!({ "failpoint": body })
            }
        }
    }

    /// One line for people: `crash leader`, `failpoint apply on n2: stall 2s`.
    pub fn describe(&self, names: &[String]) -> String {
        let d = |t: &Target| t.describe(names);
        let ds = |ts: &[Target]| ts.iter().map(d).collect::<Vec<_>>().join(",");
        match self {
            Fault::Partition(Partition::Groups(groups)) => {
                let shown: Vec<String> = groups.iter().map(|g| ds(g)).collect();
                format!("partition {}", shown.join(" | "))
            }
            Fault::Partition(Partition::Isolate(t)) => format!("partition: isolate {}", d(t)),
            Fault::Partition(Partition::OneWay { from, to }) => {
                format!("partition {} -/-> {}", d(from), ds(to))
            }
            Fault::Hold { a, b } => format!("hold messages between {} and {}", d(a), d(b)),
            Fault::Latency { a, b, delay } => format!(
                "latency {} between {} and {}",
                fmt_duration(*delay),
                d(a),
                d(b)
            ),
            Fault::Crash(t) => format!("crash {}", d(t)),
            Fault::Restart(t) => format!("restart {}", d(t)),
            Fault::Stop(t) => format!("stop {}", d(t)),
            Fault::TransferLeader { to } => format!("transfer leadership to {}", d(to)),
            Fault::FailPoint { node, arm } => {
                let mut text = format!(
                    "failpoint {} on {}: {}",
                    arm.point.name,
                    d(node),
                    arm.action
                );
                if let Some(count) = arm.count {
                    text.push_str(&format!(", {count} time(s)"));
                }
                text
            }
        }
    }
}

impl Planned {
    /// When it ends, from the window's start (`None`: instant).
    pub fn until(&self) -> Option<Duration> {
        self.lasts.map(|l| self.at + l)
    }

    /// The entry as a schedule file writes it: `{at: 1200ms, for: 3s, crash: leader}`.
    pub fn to_json(&self, names: &[String]) -> Value {
        let mut entry = serde_json::Map::new();
        entry.insert("at".into(), json!(fmt_duration(self.at)));
        if let Some(lasts) = self.lasts {
            entry.insert("for".into(), json!(fmt_duration(lasts)));
        }
        if self.pick != 0 {
            entry.insert("pick".into(), json!(self.pick));
        }
        if let Value::Object(step) = self.fault.to_step(names) {
            entry.extend(step);
        }
        Value::Object(entry)
    }

    /// One line for people: `1.2s for 3s: crash leader`.
    pub fn describe(&self, names: &[String]) -> String {
        match self.lasts {
            Some(lasts) => format!(
                "{} for {}: {}",
                fmt_duration(self.at),
                fmt_duration(lasts),
                self.fault.describe(names)
            ),
            None => format!("{}: {}", fmt_duration(self.at), self.fault.describe(names)),
        }
    }
}

/// One op of a schedule's workload.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedOp {
    /// From the window's start.
    pub at: Duration,
    /// Where it goes (`leader`: whichever node leads when it is sent).
    pub on: Target,
    /// Decides `follower` and `any` when it is sent.
    pub pick: u32,
    pub op: ParsedOp,
}

impl PlannedOp {
    /// `{at: 150ms, on: leader, op: {op: put, key: k1, value: v3}}`.
    pub fn to_json(&self, names: &[String]) -> Value {
        let mut entry = json!({
            "at": fmt_duration(self.at),
            "on": self.on.describe(names),
            "op": self.op.op,
        });
        if self.pick != 0 {
            entry["pick"] = json!(self.pick);
        }
        entry
    }
}

impl Schedule {
    /// The schedule as a file writes it (and `report.json` holds it).
    pub fn to_json(&self, names: &[String]) -> Value {
        let faults: Vec<Value> = self.faults.iter().map(|f| f.to_json(names)).collect();
        let mut doc = json!({
            "window": fmt_duration(self.window),
            "faults": faults,
        });
        if let Some(ops) = &self.ops {
            doc["ops"] = Value::Array(ops.iter().map(|o| o.to_json(names)).collect());
        }
        doc
    }

    /// Put the faults in time order (equal times keep their order).
    pub fn sort(&mut self) {
        self.faults.sort_by_key(|f| f.at);
        if let Some(ops) = &mut self.ops {
            ops.sort_by_key(|o| o.at);
        }
    }
}
