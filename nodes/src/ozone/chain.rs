//! The snapshot chain (SnapshotChainManager): an in-memory global chain of all
//! snapshots and one chain per bucket path, rebuilt from the snapshot info table
//! on start. A load that fails marks the chain corrupted, and every later add
//! fails with "Snapshot chain is corrupted." until the OM restarts cleanly.

use super::types::SnapshotRow;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotChain {
    /// Snapshot ids, oldest first.
    global: Vec<String>,
    /// Per bucket path: snapshot ids, oldest first.
    paths: BTreeMap<String, Vec<String>>,
    /// Snapshot id -> (table key, path).
    keys: BTreeMap<String, (String, String)>,
    corrupted: bool,
}

pub const CORRUPTED: &str = "Snapshot chain is corrupted.";
/// Where the chains' state keys live (`chain.global`, `chain./v/b`, `chain.corrupted`).
pub const PREFIX: &str = "chain.";

impl SnapshotChain {
    /// A chain whose load failed.
    pub fn corrupted() -> Self {
        SnapshotChain {
            corrupted: true,
            ..SnapshotChain::default()
        }
    }

    /// `loadFromSnapshotInfoTable`: rows in creation order; `Err` marks the
    /// chain corrupted (as any load exception does).
    pub fn load(rows: &[(String, SnapshotRow)]) -> Result<Self, String> {
        let mut ordered: Vec<&(String, SnapshotRow)> = rows.iter().collect();
        ordered.sort_by_key(|(_, row)| row.created_index);
        let mut chain = SnapshotChain::default();
        for (key, row) in ordered {
            chain.add(key, row)?;
        }
        Ok(chain)
    }

    pub fn is_corrupted(&self) -> bool {
        self.corrupted
    }

    /// `addSnapshot`: the row's previous ids must be the current tails.
    pub fn add(&mut self, key: &str, row: &SnapshotRow) -> Result<(), String> {
        if self.corrupted {
            return Err(CORRUPTED.to_string());
        }
        if self.keys.contains_key(&row.id) {
            return Err(format!(
                "Global Snapshot chain corruption. Snapshot with snapshotId: {} is already present in the chain.",
                row.id
            ));
        }
        if row.global_prev.as_ref() != self.global.last() {
            return Err(format!(
                "Global Snapshot chain corruption. Previous snapshotId {:?} of {} is not the latest {:?}.",
                row.global_prev,
                row.id,
                self.global.last()
            ));
        }
        if row.path_prev.as_ref() != self.latest_in_path(&row.bucket) {
            return Err(format!(
                "Path Snapshot chain corruption. Previous snapshotId {:?} of {} is not the latest of {}.",
                row.path_prev, row.id, row.bucket
            ));
        }
        self.global.push(row.id.clone());
        self.paths
            .entry(row.bucket.clone())
            .or_default()
            .push(row.id.clone());
        self.keys
            .insert(row.id.clone(), (key.to_string(), row.bucket.clone()));
        Ok(())
    }

    /// `deleteSnapshot`: unlink from both chains.
    pub fn remove(&mut self, id: &str) -> Result<(), String> {
        let Some((_, path)) = self.keys.remove(id) else {
            return Err(format!(
                "Snapshot chain corruption. SnapshotID {id} is not found."
            ));
        };
        self.global.retain(|s| s != id);
        if let Some(chain) = self.paths.get_mut(&path) {
            chain.retain(|s| s != id);
            if chain.is_empty() {
                self.paths.remove(&path);
            }
        }
        Ok(())
    }

    pub fn latest_global(&self) -> Option<&String> {
        self.global.last()
    }

    pub fn latest_in_path(&self, path: &str) -> Option<&String> {
        self.paths.get(path).and_then(|c| c.last())
    }

    /// The snapshot before `id` in its bucket's chain.
    pub fn previous_in_path(&self, id: &str) -> Option<&String> {
        let (_, path) = self.keys.get(id)?;
        let chain = self.paths.get(path)?;
        let at = chain.iter().position(|s| s == id)?;
        at.checked_sub(1).map(|i| &chain[i])
    }

    /// The snapshot after `id` in its bucket's chain.
    pub fn next_in_path(&self, id: &str) -> Option<&String> {
        let (_, path) = self.keys.get(id)?;
        let chain = self.paths.get(path)?;
        let at = chain.iter().position(|s| s == id)?;
        chain.get(at + 1)
    }

    /// The snapshot after `id` in the global chain.
    pub fn next_global(&self, id: &str) -> Option<&String> {
        let at = self.global.iter().position(|s| s == id)?;
        self.global.get(at + 1)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.keys.contains_key(id)
    }

    pub fn table_key(&self, id: &str) -> Option<&String> {
        self.keys.get(id).map(|(key, _)| key)
    }

    /// Snapshot ids in global order (DDS deep-clean tasks iterate this).
    pub fn global_ids(&self) -> &[String] {
        &self.global
    }

    /// The chains as replicas must agree on them, every key under [`PREFIX`]:
    /// `chain.global` and `chain./v/b`, each as `id>id>...` (and
    /// `chain.corrupted` after a failed load, when the OM vouches for none).
    pub fn state(&self) -> BTreeMap<String, String> {
        let mut state = BTreeMap::new();
        if self.corrupted {
            state.insert(format!("{PREFIX}corrupted"), "true".to_string());
        }
        if !self.global.is_empty() {
            state.insert(format!("{PREFIX}global"), self.global.join(">"));
        }
        for (path, chain) in &self.paths {
            state.insert(format!("{PREFIX}{path}"), chain.join(">"));
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::super::types::SnapshotStatus;
    use super::*;

    fn row(
        id: &str,
        bucket: &str,
        global_prev: Option<&str>,
        path_prev: Option<&str>,
        at: u64,
    ) -> SnapshotRow {
        SnapshotRow {
            id: id.into(),
            name: id.into(),
            bucket: bucket.into(),
            status: SnapshotStatus::Active,
            global_prev: global_prev.map(str::to_string),
            path_prev: path_prev.map(str::to_string),
            deep_clean: false,
            deep_cleaned_dir: false,
            created_index: at,
            last_txn: 0,
        }
    }

    #[test]
    fn chains_link_globally_and_per_path() {
        let mut chain = SnapshotChain::default();
        chain
            .add("/v/b/s1", &row("a", "/v/b", None, None, 1))
            .unwrap();
        chain
            .add("/v/c/t1", &row("b", "/v/c", Some("a"), None, 2))
            .unwrap();
        chain
            .add("/v/b/s2", &row("c", "/v/b", Some("b"), Some("a"), 3))
            .unwrap();
        assert_eq!(chain.latest_global().map(String::as_str), Some("c"));
        assert_eq!(chain.previous_in_path("c").map(String::as_str), Some("a"));
        assert_eq!(chain.next_in_path("a").map(String::as_str), Some("c"));
        assert_eq!(chain.next_global("a").map(String::as_str), Some("b"));
        assert_eq!(chain.state()["chain./v/b"], "a>c");
        // A row that does not extend the tails is a corruption.
        assert!(chain
            .add("/v/b/s3", &row("d", "/v/b", Some("a"), Some("c"), 4))
            .is_err());
        chain.remove("c").unwrap();
        assert_eq!(chain.latest_in_path("/v/b").map(String::as_str), Some("a"));
        assert!(chain.remove("c").is_err());
    }

    #[test]
    fn load_orders_rows_by_creation_and_a_corrupted_chain_refuses_adds() {
        let rows = vec![
            (
                "/v/b/s2".to_string(),
                row("c", "/v/b", Some("a"), Some("a"), 3),
            ),
            ("/v/b/s1".to_string(), row("a", "/v/b", None, None, 1)),
        ];
        let chain = SnapshotChain::load(&rows).unwrap();
        assert_eq!(chain.state()["chain.global"], "a>c");
        let mut broken = SnapshotChain::corrupted();
        let error = broken
            .add("/v/b/s1", &row("x", "/v/b", None, None, 9))
            .unwrap_err();
        assert_eq!(error, CORRUPTED);
    }
}
