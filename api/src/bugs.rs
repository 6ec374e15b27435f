//! Bug modes: the known defects a model can run with, and which mode each runs
//! in for one run. A leaf: the harness hands a [`BugSet`] to every start of a
//! node, and a model declares its [`BugInfo`]s in its `ModelInfo`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A known defect a model can run with, by report key.
#[derive(Debug, PartialEq, Eq)]
pub struct BugInfo {
    /// The report key, e.g. `HDDS-17603`.
    pub key: &'static str,
    pub summary: &'static str,
    /// What the model does in `buggy` mode (the reported behaviour).
    pub buggy: &'static str,
    /// What the model does in `fixed` mode (the proposed fix).
    pub fixed: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BugMode {
    Buggy,
    Fixed,
}

/// The mode of every known bug for one run. A bug the scenario does not mention
/// runs in its `fixed` form.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BugSet(pub BTreeMap<String, BugMode>);

impl BugSet {
    pub fn mode(&self, bug: &BugInfo) -> BugMode {
        self.0.get(bug.key).copied().unwrap_or(BugMode::Fixed)
    }
    pub fn buggy(&self, bug: &BugInfo) -> bool {
        self.mode(bug) == BugMode::Buggy
    }
}
