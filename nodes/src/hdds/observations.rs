//! The keys datanodes and receivers publish (`Datanode::publish`,
//! `Receiver::publish`): what `observed:` can match and `faultline list
//! hdds-reports` shows. `<receiver>` is `scm` or `recon`.

use faultline_api::ObservationInfo as O;

pub(super) fn observations() -> Vec<O> {
    let mut keys = vec![O::state(
        "<datanode>/C<container>",
        "a replica's state (`CLOSED`, ...) on the datanode and in each receiver's view; published only with one datanode",
    )];
    keys.extend(datanode());
    keys.extend(receiver());
    keys
}

fn datanode() -> Vec<O> {
    vec![
        O::fact(
            "containers",
            "datanode: its container set, `C1=CLOSED,C2=OPEN`",
        ),
        O::fact(
            "events",
            "datanode: container events and executed commands of this start",
        ),
        O::fact(
            "commands",
            "datanode: deleteBlocks commands executed in this start",
        ),
        O::fact(
            "deleted_txs",
            "datanode: deleted-block transactions ever executed (durable)",
        ),
        O::fact(
            "fcr_built",
            "datanode: id of the last full container report built",
        ),
        O::fact(
            "next_fcr_ms",
            "datanode: when it builds its next full container report",
        ),
        O::fact(
            "queued.<receiver>",
            "datanode: incremental reports queued for that receiver",
        ),
        O::fact(
            "in_flight.<receiver>",
            "datanode: 1 while a heartbeat to that receiver is in flight",
        ),
        O::fact(
            "fcr_ready.<receiver>",
            "datanode: whether a full report waits to be sent there",
        ),
        O::fact(
            "covered.<receiver>",
            "datanode: the full report (`FCR#N`) that receiver's queue is covered by, or `-`",
        ),
        O::fact(
            "heartbeats_failed.<receiver>",
            "datanode: heartbeats to that receiver that failed",
        ),
        O::fact(
            "synced.<receiver>",
            "datanode: its `events` as of the last reports that receiver took",
        ),
    ]
}

fn receiver() -> Vec<O> {
    vec![
        O::fact("registered.<node>", "on a datanode, whether it is registered with that receiver; on a receiver, whether that datanode is"),
        O::fact("heartbeats.<node>", "on a datanode, heartbeats sent to that receiver; on a receiver, heartbeats from that datanode"),
        O::fact("replicas.<datanode>", "receiver: its view of that datanode's containers, `C1=CLOSED,...`"),
        O::fact("since_ms.<datanode>/C<container>", "receiver: when its entry for that replica was last set"),
        O::fact("held.<datanode>/C<container>", "receiver: how long its entry for that replica has stood"),
        O::fact("held_heartbeats.<datanode>/C<container>", "receiver: heartbeats its entry for that replica has stood"),
        O::fact("registers.<datanode>", "receiver: registrations of that datanode"),
        O::fact("reregisters.<datanode>", "receiver: re-registrations of that datanode"),
        O::fact("icrs_over_fcr.<datanode>", "receiver: incremental reports processed over a full one in one heartbeat"),
        O::fact("last_full_report_ms.<datanode>", "receiver: when it last processed that datanode's full report"),
        O::fact("regressions.<datanode>", "receiver: replicas whose state went backwards"),
        O::fact("first_regression.<datanode>", "receiver: the first replica state that went backwards"),
        O::fact("acked.<datanode>", "SCM: deleted-block transactions that datanode acknowledged"),
        O::fact("deletion_commands.<datanode>", "SCM: deleteBlocks commands for that datanode"),
        O::fact("log", "SCM: its durable deleted-block transaction log"),
        O::fact("txs", "SCM: the last deleted-block transaction id"),
        O::fact("block_deletion_from_ms", "SCM: when its block deleting service may first run"),
    ]
}
