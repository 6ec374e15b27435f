//! What the terminal shows of one run. A passing run is one line (verdict,
//! scenario, variant, outcome, seed, wall time); a failing one adds its faults,
//! findings, seed and replay command; `Detail::Full` shows everything for every
//! run. Styled with ANSI codes: print through `anstream`, which drops them when
//! the output is not a terminal, under `NO_COLOR`, or with `--color never`. Every
//! name and text from input is escaped (`crate::base::text::printable`).

use super::summary::{expected, unmet};
use crate::base::duration::format as fmt_duration;
use crate::base::text::{printable, printable_lines};
use crate::sim::runner::RunResult;
use anstyle::{AnsiColor, Style};
use std::time::Duration;

/// How much of a run to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// One line for a pass, the full block for a failure.
    Normal,
    /// The full block for every run.
    Full,
}

const PASS: Style = AnsiColor::Green.on_default().bold();
const FAIL: Style = AnsiColor::Red.on_default().bold();
const KNOWN: Style = AnsiColor::Yellow.on_default().bold();
const NAME: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const FINDING: Style = AnsiColor::Yellow.on_default();

/// The lines for one run, ending in a newline.
pub fn run_lines(r: &RunResult, detail: Detail) -> String {
    let known = !r.known_defects.is_empty();
    let full = detail == Detail::Full || !r.passed || known;
    let (style, verdict) = if known {
        (KNOWN, "KNOWN")
    } else if r.passed {
        (PASS, "PASS")
    } else {
        (FAIL, "FAIL")
    };
    // A failed run that ended as expected failed something else: name it
    // rather than print "converged (expected converged)".
    let met = !r.passed && r.expected.contains(&r.outcome);
    let against = match unmet(&r.findings).filter(|_| met) {
        Some(what) => format!("as expected, but {}", printable(&what)),
        None if known => format!(
            "(expected {}; the known defect {}, not a failure)",
            expected(&r.expected),
            printable(&r.known_defects.join(", "))
        ),
        None => format!("(expected {})", expected(&r.expected)),
    };
    let mut out = format!(
        "{style}{verdict}{style:#} {NAME}{}{NAME:#} [{}] {} {against} seed={}",
        printable(&r.scenario),
        printable(&r.variant_label()),
        r.outcome,
        r.seed,
    );
    if full {
        out.push_str(&format!(
            " sim={} wall={}ms {DIM}digest={}{DIM:#}\n",
            fmt_duration(Duration::from_millis(r.sim_elapsed_ms)),
            r.wall_ms,
            printable(&r.trail_digest[..16.min(r.trail_digest.len())]),
        ));
    } else {
        out.push_str(&format!(" wall={}ms\n", r.wall_ms));
        return out;
    }
    full_block(r, &mut out);
    if !r.passed || known {
        out.push_str(&format!(
            "  seed: {}\n  {NAME}replay:{NAME:#} {}\n",
            r.seed,
            printable(&r.replay)
        ));
    }
    out
}

/// The full block under a run's first line: faults fired, findings and their
/// causes, keys not compared, checkers that could not judge.
fn full_block(r: &RunResult, out: &mut String) {
    let faults = r.faults_fired();
    if !faults.is_empty() {
        out.push_str(&format!("  faults ({}):\n", faults.len()));
        for line in faults.iter().take(12) {
            out.push_str(&format!("    {}\n", printable(line)));
        }
        if faults.len() > 12 {
            out.push_str(&format!(
                "    ... {} more in the report\n",
                faults.len() - 12
            ));
        }
    }
    // A departure from the fixed twin is the cause; the faults in effect are
    // then not shown as one.
    let departed = r.departed();
    for f in &r.findings {
        out.push_str(&format!(
            "  {FINDING}{} [{}]{FINDING:#}: {}\n",
            f.outcome.map(|o| o.name()).unwrap_or("fail"),
            printable(&f.checker),
            printable_lines(&f.message).replace('\n', "\n    ")
        ));
        if let Some(cause) = crate::judge::check::cause::of(f).filter(|_| !departed) {
            out.push_str(&format!(
                "    {NAME}cause:{NAME:#} {}\n",
                printable(&cause.summary)
            ));
        }
    }
    for d in &r.differential {
        out.push_str(&format!(
            "  {NAME}cause:{NAME:#} {}\n",
            printable(&d.summary)
        ));
    }
    for n in r
        .nodes
        .iter()
        .filter(|n| n.up && !n.observation.unvouched.is_empty())
    {
        let prefixes: Vec<String> = n
            .observation
            .unvouched
            .iter()
            .map(|p| format!("`{}*`", printable(p)))
            .collect();
        out.push_str(&format!(
            "  not compared [divergence]: {} on {} (it cannot vouch for them)\n",
            printable(&n.name),
            prefixes.join(", ")
        ));
    }
    for u in &r.unjudged {
        out.push_str(&format!(
            "  not judged [{}]: {}\n",
            printable(&u.checker),
            printable(&u.why)
        ));
    }
}

/// The full block of a run, without styles (as earlier versions printed it).
pub fn terminal_summary(r: &RunResult) -> String {
    strip_styles(&run_lines(r, Detail::Full))
}

pub(crate) fn strip_styles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
