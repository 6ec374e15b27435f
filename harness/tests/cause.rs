//! Every bundled bug scenario's buggy variant that fails names its cause: the
//! first differing log index and what each replica did there, the causing write
//! of a logless model's differing key, or the fail point and the index its node
//! went on to (issue 14, item 4). Pinned per scenario, so a model change that
//! blurs an explanation shows here.

mod common;

use faultline::base::outcome::Outcome;
use faultline::judge::check::cause::{self, Basis};
use faultline::sim::runner;

/// Scenario, variant: the basis, the index (as the model writes it) and words
/// the cause must say.
type Pinned = (
    &'static str,
    &'static str,
    Basis,
    Option<&'static str>,
    Words,
);
type Words = &'static [&'static str];

const EXPECTED: &[Pinned] = &[
    (
        "hdds-10798-leader-not-ready",
        "buggy",
        Basis::Faults,
        Some("9"),
        &[
            "double_buffer.flush fired on om1",
            "released at 370 ms",
            "flushed TRANSACTION_INFO through index 9",
        ],
    ),
    (
        "hdds-17062-dropped-closed",
        "buggy",
        Basis::Key,
        None,
        &["recon at 240300 ms: applied heartbeat from dn1 (the cause)"],
    ),
    (
        "hdds-17062-phantom-unhealthy",
        "buggy",
        Basis::Key,
        None,
        &["recon at 240300 ms: applied heartbeat from dn1 (the cause)"],
    ),
    (
        "hdds-17062-scm",
        "buggy",
        Basis::Key,
        None,
        &["scm at 307700 ms: applied heartbeat from dn1 (the cause)"],
    ),
    (
        "hdds-17062-volume-failure",
        "buggy",
        Basis::Key,
        None,
        &["scm at 159600 ms: applied heartbeat from dn1 (the cause)"],
    ),
    (
        "hdds-17603-chain-corrupted",
        "buggy",
        Basis::Index,
        Some("9"),
        &[
            "om2 failed (t:1) CreateSnapshot /v/b/s1: INTERNAL_ERROR",
            "om2 flushed TRANSACTION_INFO covering 9",
            "om2 resumed at index 10 without applying 9 again",
        ],
    ),
    (
        "hdds-17603-per-node-exit",
        "buggy",
        Basis::Index,
        Some("11"),
        &[
            "om2 failed (t:1) SnapshotPurge",
            "fail point snapshot_table.read fired on om2",
            "om2 flushed TRANSACTION_INFO covering 11",
            "om2 terminated",
            "om2 resumed at index 12 without applying 11 again",
        ],
    ),
    (
        "hdds-17603-purge-metadata-error",
        "buggy",
        Basis::Index,
        Some("11"),
        &[
            "om2 failed (t:1) SnapshotPurge [/v/b/s2, /v/b/s1]: METADATA_ERROR",
            "om2 resumed at index 12 without applying 11 again",
        ],
    ),
    (
        "hdds-17603-purge-read-error",
        "buggy",
        Basis::Index,
        Some("11"),
        &[
            "om1, om3 applied (t:1) SnapshotPurge",
            "om2 failed (t:1) SnapshotPurge [/v/b/s2, /v/b/s1]: INTERNAL_ERROR",
            "om2 flushed TRANSACTION_INFO covering 11",
            "om2 resumed at index 12 without applying 11 again",
        ],
    ),
    (
        "hdds-17670-active-store",
        "buggy",
        Basis::Faults,
        Some("23"),
        &[
            "dir_deleting.pre_submit fired on om1",
            "submitted PurgeDirectories",
            "at index 23 (t:3)",
            "applied by om1, om2, om3",
        ],
    ),
    (
        "hdds-17670-found-by-chaos",
        "buggy",
        Basis::Faults,
        Some("19"),
        &[
            "dir_deleting.pre_submit fired on om2",
            "submitted PurgeDirectories",
            "at index 19 (t:3)",
            "applied by om1, om2, om3",
        ],
    ),
    (
        "hdds-17670-residual-window",
        "buggy",
        Basis::Faults,
        Some("23"),
        &[
            "dir_deleting.post_term_check fired on om1",
            "at index 23 (t:3)",
        ],
    ),
    (
        "hdds-17670-snapshot-deep-clean",
        "buggy",
        Basis::Faults,
        Some("19"),
        &["dir_deleting.pre_submit fired on om1", "at index 19 (t:3)"],
    ),
    (
        "raftkv-canary-quorum",
        "buggy",
        Basis::Index,
        Some("5"),
        &[
            "n1, n2 applied (t:2) put k=majority; n3 applied (t:1) put k=minority",
            "in effect then: partition n3 | n1,n2",
        ],
    ),
    (
        "zookeeper-4541-ephemeral",
        "buggy",
        Basis::Index,
        Some("0x100000005"),
        &[
            "zk1 lost (t:1) closeSession s1",
            "zk1: sync.fsync fired: stall 3s",
        ],
    ),
    (
        "zookeeper-4541-lost-txn",
        "buggy",
        Basis::Index,
        Some("0x100000003"),
        &[
            "zk1 lost (t:1) delete /k",
            "not made durable before going down",
            "zk2, zk3 applied (t:1) delete /k",
        ],
    ),
    (
        "zookeeper-4541-partition",
        "buggy",
        Basis::Index,
        Some("0x100000003"),
        &["zk1 lost (t:1) delete /k"],
    ),
];

fn is_bug_scenario(name: &str) -> bool {
    name.starts_with("hdds-")
        || name.starts_with("zookeeper-4541-")
        || name == "raftkv-canary-quorum"
}

#[test]
fn every_failing_buggy_variant_names_its_causing_index_or_event() {
    let mut failures = Vec::new();
    let mut explained = Vec::new();
    for scenario in common::bundled() {
        if !is_bug_scenario(&scenario.name) {
            continue;
        }
        for variant in scenario
            .variants
            .iter()
            .filter(|v| v.name.starts_with("buggy"))
        {
            let r = runner::run(&scenario, variant, scenario.settings.seed);
            let label = format!("{} [{}]", scenario.name, variant.name);
            let expected = EXPECTED
                .iter()
                .find(|(s, v, ..)| *s == scenario.name && *v == variant.name);
            if r.outcome == Outcome::Converged {
                // Nothing to explain: the bug needs a schedule this variant lacks.
                assert!(
                    expected.is_none(),
                    "{label} converged but a cause is pinned"
                );
                continue;
            }
            let Some(&(_, _, basis, index, words)) = expected else {
                failures.push(format!("{label}: ended {} with no pinned cause", r.outcome));
                continue;
            };
            // The cause is on the finding the report's divergence (or violation)
            // section shows: the divergence, else a failed invariant.
            let Some(c) = r.findings.iter().find_map(cause::of) else {
                failures.push(format!("{label}: no finding carries a cause"));
                continue;
            };
            let event = c.event.filter(|&e| e < r.trail.len());
            if c.basis != basis || c.index_shown.as_deref() != index || event.is_none() {
                failures.push(format!(
                    "{label}: basis {:?} index {:?} event {:?}: {}",
                    c.basis, c.index_shown, c.event, c.summary
                ));
            }
            for w in words {
                if !c.summary.contains(w) {
                    failures.push(format!("{label}: {w:?} missing from: {}", c.summary));
                }
            }
            explained.push(label);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        explained.len(),
        EXPECTED.len(),
        "every pinned cause was checked: {explained:?}"
    );
}
