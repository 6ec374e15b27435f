//! Finding the cause: the first differing index or the last writes of a
//! key, the faults in effect then, and the fail points that fired and what
//! their nodes did next.

use super::index::Index;
use super::prose::{did_words, effect_words, faults_words, index_summary};
use super::{Basis, Cause, Did, EventRef, FaultEffect, ReplicaAt, EFFECTS_MAX, FAULTS_MAX};
use crate::base::action::{Acted, Action, FaultAction};
use crate::base::effect;
use crate::base::trail::{Data, Event, Kind, Trail};
use faultline_api::{IndexFormat, NodeEvent};
use std::collections::{BTreeMap, BTreeSet};

/// Faults in effect just before trail position `upto` (the spans of
/// [`crate::base::effect::intervals`]): network faults, down nodes, armed fail points
/// (with fires left), stalls not over yet; each by the event that began it.
pub fn in_effect(events: &[Event], upto: usize) -> Vec<EventRef> {
    let upto = upto.min(events.len());
    let now = events.get(upto).or(events.last()).map_or(0, |e| e.t_ms);
    let mut positions: Vec<usize> = effect::intervals(events)
        .iter()
        .filter(|s| s.in_effect_before(upto, now))
        .map(|s| s.began)
        .collect();
    positions.sort_unstable();
    positions.dedup();
    positions
        .into_iter()
        .take(FAULTS_MAX)
        .map(|i| EventRef::of(events, i))
        .collect()
}

/// Explain a divergence finding: `nodes` were compared at `applied` (`None`: a
/// model without a log, compared at quiescence) and first differ at `key`;
/// `odd` are the replicas whose value differs from the majority's (empty: no
/// majority), which a model without a log needs to pick the causing write.
pub fn explain_divergence(
    trail: &Trail,
    nodes: &[String],
    applied: Option<u64>,
    key: &str,
    odd: &[String],
    format: IndexFormat,
) -> Cause {
    let index = Index::of(&trail.events);
    match applied {
        Some(applied) => by_index(&index, nodes, applied, key, format),
        None => by_key(&index, nodes, key, odd),
    }
}

/// The replicas whose value differs from the one most replicas hold (a
/// divergence finding's `values`); none when no value is held by a majority.
pub(super) fn odd_values(values: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for v in values.values() {
        *counts.entry(v.to_string()).or_default() += 1;
    }
    let top = counts.values().copied().max().unwrap_or(0);
    if counts.values().filter(|&&c| c == top).count() != 1 {
        return Vec::new();
    }
    values
        .iter()
        .filter(|(_, v)| counts[&v.to_string()] < top)
        .map(|(n, _)| n.clone())
        .collect()
}

pub(super) fn by_index(
    index: &Index,
    nodes: &[String],
    applied: u64,
    key: &str,
    format: IndexFormat,
) -> Cause {
    let indices: BTreeSet<u64> = nodes
        .iter()
        .filter_map(|n| index.applies.get(n.as_str()))
        .flat_map(|a| a.keys().copied())
        .filter(|&i| i <= applied)
        .collect();
    // First choice: an index where the replicas that applied it differ; else one
    // some replicas applied and others have no apply event for (a snapshot
    // install or state transfer also looks like that, hence second).
    let mut partial = None;
    let mut found = None;
    for &at in &indices {
        let did: Vec<Did> = nodes.iter().map(|n| index.did(n, at)).collect();
        let present: BTreeSet<_> = did
            .iter()
            .filter(|d| !matches!(d, Did::Missing))
            .map(Did::signature)
            .collect();
        if present.len() > 1 {
            found = Some(at);
            break;
        }
        if partial.is_none() && present.len() == 1 && did.contains(&Did::Missing) {
            partial = Some(at);
        }
    }
    let Some(at) = found.or(partial) else {
        return Cause {
            basis: Basis::Index,
            index: None,
            index_shown: None,
            key: Some(key.to_string()),
            replicas: Vec::new(),
            odd: Vec::new(),
            event: None,
            faults: Vec::new(),
            effects: Vec::new(),
            summary: format!(
                "no apply event differs between {} up to index {}: the trail records no apply that explains `{key}`",
                nodes.join(", "),
                format.show(applied)
            ),
            confirmed: None,
        };
    };
    let replicas: Vec<ReplicaAt> = nodes.iter().map(|n| index.replica(n, at)).collect();
    let odd = odd_ones(&replicas);
    let event = replicas
        .iter()
        .filter(|r| odd.is_empty() || odd.contains(&r.node))
        .filter_map(|r| r.did.at().map(|a| a.event))
        .min()
        .or_else(|| {
            replicas
                .iter()
                .filter_map(|r| r.did.at())
                .map(|a| a.event)
                .min()
        });
    let faults = event
        .map(|e| in_effect(index.events, e))
        .unwrap_or_default();
    let summary = index_summary(index, &replicas, &odd, at, &faults, format);
    Cause {
        basis: Basis::Index,
        index: Some(at),
        index_shown: Some(format.show(at)),
        key: Some(key.to_string()),
        replicas,
        odd,
        event,
        faults,
        effects: Vec::new(),
        summary,
        confirmed: None,
    }
}

/// Replicas whose effect differs from the one most replicas share; none when no
/// effect is shared by more replicas than any other.
pub(super) fn odd_ones(replicas: &[ReplicaAt]) -> Vec<String> {
    let mut counts: BTreeMap<(u8, Option<u64>, &str), usize> = BTreeMap::new();
    for r in replicas {
        *counts.entry(r.did.signature()).or_default() += 1;
    }
    let top = counts.values().copied().max().unwrap_or(0);
    if counts.values().filter(|&&c| c == top).count() != 1 {
        return Vec::new();
    }
    replicas
        .iter()
        .filter(|r| counts[&r.did.signature()] < top)
        .map(|r| r.node.clone())
        .collect()
}

pub(super) fn by_key(index: &Index, nodes: &[String], key: &str, odd: &[String]) -> Cause {
    let replicas: Vec<ReplicaAt> = nodes
        .iter()
        .map(|n| {
            let last = (0..index.events.len()).rev().find(|&i| {
                let e = &index.events[i];
                e.node.as_deref() == Some(n.as_str())
                    && e.kind == Kind::Apply
                    && e.keys().iter().any(|k| k == key)
            });
            let did = match last {
                Some(i) => {
                    let Data::Node(NodeEvent::Apply {
                        term, what, result, ..
                    }) = &index.events[i].data
                    else {
                        unreachable!("the last write is an apply event");
                    };
                    Did::Applied {
                        term: *term,
                        what: what.clone(),
                        result: result.clone(),
                        at: EventRef::of(index.events, i),
                        earlier: false,
                    }
                }
                None => Did::Missing,
            };
            let hits = last.map(|p| index.hits_before(n, p)).unwrap_or_default();
            ReplicaAt {
                node: n.clone(),
                did,
                hits,
                storage: Vec::new(),
                after: Vec::new(),
                resumed_at: None,
            }
        })
        .collect();
    // The causing write: the latest write on a replica that differs from the
    // majority; with no majority (or no write there), the latest write of all.
    let last_write = |only_odd: bool| {
        replicas
            .iter()
            .filter(|r| !only_odd || odd.contains(&r.node))
            .filter_map(|r| r.did.at().map(|a| (a.event, r.node.clone())))
            .max()
    };
    let latest = last_write(true).or_else(|| last_write(false));
    let faults = latest
        .as_ref()
        .map(|(e, _)| in_effect(index.events, *e))
        .unwrap_or_default();
    let writes = replicas
        .iter()
        .map(|r| match r.did.at() {
            Some(at) => format!(
                "{} at {} ms: {}{}",
                r.node,
                at.t_ms,
                did_words(&r.did),
                if latest.as_ref().is_some_and(|(e, _)| *e == at.event) {
                    " (the cause)"
                } else {
                    ""
                }
            ),
            None => format!("{}: no event touched it", r.node),
        })
        .collect::<Vec<_>>()
        .join("; ");
    let summary = match &latest {
        Some(_) => format!("last writes of `{key}`: {writes}{}", faults_words(&faults)),
        None => format!("no apply event of {} lists `{key}`", nodes.join(", ")),
    };
    Cause {
        basis: Basis::Key,
        index: None,
        index_shown: None,
        key: Some(key.to_string()),
        odd: latest.iter().map(|(_, n)| n.clone()).collect(),
        event: latest.map(|(e, _)| e),
        replicas,
        faults,
        effects: Vec::new(),
        summary,
        confirmed: None,
    }
}

/// Fail points that fired, and what their node did next: for a run whose
/// replicas agree but an invariant fails. `None` when no fail point fired.
pub fn explain_faults(trail: &Trail, format: IndexFormat) -> Option<Cause> {
    let index = Index::of(&trail.events);
    let events = &trail.events;
    let mut seen = BTreeSet::new();
    let mut effects = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let (Some(node), Data::FailPointHit(hit)) = (e.node.as_deref(), &e.data) else {
            continue;
        };
        let Some(fault) = &hit.fired else { continue };
        if !seen.insert((node, hit.point.as_str())) || effects.len() == EFFECTS_MAX {
            continue;
        }
        let ended = match fault {
            FaultAction::StallUntilRelease | FaultAction::Stall(_) => {
                (i + 1..events.len()).find(|&j| {
                    matches!(&events[j].data, Data::Action(Acted {
                        action:
                            Action::ReleaseFailPoint { node: n, point }
                            | Action::ClearFailPoint { node: n, point },
                        ..
                    }) if n == node && *point == hit.point)
                })
            }
            FaultAction::Error(_) | FaultAction::Panic => None,
        };
        let from = ended.unwrap_or(i);
        let next_of = |want: Kind| {
            (from..events.len()).find(|&j| {
                events[j].node.as_deref() == Some(node)
                    && events[j].kind == want
                    && index_of(&events[j]).is_some()
            })
        };
        let next = next_of(Kind::Submit)
            .or_else(|| next_of(Kind::Apply))
            .or_else(|| next_of(Kind::Storage));
        let at = next.and_then(|j| index_of(&events[j]));
        let applied_by = at
            .map(|at| {
                index
                    .applies
                    .iter()
                    .filter(|(_, a)| a.get(&at).is_some_and(|p| p.iter().any(|&p| p >= from)))
                    .map(|(n, _)| n.to_string())
                    .collect()
            })
            .unwrap_or_default();
        effects.push(FaultEffect {
            hit: EventRef::of(events, i),
            ended: ended.map(|j| EventRef::of(events, j)),
            next: next.map(|j| EventRef::of(events, j)),
            index: at,
            applied_by,
        });
    }
    if effects.is_empty() {
        return None;
    }
    let summary = effects
        .iter()
        .map(|f| effect_words(f, events, format))
        .collect::<Vec<_>>()
        .join("; ");
    let event = effects
        .iter()
        .find_map(|f| f.next.as_ref().map(|n| n.event))
        .or(effects.first().map(|f| f.hit.event));
    Some(Cause {
        basis: Basis::Faults,
        index: effects.iter().find_map(|f| f.index),
        index_shown: effects.iter().find_map(|f| f.index).map(|i| format.show(i)),
        key: None,
        replicas: Vec::new(),
        odd: Vec::new(),
        event,
        faults: Vec::new(),
        effects,
        summary,
        confirmed: None,
    })
}

/// The log index an event is about: a submit's or apply's index, a flush's
/// durable-through index.
pub(super) fn index_of(e: &Event) -> Option<u64> {
    if let Data::Node(
        NodeEvent::Submit { index, .. }
        | NodeEvent::Apply { index, .. }
        | NodeEvent::Storage { index, .. },
    ) = &e.data
    {
        *index
    } else {
        None
    }
}
