//! Do the replicas agree? Compared only between up nodes at a common applied index.

use super::Finding;
use crate::base::outcome::Outcome;
use faultline_api::{ClusterView, IndexFormat};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

pub const CHECKER: &str = "divergence";

/// Replicas (up nodes) grouped by applied index must hold equal state maps; nodes
/// whose model has no log (`applied: None`) form one group, compared at quiescence.
/// Indices are written in the model's form (a ZooKeeper zxid in hex).
pub fn check(view: &ClusterView, format: IndexFormat) -> Vec<Finding> {
    let mut groups: BTreeMap<Option<u64>, Vec<usize>> = BTreeMap::new();
    for (i, node) in view.nodes.iter().enumerate() {
        if node.up {
            groups.entry(node.observation.applied).or_default().push(i);
        }
    }
    let mut findings = Vec::new();
    for (applied, members) in &groups {
        if let Some(finding) = compare(view, *applied, members, format) {
            findings.push(finding);
        }
    }
    let indexed: Vec<_> = groups.keys().filter(|k| k.is_some()).collect();
    if indexed.len() > 1 {
        let positions: BTreeMap<&str, u64> = view
            .nodes
            .iter()
            .filter(|n| n.up)
            .filter_map(|n| n.observation.applied.map(|a| (n.name.as_str(), a)))
            .collect();
        let listed = positions
            .iter()
            .map(|(n, a)| format!("{n}={}", format.show(*a)))
            .collect::<Vec<_>>()
            .join(", ");
        findings.push(
            Finding::new(
                CHECKER,
                Some(Outcome::Stuck),
                format!("replicas did not reach a common applied index ({listed})"),
            )
            .with_detail(json!({ "applied": positions })),
        );
    }
    findings
}

fn compare(
    view: &ClusterView,
    applied: Option<u64>,
    members: &[usize],
    format: IndexFormat,
) -> Option<Finding> {
    if members.len() < 2 {
        return None;
    }
    let keys: BTreeSet<&String> = members
        .iter()
        .flat_map(|&i| view.nodes[i].observation.state.keys())
        .collect();
    let mut differing = 0usize;
    let mut first: Option<(&String, BTreeMap<&str, Option<&String>>)> = None;
    for key in keys {
        // A node that cannot vouch for a key is left out of its comparison.
        let values: BTreeMap<&str, Option<&String>> = members
            .iter()
            .filter(|&&i| view.nodes[i].observation.vouches(key))
            .map(|&i| {
                (
                    view.nodes[i].name.as_str(),
                    view.nodes[i].observation.state.get(key),
                )
            })
            .collect();
        let distinct: BTreeSet<Option<&String>> = values.values().copied().collect();
        if distinct.len() > 1 {
            differing += 1;
            if first.is_none() {
                first = Some((key, values));
            }
        }
    }
    let (key, values) = first?;
    let at = applied
        .map(|a| format!(" at applied index {}", format.show(a)))
        .unwrap_or_default();
    let shown = values
        .iter()
        .map(|(n, v)| {
            format!(
                "{n}={}",
                v.map(|v| format!("{v:?}"))
                    .unwrap_or_else(|| "<absent>".into())
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!(
        "replicas disagree{at}: first differing key `{key}`: {shown} ({differing} key(s) differ)"
    );
    Some(
        Finding::new(CHECKER, Some(Outcome::Diverged), message).with_detail(json!({
            "applied": applied,
            "key": key,
            "values": values,
            "differing_keys": differing,
        })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::{NodeView, Observation};

    fn node(name: &str, up: bool, applied: Option<u64>, state: &[(&str, &str)]) -> NodeView {
        let mut observation = Observation {
            applied,
            ..Observation::default()
        };
        for (k, v) in state {
            observation.state.insert(k.to_string(), v.to_string());
        }
        NodeView {
            name: name.into(),
            role: "replica".into(),
            up,
            observation,
        }
    }

    #[test]
    fn equal_replicas_pass() {
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node("a", true, Some(3), &[("k", "1")]),
                node("b", true, Some(3), &[("k", "1")]),
            ],
        };
        assert!(check(&view, IndexFormat::Decimal).is_empty());
    }

    #[test]
    fn names_the_first_differing_key_and_every_value() {
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node(
                    "a",
                    true,
                    Some(5),
                    &[("k1", "x"), ("k2", "same"), ("k3", "p")],
                ),
                node("b", true, Some(5), &[("k1", "y"), ("k2", "same")]),
                node(
                    "c",
                    true,
                    Some(5),
                    &[("k1", "x"), ("k2", "same"), ("k3", "p")],
                ),
            ],
        };
        let findings = check(&view, IndexFormat::Decimal);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].outcome, Some(Outcome::Diverged));
        assert_eq!(findings[0].detail["key"], "k1");
        assert_eq!(findings[0].detail["values"]["b"], "y");
        assert_eq!(findings[0].detail["differing_keys"], 2);
        assert!(
            findings[0].message.contains("b=\"y\""),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn a_node_is_not_compared_on_keys_it_cannot_vouch_for() {
        let mut broken = node("b", true, Some(5), &[("k", "1"), ("chain.x", "")]);
        broken.observation.unvouched.insert("chain.".into());
        let agreeing = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node("a", true, Some(5), &[("k", "1"), ("chain.x", "s1")]),
                broken.clone(),
                node("c", true, Some(5), &[("k", "1"), ("chain.x", "s1")]),
            ],
        };
        assert!(check(&agreeing, IndexFormat::Decimal).is_empty());
        // The nodes that vouch for the key are still compared among themselves,
        // and the unvouching node on every other key.
        let mut other = broken.clone();
        other.observation.state.insert("k".into(), "2".into());
        let differing = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node("a", true, Some(5), &[("k", "1"), ("chain.x", "s1")]),
                other,
                node("c", true, Some(5), &[("k", "1"), ("chain.x", "s2")]),
            ],
        };
        let findings = check(&differing, IndexFormat::Decimal);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].detail["key"], "chain.x");
        assert_eq!(findings[0].detail["values"].as_object().unwrap().len(), 2);
        assert_eq!(findings[0].detail["differing_keys"], 2);
    }

    #[test]
    fn down_nodes_are_not_compared() {
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node("a", true, Some(2), &[("k", "1")]),
                node("b", false, Some(2), &[("k", "2")]),
            ],
        };
        assert!(check(&view, IndexFormat::Decimal).is_empty());
    }

    #[test]
    fn different_applied_indices_are_stuck_not_diverged() {
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node("a", true, Some(2), &[("k", "1")]),
                node("b", true, Some(4), &[("k", "2")]),
            ],
        };
        let findings = check(&view, IndexFormat::Decimal);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].outcome, Some(Outcome::Stuck));
        assert!(findings[0].message.contains("a=2, b=4"));
    }

    #[test]
    fn logless_models_compare_at_quiescence() {
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node("dn", true, None, &[("C1", "CLOSED")]),
                node("recon", true, None, &[("C1", "UNHEALTHY")]),
            ],
        };
        let findings = check(&view, IndexFormat::Decimal);
        assert_eq!(findings[0].outcome, Some(Outcome::Diverged));
        assert_eq!(findings[0].detail["key"], "C1");
    }
}
