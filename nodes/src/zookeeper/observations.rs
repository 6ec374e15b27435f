//! The keys a ZooKeeper server publishes (`Server::publish`): what `observed:`
//! can match and `faultline list zookeeper` shows. Zxids are written in hex
//! (`0x100000003`), as ZooKeeper logs them.

use faultline_api::ObservationInfo as O;

pub(super) fn observations() -> Vec<O> {
    vec![
        O::state(
            "/<path>",
            "a znode's data (`DATA [ephemeral SESSION]` for an ephemeral one)",
        ),
        O::state("session:<session>", "an open session (`open`)"),
        O::fact(
            "last_processed",
            "the zxid of the last transaction applied to the data tree",
        ),
        O::fact("current_epoch", "the server's current epoch"),
        O::fact("accepted_epoch", "the server's accepted epoch"),
        O::fact(
            "log_zxids",
            "the zxids in its durable transaction log, as ranges",
        ),
        O::fact(
            "log_unsynced",
            "transactions appended to the log and not yet synced",
        ),
        O::fact(
            "log_unsynced_zxids",
            "the zxids appended and not yet synced, as ranges",
        ),
        O::fact("snapshot_zxid", "the zxid of its latest snapshot"),
        O::fact("vote", "its current vote, `epoch E zxid Z sid S`"),
        O::fact(
            "sync_thread",
            "its sync thread: `running`, `exited`, `dead: WHY` or `none`",
        ),
        O::fact("sync_queue", "requests queued for its sync thread"),
        O::fact(
            "sync_threads_leaked",
            "sync threads still running besides the active one",
        ),
        O::fact("sync_thread_deaths", "sync threads that died"),
        O::fact("lost_zxids", "zxids it acknowledged and then lost"),
        O::fact("pending_txns", "a follower's proposals awaiting commit"),
        O::fact(
            "outstanding_proposals",
            "a leader's proposals awaiting a quorum",
        ),
        O::fact(
            "synced_with",
            "once synced or established, the leader it serves under",
        ),
    ]
}
