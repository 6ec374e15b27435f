//! Performing [`Action`]s with the waits that belong to them. The nemesis applies
//! an action at once; a step's action may then wait, stepping the simulation: a
//! client step for its answer, a transfer for its new leader, a stop for the node
//! to say it stopped. (The chaos window waits for nothing: `chaos.rs`.)

use super::recorder::SCRIPT;
use super::{Driver, Halt};
use crate::base::action::{Action, ActionResult};
use crate::base::trail::{Data, GiveUp};
use crate::lang::scenario::{Condition, NodeId};
use faultline_api::OpResult;
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
    /// Apply one action now (the nemesis records it); nothing steps.
    pub(crate) fn perform(&mut self, action: Action) -> ActionResult {
        self.nemesis.apply(&mut self.cluster, action, self.at)
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
            Action::TransferLeader { .. }
            | Action::Partition { .. }
            | Action::PartitionOneWay { .. }
            | Action::Heal
            | Action::Hold { .. }
            | Action::Release { .. }
            | Action::Latency { .. }
            | Action::Crash { .. }
            | Action::Restart { .. }
            | Action::Stop { .. }
            | Action::Start { .. }
            | Action::ArmFailPoint { .. }
            | Action::ClearFailPoint { .. }
            | Action::ReleaseFailPoint { .. } => None,
        };
        let now = self.cluster.elapsed();
        let result = self.perform(action);
        let ActionResult::Sent { op: id } = result else {
            let why = if result == ActionResult::NodeDown {
                "node down"
            } else {
                "node not accepting commands"
            };
            if let Some((node, op)) = &sent_to {
                let mut state = self.cluster.state_mut();
                state.history.refused(client, Some(node), op, why, now);
            }
            return Ok(Sent::Refused(OpResult::error(why)));
        };
        if let Some((node, op)) = &sent_to {
            let mut state = self.cluster.state_mut();
            let incarnation = state
                .node_index(node)
                .map(|i| state.nodes[i].incarnation)
                .unwrap_or(0);
            state.history.invoke(client, id, node, incarnation, op, now);
        }
        let Some(timeout) = wait else {
            return Ok(Sent::Pending(id));
        };
        let deadline = self.cluster.elapsed() + timeout;
        while self.cluster.op_result(id).is_none() && self.cluster.elapsed() < deadline {
            self.advance()?;
        }
        Ok(Sent::Answered(match self.cluster.op_result(id) {
            Some(result) => result,
            None => {
                let why = GiveUp::StepTimeout {
                    timeout_ms: timeout.as_millis() as u64,
                };
                self.cluster.give_up(id, why);
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
            from: self.cluster.name(leader).to_string(),
            to: self.cluster.name(to).to_string(),
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
            node: self.cluster.name(node).to_string(),
        };
        let sent = match self.perform(action) {
            ActionResult::NodeDown => return Ok(false),
            result @ (ActionResult::Done
            | ActionResult::Sent { .. }
            | ActionResult::NodeUp
            | ActionResult::NotAccepting
            | ActionResult::Healed { .. }
            | ActionResult::Restarted { .. }
            | ActionResult::Crashed { .. }
            | ActionResult::Released { .. }
            | ActionResult::Cleared { .. }
            | ActionResult::Woken { .. }) => result == ActionResult::Done,
        };
        let deadline = self.cluster.elapsed() + STOP_TIMEOUT;
        while sent
            && !self.cluster.stopped(node)
            && self.up(node)
            && self.cluster.elapsed() < deadline
        {
            self.advance()?;
        }
        let clean = self.cluster.stopped(node);
        if self.up(node) {
            self.cluster.kill(node);
        }
        let stopped = Data::Stopped {
            clean,
            timeout_ms: STOP_TIMEOUT.as_millis() as u64,
        };
        self.event(Some(node), stopped);
        Ok(true)
    }
}
