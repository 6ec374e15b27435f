//! Checks over the trail alone.

use super::Finding;
use crate::outcome::Outcome;
use crate::trail::{Kind, Trail};
use std::collections::BTreeMap;

pub const ELECTION_SAFETY: &str = "election_safety";

/// At most one leader per term. Models record becoming leader as a `leader` event
/// whose detail starts `leader term N`.
pub fn election_safety(trail: &Trail) -> Vec<Finding> {
    let mut leaders: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for event in trail.iter().filter(|e| e.kind == Kind::Leader) {
        let Some(term) = event
            .detail
            .strip_prefix("leader term ")
            .and_then(|t| t.split_whitespace().next())
        else {
            continue;
        };
        let Ok(term) = term.parse::<u64>() else {
            continue;
        };
        let node = event.node.clone().unwrap_or_default();
        let names = leaders.entry(term).or_default();
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
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::Event;

    fn leader(t_ms: u64, node: &str, detail: &str) -> Event {
        Event {
            t_ms,
            node: Some(node.into()),
            kind: Kind::Leader,
            detail: detail.into(),
            keys: vec![],
            line: None,
            step: None,
        }
    }

    #[test]
    fn one_leader_per_term_passes_even_when_re_announced() {
        let mut trail = Trail::default();
        trail.push(leader(1, "a", "leader term 1"));
        trail.push(leader(2, "b", "follower term 1 leader a"));
        trail.push(leader(3, "a", "leader term 1"));
        trail.push(leader(9, "b", "leader term 2"));
        assert!(election_safety(&trail).is_empty());
    }

    #[test]
    fn two_leaders_in_one_term_is_a_violation() {
        let mut trail = Trail::default();
        trail.push(leader(1, "a", "leader term 3"));
        trail.push(leader(2, "b", "leader term 3"));
        let findings = election_safety(&trail);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].outcome, Some(Outcome::Violated));
        assert!(findings[0].message.contains("term 3: a, b"));
    }
}
