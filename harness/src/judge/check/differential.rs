//! The cause of a find, read off the differential run: the same seed and the
//! same schedule with one bug key fixed, and the first trail event where the two
//! trails depart. Up to there both runs did the same thing, event for event; the
//! first event they disagree on is where the buggy code first behaved otherwise
//! (a follower's shutdown that left its sync thread running, a flush that put an
//! index past a failed write), which no fault in effect at the time can say.
//!
//! Read from the typed trails alone. The runs are the caller's: this module
//! compares what they recorded.

use crate::base::trail::{Event, Trail};
use serde::{Deserialize, Serialize};

/// One side of a departure: the event a trail had there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub t_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub kind: crate::base::trail::Kind,
    pub detail: String,
}

impl Side {
    fn of(e: &Event) -> Side {
        Side {
            t_ms: e.t_ms,
            node: e.node.clone(),
            kind: e.kind,
            detail: e.detail.clone(),
        }
    }

    fn text(&self) -> String {
        let node = self
            .node
            .as_deref()
            .map(|n| format!("{n}: "))
            .unwrap_or_default();
        format!("{} ms {node}{}", self.t_ms, self.detail)
    }
}

/// Where a buggy run and its fixed twin first disagree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Departure {
    /// The bug key switched between the two runs (`fixed` in the twin).
    pub key: String,
    /// The trail position of the first difference (`#N` in the report).
    pub event: usize,
    /// The buggy run's event there (`None`: its trail ended first).
    pub buggy: Option<Side>,
    /// The fixed run's event there (`None`: its trail ended first).
    pub fixed: Option<Side>,
    /// Whether the fixed run met the expectation the buggy run missed: the
    /// departure is then the find's cause. Otherwise the fixed code fails too,
    /// and the find is not attributable to this key.
    pub fixed_passed: bool,
    /// One line for people.
    pub summary: String,
}

/// The first departure of `buggy` from `fixed`, for `key`; `None` when the
/// trails are equal (the key changed nothing this run did).
pub fn departure(key: &str, buggy: &Trail, fixed: &Trail, fixed_passed: bool) -> Option<Departure> {
    let (a, b) = (&buggy.events[..], &fixed.events[..]);
    let (event, x, y) = crate::base::trail::first_difference(a, b)?;
    let (buggy, fixed) = (x.map(Side::of), y.map(Side::of));
    let shown = |s: &Option<Side>| {
        s.as_ref()
            .map_or("(its trail had ended)".into(), Side::text)
    };
    let mut summary = format!(
        "with {key} buggy the run departs from the fixed run at event #{event}: buggy `{}`, fixed `{}`",
        shown(&buggy),
        shown(&fixed)
    );
    if !fixed_passed {
        summary.push_str(" (the fixed run fails too: not this key's find)");
    }
    Some(Departure {
        key: key.to_string(),
        event,
        buggy,
        fixed,
        fixed_passed,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::trail::sample::leader;
    use crate::base::trail::Trail;
    use faultline_api::NodeEvent;

    fn trail(events: Vec<crate::base::trail::Event>) -> Trail {
        Trail { events }
    }

    fn note(t: u64, node: &str, text: &str) -> crate::base::trail::Event {
        crate::base::trail::sample::node(
            t,
            node,
            NodeEvent::Note {
                text: text.to_string(),
            },
        )
    }

    #[test]
    fn the_first_event_the_trails_disagree_on_is_named_side_by_side() {
        let common = vec![leader(10, "n1", 1), note(20, "n2", "synced")];
        let mut buggy = common.clone();
        buggy.push(note(30, "n2", "shutdown: sync thread leaks"));
        buggy.push(note(40, "n2", "later"));
        let mut fixed = common;
        fixed.push(note(30, "n2", "shutdown: sync thread stopped"));
        let d = departure("ZOOKEEPER-4541", &trail(buggy.clone()), &trail(fixed), true)
            .expect("they depart");
        assert_eq!(d.event, 2);
        assert_eq!(
            d.buggy.as_ref().unwrap().detail,
            "shutdown: sync thread leaks"
        );
        assert_eq!(
            d.fixed.as_ref().unwrap().detail,
            "shutdown: sync thread stopped"
        );
        assert!(d.summary.contains("at event #2"), "{}", d.summary);
        // A trail that is a prefix of the other departs where it ends.
        let d = departure(
            "K",
            &trail(buggy.clone()),
            &trail(buggy[..2].to_vec()),
            false,
        )
        .expect("departs");
        assert_eq!((d.event, d.fixed.is_none()), (2, true));
        assert!(d.summary.contains("not this key's find"));
        let same = trail(buggy.clone());
        assert!(departure("K", &same, &trail(buggy), true).is_none());
    }
}
