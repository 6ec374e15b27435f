//! Actions on the cluster, with every target already resolved. Scripted steps and
//! the chaos nemesis both act through these, and each records one trail event that
//! carries the action as a step (`step` payload), so any trail can be replayed or
//! shrunk as a scenario.

use super::interpret::Partitioned;
use super::recorder::SCRIPT;
use super::{Driver, Halt};
use crate::duration::format as fmt_duration;
use crate::faults::describe;
use crate::scenario::{ArmStep, Condition, FaultAction};
use crate::trail::Kind;
use crate::yaml::Loc;
use nodes::api::{Command, FailPointInfo, OpResult, ParsedOp};
use serde_json::{json, Value};
use std::time::Duration;

/// What became of a client op.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sent {
    /// It was never sent (its node was down): it did not take effect.
    Refused(OpResult),
    /// Sent without waiting: op `id` is in flight.
    Pending(u64),
    /// Sent and waited for: the answer, or a timeout.
    Answered(OpResult),
}

/// How long a clean `stop` may take before the node is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

impl Driver<'_> {
    /// Record an action: one trail event with its replayable step.
    fn action(&mut self, node: Option<usize>, kind: Kind, detail: impl Into<String>, step: Value) {
        let name = node.map(|n| self.names[n].clone());
        self.state
            .borrow_mut()
            .harness_action(name.as_deref(), kind, detail, Some(step));
    }

    /// Send a command to a node's inbox; returns the op id.
    pub(crate) fn send(
        &mut self,
        node: usize,
        summary: String,
        admin: bool,
        make: impl FnOnce(u64) -> Command,
    ) -> Option<u64> {
        let id = self.next_op;
        self.next_op += 1;
        let t_ms = self.sim.elapsed().as_millis() as u64;
        let mut state = self.state.borrow_mut();
        let record = super::env::OpRecord {
            id,
            node: self.names[node].clone(),
            summary,
            invoked_ms: t_ms,
            result: None,
            completed_ms: None,
            timed_out: false,
            admin,
        };
        state.ops.insert(id, record);
        state.open.insert(id);
        let sent = state.nodes[node]
            .inbox
            .as_ref()
            .map(|inbox| inbox.send(make(id)).is_ok())
            .unwrap_or(false);
        sent.then_some(id)
    }

    /// Send a client op to `node`; with `wait`, step until its answer or the timeout
    /// and return the answer (a timeout or a down node is an error result).
    pub(crate) fn act_client(
        &mut self,
        node: usize,
        op: &ParsedOp,
        wait: Option<Duration>,
    ) -> Result<Option<OpResult>, Halt> {
        Ok(match self.act_client_as(SCRIPT, node, op, wait)? {
            Sent::Refused(result) | Sent::Answered(result) => Some(result),
            Sent::Pending(_) => None,
        })
    }

    /// [`Driver::act_client`] for one client of the run (the script, a workload's
    /// client): the op goes on that client's lane of the history.
    pub(crate) fn act_client_as(
        &mut self,
        client: &str,
        node: usize,
        op: &ParsedOp,
        wait: Option<Duration>,
    ) -> Result<Sent, Halt> {
        let summary = op.summary.clone();
        let mut step = op.op.clone();
        if let Value::Object(map) = &mut step {
            map.insert("on".into(), json!(self.names[node]));
            map.insert("wait".into(), json!(false));
        }
        let step = json!({ "client": step });
        let now = self.sim.elapsed();
        if !self.up(node) {
            self.action(
                Some(node),
                Kind::OpError,
                format!("{summary} -> error node down"),
                step,
            );
            let name = self.names[node].clone();
            self.state
                .borrow_mut()
                .history
                .refused(client, Some(&name), op, "node down", now);
            return Ok(Sent::Refused(OpResult::error("node down")));
        }
        self.action(Some(node), Kind::OpInvoke, summary.clone(), step);
        let payload = op.op.clone();
        let Some(id) = self.send(node, summary.clone(), false, |id| Command::Op {
            id,
            op: payload,
        }) else {
            self.event(
                Some(node),
                Kind::OpError,
                format!("{summary} -> error node not accepting commands"),
            );
            let name = self.names[node].clone();
            let why = "node not accepting commands";
            self.state
                .borrow_mut()
                .history
                .refused(client, Some(&name), op, why, now);
            return Ok(Sent::Refused(OpResult::error(why)));
        };
        {
            let mut state = self.state.borrow_mut();
            let incarnation = state.nodes[node].incarnation;
            let name = self.names[node].clone();
            state
                .history
                .invoke(client, id, &name, incarnation, op, now);
        }
        let Some(timeout) = wait else {
            return Ok(Sent::Pending(id));
        };
        let deadline = self.sim.elapsed() + timeout;
        while self.state.borrow().ops[&id].result.is_none() && self.sim.elapsed() < deadline {
            self.advance()?;
        }
        let result = self.state.borrow().ops[&id].result.clone();
        Ok(Sent::Answered(match result {
            Some(result) => result,
            None => {
                let why = format!("no answer within {}", fmt_duration(timeout));
                self.state.borrow_mut().give_up(id, &why);
                OpResult::error("timeout")
            }
        }))
    }

    /// Ask `leader` to hand leadership to `to`; wait until `to` leads. Returns
    /// whether it did within `timeout`.
    pub(crate) fn act_transfer(
        &mut self,
        leader: usize,
        to: usize,
        timeout: Duration,
    ) -> Result<bool, Halt> {
        let target = self.names[to].clone();
        let summary = format!("transfer leadership {} -> {target}", self.names[leader]);
        let step = json!({ "transfer_leader": { "to": target } });
        self.action(Some(leader), Kind::Transfer, summary.clone(), step);
        let to_name = target.clone();
        if self
            .send(leader, summary, true, |id| Command::TransferLeader {
                id,
                to: to_name,
            })
            .is_none()
        {
            return Ok(false);
        }
        self.run_until(&Condition::Leader(Some(to)), timeout)
    }

    pub(crate) fn act_partition(&mut self, partition: &Partitioned) {
        let names = self.names.clone();
        for cut in partition.cuts() {
            self.net.cut(&self.sim, &names, cut);
        }
        let (detail, step) = match partition {
            Partitioned::Groups(groups) => {
                let named: Vec<Vec<&str>> = groups
                    .iter()
                    .map(|g| g.iter().map(|&n| names[n].as_str()).collect())
                    .collect();
                let shown: Vec<String> = named.iter().map(|g| g.join(",")).collect();
                (
                    format!("partition {}", shown.join(" | ")),
                    json!({ "partition": { "groups": named } }),
                )
            }
            Partitioned::OneWay { from, to } => {
                let targets: Vec<&str> = to.iter().map(|&n| names[n].as_str()).collect();
                let detail = format!("partition {} -/-> {}", names[*from], targets.join(","));
                (
                    detail,
                    json!({ "partition": { "from": names[*from], "to": targets } }),
                )
            }
        };
        self.action(None, Kind::Network, detail, step);
    }

    pub(crate) fn act_heal(&mut self) {
        let names = self.names.clone();
        let repaired = self.net.repair_all(&self.sim, &names);
        self.action(
            None,
            Kind::Network,
            format!("heal: repaired {repaired} cut link(s)"),
            json!({ "heal": "all" }),
        );
    }

    pub(crate) fn act_hold(&mut self, a: usize, b: usize) {
        let names = self.names.clone();
        self.net.hold(&self.sim, &names, a, b);
        let step = json!({ "hold": { "between": [names[a], names[b]] } });
        self.action(
            None,
            Kind::Network,
            format!("hold messages between {} and {}", names[a], names[b]),
            step,
        );
    }

    /// Release held messages; returns whether anything was held.
    pub(crate) fn act_release(&mut self, a: usize, b: usize) -> bool {
        let names = self.names.clone();
        let held = self.net.release(&self.sim, &names, a, b);
        let step = json!({ "release": { "between": [names[a], names[b]] } });
        self.action(
            None,
            Kind::Network,
            format!("release messages between {} and {}", names[a], names[b]),
            step,
        );
        held
    }

    /// Fix a link's latency, or (`None`) put it back on the scenario's range.
    pub(crate) fn act_latency(&mut self, a: usize, b: usize, delay: Option<Duration>) {
        let names = self.names.clone();
        let settings = &self.scenario.settings;
        let (detail, text) = match delay {
            Some(d) => {
                self.net.set_latency(&self.sim, &names, a, b, d);
                (
                    format!(
                        "latency {} between {} and {}",
                        fmt_duration(d),
                        names[a],
                        names[b]
                    ),
                    fmt_duration(d),
                )
            }
            None => {
                self.net.reset_latency(
                    &self.sim,
                    &names,
                    a,
                    b,
                    settings.latency_min,
                    settings.latency_max,
                );
                (
                    format!(
                        "latency back to default between {} and {}",
                        names[a], names[b]
                    ),
                    "default".to_string(),
                )
            }
        };
        let step = json!({ "latency": { "between": [names[a], names[b]], "delay": text } });
        self.action(None, Kind::Network, detail, step);
    }

    /// Kill a node's process; returns false (and records nothing but a note) if it was down.
    pub(crate) fn act_crash(&mut self, node: usize) -> bool {
        if !self.up(node) {
            self.event(Some(node), Kind::Crash, "crash: already down");
            return false;
        }
        self.kill(node);
        let step = json!({ "crash": self.names[node] });
        self.action(
            Some(node),
            Kind::Crash,
            "crash (unsynced writes lost)",
            step,
        );
        true
    }

    pub(crate) fn act_restart(&mut self, node: usize) {
        let was_up = self.up(node);
        if was_up {
            self.kill(node);
        }
        self.boot(node);
        let detail = if was_up {
            "restart: crash, then start from durable state"
        } else {
            "restart: start from durable state (was down)"
        };
        let step = json!({ "restart": self.names[node] });
        self.action(Some(node), Kind::Restart, detail, step);
    }

    /// Clean shutdown; returns false if the node was already down.
    pub(crate) fn act_stop(&mut self, node: usize) -> Result<bool, Halt> {
        if !self.up(node) {
            return Ok(false);
        }
        let step = json!({ "stop": self.names[node] });
        self.action(
            Some(node),
            Kind::Stop,
            "stop: clean shutdown requested",
            step,
        );
        let sent = self.state.borrow().nodes[node]
            .inbox
            .as_ref()
            .map(|i| i.send(Command::Stop).is_ok())
            .unwrap_or(false);
        let deadline = self.sim.elapsed() + STOP_TIMEOUT;
        while sent
            && !self.state.borrow().nodes[node].stopped
            && self.up(node)
            && self.sim.elapsed() < deadline
        {
            self.advance()?;
        }
        let clean = self.state.borrow().nodes[node].stopped;
        if self.up(node) {
            self.kill(node);
        }
        let detail = if clean {
            "stopped cleanly"
        } else {
            "did not stop cleanly within 10s; killed"
        };
        self.event(Some(node), Kind::Stop, detail);
        Ok(true)
    }

    /// Start a down node; returns false if it was up.
    pub(crate) fn act_start(&mut self, node: usize) -> bool {
        if self.up(node) {
            return false;
        }
        self.boot(node);
        let step = json!({ "start": self.names[node] });
        self.action(Some(node), Kind::Start, "start from durable state", step);
        true
    }

    pub(crate) fn act_arm(&mut self, node_id: usize, arm: &ArmStep, loc: Loc) {
        let node = self.names[node_id].clone();
        let mut detail = format!("{}: {}", arm.point.name, describe(&arm.action));
        let action = match &arm.action {
            FaultAction::Error(kind) => json!({ "error": kind }),
            FaultAction::Panic => json!("panic"),
            FaultAction::Stall(d) => json!({ "stall": fmt_duration(*d) }),
            FaultAction::StallUntilRelease => json!({ "stall": "release" }),
        };
        let mut step = json!({ "node": node, "point": arm.point.name, "action": action });
        if let Some(count) = arm.count {
            detail.push_str(&format!(", {count} time(s)"));
            step["count"] = json!(count);
        }
        if let Some(p) = arm.probability {
            detail.push_str(&format!(", p={p}"));
            step["probability"] = json!(p);
        }
        if arm.optional {
            step["optional"] = json!(true);
        }
        {
            let faults = &mut self.state.borrow_mut().faults;
            faults.arm(
                &node,
                arm.point.name,
                arm.action.clone(),
                arm.count,
                arm.probability,
                arm.optional,
                loc,
            );
        }
        self.action(
            Some(node_id),
            Kind::FailPointArm,
            detail,
            json!({ "failpoint": step }),
        );
    }

    pub(crate) fn act_clear_failpoint(&mut self, node: usize, point: &'static FailPointInfo) {
        let cleared = self
            .state
            .borrow_mut()
            .faults
            .clear(&self.names[node], point.name);
        let detail = format!(
            "{}: {}",
            point.name,
            if cleared { "cleared" } else { "was not armed" }
        );
        let step = json!({ "clear_failpoint": { "node": self.names[node], "point": point.name } });
        self.action(Some(node), Kind::FailPointClear, detail, step);
    }

    /// Wake tasks stalled on a point; returns how many there were.
    pub(crate) fn act_release_failpoint(
        &mut self,
        node: usize,
        point: &'static FailPointInfo,
    ) -> usize {
        let woken = self
            .state
            .borrow_mut()
            .faults
            .release(&self.names[node], point.name);
        let step = json!({ "release": { "node": self.names[node], "failpoint": point.name } });
        self.action(
            Some(node),
            Kind::FailPointRelease,
            format!("{}: released {woken} stalled task(s)", point.name),
            step,
        );
        woken
    }
}
