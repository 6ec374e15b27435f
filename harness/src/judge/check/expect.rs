//! The scenario's own expectations about the trail and the final observations:
//! the evidence that an outcome came from the mechanism the scenario is about.

use super::observed;
use super::Finding;
use crate::base::trail::{Event, Trail};
use crate::lang::scenario::{ObservedMatch, Scenario, Target, TrailMatch};
use crate::lang::yaml::Loc;
use faultline_api::ClusterView;

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

/// `checker:` the outcome must come from this checker's findings alone: every
/// finding that decides an outcome is its, and it has one.
pub fn decided_by(
    file: &str,
    checker: Option<&(Loc, String)>,
    findings: &[super::Finding],
) -> Vec<super::Finding> {
    let Some((loc, checker)) = checker else {
        return Vec::new();
    };
    let deciding: Vec<&super::Finding> = findings.iter().filter(|f| f.outcome.is_some()).collect();
    let others: Vec<String> = deciding
        .iter()
        .filter(|f| &f.checker != checker)
        .map(|f| f.checker.clone())
        .collect();
    let message = if !deciding.iter().any(|f| &f.checker == checker) {
        format!("expected the outcome to come from checker `{checker}`, which found nothing")
    } else if !others.is_empty() {
        format!(
            "expected the outcome to come from checker `{checker}` alone, but [{}] found something too",
            others.join(", ")
        )
    } else {
        return Vec::new();
    };
    vec![super::Finding::new(
        CHECKER,
        None,
        format!("{file}:{}:{}: {message}", loc.line, loc.col),
    )]
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

/// Final observations: each match must hold on its node (on some node, for
/// `any`/`follower`; on the final leader, for `leader`).
pub fn observed(scenario: &Scenario, wanted: &[ObservedMatch], view: &ClusterView) -> Vec<Finding> {
    let names: Vec<String> = view.nodes.iter().map(|n| n.name.clone()).collect();
    let leader = view_leader(view);
    let mut findings = Vec::new();
    for m in wanted {
        let nodes: Vec<usize> = match m.node {
            Target::Node(n) => vec![n],
            Target::Leader => leader.into_iter().collect(),
            Target::Follower => (0..names.len()).filter(|&n| Some(n) != leader).collect(),
            Target::Any => (0..names.len()).collect(),
            Target::Role(role) => (0..names.len())
                .filter(|&n| view.nodes[n].role == role)
                .collect(),
        };
        if nodes
            .iter()
            .any(|&n| observed::passes(&m.tests, &view.nodes[n].observation, &m.key))
        {
            continue;
        }
        let seen: Vec<String> = nodes
            .iter()
            .map(|&n| {
                format!(
                    "{} {}",
                    names[n],
                    observed::seen(&view.nodes[n].observation, &m.key)
                )
            })
            .collect();
        let seen = if seen.is_empty() {
            "no node (no leader at the end)".to_string()
        } else {
            seen.join(", ")
        };
        findings.push(Finding::new(
            CHECKER,
            None,
            format!(
                "{}:{}:{}: expected {}.{} {}, observed {seen}",
                scenario.file,
                m.loc.line,
                m.loc.col,
                m.node.describe(&names),
                m.key,
                observed::describe(&m.tests)
            ),
        ));
    }
    findings
}

/// The up node that leads with the highest term (as the runner resolves `leader`).
fn view_leader(view: &ClusterView) -> Option<usize> {
    view.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.up && n.observation.role.as_deref() == Some("leader"))
        .max_by_key(|(i, n)| (n.observation.term, std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// The position of the first event at or after `from` that matches.
fn first_from(m: &TrailMatch, events: &[Event], from: usize) -> Option<usize> {
    events[from.min(events.len())..]
        .iter()
        .position(|e| matches(m, e))
        .map(|i| i + from)
}

fn last(m: &TrailMatch, events: &[Event]) -> Option<usize> {
    events.iter().rposition(|e| matches(m, e))
}

fn at(m: &TrailMatch) -> String {
    format!("{}:{}", m.loc.line, m.loc.col)
}

/// Where one `sequence:` entry matched: the event of the earliest chain (its
/// position on the trail and its time), or `None` from the first entry that
/// has no event after its predecessor's. Reports show it beside the entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SequenceMatch {
    /// 1-based, as the failure messages count entries.
    pub entry: usize,
    pub line: u32,
    pub col: u32,
    /// The entry as written (`node n1, kind crash`).
    pub describe: String,
    /// The matching event's position on the trail (`events[event]`).
    pub event: Option<usize>,
    pub t_ms: Option<u64>,
}

/// The earliest chain of events matching `sequence`, entry by entry.
pub fn sequence_matches(sequence: &[TrailMatch], trail: &Trail) -> Vec<SequenceMatch> {
    let events = &trail.events;
    let mut from = Some(0);
    sequence
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let found = from.and_then(|f| first_from(m, events, f));
            from = found.map(|f| f + 1);
            SequenceMatch {
                entry: i + 1,
                line: m.loc.line,
                col: m.loc.col,
                describe: describe(m),
                event: found,
                t_ms: found.map(|f| events[f].t_ms),
            }
        })
        .collect()
}

/// `sequence`: events matching each entry, each after the one matching the entry
/// before (the earliest such chain). The finding names the first entry that has
/// no event after its predecessor's, and says whether it occurs earlier.
pub fn trail_sequence(file: &str, sequence: &[TrailMatch], trail: &Trail) -> Vec<Finding> {
    let events = &trail.events;
    let matched = sequence_matches(sequence, trail);
    let Some(i) = matched.iter().position(|s| s.event.is_none()) else {
        return Vec::new();
    };
    let m = &sequence[i];
    let previous = i
        .checked_sub(1)
        .map(|p| (&sequence[p], matched[p].event.expect("matched before")));
    let message = match (previous, first_from(m, events, 0)) {
        (_, None) => format!(
            "{file}:{}:{}: sequence entry {} ({}) never occurs",
            m.loc.line,
            m.loc.col,
            i + 1,
            describe(m)
        ),
        (Some((p, p_at)), Some(early)) => format!(
            "{file}:{}:{}: sequence entry {} ({}) is out of order: it occurs at {} ms, but not after entry {} ({}, at {}) at {} ms",
            m.loc.line,
            m.loc.col,
            i + 1,
            describe(m),
            events[early].t_ms,
            i,
            describe(p),
            at(p),
            events[p_at].t_ms
        ),
        (None, Some(_)) => unreachable!("the first entry is searched from the start"),
    };
    vec![Finding::new(CHECKER, None, message)]
}

/// `before`/`after` on `trail:` matches: some event matching the match comes
/// before (after) some event matching the other side.
pub fn trail_order(file: &str, wanted: &[TrailMatch], trail: &Trail) -> Vec<Finding> {
    let events = &trail.events;
    let mut findings = Vec::new();
    for m in wanted {
        for (other, before) in [(&m.before, true), (&m.after, false)] {
            let Some(other) = other else { continue };
            let word = if before { "before" } else { "after" };
            let message = match (first_from(m, events, 0), first_from(other, events, 0)) {
                (None, _) => continue, // `trail_present` reports the missing event
                (Some(_), None) => format!(
                    "{file}:{}:{}: expected an event with {} {word} one with {} ({}), which never occurs",
                    m.loc.line,
                    m.loc.col,
                    describe(m),
                    describe(other),
                    at(other)
                ),
                (Some(first), Some(other_first)) => {
                    let (m_last, other_last) = (last(m, events), last(other, events));
                    let holds = if before {
                        other_last.is_some_and(|o| first < o)
                    } else {
                        m_last.is_some_and(|l| l > other_first)
                    };
                    if holds {
                        continue;
                    }
                    let (mine, theirs) = if before {
                        (first, other_last.unwrap_or(other_first))
                    } else {
                        (m_last.unwrap_or(first), other_first)
                    };
                    format!(
                        "{file}:{}:{}: out of order: expected an event with {} {word} one with {} ({}); the {} is at {} ms, the {} at {} ms",
                        m.loc.line,
                        m.loc.col,
                        describe(m),
                        describe(other),
                        at(other),
                        if before { "first" } else { "last" },
                        events[mine].t_ms,
                        if before { "other's last" } else { "other's first" },
                        events[theirs].t_ms
                    )
                }
            };
            findings.push(Finding::new(CHECKER, None, message));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::trail::{Data, Kind};
    use crate::lang::yaml::Loc;
    use faultline_api::{ApplyResult, NodeEvent};

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
            before: None,
            after: None,
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
