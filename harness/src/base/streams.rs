//! The harness's random streams. Every draw of a run comes from its one seed; each
//! purpose draws from its own ChaCha8 stream of that seed, so that one purpose
//! drawing more never shifts another's draws (a new `follower` pick does not
//! change which faults chaos injects).
//!
//! Nodes draw from streams `index << 32 | incarnation` ([`faultline_api::node_stream`]).
//! The harness's newer streams lie above every node's; the three oldest keep their
//! values (every recorded trail depends on them) and lie in node 0's range, where
//! node 0 would reach them only at its 64,024th start: the runner refuses to start
//! a node that often ([`INCARNATIONS_MAX`]), so no node ever draws a harness stream.

use rand_chacha::ChaCha8Rng;

/// One purpose of the run that draws random numbers, and its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    /// The chaos window's fault draws (its workload draws from [`Stream::ChaosWorkload`]).
    Chaos,
    /// Fail-point probabilities.
    Faults,
    /// `follower` and `any` picks of actions.
    Picks,
    /// `{A..B}` draws of scripted client ops.
    Placeholders,
    /// What a seed makes of a chaos section (swarm weights, drawn params).
    Swarm,
    /// The scenario's `workload:` draws (op picks, placeholders).
    Workload,
    /// The chaos section's workload draws.
    ChaosWorkload,
    /// Guided search's choices of corpus entries and mutations (seeded by the
    /// search, not by a run: a derived run's own draws come from its seed).
    Guided,
    /// The delays after which the chaos window starts a node whose process
    /// ended itself (`restart_exited`), drawn in the order the exits came.
    Supervisor,
}

/// Starts of one node before the runner stops the run: below the lowest harness
/// stream inside the node range, so a node's stream never is a harness stream.
pub const INCARNATIONS_MAX: u32 = 60_000;

impl Stream {
    pub const ALL: [Stream; 9] = [
        Stream::Chaos,
        Stream::Faults,
        Stream::Picks,
        Stream::Placeholders,
        Stream::Swarm,
        Stream::Workload,
        Stream::ChaosWorkload,
        Stream::Guided,
        Stream::Supervisor,
    ];

    /// The ChaCha8 stream number.
    pub const fn id(self) -> u64 {
        match self {
            Stream::Chaos => 0xc4a0_5000,
            Stream::Faults => 0xfa17,
            Stream::Picks => 0x7069_636b_0000_0000,
            Stream::Placeholders => 0x706c_6163_0000_0000,
            Stream::Swarm => 0x5a4a_4d00,
            Stream::Workload => 0x776f_726b_0000_0000,
            Stream::ChaosWorkload => 0x776f_726b_0000_0001,
            Stream::Guided => 0x6775_6964_0000_0000,
            Stream::Supervisor => 0x7375_7076_0000_0000,
        }
    }

    /// A generator for this purpose of the run seeded `seed`.
    pub fn rng(self, seed: u64) -> ChaCha8Rng {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(self.id());
        rng
    }
}

/// Most nodes a scenario has (the scenario's limit is this one): every node's
/// streams are checked against the harness's own.
pub const NODES_MAX: usize = 32;

/// Whether stream `id` is some node's, for a node index below `nodes` started
/// fewer than [`INCARNATIONS_MAX`] times.
const fn is_node_stream(id: u64, nodes: usize) -> bool {
    let index = id >> 32;
    let incarnation = id & 0xffff_ffff;
    index < nodes as u64 && incarnation < INCARNATIONS_MAX as u64
}

/// Every harness stream differs from every other and from every node's.
const fn disjoint() -> bool {
    let all = Stream::ALL;
    let mut i = 0;
    while i < all.len() {
        if is_node_stream(all[i].id(), NODES_MAX) {
            return false;
        }
        let mut j = i + 1;
        while j < all.len() {
            if all[i].id() == all[j].id() {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

const _: () = assert!(disjoint(), "the harness's random streams overlap");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_stream_formula_is_the_one_checked_here() {
        let nodes = crate::lang::scenario::NODES_MAX;
        let last = faultline_api::node_stream(nodes - 1, INCARNATIONS_MAX - 1);
        assert!(is_node_stream(last, nodes));
        assert!(!is_node_stream(faultline_api::node_stream(nodes, 0), nodes));
        for stream in Stream::ALL {
            assert!(!is_node_stream(stream.id(), nodes), "{stream:?}");
        }
        // Node 0 meets the lowest old stream right after the cap.
        assert!(u64::from(INCARNATIONS_MAX) < Stream::Faults.id());
    }

    #[test]
    fn a_stream_replays_and_streams_differ() {
        use rand::RngCore;
        let draw = |s: Stream| s.rng(7).next_u64();
        assert_eq!(draw(Stream::Picks), draw(Stream::Picks));
        let mut seen = std::collections::BTreeSet::new();
        for stream in Stream::ALL {
            assert!(seen.insert(draw(stream)), "{stream:?} repeats another");
        }
    }
}
