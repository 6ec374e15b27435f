//! SCM or Recon: receives registers and heartbeats, keeps the replica table; SCM
//! also runs block deletion.
//!
//! Volatile: the whole table (both rebuild replica locations from reports; a
//! restarted receiver asks every datanode to register again), SCM's command
//! statuses and command queues. Durable (SCM only): the deleted-block log
//! (`deleted_blocks.json`, SCM's DB).

use super::deletion::{CmdStatus, DeletedBlockLog, Durable, StatusResult, TimedOut};
use super::replicas::{Cause, Change, Policy, ReplicaTable, Reregister};
use super::report::{
    containers_fact, replica_key, show_containers, show_reports, show_txs, Csr,
    DeleteBlocksCommand, Endpoint, Message,
};
use super::{fmt_ms, Config, HddsOp, HddsProbe, PORT};
use faultline_api::{ApplyResult, Command, Net, NodeCtx, NodeEvent, Observation, OpResult};
use std::collections::{BTreeMap, BTreeSet};
use tokio::time::sleep;

const DELETED_BLOCKS_FILE: &str = "deleted_blocks.json";

struct Receiver {
    ctx: NodeCtx,
    net: Net,
    endpoint: Endpoint,
    table: ReplicaTable,
    /// The datanodes of the scenario, which are expected to register here.
    datanodes: Vec<String>,
    /// SCM only.
    deletion: Option<Deletion>,
}

/// SCM's block deletion: the log and the `SCMBlockDeletingService` schedule.
struct Deletion {
    log: DeletedBlockLog,
    interval_ms: u64,
    wait_after_safe_mode_exit_ms: u64,
    command_timeout_ms: u64,
    /// When SCM left safe mode (its first register); `None` while in safe mode.
    safe_mode_exit_ms: Option<u64>,
    /// The service runs every interval from SCM's start (`scheduleWithFixedDelay`
    /// with no initial delay) and does work once the wait after safe mode is over.
    next_run_ms: u64,
}

impl Deletion {
    fn runs_from_ms(&self) -> Option<u64> {
        self.safe_mode_exit_ms
            .map(|t| t + self.wait_after_safe_mode_exit_ms)
    }
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
    let datanodes: Vec<String> = ctx
        .nodes()
        .iter()
        .filter(|n| n.role == "datanode")
        .map(|n| n.name.clone())
        .collect();
    let deletion = match endpoint {
        Endpoint::Scm => Some(load_deletion(&ctx, &config, &datanodes)?),
        Endpoint::Recon => None,
    };
    let mut receiver = Receiver {
        ctx,
        net,
        endpoint,
        table: ReplicaTable::new(policy),
        datanodes,
        deletion,
    };
    receiver.publish();
    let mut inbox = receiver.ctx.take_inbox();
    let mut buffer = Net::buffer();
    loop {
        let next_run = receiver.deletion.as_ref().map(|d| d.next_run_ms);
        let run_in = receiver.ctx.until(next_run.unwrap_or(0));
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
            _ = sleep(run_in), if next_run.is_some() => receiver.run_block_deletion(),
        }
    }
}

/// SCM's deleted-block log from its DB (empty on a first start).
fn load_deletion(
    ctx: &NodeCtx,
    config: &Config,
    datanodes: &[String],
) -> std::io::Result<Deletion> {
    let durable: Durable = match ctx.disk().read(DELETED_BLOCKS_FILE)? {
        Some(bytes) => serde_json::from_slice(&bytes).expect("the deleted-block log parses"),
        None => Durable::default(),
    };
    let log = DeletedBlockLog::new(durable, datanodes.to_vec(), config.command_timeout_ms);
    Ok(Deletion {
        log,
        interval_ms: config.block_deletion_interval_ms,
        wait_after_safe_mode_exit_ms: config.wait_after_safe_mode_exit_ms,
        command_timeout_ms: config.command_timeout_ms,
        safe_mode_exit_ms: None,
        next_run_ms: ctx.now_ms(),
    })
}

impl Receiver {
    fn on_command(&mut self, command: Command) {
        match command {
            Command::Op { id, op } => {
                let op: HddsOp = serde_json::from_value(op).expect("validated by parse_op");
                let result = self.on_op(&op);
                self.ctx.complete(id, result);
            }
            Command::TransferLeader { id, .. } => {
                self.ctx
                    .complete(id, OpResult::error("no leader in this model"));
            }
            Command::Stop => self.ctx.stopped(),
        }
    }

    fn on_op(&mut self, op: &HddsOp) -> OpResult {
        let result = match (op, self.deletion.as_mut()) {
            (HddsOp::DeleteBlocks {}, Some(deletion)) => deletion.log.add_transaction(),
            (HddsOp::DeleteBlocks {}, None) => Err("block deletions enter at SCM".to_string()),
            (
                HddsOp::Create { .. }
                | HddsOp::Close { .. }
                | HddsOp::MarkUnhealthy { .. }
                | HddsOp::Delete { .. }
                | HddsOp::Import { .. }
                | HddsOp::CommandStatus { .. }
                | HddsOp::FailVolume { .. }
                | HddsOp::BuildFcr { .. },
                _,
            ) => Err(format!(
                "{} takes no container ops; they go to a datanode",
                self.endpoint
            )),
        };
        let tx = match result {
            Ok(tx) => tx,
            Err(why) => return OpResult::error(why),
        };
        self.persist_deletion();
        let logged = self.logged_txs();
        self.ctx.record(NodeEvent::Apply {
            term: None,
            index: None,
            what: format!("deleted-block transaction tx{tx}"),
            result: ApplyResult::Ok,
            keys: Vec::new(),
            text: format!("deleted-block transaction tx{tx} logged; log {logged}"),
        });
        self.publish();
        OpResult::value(format!("tx{tx}"))
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
                self.record(from, format!("register of {from}"), detail, &changes);
                self.leave_safe_mode(from, now);
                self.net
                    .send(from, "register-ack", &Message::RegisterAck { call });
            }
            Message::Heartbeat { call, reports } => {
                let result = self.table.heartbeat(from, &reports, now);
                if matches!(result.reregister, Some(Reregister::Silent { .. })) {
                    self.ctx.probe(HddsProbe::ReconReregisterAfterSilence);
                }
                if result.changes.iter().any(|c| c.over_fcr) {
                    self.ctx.probe(HddsProbe::ReceiverIcrOverFcr);
                }
                let reregister = result.reregister.is_some();
                // An unregistered datanode's reports are not processed, and it gets
                // only the re-register command.
                let processed = result.reregister != Some(Reregister::Unregistered);
                let mut deletion_notes = Vec::new();
                let mut commands = Vec::new();
                if processed {
                    deletion_notes = self.on_command_statuses(from, &reports.csrs, now);
                    commands = self.take_commands(from, now);
                }
                let has_news = !reports.is_empty() || reregister || !result.changes.is_empty();
                if has_news || !commands.is_empty() {
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
                    for note in deletion_notes {
                        detail.push_str(&format!("; {note}"));
                    }
                    if !commands.is_empty() {
                        detail.push_str(&format!("; sends {}", show_commands(&commands)));
                    }
                    if let Some(why) = result.reregister {
                        detail
                            .push_str(&format!("; asks {from} to re-register ({})", describe(why)));
                    }
                    self.record(
                        from,
                        format!("heartbeat from {from}"),
                        detail,
                        &result.changes,
                    );
                }
                let ack = Message::HeartbeatAck {
                    call,
                    reregister,
                    commands,
                };
                self.net.send(from, "heartbeat-ack", &ack);
            }
            // Replies go to datanodes, never to a receiver.
            Message::RegisterAck { .. } | Message::HeartbeatAck { .. } => return,
        }
        self.publish();
    }

    // ---- block deletion (SCM) ----

    /// SCM leaves safe mode at its first register (`hdds.scm.safemode.min.datanode`
    /// is 1; the container rule is met by that datanode's report): the block
    /// deleting service does work from the wait after it on.
    fn leave_safe_mode(&mut self, from: &str, now_ms: u64) {
        let Some(deletion) = self.deletion.as_mut() else {
            return;
        };
        if deletion.safe_mode_exit_ms.is_some() {
            return;
        }
        deletion.safe_mode_exit_ms = Some(now_ms);
        let from_ms = deletion.runs_from_ms().expect("just set");
        self.ctx.record(NodeEvent::service(
            "SCMBlockDeletingService",
            format!(
                "left safe mode ({from} registered); block deletion runs from t={}",
                fmt_ms(from_ms)
            ),
        ));
    }

    /// One run of `SCMBlockDeletingService`.
    fn run_block_deletion(&mut self) {
        let now = self.ctx.now_ms();
        let registered: BTreeSet<String> = self
            .datanodes
            .iter()
            .filter(|d| self.table.registered(d))
            .cloned()
            .collect();
        let deletion = self.deletion.as_mut().expect("SCM runs block deletion");
        deletion.next_run_ms = now + deletion.interval_ms;
        if deletion.runs_from_ms().is_none_or(|t| now < t) {
            return;
        }
        let scan = deletion.log.scan(now, &registered);
        if !scan.queued.is_empty() {
            self.persist_deletion();
        }
        for gone in &scan.timed_out {
            self.record_timed_out(gone);
        }
        for (dn, command) in &scan.queued {
            self.ctx.record(NodeEvent::service(
                "SCMBlockDeletingService",
                format!(
                    "block deleting service: deleteBlocks {} queued for {dn}",
                    show_command(command)
                ),
            ));
        }
        if !scan.queued.is_empty() || !scan.timed_out.is_empty() {
            self.publish();
        }
    }

    /// `CommandStatusReportHandler` -> `DeletedBlockLogImpl.onMessage`, for a
    /// processed heartbeat. Returns notes for the heartbeat's trail line.
    fn on_command_statuses(&mut self, from: &str, csrs: &[Csr], now_ms: u64) -> Vec<String> {
        let Some(deletion) = self.deletion.as_mut() else {
            return Vec::new();
        };
        let results: Vec<(u64, StatusResult)> = csrs
            .iter()
            .map(|csr| (csr.command, deletion.log.on_status(from, csr, now_ms)))
            .collect();
        if results.iter().any(|(_, r)| !r.committed.is_empty()) {
            self.persist_deletion();
        }
        let mut notes = Vec::new();
        for (command, result) in results {
            notes.extend(describe_status(command, &result));
            for gone in &result.timed_out {
                self.record_timed_out(gone);
            }
        }
        notes
    }

    fn take_commands(&mut self, from: &str, now_ms: u64) -> Vec<DeleteBlocksCommand> {
        match self.deletion.as_mut() {
            Some(deletion) => deletion.log.take_commands(from, now_ms),
            None => Vec::new(),
        }
    }

    fn record_timed_out(&self, gone: &TimedOut) {
        let txs: Vec<u64> = gone.txs.iter().copied().collect();
        let timeout = self.deletion.as_ref().map_or(0, |d| d.command_timeout_ms);
        self.ctx.note(
            format!(
                "deleteBlocks cmd{} to {} has had no status for over {}: record dropped; {} may be sent again",
                gone.command,
                gone.datanode,
                fmt_ms(timeout),
                show_txs(&txs)
            ),
        );
    }

    fn persist_deletion(&self) {
        let deletion = self.deletion.as_ref().expect("SCM");
        let bytes = serde_json::to_vec(deletion.log.durable()).expect("serializes");
        self.ctx
            .disk()
            .write_atomic(DELETED_BLOCKS_FILE, &bytes)
            .expect("the simulated disk takes the write");
    }

    fn logged_txs(&self) -> String {
        let logged: Vec<u64> = self
            .deletion
            .as_ref()
            .map(|d| d.log.durable().log.iter().copied().collect())
            .unwrap_or_default();
        show_txs(&logged)
    }

    // ---- trail and observation ----

    /// A report the receiver processed: the replicas it changed are its keys.
    fn record(&self, datanode: &str, what: String, text: String, changes: &[Change]) {
        let keys = changes
            .iter()
            .map(|c| replica_key(datanode, c.container))
            .collect();
        self.ctx.record(NodeEvent::Apply {
            term: None,
            index: None,
            what,
            result: ApplyResult::Ok,
            keys,
            text,
        });
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
                facts.insert(format!("regressions.{dn}"), stats.regressions.to_string());
                if let Some(r) = &stats.first_regression {
                    facts.insert(format!("first_regression.{dn}"), describe_regression(r));
                }
            }
            if let Some(acked) = self.table.acked(dn) {
                let ids: Vec<String> = acked.iter().map(u64::to_string).collect();
                facts.insert(format!("acked.{dn}"), ids.join(","));
            }
            if let Some(deletion) = &self.deletion {
                let commands = deletion_commands(&deletion.log, dn);
                facts.insert(format!("deletion_commands.{dn}"), commands);
            }
        }
        if let Some(deletion) = &self.deletion {
            let durable = deletion.log.durable();
            let logged: Vec<String> = durable.log.iter().map(u64::to_string).collect();
            facts.insert("log".into(), logged.join(","));
            facts.insert("txs".into(), durable.last_tx.to_string());
            if let Some(t) = deletion.runs_from_ms() {
                facts.insert("block_deletion_from_ms".into(), t.to_string());
            }
            // Work in hand: transactions not yet acknowledged by every datanode.
            pending += durable.log.len() as u64;
        }
        self.ctx.publish(Observation {
            role: Some(self.endpoint.role().into()),
            term: None,
            leader: None,
            applied: None,
            state,
            facts,
            pending,
            ..Default::default()
        });
    }
}

/// The first regression, as the `receiver_never_regresses` finding shows it.
fn describe_regression(r: &super::replicas::Regression) -> String {
    let full = r
        .fcr_state
        .map_or("no replica".to_string(), |s| s.to_string());
    format!(
        "at t={}: C{} set to {} by an ICR the datanode made (report #{} of its incarnation {}) before the full report it had already sent (report #{}, which says {full})",
        fmt_ms(r.at_ms),
        r.container,
        r.icr_state,
        r.icr_generation.count,
        r.icr_generation.incarnation,
        r.fcr_generation.count,
    )
}

/// `cmd2 [tx1, tx3]`
fn show_command(command: &DeleteBlocksCommand) -> String {
    format!("cmd{} {}", command.id, show_txs(&command.txs))
}

fn show_commands(commands: &[DeleteBlocksCommand]) -> String {
    let items: Vec<String> = commands.iter().map(show_command).collect();
    format!("deleteBlocks {}", items.join(", "))
}

/// `cmd2 SENT [tx1], cmd3 TO_BE_SENT [tx4]`: the deleteBlocks commands SCM has in
/// hand for a datanode.
fn deletion_commands(log: &DeletedBlockLog, datanode: &str) -> String {
    let Some(records) = log.records(datanode) else {
        return String::new();
    };
    let items: Vec<String> = records
        .iter()
        .map(|(id, r)| {
            let status = match r.status {
                CmdStatus::ToBeSent => "TO_BE_SENT",
                CmdStatus::Sent => "SENT",
            };
            let txs: Vec<u64> = r.txs.iter().copied().collect();
            format!("cmd{id} {status} {}", show_txs(&txs))
        })
        .collect();
    items.join(", ")
}

/// What one command status did to the deleted-block log, for the trail.
fn describe_status(command: u64, result: &StatusResult) -> Vec<String> {
    let mut notes = Vec::new();
    if !result.committed.is_empty() {
        notes.push(format!(
            "{} committed (removed from the deleted-block log)",
            show_txs(&result.committed)
        ));
    }
    if !result.acknowledged.is_empty() {
        notes.push(format!(
            "{} acknowledged, other datanodes pending",
            show_txs(&result.acknowledged)
        ));
    }
    if !result.unknown.is_empty() {
        notes.push(format!(
            "acknowledgement of {} in cmd{command} ignored: no commit entry (sent before this SCM started, or already committed)",
            show_txs(&result.unknown)
        ));
    }
    notes
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
