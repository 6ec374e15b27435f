//! The model's invariants, evaluated over what the OMs publish.

use crate::api::{Check, ClusterView, NodeView};
use std::collections::BTreeMap;

pub const SNAPSHOTS_AGREE: &str = "snapshots_agree";
pub const TXINFO_COVERS_EFFECTS: &str = "transaction_info_covers_effects";
pub const LEADER_READY: &str = "leader_ready_within_bound";

/// Facts the node publishes for these checks.
pub const FACT_COVERED_FAILED: &str = "txinfo_covers_failed";
pub const FACT_NOT_READY_SINCE: &str = "leader_not_ready_since_ms";
pub const FACT_READY_WAIT_MAX: &str = "leader_ready_wait_max_ms";
pub const FACT_READY_BOUND: &str = "leader_ready_bound_ms";

pub fn check(invariant: &str, cluster: &ClusterView) -> Check {
    match invariant {
        SNAPSHOTS_AGREE => snapshots_agree(cluster),
        TXINFO_COVERS_EFFECTS => txinfo_covers_effects(cluster),
        LEADER_READY => leader_ready(cluster),
        other => Check::Fail(format!("ozone-om declares no invariant `{other}`")),
    }
}

fn is_snapshot_key(key: &str) -> bool {
    key.starts_with("snapshot.") || key.starts_with("chain.")
}

fn snapshot_view(node: &NodeView) -> BTreeMap<&str, &str> {
    node.observation
        .state
        .iter()
        .filter(|(k, _)| is_snapshot_key(k))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

fn snapshots_agree(cluster: &ClusterView) -> Check {
    let mut by_applied: BTreeMap<u64, Vec<&NodeView>> = BTreeMap::new();
    for node in cluster.nodes.iter().filter(|n| n.up) {
        if let Some(applied) = node.observation.applied {
            by_applied.entry(applied).or_default().push(node);
        }
    }
    for (applied, nodes) in by_applied {
        let Some((first, rest)) = nodes.split_first() else {
            continue;
        };
        let reference = snapshot_view(first);
        for other in rest {
            let view = snapshot_view(other);
            if view != reference {
                let key = reference
                    .keys()
                    .chain(view.keys())
                    .find(|k| reference.get(*k) != view.get(*k))
                    .expect("the views differ somewhere");
                return Check::Fail(format!(
                    "at applied index {applied}: `{key}` is {:?} on {} and {:?} on {}",
                    reference.get(key),
                    first.name,
                    view.get(key),
                    other.name
                ));
            }
        }
    }
    Check::Pass
}

fn txinfo_covers_effects(cluster: &ClusterView) -> Check {
    let failures: Vec<String> = cluster
        .nodes
        .iter()
        .filter_map(|n| {
            n.observation
                .fact(FACT_COVERED_FAILED)
                .map(|what| format!("{}: {what}", n.name))
        })
        .collect();
    if failures.is_empty() {
        Check::Pass
    } else {
        Check::Fail(failures.join("; "))
    }
}

fn leader_ready(cluster: &ClusterView) -> Check {
    for node in &cluster.nodes {
        let facts = &node.observation;
        let bound = facts.fact_u64(FACT_READY_BOUND).unwrap_or(u64::MAX);
        if let Some(waited) = facts.fact_u64(FACT_READY_WAIT_MAX).filter(|w| *w > bound) {
            return Check::Fail(format!(
                "{} led for {waited} ms before it was ready (bound {bound} ms)",
                node.name
            ));
        }
        if !node.up {
            continue;
        }
        if let Some(since) = facts.fact_u64(FACT_NOT_READY_SINCE) {
            let waited = cluster.now_ms.saturating_sub(since);
            if waited > bound {
                let applied = facts.fact("om_applied").unwrap_or("?");
                let startup = facts.fact("startup_index").unwrap_or("?");
                return Check::Fail(format!(
                    "{} has led without being ready for {waited} ms (bound {bound} ms): OM applied index {applied} < startup index {startup}",
                    node.name
                ));
            }
        }
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Observation;

    fn node(name: &str, applied: u64, state: &[(&str, &str)], facts: &[(&str, &str)]) -> NodeView {
        let mut observation = Observation {
            applied: Some(applied),
            ..Observation::default()
        };
        for (k, v) in state {
            observation.state.insert(k.to_string(), v.to_string());
        }
        for (k, v) in facts {
            observation.facts.insert(k.to_string(), v.to_string());
        }
        NodeView {
            name: name.into(),
            role: "om".into(),
            up: true,
            observation,
        }
    }

    #[test]
    fn snapshot_tables_must_agree_at_a_common_index() {
        let view = ClusterView {
            now_ms: 0,
            nodes: vec![
                node(
                    "om1",
                    9,
                    &[("chain./v/b", "a"), ("bucket./v/b.usedBytes", "1")],
                    &[],
                ),
                node(
                    "om2",
                    9,
                    &[("chain./v/b", "a>b"), ("bucket./v/b.usedBytes", "1")],
                    &[],
                ),
                node("om3", 7, &[], &[]),
            ],
        };
        let Check::Fail(message) = check(SNAPSHOTS_AGREE, &view) else {
            panic!("differing chains must fail");
        };
        assert!(message.contains("chain./v/b"), "{message}");
    }

    #[test]
    fn a_leader_not_ready_past_the_bound_fails_liveness() {
        let facts = [(FACT_READY_BOUND, "60000"), (FACT_NOT_READY_SINCE, "1000")];
        let mut view = ClusterView {
            now_ms: 30_000,
            nodes: vec![node("om1", 12, &[], &facts)],
        };
        assert_eq!(check(LEADER_READY, &view), Check::Pass);
        view.now_ms = 61_001;
        assert!(matches!(check(LEADER_READY, &view), Check::Fail(_)));
    }
}
