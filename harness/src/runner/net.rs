//! What the scenario did to the network, so the heal phase can undo exactly that.

use crate::scenario::{Cut, NodeId};
use std::collections::BTreeSet;
use turmoil::Sim;

#[derive(Default)]
pub struct NetState {
    pub cuts: BTreeSet<Cut>,
    pub holds: BTreeSet<(NodeId, NodeId)>,
    pub latencies: BTreeSet<(NodeId, NodeId)>,
}

fn pair(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

impl NetState {
    pub fn cut(&mut self, sim: &Sim<'_>, names: &[String], cut: Cut) {
        if cut.oneway {
            sim.partition_oneway(names[cut.from].as_str(), names[cut.to].as_str());
        } else {
            sim.partition(names[cut.from].as_str(), names[cut.to].as_str());
        }
        self.cuts.insert(cut);
    }

    pub fn repair_all(&mut self, sim: &Sim<'_>, names: &[String]) -> usize {
        let cuts = std::mem::take(&mut self.cuts);
        for cut in &cuts {
            if cut.oneway {
                sim.repair_oneway(names[cut.from].as_str(), names[cut.to].as_str());
            } else {
                sim.repair(names[cut.from].as_str(), names[cut.to].as_str());
            }
        }
        cuts.len()
    }

    pub fn hold(&mut self, sim: &Sim<'_>, names: &[String], a: NodeId, b: NodeId) {
        sim.hold(names[a].as_str(), names[b].as_str());
        self.holds.insert(pair(a, b));
    }

    /// Release held messages. turmoil's release also marks the link healthy, so any
    /// partition the scenario placed on this link is put back.
    pub fn release(&mut self, sim: &Sim<'_>, names: &[String], a: NodeId, b: NodeId) -> bool {
        let was_held = self.holds.remove(&pair(a, b));
        sim.release(names[a].as_str(), names[b].as_str());
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
        self.latencies.remove(&pair(a, b));
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
        for (a, b) in &links {
            sim.set_link_latency(names[*a].as_str(), names[*b].as_str(), min);
            sim.set_link_max_message_latency(names[*a].as_str(), names[*b].as_str(), max);
        }
        links.len()
    }
}
