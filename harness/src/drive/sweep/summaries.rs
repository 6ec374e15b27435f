//! The summaries of a set of sweep records: `junit.xml`, `summary.md` (which says
//! so at the top when coverage was lost, and ends with the coverage ledger) and
//! the dashboard (which ends with the ledger too), sorted by run.

use super::ledger::Ledger;
use super::results;
use crate::base::fsio;
use crate::report::{self, RunRecord};
use std::path::Path;

/// Write every summary of `records` into `dir`; `incomplete` is the "ran X of Y"
/// note of a sweep or merge that did not cover everything it was asked to.
/// Returns the records' coverage ledger (also written into `summary.md`).
pub fn write(
    dir: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
) -> Result<Ledger, fsio::Error> {
    write_not_run(dir, records, incomplete, &[])
}

/// `write`, with the variants a sweep did not run (their target is not built)
/// as skipped test cases and a section of `summary.md`.
pub fn write_not_run(
    dir: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
    not_run: &[report::NotRun],
) -> Result<Ledger, fsio::Error> {
    let mut sorted = records.to_vec();
    sorted.sort_by_key(results::key);
    let ledger = Ledger::of(&sorted);
    let section = ledger.markdown(|m| ledger.declared(m));
    report::write_summaries_not_run(dir, &sorted, incomplete, not_run, &section)?;
    report::write_dashboard_coverage(
        dir,
        &sorted,
        incomplete,
        &ledger.html(|m| ledger.declared(m)),
    )?;
    Ok(ledger)
}
