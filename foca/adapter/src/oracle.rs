//! The membership oracle. Ground truth the nodes of a run keep together
//! ([`Ground`], `NodeCtx::shared`): each node's current identity, when each
//! identity last ran, and the identities each node holds Down (for the probe
//! of a TurnUndead from a member that does not). Two invariants:
//!
//! - `down_not_alive` (safety, checked by every node each 100 ms): no node
//!   holds a member Alive whose identity stopped running (its node crashed,
//!   or renewed it) longer ago than the detection bound: foca's probe round
//!   (each active member once per round, in a shuffled order, so at most two
//!   rounds between two probes of one member; each period as late as chaos
//!   makes a timer), its suspicion period, and slack. Counted from when the
//!   identity last ran, or from when the observing node last renewed its own
//!   identity if that is later: a renewal resets foca's probe state and drops
//!   its pending suspect-to-down timers, so detection starts again.
//! - `members_merge` (liveness, judged on the published views): every up node
//!   sees every other up node's current identity Alive within `merge_within_ms`
//!   of first hearing from that node while it lacked it, of the last time a
//!   fault lost a datagram either of the two sent or received, or of the last
//!   time a network fault (a cut either way, held or slowed messages) was on
//!   their link, whichever is latest. The clock starts at contact, not at the
//!   heal: two nodes that cannot reach each other are not judged (the run
//!   waits, then says so), and two that talk and never merge (caio/foca#25)
//!   fail it. Hearing is not talking: a node whose `receive` loses every
//!   datagram still sends, so its peers hear it for as long as the fault
//!   lasts, but it cannot hear their answer that it is Down, so it cannot
//!   renew and be seen again until the fault ends (`foca-deaf-member.yaml`).
//!   The same holds when the network cuts one way what the node would hear
//!   (`foca-deaf-by-link.yaml`).

use crate::Params;
use crate::id::Id;
use faultline_api::{Check, ClusterView};
use std::collections::{BTreeMap, BTreeSet};

pub const DOWN_NOT_ALIVE: &str = "down_not_alive";
pub const MEMBERS_MERGE: &str = "members_merge";
pub const FACT_MERGE_WITHIN: &str = "merge_within_ms";
pub const FACT_RETRY: &str = "announce_ms";
pub const FACT_HEARD: &str = "heard_lacking.";
pub const FACT_LOST: &str = "lost_at";

#[derive(Default)]
pub struct Ground {
    current: BTreeMap<u8, Id>,
    ran_at: BTreeMap<Id, u64>,
    /// Per node, the identities it holds Down.
    down: BTreeMap<u8, BTreeSet<Id>>,
}

impl Ground {
    /// `id` is its node's identity and runs at `now`.
    pub fn hold(&mut self, id: Id, now: u64) {
        self.current.insert(id.node, id);
        self.ran_at.insert(id, now);
    }

    /// `node` holds exactly these identities Down.
    pub fn holds_down(&mut self, node: u8, down: &BTreeSet<Id>) {
        if self.down.get(&node) != Some(down) {
            self.down.insert(node, down.clone());
        }
    }

    /// Whether `node` holds `id` Down.
    pub fn has_down(&self, node: u8, id: Id) -> bool {
        self.down.get(&node).is_some_and(|down| down.contains(&id))
    }

    pub fn current(&self, node: u8) -> Option<Id> {
        self.current.get(&node).copied()
    }

    /// An identity of `active` that last ran more than `bound` ms ago, or
    /// before `since` and `since` is more than `bound` ms ago: with how long it
    /// has been gone, counted from the later of the two.
    ///
    /// `since` is when the observing node last renewed its own identity. A
    /// renewal resets foca's probe state and timer token (`Foca::reset`, 0.12.0
    /// and 2.0.0): every pending suspect-to-down timer is dropped and probing
    /// starts again, so the node's detection of a dead member starts again too.
    pub fn gone_longer_than(
        &self,
        active: &BTreeSet<Id>,
        now: u64,
        bound: u64,
        since: u64,
    ) -> Option<(Id, Gone)> {
        active.iter().find_map(|id| {
            let ran_at = *self.ran_at.get(id)?;
            let gone = Gone {
                ms: now.saturating_sub(ran_at.max(since)),
                ran_at,
            };
            (gone.ms > bound).then_some((*id, gone))
        })
    }
}

/// How long an identity a node sees Alive has been gone, for that node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone {
    /// Since the identity last ran, or since the node last renewed its own
    /// identity, whichever is later.
    pub ms: u64,
    /// When the identity last ran.
    pub ran_at: u64,
}

/// How long a dead identity may still be seen Alive.
pub fn down_bound_ms(p: &Params, nodes: usize) -> u64 {
    let members = u64::try_from(nodes).unwrap_or(u64::MAX);
    let period = p.probe_period_ms() + crate::points::TIMER_LATE_MAX_MS;
    (2 * members + 2) * period + p.probe_rtt_ms() + p.suspect_to_down_ms() + 5_000
}

/// `members_merge` over the views the up nodes published.
pub fn members_merge(cluster: &ClusterView) -> Check {
    let up: Vec<_> = cluster.nodes.iter().filter(|n| n.up).collect();
    let mut unjudged = None;
    for a in &up {
        let facts = &a.observation;
        let alive: BTreeSet<&str> = facts.fact("alive").unwrap_or("").split(',').collect();
        let bound = facts.fact_u64(FACT_MERGE_WITHIN).unwrap_or(u64::MAX);
        for b in up.iter().filter(|b| b.name != a.name) {
            let Some(id) = b.observation.fact("identity") else {
                continue;
            };
            if alive.contains(id) {
                continue;
            }
            let heard = facts.fact_u64(&format!("{FACT_HEARD}{}", b.name));
            let Some(heard) = heard else {
                let retry = facts.fact_u64(FACT_RETRY).unwrap_or(1_000);
                unjudged.get_or_insert(Check::Unjudged {
                    why: format!(
                        "{} does not see {id} Alive and has not heard from {} since",
                        a.name, b.name
                    ),
                    wait_ms: Some(retry + 1_000),
                });
                continue;
            };
            // Contact, or the last datagram of either that a fault lost, or
            // the last time a network fault was on their link.
            let lost = [facts, &b.observation]
                .into_iter()
                .filter_map(|o| o.fact_u64(FACT_LOST))
                .fold(heard, u64::max);
            let link = cluster.link_faulted_until(&a.name, &b.name).unwrap_or(0);
            let since = lost.max(link);
            let waited = cluster.now_ms.saturating_sub(since);
            if waited > bound {
                let from = if since == heard {
                    String::new()
                } else if since == lost {
                    format!(
                        ", counted from {since} ms, when a fault last lost a datagram of either"
                    )
                } else {
                    format!(
                        ", counted from {since} ms, when a network fault was last on their link"
                    )
                };
                return Check::Fail(format!(
                    "{} has heard from {} for {waited} ms (bound {bound} ms{from}) and still does not see {id} Alive (it sees [{}])",
                    a.name,
                    b.name,
                    facts.fact("alive").unwrap_or("")
                ));
            }
            unjudged.get_or_insert(Check::Unjudged {
                why: format!("{} had heard from {} for {waited} ms of the {bound} ms bound without seeing {id} Alive", a.name, b.name),
                wait_ms: Some(bound - waited + 1),
            });
        }
    }
    unjudged.unwrap_or(Check::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultline_api::{LinkFault, NodeView, Observation};

    fn id(node: u8, bump: u16) -> Id {
        Id {
            node,
            start: 0,
            bump,
        }
    }

    /// n2:0.0 last ran at 8.2 s (n2 renewed to n2:0.1); n5 still sees n2:0.0
    /// and n1:0.0 (running) Alive at 27.4 s. The bound is 19.1 s.
    fn seen_by_n5(renewed_at: u64) -> Option<(Id, Gone)> {
        let mut ground = Ground::default();
        ground.hold(id(2, 0), 8_220);
        ground.hold(id(2, 1), 27_400);
        ground.hold(id(1, 0), 27_400);
        let active = BTreeSet::from([id(1, 0), id(2, 0)]);
        ground.gone_longer_than(&active, 27_420, 19_131, renewed_at)
    }

    #[test]
    fn a_dead_identity_seen_alive_past_the_bound_is_found() {
        assert_eq!(
            seen_by_n5(0),
            Some((
                id(2, 0),
                Gone {
                    ms: 19_200,
                    ran_at: 8_220
                }
            ))
        );
    }

    #[test]
    fn a_node_holds_down_what_it_last_published_and_nothing_else() {
        let mut ground = Ground::default();
        assert!(!ground.has_down(1, id(2, 0)));
        ground.holds_down(1, &BTreeSet::from([id(2, 0)]));
        assert!(ground.has_down(1, id(2, 0)));
        // Another node's verdicts, and another identity of the same node, are
        // not this node's.
        assert!(!ground.has_down(3, id(2, 0)));
        assert!(!ground.has_down(1, id(2, 1)));
        // A node that sees it Alive again no longer holds it Down.
        ground.holds_down(1, &BTreeSet::new());
        assert!(!ground.has_down(1, id(2, 0)));
    }

    #[test]
    fn the_observer_s_own_renewal_restarts_its_detection() {
        // n5 renewed at 22.06 s (foca seed 940 on 0.12.0): 5.4 s of the bound.
        assert_eq!(seen_by_n5(22_060), None);
        // A renewal before the identity died changes nothing.
        assert_eq!(seen_by_n5(5_000).map(|(_, gone)| gone.ms), Some(19_200));
    }

    /// A node's published view: its identity, whom it sees Alive, and facts.
    fn node(name: &str, alive: &str, facts: &[(&str, u64)]) -> NodeView {
        let mut observation = Observation::default();
        observation
            .facts
            .insert("identity".into(), format!("{name}:0.0"));
        observation.facts.insert("alive".into(), alive.into());
        observation
            .facts
            .insert(FACT_MERGE_WITHIN.into(), "10000".into());
        for (key, value) in facts {
            observation.facts.insert((*key).into(), value.to_string());
        }
        NodeView {
            name: name.into(),
            role: "member".into(),
            up: true,
            observation,
        }
    }

    fn at(now_ms: u64, nodes: Vec<NodeView>) -> ClusterView {
        ClusterView {
            now_ms,
            nodes,
            violations: Vec::new(),
            link_faults: Vec::new(),
        }
    }

    /// n2 heard from n1 at 8 s while it held n1 Down, and at 23 s still does
    /// not see it.
    fn n2_lacks_n1(n1_lost_at: Option<u64>, now_ms: u64) -> ClusterView {
        let n1_facts: Vec<(&str, u64)> = n1_lost_at.map(|t| (FACT_LOST, t)).into_iter().collect();
        at(
            now_ms,
            vec![
                node("n1", "n2:0.0", &n1_facts),
                node("n2", "", &[("heard_lacking.n1", 8_000)]),
            ],
        )
    }

    /// The message of a failed check; any other result fails the test.
    fn failure(check: Check) -> String {
        match check {
            Check::Fail(message) => message,
            Check::Pass | Check::Unjudged { .. } => panic!("not a failure: {check:?}"),
        }
    }

    #[test]
    fn talking_without_merging_past_the_bound_fails() {
        let message = failure(members_merge(&n2_lacks_n1(None, 23_000)));
        assert!(
            message.starts_with("n2 has heard from n1 for 15000 ms (bound 10000 ms) and still does not see n1:0.0 Alive"),
            "{message}"
        );
    }

    #[test]
    fn a_peer_that_lost_datagrams_restarts_the_clock() {
        // n1 was deaf until 22 s (its receive lost every datagram): 1 s of the
        // bound has passed, not 15 s.
        let check = members_merge(&n2_lacks_n1(Some(22_000), 23_000));
        assert_eq!(
            check,
            Check::Unjudged {
                why: "n2 had heard from n1 for 1000 ms of the 10000 ms bound without seeing n1:0.0 Alive".into(),
                wait_ms: Some(9_001),
            }
        );
        // The bound still holds from then on.
        let message = failure(members_merge(&n2_lacks_n1(Some(22_000), 32_001)));
        assert!(
            message.contains("for 10001 ms (bound 10000 ms, counted from 22000 ms, when a fault last lost a datagram of either)"),
            "{message}"
        );
    }

    #[test]
    fn the_judging_node_s_own_losses_count_too_and_an_early_loss_does_not() {
        // n2's own send lost a datagram at 20 s: n1 may not have heard it.
        let mut cluster = n2_lacks_n1(None, 23_000);
        cluster.nodes[1]
            .observation
            .facts
            .insert(FACT_LOST.into(), "20000".into());
        assert!(matches!(members_merge(&cluster), Check::Unjudged { .. }));
        // A loss before the contact changes nothing.
        failure(members_merge(&n2_lacks_n1(Some(5_000), 23_000)));
    }

    fn link(a: &str, b: &str, until_ms: u64) -> LinkFault {
        LinkFault {
            a: a.into(),
            b: b.into(),
            until_ms,
        }
    }

    #[test]
    fn a_network_fault_on_the_pair_s_link_restarts_the_clock() {
        // n2 heard from n1, but the link was cut one way (n2 to n1) until
        // 20 s: n1 could not hear n2's answer.
        let mut cluster = n2_lacks_n1(None, 23_000);
        cluster.link_faults = vec![link("n2", "n1", 20_000)];
        assert_eq!(
            members_merge(&cluster),
            Check::Unjudged {
                why: "n2 had heard from n1 for 3000 ms of the 10000 ms bound without seeing n1:0.0 Alive".into(),
                wait_ms: Some(7_001),
            }
        );
        cluster.now_ms = 30_001;
        let message = failure(members_merge(&cluster));
        assert!(
            message.contains("for 10001 ms (bound 10000 ms, counted from 20000 ms, when a network fault was last on their link)"),
            "{message}"
        );
        // A fault on another link, or one that ended before the contact,
        // changes nothing.
        for faults in [
            vec![link("n1", "n3", 22_000)],
            vec![link("n1", "n2", 7_000)],
        ] {
            cluster.now_ms = 23_000;
            cluster.link_faults = faults;
            failure(members_merge(&cluster));
        }
    }
}
