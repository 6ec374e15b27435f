//! SCM or Recon: receives registers and heartbeats, keeps the replica table.
//!
//! Volatile: the whole table (both rebuild replica locations from reports; a
//! restarted receiver asks every datanode to register again).

use super::replicas::{Cause, Change, Policy, ReplicaTable, Reregister};
use super::report::{
    containers_fact, replica_key, show_containers, show_reports, Endpoint, Message,
};
use super::{fmt_ms, Config, PORT};
use crate::api::{Command, EventKind, Net, NodeCtx, NodeEvent, Observation, OpResult};
use std::collections::BTreeMap;

struct Receiver {
    ctx: NodeCtx,
    net: Net,
    endpoint: Endpoint,
    table: ReplicaTable,
    /// The datanodes of the scenario, which are expected to register here.
    datanodes: Vec<String>,
}

pub(super) async fn run(ctx: NodeCtx) -> turmoil::Result {
    let config = Config::from_ctx(&ctx);
    let endpoint = match ctx.role() {
        "scm" => Endpoint::Scm,
        "recon" => Endpoint::Recon,
        other => unreachable!("hdds-reports has no role `{other}`"),
    };
    let policy = match endpoint {
        Endpoint::Scm => Policy::Scm,
        Endpoint::Recon => Policy::Recon {
            outdated_ms: config.recon_stale_intervals * config.recon_interval_ms,
        },
    };
    let net = Net::bind(&ctx, PORT).await?;
    let datanodes = ctx
        .nodes()
        .iter()
        .filter(|n| n.role == "datanode")
        .map(|n| n.name.clone())
        .collect();
    let mut receiver = Receiver {
        ctx,
        net,
        endpoint,
        table: ReplicaTable::new(policy),
        datanodes,
    };
    receiver.publish();
    let mut inbox = receiver.ctx.take_inbox();
    let mut buffer = Net::buffer();
    loop {
        tokio::select! {
            biased;
            command = inbox.recv() => match command {
                Some(command) => receiver.on_command(command),
                None => return Ok(()),
            },
            received = receiver.net.recv::<Message>(&mut buffer) => {
                if let Ok((from, message)) = received {
                    receiver.on_message(&from, message);
                }
            }
        }
    }
}

impl Receiver {
    fn on_command(&self, command: Command) {
        match command {
            Command::Op { id, .. } => {
                let error = format!(
                    "{} takes no ops; container events go to a datanode",
                    self.endpoint
                );
                self.ctx.complete(id, OpResult::error(error));
            }
            Command::TransferLeader { id, .. } => {
                self.ctx
                    .complete(id, OpResult::error("no leader in this model"));
            }
            Command::Stop => self.ctx.stopped(),
        }
    }

    fn on_message(&mut self, from: &str, message: Message) {
        if !self.datanodes.iter().any(|d| d == from) {
            return;
        }
        let now = self.ctx.now_ms();
        match message {
            Message::Register { call, fcr } => {
                let changes = self.table.register(from, &fcr, now);
                let detail = format!(
                    "{from} registered; register report {}{}",
                    show_containers(&fcr.containers),
                    show_changes(&changes)
                );
                self.record(from, detail, &changes);
                self.net
                    .send(from, "register-ack", &Message::RegisterAck { call });
            }
            Message::Heartbeat { call, reports } => {
                let result = self.table.heartbeat(from, &reports, now);
                let reregister = result.reregister.is_some();
                if !reports.is_empty() || reregister || !result.changes.is_empty() {
                    let mut detail = format!(
                        "heartbeat from {from} ({}){}",
                        show_reports(&reports),
                        show_changes(&result.changes)
                    );
                    if !result.acked.is_empty() {
                        let acked: Vec<String> =
                            result.acked.iter().map(|c| format!("cmd{c}")).collect();
                        detail.push_str(&format!(
                            "; command status of {} recorded",
                            acked.join(", ")
                        ));
                    }
                    if let Some(why) = result.reregister {
                        detail
                            .push_str(&format!("; asks {from} to re-register ({})", describe(why)));
                    }
                    self.record(from, detail, &result.changes);
                }
                let ack = Message::HeartbeatAck { call, reregister };
                self.net.send(from, "heartbeat-ack", &ack);
            }
            // Replies go to datanodes, never to a receiver.
            Message::RegisterAck { .. } | Message::HeartbeatAck { .. } => return,
        }
        self.publish();
    }

    fn record(&self, datanode: &str, detail: String, changes: &[Change]) {
        let keys = changes.iter().map(|c| replica_key(datanode, c.container));
        self.ctx
            .record_event(NodeEvent::new(EventKind::Apply, detail).with_keys(keys));
    }

    fn publish(&self) {
        let now = self.ctx.now_ms();
        let mut state = BTreeMap::new();
        let mut facts = BTreeMap::new();
        let mut pending = 0;
        // Replicas are compared key by key with the datanode's own set only when
        // there is one datanode (see `datanode::publish`).
        let compare_state = self.datanodes.len() == 1;
        for dn in &self.datanodes {
            let registered = self.table.registered(dn);
            pending += u64::from(!registered);
            facts.insert(format!("registered.{dn}"), registered.to_string());
            let heartbeats = self.table.stats(dn).map_or(0, |s| s.heartbeats);
            let view = self.table.view(dn);
            let states = view.into_iter().flatten().map(|(c, r)| (*c, r.state));
            facts.insert(format!("replicas.{dn}"), containers_fact(&states.collect()));
            for (container, replica) in view.into_iter().flatten() {
                let key = replica_key(dn, *container);
                // How long this entry has stood, as of the latest message.
                facts.insert(format!("since_ms.{key}"), replica.since_ms.to_string());
                let held = fmt_ms(now.saturating_sub(replica.since_ms));
                facts.insert(format!("held.{key}"), held);
                let survived = heartbeats - replica.since_heartbeat;
                facts.insert(format!("held_heartbeats.{key}"), survived.to_string());
                if compare_state {
                    state.insert(key, replica.state.to_string());
                }
            }
            if let Some(stats) = self.table.stats(dn) {
                facts.insert(format!("heartbeats.{dn}"), stats.heartbeats.to_string());
                facts.insert(format!("registers.{dn}"), stats.registers.to_string());
                facts.insert(format!("reregisters.{dn}"), stats.reregisters.to_string());
                facts.insert(
                    format!("icrs_over_fcr.{dn}"),
                    stats.icrs_over_fcr.to_string(),
                );
                if let Some(t) = stats.last_fcr_ms {
                    facts.insert(format!("last_full_report_ms.{dn}"), t.to_string());
                }
            }
            if let Some(acked) = self.table.acked(dn) {
                let ids: Vec<String> = acked.iter().map(u64::to_string).collect();
                facts.insert(format!("acked.{dn}"), ids.join(","));
            }
        }
        self.ctx.publish(Observation {
            role: Some(self.endpoint.role().into()),
            term: None,
            leader: None,
            applied: None,
            state,
            facts,
            pending,
        });
    }
}

fn describe(why: Reregister) -> String {
    match why {
        Reregister::Unregistered => "not registered here".into(),
        Reregister::FirstHeartbeat => "no heartbeat on record".into(),
        Reregister::Silent { gap_ms } => format!("silent for {}", fmt_ms(gap_ms)),
    }
}

/// `: FCR#1 removed C1 (UNHEALTHY); ICR set C1=UNHEALTHY (was absent), over this heartbeat's FCR`
fn show_changes(changes: &[Change]) -> String {
    if changes.is_empty() {
        return String::new();
    }
    let items: Vec<String> = changes.iter().map(show_change).collect();
    format!(": {}", items.join("; "))
}

fn show_change(change: &Change) -> String {
    let by = match change.cause {
        Cause::Register(_) => "register report".to_string(),
        Cause::Fcr(id) => format!("FCR#{id}"),
        Cause::Icr => "ICR".to_string(),
    };
    let c = change.container;
    let mut text = match (change.from, change.to) {
        (Some(old), None) => format!("{by} removed C{c} (was {old})"),
        (None, Some(new)) => format!("{by} added C{c}={new}"),
        (Some(old), Some(new)) => format!("{by} set C{c}={new} (was {old})"),
        (None, None) => unreachable!("a change changes something"),
    };
    if change.over_fcr {
        text.push_str(", over this heartbeat's FCR");
    }
    text
}
