//! Fail points: the one wrapper over the `fail` crate.
//!
//! Each model names its points in one registry (an enum implementing [`FailPoint`]);
//! node code never passes a loose string. The `fail` crate's registry is global to
//! the process, so every point is registered under `{run_id}/{node}/{point}`: two
//! runs, or two nodes of one run, never see each other's configuration.
//!
//! The harness arms a point with `fail::cfg(name, "return(<arm id>)")` and nothing
//! else: the `fail` crate's `p%` draws from an unseeded RNG and its `sleep`, `delay`
//! and `pause` block the one simulation thread. Whether an armed point fires, and
//! what it does, is decided by the harness ([`Env::fail_point`]) from the
//! run's seed; stalls wait in simulated time.

use crate::chaos::PointChaos;
use crate::env::{Env, Fault};
use crate::event::NodeEvent;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Static description of one fail point of a model.
#[derive(Debug, PartialEq, Eq)]
pub struct FailPointInfo {
    /// Dotted name used in scenarios, e.g. `snapshot_table.read`.
    pub name: &'static str,
    pub summary: &'static str,
    /// Error kinds this point can raise (`error: codec`); empty: errors are not meaningful here.
    pub errors: &'static [&'static str],
    /// Whether a stall is meaningful here (the point sits on an await path).
    pub stall: bool,
    /// Whether `panic` (the process dies here) is meaningful.
    pub panic: bool,
    /// What a chaos run may do here ([`PointChaos::NONE`]: nothing; the model
    /// page says why).
    pub chaos: PointChaos,
}

/// Implemented by each model's fail-point enum: the registry of names.
pub trait FailPoint: Copy + 'static {
    fn info(self) -> &'static FailPointInfo;
}

/// The full name the `fail` crate sees.
pub fn fail_point_name(run_id: &str, node: &str, point: &str) -> String {
    format!("{run_id}/{node}/{point}")
}

// The `fail_point!` macro returns from the enclosing function with the payload
// when the point is armed; wrapping it in its own function turns that into a value.
fn armed_payload(name: &str) -> Option<String> {
    fail::fail_point!(name, |arg: Option<String>| Some(arg.unwrap_or_default()));
    None
}

/// The fail points of one node in one run.
pub struct FailScope {
    env: Rc<dyn Env>,
    node: String,
    names: RefCell<BTreeMap<&'static str, String>>,
}

impl FailScope {
    pub(crate) fn new(env: Rc<dyn Env>, node: &str) -> Self {
        FailScope {
            env,
            node: node.to_string(),
            names: RefCell::new(BTreeMap::new()),
        }
    }

    /// Evaluate a point on a synchronous path. The caller acts on the fault; a
    /// `Stall` or `Panic` returned here must be honoured by the caller.
    pub fn eval(&self, point: impl FailPoint) -> Option<Fault> {
        let info = point.info();
        let payload = {
            let mut names = self.names.borrow_mut();
            let name = names
                .entry(info.name)
                .or_insert_with(|| fail_point_name(self.env.run_id(), &self.node, info.name));
            armed_payload(name)?
        };
        self.env.fail_point(&self.node, info.name, &payload)
    }

    /// Evaluate a point on an async path: stalls wait here in simulated time, a
    /// panic ends the process here, an error comes back as `Err(kind)`.
    pub async fn hit(&self, point: impl FailPoint) -> Result<(), String> {
        match self.eval(point) {
            None => Ok(()),
            Some(fault) => self.act(fault).await,
        }
    }

    /// Carry out a fault returned by [`FailScope::eval`].
    pub async fn act(&self, fault: Fault) -> Result<(), String> {
        match fault {
            Fault::Error(kind) => Err(kind),
            Fault::Stall(duration) => {
                tokio::time::sleep(duration).await;
                Ok(())
            }
            Fault::StallUntilRelease(mut released) => {
                // A dropped sender means the run is tearing down: treat as released.
                let _ = released.wait_for(|released| *released).await;
                Ok(())
            }
            Fault::Panic(message) => {
                let reason = format!("injected panic: {message}");
                let exit = NodeEvent::Exit {
                    reason: reason.clone(),
                };
                self.env.record(&self.node, exit);
                self.env.exit(&self.node, &reason);
                std::future::pending::<()>().await;
                unreachable!("a pending future never completes")
            }
        }
    }
}
