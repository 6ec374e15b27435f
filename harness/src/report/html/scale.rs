//! The diagram's time axis: simulated time runs down, proportionally where things
//! happen, with idle stretches squeezed and the number of rows bounded.
//!
//! A run can be 40 events in 4 seconds or 50,000 events in 30 simulated minutes.
//! A linear scale fails both ways: events 1 ms apart overlap, and a 30-minute run is
//! either unreadably thin or many metres tall. So:
//!
//! - Every drawn item has a time; times are grouped into **rows** ("slots"), one per
//!   distinct time, coarsened along 1-2-5 steps (1 ms, 2 ms, 5 ms, 10 ms, ...) until
//!   there are at most [`SLOTS_MAX`]. Items that share a slot and a lane are drawn
//!   side by side or as one aggregate mark.
//! - Each row gets [`ROW_MIN_PX`] of its own, so two events never sit on one pixel.
//! - On top of that, the time between rows is drawn proportionally, with one scale
//!   (px per ms) chosen so the proportional part adds up to [`LINEAR_BUDGET_PX`];
//!   a gap longer than [`GAP_SOFT_PX`] grows only logarithmically beyond it and is
//!   marked as compressed. Longer gaps never look shorter than shorter ones.
//!
//! So the axis is at most about `SLOTS_MAX * ROW_MIN_PX + LINEAR_BUDGET_PX` tall
//! (~4.5k px), whatever the run.

/// Most rows the diagram has.
pub const SLOTS_MAX: usize = 240;
/// Height each row gets before any proportional time is added.
pub const ROW_MIN_PX: f64 = 16.0;
/// What the proportional part of all gaps adds up to (when the run allows).
pub const LINEAR_BUDGET_PX: f64 = 640.0;
/// A gap drawn taller than this is compressed (and marked as such).
pub const GAP_SOFT_PX: f64 = 72.0;
/// Short runs are not stretched beyond this.
const PX_PER_MS_MAX: f64 = 2.0;

/// A compressed gap between two rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Break {
    pub y_top: f64,
    pub y_bottom: f64,
    pub from_ms: u64,
    pub to_ms: u64,
}

#[derive(Clone, Debug)]
pub struct Scale {
    /// Width of a slot in ms (1, 2, 5, 10, ...).
    pub resolution_ms: u64,
    /// Slot start times, ascending, the first one 0.
    pub slots: Vec<u64>,
    /// y of each slot.
    pub ys: Vec<f64>,
    pub end_ms: u64,
    pub y_end: f64,
    pub px_per_ms: f64,
    pub breaks: Vec<Break>,
}

fn proportional(gap_px: f64) -> f64 {
    if gap_px <= GAP_SOFT_PX {
        gap_px
    } else {
        GAP_SOFT_PX + 12.0 * (gap_px / GAP_SOFT_PX).ln()
    }
}

/// 1, 2, 5, 10, 20, 50, ... ms.
fn resolutions() -> impl Iterator<Item = u64> {
    (0..19u32).flat_map(|e| [1u64, 2, 5].map(|m| m * 10u64.pow(e)))
}

impl Scale {
    /// A scale for items at `times` in a run that ended at `end_ms`, starting at `top`.
    pub fn new(times: &[u64], end_ms: u64, top: f64) -> Scale {
        let mut sorted: Vec<u64> = times.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let end_ms = end_ms.max(sorted.last().copied().unwrap_or(0));
        let mut resolution_ms = 1;
        let mut slots = Vec::new();
        for r in resolutions() {
            resolution_ms = r;
            slots = std::iter::once(0)
                .chain(sorted.iter().map(|t| t / r * r))
                .collect();
            slots.dedup();
            if slots.len() <= SLOTS_MAX {
                break;
            }
        }
        // Gaps between consecutive rows, and from the last row to the end.
        let mut gaps: Vec<u64> = slots.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.push(end_ms - slots[slots.len() - 1]);
        let total = |s: f64| {
            gaps.iter()
                .map(|&g| proportional(g as f64 * s))
                .sum::<f64>()
        };
        let px_per_ms = if total(PX_PER_MS_MAX) <= LINEAR_BUDGET_PX {
            PX_PER_MS_MAX
        } else {
            // total(s) is continuous and increasing: bisect for the budget.
            let (mut lo, mut hi) = (0.0f64, PX_PER_MS_MAX);
            for _ in 0..64 {
                let mid = (lo + hi) / 2.0;
                if total(mid) < LINEAR_BUDGET_PX {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let mut ys = Vec::with_capacity(slots.len());
        let mut breaks = Vec::new();
        let mut y = top + ROW_MIN_PX / 2.0;
        for (i, &gap) in gaps.iter().enumerate() {
            ys.push(y);
            let linear = gap as f64 * px_per_ms;
            let h = ROW_MIN_PX + proportional(linear);
            if linear > GAP_SOFT_PX {
                breaks.push(Break {
                    y_top: y + ROW_MIN_PX / 2.0,
                    y_bottom: y + h - ROW_MIN_PX / 2.0,
                    from_ms: slots[i],
                    to_ms: slots.get(i + 1).copied().unwrap_or(end_ms),
                });
            }
            y += h;
        }
        Scale {
            resolution_ms,
            slots,
            ys,
            end_ms,
            // The end line sits a row below the last row, never on it.
            y_end: y,
            px_per_ms,
            breaks,
        }
    }

    /// The slot (row) an item at `t_ms` is drawn in.
    pub fn slot_of(&self, t_ms: u64) -> usize {
        let q = t_ms / self.resolution_ms * self.resolution_ms;
        match self.slots.binary_search(&q) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// y of any time: a row's own y at its slot, interpolated between rows.
    pub fn y(&self, t_ms: u64) -> f64 {
        let q = t_ms / self.resolution_ms * self.resolution_ms;
        let i = match self.slots.binary_search(&q) {
            Ok(i) => return self.ys[i],
            Err(i) => i.saturating_sub(1),
        };
        let (t0, y0) = (self.slots[i], self.ys[i]);
        let (t1, y1) = match self.slots.get(i + 1) {
            Some(&t1) => (t1, self.ys[i + 1]),
            None => (self.end_ms.max(t0 + 1), self.y_end),
        };
        let f = (t_ms.min(t1) - t0) as f64 / (t1 - t0).max(1) as f64;
        y0 + f * (y1 - y0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_events_get_their_own_rows_and_order_is_kept() {
        let s = Scale::new(&[198, 199, 200, 2000], 4000, 0.0);
        assert_eq!(s.resolution_ms, 1);
        assert_eq!(s.slots, vec![0, 198, 199, 200, 2000]);
        for w in s.ys.windows(2) {
            assert!(w[1] - w[0] >= ROW_MIN_PX, "{:?}", s.ys);
        }
        assert!(s.y(199) < s.y(1000) && s.y(1000) < s.y(2000));
        assert!(s.y_end > s.y(2000));
    }

    #[test]
    fn long_runs_are_bounded_and_idle_time_is_compressed() {
        // 30 simulated minutes: an event every 7 ms in the first second, a few in
        // the next seconds, then nothing until the last minute.
        let mut times: Vec<u64> = (0..143).map(|i| i * 7).collect();
        times.extend((1..10).map(|s| s * 1_000));
        times.push(29 * 60_000);
        let s = Scale::new(&times, 30 * 60_000, 0.0);
        assert!(s.slots.len() <= SLOTS_MAX);
        let bound = SLOTS_MAX as f64 * ROW_MIN_PX + LINEAR_BUDGET_PX + ROW_MIN_PX;
        assert!(s.y_end <= bound, "{} > {bound}", s.y_end);
        assert!(!s.breaks.is_empty(), "minutes of idle time are compressed");
    }

    #[test]
    fn too_many_distinct_times_are_coarsened() {
        let times: Vec<u64> = (0..100_000).map(|i| i * 3).collect();
        let s = Scale::new(&times, 300_000, 0.0);
        assert!(s.slots.len() <= SLOTS_MAX);
        assert!(s.resolution_ms >= 1000);
        assert!(s.slot_of(2999) <= s.slot_of(3000));
        assert_eq!(s.slot_of(0), 0);
        assert!(s.y(299_999) <= s.y_end);
    }

    #[test]
    fn an_empty_run_still_has_an_axis() {
        let s = Scale::new(&[], 0, 10.0);
        assert_eq!(s.slots, vec![0]);
        assert!(s.y_end >= 10.0);
        assert_eq!(s.y(0), s.ys[0]);
    }
}
