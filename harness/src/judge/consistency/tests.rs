//! The checker on hand-written histories: each verdict, both ways for
//! indeterminate ops, the budget, and the witness.

use super::list_append::ListAppend;
use super::register::Register;
use super::{check, Budget, Report};
use crate::base::outcome::Outcome;
use crate::judge::check::Verdict;
use crate::judge::history::generate::{generate, Store, Workload};
use crate::judge::history::{CompletionKind, History};
use serde_json::{json, Value};

/// A history written by hand: one event per call, 1 ms apart.
struct Script {
    h: History,
    t: u64,
}

impl Script {
    fn new() -> Script {
        Script {
            h: History::new(),
            t: 0,
        }
    }
    fn tick(&mut self) -> u64 {
        self.t += 1_000_000;
        self.t
    }
    fn call(&mut self, process: u64, f: &str, key: &str, value: Option<Value>) -> usize {
        let mut args = json!({ "key": key });
        if let Some(v) = value {
            args["value"] = v;
        }
        let t = self.tick();
        self.h.invoke(process, f, args, None, t).unwrap()
    }
    fn end(&mut self, id: usize, kind: CompletionKind, value: Value, error: Option<&str>) {
        let t = self.tick();
        self.h
            .complete(id, kind, value, error.map(str::to_string), t)
            .unwrap();
    }
    fn ok(&mut self, id: usize) {
        self.end(id, CompletionKind::Ok, Value::Null, None);
    }
    fn ok_value(&mut self, id: usize, v: Value) {
        self.end(id, CompletionKind::Ok, v, None);
    }
    fn absent(&mut self, id: usize) {
        self.end(id, CompletionKind::Ok, Value::Null, Some("not found"));
    }
    fn info(&mut self, id: usize) {
        self.end(id, CompletionKind::Info, Value::Null, Some("timeout"));
    }
    fn fail(&mut self, id: usize) {
        self.end(id, CompletionKind::Fail, Value::Null, Some("not leader"));
    }
    fn register(&self) -> Report {
        check(Register::default(), &self.h, &Budget::default())
    }
    fn list(&self) -> Report {
        check(ListAppend::default(), &self.h, &Budget::default())
    }
}

#[test]
fn a_concurrent_read_may_see_the_old_or_the_new_value() {
    for seen in [json!("1"), json!("2")] {
        let mut s = Script::new();
        let w1 = s.call(0, "put", "a", Some(json!("1")));
        s.ok(w1);
        let w2 = s.call(0, "put", "a", Some(json!("2")));
        let r = s.call(1, "get", "a", None);
        s.ok_value(r, seen.clone());
        s.ok(w2);
        let report = s.register();
        assert_eq!(report.verdict, Verdict::Pass, "{seen}: {}", report.message);
        assert!(report.findings().is_empty());
    }
}

#[test]
fn a_read_after_a_write_completed_must_see_it() {
    let mut s = Script::new();
    let w1 = s.call(0, "put", "a", Some(json!("1")));
    s.ok(w1);
    let w2 = s.call(0, "put", "a", Some(json!("2")));
    s.ok(w2);
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!("1"));
    let report = s.register();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    let w = report.witness.as_ref().unwrap();
    assert_eq!(w.key, "a");
    assert!(w.minimal);
    // All three are needed: weakened, the first write could land after the
    // second, and the read would be fine.
    let recorded: Vec<(usize, bool)> = w.ops.iter().map(|o| (o.op, o.as_recorded)).collect();
    assert_eq!(recorded, vec![(0, true), (1, true), (2, true)], "{w:?}");
    assert_eq!(w.ops[2].process, 1);
    assert_eq!(w.ops[2].reads_as, "read -> \"1\"");
    assert_eq!(w.ops[2].invoke_ns, 5_000_000);
    let findings = report.findings();
    assert_eq!(findings[0].outcome, Some(Outcome::Violated));
    assert!(
        findings[0].message.contains("cannot be ordered"),
        "{}",
        findings[0].message
    );
}

#[test]
fn a_read_of_an_absent_key_and_delete_answers_are_checked() {
    let mut s = Script::new();
    let r = s.call(0, "get", "a", None);
    s.absent(r);
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.ok(w);
    let d = s.call(1, "delete", "a", None);
    s.ok(d);
    let d2 = s.call(1, "delete", "a", None);
    s.absent(d2);
    assert_eq!(s.register().verdict, Verdict::Pass);
    let r2 = s.call(0, "get", "a", None);
    s.ok_value(r2, json!(1));
    let report = s.register();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    // A delete that says "not found" right after a completed put is wrong too.
    let mut s = Script::new();
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.ok(w);
    let d = s.call(1, "delete", "a", None);
    s.absent(d);
    assert_eq!(s.register().verdict, Verdict::Fail);
}

#[test]
fn an_indeterminate_write_may_or_may_not_have_taken_effect() {
    // It took effect (late: after its timeout was reported).
    let mut s = Script::new();
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.info(w);
    let r = s.call(1, "get", "a", None);
    s.absent(r);
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!(1));
    assert_eq!(
        s.register().verdict,
        Verdict::Pass,
        "{}",
        s.register().message
    );
    // It never took effect.
    let mut s = Script::new();
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.info(w);
    let r = s.call(1, "get", "a", None);
    s.absent(r);
    assert_eq!(s.register().verdict, Verdict::Pass);
    // A write that never completed at all is indeterminate the same way.
    let mut s = Script::new();
    let _w = s.call(0, "put", "a", Some(json!(1)));
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!(1));
    assert_eq!(s.register().verdict, Verdict::Pass);
    // But once seen it cannot be unseen.
    let mut s = Script::new();
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.info(w);
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!(1));
    let r = s.call(1, "get", "a", None);
    s.absent(r);
    assert_eq!(s.register().verdict, Verdict::Fail);
    // And it cannot take effect before it was invoked.
    let mut s = Script::new();
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!(1));
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.info(w);
    assert_eq!(s.register().verdict, Verdict::Fail);
}

#[test]
fn a_failed_write_definitely_did_not_take_effect() {
    let mut s = Script::new();
    let w = s.call(0, "put", "a", Some(json!(1)));
    s.fail(w);
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!(1));
    let report = s.register();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    // The witness is the read alone: nothing that happened wrote 1.
    let w = report.witness.unwrap();
    assert_eq!(w.ops.len(), 1);
    assert_eq!(w.ops[0].op, 1);
}

#[test]
fn keys_are_checked_independently_and_the_bad_one_is_named() {
    let mut s = Script::new();
    for key in ["a", "b", "c"] {
        let w = s.call(0, "put", key, Some(json!(key)));
        s.ok(w);
    }
    let r = s.call(1, "get", "b", None);
    s.absent(r);
    let r = s.call(1, "get", "c", None);
    s.ok_value(r, json!("c"));
    let report = s.register();
    assert_eq!(report.verdict, Verdict::Fail);
    assert_eq!(report.groups_passed, 2);
    assert_eq!(report.groups.len(), 1);
    assert_eq!(report.groups[0].key, "b");
    assert_eq!(report.witness.as_ref().unwrap().key, "b");
}

#[test]
fn over_budget_is_unknown_never_a_pass() {
    let history = generate(&Workload::new(Store::Register, 200, 5, 3));
    let tight = Budget {
        steps: 50,
        shrink_steps: 0,
        ..Budget::default()
    };
    let report = check(Register::default(), &history, &tight);
    assert_eq!(report.verdict, Verdict::Unknown, "{}", report.message);
    assert!(
        report.message.contains("budget of 50 steps"),
        "{}",
        report.message
    );
    let findings = report.findings();
    assert_eq!(findings[0].outcome, Some(Outcome::Unknown));
    // The same history with room passes.
    assert_eq!(
        check(Register::default(), &history, &Budget::default()).verdict,
        Verdict::Pass
    );
}

#[test]
fn an_op_the_model_cannot_read_is_unknown() {
    let mut s = Script::new();
    let w = s.call(0, "increment", "a", None);
    s.ok(w);
    let report = s.register();
    assert_eq!(report.verdict, Verdict::Unknown);
    assert!(
        report.message.contains("no op `increment`"),
        "{}",
        report.message
    );
    let empty = check(Register::default(), &History::new(), &Budget::default());
    assert_eq!(
        empty.verdict,
        Verdict::Unknown,
        "nothing checked is not a pass"
    );
}

#[test]
fn generated_linearizable_histories_pass() {
    for (store, clients) in [
        (Store::Register, 5),
        (Store::Register, 20),
        (Store::PutGet, 5),
        (Store::PutGet, 100),
        (Store::ListAppend, 5),
        (Store::ListAppend, 20),
        (Store::TextAppend, 5),
        (Store::TextAppend, 100),
    ] {
        let history = generate(&Workload::new(store, 3_000, clients, 11));
        let report = match store {
            Store::Register | Store::PutGet | Store::TextAppend => {
                check(Register::default(), &history, &Budget::default())
            }
            Store::ListAppend => check(ListAppend::default(), &history, &Budget::default()),
        };
        assert_eq!(
            report.verdict,
            Verdict::Pass,
            "{store:?}/{clients}: {}",
            report.message
        );
        assert_eq!(report.groups_passed, 8);
    }
}

#[test]
fn a_stale_read_in_a_long_history_is_found_and_shrunk_to_a_few_ops() {
    let history = generate(&Workload::new(Store::Register, 3_000, 5, 5));
    // Turn one late read into a read of a value overwritten long ago.
    let mut ops = history.ops().to_vec();
    let target = ops
        .iter()
        .rposition(|o| o.f == "get" && o.ok().is_some_and(|c| c.error.is_none()))
        .unwrap();
    let key = ops[target].args["key"].clone();
    let old = ops
        .iter()
        .find(|o| o.f == "put" && o.args["key"] == key && o.ok().is_some())
        .unwrap()
        .args["value"]
        .clone();
    ops[target].completion.as_mut().unwrap().value = old;
    let history = History::from_ops(ops).unwrap();
    let report = check(Register::default(), &history, &Budget::default());
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    let w = report.witness.unwrap();
    assert!(w.minimal);
    let recorded: Vec<_> = w.ops.iter().filter(|o| o.as_recorded).collect();
    assert!(recorded.len() <= 3, "{recorded:?}");
    assert!(recorded.iter().any(|o| o.op == target));
}

#[test]
fn list_reads_must_agree_on_one_order() {
    let mut s = Script::new();
    let a1 = s.call(0, "append", "k", Some(json!(1)));
    let a2 = s.call(1, "append", "k", Some(json!(2)));
    s.ok(a1);
    s.ok(a2);
    let r = s.call(2, "get", "k", None);
    s.ok_value(r, json!([2, 1]));
    assert_eq!(s.list().verdict, Verdict::Pass);
    let r = s.call(3, "get", "k", None);
    s.ok_value(r, json!([1, 2]));
    let report = s.list();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    // A read missing an append that completed before it began.
    let mut s = Script::new();
    let a1 = s.call(0, "append", "k", Some(json!(1)));
    s.ok(a1);
    let r = s.call(1, "get", "k", None);
    s.ok_value(r, json!([]));
    assert_eq!(s.list().verdict, Verdict::Fail);
    // An indeterminate append seen by a read, then not by a later one.
    let mut s = Script::new();
    let a1 = s.call(0, "append", "k", Some(json!(1)));
    s.info(a1);
    let r = s.call(1, "get", "k", None);
    s.ok_value(r, json!([1]));
    assert_eq!(s.list().verdict, Verdict::Pass);
    let r = s.call(1, "get", "k", None);
    s.ok_value(r, json!([]));
    assert_eq!(s.list().verdict, Verdict::Fail);
}

#[test]
fn cas_and_text_append_follow_the_register() {
    let mut s = Script::new();
    let w = s.call(0, "put", "a", Some(json!("x")));
    s.ok(w);
    let c = s.call(0, "append", "a", Some(json!("y")));
    s.ok(c);
    let r = s.call(1, "get", "a", None);
    s.ok_value(r, json!("xy"));
    assert_eq!(s.register().verdict, Verdict::Pass);
    let mut s = Script::new();
    let w = s.call(0, "write", "a", Some(json!(1)));
    s.ok(w);
    let c = s.call(1, "cas", "a", Some(json!([1, 2])));
    s.ok(c);
    let c = s.call(1, "cas", "a", Some(json!([1, 3])));
    s.ok_value(c, json!(false));
    let r = s.call(2, "read", "a", None);
    s.ok_value(r, json!(2));
    assert_eq!(
        s.register().verdict,
        Verdict::Pass,
        "{}",
        s.register().message
    );
    let r = s.call(2, "read", "a", None);
    s.ok_value(r, json!(3));
    assert_eq!(s.register().verdict, Verdict::Fail);
}
