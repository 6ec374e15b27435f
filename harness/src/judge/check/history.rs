//! Checks over the trail alone.

use super::Finding;
use crate::base::outcome::Outcome;
use crate::base::trail::Trail;
use faultline_api::{NodeEvent, Role};
use std::collections::BTreeMap;

pub const ELECTION_SAFETY: &str = "election_safety";

/// At most one leader per term: every leader event says `role: leader` with its
/// term (a Raft term, a Zab epoch), whatever its text.
pub fn election_safety(trail: &Trail) -> Vec<Finding> {
    let mut leaders: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for event in trail.iter() {
        let Some(NodeEvent::Leader {
            role: Role::Leader,
            term,
            ..
        }) = event.node_event()
        else {
            continue;
        };
        let node = event.node.clone().unwrap_or_default();
        let names = leaders.entry(*term).or_default();
        if !names.contains(&node) {
            names.push(node);
        }
    }
    leaders
        .into_iter()
        .filter(|(_, names)| names.len() > 1)
        .map(|(term, names)| {
            Finding::new(
                ELECTION_SAFETY,
                Some(Outcome::Violated),
                format!("two leaders in term {term}: {}", names.join(", ")),
            )
            .with_detail(serde_json::json!({ "term": term, "leaders": names }))
        })
        .collect()
}

/// How many leader announcements the checker judged (a run with leaders and
/// none counted tested nothing).
pub fn leader_announcements(trail: &Trail) -> usize {
    trail
        .iter()
        .filter(|e| {
            matches!(
                e.node_event(),
                Some(NodeEvent::Leader {
                    role: Role::Leader,
                    ..
                })
            )
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::trail::{Data, Event};

    fn leader_event(t_ms: u64, node: &str, role: Role, term: u64, text: &str) -> Event {
        let event = NodeEvent::Leader {
            role,
            term,
            leader: (role == Role::Leader).then(|| node.to_string()),
            text: text.into(),
        };
        Event::new(t_ms, Some(node), None, Data::Node(event))
    }

    /// Raft-shaped (raftkv and the Ozone Manager's Ratis stand-in both use the
    /// Raft shell's events): `leader term N`.
    fn raft(t_ms: u64, node: &str, term: u64) -> Event {
        let event = NodeEvent::role(Role::Leader, term, Some(node.into()));
        Event::new(t_ms, Some(node), None, Data::Node(event))
    }

    #[test]
    fn one_leader_per_term_passes_even_when_re_announced() {
        let mut trail = Trail::default();
        trail.push(raft(1, "a", 1));
        let follower = NodeEvent::role(Role::Follower, 1, Some("a".into()));
        trail.push(Event::new(2, Some("b"), None, Data::Node(follower)));
        trail.push(raft(3, "a", 1));
        trail.push(raft(9, "b", 2));
        assert!(election_safety(&trail).is_empty());
        assert_eq!(leader_announcements(&trail), 3);
    }

    #[test]
    fn two_raft_leaders_in_one_term_is_a_violation() {
        let mut trail = Trail::default();
        trail.push(raft(1, "n1", 3));
        trail.push(raft(2, "n2", 3));
        let findings = election_safety(&trail);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].outcome, Some(Outcome::Violated));
        assert!(findings[0].message.contains("term 3: n1, n2"));
    }

    #[test]
    fn two_ozone_leaders_in_one_term_is_a_violation() {
        // The OM's leader events come from the Raft shell it runs on.
        let mut trail = Trail::default();
        trail.push(raft(10, "om1", 2));
        let om2 = NodeEvent::role(Role::Candidate, 2, None);
        trail.push(Event::new(11, Some("om2"), None, Data::Node(om2)));
        trail.push(raft(12, "om2", 2));
        let findings = election_safety(&trail);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("term 2: om1, om2"));
    }

    #[test]
    fn two_zookeeper_leaders_in_one_epoch_is_a_violation() {
        // Before the events were typed, this text ("1:" after `leader term`) made
        // the checker skip every ZooKeeper leader: it counted none and could not fail.
        let mut trail = Trail::default();
        trail.push(leader_event(
            5,
            "zk3",
            Role::Leader,
            1,
            "leader term 1: NEWLEADER acked by zk1, zk3, last zxid 0x0",
        ));
        trail.push(leader_event(
            6,
            "zk1",
            Role::Follower,
            1,
            "following zk3 in epoch 1: synced by DIFF at 0x0, last processed 0x0, then logging none",
        ));
        trail.push(leader_event(
            9,
            "zk2",
            Role::Leader,
            1,
            "leader term 1: NEWLEADER acked by zk2, zk1, last zxid 0x0",
        ));
        assert_eq!(leader_announcements(&trail), 2);
        let findings = election_safety(&trail);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("term 1: zk3, zk2"));
        assert_eq!(findings[0].detail["term"], 1);
    }
}
