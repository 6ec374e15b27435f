//! faultline's openraft model: an unmodified openraft release, driven through the
//! node API (the `faultline-api` crate) on turmoil. Each build crate (`../alpha24`,
//! `../alpha25`) pins one release and calls [`main`]; this crate is the adapter
//! they share. The guide to doing the same for another service is
//! docs/your-own-service.md.

mod model;
mod net;
mod node;
mod points;
mod probes;
mod runtime;
mod sm;
mod store;
mod types;

pub use model::OpenraftModel;

/// Spawn a task of the node through openraft's runtime, so it inherits the
/// node's seeded RNG scope (a task spawned any other way would not have one).
pub(crate) fn spawn<F>(future: F)
where
    F: std::future::Future + 'static,
    F::Output: 'static,
{
    let _ = <types::Runtime as openraft::AsyncRuntime>::spawn(future);
}

/// The faultline command line with this build's openraft model registered.
pub fn main(release: &'static str) -> std::process::ExitCode {
    let model: &'static OpenraftModel = Box::leak(Box::new(OpenraftModel::new(release)));
    faultline::cli::main_with_models(&[model])
}
