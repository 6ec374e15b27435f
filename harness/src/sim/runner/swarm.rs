//! Swarm testing and drawn params: what one seed makes of a chaos section.
//!
//! Uniform random schedules rarely line up the two or three events a defect
//! needs. Swarm testing (Groce et al., as FoundationDB and TigerBeetle use it)
//! gives each seed its own configuration instead: every fault kind, fail point
//! and workload op gets a random weight factor (off, 1, 2 or 4), and random sub-ranges
//! of fault spacing and duration, so that some seeds press hard on a few things
//! rather than every seed touching everything lightly. Model params listed under
//! `chaos.params` are drawn per seed within the author's ranges (with or without
//! swarm), laid over the variant's own.
//!
//! Every draw comes from the run's seed on a stream of its own, before the
//! simulation is built, and the draw is recorded on the trail and in the report.

use crate::base::streams::Stream;
pub use crate::base::trail::SwarmDraw;
use crate::lang::scenario::{Chaos, ChaosKind, ParamDraw, Scenario, Variant, WorkloadOp};
use faultline_api::Consistency;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// Each fault kind's, fail point's and workload op's weight is multiplied by one
/// of these, drawn uniformly: off a quarter of the time, else 1, 2 or 4 times as
/// frequent as written.
const WEIGHT_FACTORS: [u32; 4] = [0, 1, 2, 4];

fn factor(rng: &mut ChaCha8Rng) -> u32 {
    WEIGHT_FACTORS[rng.random_range(0..WEIGHT_FACTORS.len())]
}

/// One run's chaos as this seed configures it.
pub struct Plan {
    pub chaos: Option<Chaos>,
    /// The variant's params with the drawn ones laid over them.
    pub params: serde_json::Value,
    /// `None` when there was nothing to draw.
    pub draw: Option<SwarmDraw>,
    /// The chaos window's faults: given, or drawn from the seed.
    pub schedule: Option<crate::lang::scenario::schedule::Schedule>,
}

/// Draw this seed's configuration. `config_seed` (a derived run's parent's,
/// else the section's `config_seed:`, else the run's own seed) is the seed whose
/// swarm stream draws the weights, pacing and params; the run's own seed draws
/// the schedule from them (unless one is `given`).
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
pub fn plan(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    config_seed: Option<u64>,
    given: Option<&crate::lang::scenario::schedule::Schedule>,
) -> Plan {
    let Some(chaos) = &scenario.chaos else {
        return Plan {
            chaos: None,
            params: variant.params.clone(),
            draw: None,
            schedule: None,
        };
    };
    let config_seed = config_seed.or(chaos.config_seed).unwrap_or(seed);
    let mut rng = Stream::Swarm.rng(config_seed);
    let mut chaos = chaos.clone();
    let mut draw = SwarmDraw {
        swarm: chaos.swarm,
        config_seed: (config_seed != seed).then_some(config_seed),
        ..SwarmDraw::default()
    };
    if chaos.swarm {
        let info = scenario.model.info();
        let judged = |op: &WorkloadOp| {
            op.template
                .get("op")
                .and_then(|f| f.as_str())
                .and_then(|f| info.op(f))
                .is_some_and(|o| o.consistency != Consistency::Unjudged)
        };
        swarm(&mut rng, &mut chaos, judged);
    }
    describe(&chaos, &mut draw);
    let mut params = match &variant.params {
        serde_json::Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    // Params drawn one by one may disagree with each other (a heartbeat above
    // an election timeout): a draw the model refuses is drawn again, from the
    // same stream, a few times; then the variant's own values stand.
    let base = params.clone();
    for attempt in 0..=PARAM_REDRAWS {
        params = base.clone();
        draw.params.clear();
        if attempt == PARAM_REDRAWS {
            break;
        }
        for param in &chaos.params {
            let value: serde_json::Value = match &param.draw {
                ParamDraw::Range { min, max } if *min > 0 => {
                    crate::lang::scenario::schedule::draw::spread(
                        &mut rng,
                        *min as u64,
                        *max as u64,
                    )
                    .into()
                }
                ParamDraw::Range { min, max } => rng.random_range(*min..=*max).into(),
                ParamDraw::Choices(choices) => choices[rng.random_range(0..choices.len())].clone(),
            };
            draw.params.insert(param.name.clone(), value.clone());
            params.insert(param.name.clone(), value);
        }
        let merged = serde_json::Value::Object(params.clone());
        if chaos.params.is_empty() || scenario.model.parse_params(&merged).is_ok() {
            break;
        }
    }
    let drew = chaos.swarm || !chaos.params.is_empty();
    let info = scenario.model.info();
    let schedule = given
        .cloned()
        .or_else(|| chaos.schedule.clone())
        .unwrap_or_else(|| {
            crate::lang::scenario::schedule::draw::faults(
                &chaos,
                &scenario.nodes,
                info.has_leader,
                seed,
            )
        });
    Plan {
        chaos: Some(chaos),
        params: serde_json::Value::Object(params),
        draw: drew.then_some(draw),
        schedule: Some(schedule),
    }
}

/// What the chaos section (after the swarm's draw) asks for, as the trail's
/// [`SwarmDraw`] records it: fault kinds, fail points and ops with their weights,
/// the spacing, durations and concurrency of faults.
fn describe(chaos: &Chaos, draw: &mut SwarmDraw) {
    draw.faults = chaos
        .faults
        .iter()
        .map(|f| (f.kind.name().to_string(), f.weight))
        .collect();
    for fault in &chaos.faults {
        if let ChaosKind::FailPoint(points) = &fault.kind {
            draw.points.extend(
                points
                    .iter()
                    .map(|p| format!("{}: {}:{}", p.point.name, p.action, p.weight)),
            );
        }
    }
    if let Some(workload) = &chaos.workload {
        draw.ops = workload
            .ops
            .iter()
            .map(|op| {
                let name = op
                    .template
                    .get("op")
                    .and_then(|o| o.as_str())
                    .unwrap_or("?")
                    .to_string();
                (op.index, name, op.weight)
            })
            .collect();
    }
    draw.spacing_ms = (ms(chaos.spacing.0), ms(chaos.spacing.1));
    draw.duration_ms = (ms(chaos.duration.0), ms(chaos.duration.1));
    draw.concurrent_max = chaos.concurrent_max;
}

/// Draws of a chaos section's params the model refused, at most, before the
/// variant's own values are used.
const PARAM_REDRAWS: usize = 8;

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// A random sub-range of `(lo, hi)` (its ends log-uniform over a wide range).
fn sub_range(rng: &mut ChaCha8Rng, (lo, hi): (Duration, Duration)) -> (Duration, Duration) {
    let (lo, hi) = (ms(lo), ms(hi));
    let a = crate::lang::scenario::schedule::draw::spread(rng, lo, hi);
    let b = crate::lang::scenario::schedule::draw::spread(rng, lo, hi);
    (
        Duration::from_millis(a.min(b)),
        Duration::from_millis(a.max(b)),
    )
}

/// When every item drew factor 0, one of them (drawn) keeps its written weight.
fn revive_one<T>(
    rng: &mut ChaCha8Rng,
    items: &mut [T],
    written: &[u32],
    weight: impl Fn(&mut T) -> &mut u32,
) {
    if items.is_empty() || items.iter_mut().any(|i| *weight(i) > 0) {
        return;
    }
    let at = rng.random_range(0..items.len());
    *weight(&mut items[at]) = written[at];
}

/// When the author's workload has ops the history checker judges but the draw
/// turned every one of them off, one (drawn) keeps its written weight: a run
/// whose clients only did unjudged things (an FCR build) tested nothing of what
/// they were told, and is `unknown` (hdds-reports-chaos fixed seed 2354).
fn revive_one_judged(
    rng: &mut ChaCha8Rng,
    ops: &mut [WorkloadOp],
    written: &[u32],
    judged: impl Fn(&WorkloadOp) -> bool,
) {
    let candidates: Vec<usize> = (0..ops.len()).filter(|&i| judged(&ops[i])).collect();
    if candidates.is_empty() || candidates.iter().any(|&i| ops[i].weight > 0) {
        return;
    }
    let at = candidates[rng.random_range(0..candidates.len())];
    ops[at].weight = written[at];
}

fn swarm(rng: &mut ChaCha8Rng, chaos: &mut Chaos, judged: impl Fn(&WorkloadOp) -> bool) {
    let written: Vec<u32> = chaos.faults.iter().map(|f| f.weight).collect();
    for fault in chaos.faults.iter_mut() {
        fault.weight *= factor(rng);
        if let ChaosKind::FailPoint(points) = &mut fault.kind {
            let written: Vec<u32> = points.iter().map(|p| p.weight).collect();
            for point in points.iter_mut() {
                point.weight *= factor(rng);
            }
            revive_one(rng, points, &written, |p| &mut p.weight);
            points.retain(|p| p.weight > 0);
        }
    }
    revive_one(rng, &mut chaos.faults, &written, |f| &mut f.weight);
    chaos.faults.retain(|f| f.weight > 0);
    if let Some(workload) = &mut chaos.workload {
        let written: Vec<u32> = workload.ops.iter().map(|op| op.weight).collect();
        for op in workload.ops.iter_mut() {
            op.weight *= factor(rng);
        }
        revive_one(rng, &mut workload.ops, &written, |op| &mut op.weight);
        revive_one_judged(rng, &mut workload.ops, &written, judged);
        workload.ops.retain(|op| op.weight > 0);
    }
    chaos.spacing = sub_range(rng, chaos.spacing);
    chaos.duration = sub_range(rng, chaos.duration);
    chaos.concurrent_max = rng.random_range(1..=chaos.concurrent_max.max(1));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::scenario::load_str;

    const TEXT: &str = r#"
model: raftkv
nodes: [n1, n2, n3]
expect: converged
steps:
  - await: {leader: any, within: 5s}
chaos:
  window: 5s
  swarm: true
  spacing: {min: 100ms, max: 2s}
  params:
    heartbeat_ms: {min: 20, max: 80}
  faults: {partition: 1, crash: 2, restart: 1, transfer_leader: 1}
  workload:
    every: 100ms
    ops:
      - {op: put, key: "k{1..3}", value: "v{seq}", weight: 3}
      - {op: delete, key: "k{1..3}"}
"#;

    #[test]
    fn the_draw_is_a_function_of_the_seed_and_seeds_differ() {
        let scenario = load_str("swarm.yaml", TEXT).expect("valid");
        let variant = &scenario.variants[0];
        let a = plan(&scenario, variant, 7, None, None).draw.expect("drawn");
        let b = plan(&scenario, variant, 7, None, None).draw.expect("drawn");
        assert_eq!(a, b);
        let draws: std::collections::BTreeSet<String> = (1..=40)
            .map(|s| {
                plan(&scenario, variant, s, None, None)
                    .draw
                    .expect("drawn")
                    .describe()
            })
            .collect();
        assert!(draws.len() > 30, "only {} distinct draws", draws.len());
    }

    #[test]
    fn every_draw_keeps_something_and_stays_in_range() {
        let scenario = load_str("swarm.yaml", TEXT).expect("valid");
        let variant = &scenario.variants[0];
        for seed in 1..=200 {
            let p = plan(&scenario, variant, seed, None, None);
            let chaos = p.chaos.expect("chaos");
            assert!(!chaos.faults.is_empty());
            assert!(!chaos.workload.as_ref().expect("workload").ops.is_empty());
            assert!(chaos.spacing.0 >= Duration::from_millis(100));
            assert!(chaos.spacing.1 <= Duration::from_secs(2));
            assert!(chaos.spacing.0 <= chaos.spacing.1);
            let hb = p.params["heartbeat_ms"].as_i64().expect("drawn");
            assert!((20..=80).contains(&hb));
            for (kind, weight) in &p.draw.expect("drawn").faults {
                let base = if kind == "crash" { 2 } else { 1 };
                assert!(*weight >= base && *weight <= base * 4);
            }
        }
    }

    #[test]
    fn every_draw_keeps_an_op_the_history_checker_judges() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/ozone/hdds-reports-chaos.yaml"
        ))
        .expect("bundled");
        let scenario = load_str("hdds-reports-chaos.yaml", &text).expect("valid");
        let variant = &scenario.variants[0];
        let info = scenario.model.info();
        let judged = |op: &WorkloadOp| {
            let f = op.template["op"].as_str().expect("named");
            info.op(f).expect("declared").consistency != Consistency::Unjudged
        };
        let workload = |seed| {
            plan(&scenario, variant, seed, None, None)
                .chaos
                .expect("chaos")
                .workload
        };
        // Seed 2354 drew only `build_fcr` (unjudged) before judged ops were revived.
        for seed in (1..=300).chain([2354]) {
            let ops = workload(seed).expect("workload").ops;
            assert!(ops.iter().any(judged), "seed {seed}: no judged op left");
        }
    }

    #[test]
    fn without_swarm_only_params_are_drawn() {
        let text = TEXT.replace("  swarm: true\n", "");
        let scenario = load_str("swarm.yaml", &text).expect("valid");
        let p = plan(&scenario, &scenario.variants[0], 3, None, None);
        assert_eq!(p.chaos.expect("chaos").faults.len(), 4);
        let draw = p.draw.expect("params drawn");
        assert!(!draw.swarm);
        assert!(draw.params.contains_key("heartbeat_ms"));
    }

    #[test]
    fn a_config_seed_draws_the_configuration_and_the_run_s_seed_the_schedule() {
        let scenario = load_str("swarm.yaml", TEXT).expect("valid");
        let variant = &scenario.variants[0];
        let own = plan(&scenario, variant, 3, None, None);
        let borrowed = plan(&scenario, variant, 9, Some(3), None);
        let (own_draw, borrowed_draw) = (own.draw.expect("drawn"), borrowed.draw.expect("drawn"));
        assert_eq!(own_draw.config_seed, None, "seed 3's own configuration");
        assert_eq!(borrowed_draw.config_seed, Some(3));
        assert!(borrowed_draw.describe().ends_with("(configured by seed 3)"));
        assert_eq!(
            SwarmDraw {
                config_seed: None,
                ..borrowed_draw
            },
            own_draw,
            "seed 9 under seed 3's configuration draws seed 3's weights, pacing and params"
        );
        assert_eq!(borrowed.params, own.params);
        // The faults come from the run's own seed, drawn for that configuration.
        assert_ne!(borrowed.schedule, own.schedule);
        assert_ne!(
            borrowed.schedule,
            plan(&scenario, variant, 9, None, None).schedule
        );
        // A file's `config_seed:` does the same; a run's input overrides it.
        let text = TEXT.replace("  swarm: true\n", "  swarm: true\n  config_seed: 3\n");
        let named = load_str("swarm.yaml", &text).expect("valid");
        let from_file = plan(&named, &named.variants[0], 9, None, None);
        assert_eq!(from_file.draw.expect("drawn").config_seed, Some(3));
        assert_eq!(from_file.schedule, borrowed.schedule);
        let overridden = plan(&named, &named.variants[0], 9, Some(5), None);
        assert_eq!(overridden.draw.expect("drawn").config_seed, Some(5));
    }
}
