//! SCM's block deletion as a plain state machine: the deleted-block log
//! (`DeletedBlockLogImpl`, durable), the status of the deleteBlocks commands sent
//! for it (`SCMDeletedBlockTransactionStatusManager`, volatile), and the per-datanode
//! command queue that heartbeat responses drain (`CommandQueue` of the node manager,
//! volatile).
//!
//! The guarantee it gives is per transaction, not per command: a transaction stays
//! in the durable log until every datanode holding its container has acknowledged
//! it in a command status report. A command whose status never arrives (the report
//! was lost, or SCM restarted and forgot the command) is not retried as such: its
//! record times out (or is gone), and the next scan sends the transaction again in
//! a new command. The datanode executes a transaction it has already executed as a
//! retry and acknowledges it again.

use super::report::{Csr, DeleteBlocksCommand};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Bound on the transactions one SCM allocates over its whole life (a run).
pub const TXS_MAX: u64 = 4096;
/// Bound on the transactions of one deleteBlocks command (the real bound is
/// `hdds.scm.block.deletion.per-interval.max` blocks per scan).
pub const TXS_PER_COMMAND_MAX: usize = 64;
/// `SCMBlockDeletingService.getDatanodesWithinCommandLimit`: a datanode gets a
/// new deleteBlocks command only while fewer than this many wait in its queue.
pub const QUEUED_COMMANDS_MAX: usize = 2;

/// What SCM keeps in its DB (through Ratis): the deleted-block transactions not yet
/// acknowledged by every datanode, the transaction id sequence, and the command id
/// sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Durable {
    /// The last transaction id allocated (`SequenceIdGenerator`, `delTxnId`).
    pub last_tx: u64,
    /// The last command id used. Real command ids come from a counter seeded with
    /// the clock at start (`HddsIdFactory`), so they do not repeat across
    /// restarts; a durable counter gives the same uniqueness with readable ids.
    pub last_command: u64,
    /// `deletedBlocksTXTable`: transactions not yet committed.
    pub log: BTreeSet<u64>,
}

/// `CmdStatus` of a deleteBlocks command SCM created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmdStatus {
    /// Queued for the datanode, not yet taken by a heartbeat response.
    ToBeSent,
    /// In a heartbeat response; no status from the datanode yet.
    Sent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmdRecord {
    pub txs: BTreeSet<u64>,
    pub status: CmdStatus,
    pub updated_ms: u64,
}

/// A command whose record timed out: its transactions may be sent again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOut {
    pub datanode: String,
    pub command: u64,
    pub txs: BTreeSet<u64>,
}

/// What one run of the block deleting service did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    pub timed_out: Vec<TimedOut>,
    /// New commands, each queued for its datanode.
    pub queued: Vec<(String, DeleteBlocksCommand)>,
}

/// What a command status report did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusResult {
    /// Transactions acknowledged by their last datanode: removed from the log.
    pub committed: Vec<u64>,
    /// Acknowledged by this datanode, still waiting for others.
    pub acknowledged: Vec<u64>,
    /// Acknowledgements with no commit entry here (`Corresponding entry not found`:
    /// a retried command's response, or one sent before this SCM started).
    pub unknown: Vec<u64>,
    /// Whether the command had a record here (it is removed now).
    pub had_record: bool,
    pub timed_out: Vec<TimedOut>,
}

#[derive(Clone, Debug)]
pub struct DeletedBlockLog {
    durable: Durable,
    /// The datanodes that hold every transaction's container: all of them must
    /// acknowledge it (`commitTransactions`: `dnsWithCommittedTxn.containsAll`).
    datanodes: Vec<String>,
    timeout_ms: u64,
    /// `scmCmdStatusRecord`: per datanode, per command id.
    records: BTreeMap<String, BTreeMap<u64, CmdRecord>>,
    /// `transactionToDNsCommitMap`: the datanodes that acknowledged each
    /// transaction sent by this SCM incarnation.
    acked_by: BTreeMap<u64, BTreeSet<String>>,
    /// The node manager's command queue (deleteBlocks commands only).
    queues: BTreeMap<String, VecDeque<DeleteBlocksCommand>>,
}

impl DeletedBlockLog {
    pub fn new(durable: Durable, datanodes: Vec<String>, timeout_ms: u64) -> Self {
        assert!(durable.last_tx <= TXS_MAX, "the durable log stays bounded");
        DeletedBlockLog {
            durable,
            datanodes,
            timeout_ms,
            records: BTreeMap::new(),
            acked_by: BTreeMap::new(),
            queues: BTreeMap::new(),
        }
    }

    pub fn durable(&self) -> &Durable {
        &self.durable
    }

    /// `addTransactions`: OM asked to delete a key's blocks. The caller persists.
    pub fn add_transaction(&mut self) -> Result<u64, String> {
        if self.durable.last_tx >= TXS_MAX {
            return Err(format!("at most {TXS_MAX} deleted-block transactions"));
        }
        self.durable.last_tx += 1;
        let tx = self.durable.last_tx;
        self.durable.log.insert(tx);
        Ok(tx)
    }

    /// One run of `SCMBlockDeletingService`: time out silent commands, then send
    /// every logged transaction to each datanode that neither acknowledged it nor
    /// has a command for it in hand. A transaction goes out only when every datanode
    /// of its container can take it (`checkInadequateReplica`). The caller persists
    /// when `queued` is not empty (the command id sequence moved).
    pub fn scan(&mut self, now_ms: u64, registered: &BTreeSet<String>) -> Scan {
        let timed_out = self.clean_timed_out(now_ms, None);
        let eligible: BTreeSet<&String> = self
            .datanodes
            .iter()
            .filter(|dn| registered.contains(*dn) && self.queued(dn) < QUEUED_COMMANDS_MAX)
            .collect();
        let mut picked: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        if eligible.len() == self.datanodes.len() {
            for &tx in &self.durable.log {
                for dn in &self.datanodes {
                    let list = picked.entry(dn.clone()).or_default();
                    if list.len() < TXS_PER_COMMAND_MAX && !self.in_hand(dn, tx) {
                        list.push(tx);
                    }
                }
            }
        }
        let mut queued = Vec::new();
        for (dn, txs) in picked.into_iter().filter(|(_, txs)| !txs.is_empty()) {
            self.durable.last_command += 1;
            let command = DeleteBlocksCommand {
                id: self.durable.last_command,
                txs,
            };
            self.record_created(&dn, &command, now_ms);
            self.queues
                .entry(dn.clone())
                .or_default()
                .push_back(command.clone());
            queued.push((dn, command));
        }
        Scan { timed_out, queued }
    }

    /// The heartbeat response of a registered datanode drains its queue; each
    /// command becomes SENT (`onSent`).
    pub fn take_commands(&mut self, datanode: &str, now_ms: u64) -> Vec<DeleteBlocksCommand> {
        let commands: Vec<DeleteBlocksCommand> = self
            .queues
            .get_mut(datanode)
            .map(|q| q.drain(..).collect())
            .unwrap_or_default();
        for command in &commands {
            if let Some(record) = self.record_mut(datanode, command.id) {
                record.status = CmdStatus::Sent;
                record.updated_ms = now_ms;
            }
        }
        commands
    }

    /// `DeletedBlockLogImpl.onMessage` for an EXECUTED status: commit the
    /// acknowledged transactions, drop the command's record, and time out this
    /// datanode's silent commands.
    pub fn on_status(&mut self, datanode: &str, csr: &Csr, now_ms: u64) -> StatusResult {
        let mut result = StatusResult::default();
        for &tx in &csr.txs {
            let Some(acked) = self.acked_by.get_mut(&tx) else {
                result.unknown.push(tx);
                continue;
            };
            acked.insert(datanode.to_string());
            if self.datanodes.iter().all(|dn| acked.contains(dn)) {
                self.acked_by.remove(&tx);
                self.durable.log.remove(&tx);
                result.committed.push(tx);
            } else {
                result.acknowledged.push(tx);
            }
        }
        result.had_record = self
            .records
            .get_mut(datanode)
            .and_then(|r| r.remove(&csr.command))
            .is_some();
        result.timed_out = self.clean_timed_out(now_ms, Some(datanode));
        result
    }

    pub fn queued(&self, datanode: &str) -> usize {
        self.queues.get(datanode).map_or(0, VecDeque::len)
    }

    pub fn records(&self, datanode: &str) -> Option<&BTreeMap<u64, CmdRecord>> {
        self.records.get(datanode)
    }

    /// `isDuplication`: acknowledged by this datanode, or in a command it has in hand.
    fn in_hand(&self, datanode: &str, tx: u64) -> bool {
        let acked = self
            .acked_by
            .get(&tx)
            .is_some_and(|dns| dns.contains(datanode));
        let in_command = self
            .records
            .get(datanode)
            .is_some_and(|r| r.values().any(|c| c.txs.contains(&tx)));
        acked || in_command
    }

    /// `recordTransactionCreated`.
    fn record_created(&mut self, datanode: &str, command: &DeleteBlocksCommand, now_ms: u64) {
        let record = CmdRecord {
            txs: command.txs.iter().copied().collect(),
            status: CmdStatus::ToBeSent,
            updated_ms: now_ms,
        };
        self.records
            .entry(datanode.to_string())
            .or_default()
            .insert(command.id, record);
        for &tx in &command.txs {
            self.acked_by.entry(tx).or_default();
        }
    }

    fn record_mut(&mut self, datanode: &str, command: u64) -> Option<&mut CmdRecord> {
        self.records.get_mut(datanode)?.get_mut(&command)
    }

    /// `cleanTimeoutSCMCommand`: SENT commands with no update for longer than the
    /// timeout lose their record (TO_BE_SENT ones wait in the queue and do not).
    fn clean_timed_out(&mut self, now_ms: u64, only: Option<&str>) -> Vec<TimedOut> {
        let mut gone = Vec::new();
        for (dn, records) in &mut self.records {
            if only.is_some_and(|o| o != dn) {
                continue;
            }
            let stale: Vec<u64> = records
                .iter()
                .filter(|(_, r)| {
                    r.status == CmdStatus::Sent
                        && now_ms.saturating_sub(r.updated_ms) > self.timeout_ms
                })
                .map(|(id, _)| *id)
                .collect();
            for command in stale {
                let record = records.remove(&command).expect("listed");
                gone.push(TimedOut {
                    datanode: dn.clone(),
                    command,
                    txs: record.txs,
                });
            }
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT_MS: u64 = 300_000;

    fn dns(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn log(datanodes: &[&str]) -> DeletedBlockLog {
        let list = datanodes.iter().map(|n| n.to_string()).collect();
        DeletedBlockLog::new(Durable::default(), list, TIMEOUT_MS)
    }

    fn csr(command: &DeleteBlocksCommand) -> Csr {
        Csr {
            command: command.id,
            txs: command.txs.clone(),
        }
    }

    #[test]
    fn a_transaction_is_sent_acknowledged_and_committed() {
        let mut log = log(&["dn1"]);
        assert_eq!(log.add_transaction(), Ok(1));
        let scan = log.scan(0, &dns(&["dn1"]));
        let (dn, command) = scan.queued[0].clone();
        assert_eq!(
            (dn.as_str(), command.id, command.txs.clone()),
            ("dn1", 1, vec![1])
        );
        assert_eq!(log.take_commands("dn1", 100), vec![command.clone()]);
        assert_eq!(
            log.records("dn1").expect("record")[&1].status,
            CmdStatus::Sent
        );
        let status = log.on_status("dn1", &csr(&command), 200);
        assert_eq!(status.committed, vec![1]);
        assert!(status.had_record);
        assert!(log.durable().log.is_empty());
        assert_eq!(log.durable().last_tx, 1);
        assert!(log.scan(60_000, &dns(&["dn1"])).queued.is_empty());
    }

    #[test]
    fn a_transaction_in_hand_is_not_sent_twice() {
        let mut log = log(&["dn1"]);
        log.add_transaction().expect("room");
        assert_eq!(log.scan(0, &dns(&["dn1"])).queued.len(), 1);
        // Still queued: not again.
        assert!(log.scan(60_000, &dns(&["dn1"])).queued.is_empty());
        log.take_commands("dn1", 60_100);
        // Sent, no status yet: not again until the record times out.
        assert!(log.scan(120_000, &dns(&["dn1"])).queued.is_empty());
        let later = log.scan(60_100 + TIMEOUT_MS + 1, &dns(&["dn1"]));
        assert_eq!(later.timed_out.len(), 1);
        assert_eq!(later.timed_out[0].txs, [1].into());
        assert_eq!(later.queued.len(), 1, "sent again in a new command");
        assert_eq!(later.queued[0].1.id, 2);
    }

    #[test]
    fn a_lost_status_is_made_good_by_the_retry() {
        let mut log = log(&["dn1"]);
        log.add_transaction().expect("room");
        log.scan(0, &dns(&["dn1"]));
        log.take_commands("dn1", 0);
        // cmd1's status never arrives; after the timeout cmd2 carries tx1.
        let retry = log.scan(TIMEOUT_MS + 60_000, &dns(&["dn1"]));
        let command = retry.queued[0].1.clone();
        log.take_commands("dn1", TIMEOUT_MS + 60_000);
        let status = log.on_status("dn1", &csr(&command), TIMEOUT_MS + 60_100);
        assert_eq!(status.committed, vec![1]);
    }

    #[test]
    fn a_late_status_of_a_timed_out_command_still_commits() {
        // The commit entry outlives the command's record.
        let mut log = log(&["dn1"]);
        log.add_transaction().expect("room");
        let first = log.scan(0, &dns(&["dn1"])).queued[0].1.clone();
        log.take_commands("dn1", 0);
        log.scan(TIMEOUT_MS + 1, &dns(&["dn1"]));
        let status = log.on_status("dn1", &csr(&first), TIMEOUT_MS + 2);
        assert!(!status.had_record);
        assert_eq!(status.committed, vec![1]);
    }

    #[test]
    fn a_restarted_scm_resends_what_its_durable_log_holds() {
        let mut log = log(&["dn1"]);
        log.add_transaction().expect("room");
        let before = log.scan(0, &dns(&["dn1"])).queued[0].1.clone();
        log.take_commands("dn1", 0);
        // Restart: the durable part survives, the statuses do not.
        let durable = log.durable().clone();
        let mut log = DeletedBlockLog::new(durable, vec!["dn1".into()], TIMEOUT_MS);
        // The old command's acknowledgement has no commit entry here.
        let late = log.on_status("dn1", &csr(&before), 1_000);
        assert_eq!(late.unknown, vec![1]);
        assert!(late.committed.is_empty());
        let again = log.scan(2_000, &dns(&["dn1"])).queued[0].1.clone();
        assert_eq!(again.id, 2, "command ids do not repeat across restarts");
        log.take_commands("dn1", 2_000);
        assert_eq!(log.on_status("dn1", &csr(&again), 3_000).committed, vec![1]);
    }

    #[test]
    fn every_datanode_must_acknowledge_and_all_must_be_able_to_take_it() {
        let mut log = log(&["dn1", "dn2"]);
        log.add_transaction().expect("room");
        assert!(
            log.scan(0, &dns(&["dn1"])).queued.is_empty(),
            "dn2 is not registered: the transaction waits"
        );
        let scan = log.scan(60_000, &dns(&["dn1", "dn2"]));
        assert_eq!(scan.queued.len(), 2);
        let one = log.take_commands("dn1", 60_000);
        log.take_commands("dn2", 60_000);
        let status = log.on_status("dn1", &csr(&one[0]), 60_100);
        assert_eq!(status.acknowledged, vec![1]);
        assert!(log.durable().log.contains(&1));
        // dn1 acknowledged: a retry goes to dn2 only.
        let retry = log.scan(60_000 + TIMEOUT_MS + 1, &dns(&["dn1", "dn2"]));
        let targets: Vec<&str> = retry.queued.iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(targets, vec!["dn2"]);
        let two = log.take_commands("dn2", 400_000);
        assert_eq!(
            log.on_status("dn2", &csr(&two[0]), 400_100).committed,
            vec![1]
        );
    }

    #[test]
    fn queues_commands_and_the_log_are_bounded() {
        let mut log = log(&["dn1"]);
        for _ in 0..TXS_PER_COMMAND_MAX + 1 {
            log.add_transaction().expect("room");
        }
        let first = log.scan(0, &dns(&["dn1"]));
        assert_eq!(first.queued[0].1.txs.len(), TXS_PER_COMMAND_MAX);
        log.scan(1, &dns(&["dn1"]));
        assert_eq!(log.queued("dn1"), QUEUED_COMMANDS_MAX);
        assert!(
            log.scan(2, &dns(&["dn1"])).queued.is_empty(),
            "the queue is full"
        );
        let mut full = DeletedBlockLog::new(
            Durable {
                last_tx: TXS_MAX,
                ..Durable::default()
            },
            vec!["dn1".into()],
            TIMEOUT_MS,
        );
        assert!(full.add_transaction().is_err());
    }
}
