//! Probes: named code paths a model declares so that a run can say it reached them
//! (a rare branch, the window a bug needs). A node reports a hit with
//! [`NodeCtx::probe`](super::NodeCtx::probe); the hit lands on the trail as a typed
//! probe event.

/// One declared probe. Models keep them as statics and list them in
/// [`ModelInfo::probes`](super::ModelInfo::probes).
#[derive(Debug, PartialEq, Eq)]
pub struct ProbeInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Reached only in unusual interleavings: worth steering a search towards.
    pub rare: bool,
}
