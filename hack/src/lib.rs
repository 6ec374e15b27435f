//! No code: this crate only names dependency features (see its Cargo.toml), so
//! the openraft build crates and the workspace resolve the same features and
//! share compiled artifacts.
