//! Sweep progress: a bar ([`crate::drive::progress::Bar`]) with the sweep's counts, rate
//! and failures. Wall time here is only ever shown, never part of any trail.

use crate::drive::progress::Bar;
use std::time::Duration;

pub struct Progress {
    done: usize,
    failures: usize,
    bar: Bar,
}

impl Progress {
    pub fn new(total: usize, done: usize, quiet: bool) -> Self {
        Progress {
            done,
            failures: 0,
            bar: Bar::new("sweep", "runs", total as u64, done as u64, quiet),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.bar.elapsed()
    }

    pub fn record(&mut self, passed: bool, started_here: &mut usize) {
        self.done += 1;
        *started_here += 1;
        if !passed {
            self.failures += 1;
        }
        let message = format!(
            "{:.1} runs/s, {} failure(s)",
            self.rate(*started_here),
            self.failures
        );
        self.bar.set(self.done as u64, message);
    }

    pub fn rate(&self, runs: usize) -> f64 {
        runs as f64 / self.elapsed().as_secs_f64().max(1e-9)
    }

    pub fn finish(&self) {
        self.bar.finish();
    }
}
