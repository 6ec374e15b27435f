//! One node: openraft started on the node's disk and network, the harness's
//! commands turned into openraft API calls, and openraft's metrics turned into
//! observations, trail events and the oracle's checks.

use crate::model::{Op, Params};
use crate::net::{Network, TransferSeen};
use crate::probes::OpenraftProbe;
use crate::sm::StateMachine;
use crate::store::LogStore;
use crate::types::{Kv, LogId, Oracle, Raft, Request, node_id, node_index};
use faultline_api::kit::raft::{self, RaftEvent};
use faultline_api::{Command, NodeCtx, NodeEvent, Observation, OpResult, Role};
use openraft::{Config, Membership, RaftMetrics, ReadPolicy, ServerState, SnapshotPolicy};
use openraft_rt::WatchReceiver;
use rand::RngCore;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// How often a pending leader transfer looks at the outcome.
const TRANSFER_POLL_MS: u64 = 5;
/// A transfer that has not ended after this many longest election timeouts has
/// failed (the target never won, nobody else did either).
const TRANSFER_WAIT_ELECTIONS: u64 = 4;

pub fn name_of(ctx: &NodeCtx, id: u64) -> String {
    ctx.nodes()
        .get(node_index(id))
        .map(|n| n.name.clone())
        .unwrap_or_else(|| format!("id{id}"))
}

pub fn membership_text(m: &Membership<u64, openraft::EmptyNode>, ctx: &NodeCtx) -> String {
    let configs: Vec<String> = m
        .get_joint_config()
        .iter()
        .map(|c| {
            let names: Vec<String> = c.iter().map(|id| name_of(ctx, *id)).collect();
            format!("[{}]", names.join(","))
        })
        .collect();
    let learners: Vec<String> = m.learner_ids().map(|id| name_of(ctx, id)).collect();
    format!(
        "voters {} learners [{}]",
        configs.join("+"),
        learners.join(",")
    )
}

fn config(params: &Params) -> Result<Arc<Config>, String> {
    let config = Config {
        cluster_name: "faultline".into(),
        heartbeat_interval: params.heartbeat_ms.unwrap_or(100),
        election_timeout_min: params.election_timeout_ms_min.unwrap_or(400),
        election_timeout_max: params.election_timeout_ms_max.unwrap_or(800),
        snapshot_policy: SnapshotPolicy::LogsSinceLast(params.snapshot_every.unwrap_or(64)),
        max_in_snapshot_log_to_keep: params.keep_after_snapshot.unwrap_or(8),
        enable_leader_restore: params.leader_restore,
        ..Default::default()
    };
    config.validate().map(Arc::new).map_err(|e| e.to_string())
}

/// The node's host software: runs until the host is crashed.
pub async fn run(ctx: NodeCtx) -> turmoil::Result {
    // Every random draw of openraft (election timeouts) comes from this seed.
    let seed = ctx.rng_seed_for("openraft").next_u64();
    crate::runtime::Seeded::scope(seed, run_seeded(Rc::new(ctx))).await
}

async fn run_seeded(ctx: Rc<NodeCtx>) -> turmoil::Result {
    let params: Params = faultline_api::parse_json(ctx.params()).unwrap_or_default();
    let config = config(&params)?;
    let id = node_id(ctx.index());
    // Shared by the run's nodes, one per run.
    let oracle = ctx.shared::<Oracle>();
    let log = LogStore::open(ctx.clone(), oracle.clone(), id)?;
    let sm = StateMachine::new(ctx.clone(), oracle.clone(), id)?;
    // A committed vote of this node read back at startup: leading again under
    // that same vote, with no election, is openraft's leader restore.
    let restorable = log.vote().filter(|v| v.committed).map(|v| v.to_string());
    let transfers = Rc::new(RefCell::new(TransferSeen::default()));
    let network = Network {
        ctx: ctx.clone(),
        transfers: transfers.clone(),
    };
    let raft = Raft::new(id, config, network, log.clone(), sm.clone())
        .await
        .map_err(|e| format!("openraft did not start: {e}"))?;
    crate::spawn({
        let (ctx, raft) = (ctx.clone(), raft.clone());
        async move {
            if let Err(e) = crate::net::serve(ctx.clone(), raft).await {
                ctx.note(format!("rpc server stopped: {e}"));
            }
        }
    });
    let watcher = Watcher {
        ctx: ctx.clone(),
        raft: raft.clone(),
        log: log.clone(),
        sm: sm.clone(),
        oracle,
        in_flight: Rc::new(RefCell::new(0)),
        last: Default::default(),
        restorable,
    };
    let in_flight = watcher.in_flight.clone();
    let watcher = Rc::new(watcher);
    crate::spawn({
        let watcher = watcher.clone();
        async move { watcher.watch().await }
    });
    // The first voter bootstraps the cluster on its very first start.
    let voters: BTreeSet<u64> = ctx
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.role == "voter")
        .map(|(i, _)| node_id(i))
        .collect();
    if ctx.incarnation() == 0
        && voters.first() == Some(&id)
        && !raft.is_initialized().await.unwrap_or(true)
    {
        raft.initialize(voters)
            .await
            .map_err(|e| format!("initialize: {e}"))?;
        ctx.note("initialized the cluster");
        let _ = raft.trigger().elect(false).await;
    }
    let mut inbox = ctx.take_inbox();
    while let Some(command) = inbox.recv().await {
        match command {
            Command::Op { id: op_id, op } => {
                let (ctx, raft, sm, in_flight, watcher, transfers) = (
                    ctx.clone(),
                    raft.clone(),
                    sm.clone(),
                    in_flight.clone(),
                    watcher.clone(),
                    transfers.clone(),
                );
                *in_flight.borrow_mut() += 1;
                watcher.publish();
                crate::spawn(async move {
                    let result = match serde_json::from_value::<Op>(op) {
                        Ok(op) => execute(&ctx, &raft, &sm, &transfers, op).await,
                        Err(e) => OpResult::error(format!("bad op: {e}")),
                    };
                    *in_flight.borrow_mut() -= 1;
                    ctx.complete(op_id, result);
                    watcher.publish();
                });
            }
            Command::TransferLeader { id: op_id, to } => {
                let (ctx, raft, transfers) = (ctx.clone(), raft.clone(), transfers.clone());
                crate::spawn(async move {
                    let result = transfer(&ctx, &raft, &transfers, &to).await;
                    ctx.complete(op_id, result);
                });
            }
            Command::Stop => {
                let _ = raft.shutdown().await;
                ctx.stopped();
                std::future::pending::<()>().await;
            }
        }
    }
    Ok(())
}

fn error_text(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    if text.len() > 300 {
        let mut end = 300;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &text[..end])
    } else {
        text
    }
}

async fn execute(
    ctx: &NodeCtx,
    raft: &Raft,
    sm: &StateMachine,
    transfers: &RefCell<TransferSeen>,
    op: Op,
) -> OpResult {
    let id_of = |name: &str| ctx.nodes().iter().position(|n| n.name == name).map(node_id);
    match op {
        Op::Put { key, value } => match raft.client_write(Request::Put { key, value }).await {
            Ok(_) => OpResult::ok(),
            Err(e) => OpResult::error(error_text(e)),
        },
        Op::Get { key } => match raft.client_write(Request::Get { key }).await {
            Ok(resp) => match resp.data.value {
                Some(value) => OpResult::value(value),
                None => OpResult::error("not found"),
            },
            Err(e) => OpResult::error(error_text(e)),
        },
        Op::Read { key } => match raft.ensure_linearizable(ReadPolicy::ReadIndex).await {
            Ok(_) => match sm.data.borrow().map.get(&key) {
                Some(value) => OpResult::value(value.clone()),
                None => OpResult::error("not found"),
            },
            Err(e) => OpResult::error(error_text(e)),
        },
        Op::AddLearner { node } => {
            let Some(id) = id_of(&node) else {
                return OpResult::error(format!("no node `{node}`"));
            };
            match raft.add_learner(id, openraft::EmptyNode {}, false).await {
                Ok(_) => OpResult::ok(),
                Err(e) => OpResult::error(error_text(e)),
            }
        }
        Op::ChangeMembership { voters, retain } => {
            let mut ids = BTreeSet::new();
            for name in &voters {
                match id_of(name) {
                    Some(id) => ids.insert(id),
                    None => return OpResult::error(format!("no node `{name}`")),
                };
            }
            match raft.change_membership(ids, retain).await {
                Ok(_) => OpResult::ok(),
                Err(e) => OpResult::error(error_text(e)),
            }
        }
        Op::TransferLeader { to } => transfer(ctx, raft, transfers, &to).await,
    }
}

/// openraft's leader transfer: ask, then watch for the target leading or
/// refusing. The harness gives up on it after the step's timeout.
async fn transfer(
    ctx: &NodeCtx,
    raft: &Raft,
    transfers: &RefCell<TransferSeen>,
    to: &str,
) -> OpResult {
    let Some(target) = ctx.nodes().iter().position(|n| n.name == to).map(node_id) else {
        return OpResult::error(format!("no node `{to}`"));
    };
    if !raft.is_leader() {
        return OpResult::error(format!("{} is not the leader", ctx.name()));
    }
    transfers.borrow_mut().refused = None;
    if let Err(e) = raft.trigger().transfer_leader(target).await {
        return OpResult::error(error_text(e));
    }
    let metrics = raft.metrics();
    let me = node_id(ctx.index());
    // Bounded: an op in hand counts as pending work, and a transfer that never
    // ends would keep the node from ever being quiescent.
    let give_up_ms = TRANSFER_WAIT_ELECTIONS * raft.config().election_timeout_max;
    let mut waited_ms = 0;
    loop {
        if let Some((node, refusal)) = transfers.borrow_mut().refused.take() {
            if node == target {
                return OpResult::error(format!("refused by {to}: {refusal}"));
            }
        }
        let m = metrics.borrow_watched().clone();
        if m.current_leader == Some(target) && m.vote.committed {
            return OpResult::ok();
        }
        // Another node won the election the transfer started: it is over.
        if let Some(other) = m.current_leader.filter(|l| *l != me && *l != target) {
            if m.vote.committed {
                return OpResult::error(format!(
                    "{} leads term {}, not {to}",
                    name_of(ctx, other),
                    m.current_term
                ));
            }
        }
        if waited_ms >= give_up_ms {
            return OpResult::error(format!("{to} did not take over within {give_up_ms} ms"));
        }
        tokio::time::sleep(Duration::from_millis(TRANSFER_POLL_MS)).await;
        waited_ms += TRANSFER_POLL_MS;
    }
}

/// What the watcher last saw, to report changes once.
#[derive(Default)]
struct Seen {
    state: Option<ServerState>,
    term: u64,
    leader: Option<u64>,
    committed: Option<LogId>,
    membership: String,
    /// The voters of `membership`, one set per configuration.
    voters: Vec<BTreeSet<u64>>,
}

struct Watcher {
    ctx: Rc<NodeCtx>,
    raft: Raft,
    log: LogStore,
    sm: StateMachine,
    oracle: Rc<Oracle>,
    in_flight: Rc<RefCell<u64>>,
    last: RefCell<Seen>,
    /// The committed vote this incarnation read back at startup, if any.
    restorable: Option<String>,
}

fn role(state: ServerState) -> &'static str {
    match state {
        ServerState::Leader => "leader",
        ServerState::Candidate => "candidate",
        ServerState::Follower => "follower",
        ServerState::Learner => "learner",
        ServerState::Shutdown => "shutdown",
    }
}

/// The role as the harness's checkers read it (election safety: one leader per
/// term). A learner follows the leader without a vote; a node shutting down is
/// reported as a follower of nobody. The text keeps openraft's own state name.
fn api_role(state: ServerState) -> Role {
    match state {
        ServerState::Leader => Role::Leader,
        ServerState::Candidate => Role::Candidate,
        ServerState::Follower | ServerState::Learner | ServerState::Shutdown => Role::Follower,
    }
}

fn leader_event(m: &RaftMetrics<Kv>, name: &dyn Fn(u64) -> String) -> NodeEvent {
    let leader = m.current_leader.map(name);
    let text = match (m.state, &leader) {
        (ServerState::Leader, _) => format!("leader term {}", m.current_term),
        (other, Some(l)) => format!("{} term {} leader {l}", role(other), m.current_term),
        (other, None) => format!("{} term {}", role(other), m.current_term),
    };
    NodeEvent::Leader {
        role: api_role(m.state),
        term: m.current_term,
        leader,
        text,
    }
}

impl Watcher {
    async fn watch(&self) {
        let mut metrics = self.raft.metrics();
        loop {
            let m = metrics.borrow_watched().clone();
            self.changed(&m);
            if metrics.changed().await.is_err() {
                return;
            }
        }
    }

    fn name(&self, id: u64) -> String {
        name_of(&self.ctx, id)
    }

    fn changed(&self, m: &RaftMetrics<Kv>) {
        let id = node_id(self.ctx.index());
        let namer = |n: u64| self.name(n);
        let membership = membership_text(m.membership_config.membership(), &self.ctx);
        // The snapshot as the state machine wrote it: openraft's metrics may
        // publish an installed snapshot's commit before the snapshot itself
        // (chaos, alpha.25 seed 684).
        let snapshot_id = m.snapshot.max(self.oracle.borrow().snapshot_of(id));
        let snapshot = snapshot_id.map(|s| s.index);
        let mut last = self.last.borrow_mut();
        if last.state != Some(m.state)
            || last.term != m.current_term
            || last.leader != m.current_leader
        {
            self.ctx.record(leader_event(m, &namer));
            if m.state == ServerState::Leader && last.state != Some(ServerState::Leader) {
                if self.restorable.as_deref() == Some(m.vote.to_string().as_str()) {
                    self.ctx.probe(OpenraftProbe::LeaderRestored);
                }
                let covered = self.log.log.state().purged.map(|p| p.index).max(snapshot);
                let log = self.log.log.ids();
                let term = m.current_term;
                self.observe(RaftEvent::Leader {
                    node: id,
                    term,
                    log: &log,
                    covered,
                });
                let entry = m.membership_config.log_id().map(|l| (l.index, l));
                self.observe(RaftEvent::LeaderMembership { node: id, entry });
            }
        }
        // Every observation: a stale config outlives the change that made it so.
        self.observe(RaftEvent::Membership {
            node: id,
            entry: m.membership_config.log_id().map(|l| (l.index, l)),
            snapshot: m.snapshot.map(|s| (s.index, s)),
        });
        let voters = m.membership_config.membership().get_joint_config().clone();
        // The voters before, when the membership changed in this observation.
        let earlier = (last.membership != membership)
            .then(|| std::mem::replace(&mut last.voters, voters.clone()))
            .filter(|e| !e.is_empty());
        if last.membership != membership {
            last.membership = membership.clone();
        }
        if m.local_committed > last.committed {
            // Entries up to the snapshot are read from the snapshot, not the log:
            // right after installing a leader's snapshot the log may still hold
            // entries of an older term at those indexes until openraft purges them
            // (found by the chaos scenario, alpha.25 seeds 478 and 739, as
            // committed_entries_agree on the stale entry). The snapshot's own last
            // log id is still checked.
            let from = last.committed.map_or(0, |c| c.index + 1);
            let upto = m.local_committed.map_or(0, |c| c.index);
            let mut ids: Vec<LogId> = Vec::new();
            if let Some(s) = snapshot_id.filter(|s| (from..=upto).contains(&s.index)) {
                ids.push(s);
            }
            let from = from.max(snapshot.map_or(0, |s| s + 1));
            if from <= upto {
                let log = self.log.log.state();
                // The log is what was committed only if it holds the committed
                // log id itself (log matching then covers every entry before
                // it). Otherwise the commit came with a snapshot that is still
                // being installed: alpha.37 publishes the commit before the
                // state machine has it, and the log may still hold an older
                // term's entries at those indexes (openraft-auto alpha.37 seed
                // 21: 10.526 in n5's log under an installed 11.611; n5 never
                // applied it). Then only the committed log id is checked.
                let held = m
                    .local_committed
                    .is_some_and(|c| log.entries.get(&c.index).map(|e| e.log_id) == Some(c));
                if held {
                    ids.extend(log.entries.range(from..=upto).map(|(_, e)| e.log_id));
                } else if let Some(c) = m.local_committed {
                    ids.push(c);
                }
            }
            let entries = ids.into_iter().map(|l| (l.index, l)).collect();
            self.observe(RaftEvent::Committed { node: id, entries });
            if m.state == ServerState::Leader {
                if let Some(committed) = m.local_committed {
                    self.observe(RaftEvent::LeaderCommitted {
                        node: id,
                        entry: (committed.index, committed),
                        voters: &voters,
                        earlier: earlier.as_deref(),
                    });
                }
            }
        }
        last.state = Some(m.state);
        last.term = m.current_term;
        last.leader = m.current_leader;
        last.committed = last.committed.max(m.local_committed);
        drop(last);
        self.publish_metrics(m);
    }

    /// Tell the run's oracle; a violation it finds is reported from this node.
    fn observe(&self, event: RaftEvent<'_, LogId>) {
        raft::observe(&self.ctx, &self.oracle, event, &|n| self.name(n));
    }

    fn publish(&self) {
        let m = self.raft.metrics().borrow_watched().clone();
        self.publish_metrics(&m);
    }

    fn publish_metrics(&self, m: &RaftMetrics<Kv>) {
        let data = self.sm.data.borrow();
        let log = self.log.log.state();
        let applied = m.last_applied.map_or(0, |l| l.index);
        let last_log = m.last_log_index.unwrap_or(0);
        let mut facts = BTreeMap::new();
        let show = |l: Option<LogId>| {
            l.map_or("-".to_string(), |l| {
                format!("{}-{}", l.leader_id.term, l.index)
            })
        };
        facts.insert(
            "committed".into(),
            m.local_committed.map_or(0, |c| c.index).to_string(),
        );
        facts.insert("committed_log_id".into(), show(m.local_committed));
        facts.insert("last_log".into(), last_log.to_string());
        facts.insert(
            "durable".into(),
            log.durable.map_or(0, |d| d.index).to_string(),
        );
        facts.insert(
            "snapshot".into(),
            m.snapshot.map_or(0, |s| s.index).to_string(),
        );
        facts.insert("vote".into(), m.vote.to_string());
        facts.insert(
            "membership".into(),
            membership_text(m.membership_config.membership(), &self.ctx),
        );
        let observation = Observation {
            role: Some(role(m.state).to_string()),
            term: Some(m.current_term),
            leader: m.current_leader.map(|l| self.name(l)),
            applied: Some(applied),
            state: data.map.clone(),
            facts,
            pending: last_log.saturating_sub(applied) + *self.in_flight.borrow(),
            ..Default::default()
        };
        drop((data, log));
        self.ctx.publish(observation);
    }
}
