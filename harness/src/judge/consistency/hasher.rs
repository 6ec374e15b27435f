//! A fixed-seed hasher for the search's memo table. The table is only ever asked
//! "seen this?", never iterated, so no order reaches a verdict or an output; a
//! fixed hash keeps the work (and the benchmark) the same from run to run, which
//! std's randomly seeded hasher would not.

use std::hash::{BuildHasherDefault, Hasher};

/// FxHash's multiply-rotate step (rustc's hasher): fast on the small integer
/// keys the search hashes.
#[derive(Clone, Copy, Default)]
pub struct FixedHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FixedHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FixedHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FixedState = BuildHasherDefault<FixedHasher>;

/// A hash map with the fixed hasher: the search's memo tables, looked up and never
/// iterated, so no order reaches a verdict; the same in every process.
#[allow(
    clippy::disallowed_types,
    reason = "fixed hasher, never iterated: the one sanctioned std HashMap"
)]
pub type FixedMap<K, V> = std::collections::HashMap<K, V, FixedState>; // wall-clock ok: fixed hasher, never iterated

/// A hash set with the fixed hasher (see [`FixedMap`]).
#[allow(
    clippy::disallowed_types,
    reason = "fixed hasher, never iterated: the one sanctioned std HashSet"
)]
pub type FixedSet<T> = std::collections::HashSet<T, FixedState>; // wall-clock ok: fixed hasher, never iterated
