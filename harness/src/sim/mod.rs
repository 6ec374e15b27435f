//! The simulation: the runner that plays a scenario on turmoil (cluster, nemesis, workload, recorder), the harness side of fail points, and the probe coverage it records.

pub mod coverage;
pub mod faults;
pub mod runner;
