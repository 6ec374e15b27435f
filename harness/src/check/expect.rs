//! The scenario's own expectations about the trail and the final observations:
//! the evidence that an outcome came from the mechanism the scenario is about.

use super::Finding;
use crate::scenario::{ObservedMatch, Scenario, TrailMatch};
use crate::trail::{Event, Trail};
use nodes::api::ClusterView;

pub const CHECKER: &str = "expect";

pub fn matches(m: &TrailMatch, event: &Event) -> bool {
    m.node
        .as_ref()
        .is_none_or(|n| event.node.as_deref() == Some(n.as_str()))
        && m.kind.is_none_or(|k| event.kind == k)
        && m.contains
            .as_ref()
            .is_none_or(|c| event.detail.contains(c.as_str()))
}

pub fn describe(m: &TrailMatch) -> String {
    let mut parts = Vec::new();
    if let Some(node) = &m.node {
        parts.push(format!("node {node}"));
    }
    if let Some(kind) = m.kind {
        parts.push(format!("kind {}", kind.name()));
    }
    if let Some(text) = &m.contains {
        parts.push(format!("containing {text:?}"));
    }
    parts.join(", ")
}

pub fn trail_present(file: &str, wanted: &[TrailMatch], trail: &Trail) -> Vec<Finding> {
    let mut findings = Vec::new();
    for m in wanted {
        let count = trail.iter().filter(|e| matches(m, e)).count();
        let ok = match m.count {
            Some(n) => count == n,
            None => count > 0,
        };
        if !ok {
            let want = m
                .count
                .map(|n| format!("exactly {n}"))
                .unwrap_or_else(|| "at least one".into());
            findings.push(Finding::new(
                CHECKER,
                None,
                format!(
                    "{file}:{}:{}: expected {want} trail event(s) with {}, found {count}",
                    m.loc.line,
                    m.loc.col,
                    describe(m)
                ),
            ));
        }
    }
    findings
}

pub fn trail_absent(file: &str, unwanted: &[TrailMatch], trail: &Trail) -> Vec<Finding> {
    let mut findings = Vec::new();
    for m in unwanted {
        if let Some(event) = trail.iter().find(|e| matches(m, e)) {
            findings.push(Finding::new(
                CHECKER,
                None,
                format!(
                    "{file}:{}:{}: expected no trail event with {}, found one at {} ms: {}",
                    m.loc.line,
                    m.loc.col,
                    describe(m),
                    event.t_ms,
                    event.detail
                ),
            ));
        }
    }
    findings
}

pub fn observed(scenario: &Scenario, wanted: &[ObservedMatch], view: &ClusterView) -> Vec<Finding> {
    let mut findings = Vec::new();
    for m in wanted {
        let name = scenario.node_name(m.node);
        let actual = view.node(name).and_then(|n| {
            n.observation
                .state
                .get(&m.key)
                .or_else(|| n.observation.facts.get(&m.key))
                .cloned()
        });
        if actual.as_deref() != Some(m.value.as_str()) {
            let shown = actual
                .map(|a| format!("{a:?}"))
                .unwrap_or_else(|| "<absent>".into());
            findings.push(Finding::new(
                CHECKER,
                None,
                format!(
                    "{}:{}:{}: expected {name}.{} = {:?}, observed {shown}",
                    scenario.file, m.loc.line, m.loc.col, m.key, m.value
                ),
            ));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{Data, Kind};
    use crate::yaml::Loc;
    use nodes::api::{ApplyResult, NodeEvent};

    fn ev(node: &str, kind: Kind, detail: &str) -> Event {
        let event = if kind == Kind::Storage {
            NodeEvent::Storage {
                what: "TRANSACTION_INFO".into(),
                term: Some(1),
                index: Some(7),
                entries: vec![7],
                text: detail.into(),
            }
        } else {
            NodeEvent::Apply {
                term: Some(1),
                index: Some(8),
                what: detail.into(),
                result: ApplyResult::Ok,
                keys: vec![],
                text: detail.into(),
            }
        };
        let event = Event::new(0, Some(node), None, Data::Node(event));
        assert_eq!(event.kind, kind);
        event
    }

    fn m(
        node: Option<&str>,
        kind: Option<Kind>,
        contains: Option<&str>,
        count: Option<usize>,
    ) -> TrailMatch {
        TrailMatch {
            loc: Loc { line: 3, col: 5 },
            node: node.map(str::to_string),
            kind,
            contains: contains.map(str::to_string),
            count,
        }
    }

    #[test]
    fn present_absent_and_exact_counts() {
        let mut trail = Trail::default();
        trail.push(ev("om2", Kind::Storage, "TRANSACTION_INFO = (1, 7)"));
        trail.push(ev("om1", Kind::Apply, "PurgeDirectories"));
        trail.push(ev("om1", Kind::Apply, "PurgeDirectories"));
        assert!(trail_present(
            "f",
            &[m(Some("om2"), Some(Kind::Storage), Some("= (1, 7)"), None)],
            &trail
        )
        .is_empty());
        let twice = trail_present("f", &[m(Some("om1"), None, Some("Purge"), Some(1))], &trail);
        assert_eq!(twice.len(), 1);
        assert!(
            twice[0].message.contains("f:3:5: expected exactly 1"),
            "{}",
            twice[0].message
        );
        assert!(twice[0].message.contains("found 2"));
        assert_eq!(
            trail_absent("f", &[m(None, Some(Kind::Exit), None, None)], &trail),
            vec![]
        );
        assert_eq!(
            trail_absent(
                "f",
                &[m(Some("om1"), Some(Kind::Apply), None, None)],
                &trail
            )
            .len(),
            1
        );
    }
}
