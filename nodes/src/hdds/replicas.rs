//! The receiver side (SCM or Recon) as a plain state machine: which datanodes are
//! registered, the replica table per container and datanode, and the command
//! statuses SCM has heard of.
//!
//! A heartbeat is processed as the heartbeat dispatcher and the per-datanode
//! report queue do it: the FCR first, then the ICRs in list order, then the CSRs.

use super::report::{ContainerState, Csr, Fcr, Generation, Icr, Reports};
use std::collections::{BTreeMap, BTreeSet};

/// How a receiver decides to ask a datanode to register again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCM: only a datanode it does not know (e.g. after an SCM restart).
    Scm,
    /// Recon (`ReconNodeManager.processHeartbeat`): also a datanode with no
    /// heartbeat on record, or silent for `outdated_ms` or more.
    Recon { outdated_ms: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replica {
    pub state: ContainerState,
    /// When this replica entry got its current state.
    pub since_ms: u64,
    /// The datanode's heartbeat count here at that time.
    pub since_heartbeat: u64,
}

/// What changed one replica entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Register(u64),
    Fcr(u64),
    Icr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub container: u64,
    pub from: Option<ContainerState>,
    pub to: Option<ContainerState>,
    pub cause: Cause,
    /// An ICR that says otherwise than the FCR of the same heartbeat about this
    /// container (the FCR is applied first, so the ICR wins).
    pub over_fcr: bool,
}

/// Why a receiver asked for a re-register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reregister {
    /// Not registered here: the heartbeat's reports were not processed.
    Unregistered,
    /// Recon: no heartbeat on record since it started.
    FirstHeartbeat,
    /// Recon: silent for this long (>= the outdated threshold).
    Silent { gap_ms: u64 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeartbeatResult {
    pub reregister: Option<Reregister>,
    pub changes: Vec<Change>,
    pub acked: Vec<u64>,
}

/// Per-datanode bookkeeping shown in facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatanodeStats {
    pub heartbeats: u64,
    pub registers: u64,
    pub reregisters: u64,
    pub last_fcr_ms: Option<u64>,
    /// ICRs applied over the same heartbeat's FCR, saying otherwise than it.
    pub icrs_over_fcr: u64,
    /// Heartbeats after which a container's replica came from an incremental
    /// report made before the newest full report already applied, saying
    /// otherwise than that full report: the receiver went back in time.
    pub regressions: u64,
    /// The first such regression, for the finding.
    pub first_regression: Option<Regression>,
}

/// A replica set by an incremental report older than the full report it overrode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regression {
    pub at_ms: u64,
    pub container: u64,
    /// What the stale ICR said, and when it was made.
    pub icr_state: ContainerState,
    pub icr_generation: Generation,
    /// What the newer full report said (`None`: no replica), and when it was made.
    pub fcr_state: Option<ContainerState>,
    pub fcr_generation: Generation,
}

#[derive(Clone, Debug)]
pub struct ReplicaTable {
    policy: Policy,
    registered: BTreeSet<String>,
    last_heartbeat_ms: BTreeMap<String, u64>,
    replicas: BTreeMap<String, BTreeMap<u64, Replica>>,
    /// Command ids whose status reports arrived (SCM's command status handler).
    acked: BTreeMap<String, BTreeSet<u64>>,
    stats: BTreeMap<String, DatanodeStats>,
    /// The newest full report (FCR or register report) applied per datanode, by
    /// its ghost generation (for the regression check).
    newest_full: BTreeMap<String, (Generation, BTreeMap<u64, ContainerState>)>,
}

impl ReplicaTable {
    pub fn new(policy: Policy) -> Self {
        ReplicaTable {
            policy,
            registered: BTreeSet::new(),
            last_heartbeat_ms: BTreeMap::new(),
            replicas: BTreeMap::new(),
            acked: BTreeMap::new(),
            stats: BTreeMap::new(),
            newest_full: BTreeMap::new(),
        }
    }

    pub fn registered(&self, datanode: &str) -> bool {
        self.registered.contains(datanode)
    }

    pub fn view(&self, datanode: &str) -> Option<&BTreeMap<u64, Replica>> {
        self.replicas.get(datanode)
    }

    pub fn acked(&self, datanode: &str) -> Option<&BTreeSet<u64>> {
        self.acked.get(datanode)
    }

    pub fn stats(&self, datanode: &str) -> Option<&DatanodeStats> {
        self.stats.get(datanode)
    }

    /// A register request: its container report is handled like an FCR.
    pub fn register(&mut self, datanode: &str, fcr: &Fcr, now_ms: u64) -> Vec<Change> {
        self.registered.insert(datanode.to_string());
        let stats = self.stats.entry(datanode.to_string()).or_default();
        stats.registers += 1;
        stats.last_fcr_ms = Some(now_ms);
        let stamp = (now_ms, stats.heartbeats);
        self.note_full(datanode, fcr);
        self.apply_fcr(datanode, fcr, Cause::Register(fcr.id), stamp)
    }

    /// Remember `fcr` as the newest full report of `datanode` if it is newer.
    fn note_full(&mut self, datanode: &str, fcr: &Fcr) {
        let newer = self
            .newest_full
            .get(datanode)
            .is_none_or(|(g, _)| *g < fcr.generation);
        if newer {
            self.newest_full.insert(
                datanode.to_string(),
                (fcr.generation, fcr.containers.clone()),
            );
        }
    }

    /// After a heartbeat's reports: a container whose last ICR here was made
    /// before the newest full report already applied, and says otherwise than
    /// it, has gone back in time (HDDS-17062's phantom replica is one).
    fn check_regressions(&mut self, datanode: &str, icrs: &[Icr], now_ms: u64) {
        let Some((full_generation, full)) = self.newest_full.get(datanode) else {
            return;
        };
        let mut last: BTreeMap<u64, &Icr> = BTreeMap::new();
        for icr in icrs {
            last.insert(icr.container, icr);
        }
        let mut found = Vec::new();
        for (container, icr) in last {
            if icr.generation == Generation::default() || icr.generation >= *full_generation {
                continue;
            }
            let in_full = full.get(&container).copied();
            let agrees = match icr.state {
                ContainerState::Deleted => in_full.is_none(),
                state @ (ContainerState::Open
                | ContainerState::Closed
                | ContainerState::Unhealthy) => in_full == Some(state),
            };
            if !agrees {
                found.push(Regression {
                    at_ms: now_ms,
                    container,
                    icr_state: icr.state,
                    icr_generation: icr.generation,
                    fcr_state: in_full,
                    fcr_generation: *full_generation,
                });
            }
        }
        if found.is_empty() {
            return;
        }
        let stats = self.stats.entry(datanode.to_string()).or_default();
        stats.regressions += found.len() as u64;
        if stats.first_regression.is_none() {
            stats.first_regression = found.into_iter().next();
        }
    }

    pub fn heartbeat(&mut self, datanode: &str, reports: &Reports, now_ms: u64) -> HeartbeatResult {
        let mut result = HeartbeatResult::default();
        if !self.registered(datanode) {
            result.reregister = Some(Reregister::Unregistered);
            return result;
        }
        result.reregister = self.check_silence(datanode, now_ms);
        let stats = self.stats.entry(datanode.to_string()).or_default();
        stats.heartbeats += 1;
        if result.reregister.is_some() {
            stats.reregisters += 1;
        }
        // Recon still dispatches the reports of a heartbeat it answers with a
        // re-register command.
        let stamp = (now_ms, stats.heartbeats);
        if let Some(fcr) = &reports.fcr {
            stats.last_fcr_ms = Some(now_ms);
            self.note_full(datanode, fcr);
            let changes = self.apply_fcr(datanode, fcr, Cause::Fcr(fcr.id), stamp);
            result.changes.extend(changes);
        }
        for icr in &reports.icrs {
            let over_fcr = reports
                .fcr
                .as_ref()
                .is_some_and(|fcr| contradicts(fcr, icr));
            if over_fcr {
                self.stats
                    .entry(datanode.to_string())
                    .or_default()
                    .icrs_over_fcr += 1;
            }
            if let Some(change) = self.apply_icr(datanode, icr, over_fcr, stamp) {
                result.changes.push(change);
            }
        }
        self.check_regressions(datanode, &reports.icrs, now_ms);
        result.acked = self.apply_csrs(datanode, &reports.csrs);
        result
    }

    fn check_silence(&mut self, datanode: &str, now_ms: u64) -> Option<Reregister> {
        let Policy::Recon { outdated_ms } = self.policy else {
            return None;
        };
        let last = self.last_heartbeat_ms.insert(datanode.to_string(), now_ms);
        match last {
            None => Some(Reregister::FirstHeartbeat),
            Some(last) if now_ms.saturating_sub(last) >= outdated_ms => Some(Reregister::Silent {
                gap_ms: now_ms - last,
            }),
            Some(_) => None,
        }
    }

    /// The FCR handler: upsert every reported replica, remove the ones not reported.
    /// `stamp`: (now, the datanode's heartbeat count), for the entries it sets.
    fn apply_fcr(&mut self, datanode: &str, fcr: &Fcr, cause: Cause, stamp: Stamp) -> Vec<Change> {
        let table = self.replicas.entry(datanode.to_string()).or_default();
        let mut changes = Vec::new();
        let gone: Vec<u64> = table
            .keys()
            .filter(|c| !fcr.containers.contains_key(c))
            .copied()
            .collect();
        for container in gone {
            let old = table.remove(&container).expect("listed above");
            changes.push(Change {
                container,
                from: Some(old.state),
                to: None,
                cause,
                over_fcr: false,
            });
        }
        for (&container, &state) in &fcr.containers {
            assert_ne!(state, ContainerState::Deleted, "an FCR lists held replicas");
            let old = table.get(&container).map(|r| r.state);
            if old != Some(state) {
                table.insert(container, replica(state, stamp));
                changes.push(Change {
                    container,
                    from: old,
                    to: Some(state),
                    cause,
                    over_fcr: false,
                });
            }
        }
        changes
    }

    /// The ICR handler: DELETED removes the replica, any other state upserts it.
    fn apply_icr(
        &mut self,
        datanode: &str,
        icr: &Icr,
        over_fcr: bool,
        stamp: Stamp,
    ) -> Option<Change> {
        let table = self.replicas.entry(datanode.to_string()).or_default();
        let old = table.get(&icr.container).map(|r| r.state);
        let new = match icr.state {
            ContainerState::Deleted => None,
            state @ (ContainerState::Open | ContainerState::Closed | ContainerState::Unhealthy) => {
                Some(state)
            }
        };
        if old == new {
            return None;
        }
        match new {
            None => {
                table.remove(&icr.container);
            }
            Some(state) => {
                table.insert(icr.container, replica(state, stamp));
            }
        }
        Some(Change {
            container: icr.container,
            from: old,
            to: new,
            cause: Cause::Icr,
            over_fcr,
        })
    }

    /// SCM's command status handler. Recon registers no handler for command
    /// status reports: it ignores them.
    fn apply_csrs(&mut self, datanode: &str, csrs: &[Csr]) -> Vec<u64> {
        if self.policy != Policy::Scm {
            return Vec::new();
        }
        let acked = self.acked.entry(datanode.to_string()).or_default();
        csrs.iter()
            .filter(|c| acked.insert(c.command))
            .map(|c| c.command)
            .collect()
    }
}

/// (time, heartbeat count) at which a replica entry is set.
type Stamp = (u64, u64);

fn replica(state: ContainerState, (since_ms, since_heartbeat): Stamp) -> Replica {
    Replica {
        state,
        since_ms,
        since_heartbeat,
    }
}

/// Whether an ICR says otherwise than the FCR about its container.
fn contradicts(fcr: &Fcr, icr: &Icr) -> bool {
    let in_fcr = fcr.containers.get(&icr.container).copied();
    match icr.state {
        ContainerState::Deleted => in_fcr.is_some(),
        state @ (ContainerState::Open | ContainerState::Closed | ContainerState::Unhealthy) => {
            in_fcr != Some(state)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::report::ContainerState::{Closed, Deleted, Open, Unhealthy};
    use super::*;

    const RECON: Policy = Policy::Recon {
        outdated_ms: 180_000,
    };

    fn fcr(id: u64, containers: &[(u64, ContainerState)]) -> Fcr {
        Fcr {
            id,
            containers: containers.iter().copied().collect(),
            generation: Default::default(),
        }
    }

    fn icr(container: u64, state: ContainerState) -> Icr {
        Icr {
            container,
            state,
            generation: Default::default(),
        }
    }

    fn states(table: &ReplicaTable, dn: &str) -> Vec<(u64, ContainerState)> {
        table
            .view(dn)
            .map(|v| v.iter().map(|(c, r)| (*c, r.state)).collect())
            .unwrap_or_default()
    }

    fn registered(policy: Policy) -> ReplicaTable {
        let mut table = ReplicaTable::new(policy);
        table.register("dn1", &fcr(0, &[(1, Closed), (2, Open)]), 0);
        table
    }

    #[test]
    fn register_fills_the_table_and_an_fcr_replaces_the_datanodes_set() {
        let mut table = registered(Policy::Scm);
        assert_eq!(states(&table, "dn1"), vec![(1, Closed), (2, Open)]);
        let reports = Reports {
            fcr: Some(fcr(1, &[(2, Closed), (3, Closed)])),
            ..Reports::default()
        };
        let result = table.heartbeat("dn1", &reports, 30_000);
        assert_eq!(result.reregister, None);
        assert_eq!(states(&table, "dn1"), vec![(2, Closed), (3, Closed)]);
        assert_eq!(result.changes.len(), 3);
    }

    #[test]
    fn icrs_upsert_and_deleted_removes() {
        let mut table = registered(Policy::Scm);
        let reports = Reports {
            icrs: vec![icr(1, Unhealthy), icr(2, Deleted), icr(4, Closed)],
            ..Reports::default()
        };
        table.heartbeat("dn1", &reports, 30_000);
        assert_eq!(states(&table, "dn1"), vec![(1, Unhealthy), (4, Closed)]);
    }

    #[test]
    fn the_fcr_is_applied_before_the_icrs_of_the_same_heartbeat() {
        // The stale ICR after the newer FCR: the phantom replica.
        let mut table = registered(Policy::Scm);
        let reports = Reports {
            fcr: Some(fcr(1, &[(2, Open)])),
            icrs: vec![icr(1, Unhealthy)],
            ..Reports::default()
        };
        let result = table.heartbeat("dn1", &reports, 60_000);
        assert_eq!(states(&table, "dn1"), vec![(1, Unhealthy), (2, Open)]);
        let last = result.changes.last().expect("changes");
        assert!(last.over_fcr);
        assert_eq!(last.cause, Cause::Icr);
        assert_eq!(table.view("dn1").expect("view")[&1].since_ms, 60_000);
        assert_eq!(table.stats("dn1").expect("stats").icrs_over_fcr, 1);
    }

    #[test]
    fn a_stale_deleted_icr_drops_a_replica_the_fcr_reported() {
        let mut table = registered(Policy::Scm);
        let reports = Reports {
            fcr: Some(fcr(1, &[(1, Closed), (2, Open)])),
            icrs: vec![icr(1, Deleted)],
            ..Reports::default()
        };
        let result = table.heartbeat("dn1", &reports, 60_000);
        assert_eq!(states(&table, "dn1"), vec![(2, Open)]);
        assert!(result.changes.iter().any(|c| c.over_fcr));
    }

    #[test]
    fn an_icr_agreeing_with_the_fcr_is_not_over_it() {
        let mut table = registered(Policy::Scm);
        let reports = Reports {
            fcr: Some(fcr(1, &[(1, Unhealthy)])),
            icrs: vec![icr(1, Unhealthy), icr(2, Deleted)],
            ..Reports::default()
        };
        table.heartbeat("dn1", &reports, 60_000);
        assert_eq!(table.stats("dn1").expect("stats").icrs_over_fcr, 0);
    }

    #[test]
    fn an_unchanged_state_keeps_its_since_time() {
        let mut table = registered(Policy::Scm);
        let reports = Reports {
            fcr: Some(fcr(1, &[(1, Closed), (2, Open)])),
            ..Reports::default()
        };
        let result = table.heartbeat("dn1", &reports, 90_000);
        assert!(result.changes.is_empty());
        assert_eq!(table.view("dn1").expect("view")[&1].since_ms, 0);
    }

    #[test]
    fn csrs_are_acked_once() {
        let mut table = registered(Policy::Scm);
        let reports = Reports {
            csrs: vec![Csr {
                command: 7,
                txs: vec![1],
            }],
            ..Reports::default()
        };
        assert_eq!(table.heartbeat("dn1", &reports, 1).acked, vec![7]);
        assert!(table.heartbeat("dn1", &reports, 2).acked.is_empty());
        assert!(table.acked("dn1").expect("acked").contains(&7));
    }

    #[test]
    fn recon_ignores_command_status_reports() {
        let mut table = registered(RECON);
        let reports = Reports {
            csrs: vec![Csr {
                command: 7,
                txs: vec![1],
            }],
            ..Reports::default()
        };
        assert!(table.heartbeat("dn1", &reports, 1).acked.is_empty());
        assert!(table.acked("dn1").is_none());
    }

    #[test]
    fn an_unregistered_datanode_is_asked_to_register_and_not_processed() {
        let mut table = ReplicaTable::new(Policy::Scm);
        let reports = Reports {
            icrs: vec![icr(1, Closed)],
            ..Reports::default()
        };
        let result = table.heartbeat("dn1", &reports, 0);
        assert_eq!(result.reregister, Some(Reregister::Unregistered));
        assert!(table.view("dn1").is_none());
    }

    #[test]
    fn scm_never_asks_a_registered_datanode_to_register_again() {
        let mut table = registered(Policy::Scm);
        let empty = Reports::default();
        assert_eq!(table.heartbeat("dn1", &empty, 1_000).reregister, None);
        assert_eq!(table.heartbeat("dn1", &empty, 3_600_000).reregister, None);
    }

    #[test]
    fn recon_asks_on_the_first_heartbeat_and_after_three_silent_intervals() {
        let mut table = registered(RECON);
        let empty = Reports::default();
        assert_eq!(
            table.heartbeat("dn1", &empty, 60_000).reregister,
            Some(Reregister::FirstHeartbeat)
        );
        assert_eq!(table.heartbeat("dn1", &empty, 120_000).reregister, None);
        // One failed heartbeat: a 120 s gap, no re-register.
        assert_eq!(table.heartbeat("dn1", &empty, 240_000).reregister, None);
        assert_eq!(
            table.heartbeat("dn1", &empty, 420_000).reregister,
            Some(Reregister::Silent { gap_ms: 180_000 })
        );
        assert_eq!(table.stats("dn1").expect("stats").reregisters, 2);
    }

    #[test]
    fn recon_still_processes_the_reports_of_a_heartbeat_it_answers_with_reregister() {
        let mut table = registered(RECON);
        let reports = Reports {
            fcr: Some(fcr(1, &[])),
            icrs: vec![icr(1, Unhealthy)],
            ..Reports::default()
        };
        let result = table.heartbeat("dn1", &reports, 60_000);
        assert_eq!(result.reregister, Some(Reregister::FirstHeartbeat));
        assert_eq!(states(&table, "dn1"), vec![(1, Unhealthy)]);
        // The register's fresh report repairs it.
        table.register("dn1", &fcr(2, &[]), 60_100);
        assert_eq!(states(&table, "dn1"), vec![]);
    }

    #[test]
    fn datanodes_are_kept_apart() {
        let mut table = registered(Policy::Scm);
        table.register("dn2", &fcr(0, &[(9, Closed)]), 0);
        let reports = Reports {
            fcr: Some(fcr(1, &[])),
            ..Reports::default()
        };
        table.heartbeat("dn2", &reports, 1);
        assert_eq!(states(&table, "dn1"), vec![(1, Closed), (2, Open)]);
        assert_eq!(states(&table, "dn2"), vec![]);
    }

    fn made(count: u64) -> Generation {
        Generation {
            incarnation: 0,
            count,
        }
    }

    fn icr_made(container: u64, state: ContainerState, count: u64) -> Icr {
        Icr {
            generation: made(count),
            ..icr(container, state)
        }
    }

    fn fcr_made(id: u64, containers: &[(u64, ContainerState)], count: u64) -> Fcr {
        Fcr {
            generation: made(count),
            ..fcr(id, containers)
        }
    }

    #[test]
    fn an_icr_made_before_the_newer_fcr_that_overrides_it_is_a_regression() {
        // HDDS-17062: ICR#1 (C1 UNHEALTHY, made 2nd) put back after the FCR made
        // 4th (no C1) and sent behind it.
        let mut table = ReplicaTable::new(RECON);
        table.register("dn1", &fcr_made(0, &[(1, Closed)], 1), 0);
        let reports = Reports {
            fcr: Some(fcr_made(1, &[], 4)),
            icrs: vec![icr_made(1, Unhealthy, 2)],
            ..Reports::default()
        };
        table.heartbeat("dn1", &reports, 120_000);
        let stats = table.stats("dn1").expect("stats");
        assert_eq!(stats.regressions, 1);
        let r = stats.first_regression.as_ref().expect("recorded");
        assert_eq!(
            (r.container, r.icr_state, r.fcr_state),
            (1, Unhealthy, None)
        );
        assert_eq!((r.icr_generation, r.fcr_generation), (made(2), made(4)));
    }

    #[test]
    fn newer_icrs_and_older_icrs_that_end_where_the_fcr_is_are_not_regressions() {
        let mut table = ReplicaTable::new(RECON);
        table.register("dn1", &fcr_made(0, &[(1, Closed)], 1), 0);
        // A change after the FCR was taken: the ICR is newer and wins, rightly.
        let newer = Reports {
            fcr: Some(fcr_made(1, &[(1, Closed)], 2)),
            icrs: vec![icr_made(1, Unhealthy, 3)],
            ..Reports::default()
        };
        table.heartbeat("dn1", &newer, 60_000);
        // After a register report (made 6th, which drops no queued ICR), the
        // older ICRs follow it; their last word for C1 is what the register said.
        table.register("dn1", &fcr_made(0, &[], 6), 70_000);
        let older = Reports {
            icrs: vec![icr_made(1, Unhealthy, 4), icr_made(1, Deleted, 5)],
            ..Reports::default()
        };
        table.heartbeat("dn1", &older, 80_000);
        assert_eq!(table.stats("dn1").expect("stats").regressions, 0);
        assert_eq!(states(&table, "dn1"), vec![]);
    }
}
