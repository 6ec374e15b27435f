//! Sweep progress: a bar redrawn in place on a terminal, plain lines otherwise.
//! Wall time here is only ever shown, never part of any trail.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    total: usize,
    done: usize,
    failures: usize,
    start: Instant,
    last: Instant,
    terminal: bool,
    quiet: bool,
}

impl Progress {
    pub fn new(total: usize, done: usize, quiet: bool) -> Self {
        let now = Instant::now(); // wall-clock ok: progress display only
        Progress {
            total,
            done,
            failures: 0,
            start: now,
            last: now,
            terminal: std::io::stderr().is_terminal(),
            quiet,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    pub fn record(&mut self, passed: bool, started_here: &mut usize) {
        self.done += 1;
        *started_here += 1;
        if !passed {
            self.failures += 1;
        }
        let interval = if self.terminal {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(5)
        };
        if self.last.elapsed() >= interval || self.done == self.total {
            self.last = Instant::now(); // wall-clock ok: progress display only
            self.draw(*started_here);
        }
    }

    pub fn rate(&self, runs: usize) -> f64 {
        runs as f64 / self.start.elapsed().as_secs_f64().max(1e-9)
    }

    fn draw(&self, runs_here: usize) {
        if self.quiet {
            return;
        }
        let rate = self.rate(runs_here);
        let left = self.total.saturating_sub(self.done);
        let eta = if rate > 0.0 {
            format!("{:.0}s", left as f64 / rate)
        } else {
            "?".into()
        };
        let mut err = std::io::stderr();
        if self.terminal {
            let width = 30;
            let filled = (self.done * width).checked_div(self.total).unwrap_or(width);
            let bar: String = "#".repeat(filled) + &".".repeat(width - filled);
            let _ = write!(
                err,
                "\r[{bar}] {}/{} runs  {rate:.1} runs/s  {} failure(s)  eta {eta}   ",
                self.done, self.total, self.failures
            );
        } else {
            let _ = writeln!(
                err,
                "sweep: {}/{} runs, {rate:.1} runs/s, {} failure(s), eta {eta}",
                self.done, self.total, self.failures
            );
        }
        let _ = err.flush();
    }

    pub fn finish(&self) {
        if self.terminal && !self.quiet {
            eprintln!();
        }
    }
}
