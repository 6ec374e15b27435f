//! The history of a run (docs/history.md): every client op as its client saw it,
//! recorded where the harness sends an op, hears its answer, or gives up on it.
//!
//! Each client of the run (the script, each client of a workload) is a lane. A
//! lane runs its ops as one process, one at a time; an op sent while the lane's
//! processes all still wait (a scripted `wait: false`) runs on a fresh process
//! of the same lane, so every process keeps Jepsen's one-op-at-a-time rule. An
//! answer is read by the op's declaration ([`faultline_api::Answers`]): `ok`,
//! `fail` (definitely not applied) or `info` (unknown); a timeout, a crash of the
//! node the op was sent to, and a late answer after the client gave up are
//! `info`.

use crate::judge::history::{ClientHistory, CompletionKind, Lane};
use faultline_api::{AnswerKind, ModelInfo, OpResult, ParsedOp};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The client the script's own `client` steps run as.
pub const SCRIPT: &str = "script";

pub struct Recorder {
    model: &'static ModelInfo,
    record: ClientHistory,
    /// Harness op id -> the history op it is, while it waits for an answer.
    waiting: BTreeMap<u64, usize>,
    /// Each client's processes, in the order they were opened.
    processes: BTreeMap<String, Vec<u64>>,
    /// Processes with an op outstanding.
    busy: BTreeSet<u64>,
    /// (process, node, start of the node) -> session.
    session_ids: BTreeMap<(u64, String, u32), u64>,
    /// The last time stamped: completions from hosts of one tick may come with
    /// clocks slightly out of order; the history's order is the order of recording.
    last_ns: u64,
}

impl Recorder {
    pub fn new(model: &'static ModelInfo) -> Recorder {
        Recorder {
            model,
            record: ClientHistory::default(),
            waiting: BTreeMap::new(),
            processes: BTreeMap::new(),
            busy: BTreeSet::new(),
            session_ids: BTreeMap::new(),
            last_ns: 0,
        }
    }

    pub fn finish(self) -> ClientHistory {
        self.record
    }

    fn stamp(&mut self, now: Duration) -> u64 {
        let ns = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
        self.last_ns = self.last_ns.max(ns);
        self.last_ns
    }

    fn broke(&mut self, message: String) {
        self.record.broken.get_or_insert(message);
    }

    /// The process `client` sends its next op as: its first process with no op
    /// outstanding, else a fresh one (so a lane has as many processes as it
    /// ever had ops outstanding at once).
    fn process(&mut self, client: &str) -> u64 {
        let own = self.processes.entry(client.to_string()).or_default();
        if let Some(&free) = own.iter().find(|p| !self.busy.contains(p)) {
            return free;
        }
        let process = self.record.lanes.len() as u64;
        own.push(process);
        self.record.lanes.push(Lane {
            process,
            client: client.to_string(),
        });
        process
    }

    fn start(
        &mut self,
        client: &str,
        node: Option<&str>,
        incarnation: u32,
        op: &ParsedOp,
        now: Duration,
    ) -> Option<usize> {
        let process = self.process(client);
        let (f, args) = split(&op.op);
        let time_ns = self.stamp(now);
        match self
            .record
            .history
            .invoke(process, &f, args, node.map(str::to_string), time_ns)
        {
            Ok(at) => {
                let key = (process, node.unwrap_or("").to_string(), incarnation);
                let next = self.session_ids.len() as u64;
                let session = *self.session_ids.entry(key).or_insert(next);
                self.record.sessions.push(session);
                self.busy.insert(process);
                Some(at)
            }
            Err(e) => {
                self.broke(format!("invoke of `{f}` not recorded: {e}"));
                None
            }
        }
    }

    fn end(&mut self, at: usize, kind: CompletionKind, result: &OpResult, now: Duration) {
        let time_ns = self.stamp(now);
        let value = result.value.clone().map_or(Value::Null, Value::String);
        let process = self.record.history.ops()[at].process;
        if let Err(e) = self
            .record
            .history
            .complete(at, kind, value, result.error.clone(), time_ns)
        {
            self.broke(format!("completion not recorded: {e}"));
        }
        self.busy.remove(&process);
    }

    /// `client` sent op `id` to `node` (its `incarnation`-th start).
    pub fn invoke(
        &mut self,
        client: &str,
        id: u64,
        node: &str,
        incarnation: u32,
        op: &ParsedOp,
        now: Duration,
    ) {
        if let Some(at) = self.start(client, Some(node), incarnation, op, now) {
            self.waiting.insert(id, at);
        }
    }

    /// `client` could not send `op` at all (its node was down, no leader): it
    /// definitely did not take effect.
    pub fn refused(
        &mut self,
        client: &str,
        node: Option<&str>,
        op: &ParsedOp,
        why: &str,
        now: Duration,
    ) {
        if let Some(at) = self.start(client, node, 0, op, now) {
            self.end(at, CompletionKind::Fail, &OpResult::error(why), now);
        }
    }

    /// The node answered op `id`. An answer after the client gave up changes
    /// nothing: the op stays `info`.
    pub fn answer(&mut self, id: u64, result: &OpResult, now: Duration) {
        let Some(at) = self.waiting.remove(&id) else {
            return;
        };
        let f = self.record.history.ops()[at].f.clone();
        let kind = match self.model.op(&f).map(|info| info.answers.classify(result)) {
            Some(AnswerKind::Ok) => CompletionKind::Ok,
            Some(AnswerKind::Refused) => CompletionKind::Fail,
            Some(AnswerKind::Unknown) | None => CompletionKind::Info,
        };
        self.end(at, kind, result, now);
    }

    /// The client stopped waiting for op `id` (a timeout, its node went down).
    pub fn give_up(&mut self, id: u64, why: &str, now: Duration) {
        let Some(at) = self.waiting.remove(&id) else {
            return;
        };
        self.end(at, CompletionKind::Info, &OpResult::error(why), now);
    }
}

/// A validated op's function and arguments: `{"op": "put", "key": "a"}` is
/// `put` with `{"key": "a"}`.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn split(op: &Value) -> (String, Value) {
    let mut args = op.clone();
    let f = match &mut args {
        Value::Object(map) => map
            .remove("op")
            .map(|f| crate::judge::history::text(&f))
            .unwrap_or_default(),
        _ => String::new(),
    };
    (f, args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(json: Value) -> ParsedOp {
        ParsedOp {
            op: json,
            summary: String::new(),
        }
    }

    fn recorder() -> Recorder {
        let model = nodes::registry::find("raftkv").expect("raftkv");
        Recorder::new(model.info())
    }

    #[test]
    fn answers_read_by_the_declaration_and_busy_clients_get_a_fresh_process() {
        let mut r = recorder();
        let ms = Duration::from_millis;
        let put = op(json!({"op": "put", "key": "a", "value": "1"}));
        let get = op(json!({"op": "get", "key": "a"}));
        r.invoke(SCRIPT, 1, "n1", 0, &put, ms(1));
        // wait: false, then another op from the script.
        r.invoke(SCRIPT, 2, "n1", 0, &get, ms(2));
        r.answer(2, &OpResult::error("not found"), ms(3));
        r.answer(1, &OpResult::error("not leader (leader: n2)"), ms(4));
        r.invoke(SCRIPT, 3, "n2", 0, &put, ms(5));
        r.give_up(3, "no answer within 2s", ms(9));
        r.answer(3, &OpResult::ok(), ms(10));
        r.refused("workload client 0", None, &get, "no leader", ms(11));
        let done = r.finish();
        let ops = done.history.ops();
        assert_eq!(ops.len(), 4);
        assert_eq!((ops[0].process, ops[1].process, ops[2].process), (0, 1, 0));
        let kinds: Vec<_> = ops
            .iter()
            .map(|o| o.completion.as_ref().map(|c| c.kind))
            .collect();
        use CompletionKind::*;
        assert_eq!(kinds, [Some(Fail), Some(Ok), Some(Info), Some(Fail)]);
        assert_eq!(
            ops[1].completion.as_ref().unwrap().error.as_deref(),
            Some("not found")
        );
        assert_eq!(ops[0].f, "put");
        assert_eq!(ops[0].args, json!({"key": "a", "value": "1"}));
        assert_eq!(done.lanes.len(), 3);
        assert_eq!(done.lanes[2].client, "workload client 0");
        // Sessions: (process 0, n1), (process 1, n1), (process 0, n2), (process 2, -).
        assert_eq!(done.sessions, [0, 1, 2, 3]);
        assert!(done.broken.is_none());
    }
}
