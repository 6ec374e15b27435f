//! A model's chaos domain: what a chaos run may do to it when the scenario says
//! no more than `chaos: {auto: true, window: ...}`.
//!
//! The model's author knows which faults the real system promises to survive and
//! which ranges of its knobs are meaningful; they say it once, here and next to
//! each fail point ([`PointChaos`]), param ([`ParamChaos`](crate::ParamChaos), which
//! lives with the params) and op ([`OpInfo::chaos`](crate::OpInfo::chaos)), and
//! every chaos file gets it for
//! free, as FoundationDB's simulator randomises knobs and BUGGIFY sites without a
//! test asking. A scenario may still narrow or weight anything: what its chaos
//! section names overrides the domain.
//!
//! The domain is what the real system promises to survive, not what makes bugs
//! show: a fault outside it (an fsync error that never clears, for a system that
//! documents it exits on one) stays out, and the model page says why. Nothing
//! here names a bug.

/// How chaos may use one fail point.
#[derive(Debug, PartialEq, Eq)]
pub struct PointChaos {
    /// Error kinds chaos may raise here (a subset of the point's `errors`).
    pub errors: &'static [&'static str],
    /// Each arming fires at most this many times (`None`: every hit while
    /// armed): a transient fault, such as one fsync that fails before the disk
    /// recovers, where the real system does not promise to survive a lasting one.
    pub count: Option<u32>,
    /// Stall durations chaos may draw, in ms, both inclusive (`None`: no stall):
    /// drawn log-uniform when the range spans orders of magnitude.
    pub stall_ms: Option<(u64, u64)>,
    /// Whether chaos may make the process die here.
    pub panic: bool,
    /// The roles whose nodes reach this point (empty: every node's).
    pub roles: &'static [&'static str],
    /// Only the node that leads reaches it (a service that runs on the
    /// leader): chaos arms it there, resolved when the arming takes effect.
    pub leader: bool,
}

impl PointChaos {
    /// The point is outside the chaos domain (the model page says why).
    pub const NONE: PointChaos = PointChaos {
        errors: &[],
        count: None,
        stall_ms: None,
        panic: false,
        roles: &[],
        leader: false,
    };

    /// Stalls of `min..=max` ms only.
    pub const fn stall(min: u64, max: u64) -> PointChaos {
        PointChaos {
            stall_ms: Some((min, max)),
            ..PointChaos::NONE
        }
    }

    /// These errors only.
    pub const fn errors(errors: &'static [&'static str]) -> PointChaos {
        PointChaos {
            errors,
            ..PointChaos::NONE
        }
    }

    /// Whether chaos may arm the point at all.
    pub fn in_domain(&self) -> bool {
        !self.errors.is_empty() || self.stall_ms.is_some() || self.panic
    }
}

/// The rest of a model's domain: what a chaos run needs that belongs to no
/// single fail point, param or op.
#[derive(Debug, PartialEq)]
pub struct ChaosDomain {
    /// Steps that bring a fresh cluster to where the workload can run (a leader
    /// elected, a volume created), in the scenario language's flow form, one step
    /// each: `"{await: {leader: any, within: 10s}}"`. Run before the window when
    /// the scenario has no steps of its own.
    pub setup: &'static [&'static str],
    /// The workload: an op every `every_ms` from one of `clients` clients.
    pub every_ms: u64,
    pub clients: usize,
    /// Where an op without its own `on` goes (`None`: the leader, for a model
    /// with leaders).
    pub on: Option<&'static str>,
    /// Time between two faults' starts, and how long a lasting fault lasts (ms).
    pub spacing_ms: (u64, u64),
    pub duration_ms: (u64, u64),
    /// Faults in effect at once, at most.
    pub concurrent_max: usize,
    /// Link delays a `latency` fault draws (ms).
    pub latency_ms: (u64, u64),
    /// Fault kinds (`partition`, `oneway`, `hold`, `latency`, `crash`,
    /// `restart`, `stop`, `transfer_leader`) left out, each with the reason.
    pub excluded: &'static [(&'static str, &'static str)],
    /// Scenario defaults for an auto run that does not set them: the op timeout,
    /// the tick, the link latency range, and the heal phase's bound and settle.
    pub op_timeout_ms: u64,
    pub tick_ms: u64,
    pub link_latency_ms: (u64, u64),
    pub heal_within_ms: u64,
    pub heal_settle_ms: u64,
    /// The final generator (Jepsen's): after the heal phase, these ops (flow
    /// form, as workload ops) are sent in order, each waited for; every one must
    /// complete within `final_within_ms` with an answer that is not an error, or
    /// the run is `stuck` naming the op. A write, then a read of it.
    pub final_ops: &'static [&'static str],
    pub final_within_ms: u64,
    /// A node whose process ends itself during the window (a fatal error, an
    /// injected panic) is started again after a delay drawn from this range
    /// (ms, log-uniform), as the supervisor of a real deployment (systemd's
    /// `Restart=on-failure`, a Kubernetes pod's restart with its back-off)
    /// does; `None`: it stays down until the heal phase.
    pub restart_exited_ms: Option<(u64, u64)>,
}

impl ChaosDomain {
    /// A starting point for a model's domain: fill in what differs.
    pub const DEFAULT: ChaosDomain = ChaosDomain {
        setup: &[],
        every_ms: 100,
        clients: 5,
        on: None,
        spacing_ms: (200, 3_000),
        duration_ms: (100, 10_000),
        concurrent_max: 2,
        latency_ms: (5, 500),
        excluded: &[],
        op_timeout_ms: 3_000,
        tick_ms: 1,
        link_latency_ms: (1, 10),
        heal_within_ms: 60_000,
        heal_settle_ms: 1_000,
        final_ops: &[],
        final_within_ms: 30_000,
        restart_exited_ms: None,
    };
}
