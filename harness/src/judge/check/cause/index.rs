//! The trail indexed by node: what each replica applied at each log index,
//! what it made durable, and where its process ended.

use super::{Did, EventRef, ReplicaAt, PER_REPLICA_MAX};
use crate::base::effect;
use crate::base::trail::{Data, Event, Kind};
use faultline_api::NodeEvent;
use std::collections::BTreeMap;

/// The trail indexed by node: applies by log index, storage entries, the
/// positions where the node went down.
pub(crate) struct Index<'t> {
    pub(crate) events: &'t [Event],
    /// node -> log index -> positions of its apply events there.
    pub(crate) applies: BTreeMap<&'t str, BTreeMap<u64, Vec<usize>>>,
    /// node -> log index -> positions of storage events listing it.
    pub(crate) storage: BTreeMap<&'t str, BTreeMap<u64, Vec<usize>>>,
    /// node -> positions where its process ended (`effect::ends_process`: a
    /// crash, a restart, an exit, a clean stop's end).
    pub(crate) down: BTreeMap<&'t str, Vec<usize>>,
}

impl<'t> Index<'t> {
    pub(crate) fn of(events: &'t [Event]) -> Index<'t> {
        let mut index = Index {
            events,
            applies: BTreeMap::new(),
            storage: BTreeMap::new(),
            down: BTreeMap::new(),
        };
        for (i, e) in events.iter().enumerate() {
            let Some(node) = e.node.as_deref() else {
                continue;
            };
            if let Data::Node(NodeEvent::Apply {
                index: Some(at), ..
            }) = &e.data
            {
                index
                    .applies
                    .entry(node)
                    .or_default()
                    .entry(*at)
                    .or_default()
                    .push(i);
            }
            if let Data::Node(NodeEvent::Storage { entries, .. }) = &e.data {
                for entry in entries {
                    index
                        .storage
                        .entry(node)
                        .or_default()
                        .entry(*entry)
                        .or_default()
                        .push(i);
                }
            }
            let down = effect::ends_process(e).is_some();
            if down {
                index.down.entry(node).or_default().push(i);
            }
        }
        index
    }

    /// The first position at or after `pos` where `node` went down.
    pub(crate) fn next_down(&self, node: &str, pos: usize) -> Option<usize> {
        self.down
            .get(node)
            .and_then(|d| d.iter().copied().find(|&p| p >= pos))
    }

    pub(crate) fn reports_durability(&self, node: &str) -> bool {
        self.storage.get(node).is_some_and(|s| !s.is_empty())
    }

    /// What `node` did at log index `at`.
    pub(crate) fn did(&self, node: &str, at: u64) -> Did {
        let Some(&last) = self
            .applies
            .get(node)
            .and_then(|a| a.get(&at))
            .and_then(|p| p.last())
        else {
            return Did::Missing;
        };
        let Data::Node(NodeEvent::Apply {
            term, what, result, ..
        }) = &self.events[last].data
        else {
            unreachable!("applies index apply events only");
        };
        let Some(down) = self.next_down(node, last) else {
            return Did::Applied {
                term: *term,
                what: what.clone(),
                result: result.clone(),
                at: EventRef::of(self.events, last),
                earlier: false,
            };
        };
        let durable = self
            .storage
            .get(node)
            .and_then(|s| s.get(&at))
            .is_some_and(|p| p.iter().any(|&p| p < down));
        if durable || !self.reports_durability(node) || !result.is_ok() {
            // A failed or skipped apply left nothing to lose.
            Did::Applied {
                term: *term,
                what: what.clone(),
                result: result.clone(),
                at: EventRef::of(self.events, last),
                earlier: true,
            }
        } else {
            Did::Lost {
                term: *term,
                what: what.clone(),
                at: EventRef::of(self.events, last),
                down: EventRef::of(self.events, down),
            }
        }
    }

    /// Fail points that fired on `node` after its previous apply and up to `pos`.
    pub(crate) fn hits_before(&self, node: &str, pos: usize) -> Vec<EventRef> {
        let previous = self
            .applies
            .get(node)
            .into_iter()
            .flat_map(|a| a.values().flatten().copied())
            .filter(|&p| p < pos)
            .max();
        let from = previous.map_or(0, |p| p + 1);
        (from..pos)
            .filter(|&i| {
                let e = &self.events[i];
                e.node.as_deref() == Some(node)
                    && matches!(&e.data, Data::FailPointHit(hit) if hit.fired.is_some())
            })
            .take(PER_REPLICA_MAX)
            .map(|i| EventRef::of(self.events, i))
            .collect()
    }

    pub(crate) fn replica(&self, node: &str, at: u64) -> ReplicaAt {
        let did = self.did(node, at);
        let pos = did.at().map(|a| a.event);
        let storage = self
            .storage
            .get(node)
            .and_then(|s| s.get(&at))
            .into_iter()
            .flatten()
            .take(PER_REPLICA_MAX)
            .map(|&i| EventRef::of(self.events, i))
            .collect();
        let (after, resumed_at) = match pos {
            Some(pos) => self.afterwards(node, pos),
            None => (Vec::new(), None),
        };
        ReplicaAt {
            node: node.to_string(),
            hits: pos.map(|p| self.hits_before(node, p)).unwrap_or_default(),
            did,
            storage,
            after,
            resumed_at,
        }
    }

    /// The node's lifecycle events after `pos`, and the first index it applied
    /// after next going down.
    pub(crate) fn afterwards(&self, node: &str, pos: usize) -> (Vec<EventRef>, Option<u64>) {
        let after: Vec<EventRef> = (pos + 1..self.events.len())
            .filter(|&i| {
                let e = &self.events[i];
                e.node.as_deref() == Some(node)
                    && matches!(
                        e.kind,
                        Kind::Crash | Kind::Restart | Kind::Stop | Kind::Start | Kind::Exit
                    )
            })
            .take(PER_REPLICA_MAX)
            .map(|i| EventRef::of(self.events, i))
            .collect();
        let resumed_at = self.next_down(node, pos + 1).and_then(|down| {
            self.applies
                .get(node)?
                .iter()
                .filter(|(_, positions)| positions.iter().any(|&p| p > down))
                .map(|(&index, _)| index)
                .next()
        });
        (after, resumed_at)
    }
}
