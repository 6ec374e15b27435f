//! `junit.xml`: one test suite per scenario, one test case per variant run, written
//! by `quick-junit` (nextest's writer), so CI tools read it as they read nextest's.
//!
//! What goes where:
//! - a run that missed its expectation is a `<failure>`; a `crashed` or `unknown`
//!   run, and a nondeterministic one, is an `<error>` (the harness or a model broke,
//!   not the system under test);
//! - `seed`, `trail_digest`, `replay`, `outcome`, `expected` (and `report`, when one
//!   was written) are properties of the test case; the scenario file is its `file`;
//! - `system-out` holds the trail excerpt of a failing run (the faults and the last
//!   events, [`super::RunRecord::trail_excerpt`]), else the outcome, digest and replay.
//!
//! Every string passes through [`xml_text`] first: XML 1.0 forbids most control
//! characters and U+FFFE/U+FFFF even as character references, so they are written
//! as visible `\u{..}` escapes (quick-junit itself would drop C0 controls silently,
//! strip ANSI sequences, and pass U+FFFE through, giving a file no reader accepts).

use super::RunRecord;
use crate::base::outcome::Outcome;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::collections::BTreeMap;
use std::time::Duration;

/// The name of the report and of its `<testsuites>` element.
pub const REPORT_NAME: &str = "faultline";

/// The suite that reports lost coverage (see [`junit_xml_with`]).
pub const COVERAGE_SUITE: &str = "(faultline) sweep coverage";

pub fn junit_xml(records: &[RunRecord]) -> String {
    junit_xml_with(records, None)
}

/// `junit_xml`, with the note of a sweep or merge that did not record every
/// planned run (`ran X of Y (why)`) as one more test case, an `<error>` of type
/// `incomplete` in a suite of its own: a CI check that reads only `junit.xml`
/// must not show green for a sweep that did not run every seed.
pub fn junit_xml_with(records: &[RunRecord], incomplete: Option<&str>) -> String {
    junit_xml_not_run(records, incomplete, &[])
}

/// `junit_xml_with`, and each variant that was not run (its target is not
/// built) as a `<skipped>` test case with the reason, in its scenario's suite.
pub fn junit_xml_not_run(
    records: &[RunRecord],
    incomplete: Option<&str>,
    not_run: &[super::NotRun],
) -> String {
    let mut suites: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        suites.entry(r.scenario.as_str()).or_default().push(r);
    }
    let mut skipped: BTreeMap<&str, Vec<&super::NotRun>> = BTreeMap::new();
    for n in not_run {
        suites.entry(n.scenario.as_str()).or_default();
        skipped.entry(n.scenario.as_str()).or_default().push(n);
    }
    let mut report = Report::new(REPORT_NAME);
    let mut total = Duration::ZERO;
    for (scenario, runs) in suites {
        let mut suite = TestSuite::new(xml_text(scenario));
        for n in skipped.get(scenario).into_iter().flatten() {
            let mut status = TestCaseStatus::skipped();
            status
                .set_type("not-built")
                .set_message(xml_text(&format!("not run: {}", n.reason)));
            let mut case = TestCase::new(xml_text(&format!("{} (not run)", n.variant)), status);
            case.set_classname(xml_text(scenario));
            case.extra.insert("file".into(), xml_text(&n.file).into());
            suite.add_test_case(case);
        }
        let time: Duration = runs.iter().map(|r| Duration::from_millis(r.wall_ms)).sum();
        total += time;
        suite.set_time(time);
        if let Some(start) = runs.iter().filter_map(|r| r.started_unix_ms).min() {
            if let Some(t) = timestamp(start) {
                suite.set_timestamp(t);
            }
        }
        suite.add_test_cases(runs.iter().map(|r| test_case(r)));
        report.add_test_suite(suite);
    }
    if let Some(note) = incomplete {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status
            .set_type("incomplete")
            .set_message(xml_text(&format!("incomplete: {note}")))
            .set_description(xml_text(&format!(
                "The sweep did not record every planned run: {note}. Coverage was lost: \
                 this is not a green run (sweep.json says what was planned).\n"
            )));
        let mut case = TestCase::new("every planned run was recorded", status);
        case.set_classname(COVERAGE_SUITE);
        let mut suite = TestSuite::new(COVERAGE_SUITE);
        suite.add_test_case(case);
        report.add_test_suite(suite);
    }
    report.set_time(total);
    if let Some(start) = records.iter().filter_map(|r| r.started_unix_ms).min() {
        if let Some(t) = timestamp(start) {
            report.set_timestamp(t);
        }
    }
    report
        .to_string()
        .expect("quick-junit writes to a String without I/O errors")
}

/// How a run that did not pass is reported.
fn non_success(r: &RunRecord) -> (NonSuccessKind, String, String) {
    let expected: Vec<&str> = r.expected.iter().map(|o| o.name()).collect();
    if r.nondeterminism.is_some() {
        return (
            NonSuccessKind::Error,
            "nondeterministic".into(),
            format!(
                "nondeterministic: the same seed gave two trails (outcome {})",
                r.outcome
            ),
        );
    }
    let kind = match r.outcome {
        Outcome::Crashed | Outcome::Unknown => NonSuccessKind::Error,
        Outcome::Converged | Outcome::Diverged | Outcome::Violated | Outcome::Stuck => {
            NonSuccessKind::Failure
        }
    };
    let message = if r.expected.contains(&r.outcome) {
        format!(
            "outcome {} as expected, but {}",
            r.outcome,
            super::unmet(&r.findings)
                .unwrap_or_else(|| "a finding without an outcome failed the run".into())
        )
    } else {
        format!("outcome {} (expected {})", r.outcome, expected.join(" or "))
    };
    (kind, r.outcome.name().into(), message)
}

fn test_case(r: &RunRecord) -> TestCase {
    let status = if r.passed {
        TestCaseStatus::success()
    } else {
        let (kind, ty, message) = non_success(r);
        let mut body = String::new();
        if let Some(diff) = &r.nondeterminism {
            body.push_str(&format!("first differing trail event: {diff}\n"));
        }
        for f in &r.findings {
            body.push_str(&format!("[{}] {}\n", f.checker, f.message));
        }
        body.push_str(&format!("seed: {}\nreplay: {}\n", r.seed, r.replay));
        let mut status = TestCaseStatus::non_success(kind);
        status
            .set_type(xml_text(&ty))
            .set_message(xml_text(&message))
            .set_description(xml_text(&body));
        status
    };
    let mut case = TestCase::new(xml_text(&format!("{} seed={}", r.variant, r.seed)), status);
    case.set_classname(xml_text(&r.scenario))
        .set_time(Duration::from_millis(r.wall_ms));
    if let Some(t) = r.started_unix_ms.and_then(timestamp) {
        case.set_timestamp(t);
    }
    case.extra.insert("file".into(), xml_text(&r.file).into());
    let expected: Vec<&str> = r.expected.iter().map(|o| o.name()).collect();
    let mut properties = vec![
        ("seed", r.seed.to_string()),
        ("trail_digest", r.trail_digest.clone()),
        ("replay", r.replay.clone()),
        ("outcome", r.outcome.name().to_string()),
        ("expected", expected.join(" or ")),
    ];
    if let Some(report) = &r.report {
        properties.push(("report", report.clone()));
    }
    if !r.known_defects.is_empty() {
        // Passed as far as CI goes, and still findable as the known defect.
        properties.push(("known_defect", r.known_defects.join(", ")));
    }
    case.add_properties(
        properties
            .into_iter()
            .map(|(name, value)| Property::new(name, xml_text(&value))),
    );
    let out = if r.trail_excerpt.is_empty() {
        format!(
            "outcome: {}\ntrail digest: {}\nreplay: {}\n",
            r.outcome, r.trail_digest, r.replay
        )
    } else {
        let mut out = format!(
            "outcome: {}\ntrail digest: {}\ntrail excerpt (report.json has the whole trail):\n",
            r.outcome, r.trail_digest
        );
        for line in &r.trail_excerpt {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out
    };
    case.set_system_out(xml_text(&out));
    case
}

fn timestamp(unix_ms: u64) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::from_timestamp_millis(i64::try_from(unix_ms).ok()?).map(|t| t.fixed_offset())
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production).
pub fn xml_allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `text` with every character XML 1.0 forbids written as a visible `\u{..}`
/// escape (ESC included, so no terminal sequence survives into a CI log either).
/// Markup characters are left to the XML writer, which escapes them.
pub fn xml_text(text: &str) -> String {
    if text.chars().all(|c| xml_allowed(c) && c != '\u{1b}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if xml_allowed(c) && c != '\u{1b}' {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(scenario: &str, outcome: Outcome, passed: bool) -> RunRecord {
        RunRecord {
            schema_version: super::super::RECORD_SCHEMA_VERSION,
            scenario: scenario.into(),
            file: format!("scenarios/{scenario}.yaml"),
            variant: "default".into(),
            seed: 7,
            outcome,
            expected: vec![Outcome::Converged],
            passed,
            trail_digest: "ab".repeat(32),
            sim_elapsed_ms: 1_000,
            wall_ms: 12,
            started_unix_ms: Some(1_700_000_000_000),
            replay: format!("faultline run scenarios/{scenario}.yaml --variant default --seed 7"),
            ..RunRecord::default()
        }
    }

    #[test]
    fn forbidden_characters_become_visible_escapes() {
        assert_eq!(xml_text("plain <a> & b"), "plain <a> & b");
        assert_eq!(xml_text("x\u{FFFE}y\u{FFFF}"), "x\\u{fffe}y\\u{ffff}");
        assert_eq!(xml_text("\u{0}\u{1b}[2J\t\n"), "\\u{0}\\u{1b}[2J\t\n");
        assert_eq!(xml_text("ok \u{FFFD} \u{1F600}"), "ok \u{FFFD} \u{1F600}");
    }

    #[test]
    fn crashed_and_unknown_are_errors_the_rest_failures() {
        let xml = junit_xml(&[
            record("a", Outcome::Converged, true),
            record("b", Outcome::Diverged, false),
            record("c", Outcome::Crashed, false),
            record("d", Outcome::Unknown, false),
        ]);
        assert!(
            xml.contains(r#"tests="4" skipped="0" failures="1" errors="2""#),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"<error message="outcome crashed (expected converged)" type="crashed">"#
            ),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="seed" value="7"/>"#),
            "{xml}"
        );
        assert!(xml.contains(r#"file="scenarios/a.yaml""#), "{xml}");
        assert!(
            xml.contains(r#"timestamp="2023-11-14T22:13:20.000+00:00""#),
            "{xml}"
        );
    }

    #[test]
    fn lost_coverage_is_an_error_of_its_own() {
        let runs = [record("a", Outcome::Converged, true)];
        let whole = junit_xml_with(&runs, None);
        assert_eq!(whole, junit_xml(&runs));
        assert!(whole.contains(r#"tests="1" skipped="0" failures="0" errors="0""#));
        assert!(!whole.contains(COVERAGE_SUITE));
        let cut = junit_xml_with(&runs, Some("ran 1 of 4 planned run(s): <budget>"));
        assert!(
            cut.contains(r#"tests="2" skipped="0" failures="0" errors="1""#),
            "{cut}"
        );
        assert!(
            cut.contains(
                r#"<error message="incomplete: ran 1 of 4 planned run(s): &lt;budget&gt;" type="incomplete">"#
            ),
            "{cut}"
        );
    }
}
