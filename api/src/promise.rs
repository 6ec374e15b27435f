//! What a client may rely on. Every op declares the consistency it promises and
//! how its error answers read, so the harness can record a history of what
//! clients saw and judge it (docs/history.md); every model names the sequential
//! model its ops are judged against.

use crate::env::OpResult;
use serde::Serialize;
use serde_json::Value;

/// The consistency an op promises the client that calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    /// Nothing the history checker judges (a trigger of a background service, a
    /// report, a read of derived totals). The op is still recorded.
    Unjudged,
    /// It takes effect at one instant between its call and its answer.
    Linearizable,
    /// A read served from the local state of the server it was sent to: it may
    /// be stale, but within one session it never goes back in time. A session is
    /// a client's connection to one server: one client, one server, one start of
    /// that server (ZooKeeper's guarantee, for a client that does not carry its
    /// session from server to server).
    SessionMonotonic,
}

impl Consistency {
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Unjudged => "unjudged",
            Consistency::Linearizable => "linearizable",
            Consistency::SessionMonotonic => "session-monotonic",
        }
    }
}

/// How an op's error answers read. Errors are matched by prefix; an error that
/// matches neither list is unknown: the op may or may not have taken effect, as
/// after a timeout. Unknown is the safe reading (it can only widen what the
/// checker accepts), so a model lists only what it is sure of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Answers {
    /// The op ran and this is its answer: the state said no (`not found`,
    /// `NodeExists`). The checker holds the op to it.
    pub definite: &'static [&'static str],
    /// The op did not take effect and never will: it was refused before anything
    /// was proposed or written (`not leader`, a refused write).
    pub refused: &'static [&'static str],
}

impl Answers {
    /// Ops whose every error is unknown.
    pub const NONE: Answers = Answers {
        definite: &[],
        refused: &[],
    };

    /// What `result` says about whether the op took effect.
    pub fn classify(&self, result: &OpResult) -> AnswerKind {
        if result.ok {
            return AnswerKind::Ok;
        }
        let error = result.error.as_deref().unwrap_or("");
        let matches = |prefixes: &[&str]| prefixes.iter().any(|p| error.starts_with(p));
        if matches(self.definite) {
            AnswerKind::Ok
        } else if matches(self.refused) {
            AnswerKind::Refused
        } else {
            AnswerKind::Unknown
        }
    }
}

/// An answer, read: Jepsen's `ok`, `fail` and `info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerKind {
    /// It took effect (or ran and found the state said no) and this is its answer.
    Ok,
    /// It definitely did not take effect.
    Refused,
    /// It may or may not take effect.
    Unknown,
}

/// The sequential model a model's judged ops are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryModel {
    /// Nothing is judged.
    None,
    /// The harness's register per `key`: `put`/`write` (`value`), `get`/`read`,
    /// `delete`, `append` (text appended to the value), `cas`.
    Register,
    /// The harness's ZooKeeper model: `create`, `set_data`, `delete`, `get`,
    /// `sync`, `open_session`, `close_session`, with ZooKeeper's answers.
    ZooKeeper,
    /// The model's own specification (`Model::sequential`).
    Own,
}

/// A model's own sequential specification: what its objects do when ops run
/// one at a time. The harness's checker searches for an order of the recorded
/// ops that this accepts; ops whose objects are disjoint never constrain each
/// other, so each group of objects is checked on its own.
pub trait Sequential {
    /// The objects `op` acts on (the validated op, with its `op` tag), sent to
    /// `node`: usually one, never none.
    fn objects(&self, op: &Value, node: &str) -> Vec<String>;

    /// The state of `object` before its first op, in a run with these (the
    /// variant's, validated) `params`: what the model starts with.
    fn initial(&self, object: &str, params: &Value) -> Value {
        let _ = (object, params);
        Value::Null
    }

    /// Run `op` on its objects, whose states are `states` (in the order of
    /// [`Sequential::objects`]). With an `answer`, their states after it if `op`
    /// could have answered exactly that there, else `None`; without (the
    /// answer is unknown), their states after it. Must be a pure function of
    /// its arguments.
    fn step(&self, states: &[Value], op: &Value, answer: Option<&OpResult>) -> Option<Vec<Value>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_by_prefix_and_unlisted_ones_are_unknown() {
        let answers = Answers {
            definite: &["not found"],
            refused: &["not leader"],
        };
        assert_eq!(answers.classify(&OpResult::ok()), AnswerKind::Ok);
        assert_eq!(
            answers.classify(&OpResult::error("not found")),
            AnswerKind::Ok
        );
        assert_eq!(
            answers.classify(&OpResult::error("not leader (leader: n2)")),
            AnswerKind::Refused
        );
        assert_eq!(
            answers.classify(&OpResult::error("indeterminate: entry replaced")),
            AnswerKind::Unknown
        );
        assert_eq!(
            Answers::NONE.classify(&OpResult::error("not found")),
            AnswerKind::Unknown
        );
    }
}
