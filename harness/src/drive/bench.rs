//! `faultline bench`: how fast runs are, and how close the harness runs to what
//! turmoil itself can do.
//!
//! For each bundled scenario variant it times the harness run, then drives the same
//! node models through the same actions with a bare turmoil loop: the actions the
//! harness run took (its trail's steps, at their simulated times) replayed by direct
//! `Sim` calls and inbox sends, for the same simulated duration, with an `Env` that
//! records nothing. The bare loop has no scenario interpreter, no trail, no
//! observations, no fail points armed (node code still asks the `fail` registry,
//! which answers from an empty map) and no checkers. The ratio of the two wall
//! times is the harness's overhead. Wall time is what this module measures; none
//! of it reaches a trail.

use crate::base::action::Action;
use crate::drive::sweep::{self, SweepOptions};
use crate::lang::scenario::Scenario;
use crate::sim::runner::{self, add_hosts, sim_builder, RunResult};
use faultline_api::{Command, Env, Fault, NodeEvent, Observation, OpResult, Shared};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use turmoil::Sim;

/// Everything from this line of the output file on is kept when the bench rewrites it.
pub const NOTES_MARKER: &str = "<!-- notes: kept by faultline bench -->";

pub struct BenchOptions {
    pub paths: Vec<PathBuf>,
    pub repeat: usize,
    /// The scenario swept for runs per second, and how many seeds.
    pub sweep: PathBuf,
    pub sweep_seeds: u64,
    pub out: Option<PathBuf>,
}

#[derive(Clone, Debug)]
pub struct Row {
    pub scenario: String,
    pub variant: String,
    pub sim_ms: u64,
    pub harness_ms: f64,
    pub bare_ms: f64,
}

impl Row {
    pub fn ratio(&self) -> f64 {
        self.harness_ms / self.bare_ms.max(1e-6)
    }
    pub fn sim_per_wall(&self) -> f64 {
        self.sim_ms as f64 / self.harness_ms.max(1e-6)
    }
}

/// The bare loop's environment: it keeps only what the loop itself needs.
struct BareEnv {
    inboxes: RefCell<BTreeMap<String, UnboundedSender<Command>>>,
    exits: RefCell<Vec<String>>,
    shared: Shared,
}

impl Env for BareEnv {
    fn run_id(&self) -> &str {
        "bare"
    }
    fn now(&self) -> Duration {
        turmoil::sim_elapsed().unwrap_or_default()
    }
    fn record(&self, _: &str, _: NodeEvent) {}
    fn message(&self, _: &str, _: &str, _: &str) {}
    fn fail_point(&self, _: &str, _: &'static str, _: &str) -> Option<Fault> {
        None
    }
    fn publish(&self, _: &str, _: Observation) {}
    fn complete(&self, _: &str, _: u64, _: OpResult) {}
    fn exit(&self, node: &str, _: &str) {
        self.exits.borrow_mut().push(node.to_string());
    }
    fn stopped(&self, _: &str) {}
    fn shared(&self) -> &Shared {
        &self.shared
    }
    fn violation(&self, _: &str, _: &str, _: &str) {}
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: the benchmark's measurement"
    )]
    let start = Instant::now(); // wall-clock ok: timing only, never in a trail
    let value = f();
    (value, start.elapsed().as_secs_f64() * 1000.0)
}

/// Replay a harness run's actions with a bare turmoil loop; returns wall ms.
pub fn bare_run(scenario: &Scenario, result: &RunResult) -> f64 {
    let variant = scenario
        .variant(&result.variant)
        .expect("the run's variant");
    let env = Rc::new(BareEnv {
        inboxes: RefCell::new(BTreeMap::new()),
        exits: RefCell::new(Vec::new()),
        shared: Shared::default(),
    });
    let actions = result.trail.actions();
    let end = Duration::from_millis(result.sim_elapsed_ms);
    // The run's own params: a chaos section may draw some per seed.
    let params = runner::swarm::plan(
        scenario,
        variant,
        result.seed,
        result.swarm.as_ref().and_then(|d| d.config_seed),
        None,
    )
    .params;
    let ((), ms) = timed(|| {
        let mut sim = sim_builder(&scenario.settings, result.seed).build();
        let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
        let starts = RefCell::new(vec![0u32; names.len()]);
        let bare = env.clone();
        let started = Rc::new(move |index: usize, inbox: UnboundedSender<Command>| {
            bare.inboxes
                .borrow_mut()
                .insert(names[index].clone(), inbox);
            let mut starts = starts.borrow_mut();
            starts[index] += 1;
            starts[index] - 1
        });
        add_hosts(
            &mut sim,
            scenario,
            &variant.bugs,
            &params,
            result.seed,
            env.clone(),
            started,
        );
        let mut next = 0;
        let mut op_id = 0u64;
        while sim.elapsed() < end {
            while next < actions.len() && Duration::from_millis(actions[next].t_ms) <= sim.elapsed()
            {
                let latency = (scenario.settings.latency_min, scenario.settings.latency_max);
                apply(&mut sim, &env, &actions[next].action, latency, &mut op_id);
                next += 1;
            }
            if sim.step().is_err() {
                break;
            }
            for node in env.exits.borrow_mut().drain(..) {
                sim.crash(node.as_str());
            }
        }
    });
    ms
}

/// One action by direct `Sim` calls: the same effect the harness's action has.
/// Exhaustive: a new kind of action must say what the bare loop does with it.
fn apply(
    sim: &mut Sim<'_>,
    env: &BareEnv,
    action: &Action,
    latency: (Duration, Duration),
    op_id: &mut u64,
) {
    let send = |to: &str, command: Command| {
        if let Some(inbox) = env.inboxes.borrow().get(to) {
            let _ = inbox.send(command);
        }
    };
    match action {
        Action::Client { node, op } => {
            *op_id += 1;
            send(
                node,
                Command::Op {
                    id: *op_id,
                    op: op.op.clone(),
                },
            );
        }
        Action::TransferLeader { from, to } => {
            *op_id += 1;
            send(
                from,
                Command::TransferLeader {
                    id: *op_id,
                    to: to.clone(),
                },
            );
        }
        // The bare loop does not wait for a clean stop: it stops the host.
        Action::Crash { node } | Action::Stop { node } => sim.crash(node.as_str()),
        Action::Start { node } => sim.bounce(node.as_str()),
        Action::Restart { node } => {
            sim.crash(node.as_str());
            sim.bounce(node.as_str());
        }
        Action::Partition { groups } => {
            for (i, a) in groups.iter().enumerate() {
                for b in &groups[i + 1..] {
                    for x in a {
                        for y in b.iter().filter(|y| *y != x) {
                            sim.partition(x.as_str(), y.as_str());
                        }
                    }
                }
            }
        }
        Action::PartitionOneWay { from, to } => {
            for to in to {
                sim.partition_oneway(from.as_str(), to.as_str());
            }
        }
        Action::Heal => {
            let all: Vec<String> = env.inboxes.borrow().keys().cloned().collect();
            for a in &all {
                for b in &all {
                    if a < b {
                        sim.repair(a.as_str(), b.as_str());
                    }
                }
            }
        }
        Action::Hold { between: [a, b] } => sim.hold(a.as_str(), b.as_str()),
        Action::Release { between: [a, b] } => sim.release(a.as_str(), b.as_str()),
        Action::Latency {
            between: [a, b],
            delay_ms,
        } => match delay_ms {
            Some(ms) => sim.set_link_latency(a.as_str(), b.as_str(), Duration::from_millis(*ms)),
            None => {
                let (min, max) = latency;
                sim.set_link_latency(a.as_str(), b.as_str(), min);
                sim.set_link_max_message_latency(a.as_str(), b.as_str(), max);
            }
        },
        // The bare loop arms no fail points.
        Action::ArmFailPoint { .. }
        | Action::ClearFailPoint { .. }
        | Action::ReleaseFailPoint { .. } => {}
    }
}

fn peak_rss_mb() -> f64 {
    // SAFETY: getrusage fills the struct we pass; nothing else is touched.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    if ok {
        usage.ru_maxrss as f64 / 1024.0
    } else {
        f64::NAN
    }
}

/// One run of a variant timed in this process, and the same actions in a bare
/// loop: the measurement a row is the median of.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub sim_ms: u64,
    pub harness_ms: f64,
    pub bare_ms: f64,
}

/// Time one run of `variant` here (its model must run in this process).
pub fn sample(scenario: &Scenario, variant: &crate::lang::scenario::Variant, seed: u64) -> Sample {
    let (result, harness_ms) = timed(|| runner::run(scenario, variant, seed));
    let bare_ms = bare_run(scenario, &result);
    Sample {
        sim_ms: result.sim_elapsed_ms,
        harness_ms,
        bare_ms,
    }
}

/// One sample taken by the binary a variant runs in (a target's build, or a
/// fresh copy of this one for a model that needs a process per run), over the
/// child protocol's `bench` command.
fn sample_in(
    binary: &std::path::Path,
    scenario: &Scenario,
    variant: &crate::lang::scenario::Variant,
    seed: u64,
) -> Result<Sample, String> {
    let args = runner::child::args("bench", scenario, variant, seed);
    match crate::lang::targets::call(binary, &args, scenario.source.as_ref())? {
        (0, stdout, _) => serde_json::from_slice(&stdout)
            .map_err(|e| format!("{} gave no measurement: {e}", binary.display())),
        (code, _, stderr) => Err(format!(
            "{} could not measure it (exit {code}): {}",
            binary.display(),
            crate::lang::targets::tail(&stderr)
        )),
    }
}

/// The rows of every variant, each the median of `repeat` samples, measured
/// in the process its runs belong to; and a line for each variant that could
/// not be measured (its build is missing, its binary failed), which the bench
/// reports and goes on without.
pub fn rows(scenarios: &[Scenario], repeat: usize) -> (Vec<Row>, Vec<String>) {
    let mut rows = Vec::new();
    let mut not_measured = Vec::new();
    for scenario in scenarios {
        for variant in &scenario.variants {
            let seed = scenario.settings.seed;
            let samples: Result<Vec<Sample>, String> = runner::child::placement(scenario, variant)
                .and_then(|placed| {
                    (0..repeat.max(1))
                        .map(|_| match &placed {
                            None => Ok(sample(scenario, variant, seed)),
                            Some(binary) => sample_in(binary, scenario, variant, seed),
                        })
                        .collect()
                });
            match samples {
                Ok(samples) => rows.push(Row {
                    scenario: scenario.name.clone(),
                    variant: variant.name.clone(),
                    sim_ms: samples[0].sim_ms,
                    harness_ms: median(samples.iter().map(|s| s.harness_ms).collect()),
                    bare_ms: median(samples.iter().map(|s| s.bare_ms).collect()),
                }),
                Err(why) => {
                    not_measured.push(format!("{} [{}]: {}", scenario.file, variant.name, why))
                }
            }
        }
    }
    (rows, not_measured)
}

/// Why a bench could not be done; the command line exits 2 on every one.
#[derive(Debug)]
pub enum Error {
    /// The scenarios did not load.
    Load(crate::lang::scenario::LoadFailures),
    /// The throughput sweep could not run.
    Sweep(sweep::Error),
    /// A temporary directory or the output file could not be made or written.
    Io(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Load(e) => write!(f, "{e}"),
            Error::Sweep(e) => write!(f, "the throughput sweep could not run: {e}"),
            Error::Io(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for Error {}

/// What a bench measured: the rendered tables, and where they were also written.
#[derive(Debug)]
pub struct BenchSummary {
    pub text: String,
    pub written: Option<PathBuf>,
}

fn sweep_rate(path: &std::path::Path, seeds: u64, jobs: usize) -> Result<f64, Error> {
    let tmp = tempfile::Builder::new()
        .prefix("faultline-bench-sweep-")
        .tempdir()
        .map_err(|e| Error::Io(format!("creating a temporary directory: {e}")))?;
    let out = tmp.path().join("out");
    let options = SweepOptions {
        paths: vec![path.to_path_buf()],
        seeds: 1..=seeds,
        jobs,
        shard: None,
        out: out.clone(),
        time_budget: None,
        resume: false,
        check_determinism: 0.0,
        variant: None,
        fail_fast: false,
        guided: false,
        corpus: None,
        overrides: Default::default(),
        quiet: true,
    };
    let (summary, ms) = timed(|| sweep::sweep(&options));
    summary.map_err(Error::Sweep)?;
    Ok(seeds as f64 / (ms / 1000.0))
}

/// The machine a benchmark ran on, for the documents it writes.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cores} core(s), {cpu}")
}

pub fn bench(options: &BenchOptions) -> Result<BenchSummary, Error> {
    let scenarios = crate::lang::scenario::load_all(&options.paths).map_err(Error::Load)?;
    eprintln!(
        "bench: {} scenario file(s), median of {} run(s) each",
        scenarios.len(),
        options.repeat
    );
    let (rows, not_measured) = rows(&scenarios, options.repeat);
    for line in &not_measured {
        eprintln!("bench: not measured: {line}");
    }
    let mut rates = Vec::new();
    for jobs in [1, 2] {
        eprintln!(
            "bench: sweeping {} over {} seeds on {jobs} job(s)",
            options.sweep.display(),
            options.sweep_seeds
        );
        rates.push((jobs, sweep_rate(&options.sweep, options.sweep_seeds, jobs)?));
    }
    let mut text = render(
        &rows,
        &rates,
        &options.sweep,
        options.sweep_seeds,
        peak_rss_mb(),
    );
    if !not_measured.is_empty() {
        text.push_str("\nNot measured (each variant's reason):\n\n");
        for line in &not_measured {
            text.push_str(&format!("- {line}\n"));
        }
    }
    if let Some(out) = &options.out {
        let mut file = text.clone();
        // Hand-written notes below the marker (profiles, analysis) survive a rerun.
        let old = crate::base::fsio::read_capped(out, 16 * 1024 * 1024)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default();
        if let Some(at) = old.find(NOTES_MARKER) {
            file.push('\n');
            file.push_str(&old[at..]);
        }
        crate::report::atomic_write(out, file.as_bytes()).map_err(|e| Error::Io(e.to_string()))?;
    }
    Ok(BenchSummary {
        text,
        written: options.out.clone(),
    })
}

pub fn render(
    rows: &[Row],
    rates: &[(usize, f64)],
    sweep: &std::path::Path,
    seeds: u64,
    rss_mb: f64,
) -> String {
    let mut md = String::from(
        "# Performance\n\nProduced by `cargo run --release -p faultline -- bench --out docs/performance.md` \
         (median of 3 runs per variant; release build). The *bare wall* column drives the same node \
         models through the same actions (the harness run's trail, replayed at the same simulated \
         times) with a bare turmoil loop: no scenario interpreter, trail, observations, fail-point \
         arming or checkers. *Overhead* is harness wall / bare wall; rows of a few milliseconds are \
         noisy, the total is the figure to read. A variant on a target build (`target:`) is measured \
         in that build's binary, both ways.\n\n## Runs: the harness against a bare turmoil loop\n\n",
    );
    md.push_str("| scenario | variant | simulated | harness wall | bare wall | overhead | sim-s per wall-s |\n");
    md.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {:.1} s | {:.1} ms | {:.1} ms | {:.2}x | {:.0} |\n",
            r.scenario,
            r.variant,
            r.sim_ms as f64 / 1000.0,
            r.harness_ms,
            r.bare_ms,
            r.ratio(),
            r.sim_per_wall()
        ));
    }
    let total_h: f64 = rows.iter().map(|r| r.harness_ms).sum();
    let total_b: f64 = rows.iter().map(|r| r.bare_ms).sum();
    md.push_str(&format!(
        "| **all** | | | **{total_h:.1} ms** | **{total_b:.1} ms** | **{:.2}x** | |\n\n",
        total_h / total_b.max(1e-6)
    ));
    let slowest = rows.iter().map(|r| r.harness_ms).fold(0.0, f64::max);
    md.push_str(&format!(
        "Slowest variant: {slowest:.1} ms of wall time.\n\n"
    ));
    md.push_str(&format!("## Sweep throughput: {} over {seeds} seeds\n\n| jobs | runs/s | time for 1000 seeds |\n|---:|---:|---:|\n", sweep.display()));
    for (jobs, rate) in rates {
        md.push_str(&format!(
            "| {jobs} | {rate:.1} | {:.0} s |\n",
            1000.0 / rate.max(1e-9)
        ));
    }
    md.push_str(&format!(
        "\nPeak memory (max RSS of the bench process): {rss_mb:.0} MiB.\n\nMachine: {}.\n",
        machine()
    ));
    md
}
