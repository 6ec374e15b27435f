//! Progress on the terminal, for long commands (sweep today; shrink and hunt can
//! add their own bars): `indicatif` bars on stderr when it is a terminal, a plain
//! line every few seconds when it is not (CI logs), nothing when quiet.
//!
//! All bars of the process hang off one [`MultiProgress`], so several can be drawn
//! at once (one per worker, or a shrink's pass inside a hunt), and every message
//! printed while a bar is up goes through [`eprintln`], which clears the bars,
//! prints above them and redraws them: no message lands in the middle of a bar's
//! line, and the interrupt notice starts on a line of its own.
//!
//! Wall time here is only ever shown, never part of any trail.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often a plain progress line is printed when stderr is not a terminal.
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(5);

/// The process's bars: drawn on stderr, hidden when stderr is not a terminal.
pub fn multi() -> &'static MultiProgress {
    static MULTI: OnceLock<MultiProgress> = OnceLock::new();
    MULTI.get_or_init(|| {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        MultiProgress::with_draw_target(target)
    })
}

/// Print a line on stderr above any bars that are drawn.
pub fn eprintln(message: &str) {
    multi().suspend(|| eprintln!("{message}"));
}

/// One bar counting `unit`s (runs, candidates) towards a known total.
pub struct Bar {
    total: u64,
    position: u64,
    /// Where this process started (a resumed sweep starts past 0): the ETA of
    /// plain lines is measured on the work done here.
    first: u64,
    unit: &'static str,
    label: String,
    shown: Shown,
    start: Instant,
    last_plain: Instant,
}

enum Shown {
    Terminal(ProgressBar),
    Plain,
    Quiet,
}

impl Bar {
    /// A bar at `position` of `total`; `label` starts its plain lines (`sweep`).
    pub fn new(label: &str, unit: &'static str, total: u64, position: u64, quiet: bool) -> Bar {
        #[allow(
            clippy::disallowed_methods,
            reason = "wall-clock ok: progress display only"
        )]
        let now = Instant::now(); // wall-clock ok: timing only, never in a trail
        let shown = if quiet {
            Shown::Quiet
        } else if multi().is_hidden() {
            Shown::Plain
        } else {
            let bar = ProgressBar::new(total).with_position(position);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "[{{bar:30}}] {{pos}}/{{len}} {unit}  {{msg}}  eta {{eta}}"
                ))
                .expect("the template is valid")
                .progress_chars("#>."),
            );
            Shown::Terminal(multi().add(bar))
        };
        Bar {
            total,
            position,
            first: position,
            unit,
            label: label.to_string(),
            shown,
            start: now,
            last_plain: now,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Move to `position`, with `message` after the count (rate, failures).
    pub fn set(&mut self, position: u64, message: String) {
        self.position = position;
        match &self.shown {
            Shown::Terminal(bar) => {
                bar.set_message(message);
                bar.set_position(position);
            }
            Shown::Plain => {
                if self.last_plain.elapsed() >= PLAIN_INTERVAL || position == self.total {
                    #[allow(clippy::disallowed_methods, reason = "wall-clock ok: display only")]
                    let now = Instant::now(); // wall-clock ok: timing only, never in a trail
                    self.last_plain = now;
                    eprintln!("{}", self.plain_line(&message));
                }
            }
            Shown::Quiet => {}
        }
    }

    /// The line printed when stderr is not a terminal.
    pub fn plain_line(&self, message: &str) -> String {
        let here = self.position.saturating_sub(self.first) as f64;
        let left = self.total.saturating_sub(self.position) as f64;
        let secs = self.elapsed().as_secs_f64();
        let eta = if here > 0.0 {
            format!("{:.0}s", left * secs / here)
        } else {
            "?".into()
        };
        format!(
            "{}: {}/{} {}, {message}, eta {eta}",
            self.label, self.position, self.total, self.unit
        )
    }

    /// Take the bar off the screen (the caller prints its own summary line).
    pub fn finish(&self) {
        if let Shown::Terminal(bar) = &self.shown {
            bar.finish_and_clear();
            multi().remove(bar);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Shown::Terminal(bar) = &self.shown {
            if !bar.is_finished() {
                bar.finish_and_clear();
            }
            multi().remove(bar);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_say_where_the_work_is() {
        let mut bar = Bar::new("sweep", "runs", 10, 4, true);
        assert!(bar.plain_line("x").ends_with("eta ?"), "nothing done yet");
        bar.set(5, "1.0 runs/s, 0 failure(s)".into());
        let line = bar.plain_line("1.0 runs/s, 0 failure(s)");
        assert!(
            line.starts_with("sweep: 5/10 runs, 1.0 runs/s, 0 failure(s), eta "),
            "{line}"
        );
        bar.finish();
    }
}
