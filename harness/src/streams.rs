//! The harness's random streams. Every draw of a run comes from its one seed; each
//! purpose draws from its own ChaCha8 stream of that seed, so that one purpose
//! drawing more never shifts another's draws (a new `follower` pick does not
//! change which faults chaos injects).
//!
//! Nodes draw from streams `index << 32 | incarnation` (`nodes::api::NodeCtx`):
//! below 2^37 for up to 32 nodes. New streams lie above that; the two oldest keep
//! their values (every recorded trail depends on them) and would meet node 0's
//! stream only at its 64,023rd and 3,298,840,576th start.

/// The chaos nemesis and its workload's draws.
pub const CHAOS: u64 = 0xc4a0_5000;
/// Fail-point probabilities.
pub const FAULTS: u64 = 0xfa17;
/// `follower` and `any` picks of actions.
pub const PICKS: u64 = 0x7069_636b_0000_0000;
/// `{A..B}` draws of scripted client ops.
pub const PLACEHOLDERS: u64 = 0x706c_6163_0000_0000;

/// Guided search's choices of corpus entries and mutations (seeded by the
/// search, not by a run: a derived run's own draws come from its seed).
pub const GUIDED: u64 = 0x6775_6964_0000_0000;

pub const ALL: [u64; 5] = [CHAOS, FAULTS, PICKS, PLACEHOLDERS, GUIDED];

/// A generator for one purpose of the run seeded `seed`.
pub fn rng(seed: u64, stream: u64) -> rand_chacha::ChaCha8Rng {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_disjoint_from_each_other_and_from_every_node_stream() {
        let node_streams_end = (crate::scenario::NODES_MAX as u64) << 32;
        for new in [PICKS, PLACEHOLDERS, GUIDED] {
            assert!(new >= node_streams_end, "{new:#x} could be a node's stream");
        }
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
