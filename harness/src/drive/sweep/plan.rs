//! Which runs a sweep (or one shard of it) does: every (scenario, variant, seed)
//! in a fixed order, the k-th of every n in that order for shard k/n. Computed
//! arithmetically, so a huge range or shard count costs nothing to plan, and
//! bounded, so a typo cannot plan more runs than a machine can hold.

use crate::lang::scenario::Scenario;
use std::ops::RangeInclusive;

/// Most seeds in one `--seeds` range. Documented in the README.
pub const SEEDS_MAX: u64 = 1_000_000;
/// Most runs in one sweep slice (after sharding): each finished run keeps a
/// record in memory for the summaries.
pub const RUNS_MAX: u64 = 1_000_000;

/// One run to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// Index into the loaded scenarios.
    pub file: usize,
    /// Index into that scenario's variants.
    pub variant: usize,
    pub seed: u64,
}

/// "1..1000" (inclusive), "1..=1000", or one seed "7"; at most [`SEEDS_MAX`] seeds.
pub fn parse_seeds(text: &str) -> Result<RangeInclusive<u64>, String> {
    let shown = crate::base::text::printable(text);
    let bad = || format!("cannot read seeds `{shown}`; write e.g. `1..1000` (inclusive) or `7`");
    let (lo, hi) = match text.split_once("..") {
        Some((lo, hi)) => (lo, hi.strip_prefix('=').unwrap_or(hi)),
        None => (text, text),
    };
    let (lo, hi) = (
        lo.trim().parse::<u64>().map_err(|_| bad())?,
        hi.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if lo > hi {
        return Err(format!("seed range `{shown}` is empty"));
    }
    let count = u128::from(hi - lo) + 1;
    if count > u128::from(SEEDS_MAX) {
        return Err(format!(
            "seed range `{shown}` holds {count} seeds; one sweep takes at most {SEEDS_MAX} \
             (split the range over several sweeps or shards)"
        ));
    }
    Ok(lo..=hi)
}

/// "K/N" with 1 <= K <= N.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let shown = crate::base::text::printable(text);
    let bad = || format!("cannot read shard `{shown}`; write K/N, e.g. `2/4`");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n) = (
        k.trim().parse::<u64>().map_err(|_| bad())?,
        n.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard `{shown}`: K must be in 1..=N"));
    }
    Ok((k, n))
}

/// The (scenario, variant) groups a sweep covers, in order.
fn groups<'a>(
    scenarios: &'a [Scenario],
    variant: Option<&'a str>,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    scenarios.iter().enumerate().flat_map(move |(f, s)| {
        s.variants
            .iter()
            .enumerate()
            .filter(move |(_, v)| variant.is_none_or(|name| v.name == name))
            .map(move |(i, _)| (f, i))
    })
}

/// The global indices `base..base+len` that belong to shard k/n: the first one and
/// how many, without visiting the others.
fn slice(base: u128, len: u128, shard: Option<(u64, u64)>) -> (u128, u128) {
    let Some((k, n)) = shard else {
        return (base, len);
    };
    let (k, n) = (u128::from(k), u128::from(n));
    let offset = (k - 1 + n - base % n) % n;
    if offset >= len {
        return (base, 0);
    }
    (base + offset, (len - offset).div_ceil(n))
}

/// How many runs the slice holds (cheap: no list is built).
pub fn count(
    scenarios: &[Scenario],
    variant: Option<&str>,
    seeds: &RangeInclusive<u64>,
    shard: Option<(u64, u64)>,
) -> u128 {
    let len = u128::from(seeds.end() - seeds.start()) + 1;
    let mut base = 0u128;
    let mut total = 0u128;
    for _ in groups(scenarios, variant) {
        total += slice(base, len, shard).1;
        base += len;
    }
    total
}

/// Every run of the slice, in the fixed order; refused over [`RUNS_MAX`].
pub fn plan(
    scenarios: &[Scenario],
    variant: Option<&str>,
    seeds: &RangeInclusive<u64>,
    shard: Option<(u64, u64)>,
) -> Result<Vec<Item>, String> {
    let total = count(scenarios, variant, seeds, shard);
    if total > u128::from(RUNS_MAX) {
        return Err(format!(
            "this sweep slice holds {total} runs; the limit is {RUNS_MAX} (use fewer seeds, \
             or more shards)"
        ));
    }
    let len = u128::from(seeds.end() - seeds.start()) + 1;
    let step = u128::from(shard.map_or(1, |(_, n)| n));
    let mut items = Vec::with_capacity(total as usize);
    let mut base = 0u128;
    for (file, variant) in groups(scenarios, variant) {
        let (first, mine) = slice(base, len, shard);
        for j in 0..mine {
            let offset = first + j * step - base;
            items.push(Item {
                file,
                variant,
                seed: seeds.start() + offset as u64,
            });
        }
        base += len;
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_and_shards_parse() {
        assert_eq!(parse_seeds("1..1000").unwrap(), 1..=1000);
        assert_eq!(parse_seeds("1..=10").unwrap(), 1..=10);
        assert_eq!(parse_seeds("7").unwrap(), 7..=7);
        assert!(parse_seeds("10..1").unwrap_err().contains("empty"));
        assert!(parse_seeds("a..b").is_err());
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("x").is_err());
    }

    #[test]
    fn a_huge_seed_range_is_a_clear_error_not_an_allocation() {
        let e = parse_seeds("1..99999999999999").unwrap_err();
        assert!(e.contains("holds 99999999999999 seeds"), "{e}");
        assert!(parse_seeds("0..18446744073709551615").is_err());
        assert_eq!(parse_seeds("1..1000000").unwrap(), 1..=1_000_000);
    }

    #[test]
    fn slices_partition_the_order_and_cost_nothing_for_huge_shard_counts() {
        // Three groups of 10 global indices each, four shards.
        let mut owners = vec![0u64; 30];
        for k in 1..=4u64 {
            for g in 0..3u128 {
                let (first, mine) = slice(g * 10, 10, Some((k, 4)));
                for j in 0..mine {
                    let i = (first + j * 4) as usize;
                    assert!(i < ((g + 1) * 10) as usize);
                    assert_eq!(owners[i], 0, "index {i} in two shards");
                    owners[i] = k;
                }
            }
        }
        assert!(owners
            .iter()
            .enumerate()
            .all(|(i, k)| *k == (i as u64 % 4) + 1));
        // Shard 1 of 99,999,999,999,999 takes index 0 only.
        assert_eq!(slice(0, 100, Some((1, 99_999_999_999_999))), (0, 1));
        assert_eq!(slice(100, 100, Some((1, 99_999_999_999_999))).1, 0);
        assert_eq!(slice(0, 100, Some((u64::MAX, u64::MAX))).1, 0);
    }
}
