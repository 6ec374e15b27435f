//! The nemesis, after Jepsen's: the one place an [`Action`] takes effect on the
//! cluster. It owns what the run did to the network (cuts, holds, latencies) and
//! to the fail points, so the heal phase undoes exactly that. Scripted steps, the
//! chaos window's fault sources and anything else that produces actions come
//! here, at any time; each action lands on the trail as one event with its
//! result, so any trail can be replayed, shrunk or edited as a list of actions.
//!
//! What an action means afterwards, over the trail (what it affects, what
//! undoes it, when a fault was in effect), is `crate::base::effect`'s, which follows
//! what this module does.
//!
//! Nothing here steps the simulation: the waits that belong to a step (a
//! client's answer, a transfer's new leader, a clean stop) are the driver's.

use super::cluster::Cluster;
use super::net::NetState;
use crate::base::action::{Acted, Action, ActionResult};
use crate::base::trail::{Data, HealStep};
use crate::lang::scenario::{Cut, NodeId, Settings};
use crate::lang::yaml::Loc;
use crate::sim::faults::{Arm, ArmSummary, FaultTable};
use faultline_api::{Command, FailPointInfo, LinkFault, Model};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

pub(crate) struct Nemesis {
    net: NetState,
    faults: Rc<RefCell<FaultTable>>,
    model: &'static dyn Model,
    /// The scenario's latency range, which a `latency: default` puts a link back on.
    latency: (Duration, Duration),
}

impl Nemesis {
    pub(crate) fn new(
        model: &'static dyn Model,
        settings: &Settings,
        faults: Rc<RefCell<FaultTable>>,
    ) -> Nemesis {
        Nemesis {
            net: NetState::default(),
            faults,
            model,
            latency: (settings.latency_min, settings.latency_max),
        }
    }

    fn point(&self, name: &str) -> &'static FailPointInfo {
        self.model
            .info()
            .fail_point(name)
            .unwrap_or_else(|| panic!("an action names fail point `{name}`, which is not declared"))
    }

    /// Apply one action now and record it; `at` is where in the scenario it comes
    /// from (a fail point's arming reports it when it never fires).
    pub(crate) fn apply(&mut self, cluster: &mut Cluster, action: Action, at: Loc) -> ActionResult {
        self.apply_for(cluster, action, at, None)
    }

    /// [`Nemesis::apply`] for the chaos schedule's entry `fault`, which the
    /// trail event names.
    pub(crate) fn apply_for(
        &mut self,
        cluster: &mut Cluster,
        action: Action,
        at: Loc,
        fault: Option<u32>,
    ) -> ActionResult {
        let result = self.take_effect(cluster, &action, at);
        let node = action.node().map(str::to_string);
        let acted = Acted {
            action,
            result: result.clone(),
            fault,
        };
        cluster
            .state_mut()
            .harness_event(node.as_deref(), Data::Action(acted));
        result
    }

    fn take_effect(&mut self, cluster: &mut Cluster, action: &Action, at: Loc) -> ActionResult {
        match action {
            Action::Client { node, op } => {
                let node = cluster.id(node);
                if !cluster.up(node) {
                    return ActionResult::NodeDown;
                }
                let payload = op.op.clone();
                cluster.send(node, op.summary.clone(), false, |id| Command::Op {
                    id,
                    op: payload,
                })
            }
            Action::TransferLeader { from, to } => {
                let (leader, to) = (cluster.id(from), to.clone());
                let summary = format!("transfer leadership {from} -> {to}");
                cluster.send(leader, summary, true, |id| Command::TransferLeader {
                    id,
                    to,
                })
            }
            Action::Partition { groups } => self.partition(cluster, groups),
            Action::PartitionOneWay { from, to } => self.partition_oneway(cluster, from, to),
            Action::Heal => {
                let links = self.net.repair_all(cluster.sim(), cluster.names());
                ActionResult::Healed { links }
            }
            Action::Hold { between: [a, b] } => {
                let (a, b) = (cluster.id(a), cluster.id(b));
                self.net.hold(cluster.sim(), cluster.names(), a, b);
                ActionResult::Done
            }
            Action::Release { between: [a, b] } => {
                let (a, b) = (cluster.id(a), cluster.id(b));
                let held = self.net.release(cluster.sim(), cluster.names(), a, b);
                ActionResult::Released { held }
            }
            Action::Latency {
                between: [a, b],
                delay_ms,
            } => self.set_latency(cluster, a, b, *delay_ms),
            Action::Crash { node } => self.crash(cluster, node),
            Action::Restart { node } => self.restart(cluster, node),
            Action::Stop { node } => {
                let node = cluster.id(node);
                if !cluster.up(node) {
                    return ActionResult::NodeDown;
                }
                if cluster.request_stop(node) {
                    ActionResult::Done
                } else {
                    ActionResult::NotAccepting
                }
            }
            Action::Start { node } => {
                let node = cluster.id(node);
                if cluster.up(node) {
                    return ActionResult::NodeUp;
                }
                cluster.boot(node);
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
                self.faults.borrow_mut().arm(
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
                let armed = self.faults.borrow_mut().clear(node, point.name);
                ActionResult::Cleared { armed }
            }
            Action::ReleaseFailPoint { node, point } => {
                let point = self.point(point);
                let tasks = self.faults.borrow_mut().release(node, point.name);
                ActionResult::Woken { tasks }
            }
        }
    }

    fn partition(&mut self, cluster: &mut Cluster, groups: &[Vec<String>]) -> ActionResult {
        let groups: Vec<Vec<NodeId>> = groups
            .iter()
            .map(|g| g.iter().map(|n| cluster.id(n)).collect())
            .collect();
        for cut in Cut::between_groups(&groups) {
            self.net.cut(cluster.sim(), cluster.names(), cut);
        }
        ActionResult::Done
    }

    fn partition_oneway(
        &mut self,
        cluster: &mut Cluster,
        from: &str,
        to: &[String],
    ) -> ActionResult {
        let from = cluster.id(from);
        for to in to {
            let cut = Cut {
                from,
                to: cluster.id(to),
                oneway: true,
            };
            self.net.cut(cluster.sim(), cluster.names(), cut);
        }
        ActionResult::Done
    }

    /// A link's latency fixed, or (`None`) back on the scenario's range.
    fn set_latency(
        &mut self,
        cluster: &mut Cluster,
        a: &str,
        b: &str,
        delay_ms: Option<u64>,
    ) -> ActionResult {
        let (a, b) = (cluster.id(a), cluster.id(b));
        let (sim, names) = (cluster.sim(), cluster.names());
        match delay_ms {
            Some(ms) => {
                let delay = Duration::from_millis(ms);
                self.net.set_latency(sim, names, a, b, delay);
            }
            None => {
                let (min, max) = self.latency;
                self.net.reset_latency(sim, names, a, b, min, max);
            }
        }
        ActionResult::Done
    }

    fn crash(&mut self, cluster: &mut Cluster, node: &str) -> ActionResult {
        let node = cluster.id(node);
        if !cluster.up(node) {
            return ActionResult::NodeDown;
        }
        let lost_held = self
            .net
            .lose_held_from(cluster.sim(), cluster.names(), node);
        cluster.kill(node);
        match lost_held {
            0 => ActionResult::Done,
            lost_held => ActionResult::Crashed { lost_held },
        }
    }

    fn restart(&mut self, cluster: &mut Cluster, node: &str) -> ActionResult {
        let node = cluster.id(node);
        let was_up = cluster.up(node);
        let mut lost_held = 0;
        if was_up {
            lost_held = self
                .net
                .lose_held_from(cluster.sim(), cluster.names(), node);
            cluster.kill(node);
        }
        cluster.boot(node);
        ActionResult::Restarted { was_up, lost_held }
    }

    /// Every link a network fault touched so far, with the last time one was
    /// in effect on it (what liveness checks read from the view).
    pub(crate) fn link_faults(&self, cluster: &Cluster) -> Vec<LinkFault> {
        let names = cluster.names();
        self.net
            .faulted_until(cluster.elapsed_ms())
            .into_iter()
            .map(|((a, b), until_ms)| LinkFault {
                a: names[a].clone(),
                b: names[b].clone(),
                until_ms,
            })
            .collect()
    }

    /// Whether the messages between two nodes are held.
    pub(crate) fn held(&self, a: NodeId, b: NodeId) -> bool {
        self.net.holds.contains(&(a.min(b), a.max(b)))
    }

    /// The heal phase's first move: repair every cut, release every hold, put
    /// every link back on the scenario's latency and clear every fail point
    /// (waking stalled tasks). Down nodes are the caller's to start.
    pub(crate) fn remove_all(&mut self, cluster: &Cluster) -> HealStep {
        let (sim, names) = (cluster.sim(), cluster.names());
        let cuts = self.net.repair_all(sim, names);
        let holds = self.net.release_all(sim, names);
        let (min, max) = self.latency;
        let latencies = self.net.reset_latencies(sim, names, min, max);
        let cleared = self.faults.borrow_mut().clear_all();
        HealStep::Began {
            cuts,
            holds,
            latencies,
            cleared: cleared.iter().map(|(n, p)| format!("{n}/{p}")).collect(),
            starting: Vec::new(),
        }
    }

    /// Disarm this run's points in the process-global `fail` registry.
    pub(crate) fn clear_fail_points(&self) {
        self.faults.borrow_mut().clear_all();
    }

    /// Every arming of the run so far, with its hits and firings.
    pub(crate) fn arms<T>(&self, read: impl FnOnce(&[Arm]) -> T) -> T {
        read(self.faults.borrow().arms())
    }

    pub(crate) fn summaries(&self) -> Vec<ArmSummary> {
        self.faults.borrow().summaries()
    }
}
