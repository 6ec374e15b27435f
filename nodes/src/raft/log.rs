//! The in-memory copy of the durable log. It enforces the structural
//! invariants (contiguous from index 1, terms non-decreasing) on every change,
//! so a violation panics at the mutation that caused it.

use super::Entry;

#[derive(Debug, Default)]
pub(super) struct RaftLog {
    entries: Vec<Entry>,
}

impl RaftLog {
    /// Takes the log as persisted; panics if it is not contiguous from index 1.
    pub(super) fn new(entries: Vec<Entry>) -> Self {
        let mut log = RaftLog::default();
        for entry in entries {
            log.append(entry);
        }
        log
    }

    pub(super) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub(super) fn last_index(&self) -> u64 {
        self.entries.len() as u64
    }

    pub(super) fn last_term(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.term)
    }

    pub(super) fn get(&self, index: u64) -> Option<&Entry> {
        let position = index.checked_sub(1)?;
        self.entries.get(usize::try_from(position).ok()?)
    }

    /// The term of the entry at `index`; index 0 is the empty prefix with term 0.
    pub(super) fn term_at(&self, index: u64) -> Option<u64> {
        if index == 0 {
            return Some(0);
        }
        self.get(index).map(|e| e.term)
    }

    /// Up to `max` entries starting at `from` (empty if `from` is past the end).
    pub(super) fn slice(&self, from: u64, max: usize) -> Vec<Entry> {
        assert!(from >= 1, "log indices start at 1");
        let start = usize::try_from(from - 1)
            .unwrap_or(usize::MAX)
            .min(self.entries.len());
        let end = start.saturating_add(max).min(self.entries.len());
        self.entries[start..end].to_vec()
    }

    pub(super) fn append(&mut self, entry: Entry) {
        assert_eq!(
            entry.index,
            self.last_index() + 1,
            "log must stay contiguous"
        );
        assert!(
            entry.term >= self.last_term(),
            "log terms must not decrease"
        );
        self.entries.push(entry);
    }

    /// Drops every entry with index >= `from`.
    pub(super) fn truncate_from(&mut self, from: u64) {
        assert!(from >= 1, "cannot truncate the empty prefix");
        let keep = usize::try_from(from - 1).unwrap_or(usize::MAX);
        self.entries.truncate(keep);
    }

    /// A retry hint for a follower whose entry at `index` has the wrong term:
    /// every entry of that term run may be wrong, so point the leader just
    /// before the run instead of backing off one entry per round trip.
    pub(super) fn conflict_hint(&self, index: u64) -> u64 {
        let Some(term) = self.term_at(index) else {
            return self.last_index();
        };
        let mut first = index;
        while first > 1 && self.term_at(first - 1) == Some(term) {
            first -= 1;
        }
        first - 1
    }
}

#[cfg(test)]
mod tests {
    use super::super::EntryBody;
    use super::*;

    fn entry(term: u64, index: u64) -> Entry {
        Entry {
            term,
            index,
            body: EntryBody::Conf,
        }
    }

    fn log_of_terms(terms: &[u64]) -> RaftLog {
        let entries = terms
            .iter()
            .enumerate()
            .map(|(i, &t)| entry(t, i as u64 + 1))
            .collect();
        RaftLog::new(entries)
    }

    #[test]
    fn term_lookup_and_slices() {
        let log = log_of_terms(&[1, 1, 2, 3]);
        assert_eq!(log.last_index(), 4);
        assert_eq!(log.last_term(), 3);
        assert_eq!(log.term_at(0), Some(0));
        assert_eq!(log.term_at(3), Some(2));
        assert_eq!(log.term_at(5), None);
        assert_eq!(
            log.slice(2, 2).iter().map(|e| e.index).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert!(log.slice(5, 10).is_empty());
    }

    #[test]
    fn truncate_and_conflict_hint() {
        let mut log = log_of_terms(&[1, 2, 2, 2, 3]);
        assert_eq!(log.conflict_hint(4), 1);
        assert_eq!(log.conflict_hint(1), 0);
        assert_eq!(log.conflict_hint(9), 5);
        log.truncate_from(3);
        assert_eq!(log.last_index(), 2);
        log.append(entry(4, 3));
        assert_eq!(log.last_term(), 4);
    }

    #[test]
    #[should_panic(expected = "contiguous")]
    fn gap_panics() {
        RaftLog::new(vec![entry(1, 1), entry(1, 3)]);
    }

    #[test]
    #[should_panic(expected = "terms must not decrease")]
    fn decreasing_term_panics() {
        RaftLog::new(vec![entry(2, 1), entry(1, 2)]);
    }
}
