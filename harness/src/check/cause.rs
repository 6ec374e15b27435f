//! Why a run failed, named by its cause, so an engineer reading a nightly failure
//! sees in a minute where it started.
//!
//! - Replicas with a log that disagree: the first log index whose effect differs
//!   between them (applied on some; failed, skipped, lost in a restart or never
//!   applied on others), what each replica did there, the storage events that made
//!   it durable, what the node did afterwards (exited, restarted, resumed past it),
//!   and the faults in effect when it happened.
//! - Replicas without a log (`applied: None`): each replica's last event that
//!   touched the differing key, the latest being the cause.
//! - Invariants that fail on replicas that agree (a deterministic bug every
//!   replica applies alike, a node that stays behind): the fail points that fired
//!   and what their node did next (the stale request it submitted and the index it
//!   went to, the entry it applied, the flush it made).
//!
//! Read from typed trail events only (apply results, storage entries, actions,
//! fail-point hits, exits), never from their text. The explanation is judgment
//! output: it goes into the findings' `detail.cause`, never into the trail, so
//! trail digests do not change.

use super::Finding;
use crate::action::{Acted, Action, FaultAction};
use crate::outcome::Outcome;
use crate::trail::{Data, Event, HealStep, Kind, Trail};
use faultline_api::{ApplyResult, IndexFormat, NodeEvent};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Faults listed as in effect, at most.
const FAULTS_MAX: usize = 12;
/// Fail points followed to their effect, at most.
const EFFECTS_MAX: usize = 8;
/// Storage events and later events listed per replica, at most.
const PER_REPLICA_MAX: usize = 4;
/// Characters of a system's error text kept in the summary.
const ERROR_CHARS_MAX: usize = 120;

/// One trail event, by position, as the explanation cites it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRef {
    /// Position in the trail (`#N` in the report).
    pub event: usize,
    pub t_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub kind: Kind,
    pub detail: String,
}

impl EventRef {
    fn of(events: &[Event], i: usize) -> EventRef {
        let e = &events[i];
        EventRef {
            event: i,
            t_ms: e.t_ms,
            node: e.node.clone(),
            kind: e.kind,
            detail: e.detail.clone(),
        }
    }
}

/// What one replica did at the explained index (or to the explained key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Did {
    /// Its last apply there: ok, failed or skipped. `earlier` when that apply was
    /// in an earlier incarnation whose effect the node kept (made durable, or a
    /// model that does not report durability).
    Applied {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        term: Option<u64>,
        what: String,
        result: ApplyResult,
        at: EventRef,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        earlier: bool,
    },
    /// Applied, never made durable (no storage event of the node lists the index),
    /// and not applied again after the node went down.
    Lost {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        term: Option<u64>,
        what: String,
        at: EventRef,
        down: EventRef,
    },
    /// No apply event of this node is at the index (or touched the key).
    Missing,
}

impl Did {
    /// What is compared between replicas: the kind of effect, the term and what.
    fn signature(&self) -> (u8, Option<u64>, &str) {
        match self {
            Did::Applied {
                term, what, result, ..
            } => {
                let class = match result {
                    ApplyResult::Ok => 0,
                    ApplyResult::Failed { .. } => 1,
                    ApplyResult::Skipped { .. } => 2,
                };
                (class, *term, what)
            }
            Did::Lost { term, what, .. } => (3, *term, what),
            Did::Missing => (4, None, ""),
        }
    }

    /// The apply event it was, if any.
    pub fn at(&self) -> Option<&EventRef> {
        match self {
            Did::Applied { at, .. } | Did::Lost { at, .. } => Some(at),
            Did::Missing => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaAt {
    pub node: String,
    pub did: Did,
    /// Fail points that fired on this node since its previous apply (what hit the
    /// entry while it was being applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hits: Vec<EventRef>,
    /// Storage events of this node that list the index among their entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<EventRef>,
    /// What the node did afterwards: exits, crashes, stops, restarts, starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<EventRef>,
    /// After going down, the first index it applied again (past the explained one
    /// means it never re-applied it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_at: Option<u64>,
}

/// A fail point that fired, and what its node did next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultEffect {
    pub hit: EventRef,
    /// The release or clear that ended a stall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<EventRef>,
    /// The node's next submit, apply or flush after the hit (after the stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<EventRef>,
    /// The log index the next event is about (a submit's, an apply's, a flush's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// Nodes that applied that index afterwards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_by: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The first log index whose effect differs between replicas.
    Index,
    /// The last writes of a differing key (a model without a log).
    Key,
    /// Fail points that fired and their effects (replicas that agree).
    Faults,
}

/// The explanation attached to a finding as `detail.cause`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    pub basis: Basis,
    /// The first differing index (basis `index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// The index as the model writes it (a zxid in hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_shown: Option<String>,
    /// The differing key (basis `key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaAt>,
    /// The replicas whose effect differs from the majority's (empty: no majority).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub odd: Vec<String>,
    /// The causing event: the odd replica's apply, the latest write of the key,
    /// the first fault effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<usize>,
    /// Faults in effect at the causing event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<EventRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<FaultEffect>,
    /// One sentence for people (the terminal's `cause:` line, the report's lead).
    pub summary: String,
    /// Whether a rerun without the faults it names made the finding go away
    /// (`runner::confirm_causes`); `None`: not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<bool>,
}

impl Cause {
    /// Trail positions the explanation cites (ringed in the report).
    pub fn events(&self) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        for r in &self.replicas {
            if let Some(at) = r.did.at() {
                out.insert(at.event);
            }
            if let Did::Lost { down, .. } = &r.did {
                out.insert(down.event);
            }
            out.extend(r.hits.iter().map(|e| e.event));
            out.extend(r.storage.iter().map(|e| e.event));
            out.extend(r.after.iter().map(|e| e.event));
        }
        for effect in &self.effects {
            out.insert(effect.hit.event);
            out.extend(effect.ended.iter().map(|e| e.event));
            out.extend(effect.next.iter().map(|e| e.event));
        }
        out.extend(self.event);
        out
    }
}

/// The trail indexed by node: applies by log index, storage entries, the
/// positions where the node went down.
struct Index<'t> {
    events: &'t [Event],
    /// node -> log index -> positions of its apply events there.
    applies: BTreeMap<&'t str, BTreeMap<u64, Vec<usize>>>,
    /// node -> log index -> positions of storage events listing it.
    storage: BTreeMap<&'t str, BTreeMap<u64, Vec<usize>>>,
    /// node -> positions where it went down (crash, restart, stop, exit).
    down: BTreeMap<&'t str, Vec<usize>>,
}

impl<'t> Index<'t> {
    fn of(events: &'t [Event]) -> Index<'t> {
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
            let down = match &e.data {
                Data::Exited { .. } => true,
                Data::Action(acted) => goes_down(acted),
                Data::OpEnd(_)
                | Data::NoNode { .. }
                | Data::InvalidOp { .. }
                | Data::FailPointHit(_)
                | Data::Stopped { .. }
                | Data::Sleep { .. }
                | Data::Await(_)
                | Data::Check(_)
                | Data::Heal(_)
                | Data::Limit { .. }
                | Data::Chaos(_)
                | Data::Workload(_)
                | Data::Node(_) => false,
            };
            if down {
                index.down.entry(node).or_default().push(i);
            }
        }
        index
    }

    /// The first position at or after `pos` where `node` went down.
    fn next_down(&self, node: &str, pos: usize) -> Option<usize> {
        self.down
            .get(node)
            .and_then(|d| d.iter().copied().find(|&p| p >= pos))
    }

    fn reports_durability(&self, node: &str) -> bool {
        self.storage.get(node).is_some_and(|s| !s.is_empty())
    }

    /// What `node` did at log index `at`.
    fn did(&self, node: &str, at: u64) -> Did {
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
    fn hits_before(&self, node: &str, pos: usize) -> Vec<EventRef> {
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

    fn replica(&self, node: &str, at: u64) -> ReplicaAt {
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
    fn afterwards(&self, node: &str, pos: usize) -> (Vec<EventRef>, Option<u64>) {
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

/// Does this action take its node down (its volatile state is lost)?
fn goes_down(acted: &Acted) -> bool {
    if !acted.result.took_effect() {
        return false;
    }
    match &acted.action {
        Action::Crash { .. } | Action::Restart { .. } | Action::Stop { .. } => true,
        Action::Client { .. }
        | Action::TransferLeader { .. }
        | Action::Partition { .. }
        | Action::PartitionOneWay { .. }
        | Action::Heal
        | Action::Hold { .. }
        | Action::Release { .. }
        | Action::Latency { .. }
        | Action::Start { .. }
        | Action::ArmFailPoint { .. }
        | Action::ClearFailPoint { .. }
        | Action::ReleaseFailPoint { .. } => false,
    }
}

/// A fault that can be in effect, by what undoes it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Active {
    Cut(usize),
    OneWay(String),
    Hold(String, String),
    Latency(String, String),
    Down(String),
    Armed(String, String),
    Stalled(String, String),
}

fn pair(between: &[String; 2]) -> (String, String) {
    let (a, b) = (between[0].clone(), between[1].clone());
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Faults in effect just before trail position `upto`: network faults, down
/// nodes, armed fail points (with fires left), stalls not yet released.
pub fn in_effect(events: &[Event], upto: usize) -> Vec<EventRef> {
    // fault -> (position that began it, fires left, stall end in ms)
    let mut active: BTreeMap<Active, (usize, Option<u32>, Option<u64>)> = BTreeMap::new();
    let upto = upto.min(events.len());
    for (i, e) in events[..upto].iter().enumerate() {
        let node = e.node.clone().unwrap_or_default();
        match &e.data {
            Data::Action(acted) => {
                if !acted.result.took_effect() {
                    continue;
                }
                match &acted.action {
                    Action::Client { .. } | Action::TransferLeader { .. } => {}
                    Action::Partition { .. } => {
                        active.insert(Active::Cut(i), (i, None, None));
                    }
                    Action::PartitionOneWay { from, .. } => {
                        active.insert(Active::OneWay(from.clone()), (i, None, None));
                    }
                    Action::Heal => {
                        active.retain(|k, _| !matches!(k, Active::Cut(_) | Active::OneWay(_)))
                    }
                    Action::Hold { between } => {
                        let (a, b) = pair(between);
                        active.insert(Active::Hold(a, b), (i, None, None));
                    }
                    Action::Release { between } => {
                        let (a, b) = pair(between);
                        active.remove(&Active::Hold(a, b));
                    }
                    Action::Latency { between, delay_ms } => {
                        let (a, b) = pair(between);
                        if delay_ms.is_some() {
                            active.insert(Active::Latency(a, b), (i, None, None));
                        } else {
                            active.remove(&Active::Latency(a, b));
                        }
                    }
                    Action::Crash { node } | Action::Stop { node } => {
                        active.insert(Active::Down(node.clone()), (i, None, None));
                    }
                    Action::Restart { node } | Action::Start { node } => {
                        active.remove(&Active::Down(node.clone()));
                    }
                    Action::ArmFailPoint {
                        node, point, count, ..
                    } => {
                        active.insert(
                            Active::Armed(node.clone(), point.clone()),
                            (i, *count, None),
                        );
                    }
                    Action::ClearFailPoint { node, point } => {
                        active.remove(&Active::Armed(node.clone(), point.clone()));
                        active.remove(&Active::Stalled(node.clone(), point.clone()));
                    }
                    Action::ReleaseFailPoint { node, point } => {
                        active.remove(&Active::Stalled(node.clone(), point.clone()));
                    }
                }
            }
            Data::FailPointHit(hit) => {
                let Some(fault) = &hit.fired else { continue };
                let armed = Active::Armed(node.clone(), hit.point.clone());
                if let Some((_, Some(left), _)) = active.get_mut(&armed) {
                    *left = left.saturating_sub(1);
                    if *left == 0 {
                        active.remove(&armed);
                    }
                }
                let until = match fault {
                    FaultAction::Stall(d) => Some(e.t_ms + d.as_millis() as u64),
                    FaultAction::StallUntilRelease => None,
                    FaultAction::Error(_) | FaultAction::Panic => continue,
                };
                active.insert(Active::Stalled(node, hit.point.clone()), (i, None, until));
            }
            Data::Exited { .. } => {
                active.insert(Active::Down(node), (i, None, None));
            }
            Data::Heal(HealStep::Began { .. }) => {
                active.retain(|k, _| matches!(k, Active::Down(_)))
            }
            Data::Heal(HealStep::Start) => {
                active.remove(&Active::Down(node));
            }
            Data::Heal(HealStep::Ended { .. })
            | Data::OpEnd(_)
            | Data::NoNode { .. }
            | Data::InvalidOp { .. }
            | Data::Stopped { .. }
            | Data::Sleep { .. }
            | Data::Await(_)
            | Data::Check(_)
            | Data::Limit { .. }
            | Data::Chaos(_)
            | Data::Workload(_)
            | Data::Node(_) => {}
        }
    }
    let now = events.get(upto).or(events.last()).map_or(0, |e| e.t_ms);
    let mut positions: Vec<usize> = active
        .values()
        .filter(|(_, _, until)| until.is_none_or(|u| u > now))
        .map(|(i, _, _)| *i)
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
fn odd_values(values: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
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

fn by_index(
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
fn odd_ones(replicas: &[ReplicaAt]) -> Vec<String> {
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

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let kept: String = text.chars().take(max).collect();
        format!("{kept}…")
    }
}

fn term_of(term: Option<u64>) -> String {
    term.map(|t| format!(" (t:{t})")).unwrap_or_default()
}

/// What a replica did, in words (`failed (t:1) SnapshotPurge ...: INTERNAL_ERROR`).
pub fn did_words(did: &Did) -> String {
    match did {
        Did::Applied {
            term, what, result, ..
        } => match result {
            ApplyResult::Ok => format!("applied{} {what}", term_of(*term)),
            ApplyResult::Failed { error } => format!(
                "failed{} {what}: {}",
                term_of(*term),
                clip(error, ERROR_CHARS_MAX)
            ),
            ApplyResult::Skipped { .. } => format!("skipped{} {what}", term_of(*term)),
        },
        Did::Lost {
            term,
            what,
            at,
            down,
        } => format!(
            "lost{} {what}: applied at {} ms, not made durable before going down at {} ms",
            term_of(*term),
            at.t_ms,
            down.t_ms
        ),
        Did::Missing => "have no apply event for it".into(),
    }
}

fn lifecycle_word(e: &EventRef) -> &'static str {
    match e.kind {
        Kind::Crash => "went down",
        Kind::Exit => "terminated",
        Kind::Restart => "restarted",
        Kind::Stop => "stopped",
        Kind::Start => "started",
        Kind::OpInvoke
        | Kind::OpOk
        | Kind::OpError
        | Kind::OpTimeout
        | Kind::Network
        | Kind::Transfer
        | Kind::FailPointArm
        | Kind::FailPointHit
        | Kind::FailPointClear
        | Kind::FailPointRelease
        | Kind::Sleep
        | Kind::Await
        | Kind::Check
        | Kind::Heal
        | Kind::Limit
        | Kind::Leader
        | Kind::Apply
        | Kind::Storage
        | Kind::Service
        | Kind::Submit
        | Kind::Probe
        | Kind::Note => "acted",
    }
}

/// What an odd replica did around the index: the fail point that hit it, the
/// storage that made it durable, going down, resuming past it.
fn odd_story(r: &ReplicaAt, events: &Index, at: u64, format: IndexFormat) -> Vec<String> {
    let mut parts = Vec::new();
    for hit in &r.hits {
        if let Data::FailPointHit(h) = &events.events[hit.event].data {
            let fired = h.fired.as_ref().map(|f| f.to_string()).unwrap_or_default();
            parts.push(format!(
                "fail point {} fired on {} at {} ms ({fired})",
                h.point, r.node, hit.t_ms
            ));
        }
    }
    for s in &r.storage {
        if let Data::Node(NodeEvent::Storage { what, .. }) = &events.events[s.event].data {
            parts.push(format!(
                "{} flushed {what} covering {} at {} ms",
                r.node,
                format.show(at),
                s.t_ms
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for e in &r.after {
        let word = lifecycle_word(e);
        if seen.insert((word, e.t_ms)) {
            parts.push(format!("{} {word} at {} ms", r.node, e.t_ms));
        }
    }
    if let Some(resumed) = r.resumed_at {
        if resumed > at {
            parts.push(format!(
                "{} resumed at index {} without applying {} again",
                r.node,
                format.show(resumed),
                format.show(at)
            ));
        }
    }
    parts
}

fn index_summary(
    index: &Index,
    replicas: &[ReplicaAt],
    odd: &[String],
    at: u64,
    faults: &[EventRef],
    format: IndexFormat,
) -> String {
    // Group replicas by what they did, in node order of first appearance.
    let mut groups: Vec<(Vec<&str>, &Did)> = Vec::new();
    for r in replicas {
        match groups
            .iter_mut()
            .find(|(_, d)| d.signature() == r.did.signature())
        {
            Some((names, _)) => names.push(&r.node),
            None => groups.push((vec![&r.node], &r.did)),
        }
    }
    let did = groups
        .iter()
        .map(|(names, d)| format!("{} {}", names.join(", "), did_words(d)))
        .collect::<Vec<_>>()
        .join("; ");
    let mut text = format!("first differing index {}: {did}", format.show(at));
    // The replicas that differ from the majority (all of them when there is none)
    // get their story: what hit them, what they flushed, going down, resuming.
    let mut hit = false;
    for r in replicas
        .iter()
        .filter(|r| odd.is_empty() || odd.contains(&r.node))
    {
        hit |= !r.hits.is_empty();
        let story = odd_story(r, index, at, format);
        if !story.is_empty() {
            text.push_str(&format!("; {}", story.join(", ")));
        }
    }
    if faults.is_empty() && hit {
        // The fail point that fired used up its count: it is named above.
        text.push_str("; no other fault in effect then");
    } else {
        text.push_str(&faults_words(faults));
    }
    text
}

fn faults_words(faults: &[EventRef]) -> String {
    if faults.is_empty() {
        "; no fault in effect then".into()
    } else {
        let listed = faults
            .iter()
            .map(|f| match &f.node {
                Some(n) => format!("{n}: {}", clip(&f.detail, 80)),
                None => clip(&f.detail, 80),
            })
            .collect::<Vec<_>>()
            .join("; ");
        format!("; in effect then: {listed}")
    }
}

fn by_key(index: &Index, nodes: &[String], key: &str, odd: &[String]) -> Cause {
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
fn index_of(e: &Event) -> Option<u64> {
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

/// A fault effect in words: the fail point, its end, what its node did next.
pub fn effect_words(f: &FaultEffect, events: &[Event], format: IndexFormat) -> String {
    let Data::FailPointHit(h) = &events[f.hit.event].data else {
        unreachable!("effects start at fail-point hits");
    };
    let node = f.hit.node.clone().unwrap_or_default();
    let point = h.point.clone();
    let fault = h.fired.as_ref().map(|a| a.to_string()).unwrap_or_default();
    let mut text = format!("{point} fired on {node} at {} ms ({fault})", f.hit.t_ms);
    if let Some(end) = &f.ended {
        text.push_str(&format!(", released at {} ms", end.t_ms));
    } else if matches!(&events[f.hit.event].data, Data::FailPointHit(h) if h.fired == Some(FaultAction::StallUntilRelease))
    {
        text.push_str(", never released");
    }
    let Some(next) = &f.next else {
        return text + &format!("; {node} did nothing on the log afterwards");
    };
    let at = f.index.map(|i| format.show(i)).unwrap_or_default();
    let what = if let Data::Node(NodeEvent::Submit { what, term, .. }) = &events[next.event].data {
        format!("submitted {what} at index {at}{}", term_of(*term))
    } else if let Data::Node(NodeEvent::Apply {
        what, term, result, ..
    }) = &events[next.event].data
    {
        let did = Did::Applied {
            term: *term,
            what: what.clone(),
            result: result.clone(),
            at: next.clone(),
            earlier: false,
        };
        format!("{} at index {at}", did_words(&did))
    } else if let Data::Node(NodeEvent::Storage { what, .. }) = &events[next.event].data {
        format!("flushed {what} through index {at}")
    } else {
        String::new()
    };
    text.push_str(&format!("; then {node} {what} at {} ms", next.t_ms));
    if !f.applied_by.is_empty() && events[next.event].kind == Kind::Submit {
        text.push_str(&format!(", applied by {}", f.applied_by.join(", ")));
    }
    text
}

/// Attach a cause to the findings that fail the run: every divergence finding
/// that names a key gets its explanation; when none does, every failed
/// invariant gets the fault effects. An explanation that panics is recorded as
/// such and never changes a verdict.
pub fn annotate(findings: &mut [Finding], trail: &Trail, format: IndexFormat) {
    let mut explained = false;
    for f in findings.iter_mut() {
        if f.checker != super::divergence::CHECKER || f.outcome != Some(Outcome::Diverged) {
            continue;
        }
        let Some(key) = f
            .detail
            .get("key")
            .and_then(|k| k.as_str())
            .map(str::to_string)
        else {
            continue;
        };
        let nodes: Vec<String> = f
            .detail
            .get("values")
            .and_then(|v| v.as_object())
            .map(|v| v.keys().cloned().collect())
            .unwrap_or_default();
        let applied = f.detail.get("applied").and_then(|a| a.as_u64());
        let odd = f
            .detail
            .get("values")
            .and_then(|v| v.as_object())
            .map(odd_values)
            .unwrap_or_default();
        let cause =
            crate::panic::catch(|| explain_divergence(trail, &nodes, applied, &key, &odd, format));
        attach(f, cause);
        explained = true;
    }
    if explained {
        return;
    }
    let failed = |f: &Finding| {
        f.checker.starts_with("invariant:")
            && matches!(f.outcome, Some(Outcome::Violated | Outcome::Stuck))
    };
    if !findings.iter().any(failed) {
        return;
    }
    let cause = crate::panic::catch(|| explain_faults(trail, format));
    for f in findings.iter_mut().filter(|f| failed(f)) {
        match &cause {
            Ok(Some(cause)) => attach(f, Ok(cause.clone())),
            Ok(None) => {}
            Err(message) => attach(f, Err(message.clone())),
        }
    }
}

fn attach(f: &mut Finding, cause: Result<Cause, String>) {
    let value = match cause {
        Ok(cause) => serde_json::to_value(cause).unwrap_or(serde_json::Value::Null),
        Err(message) => {
            serde_json::json!({ "error": format!("the explanation panicked: {message}") })
        }
    };
    if !f.detail.is_object() {
        f.detail = serde_json::json!({});
    }
    if let Some(map) = f.detail.as_object_mut() {
        map.insert("cause".into(), value);
    }
}

/// Replace the cause a finding carries.
pub fn set(f: &mut Finding, cause: &Cause) {
    attach(f, Ok(cause.clone()));
}

/// The cause a finding carries, if any (what the terminal and the report show).
pub fn of(f: &Finding) -> Option<Cause> {
    serde_json::from_value(f.detail.get("cause")?.clone()).ok()
}

#[cfg(test)]
mod tests;
