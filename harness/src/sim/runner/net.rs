//! What the scenario did to the network, so the heal phase can undo exactly that.

use crate::lang::scenario::{Cut, NodeId};
use std::collections::{BTreeMap, BTreeSet};
use turmoil::Sim;

#[derive(Default)]
pub struct NetState {
    pub cuts: BTreeSet<Cut>,
    pub holds: BTreeSet<(NodeId, NodeId)>,
    pub latencies: BTreeSet<(NodeId, NodeId)>,
    /// When the last fault on each link (the pair in order) ended.
    ended: BTreeMap<(NodeId, NodeId), u64>,
}

/// Messages on every link, not yet delivered.
fn in_flight(sim: &Sim<'_>) -> usize {
    let mut count = 0;
    sim.links(|links| {
        for link in links {
            count += link.count();
        }
    });
    count
}

fn pair(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

impl NetState {
    /// Every link a fault touched, with the last time one was in effect on it:
    /// `now_ms` for a link still cut, held or slowed.
    pub fn faulted_until(&self, now_ms: u64) -> BTreeMap<(NodeId, NodeId), u64> {
        let mut links = self.ended.clone();
        let active = self.cuts.iter().map(|c| pair(c.from, c.to));
        for link in active
            .chain(self.holds.iter().copied())
            .chain(self.latencies.iter().copied())
        {
            links.insert(link, now_ms);
        }
        links
    }

    fn ended(&mut self, sim: &Sim<'_>, a: NodeId, b: NodeId) {
        self.ended
            .insert(pair(a, b), sim.elapsed().as_millis() as u64);
    }

    pub fn cut(&mut self, sim: &Sim<'_>, names: &[String], cut: Cut) {
        if cut.oneway {
            sim.partition_oneway(names[cut.from].as_str(), names[cut.to].as_str());
        } else {
            sim.partition(names[cut.from].as_str(), names[cut.to].as_str());
        }
        self.cuts.insert(cut);
    }

    /// Repair every cut. turmoil's repair marks the link healthy, so a link
    /// that is also held is held again: otherwise new messages would flow while
    /// the ones held before the repair wait for the release, and arrive after
    /// them (a request from before a newer one, as no TCP stream delivers).
    pub fn repair_all(&mut self, sim: &Sim<'_>, names: &[String]) -> usize {
        let cuts = std::mem::take(&mut self.cuts);
        for cut in &cuts {
            let (from, to) = (names[cut.from].as_str(), names[cut.to].as_str());
            if cut.oneway {
                sim.repair_oneway(from, to);
            } else {
                sim.repair(from, to);
            }
            self.ended(sim, cut.from, cut.to);
            if self.holds.contains(&pair(cut.from, cut.to)) {
                sim.hold(from, to);
            }
        }
        cuts.len()
    }

    pub fn hold(&mut self, sim: &Sim<'_>, names: &[String], a: NodeId, b: NodeId) {
        sim.hold(names[a].as_str(), names[b].as_str());
        self.holds.insert(pair(a, b));
    }

    /// A machine crash of `node` loses what it had sent over a held link and
    /// the link has not delivered: a held message stands for data the sender's
    /// TCP stack keeps retransmitting until the link heals, and that stack dies
    /// with the machine. (turmoil keeps held messages of a crashed host and
    /// delivers them on release, so a peer would read a request from a process
    /// that no longer exists, after its next incarnation's.) Messages held
    /// towards `node`, and the peers' view of the connection, are left as they
    /// are. Returns the number of messages lost.
    pub fn lose_held_from(&mut self, sim: &Sim<'_>, names: &[String], node: NodeId) -> usize {
        let peers: Vec<NodeId> = self
            .holds
            .iter()
            .filter_map(|&(a, b)| match (a == node, b == node) {
                (true, _) => Some(b),
                (_, true) => Some(a),
                _ => None,
            })
            .collect();
        if peers.is_empty() {
            return 0;
        }
        let before = in_flight(sim);
        for peer in peers {
            // partition_oneway drops the in-flight messages `node` sent on the
            // link; hold puts the link back as it was (held both ways).
            sim.partition_oneway(names[node].as_str(), names[peer].as_str());
            sim.hold(names[node].as_str(), names[peer].as_str());
        }
        before - in_flight(sim)
    }

    /// Release held messages. turmoil's release also marks the link healthy, so any
    /// partition the scenario placed on this link is put back.
    pub fn release(&mut self, sim: &Sim<'_>, names: &[String], a: NodeId, b: NodeId) -> bool {
        let was_held = self.holds.remove(&pair(a, b));
        sim.release(names[a].as_str(), names[b].as_str());
        if was_held {
            self.ended(sim, a, b);
        }
        for cut in self
            .cuts
            .iter()
            .filter(|c| pair(c.from, c.to) == pair(a, b))
        {
            if cut.oneway {
                sim.partition_oneway(names[cut.from].as_str(), names[cut.to].as_str());
            } else {
                sim.partition(names[cut.from].as_str(), names[cut.to].as_str());
            }
        }
        was_held
    }

    pub fn release_all(&mut self, sim: &Sim<'_>, names: &[String]) -> usize {
        let holds: Vec<_> = self.holds.iter().copied().collect();
        for (a, b) in &holds {
            self.release(sim, names, *a, *b);
        }
        holds.len()
    }

    pub fn set_latency(
        &mut self,
        sim: &Sim<'_>,
        names: &[String],
        a: NodeId,
        b: NodeId,
        delay: std::time::Duration,
    ) {
        sim.set_link_latency(names[a].as_str(), names[b].as_str(), delay);
        self.latencies.insert(pair(a, b));
    }

    /// Put one link back on the global latency range.
    pub fn reset_latency(
        &mut self,
        sim: &Sim<'_>,
        names: &[String],
        a: NodeId,
        b: NodeId,
        min: std::time::Duration,
        max: std::time::Duration,
    ) {
        sim.set_link_latency(names[a].as_str(), names[b].as_str(), min);
        sim.set_link_max_message_latency(names[a].as_str(), names[b].as_str(), max);
        if self.latencies.remove(&pair(a, b)) {
            self.ended(sim, a, b);
        }
    }

    /// Put every changed link back on the global latency range.
    pub fn reset_latencies(
        &mut self,
        sim: &Sim<'_>,
        names: &[String],
        min: std::time::Duration,
        max: std::time::Duration,
    ) -> usize {
        let links = std::mem::take(&mut self.latencies);
        for &(a, b) in &links {
            sim.set_link_latency(names[a].as_str(), names[b].as_str(), min);
            sim.set_link_max_message_latency(names[a].as_str(), names[b].as_str(), max);
            self.ended(sim, a, b);
        }
        links.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::Duration;
    use turmoil::net::UdpSocket;

    /// Host `a` sends one datagram to `b` over a held link; `crash` says
    /// whether `a`'s machine crashes before the release. Returns how many
    /// messages the crash lost and whether `b` got the datagram.
    fn held_then_released(crash: bool) -> (usize, bool) {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut sim = turmoil::Builder::new()
            .rng_seed(1)
            .simulation_duration(Duration::from_secs(10))
            .build();
        let got = Rc::new(Cell::new(false));
        let seen = got.clone();
        sim.host("b", move || {
            let seen = seen.clone();
            async move {
                let socket = UdpSocket::bind("0.0.0.0:9000").await?;
                let mut buf = [0u8; 16];
                socket.recv_from(&mut buf).await?;
                seen.set(true);
                Ok(())
            }
        });
        sim.host("a", || async {
            let socket = UdpSocket::bind("0.0.0.0:9000").await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            socket.send_to(b"hello", ("b", 9000)).await?;
            std::future::pending::<()>().await;
            Ok(())
        });
        let mut net = NetState::default();
        sim.step().expect("step");
        net.hold(&sim, &names, 0, 1);
        for _ in 0..300 {
            sim.step().expect("step");
        }
        assert_eq!(in_flight(&sim), 1, "the datagram waits on the held link");
        let mut lost = 0;
        if crash {
            lost = net.lose_held_from(&sim, &names, 0);
            sim.crash("a");
        }
        net.release(&sim, &names, 0, 1);
        for _ in 0..300 {
            sim.step().expect("step");
        }
        (lost, got.get())
    }

    #[test]
    fn a_repaired_cut_keeps_the_link_held_until_its_release() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut sim = turmoil::Builder::new()
            .rng_seed(1)
            .simulation_duration(Duration::from_secs(10))
            .build();
        let got = Rc::new(Cell::new(0u32));
        let seen = got.clone();
        sim.host("b", move || {
            let seen = seen.clone();
            async move {
                let socket = UdpSocket::bind("0.0.0.0:9000").await?;
                let mut buf = [0u8; 16];
                loop {
                    socket.recv_from(&mut buf).await?;
                    seen.set(seen.get() + 1);
                }
            }
        });
        sim.host("a", || async {
            let socket = UdpSocket::bind("0.0.0.0:9000").await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            socket.send_to(b"first", ("b", 9000)).await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            socket.send_to(b"second", ("b", 9000)).await?;
            std::future::pending::<()>().await;
            Ok(())
        });
        let mut net = NetState::default();
        sim.step().expect("step");
        let cut = Cut {
            from: 0,
            to: 1,
            oneway: false,
        };
        net.cut(&sim, &names, cut);
        net.hold(&sim, &names, 0, 1);
        for _ in 0..200 {
            sim.step().expect("step");
        }
        assert_eq!(net.repair_all(&sim, &names), 1);
        for _ in 0..400 {
            sim.step().expect("step");
        }
        assert_eq!(got.get(), 0, "both wait on the still held link");
        assert_eq!(in_flight(&sim), 2);
        net.release(&sim, &names, 0, 1);
        for _ in 0..100 {
            sim.step().expect("step");
        }
        assert_eq!(got.get(), 2, "the release delivers both");
    }

    #[test]
    fn a_machine_crash_loses_what_it_sent_over_a_held_link() {
        assert_eq!(held_then_released(true), (1, false));
    }

    #[test]
    fn without_a_crash_the_release_delivers_what_was_held() {
        assert_eq!(held_then_released(false), (0, true));
    }

    #[test]
    fn a_crash_loses_nothing_when_no_link_of_it_is_held() {
        let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let mut sim = turmoil::Builder::new().rng_seed(1).build();
        for name in &names {
            sim.host(name.as_str(), std::future::pending);
        }
        let mut net = NetState::default();
        net.hold(&sim, &names, 1, 2);
        assert_eq!(net.lose_held_from(&sim, &names, 0), 0);
        assert!(net.holds.contains(&(1, 2)), "the other hold stays");
    }

    /// Steps `sim` until its clock has passed `ms`.
    fn run_until(sim: &mut Sim<'_>, ms: u64) {
        while (sim.elapsed().as_millis() as u64) < ms {
            sim.step().expect("step");
        }
    }

    #[test]
    fn each_link_remembers_when_a_fault_was_last_on_it() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut sim = turmoil::Builder::new()
            .rng_seed(1)
            .simulation_duration(Duration::from_secs(10))
            .build();
        for name in &names {
            sim.host(name.as_str(), std::future::pending);
        }
        let mut net = NetState::default();
        assert!(net.faulted_until(0).is_empty(), "no fault yet");
        // c -> a cut one way, a-b slowed, b-c held.
        net.cut(
            &sim,
            &names,
            Cut {
                from: 2,
                to: 0,
                oneway: true,
            },
        );
        net.set_latency(&sim, &names, 0, 1, Duration::from_millis(300));
        net.hold(&sim, &names, 1, 2);
        run_until(&mut sim, 500);
        let repaired = sim.elapsed().as_millis() as u64;
        assert_eq!(net.repair_all(&sim, &names), 1);
        run_until(&mut sim, 900);
        let reset = sim.elapsed().as_millis() as u64;
        let (min, max) = (Duration::from_millis(1), Duration::from_millis(5));
        net.reset_latency(&sim, &names, 1, 0, min, max);
        run_until(&mut sim, 1_200);
        let now = sim.elapsed().as_millis() as u64;
        let links = net.faulted_until(now);
        // The one-way cut counts for the pair, in order; the hold is still on.
        assert_eq!(
            links,
            BTreeMap::from([((0, 1), reset), ((0, 2), repaired), ((1, 2), now)])
        );
        assert!(repaired >= 500 && reset >= 900 && now >= 1_200);
        // Releasing ends it; releasing a link that was never held does not.
        assert!(net.release(&sim, &names, 2, 1));
        assert!(!net.release(&sim, &names, 0, 1));
        run_until(&mut sim, 2_000);
        let later = sim.elapsed().as_millis() as u64;
        assert_eq!(
            net.faulted_until(later),
            BTreeMap::from([((0, 1), reset), ((0, 2), repaired), ((1, 2), now)])
        );
    }
}
