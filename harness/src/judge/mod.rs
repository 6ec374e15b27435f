//! Judgment: the checkers (expectations, divergence, invariants, cause), the client-history consistency checkers, and the typed history they read.

pub mod check;
pub mod consistency;
pub mod history;
