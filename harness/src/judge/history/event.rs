//! The flat view of a history: one event per invoke and per completion, in index
//! order, as Jepsen writes histories. The JSON-lines and EDN exports are this view.

use super::op::CompletionKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    Invoke,
    Ok,
    Fail,
    Info,
}

impl EventType {
    pub fn name(self) -> &'static str {
        match self {
            EventType::Invoke => "invoke",
            EventType::Ok => "ok",
            EventType::Fail => "fail",
            EventType::Info => "info",
        }
    }

    pub fn completion(kind: CompletionKind) -> EventType {
        match kind {
            CompletionKind::Ok => EventType::Ok,
            CompletionKind::Fail => EventType::Fail,
            CompletionKind::Info => EventType::Info,
        }
    }
}

/// One line of the JSON-lines export. An invoke's `value` is the op's arguments;
/// a completion's is its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub index: u64,
    pub time_ns: u64,
    pub process: u64,
    #[serde(rename = "type")]
    pub kind: EventType,
    pub f: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}
