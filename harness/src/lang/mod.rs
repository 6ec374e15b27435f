//! The language: YAML with positions, scenario files parsed and validated into typed steps, diagnostics at file:line:col, target builds, and the starter files of `faultline new`.

pub mod diag;
pub mod scenario;
pub mod starter;
pub mod targets;
pub mod yaml;
