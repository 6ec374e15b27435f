//! The keys an OM publishes (`node::publish`): what `observed:` can match and
//! `faultline list ozone-om` shows.

use super::invariants::{
    FACT_COVERED_FAILED, FACT_NOT_READY_SINCE, FACT_READY_BOUND, FACT_READY_WAIT_MAX,
};
use faultline_api::ObservationInfo as O;

pub(super) fn observations() -> Vec<O> {
    let mut keys = state();
    keys.extend(facts());
    keys
}

/// The replicated state, one key per table row (`node::state`).
fn state() -> Vec<O> {
    vec![
        O::state("volume.<volume>", "a volume (`exists`)"),
        O::state(
            "bucket.<bucket>.objectId",
            "a bucket's object id (bucket as `/v/b`)",
        ),
        O::state("bucket.<bucket>.usedBytes", "a bucket's used bytes"),
        O::state(
            "bucket.<bucket>.usedNamespace",
            "a bucket's used namespace (keys and directories)",
        ),
        O::state(
            "bucket.<bucket>.snapshotUsedBytes",
            "bytes a bucket's snapshots still hold",
        ),
        O::state(
            "bucket.<bucket>.snapshotUsedNamespace",
            "namespace a bucket's snapshots still hold",
        ),
        O::state(
            "bucket.<bucket>.quotaInNamespace",
            "a bucket's namespace quota (-1: none)",
        ),
        O::state("dir.<path>", "a directory (`obj=ID`)"),
        O::state("file.<path>", "a key (`obj=ID size=N`)"),
        O::state(
            "deletedDir.<path>",
            "a deleted directory awaiting the directory deleting service",
        ),
        O::state(
            "deleted.<path>",
            "a deleted key awaiting the key deleting service",
        ),
        O::state(
            "snapDeletedDir.<snapshot_id>|<path>",
            "a deleted directory a snapshot holds",
        ),
        O::state(
            "snapDeleted.<snapshot_id>|<path>",
            "a deleted key a snapshot holds",
        ),
        O::state(
            "snapshot.<bucket>/<name>",
            "a snapshot's row (id, status, chain links)",
        ),
        O::state("chain.global", "the global snapshot chain, `id>id>...`"),
        O::state(
            "chain.corrupted",
            "`true`: the snapshot chain failed to load (the OM vouches for no `chain.` key)",
        ),
        O::state(
            "chain.<bucket>",
            "a bucket's snapshot chain, `id>id>...` (bucket as `/v/b`)",
        ),
    ]
}

/// Node-local facts (`node::publish`, `Services::facts`).
fn facts() -> Vec<O> {
    vec![
        O::fact(
            "ratis_applied",
            "the index Raft handed to the state machine",
        ),
        O::fact(
            "om_applied",
            "the OM's last applied index (what its DB and cache reflect)",
        ),
        O::fact(
            "om_applied_term_index",
            "the OM's last applied (term, index)",
        ),
        O::fact(
            "last_notified",
            "the last index notified without a state machine entry",
        ),
        O::fact(
            "last_skipped",
            "the last notified index the OM skipped (-1: none)",
        ),
        O::fact(
            "transaction_info",
            "TRANSACTION_INFO: the (term, index) of the last flushed batch",
        ),
        O::fact(
            "startup_index",
            "a leader's startup (Conf) entry index; `-` when none",
        ),
        O::fact(
            "ready",
            "`true` when this node leads and has applied its startup entry",
        ),
        O::fact(
            "buffered",
            "transactions in the double buffer, not yet flushed",
        ),
        O::fact("in_flight", "this leader's proposals awaiting apply"),
        O::fact("commit", "the node's Raft commit index"),
        O::fact("last_index", "the last index of the node's Raft log"),
        O::fact(
            "chain_corrupted",
            "whether the snapshot chain failed to load",
        ),
        O::fact(
            FACT_READY_BOUND,
            "the bound on a leader's wait to be ready (param `leader_ready_bound_ms`)",
        ),
        O::fact(
            FACT_READY_WAIT_MAX,
            "the longest a leader of this node waited to be ready",
        ),
        O::fact(
            FACT_NOT_READY_SINCE,
            "when this leader's wait to be ready began, while it waits",
        ),
        O::fact(
            FACT_COVERED_FAILED,
            "a flushed TRANSACTION_INFO covers an entry whose effects were not written",
        ),
        O::fact("dds_runs", "directory deleting service runs"),
        O::fact(
            "dds_running",
            "whether a directory deleting service run is under way",
        ),
        O::fact("kds_runs", "key deleting service runs"),
        O::fact(
            "kds_running",
            "whether a key deleting service run is under way",
        ),
        O::fact(
            "last_aos_purge_index",
            "index of the last active-object-store PurgeDirectories applied",
        ),
        O::fact(
            "service_interval_skips",
            "interval service runs skipped (not leader, or not ready)",
        ),
    ]
}
