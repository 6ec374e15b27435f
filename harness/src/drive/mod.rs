//! The tools that drive many runs: sweep, hunt, shrink, bench, the import of model-checker traces, and their progress lines.

pub mod bench;
pub mod hunt;
pub mod import;
pub mod progress;
pub mod shrink;
pub mod sweep;
