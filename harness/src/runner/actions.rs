//! Performing [`Action`]s: the one place an action takes effect on the cluster.
//! Scripted steps and the chaos nemesis both come here, and each action lands on
//! the trail as one event with its result, so any trail can be replayed, shrunk
//! or edited as a list of actions.

use super::recorder::SCRIPT;
use super::{Driver, Halt};
use crate::action::{Acted, Action, ActionResult};
use crate::scenario::{Condition, Cut, NodeId};
use crate::trail::{Data, GiveUp};
use nodes::api::{Command, FailPointInfo, OpResult};
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
    /// The index of a node an action names. Actions come from the scenario's
    /// own (validated) steps and nemesis; an edited action is checked with
    /// [`Action::nodes`] before it is performed.
    fn id(&self, name: &str) -> NodeId {
        self.names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("an action names `{name}`, which is not a node"))
    }

    fn point(&self, name: &str) -> &'static FailPointInfo {
        self.scenario
            .model
            .info()
            .fail_point(name)
            .unwrap_or_else(|| panic!("an action names fail point `{name}`, which is not declared"))
    }

    /// Perform one action and record it. Nothing here steps the simulation: the
    /// waits that belong to a step (a client's answer, a transfer's new leader, a
    /// clean stop) are the callers'.
    pub(crate) fn perform(&mut self, action: Action) -> ActionResult {
        let result = self.take_effect(&action);
        let node = action.node().map(str::to_string);
        let acted = Acted { action, result };
        let result = acted.result.clone();
        self.state
            .borrow_mut()
            .harness_event(node.as_deref(), Data::Action(acted));
        result
    }

    fn take_effect(&mut self, action: &Action) -> ActionResult {
        match action {
            Action::Client { node, op } => {
                let node = self.id(node);
                if !self.up(node) {
                    return ActionResult::NodeDown;
                }
                let payload = op.op.clone();
                self.send(node, op.summary.clone(), false, |id| Command::Op {
                    id,
                    op: payload,
                })
            }
            Action::TransferLeader { from, to } => {
                let (leader, to) = (self.id(from), to.clone());
                let summary = format!("transfer leadership {from} -> {to}");
                self.send(leader, summary, true, |id| Command::TransferLeader {
                    id,
                    to,
                })
            }
            Action::Partition { groups } => {
                let groups: Vec<Vec<NodeId>> = groups
                    .iter()
                    .map(|g| g.iter().map(|n| self.id(n)).collect())
                    .collect();
                self.cut(Cut::between_groups(&groups));
                ActionResult::Done
            }
            Action::PartitionOneWay { from, to } => {
                let from = self.id(from);
                let cuts = to
                    .iter()
                    .map(|t| Cut {
                        from,
                        to: self.id(t),
                        oneway: true,
                    })
                    .collect();
                self.cut(cuts);
                ActionResult::Done
            }
            Action::Heal => {
                let names = self.names.clone();
                let links = self.net.repair_all(&self.sim, &names);
                ActionResult::Healed { links }
            }
            Action::Hold { between: [a, b] } => {
                let (a, b) = (self.id(a), self.id(b));
                let names = self.names.clone();
                self.net.hold(&self.sim, &names, a, b);
                ActionResult::Done
            }
            Action::Release { between: [a, b] } => {
                let (a, b) = (self.id(a), self.id(b));
                let names = self.names.clone();
                let held = self.net.release(&self.sim, &names, a, b);
                ActionResult::Released { held }
            }
            Action::Latency {
                between: [a, b],
                delay_ms,
            } => {
                let (a, b) = (self.id(a), self.id(b));
                let names = self.names.clone();
                match delay_ms {
                    Some(ms) => {
                        let delay = Duration::from_millis(*ms);
                        self.net.set_latency(&self.sim, &names, a, b, delay);
                    }
                    None => {
                        let settings = &self.scenario.settings;
                        let (min, max) = (settings.latency_min, settings.latency_max);
                        self.net.reset_latency(&self.sim, &names, a, b, min, max);
                    }
                }
                ActionResult::Done
            }
            Action::Crash { node } => {
                let node = self.id(node);
                if !self.up(node) {
                    return ActionResult::NodeDown;
                }
                self.kill(node);
                ActionResult::Done
            }
            Action::Restart { node } => {
                let node = self.id(node);
                let was_up = self.up(node);
                if was_up {
                    self.kill(node);
                }
                self.boot(node);
                ActionResult::Restarted { was_up }
            }
            Action::Stop { node } => {
                let node = self.id(node);
                if !self.up(node) {
                    return ActionResult::NodeDown;
                }
                let state = self.state.borrow();
                let sent = state.nodes[node]
                    .inbox
                    .as_ref()
                    .is_some_and(|i| i.send(Command::Stop).is_ok());
                if sent {
                    ActionResult::Done
                } else {
                    ActionResult::NotAccepting
                }
            }
            Action::Start { node } => {
                let node = self.id(node);
                if self.up(node) {
                    return ActionResult::NodeUp;
                }
                self.boot(node);
                ActionResult::Done
            }
            Action::ArmFailPoint {
                node,
                point,
                fault,
                count,
                probability,
                optional,
            } => {
                let point = self.point(point);
                let at = self.at;
                self.state.borrow_mut().faults.arm(
                    node,
                    point.name,
                    fault.clone(),
                    *count,
                    *probability,
                    *optional,
                    at,
                );
                ActionResult::Done
            }
            Action::ClearFailPoint { node, point } => {
                let point = self.point(point);
                let armed = self.state.borrow_mut().faults.clear(node, point.name);
                ActionResult::Cleared { armed }
            }
            Action::ReleaseFailPoint { node, point } => {
                let point = self.point(point);
                let tasks = self.state.borrow_mut().faults.release(node, point.name);
                ActionResult::Woken { tasks }
            }
        }
    }

    fn cut(&mut self, cuts: Vec<Cut>) {
        let names = self.names.clone();
        for cut in cuts {
            self.net.cut(&self.sim, &names, cut);
        }
    }

    /// Put a command in a node's inbox as a new op; `NotAccepting` when the
    /// process has no inbox open.
    fn send(
        &mut self,
        node: NodeId,
        summary: String,
        admin: bool,
        make: impl FnOnce(u64) -> Command,
    ) -> ActionResult {
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
            .is_some_and(|inbox| inbox.send(make(id)).is_ok());
        if sent {
            ActionResult::Sent { op: id }
        } else {
            // Nobody will answer it: the client knows at once.
            state.open.remove(&id);
            if let Some(op) = state.ops.get_mut(&id) {
                op.result = Some(OpResult::error("node not accepting commands"));
                op.completed_ms = Some(t_ms);
            }
            ActionResult::NotAccepting
        }
    }

    /// Send a client op; with `wait`, step until its answer or the timeout and
    /// return the answer (a timeout or a down node is an error result).
    pub(crate) fn act_client(
        &mut self,
        action: Action,
        wait: Option<Duration>,
    ) -> Result<Option<OpResult>, Halt> {
        Ok(match self.act_client_as(SCRIPT, action, wait)? {
            Sent::Refused(result) | Sent::Answered(result) => Some(result),
            Sent::Pending(_) => None,
        })
    }

    /// [`Driver::act_client`] for one client of the run (the script, a
    /// workload's client): the op goes on that client's lane of the history.
    pub(crate) fn act_client_as(
        &mut self,
        client: &str,
        action: Action,
        wait: Option<Duration>,
    ) -> Result<Sent, Halt> {
        let sent_to = match &action {
            Action::Client { node, op } => Some((node.clone(), op.clone())),
            _ => None,
        };
        let now = self.sim.elapsed();
        let result = self.perform(action);
        let ActionResult::Sent { op: id } = result else {
            let why = if result == ActionResult::NodeDown {
                "node down"
            } else {
                "node not accepting commands"
            };
            if let Some((node, op)) = &sent_to {
                let mut state = self.state.borrow_mut();
                state.history.refused(client, Some(node), op, why, now);
            }
            return Ok(Sent::Refused(OpResult::error(why)));
        };
        if let Some((node, op)) = &sent_to {
            let mut state = self.state.borrow_mut();
            let incarnation = state
                .node_index(node)
                .map(|i| state.nodes[i].incarnation)
                .unwrap_or(0);
            state.history.invoke(client, id, node, incarnation, op, now);
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
                let why = GiveUp::StepTimeout {
                    timeout_ms: timeout.as_millis() as u64,
                };
                self.state.borrow_mut().give_up(id, why);
                OpResult::error("timeout")
            }
        }))
    }

    /// Ask `leader` to hand leadership to `to`; wait until `to` leads. Returns
    /// whether it did within `timeout`.
    pub(crate) fn act_transfer(
        &mut self,
        leader: NodeId,
        to: NodeId,
        timeout: Duration,
    ) -> Result<bool, Halt> {
        let action = Action::TransferLeader {
            from: self.names[leader].clone(),
            to: self.names[to].clone(),
        };
        if !matches!(self.perform(action), ActionResult::Sent { .. }) {
            return Ok(false);
        }
        self.run_until(&Condition::Leader(Some(to)), timeout)
    }

    /// Clean shutdown: ask, wait for the node to say it stopped (or kill it after
    /// the stop timeout). Returns false if the node was already down.
    pub(crate) fn act_stop(&mut self, node: NodeId) -> Result<bool, Halt> {
        let action = Action::Stop {
            node: self.names[node].clone(),
        };
        let sent = match self.perform(action) {
            ActionResult::NodeDown => return Ok(false),
            result => result == ActionResult::Done,
        };
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
        let stopped = Data::Stopped {
            clean,
            timeout_ms: STOP_TIMEOUT.as_millis() as u64,
        };
        self.event(Some(node), stopped);
        Ok(true)
    }
}
