//! The model's invariants, evaluated over what the OMs publish.

use faultline_api::{Check, ClusterView, NodeView};
use std::collections::BTreeMap;

pub const SNAPSHOTS_AGREE: &str = "snapshots_agree";
pub const TXINFO_COVERS_EFFECTS: &str = "transaction_info_covers_effects";
pub const LEADER_READY: &str = "leader_ready_within_bound";
pub const USAGE_MATCHES_TABLES: &str = "bucket_usage_matches_tables";

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
        USAGE_MATCHES_TABLES => usage_matches_tables(cluster),
        // Checked at the moment of each change by the Raft oracle, which the
        // node that sees a violation reports (the harness fails it then).
        other if crate::raft::oracle_checks(other) => Check::Pass,
        other => Check::Fail(format!("ozone-om declares no invariant `{other}`")),
    }
}

fn is_snapshot_key(key: &str) -> bool {
    key.starts_with("snapshot.") || key.starts_with(super::chain::PREFIX)
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
        let views: Vec<(&NodeView, BTreeMap<&str, &str>)> =
            nodes.iter().map(|n| (*n, snapshot_view(n))).collect();
        let keys: std::collections::BTreeSet<&str> =
            views.iter().flat_map(|(_, v)| v.keys().copied()).collect();
        for key in keys {
            // Only the OMs that vouch for a key (a corrupted chain does not).
            let mut vouching = views.iter().filter(|(n, _)| n.observation.vouches(key));
            let Some((first, reference)) = vouching.next() else {
                continue;
            };
            if let Some((other, view)) = vouching.find(|(_, v)| v.get(key) != reference.get(key)) {
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
    let mut unjudged = None;
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
            let applied = facts.fact("om_applied").unwrap_or("?");
            let startup = facts.fact("startup_index").unwrap_or("?");
            if waited > bound {
                return Check::Fail(format!(
                    "{} has led without being ready for {waited} ms (bound {bound} ms): OM applied index {applied} < startup index {startup}",
                    node.name
                ));
            }
            // Not ready, and not yet for long enough to fail: only more time
            // tells whether it becomes ready within the bound.
            unjudged.get_or_insert(Check::Unjudged {
                why: format!(
                    "{} had led without being ready for {waited} ms of the {bound} ms bound when the run ended (OM applied index {applied} < startup index {startup})",
                    node.name
                ),
                wait_ms: Some(bound - waited + 1),
            });
        }
    }
    unjudged.unwrap_or(Check::Pass)
}

/// The four counters of one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Usage {
    used_bytes: i64,
    used_namespace: i64,
    snapshot_used_bytes: i64,
    snapshot_used_namespace: i64,
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "usedBytes={}, usedNamespace={}, snapshotUsedBytes={}, snapshotUsedNamespace={}",
            self.used_bytes,
            self.used_namespace,
            self.snapshot_used_bytes,
            self.snapshot_used_namespace
        )
    }
}

/// A `size=N` field of a published row.
fn size_of(value: &str) -> i64 {
    value
        .split_whitespace()
        .find_map(|part| part.strip_prefix("size="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Per bucket: its object id and counters.
type BucketUsage = BTreeMap<String, (u64, Usage)>;

/// The counters as published, per bucket (`bucket./v/b.usedBytes` ...).
fn published_usage(state: &BTreeMap<String, String>) -> BucketUsage {
    let mut buckets: BucketUsage = BTreeMap::new();
    for (key, value) in state {
        let Some(rest) = key.strip_prefix("bucket.") else {
            continue;
        };
        let Some((bucket, field)) = rest.rsplit_once('.') else {
            continue;
        };
        let number: i64 = value.parse().unwrap_or(0);
        let (id, usage) = buckets.entry(bucket.to_string()).or_default();
        match field {
            "objectId" => *id = number as u64,
            "usedBytes" => usage.used_bytes = number,
            "usedNamespace" => usage.used_namespace = number,
            "snapshotUsedBytes" => usage.snapshot_used_bytes = number,
            "snapshotUsedNamespace" => usage.snapshot_used_namespace = number,
            _ => {}
        }
    }
    buckets
}

/// What quota repair would compute from the tables: live dirs and files are
/// used; rows of the deleted tables (the active store's and the snapshots')
/// are snapshot-used.
fn recomputed_usage(state: &BTreeMap<String, String>, bucket: &str, bucket_id: u64) -> Usage {
    let inside = format!("{bucket}/");
    let mut usage = Usage::default();
    for (key, value) in state {
        let Some((table, row)) = key.split_once('.') else {
            continue;
        };
        // Snapshot-owned rows are keyed `<snapshot id>|<row key>`.
        let row = row.split_once('|').map_or(row, |(_, r)| r);
        if !row.starts_with(&inside) {
            continue;
        }
        let same_bucket = value.contains(&format!("bucketId={bucket_id} "));
        match table {
            "dir" => usage.used_namespace += 1,
            "file" => {
                usage.used_namespace += 1;
                usage.used_bytes += size_of(value);
            }
            "deletedDir" | "snapDeletedDir" if same_bucket => usage.snapshot_used_namespace += 1,
            "deleted" | "snapDeleted" if same_bucket => {
                usage.snapshot_used_namespace += 1;
                usage.snapshot_used_bytes += size_of(value);
            }
            _ => {}
        }
    }
    usage
}

fn usage_matches_tables(cluster: &ClusterView) -> Check {
    let mut failures = Vec::new();
    let mut by_applied: BTreeMap<u64, Vec<(&str, BucketUsage)>> = BTreeMap::new();
    for node in cluster.nodes.iter().filter(|n| n.up) {
        let state = &node.observation.state;
        let published = published_usage(state);
        for (bucket, (id, usage)) in &published {
            let expected = recomputed_usage(state, bucket, *id);
            let negative = [
                usage.used_bytes,
                usage.used_namespace,
                usage.snapshot_used_bytes,
                usage.snapshot_used_namespace,
            ]
            .iter()
            .any(|n| *n < 0);
            if *usage != expected || negative {
                failures.push(format!(
                    "{}: bucket {bucket} has ({usage}) but its tables give ({expected})",
                    node.name
                ));
            }
        }
        if let Some(applied) = node.observation.applied {
            by_applied
                .entry(applied)
                .or_default()
                .push((node.name.as_str(), published));
        }
    }
    for (applied, nodes) in &by_applied {
        let Some(((first, reference), rest)) = nodes.split_first() else {
            continue;
        };
        for (name, published) in rest {
            if published != reference {
                failures.push(format!(
                    "at applied index {applied} {name} and {first} publish different bucket counters"
                ));
            }
        }
    }
    if failures.is_empty() {
        Check::Pass
    } else {
        Check::Fail(failures.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::Observation;

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
            violations: Vec::new(),
            link_faults: Vec::new(),
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
    fn an_om_with_a_corrupted_chain_is_not_compared_on_the_chains() {
        let corrupted = |name: &str| {
            let mut n = node(
                name,
                9,
                &[("chain.corrupted", "true"), ("snapshot./v/b/s1", "ACTIVE")],
                &[],
            );
            n.observation
                .unvouched
                .insert(crate::ozone::chain::PREFIX.into());
            n
        };
        let ok = |name: &str, chain: &str| {
            node(
                name,
                9,
                &[("chain./v/b", chain), ("snapshot./v/b/s1", "ACTIVE")],
                &[],
            )
        };
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![corrupted("om1"), ok("om2", "a"), ok("om3", "a")],
        };
        assert_eq!(check(SNAPSHOTS_AGREE, &view), Check::Pass);
        // The others' chains are still compared, and its snapshot table is.
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![corrupted("om1"), ok("om2", "a"), ok("om3", "a>b")],
        };
        let Check::Fail(message) = check(SNAPSHOTS_AGREE, &view) else {
            panic!("the vouching OMs' chains differ");
        };
        assert!(
            message.contains("om2") && message.contains("om3"),
            "{message}"
        );
        let mut table = corrupted("om1");
        table
            .observation
            .state
            .insert("snapshot./v/b/s1".into(), "DELETED".into());
        let view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![table, ok("om2", "a"), ok("om3", "a")],
        };
        assert!(matches!(check(SNAPSHOTS_AGREE, &view), Check::Fail(_)));
    }

    #[test]
    fn a_leader_not_ready_past_the_bound_fails_liveness() {
        let facts = [(FACT_READY_BOUND, "60000"), (FACT_NOT_READY_SINCE, "1000")];
        let mut view = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 30_000,
            nodes: vec![node("om1", 12, &[], &facts)],
        };
        // 29 s of a 60 s bound: only 31 s more would tell, never a pass.
        let Check::Unjudged { why, wait_ms } = check(LEADER_READY, &view) else {
            panic!("a leader unready within its bound is not judged yet");
        };
        assert_eq!(wait_ms, Some(31_001));
        assert!(why.contains("29000 ms of the 60000 ms bound"), "{why}");
        view.now_ms = 61_001;
        assert!(matches!(check(LEADER_READY, &view), Check::Fail(_)));
        // Ready (no episode open): judged, and it held.
        let ready = [(FACT_READY_BOUND, "60000"), (FACT_READY_WAIT_MAX, "20")];
        view.nodes = vec![node("om1", 12, &[], &ready)];
        assert_eq!(check(LEADER_READY, &view), Check::Pass);
    }

    fn bucket_state(
        counters: (i64, i64, i64, i64),
        rows: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let mut state: Vec<(String, String)> = vec![
            ("bucket./v/b.objectId".into(), "5".into()),
            ("bucket./v/b.usedBytes".into(), counters.0.to_string()),
            ("bucket./v/b.usedNamespace".into(), counters.1.to_string()),
            (
                "bucket./v/b.snapshotUsedBytes".into(),
                counters.2.to_string(),
            ),
            (
                "bucket./v/b.snapshotUsedNamespace".into(),
                counters.3.to_string(),
            ),
        ];
        state.extend(rows.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        state
    }

    fn usage_view(counters: (i64, i64, i64, i64), rows: &[(&str, &str)]) -> ClusterView {
        let state = bucket_state(counters, rows);
        let state: Vec<(&str, &str)> = state
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![node("om1", 20, &state, &[]), node("om2", 20, &state, &[])],
        }
    }

    #[test]
    fn usage_after_one_purge_matches_the_tables() {
        // (0, 0, 1024, 1): f waits in the deleted table.
        let rows = [("deleted./v/b/d2/f#7", "bucketId=5 size=1024")];
        assert_eq!(
            check(USAGE_MATCHES_TABLES, &usage_view((0, 0, 1024, 1), &rows)),
            Check::Pass
        );
    }

    #[test]
    fn the_reports_counters_after_a_second_purge_fail() {
        let rows = [("deleted./v/b/d2/f#7", "bucketId=5 size=1024")];
        let Check::Fail(message) = check(
            USAGE_MATCHES_TABLES,
            &usage_view((-1024, -1, 2048, 0), &rows),
        ) else {
            panic!("the doubled purge must fail");
        };
        assert!(message.contains("usedBytes=-1024"), "{message}");
        assert!(
            message.contains(
                "usedBytes=0, usedNamespace=0, snapshotUsedBytes=1024, snapshotUsedNamespace=1"
            ),
            "{message}"
        );
    }

    #[test]
    fn snapshot_rows_and_live_rows_count() {
        let rows = [
            ("dir./v/b/x", "obj=9"),
            ("file./v/b/x/g", "obj=10 size=3"),
            ("snapDeletedDir.snap-7|/v/b/d#4", "bucketId=5 size=0"),
        ];
        assert_eq!(
            check(USAGE_MATCHES_TABLES, &usage_view((3, 2, 0, 1), &rows)),
            Check::Pass
        );
        assert!(matches!(
            check(USAGE_MATCHES_TABLES, &usage_view((3, 2, 0, -1), &rows)),
            Check::Fail(_)
        ));
    }
}
