//! The explanation on hand-written trails shaped like each model's real events:
//! an Ozone OM that fails an entry, flushes past it and exits; a ZooKeeper
//! follower that applies a txn it never logs and restarts; a Raft minority that
//! applies an entry the majority replaced; HDDS reports without a log; a stalled
//! service that submits a stale request.

use super::*;
use crate::base::action::{Action, ActionResult, FaultAction};
use crate::base::trail::sample::{act, done, hit, node, partition};
use crate::base::trail::Data;
use crate::base::trail::Event;
use crate::judge::check::divergence;
use faultline_api::NodeEvent;
use faultline_api::Role;
use std::time::Duration;

fn trail(events: Vec<Event>) -> Trail {
    let mut trail = Trail::default();
    for e in events {
        trail.push(e);
    }
    trail
}

fn apply(t_ms: u64, name: &str, term: u64, index: u64, what: &str, result: ApplyResult) -> Event {
    node(
        t_ms,
        name,
        NodeEvent::Apply {
            term: Some(term),
            index: Some(index),
            what: what.into(),
            result,
            keys: vec![],
            text: format!("apply (t:{term}, i:{index}) {what}"),
        },
    )
}

fn ok(t_ms: u64, name: &str, index: u64, what: &str) -> Event {
    apply(t_ms, name, 1, index, what, ApplyResult::Ok)
}

fn storage(t_ms: u64, name: &str, what: &str, entries: &[u64]) -> Event {
    node(
        t_ms,
        name,
        NodeEvent::Storage {
            what: what.into(),
            term: Some(1),
            index: entries.last().copied(),
            entries: entries.to_vec(),
            text: format!("{what} {entries:?}"),
        },
    )
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| n.to_string()).collect()
}

fn replica<'c>(cause: &'c Cause, name: &str) -> &'c ReplicaAt {
    cause.replicas.iter().find(|r| r.node == name).unwrap()
}

/// HDDS-17603's shape: om2's purge at index 3 fails on an injected read error,
/// the flush still covers index 3, om2 terminates, restarts and applies from 4.
fn ozone_failed_purge() -> Trail {
    let purge = "SnapshotPurge [/v/b/s1]";
    trail(vec![
        ok(10, "om1", 1, "CreateVolume /v"),
        ok(11, "om2", 1, "CreateVolume /v"),
        storage(11, "om2", "TRANSACTION_INFO", &[1]),
        ok(11, "om3", 1, "CreateVolume /v"),
        ok(20, "om1", 2, "CreateSnapshot /v/b/s1"),
        ok(21, "om2", 2, "CreateSnapshot /v/b/s1"),
        storage(21, "om2", "TRANSACTION_INFO", &[2]),
        ok(21, "om3", 2, "CreateSnapshot /v/b/s1"),
        done(
            25,
            Action::ArmFailPoint {
                node: "om2".into(),
                point: "snapshot_table.read".into(),
                fault: FaultAction::Error("codec".into()),
                count: Some(1),
                probability: None,
                optional: false,
            },
        ),
        ok(30, "om1", 3, purge),
        storage(30, "om1", "TRANSACTION_INFO", &[3]),
        hit(
            31,
            "om2",
            "snapshot_table.read",
            FaultAction::Error("codec".into()),
        ),
        apply(
            31,
            "om2",
            1,
            3,
            purge,
            ApplyResult::Failed {
                error: "INTERNAL_ERROR CodecException".into(),
            },
        ),
        storage(31, "om2", "TRANSACTION_INFO", &[3]),
        node(
            31,
            "om2",
            NodeEvent::Exit {
                reason: "ExitUtils.terminate".into(),
            },
        ),
        ok(31, "om3", 3, purge),
        Event::new(
            35,
            Some("om2"),
            None,
            Data::Exited {
                reason: "ExitUtils.terminate".into(),
            },
        ),
        done(35, Action::Start { node: "om2".into() }),
        ok(40, "om1", 4, "CreateSnapshot /v/b/s2"),
        ok(41, "om2", 4, "CreateSnapshot /v/b/s2"),
        ok(41, "om3", 4, "CreateSnapshot /v/b/s2"),
    ])
}

#[test]
fn an_ozone_entry_failed_flushed_and_never_reapplied_is_the_cause() {
    let trail = ozone_failed_purge();
    let cause = explain_divergence(
        &trail,
        &names(&["om1", "om2", "om3"]),
        Some(4),
        "chain./v/b",
        &[],
        IndexFormat::Decimal,
    );
    assert_eq!(cause.basis, Basis::Index);
    assert_eq!(cause.index, Some(3));
    assert_eq!(cause.odd, ["om2"]);
    let om2 = replica(&cause, "om2");
    let Did::Applied {
        result,
        earlier,
        at,
        ..
    } = &om2.did
    else {
        panic!("om2 applied and failed: {:?}", om2.did);
    };
    assert!(matches!(result, ApplyResult::Failed { error } if error.starts_with("INTERNAL_ERROR")));
    assert!(*earlier, "the failed apply was before om2's restart");
    assert_eq!(
        cause.event,
        Some(at.event),
        "the cause is om2's failed apply"
    );
    assert_eq!(om2.hits.len(), 1, "the read error that hit the entry");
    assert_eq!(om2.storage.len(), 1, "TRANSACTION_INFO covered index 3");
    assert_eq!(om2.resumed_at, Some(4));
    let kinds: Vec<Kind> = om2.after.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [Kind::Exit, Kind::Crash, Kind::Start]);
    assert!(matches!(
        replica(&cause, "om1").did,
        Did::Applied {
            result: ApplyResult::Ok,
            ..
        }
    ));
    for words in [
        "first differing index 3",
        "om1, om3 applied (t:1) SnapshotPurge",
        "om2 failed (t:1) SnapshotPurge [/v/b/s1]: INTERNAL_ERROR CodecException",
        "fail point snapshot_table.read fired on om2 at 31 ms (error codec)",
        "om2 flushed TRANSACTION_INFO covering 3 at 31 ms",
        "om2 terminated at 31 ms",
        "om2 resumed at index 4 without applying 3 again",
        // The arm fired its one time: named above, not in effect.
        "no other fault in effect then",
    ] {
        assert!(
            cause.summary.contains(words),
            "{words:?} in {}",
            cause.summary
        );
    }
    // Every cited event is in the trail; the storage and exit are among them.
    let cited = cause.events();
    assert!(cited.iter().all(|&i| i < trail.len()));
    assert!(cited.contains(&13) && cited.contains(&14));
}

#[test]
fn the_same_failure_on_every_replica_is_no_difference() {
    let failed = || ApplyResult::Failed {
        error: "KEY_NOT_FOUND".into(),
    };
    let trail = trail(vec![
        apply(10, "om1", 1, 1, "DeleteKey /v/b/k", failed()),
        apply(11, "om2", 1, 1, "DeleteKey /v/b/k", failed()),
    ]);
    let cause = explain_divergence(
        &trail,
        &names(&["om1", "om2"]),
        Some(1),
        "k",
        &[],
        IndexFormat::Decimal,
    );
    assert_eq!(cause.index, None);
    assert!(
        cause.summary.contains("no apply event differs"),
        "{}",
        cause.summary
    );
}

const Z1: u64 = 0x1_0000_0001;
const Z2: u64 = 0x1_0000_0002;
const Z3: u64 = 0x2_0000_0001;

/// ZOOKEEPER-4541's shape: zk1 applies 0x100000002 but its fsync never covers
/// it; it restarts from its log and follows on from 0x200000001.
#[test]
fn a_zookeeper_txn_applied_but_never_logged_is_lost_in_the_restart() {
    let trail = trail(vec![
        storage(5, "zk1", "txn log", &[Z1]),
        storage(5, "zk2", "txn log", &[Z1]),
        ok(6, "zk1", Z1, "create /k"),
        ok(6, "zk2", Z1, "create /k"),
        hit(
            7,
            "zk1",
            "sync.fsync",
            FaultAction::Stall(Duration::from_secs(3)),
        ),
        storage(8, "zk2", "txn log", &[Z2]),
        ok(9, "zk1", Z2, "delete /k"),
        ok(9, "zk2", Z2, "delete /k"),
        act(
            100,
            Action::Restart { node: "zk1".into() },
            ActionResult::Restarted {
                was_up: true,
                lost_held: 0,
            },
        ),
        apply(120, "zk1", 2, Z3, "create /w", ApplyResult::Ok),
        apply(120, "zk2", 2, Z3, "create /w", ApplyResult::Ok),
    ]);
    let cause = explain_divergence(
        &trail,
        &names(&["zk1", "zk2"]),
        Some(Z3),
        "/k",
        &[],
        IndexFormat::Hex,
    );
    assert_eq!(cause.index, Some(Z2));
    assert_eq!(cause.index_shown.as_deref(), Some("0x100000002"));
    let Did::Lost { at, down, .. } = &replica(&cause, "zk1").did else {
        panic!("zk1 lost it: {:?}", replica(&cause, "zk1").did);
    };
    assert_eq!((at.t_ms, down.t_ms, down.kind), (9, 100, Kind::Restart));
    assert!(matches!(replica(&cause, "zk2").did, Did::Applied { .. }));
    // The stall that kept the fsync back was in effect when zk1 applied it.
    assert_eq!(cause.faults.len(), 1, "{:?}", cause.faults);
    assert_eq!(cause.faults[0].kind, Kind::FailPointHit);
    for words in [
        "first differing index 0x100000002",
        "zk1 lost (t:1) delete /k: applied at 9 ms, not made durable before going down at 100 ms",
        "zk2 applied (t:1) delete /k",
        "in effect then: zk1: sync.fsync fired",
    ] {
        assert!(
            cause.summary.contains(words),
            "{words:?} in {}",
            cause.summary
        );
    }
}

#[test]
fn a_durable_txn_survives_the_restart() {
    let trail = trail(vec![
        storage(5, "zk1", "txn log", &[Z1]),
        ok(6, "zk1", Z1, "create /k"),
        ok(6, "zk2", Z1, "create /k"),
        act(
            100,
            Action::Restart { node: "zk1".into() },
            ActionResult::Restarted {
                was_up: true,
                lost_held: 0,
            },
        ),
    ]);
    let cause = explain_divergence(
        &trail,
        &names(&["zk1", "zk2"]),
        Some(Z1),
        "/k",
        &[],
        IndexFormat::Hex,
    );
    assert_eq!(cause.index, None, "{}", cause.summary);
}

/// The canary's shape: n3 applies index 5 in term 1 behind a partition; n1 and
/// n2 apply a term-2 entry there. Only state-machine entries have apply events,
/// so index 3 (n3's alone) is not taken over index 5.
#[test]
fn a_raft_entry_replaced_by_the_majority_is_the_cause_with_its_partition() {
    let trail = trail(vec![
        node(1, "n3", NodeEvent::role(Role::Leader, 1, Some("n3".into()))),
        ok(2, "n3", 3, "put k=start"),
        done(3, partition(&[&["n3"], &["n1", "n2"]])),
        apply(4, "n3", 1, 5, "put k=minority", ApplyResult::Ok),
        apply(50, "n1", 2, 5, "put k=majority", ApplyResult::Ok),
        done(51, Action::Heal),
        apply(52, "n2", 2, 5, "put k=majority", ApplyResult::Ok),
    ]);
    let cause = explain_divergence(
        &trail,
        &names(&["n1", "n2", "n3"]),
        Some(8),
        "k",
        &[],
        IndexFormat::Decimal,
    );
    assert_eq!(cause.index, Some(5));
    assert_eq!(cause.odd, ["n3"]);
    assert_eq!(cause.event, Some(3));
    assert_eq!(cause.faults.len(), 1);
    assert_eq!(cause.faults[0].kind, Kind::Network);
    assert!(
        cause
            .summary
            .contains("n1, n2 applied (t:2) put k=majority; n3 applied (t:1) put k=minority"),
        "{}",
        cause.summary
    );
    assert!(
        cause.summary.contains("in effect then: partition"),
        "{}",
        cause.summary
    );
}

#[test]
fn an_index_only_some_replicas_applied_is_the_fallback() {
    let trail = trail(vec![
        ok(2, "n3", 3, "put k=start"),
        ok(3, "n3", 4, "put j=1"),
    ]);
    let cause = explain_divergence(
        &trail,
        &names(&["n1", "n3"]),
        Some(4),
        "k",
        &[],
        IndexFormat::Decimal,
    );
    assert_eq!(cause.index, Some(3));
    assert_eq!(replica(&cause, "n1").did, Did::Missing);
    assert!(
        cause.summary.contains("n1 have no apply event for it"),
        "{}",
        cause.summary
    );
}

/// HDDS reports: no log; the latest write of the differing key is the cause.
#[test]
fn a_logless_divergence_names_each_replicas_last_write_of_the_key() {
    let write = |t_ms: u64, name: &str, what: &str, keys: &[&str]| {
        node(
            t_ms,
            name,
            NodeEvent::Apply {
                term: None,
                index: None,
                what: what.into(),
                result: ApplyResult::Ok,
                keys: keys.iter().map(|k| k.to_string()).collect(),
                text: what.into(),
            },
        )
    };
    let trail = trail(vec![
        write(100, "recon", "register of dn1", &["dn1/C1"]),
        write(200, "dn1", "import C1", &["dn1/C1"]),
        write(250, "dn1", "import C2", &["dn1/C2"]),
        write(300, "recon", "heartbeat from dn1", &["dn1/C1"]),
        write(400, "recon", "heartbeat from dn1", &[]),
    ]);
    let cause = explain_divergence(
        &trail,
        &names(&["dn1", "recon"]),
        None,
        "dn1/C1",
        &[],
        IndexFormat::Decimal,
    );
    assert_eq!(cause.basis, Basis::Key);
    assert_eq!(cause.event, Some(3), "recon's heartbeat at 300 ms");
    assert_eq!(cause.odd, ["recon"]);
    assert_eq!(replica(&cause, "dn1").did.at().unwrap().event, 1);
    assert!(
        cause
            .summary
            .contains("recon at 300 ms: applied heartbeat from dn1 (the cause)"),
        "{}",
        cause.summary
    );
    // The replica that differs from the majority is where the causing write is,
    // even when another replica wrote the key later (HDDS-17062 on SCM).
    let odd = odd_values(
        serde_json::json!({"dn1": "CLOSED", "recon": null, "scm": null})
            .as_object()
            .unwrap(),
    );
    assert_eq!(odd, ["dn1"]);
    let cause = explain_divergence(
        &trail,
        &names(&["dn1", "recon"]),
        None,
        "dn1/C1",
        &odd,
        IndexFormat::Decimal,
    );
    assert_eq!(
        cause.event,
        Some(1),
        "dn1's import, not recon's later heartbeat"
    );
    assert!(odd_values(serde_json::json!({"a": 1, "b": 2}).as_object().unwrap()).is_empty());
    let none = explain_divergence(
        &trail,
        &names(&["dn1"]),
        None,
        "dn1/C9",
        &[],
        IndexFormat::Decimal,
    );
    assert_eq!(none.event, None);
    assert!(none
        .summary
        .contains("no apply event of dn1 lists `dn1/C9`"));
}

/// HDDS-17670's shape: om1's directory-deleting run stalls before it submits;
/// released after leadership moved, it submits a stale purge at index 23.
fn stalled_service() -> Trail {
    trail(vec![
        hit(
            390,
            "om1",
            "dir_deleting.pre_submit",
            FaultAction::StallUntilRelease,
        ),
        node(
            650,
            "om2",
            NodeEvent::Submit {
                by: "DDS run 1 on om2".into(),
                what: "PurgeDirectories [/v/b/d1]".into(),
                term: Some(2),
                index: Some(19),
                text: "submits".into(),
            },
        ),
        act(
            750,
            Action::ReleaseFailPoint {
                node: "om1".into(),
                point: "dir_deleting.pre_submit".into(),
            },
            ActionResult::Woken { tasks: 1 },
        ),
        node(
            750,
            "om1",
            NodeEvent::Submit {
                by: "DDS run 1 on om1".into(),
                what: "PurgeDirectories [/v/b/d1]".into(),
                term: Some(3),
                index: Some(23),
                text: "submits".into(),
            },
        ),
        apply(
            770,
            "om1",
            3,
            23,
            "PurgeDirectories [/v/b/d1]",
            ApplyResult::Ok,
        ),
        apply(
            780,
            "om2",
            3,
            23,
            "PurgeDirectories [/v/b/d1]",
            ApplyResult::Ok,
        ),
    ])
}

#[test]
fn a_stalled_service_is_followed_to_the_stale_request_it_submitted() {
    let stalled = stalled_service();
    let cause = explain_faults(&stalled, IndexFormat::Decimal).expect("a fail point fired");
    assert_eq!(cause.basis, Basis::Faults);
    assert_eq!(cause.index, Some(23));
    assert_eq!(cause.event, Some(3), "om1's submit after the release");
    let effect = &cause.effects[0];
    assert_eq!(effect.ended.as_ref().map(|e| e.t_ms), Some(750));
    assert_eq!(effect.applied_by, ["om1", "om2"]);
    assert_eq!(
        cause.summary,
        "dir_deleting.pre_submit fired on om1 at 390 ms (stall until release), released at 750 ms; \
         then om1 submitted PurgeDirectories [/v/b/d1] at index 23 (t:3) at 750 ms, applied by om1, om2"
    );
    assert_eq!(explain_faults(&trail(vec![]), IndexFormat::Decimal), None);
}

#[test]
fn a_stall_never_released_says_so() {
    let trail = trail(vec![
        hit(
            280,
            "om1",
            "double_buffer.flush",
            FaultAction::StallUntilRelease,
        ),
        ok(300, "om2", 9, "CreateFile /v/b/k1"),
    ]);
    let cause = explain_faults(&trail, IndexFormat::Decimal).unwrap();
    assert!(
        cause.summary.contains("never released"),
        "{}",
        cause.summary
    );
    assert!(
        cause
            .summary
            .contains("om1 did nothing on the log afterwards"),
        "{}",
        cause.summary
    );
}

#[test]
fn faults_in_effect_follow_what_undid_them() {
    let arm = |node: &str, count| {
        done(
            0,
            Action::ArmFailPoint {
                node: node.into(),
                point: "p".into(),
                fault: FaultAction::Error("io".into()),
                count,
                probability: None,
                optional: false,
            },
        )
    };
    let events = vec![
        done(1, partition(&[&["a"], &["b"]])),
        done(2, Action::Heal),
        arm("a", Some(1)),
        hit(3, "a", "p", FaultAction::Error("io".into())),
        arm("b", None),
        hit(4, "b", "p", FaultAction::Error("io".into())),
        done(5, Action::Crash { node: "c".into() }),
        hit(6, "a", "q", FaultAction::Stall(Duration::from_millis(10))),
        done(12, Action::Start { node: "c".into() }),
        node(30, "a", NodeEvent::note("later")),
    ];
    let at =
        |upto: usize| -> Vec<usize> { in_effect(&events, upto).iter().map(|e| e.event).collect() };
    assert_eq!(at(1), [0], "the partition");
    assert!(at(2).is_empty(), "healed");
    assert_eq!(at(3), [2], "armed once");
    assert!(at(4).is_empty(), "it fired its one time");
    assert_eq!(
        at(6),
        [4],
        "armed without a count: still armed after firing"
    );
    assert_eq!(at(8), [4, 6, 7], "c down, the 10 ms stall running");
    assert_eq!(at(9), [4], "c started, the stall over by 30 ms");
}

#[test]
fn annotate_explains_divergence_first_and_invariants_without_one() {
    let purge = ozone_failed_purge();
    let diverged = Finding::new(
        divergence::CHECKER,
        Some(Outcome::Diverged),
        "replicas disagree",
    )
    .with_detail(serde_json::json!({
        "applied": 4, "key": "chain./v/b",
        "values": {"om1": "a", "om2": "b", "om3": "a"}, "differing_keys": 1,
    }));
    let invariant = Finding::new("invariant:snapshots_agree", Some(Outcome::Violated), "x");
    let unmet = Finding::new("expect", None, "y");
    let mut findings = vec![diverged, invariant.clone(), unmet];
    annotate(&mut findings, &purge, IndexFormat::Decimal);
    let cause = of(&findings[0]).expect("the divergence is explained");
    assert_eq!(cause.index, Some(3));
    assert_eq!(
        findings[0].detail["key"], "chain./v/b",
        "the detail keeps its fields"
    );
    assert!(
        of(&findings[1]).is_none(),
        "the divergence explains the run"
    );
    assert!(of(&findings[2]).is_none());

    // Replicas that agree: the failed invariant gets the fault effects.
    let mut findings = vec![invariant];
    annotate(&mut findings, &stalled_service(), IndexFormat::Decimal);
    let cause = of(&findings[0]).expect("the invariant is explained");
    assert_eq!(cause.basis, Basis::Faults);
    assert_eq!(cause.index, Some(23));

    // Nothing fired, nothing differs: no cause is made up.
    let mut findings = vec![Finding::new("invariant:x", Some(Outcome::Stuck), "z")];
    annotate(
        &mut findings,
        &trail(vec![ok(1, "a", 1, "x")]),
        IndexFormat::Decimal,
    );
    assert!(findings[0].detail.is_null());
}

#[test]
fn a_stopped_node_is_down_from_its_stop_s_end_as_the_runner_stops_it() {
    // The node runs until it has stopped (or is killed at the stop timeout):
    // between the request and `Stopped` it is not down.
    let stopped = |t_ms| {
        crate::base::trail::sample::harness(
            t_ms,
            Some("b"),
            Data::Stopped {
                clean: true,
                timeout_ms: 10_000,
            },
        )
    };
    let events = vec![
        done(10, Action::Stop { node: "b".into() }),
        node(12, "a", NodeEvent::note("b still running")),
        stopped(14),
        node(16, "a", NodeEvent::note("b down")),
        // A stop the node was not ready for: killed at once, down all the same.
        act(
            20,
            Action::Stop { node: "c".into() },
            ActionResult::NotAccepting,
        ),
        crate::base::trail::sample::harness(
            20,
            Some("c"),
            Data::Stopped {
                clean: false,
                timeout_ms: 10_000,
            },
        ),
        node(22, "a", NodeEvent::note("c down")),
    ];
    let at =
        |upto: usize| -> Vec<usize> { in_effect(&events, upto).iter().map(|e| e.event).collect() };
    assert!(
        at(1).is_empty(),
        "b was asked to stop, not stopped: {:?}",
        at(1)
    );
    assert_eq!(at(3), [2], "b is down from its Stopped");
    assert_eq!(at(6), [2, 5], "c, killed, is down too");
}
