use super::*;
use crate::testenv::TestEnv;

/// A log id as `term.index`, as a library would show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Id(u64, u64);

impl Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

fn at(term: u64, index: u64) -> (u64, Id) {
    (index, Id(term, index))
}

fn name(n: u64) -> String {
    format!("n{n}")
}

fn flushed(node: u64, entries: Vec<(u64, Id)>) -> RaftEvent<'static, Id> {
    RaftEvent::Flushed { node, entries }
}

fn committed(node: u64, entries: Vec<(u64, Id)>) -> RaftEvent<'static, Id> {
    RaftEvent::Committed { node, entries }
}

#[test]
fn a_commit_held_by_a_minority_is_a_violation_and_a_majority_is_not() {
    let voters = [BTreeSet::from([1, 2, 3, 4, 5])];
    let commit = |node| RaftEvent::LeaderCommitted {
        node,
        entry: at(1, 7),
        voters: &voters,
        earlier: None,
    };
    let mut oracle = RaftOracle::default();
    oracle.observe(flushed(3, vec![at(1, 7)]), &name);
    oracle.observe(flushed(4, vec![at(1, 7)]), &name);
    let found = oracle.observe(commit(1), &name).expect("two of five");
    assert_eq!(found.invariant, COMMITTED_ON_QUORUM);
    assert_eq!(
        found.message,
        "leader n1 committed 1.7 (index 7), held durably by [n3, n4] of voters [n1, n2, n3, n4, n5]: not a majority"
    );
    // Found once.
    assert_eq!(oracle.observe(commit(1), &name), None);
    let mut fine = RaftOracle::default();
    for n in [1, 3, 4] {
        fine.observe(flushed(n, vec![at(1, 7)]), &name);
    }
    assert_eq!(fine.observe(commit(1), &name), None);
    // A truncated entry is no longer held; one in a snapshot is.
    let cut = RaftEvent::Truncated {
        node: 4,
        after: Some(6),
    };
    fine.observe(cut, &name);
    assert!(fine.observe(commit(1), &name).is_some());
    let mut snap = RaftOracle::default();
    for n in [1, 3] {
        snap.observe(flushed(n, vec![at(1, 7)]), &name);
    }
    let snapshot = RaftEvent::Snapshot {
        node: 5,
        last: at(1, 9),
        membership: None,
    };
    snap.observe(snapshot, &name);
    assert_eq!(snap.observe(commit(1), &name), None);
    assert_eq!(snap.snapshot_of(5), Some(Id(1, 9)));
}

#[test]
fn two_nodes_committing_different_entries_at_one_index_disagree() {
    let mut oracle = RaftOracle::default();
    assert_eq!(oracle.observe(committed(1, vec![at(1, 5)]), &name), None);
    assert_eq!(oracle.observe(committed(2, vec![at(1, 5)]), &name), None);
    let found = oracle
        .observe(committed(3, vec![at(2, 5)]), &name)
        .expect("disagree");
    assert_eq!(found.invariant, COMMITTED_AGREE);
    assert_eq!(
        found.message,
        "index 5 committed as 1.5 on n1 and as 2.5 on n3"
    );
    assert!(oracle.violations().contains_key(COMMITTED_AGREE));
}

/// `node` became leader of `term` with `log`, entries up to `covered` in its
/// snapshot.
fn leader_of(
    node: u64,
    term: u64,
    log: &BTreeMap<u64, Id>,
    covered: Option<u64>,
) -> RaftEvent<'_, Id> {
    RaftEvent::Leader {
        node,
        term,
        log,
        covered,
    }
}

#[test]
fn a_leader_missing_a_committed_entry_breaks_completeness() {
    let mut oracle = RaftOracle::default();
    oracle.observe(committed(1, vec![at(1, 1), at(1, 2)]), &name);
    let mut log = BTreeMap::from([(1, Id(1, 1))]);
    let found = oracle
        .observe(leader_of(2, 2, &log, None), &name)
        .expect("incomplete");
    assert_eq!(found.invariant, LEADER_COMPLETENESS);
    assert_eq!(
        found.message,
        "n2 became leader without committed entry 1.2 (index 2, committed on n1); its log has nothing there"
    );
    log.insert(2, Id(1, 2));
    let mut again = RaftOracle::default();
    again.observe(committed(1, vec![at(1, 1), at(1, 2)]), &name);
    assert_eq!(again.observe(leader_of(2, 2, &log, None), &name), None);
    // Entries under the leader's snapshot are held there.
    let empty = BTreeMap::new();
    assert_eq!(again.observe(leader_of(3, 3, &empty, Some(2)), &name), None);
}

/// ozone-om, all fixed, with fault kinds at equal weight, seed 614: om2 asked
/// for votes in term 8; om3, just restarted, granted it, then voted for om1 in
/// term 10; om1 led term 10 and committed index 47; om3's term-8 vote came
/// late over a slow link and om2 led term 8 without that entry. Raft allows
/// it (a leader of term 8 is not bound by what term 10 committed, and cannot
/// commit anything itself), so it is no violation; a leader of term 11 is.
#[test]
fn a_stale_term_leader_need_not_hold_what_a_later_term_committed() {
    let stale = BTreeMap::from([(1, Id(5, 1))]);
    let current = BTreeMap::from([(1, Id(5, 1)), (2, Id(10, 2))]);
    let mut oracle = RaftOracle::default();
    assert_eq!(
        oracle.observe(leader_of(1, 10, &current, None), &name),
        None
    );
    assert_eq!(oracle.observe(committed(1, vec![at(10, 2)]), &name), None);
    assert_eq!(oracle.observe(leader_of(2, 8, &stale, None), &name), None);
    // Nor by a membership config that term 10 replaced at its index.
    let config = |node| RaftEvent::LeaderMembership {
        node,
        entry: Some(at(8, 2)),
    };
    assert_eq!(oracle.observe(config(2), &name), None);
    let found = oracle
        .observe(leader_of(3, 11, &stale, None), &name)
        .expect("a later term's leader must hold it");
    assert_eq!(found.invariant, LEADER_COMPLETENESS);
    assert_eq!(
        found.message,
        "n3 became leader without committed entry 10.2 (index 2, committed on n1); its log has nothing there"
    );
    let found = oracle.observe(config(3), &name).expect("replaced");
    assert_eq!(found.invariant, LEADER_MEMBERSHIP);
}

/// The leader of the committing term itself, restored in that term without
/// the entry (openraft's leader restore), is bound: a leader never drops an
/// entry of its own term.
#[test]
fn a_leader_restored_in_its_term_without_an_entry_it_committed_breaks_completeness() {
    let lost = BTreeMap::from([(1, Id(10, 1))]);
    let full = BTreeMap::from([(1, Id(10, 1)), (2, Id(10, 2))]);
    let mut oracle = RaftOracle::default();
    assert_eq!(oracle.observe(leader_of(1, 10, &full, None), &name), None);
    assert_eq!(oracle.observe(committed(1, vec![at(10, 2)]), &name), None);
    let found = oracle
        .observe(leader_of(1, 10, &lost, None), &name)
        .expect("a restored leader of the committing term must hold it");
    assert_eq!(found.invariant, LEADER_COMPLETENESS);
}

/// A deposed leader's late commit, reported after a later term began, is
/// dated by its leader's own report to the leader's term, so the leader
/// restored in that term without it is bound (a node's report alone dates it
/// only to the highest term led then, 4).
#[test]
fn a_leader_s_own_commit_dates_the_entry_to_its_term() {
    let voters = [BTreeSet::from([1, 2, 3])];
    let lost = BTreeMap::from([(1, Id(3, 1))]);
    let mut oracle = RaftOracle::default();
    for node in [2, 3] {
        let flushed = RaftEvent::Flushed {
            node,
            entries: vec![at(3, 2)],
        };
        assert_eq!(oracle.observe(flushed, &name), None);
    }
    assert_eq!(oracle.observe(leader_of(1, 3, &lost, None), &name), None);
    assert_eq!(oracle.observe(leader_of(2, 4, &lost, None), &name), None);
    assert_eq!(oracle.observe(committed(1, vec![at(3, 2)]), &name), None);
    let commit = RaftEvent::LeaderCommitted {
        node: 1,
        entry: at(3, 2),
        voters: &voters,
        earlier: None,
    };
    assert_eq!(oracle.observe(commit, &name), None);
    let found = oracle
        .observe(leader_of(1, 3, &lost, None), &name)
        .expect("restored in the term it committed in, without the entry");
    assert_eq!(found.invariant, LEADER_COMPLETENESS);
}

#[test]
fn two_leaders_of_one_term_break_election_safety_and_a_restored_leader_does_not() {
    let log: BTreeMap<u64, Id> = BTreeMap::new();
    let leader = |node, term| RaftEvent::Leader {
        node,
        term,
        log: &log,
        covered: None,
    };
    let mut oracle = RaftOracle::default();
    assert_eq!(oracle.observe(leader(1, 1), &name), None);
    // The same node leading its term again (after a restart) is fine.
    assert_eq!(oracle.observe(leader(1, 1), &name), None);
    assert_eq!(oracle.observe(leader(2, 2), &name), None);
    let found = oracle.observe(leader(3, 2), &name).expect("two leaders");
    assert_eq!(found.invariant, ELECTION_SAFETY);
    assert_eq!(found.message, "n2 and n3 both led term 2");
}

#[test]
fn the_run_shared_oracle_reports_through_the_context() {
    let env = TestEnv::new("kit-raft-report");
    let n1 = env.ctx(&["n1", "n2"], 0);
    let n2 = env.ctx(&["n1", "n2"], 1);
    // Both nodes reach the same oracle: the run's shared state.
    let one = n1.shared::<RefCell<RaftOracle<Id>>>();
    let two = n2.shared::<RefCell<RaftOracle<Id>>>();
    observe(&n1, &one, committed(1, vec![at(1, 1)]), &name);
    observe(&n2, &two, committed(2, vec![at(2, 1)]), &name);
    let violations = env.violations.borrow();
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].0, "n2");
    assert_eq!(violations[0].1, COMMITTED_AGREE);
    let notes = env.notes();
    assert_eq!(
        notes[0].1,
        "invariant committed_entries_agree violated: index 1 committed as 1.1 on n1 and as 2.1 on n2"
    );
}

#[test]
fn a_protocol_shell_reports_through_its_node_handle() {
    let env = TestEnv::new("kit-raft-handle");
    let n1 = env.ctx(&["n1", "n2", "n3"], 0);
    let oracle = n1.shared::<RefCell<RaftOracle<Id>>>();
    let handle = n1.handle();
    let voters = [BTreeSet::from([1, 2, 3])];
    observe(&handle, &oracle, flushed(1, vec![at(1, 1)]), &name);
    let commit = RaftEvent::LeaderCommitted {
        node: 1,
        entry: at(1, 1),
        voters: &voters,
        earlier: None,
    };
    observe(&handle, &oracle, commit, &name);
    let violations = env.violations.borrow();
    assert_eq!(violations.len(), 1);
    assert_eq!(
        (violations[0].0.as_str(), violations[0].1.as_str()),
        ("n1", COMMITTED_ON_QUORUM)
    );
    let notes = env.notes();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .1
            .starts_with("invariant committed_on_quorum violated: leader n1 committed 1.1"),
        "{}",
        notes[0].1
    );
}

#[test]
fn a_commit_published_with_a_membership_change_may_hold_either_quorum() {
    fn commit<'a>(
        earlier: Option<&'a [BTreeSet<u64>]>,
        voters: &'a [BTreeSet<u64>],
    ) -> RaftEvent<'a, Id> {
        RaftEvent::LeaderCommitted {
            node: 1,
            entry: at(1, 7),
            voters,
            earlier,
        }
    }
    let old = [BTreeSet::from([1, 2, 3])];
    let new = [BTreeSet::from([1, 2, 3]), BTreeSet::from([3, 4, 5])];
    let (old, new) = (&old[..], &new[..]);
    let mut oracle = RaftOracle::default();
    for n in [1, 2] {
        oracle.observe(flushed(n, vec![at(1, 7)]), &name);
    }
    // Decided under [1, 2, 3], published with the joint config appended
    // after it: no violation.
    assert_eq!(oracle.observe(commit(Some(old), new), &name), None);
    // Without the earlier config, the joint one's second half lacks it.
    let found = oracle.observe(commit(None, new), &name).expect("not held");
    assert!(
        found.message.contains("of voters [n3, n4, n5]"),
        "{found:?}"
    );
    // Neither holds it: a violation.
    let mut none = RaftOracle::default();
    none.observe(flushed(4, vec![at(1, 7)]), &name);
    let found = none
        .observe(commit(Some(old), new), &name)
        .expect("neither");
    assert!(
        found.message.contains("of voters [n1, n2, n3]"),
        "{found:?}"
    );
}

#[test]
fn an_append_past_the_end_of_the_log_leaves_a_gap() {
    let append = |node, first, last| RaftEvent::Appended { node, first, last };
    let mut oracle = RaftOracle::default();
    // Continuing, or overwriting, is fine.
    assert_eq!(oracle.observe(append(2, 0, None), &name), None);
    assert_eq!(oracle.observe(append(2, 8, Some(7)), &name), None);
    assert_eq!(oracle.observe(append(2, 3, Some(7)), &name), None);
    // An installed snapshot ends the log too.
    let snapshot = RaftEvent::Snapshot {
        node: 2,
        last: at(1, 19),
        membership: None,
    };
    oracle.observe(snapshot, &name);
    assert_eq!(oracle.observe(append(2, 20, None), &name), None);
    let found = oracle
        .observe(append(3, 20, None), &name)
        .expect("nothing before index 20");
    assert_eq!(found.invariant, LOG_CONTIGUOUS);
    assert_eq!(
        found.message,
        "n3 appended entries from index 20 to a log that ends at nothing: indexes 0 to 19 are missing"
    );
}

#[test]
fn a_leader_under_a_replaced_membership_entry_is_a_violation() {
    let lead = |node, entry| RaftEvent::LeaderMembership { node, entry };
    let mut oracle = RaftOracle::default();
    oracle.observe(committed(2, vec![at(1, 8), at(3, 9)]), &name);
    // n1's membership entry 2.9 was never committed; 3.9 was.
    let found = oracle
        .observe(lead(1, Some(at(2, 9))), &name)
        .expect("a replaced entry");
    assert_eq!(found.invariant, LEADER_MEMBERSHIP);
    assert_eq!(
        found.message,
        "n1 became leader under the membership config of entry 2.9 (index 9), which the cluster replaced: 3.9 is committed there (on n2)"
    );
    // The committed entry itself, an index nobody reported committed, or no
    // membership entry at all are fine.
    let mut fine = RaftOracle::default();
    fine.observe(committed(2, vec![at(3, 9)]), &name);
    assert_eq!(fine.observe(lead(1, Some(at(3, 9))), &name), None);
    assert_eq!(fine.observe(lead(1, Some(at(3, 10))), &name), None);
    assert_eq!(fine.observe(lead(1, None), &name), None);
}

#[test]
fn a_model_declares_the_oracle_invariants_it_feeds_by_name() {
    let declared = declare(&[LOG_CONTIGUOUS, ELECTION_SAFETY]);
    let names: Vec<&str> = declared.iter().map(|i| i.name).collect();
    assert_eq!(names, [LOG_CONTIGUOUS, ELECTION_SAFETY]);
    assert!(declared.iter().all(|i| i.kind == InvariantKind::Safety));
    let all: Vec<&str> = INVARIANTS.iter().map(|i| i.name).collect();
    let mut unique = all.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), all.len(), "one declaration per name");
    let unknown = std::panic::catch_unwind(|| declare(&["no_such_invariant"]));
    assert!(unknown.is_err(), "an unknown name is the caller's mistake");
}

#[test]
fn a_config_from_an_entry_the_snapshot_covers_must_be_the_snapshot_s_own() {
    let snapshot = |node, last, membership| RaftEvent::Snapshot {
        node,
        last,
        membership,
    };
    let uses = |node, entry, snapshot| RaftEvent::Membership {
        node,
        entry,
        snapshot,
    };
    let mut oracle = RaftOracle::default();
    // n1 appended a membership entry at 9 in term 2 that nobody else got; it
    // installs a snapshot up to 3.12 whose config is entry 3.4 (openraft #1808).
    oracle.observe(snapshot(1, at(3, 12), Some(at(3, 4))), &name);
    let found = oracle
        .observe(uses(1, Some(at(2, 9)), Some(at(3, 12))), &name)
        .expect("a config the snapshot replaced");
    assert_eq!(found.invariant, MEMBERSHIP_IN_LOG);
    assert_eq!(
        found.message,
        "n1 uses the membership config of entry 2.9 (index 9), but its snapshot up to 3.12 (index 12) covers that index and its config is entry 3.4 (index 4): a config its log no longer holds"
    );
    let mut fine = RaftOracle::default();
    fine.observe(snapshot(1, at(3, 12), Some(at(3, 4))), &name);
    // The snapshot's own config, one from an entry after the snapshot, and no
    // snapshot at all are fine.
    assert_eq!(
        fine.observe(uses(1, Some(at(3, 4)), Some(at(3, 12))), &name),
        None
    );
    assert_eq!(
        fine.observe(uses(1, Some(at(3, 13)), Some(at(3, 12))), &name),
        None
    );
    assert_eq!(fine.observe(uses(2, Some(at(2, 9)), None), &name), None);
    // A report whose snapshot is not the one the oracle was told of (the
    // report ran ahead of the snapshot's write, or behind it) is not judged.
    assert_eq!(
        fine.observe(uses(1, Some(at(2, 9)), Some(at(3, 10))), &name),
        None
    );
    assert_eq!(
        fine.observe(uses(2, Some(at(2, 9)), Some(at(3, 12))), &name),
        None
    );
    // A snapshot of the initial config covers no membership entry.
    fine.observe(snapshot(3, at(1, 5), None), &name);
    let found = fine
        .observe(uses(3, Some(at(1, 2)), Some(at(1, 5))), &name)
        .expect("the snapshot holds the initial config");
    assert!(
        found
            .message
            .ends_with("its config is the initial config: a config its log no longer holds"),
        "{found:?}"
    );
}
