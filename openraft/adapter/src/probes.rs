//! The openraft model's probes: preconditions of openraft's mechanisms, checked
//! where the adapter sees them (the log store, the state machine, the network,
//! the metrics watcher). Observations only: none changes what openraft does.

faultline_api::probes! {
    /// Where openraft's riskier paths begin, as the adapter sees them.
    pub enum OpenraftProbe {
        LeaderRestored {
            name: "openraft_leader_restored",
            rare: true,
            summary: "a node restarted and led again under the committed vote it read back, with no election (enable_leader_restore)",
        },
        CommittedPastOwnFlush {
            name: "openraft_committed_past_own_flush",
            rare: false,
            summary: "openraft reported an index committed that this node's own log had not yet flushed (save_committed past the durable tail)",
        },
        TransferRefused {
            name: "openraft_transfer_refused",
            rare: true,
            summary: "a transfer_leader target refused the leadership (alpha.25 on: TransferLeaderResponse, e.g. LogNotFlushed)",
        },
        SnapshotInstalled {
            name: "openraft_snapshot_installed",
            rare: false,
            summary: "a node installed a snapshot received from the leader",
        },
        LogTruncated {
            name: "openraft_log_truncated",
            rare: true,
            summary: "a conflict truncated entries from a node's log (truncate_after removed at least one entry)",
        },
    }
}
