//! The datanode: container set, `StateContext`, one heartbeat task per endpoint,
//! the container report publisher, and the command inbox.
//!
//! Durable: the container set (`containers.json`, the container directories of a
//! real datanode) and the deleted-block transactions executed on them
//! (`deleted_txs.json`, each container DB's delete transaction records). Volatile:
//! the report queues, the latest FCR, registrations, executed command ids. A
//! restart registers again with a fresh report, which repairs every receiver.

use super::context::StateContext;
use super::report::{
    containers_fact, replica_key, show_containers, show_csrs, show_fcr, show_icrs, show_reports,
    show_txs, ContainerState, Csr, DeleteBlocksCommand, Endpoint, Fcr, Generation, Icr, Message,
    Report, Reports,
};
use super::BUG_STALE_PUT_BACK_ICR;
use super::{fmt_ms, Config, FcrTrigger, HddsOp, HddsPoint, HddsProbe, CONTAINERS_MAX, PORT};
use faultline_api::{ApplyResult, Command, Fault, Net, NodeCtx, NodeEvent, Observation, OpResult};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::{oneshot, Notify};
use tokio::time::{sleep, timeout};

const CONTAINERS_FILE: &str = "containers.json";
const DELETED_TXS_FILE: &str = "deleted_txs.json";

/// One endpoint as the datanode sees it.
#[derive(Clone, Debug)]
struct EndpointState {
    node: String,
    registered: bool,
    in_flight: bool,
    /// The heartbeat in flight took ICRs (for a probe).
    in_flight_icrs: bool,
    /// `events` as of the reports taken by the last successful heartbeat (or the
    /// last register's snapshot); `None` before the first.
    synced_events: Option<u64>,
    heartbeats: u64,
    failed: u64,
}

struct State {
    containers: BTreeMap<u64, ContainerState>,
    context: StateContext,
    /// Container events and executed commands of this incarnation.
    events: u64,
    /// deleteBlocks commands executed in this incarnation.
    commands: BTreeSet<u64>,
    /// Deleted-block transactions ever executed here (durable).
    deleted_txs: BTreeSet<u64>,
    endpoints: BTreeMap<Endpoint, EndpointState>,
    /// Id of the last FCR built (this incarnation).
    fcr_built: u64,
    next_fcr_ms: u64,
    /// The publisher's period: the interval plus a random delay of up to it.
    fcr_period_ms: u64,
    next_call: u64,
    /// Reports made in this incarnation (the ghost [`Generation`] order).
    reports_made: u64,
}

impl State {
    /// The ghost order of the next report this datanode makes.
    fn next_generation(&mut self, incarnation: u32) -> Generation {
        self.reports_made += 1;
        Generation {
            incarnation,
            count: self.reports_made,
        }
    }
}

struct Datanode {
    ctx: NodeCtx,
    net: Net,
    config: Config,
    state: RefCell<State>,
    /// Replies awaited by call id.
    calls: RefCell<BTreeMap<u64, oneshot::Sender<Message>>>,
    /// `triggerHeartbeat`, per endpoint task: heartbeat now instead of at the
    /// next interval (a permit waits while a heartbeat is in flight).
    heartbeat_now: BTreeMap<Endpoint, Notify>,
}

/// How a heartbeat ended.
enum Outcome {
    Delivered { reregister: bool },
    Failed,
}

pub(super) async fn run(ctx: NodeCtx) -> turmoil::Result {
    let config = Config::from_ctx(&ctx);
    let endpoints: BTreeMap<Endpoint, EndpointState> = Endpoint::ALL
        .into_iter()
        .filter_map(|ep| {
            let node = ctx.nodes().iter().find(|n| n.role == ep.role())?;
            let state = EndpointState {
                node: node.name.clone(),
                registered: false,
                in_flight: false,
                in_flight_icrs: false,
                synced_events: None,
                heartbeats: 0,
                failed: 0,
            };
            Some((ep, state))
        })
        .collect();
    let list: Vec<Endpoint> = endpoints.keys().copied().collect();
    let fixed = !ctx.bugs().buggy(&BUG_STALE_PUT_BACK_ICR);
    let containers = load_containers(&ctx, &config)?;
    let deleted_txs = load_deleted_txs(&ctx)?;
    let (first_fcr_ms, fcr_period_ms) = fcr_schedule(&ctx, &config);
    let net = Net::bind(&ctx, PORT).await?;
    let heartbeat_now = list.iter().map(|&ep| (ep, Notify::new())).collect();
    let dn = Rc::new(Datanode {
        state: RefCell::new(State {
            containers,
            context: StateContext::new(&list, fixed),
            events: 0,
            commands: BTreeSet::new(),
            deleted_txs,
            endpoints,
            fcr_built: 0,
            next_fcr_ms: first_fcr_ms,
            fcr_period_ms,
            next_call: 0,
            reports_made: 0,
        }),
        ctx,
        net,
        config,
        calls: RefCell::new(BTreeMap::new()),
        heartbeat_now,
    });
    dn.publish();
    for ep in list {
        let task = dn.clone();
        tokio::task::spawn_local(async move { task.endpoint_loop(ep).await });
    }
    let publisher = dn.clone();
    tokio::task::spawn_local(async move { publisher.publisher_loop().await });
    dn.main_loop().await
}

/// The container set from disk, or the configured initial set on a first start.
fn load_containers(
    ctx: &NodeCtx,
    config: &Config,
) -> std::io::Result<BTreeMap<u64, ContainerState>> {
    if let Some(bytes) = ctx.disk().read(CONTAINERS_FILE)? {
        let containers = serde_json::from_slice(&bytes).expect("the container set parses");
        return Ok(containers);
    }
    let containers: BTreeMap<u64, ContainerState> = config
        .containers
        .iter()
        .map(|&c| (c, ContainerState::Closed))
        .collect();
    persist(ctx, &containers)?;
    Ok(containers)
}

fn load_deleted_txs(ctx: &NodeCtx) -> std::io::Result<BTreeSet<u64>> {
    Ok(match ctx.disk().read(DELETED_TXS_FILE)? {
        Some(bytes) => serde_json::from_slice(&bytes).expect("the executed transactions parse"),
        None => BTreeSet::new(),
    })
}

fn persist(ctx: &NodeCtx, containers: &BTreeMap<u64, ContainerState>) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(containers).expect("serializes");
    ctx.disk().write_atomic(CONTAINERS_FILE, &bytes)
}

/// `ContainerReportPublisher`: the first run after the interval plus a random
/// delay, then every interval plus another random delay (both up to the interval).
fn fcr_schedule(ctx: &NodeCtx, config: &Config) -> (u64, u64) {
    use rand::Rng;
    let mut rng = ctx.rng_seed_for("container-report");
    let interval = config.report_interval_ms;
    let first = interval + rng.random_range(0..interval);
    let period = interval + rng.random_range(0..interval);
    (ctx.now_ms() + first, period)
}

impl Datanode {
    fn now_ms(&self) -> u64 {
        self.ctx.now_ms()
    }

    // ---- the inbox and the socket ----

    async fn main_loop(self: Rc<Self>) -> turmoil::Result {
        let mut inbox = self.ctx.take_inbox();
        let mut buffer = Net::buffer();
        loop {
            tokio::select! {
                biased;
                command = inbox.recv() => match command {
                    Some(command) => self.on_command(command),
                    None => return Ok(()),
                },
                received = self.net.recv::<Message>(&mut buffer) => {
                    if let Ok((_, message)) = received {
                        self.on_reply(message);
                    }
                }
            }
        }
    }

    fn on_reply(&self, message: Message) {
        let call = match &message {
            Message::RegisterAck { call } | Message::HeartbeatAck { call, .. } => *call,
            // Requests go to receivers, never to a datanode.
            Message::Register { .. } | Message::Heartbeat { .. } => return,
        };
        // A reply to a call that timed out (or whose answer is "lost") is dropped.
        if let Some(waiter) = self.calls.borrow_mut().remove(&call) {
            let _ = waiter.send(message);
        }
    }

    fn on_command(self: &Rc<Self>, command: Command) {
        match command {
            Command::Op { id, op } => {
                let op: HddsOp = serde_json::from_value(op).expect("validated by parse_op");
                match op {
                    HddsOp::BuildFcr { trigger } => {
                        let dn = self.clone();
                        tokio::task::spawn_local(async move {
                            let result = dn.build_fcr(trigger).await;
                            dn.ctx.complete(id, result);
                        });
                    }
                    HddsOp::FailVolume { containers } => {
                        let dn = self.clone();
                        tokio::task::spawn_local(async move {
                            let result = dn.fail_volume(&containers).await;
                            dn.ctx.complete(id, result);
                        });
                    }
                    HddsOp::CommandStatus { command, txs } => {
                        let result = self.queue_command_status(command, txs);
                        self.ctx.complete(id, result);
                    }
                    HddsOp::DeleteBlocks {} => {
                        let error = "block deletions enter at SCM; its commands reach the datanode in heartbeat responses";
                        self.ctx.complete(id, OpResult::error(error));
                    }
                    HddsOp::Create { .. }
                    | HddsOp::Close { .. }
                    | HddsOp::MarkUnhealthy { .. }
                    | HddsOp::Delete { .. }
                    | HddsOp::Import { .. } => {
                        let result = self.container_event(&op);
                        self.ctx.complete(id, result);
                    }
                }
            }
            Command::TransferLeader { id, .. } => {
                self.ctx
                    .complete(id, OpResult::error("datanodes have no leader"));
            }
            // The container set is durable at every change; the rest is volatile.
            Command::Stop => self.ctx.stopped(),
        }
    }

    // ---- container events ----

    fn container_event(&self, op: &HddsOp) -> OpResult {
        let (container, verb) = match op {
            HddsOp::Create { container } => (*container, "create"),
            HddsOp::Close { container } => (*container, "close"),
            HddsOp::MarkUnhealthy { container } => (*container, "mark_unhealthy"),
            HddsOp::Delete { container } => (*container, "delete"),
            HddsOp::Import { container } => (*container, "import"),
            HddsOp::DeleteBlocks {}
            | HddsOp::BuildFcr { .. }
            | HddsOp::CommandStatus { .. }
            | HddsOp::FailVolume { .. } => {
                unreachable!("not a container event")
            }
        };
        let mut state = self.state.borrow_mut();
        let old = state.containers.get(&container).copied();
        let new = match transition(op, old) {
            Ok(new) => new,
            Err(why) => return OpResult::error(format!("C{container}: {why}")),
        };
        if !state.context.has_room() {
            return OpResult::error("the report queue is full");
        }
        if new.is_some() && old.is_none() && state.containers.len() >= CONTAINERS_MAX {
            return OpResult::error(format!("at most {CONTAINERS_MAX} containers"));
        }
        match new {
            Some(s) => state.containers.insert(container, s),
            None => state.containers.remove(&container),
        };
        persist(&self.ctx, &state.containers).expect("the simulated disk takes the write");
        let reported = new.unwrap_or(ContainerState::Deleted);
        state.events += 1;
        let generation = state.next_generation(self.ctx.incarnation());
        state.context.add(Report::Icr(Icr {
            container,
            state: reported,
            generation,
        }));
        let endpoints = names(&state.context.endpoints());
        drop(state);
        let show = |s: Option<ContainerState>| s.map_or("absent".to_string(), |s| s.to_string());
        let detail = format!(
            "{verb} C{container}: {} -> {}; ICR C{container}={reported} queued for [{endpoints}]",
            show(old),
            show(new)
        );
        let key = replica_key(self.ctx.name(), container);
        self.ctx.record(NodeEvent::Apply {
            term: None,
            index: None,
            what: format!("{verb} C{container}"),
            result: ApplyResult::Ok,
            keys: vec![key],
            text: detail,
        });
        self.publish();
        OpResult::ok()
    }

    /// `DeleteBlocksCommandHandler`: mark the transactions' blocks deleted (durable
    /// in the container DBs; a transaction executed before is a retry and is
    /// acknowledged again), then queue the command's status report (EXECUTED, with
    /// the acknowledged transactions) for every endpoint.
    fn execute_delete_blocks(&self, from: Endpoint, command: &DeleteBlocksCommand) {
        let mut state = self.state.borrow_mut();
        if !state.context.has_room() {
            // The real command queue is bounded too and drops what does not fit;
            // SCM sends the transactions again after its command timeout.
            drop(state);
            self.ctx.note(format!(
                "deleteBlocks cmd{} from {from} dropped: the report queue is full",
                command.id
            ));
            return;
        }
        let retried: Vec<u64> = command
            .txs
            .iter()
            .copied()
            .filter(|tx| state.deleted_txs.contains(tx))
            .collect();
        state.deleted_txs.extend(command.txs.iter().copied());
        if retried.len() < command.txs.len() {
            let bytes = serde_json::to_vec(&state.deleted_txs).expect("serializes");
            self.ctx
                .disk()
                .write_atomic(DELETED_TXS_FILE, &bytes)
                .expect("the simulated disk takes the write");
        }
        state.commands.insert(command.id);
        state.events += 1;
        state.context.add(Report::Csr(Csr {
            command: command.id,
            txs: command.txs.clone(),
        }));
        let endpoints = names(&state.context.endpoints());
        drop(state);
        if !retried.is_empty() {
            self.ctx.probe(HddsProbe::DeleteBlocksRetried);
        }
        let retried = if retried.is_empty() {
            String::new()
        } else {
            format!(" ({} executed before: retried)", show_txs(&retried))
        };
        self.ctx.record(NodeEvent::Apply {
            term: None,
            index: None,
            what: format!("deleteBlocks cmd{}", command.id),
            result: ApplyResult::Ok,
            keys: Vec::new(),
            text: format!(
                "executed deleteBlocks cmd{} {} from {from}{retried}; CSR cmd{} queued for [{endpoints}]",
                command.id,
                show_txs(&command.txs),
                command.id
            ),
        });
    }

    /// The command status report publisher queues the status of a deleteBlocks
    /// command it holds (EXECUTED, with its acknowledged transactions) for every
    /// endpoint, like `execute_delete_blocks` does after executing one, but
    /// nothing is executed here: a scenario's way to put a CSR in the queue.
    fn queue_command_status(&self, command: u64, txs: Vec<u64>) -> OpResult {
        let mut state = self.state.borrow_mut();
        if !state.context.has_room() {
            return OpResult::error("the report queue is full");
        }
        state.events += 1;
        let shown = show_txs(&txs);
        state.context.add(Report::Csr(Csr { command, txs }));
        let endpoints = names(&state.context.endpoints());
        drop(state);
        self.ctx.record(NodeEvent::Apply {
            term: None,
            index: None,
            what: format!("status of deleteBlocks cmd{command}"),
            result: ApplyResult::Ok,
            keys: Vec::new(),
            text: format!("status of deleteBlocks cmd{command} {shown} (EXECUTED); CSR cmd{command} queued for [{endpoints}]"),
        });
        self.publish();
        OpResult::value(format!("CSR cmd{command}"))
    }

    /// `ContainerSet.handleVolumeFailures`: the failed volume's containers leave
    /// the container set (marked missing; no ICR). If any did, an FCR is built
    /// (`getFullContainerReportDiscardPendingICR`, `refreshFullReport`) and a
    /// heartbeat to every endpoint is triggered (`triggerHeartbeat`); a build that
    /// fails skips the trigger, as the real code's catch does.
    async fn fail_volume(&self, ids: &[u64]) -> OpResult {
        let removed = {
            let mut state = self.state.borrow_mut();
            let removed = match remove_failed_volume(&mut state.containers, ids) {
                Ok(removed) => removed,
                Err(why) => return OpResult::error(why),
            };
            if !removed.is_empty() {
                state.events += 1;
                persist(&self.ctx, &state.containers).expect("the simulated disk takes the write");
            }
            removed
        };
        if removed.is_empty() {
            self.ctx
                .note("volume failure: no container on the failed volume; nothing to report");
            return OpResult::value("no containers removed");
        }
        let shown: Vec<String> = removed
            .iter()
            .map(|(c, s)| format!("C{c} (was {s})"))
            .collect();
        let keys = removed
            .iter()
            .map(|(c, _)| replica_key(self.ctx.name(), *c))
            .collect();
        self.ctx.record(NodeEvent::Apply {
            term: None,
            index: None,
            what: "volume failure".to_string(),
            result: ApplyResult::Ok,
            keys,
            text: format!(
                "volume failure: removed {} from the container set (missing, no ICR); building an FCR",
                shown.join(", ")
            ),
        });
        self.publish();
        let built = self.build_fcr(FcrTrigger::VolumeFailure).await;
        if !built.ok {
            return built;
        }
        let endpoints: Vec<Endpoint> = self.heartbeat_now.keys().copied().collect();
        for notify in self.heartbeat_now.values() {
            notify.notify_one();
        }
        self.ctx.record(NodeEvent::service(
            "heartbeat",
            format!(
                "volume failure: heartbeat triggered now to [{}]",
                names(&endpoints)
            ),
        ));
        built
    }

    // ---- full container reports ----

    async fn publisher_loop(self: Rc<Self>) {
        loop {
            let due = self.state.borrow().next_fcr_ms;
            sleep(self.ctx.until(due)).await;
            // A periodic build by op moved the schedule: sleep to the new time.
            if self.now_ms() >= self.state.borrow().next_fcr_ms {
                let _ = self.build_fcr(FcrTrigger::Periodic).await;
            }
        }
    }

    /// `getFullContainerReportDiscardPendingICR` then `refreshFullReport`.
    async fn build_fcr(&self, trigger: FcrTrigger) -> OpResult {
        let failure = match self.ctx.faults().eval(HddsPoint::FcrBuild) {
            Some(Fault::Error(kind)) => Some(kind),
            Some(fault) => {
                let _ = self.ctx.faults().act(fault).await;
                None
            }
            None => None,
        };
        // One critical section: the container lock and the queue lock.
        let (fcr, dropped) = {
            let mut state = self.state.borrow_mut();
            state.fcr_built += 1;
            let id = state.fcr_built;
            if trigger == FcrTrigger::Periodic {
                state.next_fcr_ms = self.now_ms() + state.fcr_period_ms;
            }
            if state
                .endpoints
                .values()
                .any(|e| e.in_flight && e.in_flight_icrs)
            {
                self.ctx.probe(HddsProbe::FcrBuiltWithIcrsInFlight);
            }
            let dropped = state.context.discard_pending_icrs(id);
            let generation = state.next_generation(self.ctx.incarnation());
            let fcr = Fcr {
                id,
                containers: state.containers.clone(),
                generation,
            };
            (fcr, dropped)
        };
        let dropped_text = dropped
            .iter()
            .map(|(ep, icrs)| format!("{ep} {}", show_icrs(icrs)))
            .collect::<Vec<_>>()
            .join(", ");
        let endpoints = names(&dropped.keys().copied().collect::<Vec<_>>());
        if let Some(kind) = failure {
            self.ctx.record(NodeEvent::service(
                "FCR",
                format!(
                    "FCR#{} build ({}) failed ({kind}) after dropping the queued ICRs ({dropped_text}); no FCR is published",
                    fcr.id,
                    trigger.name()
                ),
            ));
            self.publish();
            return OpResult::error(format!("container report failed: {kind}"));
        }
        self.ctx.record(NodeEvent::service(
            "FCR",
            format!(
                "{} built ({}): dropped queued ICRs ({dropped_text}); endpoints [{endpoints}] marked covered by FCR#{}",
                show_fcr(&fcr),
                trigger.name(),
                fcr.id
            ),
        ));
        self.publish();
        // `refreshFullReport` runs outside the queue lock: a stall here holds the
        // build with the ICRs dropped and the FCR not yet ready for any endpoint.
        let _ = self.ctx.faults().hit(HddsPoint::FcrBeforeRefresh).await;
        let id = fcr.id;
        self.state.borrow_mut().context.refresh_full_report(fcr);
        self.publish();
        OpResult::value(format!("FCR#{id}"))
    }

    // ---- heartbeats ----

    /// Register, then heartbeat every interval. One task per endpoint: its
    /// heartbeats are serialized (`rpcEndpoint.lock()`).
    async fn endpoint_loop(self: Rc<Self>, ep: Endpoint) {
        let interval = self.config.interval_ms(ep);
        self.register_until_done(ep).await;
        let mut next = self.now_ms() + interval;
        let trigger = &self.heartbeat_now[&ep];
        loop {
            tokio::select! {
                biased;
                _ = trigger.notified() => {}
                _ = sleep(self.ctx.until(next)) => {}
            }
            next = self.now_ms() + interval;
            match self.heartbeat(ep).await {
                Outcome::Delivered { reregister: true } => self.register_until_done(ep).await,
                Outcome::Delivered { reregister: false } | Outcome::Failed => {}
            }
        }
    }

    async fn register_until_done(&self, ep: Endpoint) {
        self.endpoint_mut(ep, |e| e.registered = false);
        self.publish();
        while !self.register(ep).await {
            tokio::time::sleep(Duration::from_millis(self.config.initial_interval_ms)).await;
        }
    }

    /// A register request carrying a fresh container report (`getContainerReport`:
    /// no ICR drop, no FCR of the publisher).
    async fn register(&self, ep: Endpoint) -> bool {
        let (call, to, report, events) = {
            let mut state = self.state.borrow_mut();
            state.next_call += 1;
            let generation = state.next_generation(self.ctx.incarnation());
            let report = Fcr {
                // Not a publisher build: id 0 never names an FCR in the trail.
                id: 0,
                containers: state.containers.clone(),
                generation,
            };
            let to = state.endpoints[&ep].node.clone();
            (state.next_call, to, report, state.events)
        };
        let shown = show_containers(&report.containers);
        let message = Message::Register { call, fcr: report };
        match self.call(&to, "register", call, message, None, None).await {
            Some(Message::RegisterAck { .. }) => {
                self.endpoint_mut(ep, |e| {
                    e.registered = true;
                    e.synced_events = Some(events);
                });
                self.ctx.record(NodeEvent::service(
                    "heartbeat",
                    format!("registered with {ep} ({to}); register report {shown}"),
                ));
                self.publish();
                true
            }
            _ => false,
        }
    }

    async fn heartbeat(&self, ep: Endpoint) -> Outcome {
        let (call, to, reports, events, number) = {
            let mut state = self.state.borrow_mut();
            let reports = state.context.take(ep);
            state.next_call += 1;
            let call = state.next_call;
            let events = state.events;
            let endpoint = state.endpoints.get_mut(&ep).expect("configured");
            endpoint.in_flight = true;
            endpoint.in_flight_icrs = !reports.icrs.is_empty();
            endpoint.heartbeats += 1;
            (
                call,
                endpoint.node.clone(),
                reports,
                events,
                endpoint.heartbeats,
            )
        };
        if reports.fcr.is_some() && !reports.icrs.is_empty() {
            self.ctx.probe(HddsProbe::HeartbeatWithFcrAndIcrs);
        }
        if !reports.is_empty() {
            self.ctx.record(NodeEvent::Submit {
                by: "heartbeat".into(),
                what: format!("heartbeat #{number} to {ep}"),
                term: None,
                index: None,
                text: format!(
                    "heartbeat #{number} to {ep} takes {}; RPC in flight",
                    show_reports(&reports)
                ),
            });
        }
        self.publish();
        // The RPC is in flight from here: a stall holds only this endpoint's task.
        let _ = self.ctx.faults().hit(HddsPoint::InFlight(ep)).await;
        let loss = self.ctx.faults().hit(HddsPoint::Rpc(ep)).await.err();
        let message = Message::Heartbeat {
            call,
            reports: reports.clone(),
        };
        let sent = Some(HddsPoint::Sent(ep));
        let reply = self
            .call(&to, "heartbeat", call, message, loss.as_deref(), sent)
            .await;
        let outcome = match reply {
            Some(Message::HeartbeatAck {
                reregister,
                commands,
                ..
            }) => {
                self.delivered(ep, number, &reports, events, reregister);
                for command in &commands {
                    self.execute_delete_blocks(ep, command);
                }
                Outcome::Delivered { reregister }
            }
            _ => {
                self.failed(ep, number, reports, loss.as_deref());
                Outcome::Failed
            }
        };
        self.publish();
        outcome
    }

    fn delivered(
        &self,
        ep: Endpoint,
        number: u64,
        reports: &Reports,
        events: u64,
        reregister: bool,
    ) {
        self.endpoint_mut(ep, |e| {
            e.in_flight = false;
            e.synced_events = Some(events);
        });
        if !reports.is_empty() {
            self.ctx.record(NodeEvent::service(
                "heartbeat",
                format!(
                    "heartbeat #{number} to {ep} delivered {}",
                    show_reports(reports)
                ),
            ));
        }
        if reregister {
            self.ctx.record(NodeEvent::service(
                "heartbeat",
                format!("{ep} answered heartbeat #{number} with a re-register command"),
            ));
        }
    }

    /// `putBackIncrementalReports` after an IOException (here: the RPC timeout).
    fn failed(&self, ep: Endpoint, number: u64, reports: Reports, loss: Option<&str>) {
        let had_icrs = !reports.icrs.is_empty();
        if had_icrs {
            self.ctx.probe(HddsProbe::FailedHeartbeatWithIcrs);
        }
        if reports.fcr.is_some() {
            self.ctx.probe(HddsProbe::FcrLostWithFailedHeartbeat);
        }
        let put_back = {
            let mut state = self.state.borrow_mut();
            let endpoint = state.endpoints.get_mut(&ep).expect("configured");
            endpoint.in_flight = false;
            endpoint.failed += 1;
            state.context.put_back(ep, reports.icrs, reports.csrs)
        };
        if had_icrs && put_back.covered_by.is_some() {
            self.ctx.probe(HddsProbe::PutBackAfterFcrBuild);
        }
        let why = match loss {
            Some("drop_request") => "the request was lost",
            Some("drop_response") => "the response was lost",
            _ => "no answer",
        };
        let mut detail = format!(
            "heartbeat #{number} to {ep} failed: RPC timeout after {} ({why}); ",
            fmt_ms(self.config.rpc_timeout_ms)
        );
        match put_back.covered_by {
            Some(fcr) if !put_back.dropped_icrs.is_empty() => detail.push_str(&format!(
                "left out ICRs {} covered by FCR#{fcr} built while the RPC was in flight; put back CSRs {} to the head of the queue",
                show_icrs(&put_back.dropped_icrs),
                show_csrs(&put_back.csrs)
            )),
            Some(fcr) if !put_back.icrs.is_empty() => detail.push_str(&format!(
                "put back ICRs {} and CSRs {} to the head of the queue, although FCR#{fcr} built while the RPC was in flight covers those ICRs",
                show_icrs(&put_back.icrs),
                show_csrs(&put_back.csrs)
            )),
            _ => detail.push_str(&format!(
                "put back ICRs {} and CSRs {} to the head of the queue",
                show_icrs(&put_back.icrs),
                show_csrs(&put_back.csrs)
            )),
        }
        if let Some(fcr) = &reports.fcr {
            detail.push_str(&format!("; FCR#{} is not put back", fcr.id));
        }
        self.ctx.note(detail);
    }

    /// One request/response over UDP with the RPC timeout. `loss` is the fail
    /// point's verdict: a lost request is never sent, a lost response is never
    /// delivered to this call; both end as the timeout. `sent` is passed right
    /// after the send: the receiver has the request (and processes it as it
    /// arrives) while a stall there holds this call; the timeout runs after it.
    async fn call(
        &self,
        to: &str,
        kind: &str,
        call: u64,
        message: Message,
        loss: Option<&str>,
        sent: Option<HddsPoint>,
    ) -> Option<Message> {
        let (waiter, reply) = oneshot::channel();
        // Held until the timeout when the response is lost, so `reply` stays open.
        let mut lost_waiter = None;
        match loss {
            Some("drop_response") => lost_waiter = Some(waiter),
            _ => {
                self.calls.borrow_mut().insert(call, waiter);
            }
        }
        if loss != Some("drop_request") {
            self.net.send(to, kind, &message);
        }
        if let Some(point) = sent {
            let _ = self.ctx.faults().hit(point).await;
        }
        let wait = Duration::from_millis(self.config.rpc_timeout_ms);
        let answer = timeout(wait, reply).await;
        self.calls.borrow_mut().remove(&call);
        drop(lost_waiter);
        answer.ok().and_then(Result::ok)
    }

    // ---- bookkeeping ----

    fn endpoint_mut(&self, ep: Endpoint, f: impl FnOnce(&mut EndpointState)) {
        let mut state = self.state.borrow_mut();
        f(state.endpoints.get_mut(&ep).expect("configured"));
    }

    fn publish(&self) {
        let state = self.state.borrow();
        let name = self.ctx.name();
        let mut facts = BTreeMap::new();
        facts.insert("containers".into(), containers_fact(&state.containers));
        facts.insert("events".into(), state.events.to_string());
        facts.insert("commands".into(), ids_fact(&state.commands));
        facts.insert("deleted_txs".into(), ids_fact(&state.deleted_txs));
        facts.insert("fcr_built".into(), state.fcr_built.to_string());
        facts.insert("next_fcr_ms".into(), state.next_fcr_ms.to_string());
        let mut pending = 0u64;
        for (ep, e) in &state.endpoints {
            let queued = state.context.queued(*ep);
            let ready = state.context.full_ready(*ep);
            pending += queued as u64 + u64::from(e.in_flight) + u64::from(ready);
            pending += u64::from(!e.registered);
            facts.insert(format!("queued.{ep}"), queued.to_string());
            facts.insert(
                format!("in_flight.{ep}"),
                u64::from(e.in_flight).to_string(),
            );
            facts.insert(format!("fcr_ready.{ep}"), ready.to_string());
            let mark = state.context.covered_by(*ep);
            let mark = mark.map_or("-".to_string(), |id| format!("FCR#{id}"));
            facts.insert(format!("covered.{ep}"), mark);
            facts.insert(format!("registered.{ep}"), e.registered.to_string());
            facts.insert(format!("heartbeats.{ep}"), e.heartbeats.to_string());
            facts.insert(format!("heartbeats_failed.{ep}"), e.failed.to_string());
            if let Some(synced) = e.synced_events {
                facts.insert(format!("synced.{ep}"), synced.to_string());
            }
        }
        // Replicas are compared key by key with the receivers' views. With several
        // datanodes one datanode cannot publish the others' keys, and the
        // divergence check compares every node's whole map: then no node
        // publishes replicas as state, and `receiver_matches_datanode` compares
        // the `containers` and `replicas.<dn>` facts.
        let datanodes = self
            .ctx
            .nodes()
            .iter()
            .filter(|n| n.role == "datanode")
            .count();
        let replicas = if datanodes == 1 {
            state
                .containers
                .iter()
                .map(|(c, s)| (replica_key(name, *c), s.to_string()))
                .collect()
        } else {
            BTreeMap::new()
        };
        let observation = Observation {
            role: Some("datanode".into()),
            term: None,
            leader: None,
            applied: None,
            state: replicas,
            facts,
            pending,
            ..Default::default()
        };
        drop(state);
        self.ctx.publish(observation);
    }
}

/// The containers of a failed volume leave the set; returns them with their
/// states, in id order. Every id must be held (a scenario naming a container the
/// datanode does not hold is a mistake, not a volume's content).
fn remove_failed_volume(
    containers: &mut BTreeMap<u64, ContainerState>,
    ids: &[u64],
) -> Result<Vec<(u64, ContainerState)>, String> {
    let wanted: BTreeSet<u64> = ids.iter().copied().collect();
    if let Some(missing) = wanted.iter().find(|c| !containers.contains_key(c)) {
        return Err(format!("C{missing}: no such container"));
    }
    Ok(wanted
        .into_iter()
        .filter_map(|c| containers.remove(&c).map(|s| (c, s)))
        .collect())
}

/// The state a container event leads to (`None`: deleted), or why it is refused.
pub(super) fn transition(
    op: &HddsOp,
    old: Option<ContainerState>,
) -> Result<Option<ContainerState>, String> {
    use ContainerState::{Closed, Open, Unhealthy};
    match (op, old) {
        (HddsOp::Create { .. }, None) => Ok(Some(Open)),
        (HddsOp::Import { .. }, None) => Ok(Some(Closed)),
        (HddsOp::Create { .. } | HddsOp::Import { .. }, Some(s)) => Err(format!("exists ({s})")),
        (HddsOp::Close { .. }, Some(Open)) => Ok(Some(Closed)),
        (HddsOp::Close { .. }, Some(s)) => Err(format!("not open ({s})")),
        (HddsOp::MarkUnhealthy { .. }, Some(Unhealthy)) => Err("already UNHEALTHY".into()),
        (HddsOp::MarkUnhealthy { .. }, Some(_)) => Ok(Some(Unhealthy)),
        (HddsOp::Delete { .. }, Some(_)) => Ok(None),
        (HddsOp::Close { .. } | HddsOp::MarkUnhealthy { .. } | HddsOp::Delete { .. }, None) => {
            Err("no such container".into())
        }
        (
            HddsOp::DeleteBlocks { .. }
            | HddsOp::BuildFcr { .. }
            | HddsOp::CommandStatus { .. }
            | HddsOp::FailVolume { .. },
            _,
        ) => Err("not a container event".into()),
    }
}

fn names(endpoints: &[Endpoint]) -> String {
    endpoints
        .iter()
        .map(|e| e.role())
        .collect::<Vec<_>>()
        .join(", ")
}

fn ids_fact(ids: &BTreeSet<u64>) -> String {
    ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// Parses a list of ids (`7,9`).
pub(super) fn ids_from_fact(text: &str) -> BTreeSet<u64> {
    text.split(',').filter_map(|id| id.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::super::report::containers_from_fact;
    use super::*;
    use ContainerState::{Closed, Open, Unhealthy};

    #[test]
    fn container_events_follow_the_replica_lifecycle() {
        let c = 1;
        assert_eq!(
            transition(&HddsOp::Create { container: c }, None),
            Ok(Some(Open))
        );
        assert_eq!(
            transition(&HddsOp::Close { container: c }, Some(Open)),
            Ok(Some(Closed))
        );
        assert!(transition(&HddsOp::Close { container: c }, Some(Closed)).is_err());
        assert_eq!(
            transition(&HddsOp::MarkUnhealthy { container: c }, Some(Closed)),
            Ok(Some(Unhealthy))
        );
        assert_eq!(
            transition(&HddsOp::Delete { container: c }, Some(Unhealthy)),
            Ok(None)
        );
        assert!(transition(&HddsOp::Delete { container: c }, None).is_err());
        assert_eq!(
            transition(&HddsOp::Import { container: c }, None),
            Ok(Some(Closed))
        );
        assert!(transition(&HddsOp::Import { container: c }, Some(Closed)).is_err());
    }

    #[test]
    fn a_failed_volume_takes_its_containers_out_of_the_set() {
        let mut containers: BTreeMap<u64, ContainerState> =
            [(1, Unhealthy), (2, Closed), (3, Open)].into();
        assert_eq!(
            remove_failed_volume(&mut containers, &[3, 1, 3]),
            Ok(vec![(1, Unhealthy), (3, Open)])
        );
        assert_eq!(containers, [(2, Closed)].into());
        assert_eq!(
            remove_failed_volume(&mut containers, &[2, 9]),
            Err("C9: no such container".into())
        );
        assert_eq!(containers.len(), 1, "nothing removed on an error");
        assert_eq!(remove_failed_volume(&mut containers, &[]), Ok(vec![]));
    }

    #[test]
    fn facts_round_trip() {
        let containers: BTreeMap<u64, ContainerState> = [(1, Closed), (12, Unhealthy)].into();
        assert_eq!(
            containers_from_fact(&containers_fact(&containers)),
            containers
        );
        assert!(containers_from_fact("").is_empty());
        let ids: BTreeSet<u64> = [7, 9].into();
        assert_eq!(ids_from_fact(&ids_fact(&ids)), ids);
    }
}
