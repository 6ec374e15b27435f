//! One node: an unmodified `foca::Foca` on a turmoil UDP socket. foca is sans-IO:
//! the node hands it datagrams (`handle_data`) and the timer events it asked for
//! (`handle_timer`, after a `tokio::time::sleep` on simulated time), and carries
//! out what it returns through [`Effects`]. Like corrosion does with its
//! bootstrap list, the node announces itself every `announce_ms` to each
//! scenario node it does not see Alive.

use crate::Params;
use crate::id::{Effects, Id, Notice, SeededRng};
use crate::oracle::{self, Ground};
use crate::points::{FocaProbe, Point};
use faultline_api::{Command, Fault, NodeCtx, Observation, OpResult};
use foca::{Codec, Foca, Message, PostcardCodec, Timer};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use turmoil::net::UdpSocket;

const PORT: u16 = 7946;
/// How often the node refreshes the oracle and its observation.
const TICK_MS: u64 = 100;

type Swim = Foca<Id, PostcardCodec, SeededRng, foca::NoCustomBroadcast>;

/// What reaches the node's loop from its own tasks.
enum Input {
    /// A datagram released after a stall at `receive`.
    Data(String, Vec<u8>),
    /// A timer event; `late`: it already passed the `timer` point.
    Timer(Timer<Id>, bool),
}

struct Node {
    ctx: Rc<NodeCtx>,
    names: Vec<String>,
    params: Params,
    foca: Swim,
    socket: Rc<UdpSocket>,
    input: UnboundedSender<Input>,
    ground: Rc<RefCell<Ground>>,
    /// The members foca reported Up and not Down since (Alive or Suspect).
    active: BTreeSet<Id>,
    down: BTreeSet<Id>,
    /// Per node this one lacks Alive: when it first heard from that node since.
    heard_lacking: BTreeMap<u8, u64>,
    /// When a `send` or `receive` fault last lost a datagram of this node: a
    /// node that cannot hear or be heard cannot merge until it recovers.
    lost_at: Option<u64>,
    /// When this node last renewed its own identity (its start, before any):
    /// foca starts detecting failures again from there.
    renewed_at: u64,
    last: Option<Observation>,
}

pub async fn run(ctx: NodeCtx) -> turmoil::Result {
    let ctx = Rc::new(ctx);
    let params: Params = faultline_api::parse_json(ctx.params()).unwrap_or_default();
    let names: Vec<String> = ctx.nodes().iter().map(|n| n.name.clone()).collect();
    let me = Id {
        node: u8::try_from(ctx.index())?,
        start: u16::try_from(ctx.incarnation())?,
        bump: 0,
    };
    let rng = SeededRng(ctx.rng_seed_for("foca"));
    let foca = Foca::new(me, crate::id::config(&params), rng, PostcardCodec);
    let socket = Rc::new(UdpSocket::bind(("0.0.0.0", PORT)).await?);
    let (input, mut inputs) = unbounded_channel();
    let ground = ctx.shared::<RefCell<Ground>>();
    ground.borrow_mut().hold(me, ctx.now_ms());
    let mut node = Node {
        ctx: ctx.clone(),
        names,
        params,
        foca,
        socket: socket.clone(),
        input,
        ground,
        active: BTreeSet::new(),
        down: BTreeSet::new(),
        heard_lacking: BTreeMap::new(),
        lost_at: None,
        renewed_at: ctx.now_ms(),
        last: None,
    };
    node.announce();
    let mut inbox = ctx.take_inbox();
    let mut tick = tokio::time::interval(Duration::from_millis(TICK_MS));
    let mut announce = tokio::time::interval(Duration::from_millis(node.params.announce_ms()));
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            command = inbox.recv() => match command {
                Some(command) => if node.command(command) { return Ok(()) },
                None => return Ok(()),
            },
            received = socket.recv_from(&mut buffer) => {
                let (len, from) = received?;
                if let Some(name) = turmoil::reverse_lookup(from.ip()) {
                    node.receive(name, buffer[..len].to_vec());
                }
            }
            Some(input) = inputs.recv() => match input {
                Input::Data(from, data) => node.handle_data(&from, &data),
                Input::Timer(timer, late) => node.timer(timer, late),
            },
            _ = tick.tick() => node.tick(),
            _ = announce.tick() => node.announce(),
        }
    }
}

impl Node {
    /// A command from the harness; `true` when the node stopped.
    fn command(&mut self, command: Command) -> bool {
        match command {
            Command::Op { id, .. } => {
                let view = self.view();
                self.ctx.complete(id, OpResult::value(view));
                false
            }
            Command::TransferLeader { id, .. } => {
                self.ctx.complete(id, OpResult::error("foca has no leader"));
                false
            }
            Command::Stop => {
                self.ctx.stopped();
                true
            }
        }
    }

    fn receive(&mut self, from: String, data: Vec<u8>) {
        match self.ctx.faults().eval(Point::Receive) {
            None => self.handle_data(&from, &data),
            Some(fault) => {
                self.note_loss(&fault);
                let (ctx, input) = (self.ctx.clone(), self.input.clone());
                tokio::task::spawn_local(async move {
                    if ctx.faults().act(fault).await.is_ok() {
                        let _ = input.send(Input::Data(from, data));
                    }
                });
            }
        }
    }

    fn handle_data(&mut self, from: &str, data: &[u8]) {
        if let Some(index) = self.names.iter().position(|n| n == from) {
            let lacking = u8::try_from(index).ok().filter(|&node| self.lacks(node));
            if let Some(node) = lacking {
                let now = self.ctx.now_ms();
                self.heard_lacking.entry(node).or_insert(now);
            }
        }
        let turn_undead = PostcardCodec
            .decode_header(data)
            .ok()
            .filter(|header| header.message == Message::TurnUndead);
        if let Some(header) = turn_undead {
            if self.down.contains(&header.src) {
                self.ctx.probe(FocaProbe::TurnUndeadFromDown);
            }
            let me = *self.foca.identity();
            if header.dst == me && !self.ground.borrow().has_down(header.src.node, me) {
                self.ctx.probe(FocaProbe::TurnUndeadWhileUp);
                self.ctx.note(format!(
                    "got TurnUndead from {}, which does not hold {} Down",
                    header.src.show(&self.names),
                    me.show(&self.names)
                ));
            }
        }
        let mut fx = Effects::default();
        // Errors are foca refusing a datagram (from ourselves, malformed):
        // the datagram is dropped, as foca's own examples do.
        let _ = self.foca.handle_data(data, &mut fx);
        self.apply(fx);
    }

    fn timer(&mut self, timer: Timer<Id>, late: bool) {
        if !late {
            if let Some(fault) = self.ctx.faults().eval(Point::Timer) {
                let (ctx, input) = (self.ctx.clone(), self.input.clone());
                tokio::task::spawn_local(async move {
                    if ctx.faults().act(fault).await.is_ok() {
                        let _ = input.send(Input::Timer(timer, true));
                    }
                });
                return;
            }
        }
        let mut fx = Effects::default();
        let _ = self.foca.handle_timer(timer, &mut fx);
        self.apply(fx);
    }

    /// Announce to every scenario node this one does not see Alive.
    fn announce(&mut self) {
        let me = self.foca.identity().node;
        let mut fx = Effects::default();
        for index in 0..self.names.len() {
            let Ok(node) = u8::try_from(index) else {
                continue;
            };
            if node != me && !self.active.iter().any(|id| id.node == node) {
                // Any identity of that node: foca accepts an Announce for one
                // with the same prefix (address).
                let dst = Id {
                    node,
                    start: 0,
                    bump: 0,
                };
                let _ = self.foca.announce(dst, &mut fx);
            }
        }
        self.apply(fx);
    }

    /// Carry out what foca asked for.
    fn apply(&mut self, fx: Effects) {
        for (to, data) in fx.sends {
            self.send(to, data);
        }
        for (timer, after) in fx.timers {
            let input = self.input.clone();
            tokio::task::spawn_local(async move {
                tokio::time::sleep(after).await;
                let _ = input.send(Input::Timer(timer, false));
            });
        }
        for notice in fx.notices {
            self.notice(notice);
        }
        self.refresh();
    }

    /// A fault that loses the datagram (rather than holding it) restarts
    /// `members_merge`'s clock for every pair this node is in.
    fn note_loss(&mut self, fault: &Fault) {
        if matches!(fault, Fault::Error(_)) {
            self.lost_at = Some(self.ctx.now_ms());
        }
    }

    fn send(&mut self, to: Id, data: Vec<u8>) {
        let Some(name) = self.names.get(usize::from(to.node)).cloned() else {
            return;
        };
        let fault = self.ctx.faults().eval(Point::Send);
        self.ctx.message(&name, "swim");
        let Some(fault) = fault else {
            let _ = self.socket.try_send_to(&data, (name.as_str(), PORT));
            return;
        };
        self.note_loss(&fault);
        let (ctx, socket) = (self.ctx.clone(), self.socket.clone());
        tokio::task::spawn_local(async move {
            if ctx.faults().act(fault).await.is_ok() {
                let _ = socket.try_send_to(&data, (name.as_str(), PORT));
            }
        });
    }

    fn notice(&mut self, notice: Notice) {
        match notice {
            Notice::Up(id) => {
                self.active.insert(id);
                self.down.remove(&id);
            }
            Notice::Down(id) => {
                self.active.remove(&id);
                self.down.insert(id);
                self.ctx.probe(FocaProbe::MemberDown);
                self.ctx.note(format!("sees {} down", id.show(&self.names)));
            }
            Notice::Rejoin(id) => {
                self.ctx.probe(FocaProbe::IdentityRenewed);
                self.ctx
                    .note(format!("renewed its identity to {}", id.show(&self.names)));
                self.ground.borrow_mut().hold(id, self.ctx.now_ms());
                self.renewed_at = self.ctx.now_ms();
            }
            #[cfg(feature = "foca2")]
            Notice::Rename(old, new) => {
                self.active.remove(&old);
                self.down.remove(&old);
                self.active.insert(new);
            }
            Notice::Idle => self.ctx.probe(FocaProbe::Idle),
            Notice::Other => {}
        }
    }

    /// Whether this node does not see `node`'s current identity Alive.
    fn lacks(&self, node: u8) -> bool {
        let current = self.ground.borrow().current(node);
        current.is_some_and(|id| !self.active.contains(&id))
    }

    fn tick(&mut self) {
        let now = self.ctx.now_ms();
        let me = *self.foca.identity();
        self.ground.borrow_mut().hold(me, now);
        let bound = oracle::down_bound_ms(&self.params, self.names.len());
        let stale =
            self.ground
                .borrow()
                .gone_longer_than(&self.active, now, bound, self.renewed_at);
        if let Some((id, gone)) = stale {
            let counted = if gone.ran_at >= self.renewed_at {
                "after that identity last ran".to_string()
            } else {
                format!(
                    "after this node last renewed its own identity (that identity last ran at {} ms)",
                    gone.ran_at
                )
            };
            let message = format!(
                "{} sees {} alive, {} ms {counted} (bound {bound} ms)",
                self.ctx.name(),
                id.show(&self.names),
                gone.ms,
            );
            self.ctx.violation(oracle::DOWN_NOT_ALIVE, &message);
        }
        self.refresh();
    }

    /// Forget contact with nodes no longer lacked; publish what changed.
    fn refresh(&mut self) {
        let me = self.foca.identity().node;
        self.ground.borrow_mut().holds_down(me, &self.down);
        let lacking: Vec<u8> = self
            .heard_lacking
            .keys()
            .copied()
            .filter(|&n| !self.lacks(n))
            .collect();
        for node in lacking {
            self.heard_lacking.remove(&node);
        }
        let mut observation = Observation::default();
        let facts = &mut observation.facts;
        facts.insert("identity".into(), self.foca.identity().show(&self.names));
        facts.insert("alive".into(), self.view());
        facts.insert("down".into(), self.down.len().to_string());
        facts.insert(
            oracle::FACT_MERGE_WITHIN.into(),
            self.params.merge_within_ms().to_string(),
        );
        facts.insert(
            oracle::FACT_RETRY.into(),
            self.params.announce_ms().to_string(),
        );
        if let Some(at) = self.lost_at {
            facts.insert(oracle::FACT_LOST.into(), at.to_string());
        }
        for (node, since) in &self.heard_lacking {
            let name = &self.names[usize::from(*node)];
            facts.insert(format!("{}{name}", oracle::FACT_HEARD), since.to_string());
        }
        if self.last.as_ref() != Some(&observation) {
            self.last = Some(observation.clone());
            self.ctx.publish(observation);
        }
    }

    /// The members this node sees Alive, `n2:0.0,n3:0.1`.
    fn view(&self) -> String {
        let ids: Vec<String> = self.active.iter().map(|id| id.show(&self.names)).collect();
        ids.join(",")
    }
}
