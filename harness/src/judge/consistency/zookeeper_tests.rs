//! The ZooKeeper model on hand-written histories: linearizable writes with their
//! errors, stale but monotonic reads per session, `sync` + read.

use super::zookeeper::ZooKeeper;
use super::{check, Budget, Report};
use crate::judge::check::Verdict;
use crate::judge::history::{CompletionKind, History};
use serde_json::{json, Value};

struct Zk {
    h: History,
    t: u64,
}

impl Zk {
    fn new() -> Zk {
        Zk {
            h: History::new(),
            t: 0,
        }
    }
    fn at(&mut self) -> u64 {
        self.t += 1_000_000;
        self.t
    }
    fn call(&mut self, process: u64, f: &str, args: Value) -> usize {
        let t = self.at();
        self.h.invoke(process, f, args, None, t).unwrap()
    }
    fn answer(&mut self, id: usize, value: Value, error: Option<&str>) {
        let t = self.at();
        self.h
            .complete(id, CompletionKind::Ok, value, error.map(str::to_string), t)
            .unwrap();
    }
    /// Invoke and complete at once.
    fn op(&mut self, process: u64, f: &str, args: Value, error: Option<&str>) {
        let id = self.call(process, f, args);
        self.answer(id, Value::Null, error);
    }
    fn get(&mut self, process: u64, path: &str, saw: Option<&str>) {
        let id = self.call(process, "get", json!({ "path": path }));
        match saw {
            Some(d) => self.answer(id, json!(d), None),
            None => self.answer(id, Value::Null, Some("NoNode")),
        }
    }
    fn check(&self) -> Report {
        check(ZooKeeper::default(), &self.h, &Budget::default())
    }
}

#[test]
fn writes_are_linearizable_with_their_errors() {
    let mut z = Zk::new();
    let a = z.call(0, "create", json!({"path": "/a", "data": "1"}));
    let b = z.call(1, "create", json!({"path": "/a", "data": "2"}));
    z.answer(a, json!("/a"), None);
    z.answer(b, Value::Null, Some("NodeExists"));
    z.op(
        2,
        "set_data",
        json!({"path": "/b", "data": "x"}),
        Some("NoNode"),
    );
    z.op(2, "create", json!({"path": "/a/c", "data": ""}), None);
    z.op(2, "delete", json!({"path": "/a"}), Some("NotEmpty"));
    z.op(
        2,
        "create",
        json!({"path": "/b/c", "data": ""}),
        Some("NoNode"),
    );
    assert_eq!(z.check().verdict, Verdict::Pass, "{}", z.check().message);
    // A second successful create of the same node is impossible.
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/a", "data": "1"}), None);
    z.op(1, "create", json!({"path": "/a", "data": "2"}), None);
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    assert!(report.message.contains("create /a"), "{}", report.message);
    // And NodeExists for a node no one created is impossible too.
    let mut z = Zk::new();
    z.op(
        0,
        "create",
        json!({"path": "/a", "data": "1"}),
        Some("NodeExists"),
    );
    assert_eq!(z.check().verdict, Verdict::Fail);
}

#[test]
fn a_read_may_be_stale_but_a_session_never_goes_back() {
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/a", "data": "1"}), None);
    z.op(0, "set_data", json!({"path": "/a", "data": "2"}), None);
    // A lagging server: p1 sees nothing, then the first value, then the second.
    z.get(1, "/a", None);
    z.get(1, "/a", Some("1"));
    z.get(1, "/a", Some("2"));
    // Another session may still be behind p1.
    z.get(2, "/a", Some("1"));
    assert_eq!(z.check().verdict, Verdict::Pass, "{}", z.check().message);
    // But p1 going back from 2 to 1 is not allowed.
    z.get(1, "/a", Some("1"));
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    let w = report.witness.unwrap();
    assert!(w.minimal);
    let recorded: Vec<(u64, &str)> = w
        .ops
        .iter()
        .filter(|o| o.as_recorded)
        .map(|o| (o.process, o.reads_as.as_str()))
        .collect();
    assert!(recorded.contains(&(1, "get /a -> \"2\"")), "{recorded:?}");
    assert!(recorded.contains(&(1, "get /a -> \"1\"")), "{recorded:?}");
}

#[test]
fn a_session_reads_its_own_writes_and_sync_makes_a_read_linearizable() {
    let mut z = Zk::new();
    z.op(1, "create", json!({"path": "/a", "data": "1"}), None);
    z.get(1, "/a", None);
    assert_eq!(z.check().verdict, Verdict::Fail, "{}", z.check().message);
    // Another client's write may be unseen without a sync...
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/a", "data": "1"}), None);
    z.get(1, "/a", None);
    assert_eq!(z.check().verdict, Verdict::Pass);
    // ...but not after one.
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/a", "data": "1"}), None);
    z.op(1, "sync", json!({"path": "/"}), None);
    z.get(1, "/a", None);
    assert_eq!(z.check().verdict, Verdict::Fail, "{}", z.check().message);
    // A read can never see a value no write produced.
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/a", "data": "1"}), None);
    z.get(1, "/a", Some("3"));
    assert_eq!(z.check().verdict, Verdict::Fail);
}

#[test]
fn sessions_own_ephemeral_nodes() {
    let mut z = Zk::new();
    z.op(0, "open_session", json!({"session": "s1"}), None);
    z.op(
        0,
        "create",
        json!({"path": "/e", "data": "", "ephemeral": "s1"}),
        None,
    );
    z.op(
        0,
        "create",
        json!({"path": "/e/c", "data": ""}),
        Some("NoChildrenForEphemerals"),
    );
    z.op(0, "close_session", json!({"session": "s1"}), None);
    z.op(1, "create", json!({"path": "/e", "data": "again"}), None);
    z.op(
        1,
        "create",
        json!({"path": "/f", "data": "", "ephemeral": "s1"}),
        Some("SessionExpired"),
    );
    assert_eq!(z.check().verdict, Verdict::Pass, "{}", z.check().message);
    // Had the close not deleted /e, the second create could not have succeeded.
    let mut z = Zk::new();
    z.op(0, "open_session", json!({"session": "s1"}), None);
    z.op(
        0,
        "create",
        json!({"path": "/e", "data": "", "ephemeral": "s1"}),
        None,
    );
    z.op(1, "create", json!({"path": "/e", "data": "again"}), None);
    z.op(0, "close_session", json!({"session": "s1"}), None);
    assert_eq!(z.check().verdict, Verdict::Fail);
}

#[test]
fn an_indeterminate_create_may_or_may_not_have_happened() {
    for later in [None, Some("NodeExists")] {
        let mut z = Zk::new();
        let a = z.call(0, "create", json!({"path": "/a", "data": "1"}));
        let t = z.at();
        z.h.complete(
            a,
            CompletionKind::Info,
            Value::Null,
            Some("connection loss".into()),
            t,
        )
        .unwrap();
        z.op(1, "create", json!({"path": "/a", "data": "2"}), later);
        assert_eq!(
            z.check().verdict,
            Verdict::Pass,
            "{later:?}: {}",
            z.check().message
        );
    }
}

#[test]
fn answers_the_model_does_not_know_are_unknown() {
    let mut z = Zk::new();
    z.op(
        0,
        "create",
        json!({"path": "/a", "data": "1"}),
        Some("throttled"),
    );
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Unknown);
    assert!(report.message.contains("throttled"), "{}", report.message);
}

#[test]
fn the_children_of_a_fixed_parent_are_checked_on_their_own() {
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/c", "data": "root"}), None);
    for (p, path) in [(1, "/c/a"), (2, "/c/b"), (3, "/c/d")] {
        z.op(p, "create", json!({"path": path, "data": "1"}), None);
        z.op(p, "set_data", json!({"path": path, "data": "2"}), None);
        z.get(p, path, Some("2"));
    }
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.message);
    // `/c` and each child on its own: four groups, not one.
    assert_eq!(report.groups_passed, 4);
    // Under a parent that exists throughout, a child's NoNode is impossible.
    z.op(
        4,
        "create",
        json!({"path": "/c/e", "data": "1"}),
        Some("NoNode"),
    );
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    assert!(report.message.contains("/c/e"), "{}", report.message);
}

#[test]
fn a_parent_that_may_go_or_come_late_ties_its_children_together() {
    // Deleted: its children's creates and its delete are judged together, so
    // a delete answered ok while a child exists is caught.
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/p", "data": ""}), None);
    z.op(1, "create", json!({"path": "/p/a", "data": ""}), None);
    z.op(2, "create", json!({"path": "/p/b", "data": ""}), None);
    z.op(0, "delete", json!({"path": "/p"}), None);
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.message);
    // Created while a child's create was in flight: that child may have come
    // first and answered NoNode.
    let mut z = Zk::new();
    let child = z.call(1, "create", json!({"path": "/q/a", "data": ""}));
    z.op(0, "create", json!({"path": "/q", "data": ""}), None);
    z.answer(child, Value::Null, Some("NoNode"));
    z.op(2, "create", json!({"path": "/q/b", "data": ""}), None);
    let report = z.check();
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.message);
    assert_eq!(report.groups_passed, 1, "/q is not fixed: one group");
}

#[test]
fn a_full_memo_is_unknown_never_a_pass() {
    // Concurrent writes to one znode: the search must remember many states.
    let mut z = Zk::new();
    z.op(0, "create", json!({"path": "/a", "data": "0"}), None);
    let calls: Vec<usize> = (1..=8)
        .map(|p| z.call(p, "set_data", json!({"path": "/a", "data": p.to_string()})))
        .collect();
    for id in calls {
        z.answer(id, Value::Null, None);
    }
    z.get(9, "/a", Some("8"));
    assert_eq!(z.check().verdict, Verdict::Pass, "{}", z.check().message);
    let tiny = Budget {
        memo_max_bytes: 1 << 10,
        ..Budget::default()
    };
    let report = check(ZooKeeper::default(), &z.h, &tiny);
    assert_eq!(report.verdict, Verdict::Unknown, "{}", report.message);
    assert!(
        report.message.contains("memo limit of 1 KiB"),
        "{}",
        report.message
    );
}
