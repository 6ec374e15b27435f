//! `faultline bench --histories`: how fast the consistency checker judges
//! generated histories (a linearizable register or list store, random overlap,
//! 1% `info` and 2% `fail` ops, 8 keys) of 1,000 to 100,000 ops from 5 and 20
//! clients. Wall time is what this measures; none of it reaches a verdict.

use super::list_append::ListAppend;
use super::register::Register;
use super::{check, Budget, Report};
use crate::judge::check::Verdict;
use crate::judge::history::generate::{generate, Store, Workload};
use std::time::Instant;

/// The section of `docs/performance.md` this bench owns (below the run bench's
/// notes marker, so `faultline bench` keeps it).
pub const START: &str = "<!-- history-bench: start (faultline bench --histories) -->";
pub const END: &str = "<!-- history-bench: end -->";

/// What a row measures: a store's histories and the checker that judges them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bench {
    /// put/get/delete: the search decides every key.
    Register,
    /// put/get, every value written once: the zones decide every key.
    PutGet,
    /// The same histories with the zones turned off: the search alone.
    PutGetSearchOnly,
    ListAppend,
    /// append of `+N` texts / get: the appends check decides every key.
    TextAppend,
    /// The same histories with the appends check turned off: the search alone.
    TextAppendSearchOnly,
}

impl Bench {
    const ALL: [Bench; 6] = [
        Bench::Register,
        Bench::PutGet,
        Bench::PutGetSearchOnly,
        Bench::ListAppend,
        Bench::TextAppend,
        Bench::TextAppendSearchOnly,
    ];

    fn store(self) -> Store {
        match self {
            Bench::Register => Store::Register,
            Bench::PutGet | Bench::PutGetSearchOnly => Store::PutGet,
            Bench::ListAppend => Store::ListAppend,
            Bench::TextAppend | Bench::TextAppendSearchOnly => Store::TextAppend,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Bench::Register => "register",
            Bench::PutGet => "register put/get (zones)",
            Bench::PutGetSearchOnly => "register put/get (search only)",
            Bench::ListAppend => "list-append",
            Bench::TextAppend => "register append (appends)",
            Bench::TextAppendSearchOnly => "register append (search only)",
        }
    }

    /// Whether every row must pass: the search-only rows are there to show
    /// where the search runs out of budget, so `unknown` is their measurement.
    fn must_decide(self) -> bool {
        match self {
            Bench::Register | Bench::PutGet | Bench::ListAppend | Bench::TextAppend => true,
            Bench::PutGetSearchOnly | Bench::TextAppendSearchOnly => false,
        }
    }

    fn check(self, history: &crate::judge::history::History) -> Report {
        let budget = Budget::default();
        match self {
            Bench::Register | Bench::PutGet | Bench::TextAppend => {
                check(Register::default(), history, &budget)
            }
            Bench::PutGetSearchOnly | Bench::TextAppendSearchOnly => {
                check(Register::default().search_only(), history, &budget)
            }
            Bench::ListAppend => check(ListAppend::default(), history, &budget),
        }
    }

    /// The put/get rows also run with this many clients: a pile-up, as a stalled
    /// leader answers many overlapping writes of one key at once.
    fn clients(self, clients: &[u64]) -> Vec<u64> {
        let mut all = clients.to_vec();
        match self {
            Bench::PutGet
            | Bench::PutGetSearchOnly
            | Bench::TextAppend
            | Bench::TextAppendSearchOnly => all.push(PILE_UP_CLIENTS),
            Bench::Register | Bench::ListAppend => {}
        }
        all
    }
}

const PILE_UP_CLIENTS: u64 = 100;

pub struct Row {
    pub bench: Bench,
    pub ops: usize,
    pub clients: u64,
    pub info: usize,
    pub wall_ms: f64,
    pub steps: u64,
    pub verdict: Verdict,
}

pub fn rows(sizes: &[usize], clients: &[u64]) -> Vec<Row> {
    let mut rows = Vec::new();
    for bench in Bench::ALL {
        for &ops in sizes {
            for c in bench.clients(clients) {
                let history = generate(&Workload::new(bench.store(), ops, c, 1));
                let repeat = if ops >= 100_000 { 1 } else { 3 };
                let mut walls = Vec::new();
                let mut report = None;
                for _ in 0..repeat {
                    #[allow(
                        clippy::disallowed_methods,
                        reason = "wall-clock ok: the benchmark's measurement"
                    )]
                    let start = Instant::now(); // wall-clock ok: timing only, never in a trail
                    let r = bench.check(&history);
                    walls.push(start.elapsed().as_secs_f64() * 1000.0);
                    report = Some(r);
                }
                walls.sort_by(f64::total_cmp);
                let report = report.expect("at least one run");
                rows.push(Row {
                    bench,
                    ops,
                    clients: c,
                    info: history
                        .ops()
                        .iter()
                        .filter(|o| o.is_indeterminate())
                        .count(),
                    wall_ms: walls[walls.len() / 2],
                    steps: report.steps,
                    verdict: report.verdict,
                });
            }
        }
    }
    rows
}

pub fn render(rows: &[Row]) -> String {
    let mut md = format!(
        "{START}\n## Consistency checker: generated histories\n\nProduced by `cargo run --release -p faultline -- bench --histories --out docs/performance.md` \
         (median of 3 checks, 1 for 100,000 ops; release build). Each history comes from a simulated \
         store that is linearizable by construction: 8 keys, random overlap, 1% `info` ops (half of \
         them took effect) and 2% `fail` ops. `register` is put/get/delete, decided by the search; \
         `register put/get` writes every value once, decided by zones, and the same histories again \
         with the zones off (search only), also with {PILE_UP_CLIENTS} clients; `register append` \
         appends `+N` texts (a fresh `N` each time, as raftkv's clients do), decided by the order \
         its reads show (`appends.rs`), and again by the search alone, also with \
         {PILE_UP_CLIENTS} clients. `list-append` is Elle's lists, decided by the search. *Steps* are \
         specification steps of the search (a decided key costs one per op). `Unknown`: the budget of \
         10,000,000 steps ran out.\n\n\
         | model | ops | clients | info ops | check wall | steps | verdict |\n|---|---:|---:|---:|---:|---:|---|\n"
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} ms | {} | {:?} |\n",
            r.bench.label(),
            r.ops,
            r.clients,
            r.info,
            r.wall_ms,
            r.steps,
            r.verdict
        ));
    }
    md.push_str(END);
    md.push('\n');
    md
}

/// Put `section` in place of the old one, or append it.
pub fn splice(old: &str, section: &str) -> String {
    match (old.find(START), old.find(END)) {
        (Some(a), Some(b)) if b > a => {
            let end = b + END.len();
            let rest = old[end..].strip_prefix('\n').unwrap_or(&old[end..]);
            format!("{}{section}{rest}", &old[..a])
        }
        _ => {
            let mut text = old.to_string();
            if !text.is_empty() && !text.ends_with("\n\n") {
                text.push('\n');
            }
            text.push_str(section);
            text
        }
    }
}

/// Why the bench could not give its table.
#[derive(Debug)]
pub enum Error {
    /// A generated history, linearizable by construction, did not pass.
    NotPassed(String),
    Write(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NotPassed(row) => {
                write!(f, "a generated (linearizable) history did not pass: {row}")
            }
            Error::Write(m) => f.write_str(m),
        }
    }
}

/// Run the bench; returns the section, written into `out` if given. The
/// command line prints it and picks the exit code.
pub fn bench(out: Option<&std::path::Path>) -> Result<String, Error> {
    eprintln!("bench: checking generated histories (register, put/get with and without zones, list-append)");
    let rows = rows(&[1_000, 10_000, 100_000], &[5, 20]);
    let section = render(&rows);
    let wrong = |r: &&Row| {
        r.verdict == Verdict::Fail || (r.bench.must_decide() && r.verdict != Verdict::Pass)
    };
    if let Some(r) = rows.iter().find(wrong) {
        return Err(Error::NotPassed(format!(
            "{}, {} ops, {} clients: {:?}",
            r.bench.label(),
            r.ops,
            r.clients,
            r.verdict
        )));
    }
    if let Some(out) = out {
        // The rest of the file survives; an unreadable one is refused, not overwritten.
        let old = crate::base::fsio::read_existing_text(out, 16 * 1024 * 1024)
            .map_err(|e| Error::Write(e.to_string()))?;
        crate::base::fsio::atomic_write(out, splice(&old, &section).as_bytes())
            .map_err(|e| Error::Write(format!("writing {}: {e}", out.display())))?;
        eprintln!("bench: wrote {}", out.display());
    }
    Ok(section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_replaced_in_place_and_the_rest_kept() {
        let rows = rows(&[200], &[5]);
        assert!(rows
            .iter()
            .all(|r| r.verdict == Verdict::Pass || !r.bench.must_decide()));
        assert!(rows
            .iter()
            .any(|r| r.bench == Bench::PutGet && r.clients == 100));
        let section = render(&rows);
        let doc = format!("# Performance\n\nrun tables\n\n{section}\nnotes after\n");
        let again = splice(&doc, &section.replace("| 200 |", "| 201 |"));
        assert!(again.contains("| 201 |") && !again.contains("| 200 |"));
        assert!(again.starts_with("# Performance\n\nrun tables\n\n"));
        assert!(again.ends_with("\nnotes after\n"), "{again}");
        let fresh = splice("# P\n", &section);
        assert!(fresh.starts_with("# P\n\n<!-- history-bench"));
    }
}
