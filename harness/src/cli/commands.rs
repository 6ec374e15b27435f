//! The commands that run or inspect single scenarios: `run`, `validate`, `list`,
//! `replay`, `report`.

use super::exit;
use super::term::{self, Verbosity};
use crate::base::text::printable;
use crate::lang::scenario::{self, Scenario};
use crate::report::{self, Detail};
use crate::sim::runner;
use std::path::{Path, PathBuf};

// `faultline run`'s flags, as clap reads them and the command takes them
// (`rerun-failed` makes one from its own, [`RerunArgs`]).
#[derive(clap::Args, Clone, Debug)]
pub struct RunArgs {
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Seed for every run (default: each scenario's `defaults.seed`, else 1);
    /// one seed: a range of them is `faultline sweep PATHS --seeds 1..5`.
    #[arg(long, value_parser = parse_one_seed)]
    pub seed: Option<u64>,
    /// Run only this variant.
    #[arg(long)]
    pub variant: Option<String>,
    /// Write report.json per run, junit.xml and summary.md here.
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Print one JSON object per variant run instead of the readable summary.
    #[arg(long)]
    pub json: bool,
    /// Stop after the first run that misses its expectation.
    #[arg(long)]
    pub fail_fast: bool,
    /// Override a bug mode in every variant run: `--bug HDDS-10798=buggy`
    /// (repeatable; the replay of a `hunt` find uses it).
    #[arg(long = "bug", value_name = "KEY=MODE")]
    pub bugs: Vec<String>,
    /// Override a model param in every variant run: `--param check_quorum=false`
    /// (repeatable; VALUE is YAML; a chaos section no longer draws it).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// How much to print: the global `--verbose`/`--quiet`, set by `main_with`.
    #[arg(skip)]
    pub verbosity: Verbosity,
}

impl RunArgs {
    /// `--bug KEY=MODE` and `--param NAME=VALUE` for every variant run.
    pub fn overrides(&self) -> scenario::Overrides {
        scenario::Overrides {
            bugs: self.bugs.clone(),
            params: self.params.clone(),
        }
    }
}

// `faultline rerun-failed`'s flags.
#[derive(clap::Args, Debug)]
pub struct RerunArgs {
    pub dir: PathBuf,
    /// Write report.json per run, junit.xml and summary.md here.
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Print one JSON object per run instead of the readable summary.
    #[arg(long)]
    pub json: bool,
    /// Stop after the first run that misses its expectation.
    #[arg(long)]
    pub fail_fast: bool,
}

impl RerunArgs {
    /// The reruns' own flags: no paths, seed or variant (each failed run names
    /// its own), and the sweep's overrides added by [`rerun_failed`].
    pub fn run_args(&self, verbosity: Verbosity) -> RunArgs {
        RunArgs {
            paths: Vec::new(),
            seed: None,
            variant: None,
            report_dir: self.report_dir.clone(),
            json: self.json,
            fail_fast: self.fail_fast,
            bugs: Vec::new(),
            params: Vec::new(),
            verbosity,
        }
    }
}

/// `run --seed`: one seed. A range (or a list) is a sweep's, and says so.
fn parse_one_seed(text: &str) -> Result<u64, String> {
    if text.contains("..") || text.contains(',') {
        return Err(format!(
            "`run` takes one seed; to run seeds {text}, use `faultline sweep PATHS --seeds {}`",
            text.replace(',', "..")
        ));
    }
    text.parse().map_err(|_| {
        format!(
            "a seed is a whole number from 0 to {}; a range of seeds is `faultline sweep PATHS --seeds 1..5`",
            u64::MAX
        )
    })
}

fn load(paths: &[PathBuf]) -> Option<Vec<Scenario>> {
    match scenario::load_all(paths) {
        Ok(scenarios) => Some(scenarios),
        Err(failures) => {
            term::load_failures(&failures);
            None
        }
    }
}

fn no_such_variant(scenarios: &[Scenario], variant: Option<&str>) -> bool {
    match variant {
        Some(v) if !scenarios.iter().any(|s| s.variant(v).is_some()) => {
            term::error(format!(
                "no scenario has a variant named `{}`; the variants are: {}",
                printable(v),
                Scenario::variants_of_all(scenarios)
            ));
            true
        }
        _ => false,
    }
}

pub fn run(args: &RunArgs) -> u8 {
    let Some(mut scenarios) = load(&args.paths) else {
        return exit::BAD_INPUT;
    };
    if let Err(message) = args.overrides().apply(&mut scenarios) {
        eprintln!("error: {}", crate::base::text::printable(&message));
        return exit::BAD_INPUT;
    }
    if no_such_variant(&scenarios, args.variant.as_deref()) {
        return exit::BAD_INPUT;
    }
    let mut jobs = Vec::new();
    for (si, s) in scenarios.iter().enumerate() {
        for (vi, v) in s.variants.iter().enumerate() {
            if args.variant.as_ref().is_none_or(|name| v.name == *name) {
                jobs.push((si, vi, args.seed.unwrap_or(s.settings.seed)));
            }
        }
    }
    run_jobs(&scenarios, &jobs, args)
}

/// Run each (scenario, variant, seed) in order, as `run` does: print, write
/// reports, and give the exit code of the set.
fn run_jobs(scenarios: &[Scenario], jobs: &[(usize, usize, u64)], args: &RunArgs) -> u8 {
    let planned = jobs.len();
    let mut records: Vec<report::RunRecord> = Vec::new();
    let mut not_run: Vec<report::NotRun> = Vec::new();
    let mut last_report: Option<PathBuf> = None;
    // `--bug` overrides are a run input: recorded in the report and passed
    // again by every replay (to a target's binary too).
    let overrides = args.overrides();
    let bugs = match scenario::overrides::bug_set(scenarios, &args.bugs) {
        Ok(bugs) => bugs,
        Err(message) => {
            eprintln!("error: {}", crate::base::text::printable(&message));
            return exit::BAD_INPUT;
        }
    };
    for &(si, vi, seed) in jobs {
        let scenario = &scenarios[si];
        let v = &scenario.variants[vi];
        // A variant whose build is missing is not run, and said so; the others go ahead.
        if let Some(reason) = scenario.unbuilt(v) {
            let skipped = report::NotRun::of(scenario, &v.name, 1, reason);
            term::warning(skipped.line());
            not_run.push(skipped);
            continue;
        }
        let inputs = runner::Inputs {
            bugs: bugs.clone(),
            ..Default::default()
        };
        let result = judged_run(scenario, v, seed, &inputs, &overrides);
        let mut record = report::RunRecord::of(&result).started_now();
        let mut html = None;
        if let Some(dir) = &args.report_dir {
            // Written as each run ends, so a later failure loses nothing.
            match report::write_run(dir, &result) {
                Ok(path) => {
                    record.report = path.strip_prefix(dir).ok().map(|p| p.display().to_string());
                    html = Some(path.with_extension("html"));
                }
                Err(e) => {
                    term::error(format!(
                        "writing the report of {} [{}]: {e}",
                        printable(&result.scenario),
                        printable(&result.variant)
                    ));
                    return exit::BAD_INPUT;
                }
            }
        }
        if args.json {
            println!(
                "{}",
                serde_json::to_string(&record).expect("records serialize")
            );
        } else if args.verbosity != Verbosity::Quiet || !result.passed {
            anstream::print!("{}", report::run_lines(&result, args.verbosity.detail()));
            if let Some(html) = html.as_ref().filter(|_| !result.passed) {
                println!("  report: {}", printable(&html.display().to_string()));
            }
        }
        if let Some(html) = html {
            last_report = Some(html);
        }
        let failed = !record.passed;
        records.push(record);
        if failed && args.fail_fast {
            break;
        }
    }
    let incomplete = report::not_run_note(&not_run);
    if let Some(dir) = &args.report_dir {
        if let Err(e) =
            report::write_summaries_not_run(dir, &records, incomplete.as_deref(), &not_run, "")
        {
            term::error(format!("writing summaries: {e}"));
            return exit::BAD_INPUT;
        }
    }
    if !args.json && args.verbosity != Verbosity::Quiet {
        print_tally(args, &records, &not_run, planned, last_report.as_ref());
    }
    if let Some(note) = &incomplete {
        term::warning(format!("incomplete: {note}"));
    }
    // Runs that were asked for and not done: incomplete, never green.
    exit::of_sweep(false, not_run.is_empty(), &records)
}

/// One run of a variant as `run` judges it: the overrides stamped on it for its
/// replay, its fixed twin's departure, and the cause it names checked.
fn judged_run(
    scenario: &Scenario,
    v: &scenario::Variant,
    seed: u64,
    inputs: &runner::Inputs,
    overrides: &scenario::Overrides,
) -> runner::RunResult {
    let mut result = runner::run_with(scenario, v, seed, inputs);
    // The replay of a run with `--param` overrides needs them too.
    result.stamp_overrides(overrides);
    // A failed run with a bug key on is explained by its fixed twin.
    result.differential = runner::differential(scenario, v, seed, inputs, &result);
    // Otherwise a fault named as the cause is checked by one rerun without it.
    if !result.departed() {
        result.cause_check = runner::confirm_causes(scenario, v, seed, inputs, &mut result);
    }
    result
}

/// The closing lines of `run`: how many passed, failed, were not run or not
/// started, and where to look.
fn print_tally(
    args: &RunArgs,
    records: &[report::RunRecord],
    not_run: &[report::NotRun],
    planned: usize,
    last_report: Option<&PathBuf>,
) {
    let failed = records.iter().filter(|r| !r.passed).count();
    let mut line = format!(
        "{} run(s): {} passed, {failed} failed",
        records.len(),
        records.len() - failed
    );
    if !not_run.is_empty() {
        line.push_str(&format!(", {} not run (target not built)", not_run.len()));
    }
    if records.len() + not_run.len() < planned {
        line.push_str(&format!(
            " (--fail-fast: {} run(s) not started)",
            planned - records.len() - not_run.len()
        ));
    }
    println!("{line}");
    // Where to look: the one run's page, else the summary over all of them.
    if let Some(dir) = &args.report_dir {
        let shown = match (last_report, records.len()) {
            (Some(html), 1) => html.clone(),
            _ => dir.join("summary.md"),
        };
        println!("report: {}", printable(&shown.display().to_string()));
    }
}

/// `faultline rerun-failed DIR`: the failing runs of the sweep in DIR (its
/// `--out`), each rerun as `run` runs one, with the sweep's `--bug` and
/// `--param`. The exit code is that of the reruns: 0 when every one now passes.
pub fn rerun_failed(dir: &Path, args: &RunArgs) -> u8 {
    let shown = printable(&dir.display().to_string()).into_owned();
    let meta = match crate::drive::sweep::meta::read(dir) {
        Ok(Some(meta)) => meta,
        Ok(None) => {
            term::error(format!(
                "{shown}: no {}: not the --out directory of a sweep",
                crate::drive::sweep::meta::META_FILE
            ));
            return exit::BAD_INPUT;
        }
        Err(message) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    let results = match crate::drive::sweep::results::read(
        &dir.join(crate::drive::sweep::results::RESULTS_FILE),
    ) {
        Ok(results) => results,
        Err(e) => {
            term::error(e);
            return exit::BAD_INPUT;
        }
    };
    if results.records.is_empty() {
        term::warning(format!(
            "{shown}: the sweep recorded no run: nothing to rerun"
        ));
        return exit::INCOMPLETE;
    }
    // Each failing run once (a record may repeat in a resumed sweep), by file, variant, seed.
    // A guided sweep's derived run was given its schedule: its seed alone is
    // another run, so it is replayed from its report instead.
    let derived = |r: &&report::RunRecord| r.guided.as_ref().is_some_and(|g| g.origin != "fresh");
    for r in results.records.iter().filter(|r| !r.passed).filter(derived) {
        term::warning(format!(
            "not rerun (a guided search's derived run, given its schedule): {}",
            printable(&r.replay)
        ));
    }
    let failed: std::collections::BTreeSet<(String, String, u64)> = results
        .records
        .iter()
        .filter(|r| !r.passed && !derived(r))
        .map(|r| (r.file.clone(), r.variant.clone(), r.seed))
        .collect();
    if failed.is_empty() {
        println!(
            "{shown}: no failed run to rerun ({} run(s) recorded, every one passed)",
            results.records.len()
        );
        return exit::OK;
    }
    let files: std::collections::BTreeSet<&str> =
        failed.iter().map(|(f, _, _)| f.as_str()).collect();
    let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    let Some(mut scenarios) = load(&paths) else {
        return exit::BAD_INPUT;
    };
    let overrides = scenario::Overrides {
        bugs: meta.bugs,
        params: meta.params,
    };
    if let Err(message) = overrides.apply(&mut scenarios) {
        term::error(format!("the sweep's overrides no longer apply: {message}"));
        return exit::BAD_INPUT;
    }
    let mut jobs = Vec::new();
    for (file, variant, seed) in &failed {
        let Some(si) = scenarios.iter().position(|s| s.file == *file) else {
            term::error(format!("{}: not loaded", printable(file)));
            return exit::BAD_INPUT;
        };
        let Some(vi) = scenarios[si]
            .variants
            .iter()
            .position(|v| v.name == *variant)
        else {
            term::error(format!(
                "{} has no variant `{}` any more (it has: {})",
                printable(file),
                printable(variant),
                scenarios[si].variant_names()
            ));
            return exit::BAD_INPUT;
        };
        jobs.push((si, vi, *seed));
    }
    if !args.json && args.verbosity != Verbosity::Quiet {
        println!("rerunning {} failed run(s) of {shown}", jobs.len());
    }
    let args = RunArgs {
        bugs: overrides.bugs,
        params: overrides.params,
        ..args.clone()
    };
    run_jobs(&scenarios, &jobs, &args)
}

pub fn validate(paths: &[PathBuf], verbosity: Verbosity) -> u8 {
    let Some(scenarios) = load(paths) else {
        return exit::BAD_INPUT;
    };
    let mut unchecked = 0;
    for s in &scenarios {
        let unbuilt: Vec<(String, String)> = s
            .variants
            .iter()
            .filter_map(|v| s.unbuilt(v).map(|why| (v.name.clone(), why)))
            .collect();
        for (variant, why) in &unbuilt {
            term::warning(format!(
                "{} [{}] not checked: {}",
                printable(&s.file),
                printable(variant),
                printable(why)
            ));
        }
        unchecked += unbuilt.len();
        if verbosity == Verbosity::Quiet {
            continue;
        }
        if !unbuilt.is_empty() && unbuilt.len() == s.variants.len() && s.steps.is_empty() {
            // Only what dispatch needs was read: the build checks the rest.
            println!(
                "not checked {} ({}; variants: {}): no build of it is built",
                printable(&s.file),
                s.model.info().name,
                s.variant_names()
            );
            continue;
        }
        println!(
            "ok {} ({}; {} step(s); variants: {})",
            printable(&s.file),
            s.model.info().name,
            s.steps.len(),
            s.variant_names()
        );
    }
    if unchecked > 0 {
        // What only a missing build can check was not checked: not a pass.
        term::warning(format!(
            "incomplete: {unchecked} variant(s) not checked: their target is not built"
        ));
        return exit::INCOMPLETE;
    }
    exit::OK
}

pub fn replay(path: &Path, verbosity: Verbosity) -> u8 {
    let saved = match report::read_run(path) {
        Ok(r) => r,
        Err(message) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    let mut scenario = match scenario::load(Path::new(saved.scenario_path())) {
        Ok(s) => s,
        Err(e) => {
            term::error(format!(
                "the report's scenario {} no longer loads:\n{e}",
                printable(saved.scenario_path())
            ));
            return exit::BAD_INPUT;
        }
    };
    // The run's `--param` overrides, as it had them.
    let overrides = scenario::Overrides {
        bugs: Vec::new(),
        params: saved.param_overrides.clone(),
    };
    if let Err(message) = overrides.apply(std::slice::from_mut(&mut scenario)) {
        term::error(format!(
            "the report's --param overrides no longer apply: {message}"
        ));
        return exit::BAD_INPUT;
    }
    if scenario.sha256 != saved.scenario_sha256 {
        term::warning(format!(
            "{} changed since the report was written (sha256 differs)",
            printable(&saved.file)
        ));
    }
    let Some(variant) = scenario.variant(&saved.variant) else {
        term::error(format!(
            "{} has no variant `{}` any more (it has: {})",
            printable(&saved.file),
            printable(&saved.variant),
            scenario.variant_names()
        ));
        return exit::BAD_INPUT;
    };
    if saved.target.is_some() && variant.target != saved.target {
        term::warning(format!(
            "variant `{}` runs on {} now; the report's run was on {}",
            printable(&saved.variant),
            printable(variant.target.as_deref().unwrap_or("the built-in model")),
            printable(saved.target.as_deref().unwrap_or("the built-in model"))
        ));
    }
    let inputs = match replay_inputs(&scenario, variant, &saved) {
        Ok(inputs) => inputs,
        Err(message) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    let rerun = runner::run_with(&scenario, variant, saved.seed, &inputs);
    let detail = if verbosity == Verbosity::Verbose {
        Detail::Full
    } else {
        Detail::Normal
    };
    anstream::print!("{}", report::run_lines(&rerun, detail));
    if rerun.trail_digest == saved.trail_digest {
        println!("replay: same trail digest {}", rerun.trail_digest);
        exit::OK
    } else {
        println!(
            "replay: DIFFERENT trail digest: saved {} now {}",
            printable(&saved.trail_digest),
            rerun.trail_digest
        );
        if let Some((i, a, b)) =
            crate::base::trail::first_difference(&saved.trail.events, &rerun.trail.events)
        {
            let show = |e: Option<&crate::base::trail::Event>| {
                e.map_or_else(
                    || "<end of trail>".to_string(),
                    |e| printable(&serde_json::to_string(e).unwrap_or_default()).into_owned(),
                )
            };
            println!(
                "  first difference at event {i}:\n    saved: {}\n    now:   {}",
                show(a),
                show(b)
            );
        }
        exit::NONDETERMINISM
    }
}

pub fn render_report(path: &Path, output: Option<&Path>) -> u8 {
    let saved = match report::read_run(path) {
        Ok(r) => r,
        Err(message) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    let out = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| path.with_extension("html"));
    if let Err(e) = report::atomic_write(&out, report::run_html(&saved).as_bytes()) {
        term::error(e);
        return exit::BAD_INPUT;
    }
    println!("wrote {}", printable(&out.display().to_string()));
    exit::OK
}

/// `faultline history`: a saved run's client history, as JSON lines or EDN.
pub fn export_history(
    path: &Path,
    shape: Option<&crate::judge::history::EdnShape>,
    out: Option<&Path>,
) -> u8 {
    let saved = match report::read_run(path) {
        Ok(r) => r,
        Err(message) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    let history = &saved.clients.history.history;
    // A shape that has no form for some of the ops says so: an export that
    // silently drops them would read as the whole history.
    if let Some(shape) = shape {
        let left = crate::judge::history::left_out(history, shape);
        let n: usize = left.values().sum();
        let which = left
            .iter()
            .map(|(f, k)| format!("{k} {}", printable(f)))
            .collect::<Vec<_>>()
            .join(", ");
        if n > 0 && n == history.len() {
            term::error(format!(
                "this shape fits none of the history's {n} op(s) ({which}); \
                 `--shape generic` exports every op, `register` takes reads and writes, \
                 `list-append` appends and reads"
            ));
            return exit::BAD_INPUT;
        }
        if n > 0 {
            term::warning(format!(
                "left out {n} of {} op(s) that this shape has no form for: {which}",
                history.len()
            ));
        }
    }
    let text = match shape {
        Some(shape) => crate::judge::history::to_edn(history, shape),
        None => crate::judge::history::to_jsonl(history),
    };
    match out {
        Some(out) => {
            if let Err(e) = report::atomic_write(out, text.as_bytes()) {
                term::error(e);
                return exit::BAD_INPUT;
            }
            println!(
                "wrote {} ({} op(s))",
                printable(&out.display().to_string()),
                history.len()
            );
        }
        None => print!("{text}"),
    }
    exit::OK
}

/// The inputs a saved run had besides its scenario, variant and seed: its bug
/// overrides, its schedule when the schedule was given rather than drawn, and
/// the seed its chaos configuration was drawn from when not its own.
/// A report written before overrides were recorded has only its bug modes:
/// those the variant does not have are laid over it again.
fn replay_inputs(
    scenario: &Scenario,
    variant: &scenario::Variant,
    saved: &runner::RunResult,
) -> Result<runner::Inputs, String> {
    let mut bugs = saved.bug_overrides.clone();
    if variant.target.is_none() {
        for (key, mode) in &saved.bugs.0 {
            // A key the variant does not name runs fixed.
            let declared = variant.bugs.0.get(key).copied();
            if declared.unwrap_or(faultline_api::BugMode::Fixed) != *mode {
                bugs.0.entry(key.clone()).or_insert(*mode);
            }
        }
    }
    let info = scenario.model.info();
    if let Some(key) = bugs.0.keys().find(|k| info.bug(k).is_none()) {
        return Err(format!(
            "the report's bug `{}` is not a bug of model `{}` any more",
            printable(key),
            info.name
        ));
    }
    let schedule = match saved.schedule.as_ref().filter(|_| saved.schedule_given) {
        Some(json) => Some(
            scenario::load_schedule(scenario, "the report's schedule", &json.to_string())
                .map_err(|e| format!("the report's schedule does not load:\n{e}"))?,
        ),
        None => None,
    };
    Ok(runner::Inputs {
        schedule,
        bugs,
        config_seed: saved.swarm.as_ref().and_then(|d| d.config_seed),
        ..Default::default()
    })
}
