//! The OM double buffer (OzoneManagerDoubleBuffer) as a plain state machine: the
//! apply path adds responses; the flush task takes everything added so far, splits
//! it into batches (CreateSnapshot and SnapshotPurge each alone), and writes each
//! batch as one atomic DB batch: the table writes of the OK responses only
//! (`checkAndUpdateDB`), plus TRANSACTION_INFO = the batch's highest term-index,
//! non-OK entries included.

use super::types::{is_critical_error, BatchOp, Response, Table, TermIndex, TRANSACTION_INFO_KEY};

/// `ozone.om.unflushed.transaction.max.count` stand-in: the apply path waits
/// while this many responses are unflushed.
pub const UNFLUSHED_MAX: usize = 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffered {
    pub ti: TermIndex,
    pub response: Response,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    Added,
    /// HDDS-17603 fix: a response that terminates the OM is not buffered.
    DroppedCritical,
}

/// One batch as the flush writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub entries: Vec<Buffered>,
}

impl Batch {
    /// The highest term-index of the batch: what TRANSACTION_INFO becomes.
    pub fn last(&self) -> TermIndex {
        self.entries
            .iter()
            .map(|e| e.ti)
            .max()
            .expect("batches are never empty")
    }

    /// The DB writes of the batch: the OK responses' writes in order, then
    /// TRANSACTION_INFO.
    pub fn writes(&self) -> Vec<BatchOp> {
        let mut ops: Vec<BatchOp> = self
            .entries
            .iter()
            .filter(|e| e.response.is_ok())
            .flat_map(|e| e.response.ops.iter().cloned())
            .collect();
        ops.push(BatchOp::Put {
            table: Table::TransactionInfo,
            key: TRANSACTION_INFO_KEY.to_string(),
            value: serde_json::to_string(&self.last()).expect("serializes"),
        });
        ops
    }

    /// Entries the batch covers without writing their effects because they
    /// failed with a status that terminates the OM (what HDDS-17603 is about).
    pub fn critical_entries(&self) -> Vec<&Buffered> {
        self.entries
            .iter()
            .filter(|e| is_critical_error(&e.response))
            .collect()
    }

    pub fn describe(&self) -> String {
        let entries: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                let outcome = if e.response.is_ok() {
                    "OK".to_string()
                } else {
                    format!("{} (no table writes)", e.response.status.code())
                };
                format!("{} {} {outcome}", e.ti.index, e.response.cmd.name())
            })
            .collect();
        format!("[{}]", entries.join(", "))
    }
}

#[derive(Debug)]
pub struct DoubleBuffer {
    current: Vec<Buffered>,
    /// HDDS-17603 buggy: every response is buffered, critical errors included.
    buggy: bool,
    last_added: Option<TermIndex>,
}

impl DoubleBuffer {
    /// Whether this buffer keeps critical errors (HDDS-17603's buggy mode).
    pub fn buggy(&self) -> bool {
        self.buggy
    }

    pub fn new(buggy: bool) -> Self {
        DoubleBuffer {
            current: Vec::new(),
            buggy,
            last_added: None,
        }
    }

    /// `OzoneManagerDoubleBuffer.add`: called for every response of a state
    /// machine entry (the normal path and `createErrorResponse`).
    pub fn add(&mut self, ti: TermIndex, response: Response) -> Added {
        assert!(
            self.last_added.is_none_or(|last| ti > last),
            "responses are added in log order"
        );
        if !self.buggy && is_critical_error(&response) {
            return Added::DroppedCritical;
        }
        assert!(
            self.current.len() < UNFLUSHED_MAX,
            "the apply path waits for space"
        );
        self.current.push(Buffered { ti, response });
        self.last_added = Some(ti);
        Added::Added
    }

    pub fn len(&self) -> usize {
        self.current.len()
    }

    pub fn is_empty(&self) -> bool {
        self.current.is_empty()
    }

    pub fn has_space(&self) -> bool {
        self.current.len() < UNFLUSHED_MAX
    }

    /// The highest term-index ever added (what a flush must reach before a
    /// terminating OM may exit, in the default termination order).
    pub fn last_added(&self) -> Option<TermIndex> {
        self.last_added
    }

    /// Swap the buffers and split the ready one into batches
    /// (`splitReadyBufferAtCreateSnapshot`).
    pub fn take_batches(&mut self) -> Vec<Batch> {
        let ready = std::mem::take(&mut self.current);
        let mut batches: Vec<Batch> = Vec::new();
        let mut previous_standalone = false;
        for entry in ready {
            let standalone = entry.response.cmd.standalone();
            if batches.is_empty() || standalone || previous_standalone {
                batches.push(Batch {
                    entries: Vec::new(),
                });
            }
            previous_standalone = standalone;
            batches
                .last_mut()
                .expect("a batch was just pushed")
                .entries
                .push(entry);
        }
        batches
    }
}

#[cfg(test)]
mod tests {
    use super::super::types::{Cmd, Status};
    use super::*;

    fn ti(index: i64) -> TermIndex {
        TermIndex::new(1, index)
    }

    fn ok(cmd: Cmd, key: &str) -> Response {
        Response::ok(
            cmd,
            vec![BatchOp::Put {
                table: Table::Volume,
                key: key.into(),
                value: "{}".into(),
            }],
        )
    }

    fn txinfo(ops: &[BatchOp]) -> TermIndex {
        match ops.last() {
            Some(BatchOp::Put { table, value, .. }) if *table == Table::TransactionInfo => {
                serde_json::from_str(value).unwrap()
            }
            other => panic!("TRANSACTION_INFO must end the batch, got {other:?}"),
        }
    }

    #[test]
    fn create_snapshot_and_purge_are_batches_of_their_own() {
        let mut buffer = DoubleBuffer::new(false);
        buffer.add(ti(1), ok(Cmd::Mkdir, "a"));
        buffer.add(ti(2), ok(Cmd::PutFile, "b"));
        buffer.add(ti(3), ok(Cmd::CreateSnapshot, "c"));
        buffer.add(ti(4), ok(Cmd::Mkdir, "d"));
        buffer.add(ti(5), ok(Cmd::SnapshotPurge, "e"));
        buffer.add(ti(6), ok(Cmd::SnapshotPurge, "f"));
        buffer.add(ti(7), ok(Cmd::Mkdir, "g"));
        let batches = buffer.take_batches();
        let shape: Vec<Vec<i64>> = batches
            .iter()
            .map(|b| b.entries.iter().map(|e| e.ti.index).collect())
            .collect();
        assert_eq!(
            shape,
            vec![vec![1, 2], vec![3], vec![4], vec![5], vec![6], vec![7]]
        );
        assert!(buffer.is_empty());
    }

    #[test]
    fn non_ok_responses_write_no_tables_but_advance_transaction_info() {
        let mut buffer = DoubleBuffer::new(false);
        buffer.add(ti(10), ok(Cmd::Mkdir, "a"));
        buffer.add(
            ti(11),
            Response::error(Cmd::CreateSnapshot, Status::FileAlreadyExists, "exists"),
        );
        let batches = buffer.take_batches();
        assert_eq!(batches.len(), 2);
        assert_eq!(txinfo(&batches[1].writes()), ti(11));
        assert_eq!(batches[1].writes().len(), 1, "only TRANSACTION_INFO");
        assert!(batches[1].critical_entries().is_empty());
    }

    /// The report's unit-level signature: "expected (t:~, i:1) but was (t:~, i:2)".
    #[test]
    fn buggy_a_critical_error_alone_in_its_batch_moves_transaction_info_to_its_index() {
        let mut buffer = DoubleBuffer::new(true);
        buffer.add(ti(1), ok(Cmd::Mkdir, "a"));
        let failed = Response::error(Cmd::SnapshotPurge, Status::InternalError, "codec");
        assert_eq!(buffer.add(ti(2), failed), Added::Added);
        let batches = buffer.take_batches();
        assert_eq!(txinfo(&batches.last().unwrap().writes()), ti(2));
        assert_eq!(batches.last().unwrap().critical_entries().len(), 1);
    }

    #[test]
    fn fixed_a_critical_error_is_dropped_and_earlier_entries_keep_their_index() {
        for status in [Status::InternalError, Status::MetadataError] {
            let mut buffer = DoubleBuffer::new(false);
            buffer.add(ti(1), ok(Cmd::Mkdir, "a"));
            let failed = Response::error(Cmd::SnapshotPurge, status, "read error");
            assert_eq!(buffer.add(ti(2), failed), Added::DroppedCritical);
            assert_eq!(buffer.last_added(), Some(ti(1)));
            let batches = buffer.take_batches();
            assert_eq!(batches.len(), 1);
            assert_eq!(txinfo(&batches[0].writes()), ti(1));
        }
    }

    #[test]
    fn fixed_a_flush_that_would_hold_only_the_failed_entry_has_nothing_to_write() {
        let mut buffer = DoubleBuffer::new(false);
        let failed = Response::error(Cmd::CreateSnapshot, Status::InternalError, "chain");
        assert_eq!(buffer.add(ti(5), failed), Added::DroppedCritical);
        assert!(buffer.take_batches().is_empty());
    }
}
