//! The divergence: what the checkers named (keys, violations, the cause) and the
//! view of it on the page (the first differing key, the replicas side by side,
//! every differing key, the events that touched them).

use super::escape::clip;
use super::{fmt_ms, index_format, mentions};
use crate::base::outcome::Outcome;
use crate::judge::check::cause::{self, Cause};
use crate::judge::check::Finding;
use crate::sim::runner::RunResult;
use std::collections::{BTreeMap, BTreeSet};

/// Rows in the divergence view's table of all differing keys.
const DIFFERING_ROWS_MAX: usize = 30;

/// What the divergence view shows, computed from the findings, the trail and the
/// final observations.
#[derive(Debug, Default)]
pub struct Divergence<'a> {
    /// Keys named by divergence findings, first detection first.
    pub keys: Vec<String>,
    /// The finding that named the first key.
    pub first: Option<&'a Finding>,
    /// Findings that say a safety property failed (outcome `violated`).
    pub violations: Vec<&'a Finding>,
    /// Trail indices of events that touched one of `keys` (listed in the event's
    /// `keys`, or mentioned in its text), and the events the cause cites.
    pub touched: BTreeSet<usize>,
    /// The checker-side explanation: the first finding's cause (a divergence's,
    /// else a failed invariant's).
    pub cause: Option<Cause>,
}

impl<'a> Divergence<'a> {
    pub fn of(r: &'a RunResult) -> Divergence<'a> {
        let mut d = Divergence::default();
        for finding in &r.findings {
            if let Some(key) = finding.detail.get("key").and_then(|k| k.as_str()) {
                if !d.keys.iter().any(|k| k == key) {
                    d.keys.push(key.to_string());
                }
                d.first.get_or_insert(finding);
            }
            if finding.outcome == Some(Outcome::Violated) {
                d.violations.push(finding);
            }
        }
        // A departure from the fixed twin is the find's cause; the checker-side
        // cause (the faults in effect) is then not offered as one.
        d.cause = if r.departed() {
            None
        } else {
            d.first
                .and_then(cause::of)
                .or_else(|| d.violations.iter().find_map(|f| cause::of(f)))
                .or_else(|| r.findings.iter().find_map(cause::of))
        };
        for (i, e) in r.trail.events.iter().enumerate() {
            if d.keys
                .iter()
                .any(|k| e.keys().contains(k) || mentions(&e.detail, k))
            {
                d.touched.insert(i);
            }
        }
        let n = r.trail.events.len();
        if let Some(cause) = &d.cause {
            d.touched
                .extend(cause.events().into_iter().filter(|&i| i < n));
        }
        d.touched.extend(
            r.differential
                .iter()
                .filter(|dep| dep.fixed_passed && dep.event < n)
                .map(|dep| dep.event),
        );
        d
    }

    /// Shown when a checker named a key the replicas disagree on (a violated
    /// run without one has its findings and its cause, and nothing to show here).
    pub fn applies(&self) -> bool {
        self.first.is_some()
    }
}

pub(super) struct DivergenceView<'a> {
    /// The first differing key and the replicas' values; `None` when no checker
    /// named a key (a violated run).
    pub(super) first: Option<FirstDifference<'a>>,
    pub(super) keys: Vec<String>,
    pub(super) touched: Vec<TouchedRow<'a>>,
}

pub(super) struct FirstDifference<'a> {
    pub(super) key: String,
    /// The applied index, as the model writes log positions.
    pub(super) applied: Option<String>,
    pub(super) differing: u64,
    /// Replicas side by side, in the run's node order.
    pub(super) replicas: Vec<ReplicaCell<'a>>,
    /// Whether one value is held by more replicas than any other (then the others
    /// are marked as the ones that differ).
    pub(super) unique_top: bool,
    pub(super) table: Option<DifferingKeys<'a>>,
}

pub(super) struct ReplicaCell<'a> {
    pub(super) name: &'a str,
    /// `None`: the node was not compared; `Some(None)`: it does not hold the key.
    pub(super) value: Option<Option<String>>,
    pub(super) odd: bool,
}

pub(super) struct TouchedRow<'a> {
    pub(super) i: usize,
    pub(super) time: String,
    pub(super) node: &'a str,
    pub(super) kind: String,
    pub(super) detail: &'a str,
}

/// `null` in a finding's values means the replica does not hold the key.
fn value_text(v: Option<&serde_json::Value>) -> Option<String> {
    match v {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    }
}

impl<'a> DivergenceView<'a> {
    pub(super) fn of(r: &'a RunResult, d: &Divergence<'a>) -> DivergenceView<'a> {
        DivergenceView {
            first: d.first.map(|first| FirstDifference::of(r, d, first)),
            keys: d.keys.clone(),
            touched: d
                .touched
                .iter()
                .map(|&i| {
                    let e = &r.trail.events[i];
                    TouchedRow {
                        i,
                        time: fmt_ms(e.t_ms),
                        node: e.node.as_deref().unwrap_or("harness"),
                        kind: e.kind.name(),
                        detail: &e.detail,
                    }
                })
                .collect(),
        }
    }
}

impl<'a> FirstDifference<'a> {
    pub(super) fn of(
        r: &'a RunResult,
        d: &Divergence<'a>,
        first: &'a Finding,
    ) -> FirstDifference<'a> {
        let values = first.detail.get("values").and_then(|v| v.as_object());
        let cells: Vec<(&str, Option<Option<String>>)> = r
            .nodes
            .iter()
            .map(|n| {
                (
                    n.name.as_str(),
                    values
                        .filter(|v| v.contains_key(&n.name))
                        .map(|v| value_text(v.get(&n.name))),
                )
            })
            .collect();
        let mut counts: BTreeMap<Option<String>, usize> = BTreeMap::new();
        for value in cells.iter().filter_map(|(_, v)| v.as_ref()) {
            *counts.entry(value.clone()).or_default() += 1;
        }
        let top = counts.values().copied().max().unwrap_or(0);
        let unique_top = counts.values().filter(|&&c| c == top).count() == 1;
        let replicas = cells
            .into_iter()
            .map(|(name, value)| {
                let odd = value
                    .as_ref()
                    .is_some_and(|v| !unique_top || counts.get(v).copied().unwrap_or(0) < top);
                ReplicaCell { name, value, odd }
            })
            .collect();
        FirstDifference {
            key: d.keys.first().cloned().unwrap_or_default(),
            applied: first
                .detail
                .get("applied")
                .and_then(|a| a.as_u64())
                .map(|a| index_format(r).show(a)),
            differing: first
                .detail
                .get("differing_keys")
                .and_then(|n| n.as_u64())
                .unwrap_or(1),
            replicas,
            unique_top,
            table: DifferingKeys::of(r, values),
        }
    }
}

/// Every key that differs between the compared replicas' final states (the
/// checker names the first; this lists them all, bounded).
pub(super) struct DifferingKeys<'a> {
    pub(super) names: Vec<&'a str>,
    /// Key, then each compared replica's value (clipped; `None`: absent).
    pub(super) rows: Vec<(&'a str, Vec<Option<String>>)>,
    pub(super) total: usize,
}

impl<'a> DifferingKeys<'a> {
    pub(super) fn of(
        r: &'a RunResult,
        values: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<DifferingKeys<'a>> {
        let group: Vec<&crate::sim::runner::FinalNode> = r
            .nodes
            .iter()
            .filter(|n| match values {
                Some(v) => v.contains_key(&n.name),
                None => n.up,
            })
            .collect();
        if group.len() < 2 {
            return None;
        }
        let keys: BTreeSet<&String> = group
            .iter()
            .flat_map(|n| n.observation.state.keys())
            .collect();
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| {
                let distinct: BTreeSet<Option<&String>> =
                    group.iter().map(|n| n.observation.state.get(*k)).collect();
                distinct.len() > 1
            })
            .collect();
        if differing.len() < 2 {
            // The one differing key is already shown above.
            return None;
        }
        Some(DifferingKeys {
            names: group.iter().map(|n| n.name.as_str()).collect(),
            rows: differing
                .iter()
                .take(DIFFERING_ROWS_MAX)
                .map(|key| {
                    let cells = group
                        .iter()
                        .map(|n| n.observation.state.get(*key).map(|v| clip(v, 200)))
                        .collect();
                    (key.as_str(), cells)
                })
                .collect(),
            total: differing.len(),
        })
    }
}
