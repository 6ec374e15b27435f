//! The model's invariant over the cluster view (pure; read from published facts).
//!
//! `committed_txns_durable`: every committed txn a server has applied is in its
//! durable txn log or covered by its snapshot. Only zxids above the server's last
//! snapshot are judged: a snapshot that holds a txn's effect makes a missing log
//! record harmless. Two ways to see it broken:
//! - a server reports `lost_zxids` above its snapshot: txns it applied that a dead
//!   sync thread held and never logged (it can see that itself until it restarts);
//! - at quiescence (servers synced, nothing pending), a zxid that some server has
//!   in its durable log above its own snapshot is missing from the durable log of
//!   another server that applied it (<= its `applied`, newer than its snapshot).
//!   This is how the hole shows after the restart that made it permanent. Entries
//!   at or below a server's own snapshot are not evidence: a learner that got a SNAP
//!   keeps proposals in its log that never committed, superseded by the snapshot.
//!   The server's log here includes its appended-but-unsynced tail (a sync thread
//!   that died on a failed fsync leaves one, and nothing syncs it until the next
//!   write): an fsync makes the whole tail durable before anything after it, and a
//!   crash loses only the tail, which the restarted server gets back by DIFF from
//!   its last durable zxid. So a tail cannot become a hole; a txn never appended
//!   (ZOOKEEPER-4541) can.

use super::zxid::{first_uncovered, parse_hex, parse_ranges, Zxid};
use faultline_api::{Check, ClusterView, NodeView};

struct Durable<'a> {
    name: &'a str,
    log_text: &'a str,
    log: Vec<(Zxid, Zxid)>,
    /// The durable log plus the appended-but-unsynced tail.
    logged: Vec<(Zxid, Zxid)>,
    snapshot: Zxid,
    applied: Zxid,
}

fn durable(node: &NodeView) -> Option<Durable<'_>> {
    let obs = &node.observation;
    let log_text = obs.fact("log_zxids")?;
    let log = parse_ranges(log_text)?;
    let tail = parse_ranges(obs.fact("log_unsynced_zxids").unwrap_or("none"))?;
    Some(Durable {
        name: &node.name,
        log_text,
        logged: log.iter().chain(&tail).copied().collect(),
        log,
        snapshot: parse_hex(obs.fact("snapshot_zxid")?)?,
        applied: Zxid(obs.applied?),
    })
}

/// Synced with a leader (or leading) and nothing in hand.
fn settled(node: &NodeView) -> bool {
    node.up
        && node.observation.pending == 0
        && matches!(
            node.observation.role.as_deref(),
            Some("leader" | "follower")
        )
}

/// The zxids a server reports lost that its snapshot does not cover.
fn lost_above_snapshot(node: &NodeView) -> Option<String> {
    let obs = &node.observation;
    let lost = parse_ranges(obs.fact("lost_zxids")?)?;
    let snapshot = obs
        .fact("snapshot_zxid")
        .and_then(parse_hex)
        .unwrap_or(Zxid::ZERO);
    let above: Vec<String> = lost
        .into_iter()
        .map(|(lo, hi)| (lo.max(Zxid(snapshot.0 + 1)), hi))
        .filter(|(lo, hi)| lo <= hi)
        .map(|(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect();
    (!above.is_empty()).then(|| above.join(" "))
}

pub fn committed_txns_durable(cluster: &ClusterView) -> Check {
    for node in cluster.nodes.iter().filter(|n| n.up) {
        if let Some(lost) = lost_above_snapshot(node) {
            return Check::Fail(format!(
                "{} applied {lost} but its sync thread died before logging it",
                node.name
            ));
        }
    }
    let servers: Vec<Durable> = cluster
        .nodes
        .iter()
        .filter(|n| settled(n))
        .filter_map(durable)
        .collect();
    for source in &servers {
        for server in servers.iter().filter(|s| s.name != source.name) {
            let floor = Zxid(source.snapshot.max(server.snapshot).0 + 1);
            for &(lo, hi) in &source.log {
                let (lo, hi) = (lo.max(floor), hi.min(server.applied));
                if lo > hi {
                    continue;
                }
                if let Some(missing) = first_uncovered((lo, hi), &server.logged) {
                    return Check::Fail(format!(
                        "{} applied up to {} but its txn log lacks committed {missing} (in {}'s log; {}'s log: {}, snapshot {})",
                        server.name,
                        server.applied,
                        source.name,
                        server.name,
                        server.log_text,
                        server.snapshot
                    ));
                }
            }
        }
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::Observation;

    fn node(name: &str, role: &str, applied: u64, log: &str, snapshot: &str) -> NodeView {
        let mut observation = Observation {
            role: Some(role.into()),
            term: Some(2),
            applied: Some(applied),
            ..Observation::default()
        };
        observation.facts.insert("log_zxids".into(), log.into());
        observation
            .facts
            .insert("snapshot_zxid".into(), snapshot.into());
        NodeView {
            name: name.into(),
            role: "server".into(),
            up: true,
            observation,
        }
    }

    const W: u64 = 0x2_0000_0001;

    #[test]
    fn a_follower_missing_an_applied_committed_txn_fails() {
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node(
                    "zk1",
                    "follower",
                    W,
                    "0x100000001-0x100000002 0x200000001",
                    "0x0",
                ),
                // The new leader snapshotted at Z: its own log is no evidence below it.
                node(
                    "zk2",
                    "leader",
                    W,
                    "0x100000001-0x100000003 0x200000001",
                    "0x100000003",
                ),
                node(
                    "zk3",
                    "follower",
                    W,
                    "0x100000001-0x100000003 0x200000001",
                    "0x0",
                ),
            ],
        };
        let Check::Fail(message) = committed_txns_durable(&cluster) else {
            panic!("expected a failure");
        };
        assert!(
            message.contains("zk1 applied up to 0x200000001"),
            "{message}"
        );
        assert!(
            message.contains("lacks committed 0x100000003 (in zk3's log"),
            "{message}"
        );
    }

    #[test]
    fn complete_logs_and_snapshot_coverage_pass() {
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node(
                    "zk1",
                    "follower",
                    W,
                    "0x100000001-0x100000003 0x200000001",
                    "0x0",
                ),
                // zk3 got a SNAP at 0x100000003: its log starts after it.
                node("zk3", "follower", W, "0x200000001", "0x100000003"),
                node(
                    "zk2",
                    "leader",
                    W,
                    "0x100000001-0x100000003 0x200000001",
                    "0x0",
                ),
            ],
        };
        assert_eq!(committed_txns_durable(&cluster), Check::Pass);
    }

    #[test]
    fn a_phantom_proposal_below_a_snapshot_is_no_evidence() {
        // zk3 logged 0xe00000004 alone while cut off, then got a SNAP at
        // 0xf00000001: the phantom stays in its log, under its snapshot.
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                node(
                    "zk1",
                    "follower",
                    0xf_0000_0001,
                    "0xe00000001-0xe00000003 0xf00000001",
                    "0x0",
                ),
                node(
                    "zk3",
                    "leader",
                    0xf_0000_0001,
                    "0xe00000001-0xe00000004 0xf00000001",
                    "0xf00000001",
                ),
            ],
        };
        assert_eq!(committed_txns_durable(&cluster), Check::Pass);
    }

    #[test]
    fn a_reported_lost_txn_fails_even_before_a_restart() {
        let mut zk1 = node("zk1", "follower", W, "0x100000001-0x100000002", "0x0");
        zk1.observation.pending = 3;
        zk1.observation
            .facts
            .insert("lost_zxids".into(), "0x100000003".into());
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![zk1],
        };
        let Check::Fail(message) = committed_txns_durable(&cluster) else {
            panic!("expected a failure");
        };
        assert!(message.contains("zk1 applied 0x100000003"), "{message}");
    }

    #[test]
    fn lost_txns_a_later_snapshot_covers_are_harmless() {
        // The dead sync thread never logged 0x100000003, but the server has since
        // snapshotted its tree at 0x200000001, which holds that txn's effect.
        let mut zk1 = node(
            "zk1",
            "follower",
            W,
            "0x100000001-0x100000002 0x200000001",
            "0x200000001",
        );
        zk1.observation
            .facts
            .insert("lost_zxids".into(), "0x100000003".into());
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![zk1.clone()],
        };
        assert_eq!(committed_txns_durable(&cluster), Check::Pass);
        // Only what lies above the snapshot is judged.
        zk1.observation
            .facts
            .insert("lost_zxids".into(), "0x100000003 0x200000002".into());
        zk1.observation.applied = Some(0x2_0000_0002);
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![zk1],
        };
        let Check::Fail(message) = committed_txns_durable(&cluster) else {
            panic!("expected a failure");
        };
        assert!(message.contains("zk1 applied 0x200000002 but"), "{message}");
    }

    #[test]
    fn an_unsynced_tail_is_not_a_hole_but_a_never_appended_txn_is() {
        // zk2's sync thread died on a failed fsync: 0x600000006 is appended, not
        // durable; the leader has it durable. Not a hole: the tail syncs or goes.
        let leader = node(
            "zk3",
            "leader",
            0x6_0000_0006,
            "0x600000001-0x600000006",
            "0x0",
        );
        let mut zk2 = node(
            "zk2",
            "follower",
            0x6_0000_0006,
            "0x600000001-0x600000005",
            "0x0",
        );
        zk2.observation
            .facts
            .insert("log_unsynced_zxids".into(), "0x600000006".into());
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![leader.clone(), zk2.clone()],
        };
        assert_eq!(committed_txns_durable(&cluster), Check::Pass);
        // Without the tail (never appended), the same zxid is a hole.
        zk2.observation.facts.remove("log_unsynced_zxids");
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![leader, zk2],
        };
        let Check::Fail(message) = committed_txns_durable(&cluster) else {
            panic!("expected a failure");
        };
        assert!(message.contains("lacks committed 0x600000006"), "{message}");
    }

    #[test]
    fn busy_servers_are_not_judged_against_the_leader() {
        let mut zk1 = node("zk1", "follower", W, "0x100000001", "0x0");
        // Applied ahead of its own fsync: normal while the sync thread works.
        zk1.observation.pending = 2;
        let cluster = ClusterView {
            violations: Vec::new(),
            link_faults: Vec::new(),
            now_ms: 0,
            nodes: vec![
                zk1,
                node(
                    "zk2",
                    "leader",
                    W,
                    "0x100000001-0x100000002 0x200000001",
                    "0x0",
                ),
            ],
        };
        assert_eq!(committed_txns_durable(&cluster), Check::Pass);
    }
}
