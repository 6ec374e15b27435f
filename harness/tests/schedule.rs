//! A chaos run is a schedule: drawn before the window opens, recorded in the
//! result, and played back (given to a run, or written in the scenario) to the
//! same trail; faults do not move each other; a fault that finds nothing to act
//! on is recorded as skipped.

use faultline::base::action::Acted;
use faultline::base::trail::Data;
use faultline::lang::scenario::{self, Scenario};
use faultline::sim::runner::{self, Inputs, RunResult};
use std::collections::BTreeMap;

fn bundled(path: &str) -> Scenario {
    let file = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    scenario::load(std::path::Path::new(&file)).expect("bundled scenario loads")
}

/// A scenario over a model's whole domain with a short window.
fn auto(model: &str, nodes: &str, window: &str) -> Scenario {
    let text = format!("model: {model}\nnodes: {nodes}\nchaos: {{auto: true, window: {window}}}\n");
    scenario::load_str(&format!("{model}-auto.yaml"), &text).expect("valid")
}

/// A trail's events without the scenario line they came from (two files of
/// one run differ only there).
fn events(result: &RunResult) -> Vec<String> {
    result
        .trail
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.line = None;
            serde_json::to_string(&e).unwrap()
        })
        .collect()
}

fn played(
    scenario: &Scenario,
    result: &RunResult,
) -> faultline::lang::scenario::schedule::Schedule {
    let json = result
        .schedule
        .as_ref()
        .expect("a chaos run records its schedule");
    scenario::load_schedule(scenario, "report.json", &json.to_string())
        .unwrap_or_else(|e| panic!("the recorded schedule loads: {e}"))
}

/// When each scheduled fault began (its first action), by schedule entry.
fn begins(result: &RunResult) -> BTreeMap<u32, u64> {
    let mut out = BTreeMap::new();
    for e in result.trail.iter() {
        if let Data::Action(Acted { fault: Some(f), .. }) = &e.data {
            out.entry(*f).or_insert(e.t_ms);
        }
    }
    out
}

#[test]
fn a_recorded_schedule_replays_to_the_same_trail() {
    for (path, scenario) in [
        ("raftkv/chaos.yaml", bundled("scenarios/raftkv/chaos.yaml")),
        ("raftkv auto", auto("raftkv", "[n1, n2, n3]", "10s")),
        ("zookeeper auto", auto("zookeeper", "[zk1, zk2, zk3]", "8s")),
    ] {
        let variant = &scenario.variants[0];
        for seed in 1..=2 {
            let drawn = runner::run(&scenario, variant, seed);
            let schedule = played(&scenario, &drawn);
            assert!(!schedule.faults.is_empty(), "{path} seed {seed}: no faults");
            let inputs = Inputs {
                schedule: Some(schedule),
                ..Default::default()
            };
            let given = runner::run_with(&scenario, variant, seed, &inputs);
            assert_eq!(
                drawn.trail_digest, given.trail_digest,
                "{path} seed {seed}: the schedule given back is not the run drawn"
            );
            assert!(given.schedule_given && !drawn.schedule_given);
        }
    }
}

#[test]
fn dropping_one_fault_leaves_every_other_fault_where_it_was() {
    let scenario = auto("raftkv", "[n1, n2, n3]", "15s");
    let variant = &scenario.variants[0];
    let base = runner::run(&scenario, variant, 5);
    let schedule = played(&scenario, &base);
    assert!(schedule.faults.len() > 4);
    let dropped = schedule.faults.len() / 2;
    let mut edited = schedule.clone();
    edited.faults.remove(dropped);
    let inputs = Inputs {
        schedule: Some(edited),
        ..Default::default()
    };
    let after = runner::run_with(&scenario, variant, 5, &inputs);
    let (before, later) = (begins(&base), begins(&after));
    let mut compared = 0;
    for (index, t_ms) in &before {
        let i = *index as usize;
        if i == dropped {
            continue;
        }
        // Entries after the dropped one moved up by one in the edited schedule.
        let j = if i > dropped { i - 1 } else { i } as u32;
        if let Some(t) = later.get(&j) {
            assert_eq!(
                t, t_ms,
                "fault #{i} moved when fault #{dropped} was dropped"
            );
            compared += 1;
        }
    }
    assert!(
        compared + 2 >= before.len(),
        "{compared} of {} compared",
        before.len()
    );
    // The planned times are the schedule's, whatever the cluster did.
    for (i, f) in schedule.faults.iter().enumerate() {
        if let Some(t) = before.get(&(i as u32)) {
            assert!(
                *t >= f.at.as_millis() as u64,
                "fault #{i} began before its time"
            );
        }
    }
}

#[test]
fn a_schedule_in_the_scenario_plays_instead_of_the_draw() {
    let scenario = auto("raftkv", "[n1, n2, n3]", "10s");
    let drawn = runner::run(&scenario, &scenario.variants[0], 2);
    let dir = tempfile::tempdir().expect("temp dir");
    let schedule = drawn.schedule.clone().expect("recorded");
    std::fs::write(dir.path().join("s.schedule.json"), schedule.to_string()).unwrap();
    let text = "model: raftkv\nnodes: [n1, n2, n3]\ndefaults: {seed: 2}\nchaos: {auto: true, schedule: s.schedule.json}\n";
    let file = dir.path().join("given.yaml");
    std::fs::write(&file, text).unwrap();
    let given = scenario::load(&file).expect("loads with its schedule file");
    let result = runner::run(&given, &given.variants[0], 2);
    assert_eq!(events(&result), events(&drawn));
}

#[test]
fn schedule_errors_name_the_schedule_file_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = "window: 10s\nfaults:\n  - {at: 1s, crash: n9}\n  - {at: 2s, sleep: 1s}\n  - {at: 3s, restart: n1, for: 2s}\n  - {at: 20s, for: 1s, crash: n1}\n  - {for: 1s, crash: n2}\n";
    std::fs::write(dir.path().join("bad.json"), bad).unwrap();
    let text = "model: raftkv\nnodes: [n1, n2, n3]\nchaos: {auto: true, schedule: bad.json}\n";
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, text).unwrap();
    let Err(error) = scenario::load(&file) else {
        panic!("a bad schedule must not load");
    };
    let text = error.to_string();
    assert!(
        !text.contains("no `window`"),
        "a schedule that did not load hides no window:\n{text}"
    );
    for wanted in [
        "bad.json:3:21: error: unknown node `n9`",
        "bad.json:4:14: error: a schedule holds faults",
        "bad.json:5:32: error: a `restart` is over once it takes effect",
        "bad.json:6:10: error: `at` is 20s but the window lasts 10s",
        "bad.json:7:5: error: a scheduled fault has no `at`",
    ] {
        assert!(text.contains(wanted), "missing `{wanted}` in:\n{text}");
    }
}

#[test]
fn a_fault_with_nothing_to_act_on_is_skipped_and_undoes_nothing() {
    // Both crashes of n2 overlap: the second finds n2 down and must not start
    // it when it ends, while the first still holds it down.
    let text = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
chaos:
  window: 6s
  faults: {crash: 1}
  schedule:
    window: 6s
    faults:
      - {at: 1s, for: 4s, crash: n2}
      - {at: 2s, for: 1s, crash: n2}
      - {at: 3s, for: 1s, partition: {isolate: n1}}
      - {at: 3500ms, for: 1s, partition: {isolate: n3}}
"#;
    let scenario = scenario::load_str("skip.yaml", text).expect("valid");
    let result = runner::run(&scenario, &scenario.variants[0], 1);
    let skipped: Vec<&str> = result
        .trail
        .iter()
        .filter(|e| {
            matches!(
                e.data,
                Data::Chaos(faultline::base::trail::ChaosMark::Skipped { .. })
            )
        })
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(
        skipped,
        ["chaos: fault #3 skipped: a partition is in effect"],
        "{skipped:?}"
    );
    // Fault #1's crash found n2 down: it did nothing, so it starts nothing.
    let starts: Vec<u64> = result
        .trail
        .iter()
        .filter(|e| e.detail == "start from durable state" && e.node.as_deref() == Some("n2"))
        .map(|e| e.t_ms)
        .collect();
    assert_eq!(starts.len(), 1, "n2 started once: {starts:?}");
    assert!(
        starts[0] >= 5_000,
        "n2 stays down until the first crash ends"
    );
}

/// A find of `faultline hunt` over the auto files: `key` buggy, every other
/// key fixed, at `seed`.
fn find(
    path: &str,
    key: &str,
    seed: u64,
) -> (Scenario, faultline::lang::scenario::Variant, RunResult) {
    let scenario = bundled(path);
    let mut variant = scenario.variant("default").unwrap().copy();
    for k in scenario.model.info().bugs.iter().map(|b| b.key) {
        let mode = if k == key {
            faultline_api::BugMode::Buggy
        } else {
            faultline_api::BugMode::Fixed
        };
        variant.bugs.0.insert(k.into(), mode);
    }
    let result = runner::run(&scenario, &variant, seed);
    assert!(!result.passed, "seed {seed} finds {key}");
    (scenario, variant, result)
}

/// ZOOKEEPER-4541 found by `zookeeper-auto.yaml` at seed 24.
fn zookeeper_find() -> (Scenario, faultline::lang::scenario::Variant, RunResult) {
    find(
        "scenarios/zookeeper/zookeeper-auto.yaml",
        "ZOOKEEPER-4541",
        24,
    )
}

/// HDDS-17062's first find in the auto hunt (seeds 1..50: seed 7).
#[test]
fn hdds_17062s_first_auto_find_departs_where_the_failed_heartbeat_puts_icrs_back() {
    let d = departure_of("scenarios/ozone/hdds-reports-auto.yaml", "HDDS-17062", 7);
    let buggy = &d.buggy.as_ref().expect("a buggy event").detail;
    assert!(
        buggy.contains("put back ICRs") && buggy.contains("covers those ICRs"),
        "{}",
        d.summary
    );
}

/// The departure of a find's buggy run from its fixed twin, for `key`: the
/// fixed twin must pass (the find is attributable).
fn departure_of(
    path: &str,
    key: &str,
    seed: u64,
) -> faultline::judge::check::differential::Departure {
    let (scenario, variant, result) = find(path, key, seed);
    departure(&scenario, &variant, seed, &result, key)
}

/// The departure of a failing run from its fixed twin for `key`; the fixed
/// twin must pass.
fn departure(
    scenario: &Scenario,
    variant: &faultline::lang::scenario::Variant,
    seed: u64,
    result: &RunResult,
    key: &str,
) -> faultline::judge::check::differential::Departure {
    let departures = runner::differential(scenario, variant, seed, &Inputs::default(), result);
    let d = departures
        .into_iter()
        .find(|d| d.key == key)
        .unwrap_or_else(|| panic!("{key}'s fixed twin departs at seed {seed}"));
    assert!(d.fixed_passed, "{}", d.summary);
    d
}

/// HDDS-17603's first find in the auto hunt (ozone-om-auto, seed 1): the two
/// runs part where a request fails with a critical error, which the fixed OM
/// keeps out of the double buffer (so TRANSACTION_INFO never covers it) and
/// the buggy one does not.
#[test]
fn hdds_17603s_first_auto_find_departs_at_the_critical_error_kept_out_of_the_buffer() {
    let d = departure_of("scenarios/ozone/ozone-om-auto.yaml", "HDDS-17603", 1);
    let fixed = &d.fixed.as_ref().expect("a fixed event").detail;
    let buggy = &d.buggy.as_ref().expect("a buggy event").detail;
    assert!(
        fixed.contains("not added (critical error") && !buggy.contains("not added"),
        "{}",
        d.summary
    );
}

/// HDDS-10798's first find in the auto hunt (ozone-om-auto, seed 2): the two
/// runs part at the leader's startup entry, in updateLastAppliedIndex's second
/// condition, which the buggy OM evaluates on its old applied index and the
/// fixed one on the new index (the report's mechanism).
#[test]
fn hdds_10798s_first_auto_find_departs_at_update_last_applied_index() {
    let d = departure_of("scenarios/ozone/ozone-om-auto.yaml", "HDDS-10798", 2);
    let buggy = &d.buggy.as_ref().expect("a buggy event").detail;
    let fixed = &d.fixed.as_ref().expect("a fixed event").detail;
    assert!(
        buggy.contains("updateLastAppliedIndex") && buggy.contains("C2 ozoneApplied"),
        "{}",
        d.summary
    );
    assert!(fixed.contains("C2 newIndex"), "{}", d.summary);
}

/// HDDS-17670's first find without tuning: guided search over ozone-om-auto
/// wrote it at run 958 of 1,000 (`tests/data/finds/`; swarm's 1,000 seeds found
/// none). The runs part where a DirectoryDeletingService worker of a run that
/// started in term 17 reaches its submit in term 19, with its OM leading again:
/// the buggy OM submits the purge, the fixed one compares the terms and stops
/// (the report's mechanism), and not at the start of every run, where the two
/// once differed only in how the trail worded the run's recorded term.
#[test]
fn hdds_17670s_first_guided_find_departs_at_the_submit_in_a_later_term() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/finds/hdds-17670-guided-seed-958.yaml");
    let scenario = scenario::load(&path).expect("the find loads");
    let variant = &scenario.variants[0];
    let result = runner::run(&scenario, variant, 958);
    let target = faultline::sim::runner::target::Target::of(&result).expect("it fails");
    assert_eq!(target.checker, "invariant:bucket_usage_matches_tables");
    let d = departure(&scenario, variant, 958, &result, "HDDS-17670");
    let buggy = &d.buggy.as_ref().expect("a buggy event").detail;
    let fixed = &d.fixed.as_ref().expect("a fixed event").detail;
    assert!(
        buggy.contains("(started in term 17)")
            && buggy.contains("submits PurgeDirectories")
            && buggy.contains("in term 19"),
        "{}",
        d.summary
    );
    assert!(
        fixed.contains("term is 19, not the run's term 17") && fixed.contains("not submitted"),
        "{}",
        d.summary
    );
}

#[test]
fn the_differential_cause_of_a_find_names_the_mechanism() {
    let (scenario, variant, result) = zookeeper_find();
    let departures = runner::differential(&scenario, &variant, 24, &Inputs::default(), &result);
    let d = departures
        .iter()
        .find(|d| d.key == "ZOOKEEPER-4541")
        .expect("the fixed twin departs");
    assert!(d.fixed_passed, "{}", d.summary);
    let buggy = d.buggy.as_ref().expect("the buggy side has an event");
    assert!(
        buggy
            .detail
            .contains("follower shutdown does not stop SyncThread")
            && buggy.detail.contains("leaks"),
        "{}",
        d.summary
    );
}

#[test]
fn a_fault_named_as_a_cause_is_checked_by_a_rerun_without_it() {
    let (scenario, variant, mut result) = zookeeper_find();
    let target = faultline::drive::shrink::Target::of(&result).unwrap();
    let check = runner::confirm_causes(&scenario, &variant, 24, &Inputs::default(), &mut result)
        .expect("the cause names scheduled faults");
    assert!(!check.removed.is_empty());
    // Every rewritten cause says what the rerun showed.
    let causes: Vec<_> = result
        .findings
        .iter()
        .filter_map(faultline::judge::check::cause::of)
        .collect();
    assert!(!causes.is_empty());
    for c in &causes {
        assert_eq!(c.confirmed, Some(check.finding_gone), "{}", c.summary);
        assert!(c.summary.contains("checked by one rerun"), "{}", c.summary);
        if !check.finding_gone {
            assert!(
                c.summary.starts_with("not the faults in effect"),
                "{}",
                c.summary
            );
        }
    }
    // The rerun is the same seed and schedule without those entries.
    let mut schedule = played(&scenario, &result);
    for &i in check.removed.iter().rev() {
        schedule.faults.remove(i as usize);
    }
    let inputs = Inputs {
        schedule: Some(schedule),
        ..Inputs::default()
    };
    let rerun = runner::run_with(&scenario, &variant, 24, &inputs);
    assert_eq!(rerun.trail_digest, check.rerun_digest);
    assert_eq!(!target.met_by(&rerun), check.finding_gone);
}

/// The report page of a find with a bug key buggy: the Cause section shows the
/// departure from the fixed twin, both events side by side, once; the faults in
/// effect are not offered as a cause beside it, and a violated run without a
/// differing key has no Divergence panel to say so.
#[test]
fn the_report_page_shows_the_departure_as_the_cause_once() {
    let (scenario, variant, mut result) = zookeeper_find();
    result.differential =
        runner::differential(&scenario, &variant, 24, &Inputs::default(), &result);
    let d = result
        .differential
        .iter()
        .find(|d| d.fixed_passed)
        .expect("an attributable departure")
        .clone();
    let page = faultline::report::html::run_html(&result);
    let start = page
        .find(r#"<section id="causes""#)
        .expect("a Cause section");
    let section = &page[start..start + page[start..].find("</section>").unwrap()];
    assert!(
        section.contains(&format!(r##"<a href="#ev-{0}">event #{0}</a>"##, d.event)),
        "{section}"
    );
    let buggy = d.buggy.as_ref().unwrap();
    let fixed = d.fixed.as_ref().unwrap();
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    assert!(section.contains(&escape(&buggy.detail)), "{section}");
    assert!(section.contains(&escape(&fixed.detail)), "{section}");
    assert!(section.contains("The fixed twin met the expectation"));
    // No checker-side cause beside it, and no per-finding cause lines.
    assert!(!section.contains(r#"id="cause""#), "{section}");
    assert!(!page.contains(r#"<div class="fcause">"#));
    // The find is violated and no checker named a key: no Divergence panel.
    assert!(
        result
            .findings
            .iter()
            .all(|f| f.detail.get("key").is_none()),
        "{:?}",
        result.findings
    );
    assert!(!page.contains(r#"<section id="divergence""#));
    // The departure is ringed in the diagram.
    assert!(page.contains(&format!(r#"touch" data-ev="{}""#, d.event)));
}

/// A scenario whose chaos window panics n1 once (the `apply` fail point, armed
/// for 1 s at 1 s, reached by the workload's writes), with `restart_exited`
/// given as `SUPERVISOR` (a YAML value, or nothing).
fn panicking(supervisor: &str) -> Scenario {
    let text = format!(
        r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {{leader: any, within: 5s}}
chaos:
  auto: true
  window: 12s
  {supervisor}
  schedule:
    window: 12s
    faults:
      - {{at: 1s, for: 1s, failpoint: {{node: leader, point: apply, action: panic, count: 1}}}}
"#
    );
    scenario::load_str("supervised.yaml", &text).expect("valid")
}

/// A node and a time (ms).
type At = (String, u64);
/// A node, when it was started again, and how long after its exit (ms).
type Revived = (String, u64, u64);

/// When each node's process ended itself, and when the supervisor started it.
fn exits_and_revivals(result: &RunResult) -> (Vec<At>, Vec<Revived>) {
    let (mut exits, mut revived) = (Vec::new(), Vec::new());
    for e in result.trail.iter() {
        if let Data::Exited { .. } = &e.data {
            exits.push((e.node.clone().unwrap_or_default(), e.t_ms));
        }
        if let Data::Chaos(faultline::base::trail::ChaosMark::Supervisor { node, after_ms }) =
            &e.data
        {
            revived.push((node.clone(), e.t_ms, *after_ms));
        }
    }
    (exits, revived)
}

#[test]
fn a_node_that_ends_itself_in_the_window_is_started_again_by_the_supervisor() {
    let on = panicking("restart_exited: {min: 2s, max: 2s}");
    let off = panicking("");
    let r_on = runner::run(&on, &on.variants[0], 1);
    let r_off = runner::run(&off, &off.variants[0], 1);
    let (exits, revived) = exits_and_revivals(&r_on);
    assert_eq!(exits.len(), 1, "the panic ends one process: {exits:?}");
    let (node, exited_at) = &exits[0];
    assert_eq!(revived.len(), 1, "{revived:?}");
    let (again, at, after) = &revived[0];
    assert_eq!(again, node);
    assert_eq!(*after, 2_000, "the drawn delay of a 2s..2s range");
    assert!(
        *at >= exited_at + 2_000 && *at <= exited_at + 2_010,
        "{at} after {exited_at}"
    );
    // The start is an action on the trail right after the supervisor's mark,
    // and the node is up again before the window ends.
    let start = r_on.trail.iter().find(|e| {
        e.t_ms >= *at
            && matches!(&e.data, Data::Action(Acted { action: faultline::base::action::Action::Start { node: n }, .. }) if n == node)
    });
    assert!(start.is_some(), "a start of {node} follows the mark");
    // Without `restart_exited` (the default outside the model's domain) the
    // node stays down until the heal phase.
    let (exits_off, revived_off) = exits_and_revivals(&r_off);
    assert_eq!(exits_off.len(), 1);
    assert!(revived_off.is_empty());
    assert_ne!(r_on.trail_digest, r_off.trail_digest);
    // `true` is refused with the shape it needs.
    let Err(err) = scenario::load_str(
        "bad.yaml",
        "model: raftkv\nnodes: [n1, n2, n3]\nchaos: {auto: true, window: 5s, restart_exited: true}\n",
    ) else {
        panic!("`restart_exited: true` says no delay and must be refused");
    };
    assert!(
        err.to_string()
            .contains("restart_exited: {min: 1s, max: 30s}"),
        "{err}"
    );
}
