//! The datanode's `StateContext` report bookkeeping as a plain state machine: the
//! incremental report queue per endpoint, the latest full container report and its
//! per-endpoint "ready" flag, and the HDDS-17062 mark.
//!
//! One `&mut self` call is one critical section under the queue lock of the real
//! `StateContext` (`synchronized (incrementalReportsQueue)`): the datanode shell
//! never holds this across an await.

use super::report::{Csr, Endpoint, Fcr, Icr, Report, Reports};
use std::collections::{BTreeMap, VecDeque};

/// Bound on each endpoint's queue. The real queue is unbounded; a container event
/// that finds a queue full is refused (see `has_room`).
pub const QUEUE_REPORTS_MAX: usize = 4096;
/// Bound on the incremental reports one heartbeat takes (the real code takes all).
pub const REPORTS_PER_HEARTBEAT_MAX: usize = 256;

/// What `put_back` did with the reports of a failed heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PutBack {
    /// Returned to the head of the queue.
    pub icrs: Vec<Icr>,
    pub csrs: Vec<Csr>,
    /// Left out because a newer FCR covers them (fixed mode only).
    pub dropped_icrs: Vec<Icr>,
    /// The FCR built while the heartbeat was in flight, if any (the mark).
    pub covered_by: Option<u64>,
}

#[derive(Clone, Debug)]
struct EndpointQueue {
    reports: VecDeque<Report>,
    /// The latest FCR has not been taken by a heartbeat to this endpoint yet.
    full_ready: bool,
    /// HDDS-17062's mark: `Some(fcr id)` when an FCR build dropped this endpoint's
    /// queued ICRs after its last heartbeat took them. Kept in both modes (the
    /// trail names it); only the fixed `put_back` acts on it.
    covered_by: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct StateContext {
    queues: BTreeMap<Endpoint, EndpointQueue>,
    latest_fcr: Option<Fcr>,
    /// HDDS-17062 fixed: `put_back` leaves out ICRs while the endpoint is marked.
    drop_covered_icrs: bool,
}

impl StateContext {
    pub fn new(endpoints: &[Endpoint], drop_covered_icrs: bool) -> Self {
        let queues = endpoints
            .iter()
            .map(|&ep| {
                let queue = EndpointQueue {
                    reports: VecDeque::new(),
                    full_ready: false,
                    covered_by: None,
                };
                (ep, queue)
            })
            .collect();
        StateContext {
            queues,
            latest_fcr: None,
            drop_covered_icrs,
        }
    }

    pub fn endpoints(&self) -> Vec<Endpoint> {
        self.queues.keys().copied().collect()
    }

    /// Whether every endpoint's queue can take one more report.
    pub fn has_room(&self) -> bool {
        self.queues
            .values()
            .all(|q| q.reports.len() < QUEUE_REPORTS_MAX)
    }

    /// `addIncrementalReport`: queue a report for every endpoint.
    pub fn add(&mut self, report: Report) {
        assert!(self.has_room(), "caller checks has_room first");
        for queue in self.queues.values_mut() {
            queue.reports.push_back(report.clone());
        }
    }

    /// The first half of `getFullContainerReportDiscardPendingICR`, in the same
    /// critical section as the container snapshot: drop every queued ICR (HDDS-5267)
    /// and mark every endpoint as covered by FCR `fcr_id`. Returns what was dropped.
    pub fn discard_pending_icrs(&mut self, fcr_id: u64) -> BTreeMap<Endpoint, Vec<Icr>> {
        let mut dropped = BTreeMap::new();
        for (&ep, queue) in &mut self.queues {
            let mut gone = Vec::new();
            queue.reports.retain(|report| match report {
                Report::Icr(icr) => {
                    gone.push(*icr);
                    false
                }
                Report::Csr(_) => true,
            });
            queue.covered_by = Some(fcr_id);
            dropped.insert(ep, gone);
        }
        dropped
    }

    /// `refreshFullReport`: publish the FCR to every endpoint (outside the lock in
    /// the real code, after the drop).
    pub fn refresh_full_report(&mut self, fcr: Fcr) {
        self.latest_fcr = Some(fcr);
        for queue in self.queues.values_mut() {
            queue.full_ready = true;
        }
    }

    /// `getAllAvailableReports`: the FCR if it is ready for this endpoint, then the
    /// queued reports (bounded). Taking clears the endpoint's mark: whatever an FCR
    /// built from now on drops, it drops after this heartbeat took its ICRs.
    pub fn take(&mut self, ep: Endpoint) -> Reports {
        let queue = self.queue_mut(ep);
        let mut reports = Reports::default();
        if queue.full_ready {
            queue.full_ready = false;
            reports.fcr = self.latest_fcr.clone();
        }
        let queue = self.queue_mut(ep);
        let count = queue.reports.len().min(REPORTS_PER_HEARTBEAT_MAX);
        for report in queue.reports.drain(..count) {
            match report {
                Report::Icr(icr) => reports.icrs.push(icr),
                Report::Csr(csr) => reports.csrs.push(csr),
            }
        }
        queue.covered_by = None;
        reports
    }

    /// `putBackReports` after a failed heartbeat: the CSRs, then the ICRs, back to
    /// the head of the queue; the FCR is not put back (its ready flag stays clear).
    /// Fixed (HDDS-17062): while the endpoint is marked, the ICRs are left out.
    pub fn put_back(&mut self, ep: Endpoint, icrs: Vec<Icr>, csrs: Vec<Csr>) -> PutBack {
        let drop_covered = self.drop_covered_icrs;
        let queue = self.queue_mut(ep);
        let covered_by = queue.covered_by;
        let (kept, dropped) = match covered_by {
            Some(_) if drop_covered => (Vec::new(), icrs),
            _ => (icrs, Vec::new()),
        };
        let restored = csrs
            .iter()
            .map(|c| Report::Csr(c.clone()))
            .chain(kept.iter().map(|&i| Report::Icr(i)));
        for report in restored.rev() {
            queue.reports.push_front(report);
        }
        assert!(
            queue.reports.len() <= QUEUE_REPORTS_MAX + REPORTS_PER_HEARTBEAT_MAX,
            "put-back returns at most one heartbeat's reports"
        );
        PutBack {
            icrs: kept,
            csrs,
            dropped_icrs: dropped,
            covered_by,
        }
    }

    pub fn queued(&self, ep: Endpoint) -> usize {
        self.queue(ep).reports.len()
    }

    pub fn full_ready(&self, ep: Endpoint) -> bool {
        self.queue(ep).full_ready
    }

    pub fn covered_by(&self, ep: Endpoint) -> Option<u64> {
        self.queue(ep).covered_by
    }

    fn queue(&self, ep: Endpoint) -> &EndpointQueue {
        self.queues.get(&ep).expect("a configured endpoint")
    }

    fn queue_mut(&mut self, ep: Endpoint) -> &mut EndpointQueue {
        self.queues.get_mut(&ep).expect("a configured endpoint")
    }
}

#[cfg(test)]
mod tests {
    use super::super::report::ContainerState::{Closed, Deleted, Unhealthy};
    use super::*;

    const SCM: Endpoint = Endpoint::Scm;
    const RECON: Endpoint = Endpoint::Recon;

    fn icr(container: u64, state: super::super::report::ContainerState) -> Icr {
        Icr {
            container,
            state,
            generation: Default::default(),
        }
    }

    fn fcr(id: u64, containers: &[(u64, super::super::report::ContainerState)]) -> Fcr {
        Fcr {
            id,
            containers: containers.iter().copied().collect(),
            generation: Default::default(),
        }
    }

    fn csr(command: u64) -> Csr {
        Csr {
            command,
            txs: vec![command],
        }
    }

    fn context(fixed: bool) -> StateContext {
        StateContext::new(&[SCM, RECON], fixed)
    }

    /// A heartbeat takes `ICR#1`; while its RPC is in flight the container is
    /// deleted (`ICR#2`) and an FCR is built; then the RPC fails.
    fn failed_heartbeat_with_fcr_in_flight(ctx: &mut StateContext) -> (PutBack, Reports) {
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        let taken = ctx.take(RECON);
        assert_eq!(taken.icrs, vec![icr(1, Unhealthy)]);
        ctx.add(Report::Icr(icr(1, Deleted)));
        let dropped = ctx.discard_pending_icrs(1);
        assert_eq!(dropped[&RECON], vec![icr(1, Deleted)]);
        ctx.refresh_full_report(fcr(1, &[]));
        let put_back = ctx.put_back(RECON, taken.icrs, taken.csrs);
        let next = ctx.take(RECON);
        (put_back, next)
    }

    #[test]
    fn reports_go_to_every_endpoint_in_order() {
        let mut ctx = context(true);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        ctx.add(Report::Csr(csr(7)));
        ctx.add(Report::Icr(icr(2, Closed)));
        for ep in [SCM, RECON] {
            let taken = ctx.take(ep);
            assert_eq!(taken.icrs, vec![icr(1, Unhealthy), icr(2, Closed)]);
            assert_eq!(taken.csrs, vec![csr(7)]);
            assert!(taken.fcr.is_none());
            assert_eq!(ctx.queued(ep), 0);
        }
    }

    #[test]
    fn fcr_build_drops_queued_icrs_keeps_csrs_and_marks_every_endpoint() {
        let mut ctx = context(false);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        ctx.add(Report::Csr(csr(7)));
        let dropped = ctx.discard_pending_icrs(3);
        assert_eq!(dropped[&SCM], vec![icr(1, Unhealthy)]);
        assert_eq!(dropped[&RECON], vec![icr(1, Unhealthy)]);
        assert_eq!(ctx.covered_by(SCM), Some(3));
        assert_eq!(ctx.covered_by(RECON), Some(3));
        assert_eq!(ctx.queued(RECON), 1);
        // Not ready until the refresh (which the real code does outside the lock).
        assert!(!ctx.full_ready(RECON));
        ctx.refresh_full_report(fcr(3, &[(1, Unhealthy)]));
        let taken = ctx.take(RECON);
        assert_eq!(taken.fcr, Some(fcr(3, &[(1, Unhealthy)])));
        assert!(taken.icrs.is_empty());
        assert_eq!(taken.csrs, vec![csr(7)]);
        assert_eq!(ctx.covered_by(RECON), None, "taking clears the mark");
        assert_eq!(ctx.covered_by(SCM), Some(3), "only for that endpoint");
    }

    #[test]
    fn an_fcr_is_taken_once_and_not_put_back() {
        let mut ctx = context(true);
        ctx.discard_pending_icrs(1);
        ctx.refresh_full_report(fcr(1, &[(1, Closed)]));
        let taken = ctx.take(RECON);
        assert!(taken.fcr.is_some());
        ctx.put_back(RECON, taken.icrs, taken.csrs);
        assert!(
            ctx.take(RECON).fcr.is_none(),
            "a failed heartbeat loses its FCR"
        );
        assert!(
            ctx.take(SCM).fcr.is_some(),
            "the other endpoint still has it"
        );
    }

    #[test]
    fn put_back_goes_to_the_head_csrs_then_icrs() {
        let mut ctx = context(true);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        ctx.add(Report::Csr(csr(7)));
        let taken = ctx.take(RECON);
        ctx.add(Report::Icr(icr(2, Closed)));
        let put_back = ctx.put_back(RECON, taken.icrs, taken.csrs);
        assert_eq!(put_back.covered_by, None);
        assert!(put_back.dropped_icrs.is_empty());
        let again = ctx.take(RECON);
        assert_eq!(again.icrs, vec![icr(1, Unhealthy), icr(2, Closed)]);
        assert_eq!(again.csrs, vec![csr(7)]);
        // The head holds the CSR first, as `putBackIncrementalReports` builds it.
        let mut ctx = context(true);
        ctx.put_back(RECON, vec![icr(1, Unhealthy)], vec![csr(7)]);
        assert_eq!(
            ctx.queue(RECON).reports.iter().cloned().collect::<Vec<_>>(),
            vec![Report::Csr(csr(7)), Report::Icr(icr(1, Unhealthy))]
        );
    }

    #[test]
    fn buggy_put_back_returns_icrs_older_than_the_newer_fcr() {
        let mut ctx = context(false);
        let (put_back, next) = failed_heartbeat_with_fcr_in_flight(&mut ctx);
        assert_eq!(put_back.icrs, vec![icr(1, Unhealthy)]);
        assert_eq!(put_back.covered_by, Some(1), "the mark is there, unused");
        assert_eq!(next.fcr, Some(fcr(1, &[])));
        assert_eq!(
            next.icrs,
            vec![icr(1, Unhealthy)],
            "stale ICR after the FCR"
        );
    }

    #[test]
    fn fixed_put_back_leaves_out_icrs_covered_by_the_newer_fcr() {
        let mut ctx = context(true);
        let (put_back, next) = failed_heartbeat_with_fcr_in_flight(&mut ctx);
        assert!(put_back.icrs.is_empty());
        assert_eq!(put_back.dropped_icrs, vec![icr(1, Unhealthy)]);
        assert_eq!(next.fcr, Some(fcr(1, &[])));
        assert!(next.icrs.is_empty());
    }

    #[test]
    fn fixed_put_back_without_an_fcr_in_flight_changes_nothing() {
        let mut ctx = context(true);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        let taken = ctx.take(RECON);
        let put_back = ctx.put_back(RECON, taken.icrs, taken.csrs);
        assert_eq!(put_back.icrs, vec![icr(1, Unhealthy)]);
        assert!(put_back.dropped_icrs.is_empty());
        assert_eq!(ctx.take(RECON).icrs, vec![icr(1, Unhealthy)]);
    }

    #[test]
    fn an_fcr_built_before_the_take_does_not_drop_the_taken_icrs() {
        // The FCR came first; the heartbeat then took FCR and the ICRs queued after it.
        let mut ctx = context(true);
        ctx.discard_pending_icrs(1);
        ctx.refresh_full_report(fcr(1, &[(1, Closed)]));
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        let taken = ctx.take(RECON);
        let put_back = ctx.put_back(RECON, taken.icrs, taken.csrs);
        assert_eq!(put_back.icrs, vec![icr(1, Unhealthy)], "newer than the FCR");
        assert_eq!(ctx.take(RECON).icrs, vec![icr(1, Unhealthy)]);
    }

    #[test]
    fn fixed_keeps_csrs_and_newer_icrs_across_two_failed_heartbeats() {
        // TestHeartbeatEndpointTask's case: two failed heartbeats, the second with
        // an FCR rebuild and a newer ICR during its RPC.
        let mut ctx = context(true);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        ctx.add(Report::Csr(csr(7)));
        let first = ctx.take(RECON);
        ctx.put_back(RECON, first.icrs, first.csrs);
        let second = ctx.take(RECON);
        assert_eq!(second.icrs, vec![icr(1, Unhealthy)]);
        ctx.discard_pending_icrs(1);
        ctx.refresh_full_report(fcr(1, &[(1, Unhealthy), (2, Closed)]));
        ctx.add(Report::Icr(icr(2, Closed)));
        let put_back = ctx.put_back(RECON, second.icrs, second.csrs);
        assert_eq!(put_back.dropped_icrs, vec![icr(1, Unhealthy)]);
        let third = ctx.take(RECON);
        assert_eq!(third.fcr.map(|f| f.id), Some(1));
        assert_eq!(third.icrs, vec![icr(2, Closed)]);
        assert_eq!(third.csrs, vec![csr(7)]);
    }

    #[test]
    fn the_mark_is_per_endpoint_and_only_the_failed_endpoint_puts_back() {
        let mut ctx = context(true);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        let recon = ctx.take(RECON);
        ctx.discard_pending_icrs(1);
        // SCM's heartbeat takes after the build: its mark is cleared, RECON's stays.
        let scm = ctx.take(SCM);
        assert!(scm.icrs.is_empty(), "the build dropped SCM's queued copy");
        assert_eq!(ctx.covered_by(SCM), None);
        assert_eq!(ctx.covered_by(RECON), Some(1));
        let put_back = ctx.put_back(RECON, recon.icrs, recon.csrs);
        assert_eq!(put_back.dropped_icrs, vec![icr(1, Unhealthy)]);
    }

    #[test]
    fn the_mark_does_not_wait_for_the_refresh() {
        // The heartbeat fails between the drop and the refresh: a check of the
        // ready flag would miss it, the mark does not.
        let mut ctx = context(true);
        ctx.add(Report::Icr(icr(1, Unhealthy)));
        let taken = ctx.take(RECON);
        ctx.discard_pending_icrs(1);
        assert!(!ctx.full_ready(RECON));
        let put_back = ctx.put_back(RECON, taken.icrs, taken.csrs);
        assert_eq!(put_back.dropped_icrs, vec![icr(1, Unhealthy)]);
    }

    #[test]
    fn queues_and_batches_are_bounded() {
        let mut ctx = context(true);
        for n in 0..QUEUE_REPORTS_MAX as u64 {
            assert!(ctx.has_room());
            ctx.add(Report::Csr(csr(n)));
        }
        assert!(!ctx.has_room());
        let taken = ctx.take(SCM);
        assert_eq!(taken.csrs.len(), REPORTS_PER_HEARTBEAT_MAX);
        assert_eq!(
            ctx.queued(SCM),
            QUEUE_REPORTS_MAX - REPORTS_PER_HEARTBEAT_MAX
        );
    }
}
