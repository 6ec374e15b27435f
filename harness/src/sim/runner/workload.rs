//! Workloads: client processes sending ops at a rate while everything else
//! happens, so faults strike while clients write and read. The scenario's
//! `workload:` runs from `workload: start` to `workload: stop` (or the end of the
//! steps); the chaos section's runs through its window.
//!
//! Every `every`, the next free client (in turn) sends one op drawn from the
//! section's list, its placeholders filled. With `clients: N` a client has at
//! most one op outstanding and waits for its answer or the op timeout, so a tick
//! that finds every client busy sends nothing; without, every tick's op is its
//! own client's, as if clients never waited for each other. Each client is a lane
//! of the run's history. Workloads tick before every simulation step, so they
//! run through every scripted step that takes simulated time.

use super::actions::Sent;
use super::pick::{weighted, Want};
use super::{Driver, Halt};
use crate::base::action::Action;
use crate::base::streams::Stream;
use crate::base::trail::{Data, GiveUp, WorkloadMark};
use crate::lang::scenario::schedule::PlannedOp;
use crate::lang::scenario::{expand_template, Target, Workload, WorkloadOp};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// Which section a workload comes from: its clients' names on the lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The scenario's top-level `workload:`.
    Scenario,
    /// The chaos section's `workload:`.
    Chaos,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Scenario => "workload",
            Source::Chaos => "chaos",
        }
    }
}

/// A workload that has started and not yet finished draining.
pub(crate) struct Running {
    source: Source,
    workload: Workload,
    rng: ChaCha8Rng,
    next_at: Duration,
    /// Each client's op in flight and when it gives up on it.
    clients: Vec<Option<(u64, Duration)>>,
    /// Where the search for a free client starts (clients take turns).
    turn: usize,
    /// Stopped: no new ops; it goes once its ops are answered or given up.
    stopped: bool,
    sent: u64,
    /// Ticks that found every client busy.
    busy_ticks: u64,
    /// A chaos window's ops, planned before it opened (times from `start`):
    /// each is sent at its time if a client is free and its node resolves, so
    /// that the faults never move an op. `None`: ops are drawn tick by tick.
    planned: Option<(Duration, std::collections::VecDeque<PlannedOp>)>,
}

/// One of the section's ops by weight (the chaos nemesis's pick); `None` when
/// every op is off.
fn pick_op<'w>(rng: &mut ChaCha8Rng, ops: &'w [WorkloadOp]) -> Option<&'w WorkloadOp> {
    if ops.iter().all(|op| op.weight == 0) {
        return None;
    }
    Some(weighted(rng, ops, |op| op.weight))
}

impl Driver<'_> {
    /// Start a workload; a source already running is left as it is.
    pub(crate) fn start_workload(&mut self, source: Source, workload: &Workload, stream: Stream) {
        if self
            .workloads
            .iter()
            .any(|w| w.source == source && !w.stopped)
        {
            let mark = WorkloadMark::Unchanged {
                source: source.name().into(),
                running: true,
            };
            self.event(None, Data::Workload(mark));
            return;
        }
        let clients = workload.clients.unwrap_or(0);
        let mark = WorkloadMark::Started {
            source: source.name().into(),
            clients: workload.clients.map(|n| n as u64),
            every_ms: workload.every.as_millis() as u64,
        };
        self.event(None, Data::Workload(mark));
        self.workloads.push(Running {
            source,
            workload: workload.clone(),
            rng: stream.rng(self.seed),
            next_at: self.cluster.elapsed(),
            clients: vec![None; clients],
            turn: 0,
            stopped: false,
            sent: 0,
            busy_ticks: 0,
            planned: None,
        });
    }

    /// Start a workload that sends these ops, each at its time from `start`.
    pub(crate) fn start_planned_workload(
        &mut self,
        source: Source,
        workload: &Workload,
        ops: Vec<PlannedOp>,
        start: Duration,
    ) {
        self.start_workload(source, workload, Stream::ChaosWorkload);
        if let Some(running) = self
            .workloads
            .iter_mut()
            .rev()
            .find(|w| w.source == source && !w.stopped)
        {
            running.planned = Some((start, ops.into()));
        }
    }

    /// Stop a workload's new ops; its ops in flight are still waited for.
    pub(crate) fn stop_workload(&mut self, source: Source) {
        let Some(running) = self
            .workloads
            .iter_mut()
            .find(|w| w.source == source && !w.stopped)
        else {
            let mark = WorkloadMark::Unchanged {
                source: source.name().into(),
                running: false,
            };
            self.event(None, Data::Workload(mark));
            return;
        };
        running.stopped = true;
        let mark = WorkloadMark::Stopped {
            source: source.name().into(),
            sent: running.sent,
            busy_ticks: running.busy_ticks,
        };
        self.event(None, Data::Workload(mark));
    }

    /// Stop every workload still sending (the script is over).
    pub(crate) fn stop_workloads(&mut self) {
        let sources: Vec<Source> = self
            .workloads
            .iter()
            .filter(|w| !w.stopped)
            .map(|w| w.source)
            .collect();
        for source in sources {
            self.stop_workload(source);
        }
    }

    /// Before each simulation step: free the clients whose ops came back, give up
    /// on those past the op timeout, and send what is due.
    pub(crate) fn tick_workloads(&mut self) -> Result<(), Halt> {
        if self.workloads.is_empty() {
            return Ok(());
        }
        let mut workloads = std::mem::take(&mut self.workloads);
        let result = workloads
            .iter_mut()
            .try_for_each(|running| self.tick_workload(running));
        // A workload started during this tick (none can be) would sit in
        // `self.workloads`; keep both.
        workloads.append(&mut self.workloads);
        workloads.retain(|w| !w.stopped || w.clients.iter().any(Option::is_some));
        self.workloads = workloads;
        result
    }

    fn tick_workload(&mut self, running: &mut Running) -> Result<(), Halt> {
        let now = self.cluster.elapsed();
        for slot in running.clients.iter_mut() {
            let Some((id, deadline)) = *slot else {
                continue;
            };
            let open = self.cluster.state().open.contains(&id);
            if !open {
                *slot = None;
            } else if now >= deadline {
                self.cluster.give_up(id, GiveUp::OpTimeout);
                *slot = None;
            }
        }
        if running.stopped {
            return Ok(());
        }
        if running.planned.is_some() {
            return self.tick_planned(running, now);
        }
        while running.next_at <= now {
            running.next_at += running.workload.every;
            // One `{seq}` per tick (taken even when the tick sends nothing),
            // shared with scripted op templates.
            let seq = self.next_seq();
            self.workload_op(running, seq)?;
        }
        Ok(())
    }

    /// Send the planned ops whose time has come.
    fn tick_planned(&mut self, running: &mut Running, now: Duration) -> Result<(), Halt> {
        loop {
            let Some((start, ops)) = &mut running.planned else {
                return Ok(());
            };
            let due = ops.front().is_some_and(|op| *start + op.at <= now);
            if !due {
                return Ok(());
            }
            let planned = ops.pop_front().expect("due");
            self.send_planned(running, planned)?;
        }
    }

    fn send_planned(&mut self, running: &mut Running, planned: PlannedOp) -> Result<(), Halt> {
        let Ok(node) = self.scheduled_node(planned.on, planned.pick, 0, Want::Up, &[]) else {
            // Nobody to talk to (no leader): the op is not sent.
            return Ok(());
        };
        let Some(client) = Self::free_client(running) else {
            running.busy_ticks += 1;
            return Ok(());
        };
        let name = format!("{} client {client}", running.source.name());
        running.sent += 1;
        let node = self.name(node);
        let action = Action::Client {
            node,
            op: planned.op,
        };
        if let Sent::Pending(id) = self.act_client_as(&name, action, None)? {
            let deadline = self.cluster.elapsed() + self.scenario.settings.op_timeout;
            running.clients[client] = Some((id, deadline));
        }
        Ok(())
    }

    /// The client whose turn it is, if one is free (always, without `clients`).
    fn free_client(running: &mut Running) -> Option<usize> {
        if running.workload.clients.is_none() {
            // Unbounded: the lowest free slot, else a new one.
            let free = running.clients.iter().position(Option::is_none);
            return Some(free.unwrap_or_else(|| {
                running.clients.push(None);
                running.clients.len() - 1
            }));
        }
        let n = running.clients.len();
        let found = (0..n)
            .map(|k| (running.turn + k) % n)
            .find(|&c| running.clients[c].is_none())?;
        running.turn = (found + 1) % n;
        Some(found)
    }

    fn workload_op(&mut self, running: &mut Running, seq: u64) -> Result<(), Halt> {
        // Without a leader the clients have nobody to talk to; they try later
        // (and draw nothing now).
        let default = match running.workload.target {
            Some(target) => match self.resolve_workload_target(target)? {
                Some(node) => Some(node),
                None => return Ok(()),
            },
            None => None,
        };
        let Some(client) = Self::free_client(running) else {
            running.busy_ticks += 1;
            return Ok(());
        };
        let Some(chosen) = pick_op(&mut running.rng, &running.workload.ops).cloned() else {
            return Ok(());
        };
        let node = match chosen.target {
            Some(target) => match self.resolve_workload_target(target)? {
                Some(node) => node,
                None => return Ok(()),
            },
            None => default.expect("validated: an op without `on` goes to the workload's"),
        };
        let rng = &mut running.rng;
        let op = match expand_template(
            &chosen.template,
            &mut |lo, hi| rng.random_range(lo..=hi),
            seq,
        )
        .and_then(|json| self.scenario.model.parse_op(&json))
        {
            Ok(op) => op,
            Err(message) => {
                // Checked at load with the extreme draws; a model may still refuse
                // a value between them.
                let invalid = Data::InvalidOp {
                    workload: true,
                    message,
                };
                self.event(None, invalid);
                return Ok(());
            }
        };
        let name = format!("{} client {client}", running.source.name());
        running.sent += 1;
        let node = self.name(node);
        if let Sent::Pending(id) = self.act_client_as(&name, Action::Client { node, op }, None)? {
            let deadline = self.cluster.elapsed() + self.scenario.settings.op_timeout;
            running.clients[client] = Some((id, deadline));
        }
        Ok(())
    }

    /// The up node a target names now, without waiting; `None` for the leader
    /// when there is none. `follower` and `any` pick from the picks stream.
    fn resolve_workload_target(&mut self, target: Target) -> Result<Option<usize>, Halt> {
        self.pick(target, Want::Up, &[], Duration::ZERO)
    }
}
