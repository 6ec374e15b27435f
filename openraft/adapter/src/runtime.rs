//! The async runtime openraft runs on: its tokio runtime with a seeded RNG
//! (openraft-rt's `DeterministicRng`), and timers that fire a little late.
//!
//! Why the lateness. openraft checks its election timeout on a tick that re-arms
//! itself `now + 1.5 × heartbeat` after each wake-up, and draws the timeout once
//! per process. On turmoil every host starts in the same instant and a wake-up
//! costs no time, so every node's tick fires at the same instants for the whole
//! run: two voters whose timeouts round up to the same tick become candidates in
//! the same millisecond, split the vote, and do it again every round, forever
//! (measured: openraft-1805's fixed variant, 5 seeds of 100, stuck with three
//! candidates a round from 1.35 s to the end). A real timer fires after its
//! deadline by up to a millisecond or so (timer-wheel resolution, scheduling),
//! and a tick loop accumulates that, so real nodes drift apart and such a
//! lockstep ends. Each sleep here is late by a seed-drawn amount below
//! [`TIMER_LATE_US_MAX`], which restores that drift; timeouts (`timeout`,
//! `timeout_at`) are left exact.

use openraft_rt::deterministic_rng::DeterministicRng;
use openraft_rt::{AsyncRuntime, Instant, OptionalSend};
use rand_core::Rng;
use std::future::Future;
use std::io;
use std::time::Duration;

/// The most a timer fires after its deadline.
pub const TIMER_LATE_US_MAX: u64 = 2_000;
/// Sleeps shorter than this are yields: they stay as asked.
const YIELD_BELOW: Duration = Duration::from_millis(1);

/// openraft's tokio runtime, seeded.
pub type Seeded = DeterministicRng<openraft_rt_tokio::TokioRuntime>;

/// A runtime whose sleeps end a little after their deadline (see the module docs).
#[derive(Debug)]
pub struct LateTimers<RT: AsyncRuntime> {
    inner: RT,
}

impl<RT: AsyncRuntime> LateTimers<RT> {
    /// How late this sleep ends: drawn from the task's seeded RNG.
    fn lateness(duration: Duration) -> Duration {
        if duration < YIELD_BELOW {
            return Duration::ZERO;
        }
        Duration::from_micros(RT::thread_rng().next_u64() % TIMER_LATE_US_MAX)
    }
}

impl<RT: AsyncRuntime> AsyncRuntime for LateTimers<RT> {
    type JoinError = RT::JoinError;
    type JoinHandle<T: OptionalSend + 'static> = RT::JoinHandle<T>;
    type Sleep = RT::Sleep;
    type Instant = RT::Instant;
    type TimeoutError = RT::TimeoutError;
    type Timeout<R, T: Future<Output = R> + OptionalSend> = RT::Timeout<R, T>;
    type ThreadLocalRng = RT::ThreadLocalRng;
    type Mpsc = RT::Mpsc;
    type Watch = RT::Watch;
    type Oneshot = RT::Oneshot;
    type Mutex<T: OptionalSend + 'static> = RT::Mutex<T>;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        RT::spawn(future)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        RT::sleep(duration + Self::lateness(duration))
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        let duration = deadline.saturating_duration_since(Self::Instant::now());
        RT::sleep_until(deadline + Self::lateness(duration))
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        RT::timeout(duration, future)
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        RT::timeout_at(deadline, future)
    }

    fn is_panic(join_error: &Self::JoinError) -> bool {
        RT::is_panic(join_error)
    }

    // Seeded: RT is openraft-rt's DeterministicRng, whose per-task RNG comes
    // from the node's seed, not the OS.
    fn thread_rng() -> Self::ThreadLocalRng { // wall-clock ok: seeded per node (DeterministicRng)
        RT::thread_rng()
    }

    fn new(threads: usize) -> Self {
        LateTimers {
            inner: RT::new(threads),
        }
    }

    fn block_on<F, T>(&mut self, future: F) -> T
    where
        F: Future<Output = T>,
        T: OptionalSend,
    {
        self.inner.block_on(future)
    }

    /// Runs `f` where the future is polled, on the simulation's thread: the
    /// default spawns an OS thread, whose timing no seed decides. openraft
    /// itself never calls this (only an application through
    /// `TypeConfigExt::spawn_blocking`), and the adapter does not either. // wall-clock ok: runs inline, no OS thread
    fn spawn_blocking<F, T>(f: F) -> impl Future<Output = Result<T, io::Error>> + Send // wall-clock ok: runs inline, no OS thread
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        async move { Ok(f()) }
    }
}
