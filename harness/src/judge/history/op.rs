//! One client operation: its invoke and, if it came back, its completion.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an event sits: its position in the history's one total order of events,
/// and its simulated time. Real-time precedence is decided by `index`, never by
/// `time_ns`: two events in the same simulated millisecond still have an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Stamp {
    pub index: u64,
    pub time_ns: u64,
}

/// How an operation ended, in Jepsen's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionKind {
    /// It took effect, and `value`/`error` is what it answered.
    Ok,
    /// It definitely did not take effect (refused before doing anything).
    Fail,
    /// Unknown: a timeout, or the node it was sent to crashed. It may or may not
    /// take effect, at any time after its invoke.
    Info,
}

impl CompletionKind {
    pub fn name(self) -> &'static str {
        match self {
            CompletionKind::Ok => "ok",
            CompletionKind::Fail => "fail",
            CompletionKind::Info => "info",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub kind: CompletionKind,
    pub at: Stamp,
    /// The result (for a read, the value read); `null` when there is none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub value: Value,
    /// The answer's error, as the system said it. On an `ok` completion it is a
    /// definite answer (`NodeExists`, `not found`); on `fail`/`info` it says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Op {
    /// The client process (one logical thread: at most one op outstanding).
    pub process: u64,
    /// The function: `put`, `get`, `append`, `create`, ...
    pub f: String,
    /// The arguments, as an object (`{"key": "a", "value": "1"}`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
    /// The node the op was sent to, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub invoke: Stamp,
    /// `None`: the op never completed (the run ended first); indeterminate, like `info`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<Completion>,
}

impl Op {
    /// An argument by name (`key`, `value`, `path`, ...).
    pub fn arg(&self, name: &str) -> Option<&Value> {
        self.args.get(name).filter(|v| !v.is_null())
    }

    /// An argument that must be a string, or a number written as one.
    pub fn arg_text(&self, name: &str) -> Option<String> {
        self.arg(name).map(text)
    }

    /// True when the op may or may not have taken effect: `info`, or no completion.
    pub fn is_indeterminate(&self) -> bool {
        matches!(
            self.completion.as_ref().map(|c| c.kind),
            None | Some(CompletionKind::Info)
        )
    }

    /// True when the op definitely did not take effect.
    pub fn is_failed(&self) -> bool {
        matches!(
            self.completion.as_ref().map(|c| c.kind),
            Some(CompletionKind::Fail)
        )
    }

    /// The ok completion, if the op took effect and answered.
    pub fn ok(&self) -> Option<&Completion> {
        self.completion
            .as_ref()
            .filter(|c| c.kind == CompletionKind::Ok)
    }
}

/// A value as text: strings as they are, anything else as compact JSON.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
