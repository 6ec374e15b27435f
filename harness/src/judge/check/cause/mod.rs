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

//!
//! The module's files: the types here with `annotate`; `index.rs` indexes the
//! trail by node; `reason.rs` finds the cause; `prose.rs` says it in words. The
//! faults in effect are `crate::base::effect`'s spans, which the diagram draws too.

mod index;
mod prose;
mod reason;

pub use prose::{did_words, effect_words};
use reason::odd_values;
pub use reason::{explain_divergence, explain_faults, in_effect};

use super::Finding;
use crate::base::outcome::Outcome;
use crate::base::trail::{Event, Kind, Trail};
use faultline_api::{ApplyResult, IndexFormat};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Faults listed as in effect, at most.
pub(crate) const FAULTS_MAX: usize = 12;
/// Fail points followed to their effect, at most.
pub(crate) const EFFECTS_MAX: usize = 8;
/// Storage events and later events listed per replica, at most.
pub(crate) const PER_REPLICA_MAX: usize = 4;
/// Characters of a system's error text kept in the summary.
pub(crate) const ERROR_CHARS_MAX: usize = 120;

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
    pub(crate) fn of(events: &[Event], i: usize) -> EventRef {
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
    pub(crate) fn signature(&self) -> (u8, Option<u64>, &str) {
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
        let cause = crate::base::panic::catch(|| {
            explain_divergence(trail, &nodes, applied, &key, &odd, format)
        });
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
    let cause = crate::base::panic::catch(|| explain_faults(trail, format));
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
