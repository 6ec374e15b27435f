//! What clients saw: every client operation of a run as an invoke and a
//! completion (`ok`, `fail` = definitely not applied, `info` = unknown), with its
//! process, function, arguments, result and simulated times.
//!
//! [`History`] is recorded as ops happen and validated as it is built; the
//! consistency checker (module `consistency`) reads it. It is exported as JSON
//! lines ([`jsonl`]) and as EDN in the shapes Jepsen's `elle-cli` and Knossos read
//! ([`edn`]); [`generate`] makes deterministic histories for tests and the
//! benchmark. The format is described in `docs/history.md`.

pub mod clients;
pub mod edn;
pub mod event;
pub mod generate;
pub mod jsonl;
pub mod op;
pub mod record;

pub use clients::{ClientHistory, Lane};
pub use edn::{left_out, read_jepsen, to_edn, EdnShape};
pub use event::{Event, EventType};
pub use jsonl::{from_jsonl, to_jsonl};
pub use op::{text, Completion, CompletionKind, Op, Stamp};
pub use record::{History, HistoryError};
