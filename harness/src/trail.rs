//! The one history of a run: every client operation, fault, fail-point hit, leader
//! change, crash and restart, in simulated time. Checkers read it; reports print it;
//! its digest proves that a seed replays byte for byte.

use nodes::api::EventKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
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
    Note,
}

impl Kind {
    pub fn from_node(kind: EventKind) -> Kind {
        match kind {
            EventKind::Leader => Kind::Leader,
            EventKind::Apply => Kind::Apply,
            EventKind::Storage => Kind::Storage,
            EventKind::Service => Kind::Service,
            EventKind::Submit => Kind::Submit,
            EventKind::Exit => Kind::Exit,
            EventKind::Note => Kind::Note,
        }
    }

    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// Faults the scenario injected (the shrinker's unit of work, the report's bands).
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Kind::Network
                | Kind::Crash
                | Kind::Restart
                | Kind::Stop
                | Kind::Start
                | Kind::Transfer
                | Kind::FailPointArm
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Simulated time, in milliseconds since the start of the run.
    pub t_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub kind: Kind,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// The scenario line of the step that caused it (harness events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The action as a scenario step with every target resolved (`{"crash": "n2"}`),
    /// so that a trail can be turned back into a scenario (`faultline shrink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Trail {
    pub events: Vec<Event>,
}

impl Trail {
    pub fn push(&mut self, event: Event) {
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
mod tests {
    use super::*;

    fn event(t_ms: u64, detail: &str) -> Event {
        Event {
            t_ms,
            node: None,
            kind: Kind::Note,
            detail: detail.into(),
            keys: vec![],
            line: None,
            step: None,
        }
    }

    #[test]
    fn digest_is_order_and_content_sensitive() {
        let mut a = Trail::default();
        a.push(event(1, "x"));
        a.push(event(2, "y"));
        let mut b = Trail::default();
        b.push(event(1, "x"));
        b.push(event(2, "y"));
        assert_eq!(a.digest(), b.digest());
        b.events[1].detail = "z".into();
        assert_ne!(a.digest(), b.digest());
        assert_eq!(first_difference(&a.events, &b.events).unwrap().0, 1);
    }

    #[test]
    fn finish_sorts_stably_by_time() {
        let mut t = Trail::default();
        t.push(event(5, "a"));
        t.push(event(3, "b"));
        t.push(event(5, "c"));
        t.finish();
        let details: Vec<_> = t.iter().map(|e| e.detail.as_str()).collect();
        assert_eq!(details, ["b", "a", "c"]);
    }
}
