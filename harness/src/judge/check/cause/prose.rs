//! The cause in words: what each replica did, the story of the odd ones,
//! the faults in effect, a fail point's effect.

use super::index::Index;
use super::{Did, EventRef, FaultEffect, ReplicaAt, ERROR_CHARS_MAX};
use crate::base::action::FaultAction;
use crate::base::trail::{Data, Event, Kind};
use faultline_api::{ApplyResult, IndexFormat, NodeEvent};
use std::collections::BTreeSet;

pub(super) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let kept: String = text.chars().take(max).collect();
        format!("{kept}…")
    }
}

pub(super) fn term_of(term: Option<u64>) -> String {
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

pub(super) fn lifecycle_word(e: &EventRef) -> &'static str {
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
pub(super) fn odd_story(
    r: &ReplicaAt,
    events: &Index,
    at: u64,
    format: IndexFormat,
) -> Vec<String> {
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

pub(super) fn index_summary(
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

pub(super) fn faults_words(faults: &[EventRef]) -> String {
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
