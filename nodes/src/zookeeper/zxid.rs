//! Transaction ids: `(epoch << 32) | counter`, shown in hex as ZooKeeper logs them.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Zxid(pub u64);

impl Zxid {
    pub const ZERO: Zxid = Zxid(0);

    pub fn new(epoch: u32, counter: u32) -> Zxid {
        Zxid((u64::from(epoch) << 32) | u64::from(counter))
    }

    pub fn epoch(self) -> u32 {
        (self.0 >> 32) as u32
    }

    pub fn counter(self) -> u32 {
        self.0 as u32
    }
}

impl fmt::Display for Zxid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:x}", self.0)
    }
}

/// Zxids in the order given, runs of consecutive counters within one epoch collapsed:
/// `0x100000001-0x100000002 0x200000001`; `none` when empty. A log that lost a txn
/// shows the hole; a log with a repeated segment shows the repeat.
pub fn ranges(zxids: impl IntoIterator<Item = Zxid>) -> String {
    let runs = runs(zxids);
    if runs.is_empty() {
        return "none".to_string();
    }
    runs.iter()
        .map(|(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The runs behind [`ranges`].
pub fn runs(zxids: impl IntoIterator<Item = Zxid>) -> Vec<(Zxid, Zxid)> {
    let mut runs: Vec<(Zxid, Zxid)> = Vec::new();
    for zxid in zxids {
        match runs.last_mut() {
            Some((_, hi)) if hi.epoch() == zxid.epoch() && hi.0 + 1 == zxid.0 => *hi = zxid,
            _ => runs.push((zxid, zxid)),
        }
    }
    runs
}

/// Parse what [`ranges`] wrote.
pub fn parse_ranges(text: &str) -> Option<Vec<(Zxid, Zxid)>> {
    if text == "none" {
        return Some(Vec::new());
    }
    text.split_whitespace()
        .map(|part| {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            Some((parse_hex(lo)?, parse_hex(hi)?))
        })
        .collect()
}

pub fn parse_hex(text: &str) -> Option<Zxid> {
    let digits = text.strip_prefix("0x")?;
    u64::from_str_radix(digits, 16).ok().map(Zxid)
}

/// The first zxid of `need` (inclusive bounds) that no run in `have` contains.
pub fn first_uncovered(need: (Zxid, Zxid), have: &[(Zxid, Zxid)]) -> Option<Zxid> {
    let mut have: Vec<(Zxid, Zxid)> = have.to_vec();
    have.sort();
    let mut next = need.0;
    for (lo, hi) in have {
        if next > need.1 {
            return None;
        }
        if hi < next {
            continue;
        }
        if lo > next {
            return Some(next);
        }
        next = Zxid(hi.0 + 1);
    }
    (next <= need.1).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_collapse_runs_within_an_epoch_and_round_trip() {
        let log = [
            Zxid::new(1, 1),
            Zxid::new(1, 2),
            Zxid::new(2, 1),
            Zxid::new(2, 2),
        ];
        let text = ranges(log);
        assert_eq!(text, "0x100000001-0x100000002 0x200000001-0x200000002");
        assert_eq!(
            parse_ranges(&text).unwrap(),
            vec![
                (Zxid::new(1, 1), Zxid::new(1, 2)),
                (Zxid::new(2, 1), Zxid::new(2, 2))
            ]
        );
        assert_eq!(ranges([]), "none");
        assert_eq!(parse_ranges("none").unwrap(), vec![]);
    }

    #[test]
    fn a_lost_txn_leaves_a_hole_that_coverage_finds() {
        let have = parse_ranges("0x100000001-0x100000002 0x200000001").unwrap();
        let need = (Zxid::new(1, 1), Zxid::new(1, 3));
        assert_eq!(first_uncovered(need, &have), Some(Zxid::new(1, 3)));
        let full = parse_ranges("0x100000001-0x100000003 0x200000001").unwrap();
        assert_eq!(first_uncovered(need, &full), None);
    }
}
