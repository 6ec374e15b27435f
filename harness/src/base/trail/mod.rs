//! The one history of a run: every client operation, fault, fail-point hit, leader
//! change, crash and restart, in simulated time. Checkers read it; reports print it;
//! its digest proves that a seed replays byte for byte.
//!
//! Every event carries a typed payload ([`Data`]): what the harness did (an
//! [`Action`] and its result), what it observed (an op's answer, an await's end),
//! or what a node said ([`NodeEvent`]). Checkers and reports read the payload;
//! `detail` is the human line, derived from it, for people and for `contains:`.

use crate::base::action::{Acted, Action, ActionResult, Timed};
use faultline_api::NodeEvent;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod data;

pub use data::{
    AwaitEnd, Awaited, ChaosMark, Checked, Data, GiveUp, HealStep, Hit, OpEnd, OpEndKind,
    SwarmDraw, WorkloadMark,
};

/// Declares the trail kinds once: the enum and `Kind::ALL` (every kind, in
/// declaration order) come from one list, so `ALL` can never miss a kind.
macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Kind {
            $($(#[$doc])* $kind,)*
        }

        impl Kind {
            /// Every kind, in declaration order (what `kind:` accepts).
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),*];
        }
    };
}

kinds! {
    /// A client operation was sent to a node.
    OpInvoke,
    OpOk,
    OpError,
    /// No answer within the step's timeout (the op may still take effect).
    OpTimeout,
    /// A network fault applied or repaired: partition, heal, hold, release, latency.
    Network,
    Crash,
    Restart,
    Stop,
    Start,
    /// Leadership transfer requested.
    Transfer,
    FailPointArm,
    /// An armed fail point fired on a node.
    FailPointHit,
    FailPointClear,
    FailPointRelease,
    Sleep,
    Await,
    Check,
    /// The heal phase began or ended.
    Heal,
    /// A limit was hit.
    Limit,
    // Events recorded by nodes themselves.
    Leader,
    Apply,
    Storage,
    Service,
    Submit,
    Exit,
    /// A declared probe was reached.
    Probe,
    Note,
}

impl Kind {
    /// The kind of an action's event.
    pub fn of_action(acted: &Acted) -> Kind {
        let Acted { action, result, .. } = acted;
        match action {
            // A client op that never left the harness failed at once.
            Action::Client { .. }
                if matches!(result, ActionResult::NodeDown | ActionResult::NotAccepting) =>
            {
                Kind::OpError
            }
            Action::Client { .. } => Kind::OpInvoke,
            Action::TransferLeader { .. } => Kind::Transfer,
            Action::Partition { .. }
            | Action::PartitionOneWay { .. }
            | Action::Heal
            | Action::Hold { .. }
            | Action::Release { .. }
            | Action::Latency { .. } => Kind::Network,
            Action::Crash { .. } => Kind::Crash,
            Action::Restart { .. } => Kind::Restart,
            Action::Stop { .. } => Kind::Stop,
            Action::Start { .. } => Kind::Start,
            Action::ArmFailPoint { .. } => Kind::FailPointArm,
            Action::ClearFailPoint { .. } => Kind::FailPointClear,
            Action::ReleaseFailPoint { .. } => Kind::FailPointRelease,
        }
    }

    /// The kind of a node's event.
    pub fn of_node(event: &NodeEvent) -> Kind {
        match event {
            NodeEvent::Leader { .. } => Kind::Leader,
            NodeEvent::Apply { .. } => Kind::Apply,
            NodeEvent::Storage { .. } => Kind::Storage,
            NodeEvent::Service { .. } => Kind::Service,
            NodeEvent::Submit { .. } => Kind::Submit,
            NodeEvent::Exit { .. } => Kind::Exit,
            NodeEvent::Probe { .. } => Kind::Probe,
            NodeEvent::Note { .. } => Kind::Note,
        }
    }

    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// A client op's event: sent, answered, failed, timed out.
    pub fn is_op(self) -> bool {
        match self {
            Kind::OpInvoke | Kind::OpOk | Kind::OpError | Kind::OpTimeout => true,
            Kind::Network
            | Kind::Crash
            | Kind::Restart
            | Kind::Stop
            | Kind::Start
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
            | Kind::Exit
            | Kind::Probe
            | Kind::Note => false,
        }
    }

    /// Faults the scenario injected (the shrinker's unit of work, the report's bands).
    pub fn is_fault(self) -> bool {
        match self {
            Kind::Network
            | Kind::Crash
            | Kind::Restart
            | Kind::Stop
            | Kind::Start
            | Kind::Transfer
            | Kind::FailPointArm => true,
            Kind::OpInvoke
            | Kind::OpOk
            | Kind::OpError
            | Kind::OpTimeout
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
            | Kind::Exit
            | Kind::Probe
            | Kind::Note => false,
        }
    }
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Simulated time, in milliseconds since the start of the run.
    pub t_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Always `data.kind()` (events are built with [`Event::new`]).
    pub kind: Kind,
    /// The human line: `data`'s text.
    pub detail: String,
    /// The scenario line of the step that caused it (harness events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub data: Data,
}

impl Event {
    /// An event whose kind and detail follow from its payload. A node's event
    /// gives its text up to `detail` (the trail stores it once).
    pub fn new(t_ms: u64, node: Option<&str>, line: Option<u32>, mut data: Data) -> Event {
        let detail = match &mut data {
            Data::Node(event) => event.take_text(),
            other @ (Data::Action(_)
            | Data::OpEnd(_)
            | Data::NoNode { .. }
            | Data::InvalidOp { .. }
            | Data::FailPointHit(_)
            | Data::Exited { .. }
            | Data::Stopped { .. }
            | Data::Sleep { .. }
            | Data::Await(_)
            | Data::Check(_)
            | Data::Heal(_)
            | Data::Limit { .. }
            | Data::Chaos(_)
            | Data::Workload(_)) => other.to_string(),
        };
        Event {
            t_ms,
            node: node.map(str::to_string),
            kind: data.kind(),
            detail,
            line,
            data,
        }
    }

    /// The action this event records, if it took effect (what replays as a step).
    pub fn action(&self) -> Option<&Action> {
        let Data::Action(acted) = &self.data else {
            return None;
        };
        acted.result.took_effect().then_some(&acted.action)
    }

    /// The node event this is, if a node recorded it.
    pub fn node_event(&self) -> Option<&NodeEvent> {
        if let Data::Node(event) = &self.data {
            Some(event)
        } else {
            None
        }
    }

    /// Replicated-state keys the event touched.
    pub fn keys(&self) -> &[String] {
        self.node_event().map_or(&[], NodeEvent::keys)
    }

    /// A typed field of the payload by name (`term`, `role`, `index`, `point`,
    /// `result`, ...). The payload's variant tags are looked through (`{"leader":
    /// {"role": ...}}` has the fields `role`, `term`, `leader`); a name not among
    /// the fields is looked for inside them, depth first, in serialised order
    /// (`error` inside an apply's `result`). The generic way to match on fields.
    pub fn field(&self, name: &str) -> Option<serde_json::Value> {
        let value = serde_json::to_value(&self.data).ok()?;
        find_field(untag(&value), name).cloned()
    }
}

/// Strip the variant tags around a payload's fields: a one-key object whose
/// value is an object is a tag.
fn untag(mut value: &serde_json::Value) -> &serde_json::Value {
    while let Some(map) = value.as_object() {
        let Some(inner) = map
            .values()
            .next()
            .filter(|v| map.len() == 1 && v.is_object())
        else {
            break;
        };
        value = inner;
    }
    value
}

fn find_field<'v>(value: &'v serde_json::Value, name: &str) -> Option<&'v serde_json::Value> {
    let map = value.as_object()?;
    if let Some(found) = map.get(name) {
        return Some(found);
    }
    map.values().find_map(|v| find_field(v, name))
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Trail {
    pub events: Vec<Event>,
}

impl Trail {
    pub fn push(&mut self, event: Event) {
        assert_eq!(
            event.kind,
            event.data.kind(),
            "a trail event's kind follows from its payload"
        );
        self.events.push(event);
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Put events in simulated-time order. Hosts of one tick run one after another,
    /// each with its own clock inside the tick, so appends can be slightly out of
    /// order; the sort is stable, so equal times keep their (deterministic) order.
    pub fn finish(&mut self) {
        self.events.sort_by_key(|e| e.t_ms);
    }

    /// One canonical JSON line per event.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.events
            .iter()
            .map(|e| serde_json::to_string(e).expect("events serialize"))
    }

    /// sha256 over the canonical lines: equal digests mean byte-identical trails.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for line in self.lines() {
            hasher.update(line.as_bytes());
            hasher.update(b"\n");
        }
        hex(&hasher.finalize())
    }

    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.events.iter()
    }

    /// Every action that took effect, at its time, in trail order: what a
    /// replay performs.
    pub fn actions(&self) -> Vec<Timed> {
        self.events
            .iter()
            .filter_map(|e| {
                e.action().map(|action| Timed {
                    t_ms: e.t_ms,
                    action: action.clone(),
                    detail: e.detail.clone(),
                })
            })
            .collect()
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first index where two trails differ (for determinism failures).
pub fn first_difference<'a>(
    a: &'a [Event],
    b: &'a [Event],
) -> Option<(usize, Option<&'a Event>, Option<&'a Event>)> {
    let n = a.len().max(b.len());
    (0..n)
        .find(|&i| a.get(i) != b.get(i))
        .map(|i| (i, a.get(i), b.get(i)))
}

#[cfg(test)]
pub(crate) mod sample;

#[cfg(test)]
mod tests;
