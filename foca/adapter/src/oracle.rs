//! The membership oracle. Ground truth the nodes of a run keep together
//! ([`Ground`], `NodeCtx::shared`): each node's current identity and when each
//! identity last ran. Two invariants:
//!
//! - `down_not_alive` (safety, checked by every node each 100 ms): no node
//!   holds a member Alive whose identity stopped running (its node crashed,
//!   or renewed it) longer ago than the detection bound: foca's probe round
//!   (each active member once per round, in a shuffled order, so at most two
//!   rounds between two probes of one member; each period as late as chaos
//!   makes a timer), its suspicion period, and slack.
//! - `members_merge` (liveness, judged on the published views): every up node
//!   sees every other up node's current identity Alive within `merge_within_ms`
//!   of first hearing from that node while it lacked it. The clock starts at
//!   contact, not at the heal: two nodes that cannot reach each other are not
//!   judged (the run waits, then says so), and two that talk and never merge
//!   (caio/foca#25) fail it.

use crate::Params;
use crate::id::Id;
use faultline_api::{Check, ClusterView};
use std::collections::{BTreeMap, BTreeSet};

pub const DOWN_NOT_ALIVE: &str = "down_not_alive";
pub const MEMBERS_MERGE: &str = "members_merge";
pub const FACT_MERGE_WITHIN: &str = "merge_within_ms";
pub const FACT_RETRY: &str = "announce_ms";
pub const FACT_HEARD: &str = "heard_lacking.";

#[derive(Default)]
pub struct Ground {
    current: BTreeMap<u8, Id>,
    ran_at: BTreeMap<Id, u64>,
}

impl Ground {
    /// `id` is its node's identity and runs at `now`.
    pub fn hold(&mut self, id: Id, now: u64) {
        self.current.insert(id.node, id);
        self.ran_at.insert(id, now);
    }

    pub fn current(&self, node: u8) -> Option<Id> {
        self.current.get(&node).copied()
    }

    /// An identity of `active` that last ran more than `bound` ms ago.
    pub fn gone_longer_than(
        &self,
        active: &BTreeSet<Id>,
        now: u64,
        bound: u64,
    ) -> Option<(Id, u64)> {
        active.iter().find_map(|id| {
            let gone = now.saturating_sub(*self.ran_at.get(id)?);
            (gone > bound).then_some((*id, gone))
        })
    }
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
            let Some(since) = heard else {
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
            let waited = cluster.now_ms.saturating_sub(since);
            if waited > bound {
                return Check::Fail(format!(
                    "{} has heard from {} for {waited} ms (bound {bound} ms) and still does not see {id} Alive (it sees [{}])",
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
