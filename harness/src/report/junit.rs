//! JUnit XML: one test case per scenario variant run, as CI systems expect.

use super::{xml_escape, RunRecord};
use std::collections::BTreeMap;

pub fn junit_xml(records: &[RunRecord]) -> String {
    let mut suites: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        suites.entry(r.scenario.as_str()).or_default().push(r);
    }
    let failures = records.iter().filter(|r| !r.passed).count();
    let total_s: f64 = records.iter().map(|r| r.wall_ms as f64 / 1000.0).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"faultline\" tests=\"{}\" failures=\"{failures}\" time=\"{total_s:.3}\">\n",
        records.len()
    ));
    for (scenario, runs) in suites {
        let failed = runs.iter().filter(|r| !r.passed).count();
        let time: f64 = runs.iter().map(|r| r.wall_ms as f64 / 1000.0).sum();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" time=\"{time:.3}\">\n",
            xml_escape(scenario),
            runs.len()
        ));
        for r in runs {
            xml.push_str(&test_case(r));
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn test_case(r: &RunRecord) -> String {
    let name = format!("{} seed={}", r.variant, r.seed);
    let mut xml = format!(
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">\n",
        xml_escape(&r.scenario),
        xml_escape(&name),
        r.wall_ms as f64 / 1000.0
    );
    let expected: Vec<&str> = r.expected.iter().map(|o| o.name()).collect();
    if !r.passed {
        let message = match &r.nondeterminism {
            Some(_) => format!(
                "nondeterministic: the same seed gave two trails (outcome {})",
                r.outcome
            ),
            None => format!("outcome {} (expected {})", r.outcome, expected.join(" or ")),
        };
        let mut body = String::new();
        if let Some(diff) = &r.nondeterminism {
            body.push_str(&format!("first differing trail event: {diff}\n"));
        }
        for f in &r.findings {
            body.push_str(&format!("[{}] {}\n", f.checker, f.message));
        }
        body.push_str(&format!("seed: {}\nreplay: {}\n", r.seed, r.replay));
        xml.push_str(&format!(
            "      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
            xml_escape(&message),
            if r.nondeterminism.is_some() {
                "nondeterministic".to_string()
            } else {
                r.outcome.to_string()
            },
            xml_escape(&body)
        ));
    }
    let out = format!(
        "outcome: {}\ntrail digest: {}\nreplay: {}\n",
        r.outcome, r.trail_digest, r.replay
    );
    xml.push_str(&format!(
        "      <system-out>{}</system-out>\n",
        xml_escape(&out)
    ));
    xml.push_str("    </testcase>\n");
    xml
}
