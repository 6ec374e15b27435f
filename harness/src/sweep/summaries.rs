//! The summaries of a set of sweep records: `junit.xml`, `summary.md` (which says
//! so at the top when coverage was lost) and the dashboard, sorted by run.

use super::results;
use crate::fsio;
use crate::report::{self, RunRecord};
use std::path::Path;

/// Write every summary of `records` into `dir`; `incomplete` is the "ran X of Y"
/// note of a sweep or merge that did not cover everything it was asked to.
pub fn write(
    dir: &Path,
    records: &[RunRecord],
    incomplete: Option<&str>,
) -> Result<(), fsio::Error> {
    let mut sorted = records.to_vec();
    sorted.sort_by_key(results::key);
    report::write_summaries_with(dir, &sorted, incomplete)?;
    report::write_dashboard_with(dir, &sorted, incomplete).map(|_| ())
}
