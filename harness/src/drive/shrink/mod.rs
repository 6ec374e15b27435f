//! `faultline shrink <report.json>`: reduce a failing run (random or scripted) to a
//! minimal scripted scenario that still fails the same way.
//!
//! Every action of a run (fault, fail-point arming, client op) is on its trail as a
//! step with its targets resolved. The shrinker turns that list into a scenario
//! (`sleep` to each action's time, then the action), checks that it reproduces the
//! failure, then delta-debugs (ddmin) over the actions, keeping a subset when its
//! run ends in the same outcome with a finding from the same checker. The output is
//! an ordinary scenario file, commented with where it came from; running it fails
//! until the defect is fixed.

use crate::base::action::Timed;
use crate::base::fsio;
use crate::lang::scenario::{self, Scenario};
use crate::lang::yaml::{self, Node};
use crate::report::{self, atomic_write};
use crate::sim::runner::{self, RunResult};
use serde_json::json;
use std::path::{Path, PathBuf};

pub mod schedule;
mod template;

pub use template::Template;

pub struct ShrinkOptions {
    pub report: PathBuf,
    pub out: Option<PathBuf>,
    /// Most candidate runs to try.
    pub budget: usize,
    pub quiet: bool,
}

pub use crate::sim::runner::target::Target;

/// The actions on a trail that took effect, in time order.
pub fn actions(result: &RunResult) -> Vec<Timed> {
    result.trail.actions()
}

/// The result of a shrink.
pub struct Shrunk {
    pub kept: Vec<Timed>,
    pub original: usize,
    pub runs: usize,
    pub exhausted: bool,
}

/// The kept actions with their waits shortened, and what that took.
pub struct Compacted {
    pub actions: Vec<Timed>,
    /// When the script ends (the heal phase begins).
    pub end_ms: u64,
    pub runs: usize,
    pub exhausted: bool,
}

/// Shorten each wait of a script (before its first action, between two, and
/// before its end), first to last, by bisection to within a tenth of what is
/// left of it: a wait is cut to the shortest tried length after which
/// `fails(actions, end)` still holds, and everything after it moves earlier by
/// as much. At most `budget` calls.
pub fn compact(
    actions: Vec<Timed>,
    end_ms: u64,
    budget: usize,
    fails: &mut dyn FnMut(&[Timed], u64) -> bool,
) -> Compacted {
    let mut actions = actions;
    let mut end = end_ms;
    let mut runs = 0;
    let mut exhausted = false;
    let shifted = |actions: &[Timed], from: usize, end: u64, by: u64| {
        let mut moved = actions.to_vec();
        for a in &mut moved[from..] {
            a.t_ms -= by;
        }
        (moved, end - by)
    };
    for gap in 0..=actions.len() {
        let before = if gap == 0 { 0 } else { actions[gap - 1].t_ms };
        let after = actions.get(gap).map_or(end, |a| a.t_ms);
        // `hi` is known to fail (the wait as it is), `lo` is not known to.
        let (mut lo, mut hi) = (0, after.saturating_sub(before));
        while hi > lo + (hi / 10).max(1) {
            if runs >= budget {
                exhausted = true;
                break;
            }
            let mid = lo + (hi - lo) / 2;
            let (a, e) = shifted(&actions, gap, end, after - before - mid);
            runs += 1;
            if fails(&a, e) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let cut = after - before - hi;
        if cut > 0 {
            (actions, end) = shifted(&actions, gap, end, cut);
        }
        if exhausted {
            break;
        }
    }
    Compacted {
        actions,
        end_ms: end,
        runs,
        exhausted,
    }
}

/// Delta-debug `actions` with `fails` (true: the subset still fails the same way),
/// using at most `budget` calls. Returns the smallest failing subset found.
pub fn ddmin<T: Clone>(
    items: Vec<T>,
    budget: usize,
    fails: &mut dyn FnMut(&[T]) -> bool,
) -> (Vec<T>, usize, bool) {
    let mut current = items;
    let mut runs = 0usize;
    let mut n = 2usize;
    while current.len() >= 2 {
        if runs >= budget {
            return (current, runs, true);
        }
        let chunk = current.len().div_ceil(n);
        let chunks: Vec<Vec<T>> = current.chunks(chunk).map(<[T]>::to_vec).collect();
        let mut reduced = false;
        for (i, part) in chunks.iter().enumerate() {
            if runs >= budget {
                return (current, runs, true);
            }
            runs += 1;
            if fails(part) {
                current = part.clone();
                n = 2;
                reduced = true;
                break;
            }
            if chunks.len() > 2 {
                let complement: Vec<T> = chunks
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .flat_map(|(_, c)| c.clone())
                    .collect();
                runs += 1;
                if fails(&complement) {
                    current = complement;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if n >= current.len() {
                break;
            }
            n = (n * 2).min(current.len());
        }
    }
    (current, runs, false)
}

/// Why a shrink could not be done; the command line exits 2 on every one.
#[derive(Debug)]
pub enum Error {
    /// The report, or the scenario it names, cannot be used; the text says why.
    Input(String),
    /// The shrunk scenario could not be written.
    Io(fsio::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Input(message) => write!(f, "{message}"),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

/// What a shrink made.
#[derive(Debug)]
pub struct ShrinkSummary {
    /// The shrunk scenario's name (its own, derived from the output file).
    pub name: String,
    /// The scenario text (also written to `--out` when given).
    pub text: String,
    pub kept: usize,
    pub original: usize,
    pub runs: usize,
    pub exhausted: bool,
}

/// The name a shrunk scenario gets: the output file's stem, or when it is printed,
/// the original's name with `-shrunk-seed<N>`.
pub fn shrunk_name(out: Option<&Path>, original: &str, seed: u64) -> String {
    out.and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && s != original)
        .unwrap_or_else(|| format!("{original}-shrunk-seed{seed}"))
}

pub fn shrink(options: &ShrinkOptions) -> Result<ShrinkSummary, Error> {
    let (original, target, scenario, tree) = load(options)?;
    let name = shrunk_name(options.out.as_deref(), &original.scenario, original.seed);
    let say = |line: String| {
        if !options.quiet {
            eprintln!("{line}");
        }
    };
    if original.schedule.is_some() {
        if scenario.chaos.is_some() {
            return shrink_chaos(options, &original, &scenario, &tree, &target, &name, &say);
        }
        // A chaos run of a model in a target's binary shrinks there, where its
        // schedule can be read.
        if let Some(summary) = elsewhere(options, &original, &scenario)? {
            return Ok(summary);
        }
    }
    let template = Template::new(&tree, &scenario, &original, &name).map_err(Error::Input)?;
    let all = actions(&original);
    say(format!(
        "shrink: {} [{}] seed {} ended {} ({}); {} action(s) on its trail; budget {} run(s)",
        original.scenario,
        original.variant,
        original.seed,
        target.outcome,
        target.checker,
        all.len(),
        options.budget
    ));
    // One candidate's run, or why it did not run. A candidate loads under the
    // original's path, wherever the shrunk file goes: targets are found from the
    // scenario's directory (faultline-targets.yaml), and the candidate's builds
    // are the original's.
    let attempt_until = |subset: &[Timed], end_ms: u64| -> Result<RunResult, String> {
        let candidate = template.render_until(subset, end_ms, None, "candidate");
        let s =
            scenario::load_text(original.scenario_path(), &candidate).map_err(|e| e.to_string())?;
        Ok(runner::run(&s, &s.variants[0], original.seed))
    };
    let attempt = |subset: &[Timed]| attempt_until(subset, template.end_ms());
    let mut try_subset = |subset: &[Timed]| attempt(subset).is_ok_and(|r| target.met_by(&r));
    if let Some(why) = replay_failure(&attempt(&all), &target) {
        return Err(Error::Input(format!(
            "replaying the trail's {} action(s) as a scenario does not end {} ({}): the run cannot be shrunk this way; {why}",
            all.len(),
            target.outcome,
            target.checker
        )));
    }
    let (kept, runs, exhausted) = ddmin(
        all.clone(),
        options.budget.saturating_sub(1),
        &mut try_subset,
    );
    // Then the waits: each one as short as the finding allows.
    let left = options.budget.saturating_sub(runs + 1);
    let mut fails_at =
        |a: &[Timed], end: u64| attempt_until(a, end).is_ok_and(|r| target.met_by(&r));
    let timed = compact(kept, template.end_ms(), left, &mut fails_at);
    let shrunk = Shrunk {
        original: all.len(),
        runs: runs + 1 + timed.runs,
        exhausted: exhausted || timed.exhausted,
        kept: timed.actions,
    };
    // The template was made from this variant, so it is there.
    let variant = run_variant(&scenario, &original).expect("the template's variant");
    let variants = pair(&scenario, &variant, &original);
    let comment = provenance(options, &original, &target, &shrunk)
        + &format!(
            "\nIts script takes {} of the original's {} before the heal phase.",
            crate::base::duration::format(std::time::Duration::from_millis(timed.end_ms)),
            crate::base::duration::format(std::time::Duration::from_millis(template.end_ms()))
        );
    let text = template.render_until(&shrunk.kept, timed.end_ms, Some(&variants), &comment);
    if let Some(out) = &options.out {
        atomic_write(out, text.as_bytes()).map_err(Error::Io)?;
    }
    say(format!(
        "shrink: kept {} of {} action(s) after {} run(s){}",
        shrunk.kept.len(),
        shrunk.original,
        shrunk.runs,
        if shrunk.exhausted {
            " (budget exhausted: it may shrink further with a larger --budget)"
        } else {
            " (1-minimal within ddmin)"
        }
    ));
    Ok(ShrinkSummary {
        name,
        text,
        kept: shrunk.kept.len(),
        original: shrunk.original,
        runs: shrunk.runs,
        exhausted: shrunk.exhausted,
    })
}

/// The report, the finding to keep ([`Target`]), and the scenario it ran (its
/// reader's tree too, for the shrunk file), loaded from where the run found it,
/// whichever directory this runs in.
fn load(options: &ShrinkOptions) -> Result<(RunResult, Target, Scenario, Node), Error> {
    let original = report::read_run(&options.report).map_err(Error::Input)?;
    let target = Target::of(&original).ok_or_else(|| {
        Error::Input(format!(
            "{}: the run ended {}; only a run that ended otherwise can be shrunk",
            options.report.display(),
            original.outcome
        ))
    })?;
    let path = Path::new(original.scenario_path());
    let bytes = fsio::read_capped(path, scenario::FILE_BYTES_MAX as u64)
        .map_err(|e| Error::Input(format!("the report's scenario: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::Input(format!(
            "the report's scenario {} is not UTF-8",
            crate::base::text::printable(&original.file)
        ))
    })?;
    let scenario = scenario::load_text(original.scenario_path(), &text)
        .map_err(|e| Error::Input(format!("the report's scenario no longer loads:\n{e}")))?;
    let tree =
        yaml::parse(&text, &yaml::Limits::default()).map_err(|e| Error::Input(e.to_string()))?;
    Ok((original, target, scenario, tree))
}

/// Why replaying the whole trail as a scenario does not fail the same way
/// (`None` when it does).
fn replay_failure(run: &Result<RunResult, String>, target: &Target) -> Option<String> {
    match run {
        Ok(run) if target.met_by(run) => None,
        Ok(run) => Some(format!(
            "it ended {}{}",
            run.outcome,
            run.findings
                .first()
                .map(|f| format!(" ({}: {})", f.checker, f.message))
                .unwrap_or_default()
        )),
        Err(e) => Some(format!(
            "it does not load (a harness defect: please report it):\n{e}"
        )),
    }
}

/// The variant a report's run ran: its own, or (a hunt's `hunt:KEY`) the
/// scenario's first with the run's bug modes.
fn run_variant(
    scenario: &Scenario,
    original: &RunResult,
) -> Option<crate::lang::scenario::Variant> {
    let named = scenario.variant(&original.variant);
    let base = named.or_else(|| crate::drive::hunt::plan::base_variant(scenario))?;
    let mut v = base.copy();
    if v.target.is_none() && !original.bugs.0.is_empty() {
        v.bugs = original.bugs.clone();
    }
    Some(v)
}

/// Shrink a chaos run as its schedule (`schedule.rs`) and write the scenario
/// that plays what is left, with a buggy/fixed pair named for what it is.
fn shrink_chaos(
    options: &ShrinkOptions,
    original: &RunResult,
    scenario: &Scenario,
    tree: &Node,
    target: &Target,
    name: &str,
    say: &dyn Fn(String),
) -> Result<ShrinkSummary, Error> {
    let variant = run_variant(scenario, original).ok_or_else(|| {
        Error::Input(format!(
            "the report's variant `{}` is not in its scenario",
            original.variant
        ))
    })?;
    let json = original.schedule.as_ref().expect("a chaos run").to_string();
    let schedule = scenario::load_schedule(scenario, "the report's schedule", &json)
        .map_err(|e| Error::Input(format!("the report's schedule does not load:\n{e}")))?;
    say(format!(
        "shrink: {} [{}] seed {} ended {}; {} scheduled fault(s) in a {} window; budget {} run(s)",
        original.scenario,
        original.variant,
        original.seed,
        target.describe(),
        schedule.faults.len(),
        crate::base::duration::format(schedule.window),
        options.budget
    ));
    // The run again, with its ops recorded: the shrink starts from exactly it.
    let config_seed = original.swarm.as_ref().and_then(|d| d.config_seed);
    let inputs = runner::Inputs {
        schedule: Some(schedule),
        record_ops: true,
        config_seed,
        ..Default::default()
    };
    let again = runner::run_with(scenario, &variant, original.seed, &inputs);
    if !target.met_by(&again) {
        return Err(Error::Input(format!(
            "playing the report's schedule again does not end {} (it ended {}): a harness defect, please report it",
            target.describe(),
            again.outcome
        )));
    }
    let played = crate::drive::hunt::guided::schedule_of(scenario, &again)
        .ok_or_else(|| Error::Input("the run recorded no schedule".into()))?;
    let kept = schedule::shrink(
        scenario,
        &variant,
        original.seed,
        &inputs,
        target,
        played,
        options.budget.saturating_sub(1),
        say,
    );
    let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
    let variants = pair(scenario, &variant, original);
    let comment = format!(
        "Shrunk by `faultline shrink` from {}\n\
         scenario {} ({}), variant {}, seed {}, harness {}.\n\
         The original run ended {}; the `{}` variant below plays what is left of its\n\
         schedule and ends the same way: {}.",
        options.report.display(),
        original.scenario,
        original.file,
        original.variant,
        original.seed,
        original.harness_version,
        target.describe(),
        variants.keys().next().map(String::as_str).unwrap_or("?"),
        kept.describe(),
    );
    let text = crate::lang::scenario::schedule::render::scenario(
        tree,
        name,
        &serde_json::Value::Object(variants),
        original.seed,
        config_seed,
        &kept.schedule.to_json(&names),
        &comment,
    );
    if let Some(out) = &options.out {
        atomic_write(out, text.as_bytes()).map_err(Error::Io)?;
    }
    say(format!("shrink: kept {}", kept.describe()));
    Ok(ShrinkSummary {
        name: name.to_string(),
        text,
        kept: kept.schedule.faults.len() + kept.schedule.ops.as_ref().map_or(0, Vec::len),
        original: kept.faults_before + kept.ops_before,
        runs: kept.runs + 1,
        exhausted: kept.exhausted,
    })
}

/// The shrunk file's variants: the find's (its bug modes or build, expecting
/// the finding) named `buggy`, and the same with those keys fixed (or the
/// fixed build) named `fixed`, expecting `converged`; a find of code with no
/// key buggy keeps one variant, under its own name, expecting `converged` (it
/// fails until the defect is fixed).
fn pair(
    scenario: &Scenario,
    variant: &crate::lang::scenario::Variant,
    original: &RunResult,
) -> serde_json::Map<String, serde_json::Value> {
    use faultline_api::BugMode;
    let mode = |m: &BugMode| serde_json::to_value(m).expect("serializes");
    let outcomes: Vec<&str> = vec![original.outcome.name()];
    let mut out = serde_json::Map::new();
    let mut body = json!({ "expect": outcomes });
    if let Some(t) = &variant.target {
        body["target"] = json!(t);
    }
    if variant.params.as_object().is_some_and(|p| !p.is_empty()) {
        body["params"] = variant.params.clone();
    }
    let bugs: serde_json::Map<String, serde_json::Value> = variant
        .bugs
        .0
        .iter()
        .map(|(k, m)| (k.clone(), mode(m)))
        .collect();
    if !bugs.is_empty() {
        body["bugs"] = serde_json::Value::Object(bugs.clone());
    }
    let buggy_keys: Vec<&String> = variant
        .bugs
        .0
        .iter()
        .filter(|(_, m)| **m == BugMode::Buggy)
        .map(|(k, _)| k)
        .collect();
    if !buggy_keys.is_empty() {
        let mut fixed = body.clone();
        fixed["expect"] = json!("converged");
        let all_fixed: serde_json::Map<String, serde_json::Value> =
            bugs.keys().map(|k| (k.clone(), json!("fixed"))).collect();
        fixed["bugs"] = serde_json::Value::Object(all_fixed);
        out.insert("buggy".into(), body);
        out.insert("fixed".into(), fixed);
        return out;
    }
    if variant.target.is_some() {
        let own = crate::drive::hunt::plan::build_bugs(scenario, variant);
        let keys: Vec<&String> = own
            .0
            .iter()
            .filter(|(_, m)| **m == BugMode::Buggy)
            .map(|(k, _)| k)
            .collect();
        let fixed_build = scenario.variants.iter().find(|v| {
            let b = crate::drive::hunt::plan::build_bugs(scenario, v);
            !keys.is_empty() && keys.iter().all(|k| b.0.get(*k) == Some(&BugMode::Fixed))
        });
        if let Some(fv) = fixed_build {
            let mut fixed = body.clone();
            fixed["expect"] = json!("converged");
            fixed["target"] = json!(fv.target);
            out.insert("buggy".into(), body);
            out.insert("fixed".into(), fixed);
            return out;
        }
    }
    body["expect"] = json!("converged");
    out.insert(variant.name.clone(), body);
    out
}

/// Hand the shrink of a run on a target build to that build's binary (the
/// faultline command line with the model in it), which has the model to read
/// its schedule; `None` when there is no such binary to ask.
fn elsewhere(
    options: &ShrinkOptions,
    original: &RunResult,
    scenario: &Scenario,
) -> Result<Option<ShrinkSummary>, Error> {
    let Some(variant) = scenario.variant(&original.variant) else {
        return Ok(None);
    };
    let build =
        crate::lang::targets::elsewhere(original.scenario_path(), variant.target.as_deref())
            .map_err(Error::Input)?;
    let Some(build) = build else { return Ok(None) };
    let mut command = std::process::Command::new(&build.binary);
    command
        .arg("shrink")
        .arg(&options.report)
        .arg("--budget")
        .arg(options.budget.to_string());
    if let Some(out) = &options.out {
        command.arg("--out").arg(out);
    }
    if options.quiet {
        command.arg("-q");
    }
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| Error::Input(format!("{}: {e}", build.binary.display())))?;
    if !output.status.success() {
        return Err(Error::Input(format!(
            "{} could not shrink it (exit {})",
            build.binary.display(),
            output.status.code().unwrap_or(-1)
        )));
    }
    let text = match &options.out {
        Some(out) => std::fs::read_to_string(out).unwrap_or_default(),
        None => String::from_utf8_lossy(&output.stdout).into_owned(),
    };
    Ok(Some(ShrinkSummary {
        name: shrunk_name(options.out.as_deref(), &original.scenario, original.seed),
        text,
        kept: 0,
        original: 0,
        runs: 0,
        exhausted: false,
    }))
}

fn provenance(
    options: &ShrinkOptions,
    original: &RunResult,
    target: &Target,
    shrunk: &Shrunk,
) -> String {
    format!(
        "Shrunk by `faultline shrink` from {}\n\
         scenario {} ({}), variant {}, seed {}, harness {}.\n\
         The original run ended {} (checker `{}`); this scenario ends the same way\n\
         with {} of its {} actions ({} shrink run(s){}).\n\
         Its variants are named for what they are: `buggy` (the run's bug modes or\n\
         build) expects the finding, `fixed` expects `converged`; a variant of the\n\
         original's own name expects `converged` and fails until the defect is fixed.",
        options.report.display(),
        original.scenario,
        original.file,
        original.variant,
        original.seed,
        original.harness_version,
        target.outcome,
        target.checker,
        shrunk.kept.len(),
        shrunk.original,
        shrunk.runs,
        if shrunk.exhausted {
            ", budget exhausted"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests;
