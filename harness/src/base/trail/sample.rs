//! Typed events for hand-written trails in tests.

use super::*;
use crate::base::action::ActionResult;
use crate::base::action::FaultAction;
use faultline_api::{ApplyResult, OpResult, ParsedOp, Role};

pub fn node(t_ms: u64, node: &str, event: NodeEvent) -> Event {
    Event::new(t_ms, Some(node), None, Data::Node(event))
}

/// `leader term N`, as the Raft shell says it.
pub fn leader(t_ms: u64, name: &str, term: u64) -> Event {
    node(
        t_ms,
        name,
        NodeEvent::role(Role::Leader, term, Some(name.into())),
    )
}

pub fn role(t_ms: u64, name: &str, role: Role, term: u64) -> Event {
    node(t_ms, name, NodeEvent::role(role, term, None))
}

pub fn note(t_ms: u64, name: &str, text: &str) -> Event {
    node(t_ms, name, NodeEvent::note(text))
}

pub fn apply(t_ms: u64, name: &str, index: u64, keys: &[&str], text: &str) -> Event {
    let event = NodeEvent::Apply {
        term: Some(1),
        index: Some(index),
        what: text.into(),
        result: ApplyResult::Ok,
        keys: keys.iter().map(|k| k.to_string()).collect(),
        text: text.into(),
    };
    node(t_ms, name, event)
}

pub fn act(t_ms: u64, action: Action, result: ActionResult) -> Event {
    let node = action.node().map(str::to_string);
    Event::new(
        t_ms,
        node.as_deref(),
        None,
        Data::Action(Acted {
            action,
            result,
            fault: None,
        }),
    )
}

pub fn done(t_ms: u64, action: Action) -> Event {
    act(t_ms, action, ActionResult::Done)
}

pub fn parsed(summary: &str) -> ParsedOp {
    ParsedOp {
        op: serde_json::json!({ "op": "put" }),
        summary: summary.into(),
    }
}

/// A client op sent to `name` as op `op`.
pub fn invoke(t_ms: u64, name: &str, op: u64, summary: &str) -> Event {
    let action = Action::Client {
        node: name.into(),
        op: parsed(summary),
    };
    act(t_ms, action, ActionResult::Sent { op })
}

/// The answer to op `op`.
pub fn answer(t_ms: u64, name: &str, op: u64, summary: &str, result: OpResult) -> Event {
    let end = OpEnd {
        op,
        summary: summary.into(),
        admin: false,
        end: OpEndKind::Answered {
            result,
            late: false,
        },
    };
    Event::new(t_ms, Some(name), None, Data::OpEnd(end))
}

pub fn hit(t_ms: u64, name: &str, point: &str, fault: FaultAction) -> Event {
    let hit = Hit {
        point: point.into(),
        fired: Some(fault),
        probability: None,
    };
    Event::new(t_ms, Some(name), None, Data::FailPointHit(hit))
}

pub fn harness(t_ms: u64, node: Option<&str>, data: Data) -> Event {
    Event::new(t_ms, node, None, data)
}

pub fn heal_began(t_ms: u64) -> Event {
    let began = HealStep::Began {
        cuts: 0,
        holds: 0,
        latencies: 0,
        cleared: vec![],
        starting: vec![],
    };
    harness(t_ms, None, Data::Heal(began))
}

pub fn heal_ended(t_ms: u64) -> Event {
    harness(t_ms, None, Data::Heal(HealStep::Ended { settled: true }))
}

pub fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| n.to_string()).collect()
}

pub fn pair(a: &str, b: &str) -> [String; 2] {
    [a.to_string(), b.to_string()]
}

pub fn partition(groups: &[&[&str]]) -> Action {
    Action::Partition {
        groups: groups.iter().map(|g| names(g)).collect(),
    }
}
