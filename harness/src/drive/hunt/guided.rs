//! Guided search: keep the runs that reached something new, and derive new runs
//! from them by editing their schedules, instead of drawing every seed fresh.
//!
//! A run's *features* are what it reached: each probe, each fail point that
//! fired, each kind of fault that took effect, each trail event kind, and the
//! order in which they first happened (which fault kind came last before a probe
//! or an event kind first appeared, and which probe preceded which). A run with a
//! feature no earlier run had joins the corpus with its schedule, the one its
//! chaos window played.
//!
//! A derived run plays its parent's schedule with one edit
//! ([`crate::lang::scenario::schedule::edit`]: shift, swap, drop, add, retarget,
//! lengthen, or, half the time, a splice: the parent's faults up to a drawn
//! time, then the faults the run's own seed draws from that time on) under its
//! parent's *configuration* (the swarm weights, pacing and drawn params its
//! seed drew: [`Inputs::config_seed`]) and the search's next seed, which draws
//! the workload and every node's randomness. Every run of the search takes the
//! next seed, so its runs have the seeds a swarm sweep of the same range has.
//! It replays from its seed, its configuration's seed and its schedule (written
//! out, as a scenario file with `config_seed:` that plays it, when it is a find).
//!
//! Why not the parent's seed (the parent exactly, with one change): measured on
//! zookeeper-auto and hdds-reports-auto (docs/exploration.md, "What a derived
//! run finds"), a one-edit schedule under its parent's seed found
//! ZOOKEEPER-4541 in 2 of 216 runs and HDDS-17062 in 2 of 216, against 10 and 5
//! of 84 for fresh seeds: a run that did not find stays a run that does not
//! find under one edit, whatever its schedule. Under a new seed the same
//! searches found them in 7 and 30 of 216.
//!
//! Why the parent's configuration: a seed's configuration is much of what
//! makes it find (docs/exploration.md, "A seed's configuration"): the swarm
//! draws of ten ZOOKEEPER-4541 finds, each run under 30 other seeds, failed in
//! 58 of 300 runs, those of ten seeds that did not find in 23 of 300. A
//! derived run that took its seed's own configuration kept the parent's faults
//! but not the weights and params they were drawn for. Over 3,000-run guided
//! sweeps, runs derived from a find failed again in 67 % (ZOOKEEPER-4541) and
//! 31 % (HDDS-17062) under the parent's configuration, against 8 % and 15 % under
//! their own. Runs derived from runs that did not find failed about as often
//! either way (ZOOKEEPER-4541 6.5 % against 6.7 %, HDDS-17062 9.9 % against
//! 11.1 %), near fresh seeds (8.6 % each): the configuration does not make a
//! search reach its first find sooner, but what a derived run is, and what it
//! finds next to a find, is its parent's with one edit.
//!
//! Why splices: a corpus schedule played under another seed loses the fit
//! between its faults and the draws of its own seed (params, ops). Over 20
//! blocks of 30 runs per key (docs/exploration.md, "Splices"), derived runs
//! with one of the six edits reached ZOOKEEPER-4541 far later than fresh
//! seeds; a splice keeps the parent's faults only up to a point, so the run
//! goes where its parent went and then on with a schedule drawn for its own
//! seed.
//!
//! Nothing here knows a bug: the features are the model's declared probes and
//! the trail's own types, and the edits treat every fault kind alike.

use crate::base::effect;
use crate::base::outcome::Outcome;
use crate::base::trail::Data;
use crate::lang::scenario::schedule::{edit, Planned, Schedule};
use crate::lang::scenario::{self, Scenario, Variant};
use crate::lang::yaml::Node;
use crate::sim::runner::target::Target;
use crate::sim::runner::{self, Inputs, RunResult};
use faultline_api::NodeEvent;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// One fresh seed every this many runs once the corpus is not empty (the rest
/// are derived), so a corpus that went stale keeps receiving new material.
pub const FRESH_EVERY: usize = 4;
/// Fresh seeds before the first derived run.
pub const WARMUP_RUNS: usize = 4;
/// Draws of an edit before a derived run gives up on its parent (an edit
/// that does not apply, such as a swap in a schedule of one fault).
pub const EDIT_TRIES: usize = 8;
/// Most entries the corpus keeps, so memory stays bounded whatever the budget
/// (beyond this a new entry replaces the one whose features are the most
/// common: [`Guide::observe`]).
pub const CORPUS_MAX: usize = 256;

/// What a run reached, as a set of names.
pub fn features(result: &RunResult) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut last_fault: Option<&'static str> = None;
    let mut probes_seen: Vec<&str> = Vec::new();
    let mut kinds_seen: BTreeSet<String> = BTreeSet::new();
    for event in result.trail.iter() {
        match &event.data {
            Data::Action(acted) if effect::is_fault(&acted.action) => {
                if acted.result.took_effect() {
                    let kind = acted.action.kind();
                    out.insert(format!("fault:{kind}"));
                    last_fault = Some(kind);
                }
            }
            Data::Node(NodeEvent::Probe { probe, .. }) => {
                if !probes_seen.contains(&probe.as_str()) {
                    out.insert(format!("probe:{probe}"));
                    if let Some(fault) = last_fault {
                        out.insert(format!("probe:{probe} after {fault}"));
                    }
                    for earlier in &probes_seen {
                        out.insert(format!("probe:{probe} after probe:{earlier}"));
                    }
                    probes_seen.push(probe);
                }
            }
            Data::Action(_)
            | Data::OpEnd(_)
            | Data::NoNode { .. }
            | Data::InvalidOp { .. }
            | Data::FailPointHit(_)
            | Data::Exited { .. }
            | Data::Stopped { .. }
            | Data::Sleep { .. }
            | Data::Await(_)
            | Data::Check(_)
            | Data::Heal(_)
            | Data::Limit { .. }
            | Data::Chaos(_)
            | Data::Workload(_)
            | Data::Node(_) => {
                let kind = format!("{:?}", event.kind);
                if kinds_seen.insert(kind.clone()) {
                    if let Some(fault) = last_fault {
                        out.insert(format!("event:{kind} after {fault}"));
                    }
                    out.insert(format!("event:{kind}"));
                }
            }
        }
    }
    for arm in &result.fail_points {
        if arm.fired > 0 {
            out.insert(format!("fired:{}", arm.point));
        }
    }
    out
}

/// Whether a run is a find: it ended in an outcome it did not expect, for a
/// checker's reason (a scripted step that had no effect is not a find).
pub fn is_find(result: &RunResult) -> bool {
    !result.passed && !result.expected.contains(&result.outcome) && Target::of(result).is_some()
}

/// Pick an entry, favouring those that reached what few runs reached (each
/// feature weighs one over the number of runs that had it, as AFL's energy
/// favours rare edges): a precondition a handful of runs hit is where a
/// nearby schedule is most likely to go further.
fn choose<'c>(
    rng: &mut ChaCha8Rng,
    corpus: &'c [Entry],
    hits: &BTreeMap<String, u64>,
) -> &'c Entry {
    let weights: Vec<f64> = corpus.iter().map(|e| rarity(e, hits)).collect();
    let total: f64 = weights.iter().sum();
    let mut draw = rng.random_range(0.0..total);
    for (entry, w) in corpus.iter().zip(&weights) {
        if draw < *w {
            return entry;
        }
        draw -= w;
    }
    corpus.last().expect("not empty")
}

/// An entry's weight: each of its features counts one over the number of runs
/// that reached it.
fn rarity(entry: &Entry, hits: &BTreeMap<String, u64>) -> f64 {
    entry
        .features
        .iter()
        .map(|f| 1.0 / hits.get(f).copied().unwrap_or(1).max(1) as f64)
        .sum::<f64>()
        .max(1e-9)
}

/// The entry a full corpus gives up for a new one: the lowest [`rarity`], the
/// oldest of equals. Under a first-in, first-out rule a long search (a
/// nightly campaign that carries its corpus on) lost its near misses, the
/// entries that reached what a handful of runs reached, first.
fn evicted(corpus: &[Entry], hits: &BTreeMap<String, u64>) -> usize {
    let mut at = 0;
    let mut lowest = f64::INFINITY;
    for (i, entry) in corpus.iter().enumerate() {
        let weight = rarity(entry, hits);
        if weight < lowest {
            lowest = weight;
            at = i;
        }
    }
    at
}

/// How a run of the search came about.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Origin {
    Fresh,
    /// The schedule of the run of seed `parent` with this one edit, under the
    /// run's own seed.
    Derived {
        parent: u64,
        edit: String,
    },
}

/// The first find of a search.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Find {
    /// Runs up to and including this one.
    pub run: usize,
    pub seed: u64,
    pub origin: Origin,
    pub outcome: Outcome,
    pub checker: String,
    /// The replayable scenario: the original with the find's schedule written
    /// in (a fresh find replays by seed, and plays the same schedule).
    #[serde(skip)]
    pub scenario_text: Option<String>,
    /// The same schedule with every bug fixed: whether that run passed (the
    /// differential check that makes the find attributable).
    pub fixed_passed: Option<bool>,
}

/// What one search did.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Search {
    pub runs: usize,
    pub fresh: usize,
    pub derived: usize,
    /// Derived scenarios that did not load (counted as runs: they used budget).
    pub invalid: usize,
    pub corpus: usize,
    pub features: usize,
    pub find: Option<Find>,
}

/// What a search needs to run.
pub struct Setup<'s> {
    pub scenario: &'s Scenario,
    /// The scenario file's tree (the derived scenarios keep its header).
    pub tree: &'s Node,
    /// The variant every run of the search runs (a hunt's arm).
    pub variant: &'s Variant,
    /// The scenario's variant the derived scenarios are named after.
    pub base: &'s Variant,
    /// The same variant with every bug fixed (the differential re-run).
    pub fixed: &'s Variant,
}

/// One corpus entry: a run that reached something new.
struct Entry {
    seed: u64,
    config_seed: u64,
    schedule: Schedule,
    features: BTreeSet<String>,
    /// The run was a find ([`is_find`]).
    find: bool,
}

/// The next run a guide asks for.
#[derive(Clone, Debug)]
pub struct Next {
    /// The guide's count of runs, this one included (1-based).
    pub run: usize,
    pub seed: u64,
    /// `None`: a fresh run of `seed`, which draws its own schedule.
    pub schedule: Option<Schedule>,
    /// The seed whose draw configures the run (a derived run's parent's
    /// configuration); `None`: its own.
    pub config_seed: Option<u64>,
    pub origin: Origin,
}

/// Guided search's state, one run at a time: what to run next
/// ([`Guide::next_run`]) and what a run reached ([`Guide::observe`]). Its choices
/// depend only on its search seed and on the runs it observed, in the order it
/// observed them, so a caller that runs several at once and observes them in
/// the order they were asked for gets the same search whatever its number of
/// threads. Its state is data ([`Guide::to_json`], [`Guide::from_json`]): a
/// search stopped between two runs resumes where it was.
pub struct Guide {
    search_seed: u64,
    names: Vec<String>,
    has_leader: bool,
    seen: BTreeSet<String>,
    hits: BTreeMap<String, u64>,
    corpus: Vec<Entry>,
    next_seed: u64,
    pub runs: usize,
    pub fresh: usize,
    pub derived: usize,
    /// Draws that found no edit that applies to their parent (they use budget).
    pub invalid: usize,
}

impl Guide {
    /// Every run's seed counts up from `first_seed`; `search_seed` seeds the choice
    /// of entries and edits.
    pub fn new(scenario: &Scenario, first_seed: u64, search_seed: u64) -> Guide {
        Guide {
            search_seed,
            names: scenario.nodes.iter().map(|n| n.name.clone()).collect(),
            has_leader: scenario.model.info().has_leader,
            seen: BTreeSet::new(),
            hits: BTreeMap::new(),
            corpus: Vec::new(),
            next_seed: first_seed,
            runs: 0,
            fresh: 0,
            derived: 0,
            invalid: 0,
        }
    }

    pub fn corpus_len(&self) -> usize {
        self.corpus.len()
    }

    pub fn features_len(&self) -> usize {
        self.seen.len()
    }

    /// The next run: a fresh seed during the warm-up, every `FRESH_EVERY`-th
    /// run and while the corpus is empty; otherwise a corpus entry with one
    /// edit. `None` when the edit draws found nothing that applies (the run is
    /// counted, as it used budget). `own(seed, config_seed)` gives the schedule
    /// a seed draws under a configuration ([`own_schedule`]), which a splice
    /// continues with.
    pub fn next_run(&mut self, own: &dyn Fn(u64, u64) -> Option<Schedule>) -> Option<Next> {
        self.runs += 1;
        let run = self.runs;
        let fresh = self.corpus.is_empty() || run <= WARMUP_RUNS || run.is_multiple_of(FRESH_EVERY);
        if fresh {
            let seed = self.next_seed;
            self.next_seed += 1;
            self.fresh += 1;
            return Some(Next {
                run,
                seed,
                schedule: None,
                config_seed: None,
                origin: Origin::Fresh,
            });
        }
        // One stream per run: the choice for run N does not depend on how the
        // draws of earlier runs went, so a resumed search makes the same ones.
        let mut rng =
            crate::base::streams::Stream::Guided.rng(self.search_seed ^ ((run as u64) << 20));
        let parent = choose(&mut rng, &self.corpus, &self.hits);
        let donors: Vec<&Planned> = self
            .corpus
            .iter()
            .flat_map(|e| e.schedule.faults.iter())
            .collect();
        // The parent's configuration (swarm weights, pacing, params) comes
        // with its schedule; a splice goes on with what this run's seed draws
        // under that configuration.
        let own = own(self.next_seed, parent.config_seed);
        let derived = (0..EDIT_TRIES).find_map(|_| {
            let mut schedule = parent.schedule.clone();
            edit::mutate(
                &mut rng,
                &mut schedule,
                &donors,
                &self.names,
                self.has_leader,
                own.as_ref(),
            )
            .map(|e| (schedule, e))
        });
        let Some((schedule, edit)) = derived else {
            self.invalid += 1;
            return None;
        };
        self.derived += 1;
        let seed = self.next_seed;
        self.next_seed += 1;
        Some(Next {
            run,
            seed,
            schedule: Some(schedule),
            config_seed: Some(parent.config_seed),
            origin: Origin::Derived {
                parent: parent.seed,
                edit: edit.to_string(),
            },
        })
    }

    /// What a run reached: a run with a feature no earlier run had joins the
    /// corpus with the schedule it played (`played`: the schedule it was
    /// given, or the one it recorded).
    pub fn observe(&mut self, seed: u64, played: Option<Schedule>, result: &RunResult) {
        let reached = features(result);
        for f in &reached {
            *self.hits.entry(f.clone()).or_default() += 1;
        }
        let new = reached.iter().any(|f| !self.seen.contains(f));
        if let (true, Some(schedule)) = (new, played) {
            self.seen.extend(reached.iter().cloned());
            if self.corpus.len() >= CORPUS_MAX {
                let at = evicted(&self.corpus, &self.hits);
                self.corpus.remove(at);
            }
            self.corpus.push(Entry {
                seed,
                config_seed: result
                    .swarm
                    .as_ref()
                    .and_then(|d| d.config_seed)
                    .unwrap_or(seed),
                schedule,
                find: is_find(result),
                features: reached,
            });
        }
    }

    /// This guide's corpus and counts of what runs reached, carried into a new
    /// search whose runs' seeds count up from `first_seed` (which also seeds
    /// its choices): a nightly sweep that goes on from the night before's
    /// (`sweep --guided --corpus`). Its own counters start at zero. The finds
    /// stay behind (as AFL keeps its crashes out of its queue): a run derived
    /// from a find mostly finds the same thing again (67 % of those derived
    /// from a ZOOKEEPER-4541 find, docs/exploration.md), and a night spent on
    /// yesterday's find is a night not spent on what nobody has found.
    pub fn carried(mut self, first_seed: u64) -> Guide {
        self.corpus.retain(|e| !e.find);
        Guide {
            search_seed: first_seed,
            next_seed: first_seed,
            runs: 0,
            fresh: 0,
            derived: 0,
            invalid: 0,
            ..self
        }
    }

    /// The guide's whole state as JSON (schedules in the scenario language).
    pub fn to_json(&self) -> serde_json::Value {
        let corpus: Vec<serde_json::Value> = self
            .corpus
            .iter()
            .map(|e| {
                serde_json::json!({
                    "seed": e.seed,
                    "config_seed": e.config_seed,
                    "schedule": e.schedule.to_json(&self.names),
                    "features": e.features,
                    "find": e.find,
                })
            })
            .collect();
        serde_json::json!({
            "search_seed": self.search_seed,
            "next_seed": self.next_seed,
            "runs": self.runs,
            "fresh": self.fresh,
            "derived": self.derived,
            "invalid": self.invalid,
            "seen": self.seen,
            "hits": self.hits,
            "corpus": corpus,
        })
    }

    /// A guide from [`Guide::to_json`]'s output, for this scenario; an error
    /// names what did not fit (a schedule that no longer loads, a missing field).
    pub fn from_json(scenario: &Scenario, json: &serde_json::Value) -> Result<Guide, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Saved {
            search_seed: u64,
            next_seed: u64,
            runs: usize,
            fresh: usize,
            derived: usize,
            invalid: usize,
            seen: BTreeSet<String>,
            hits: BTreeMap<String, u64>,
            corpus: Vec<SavedEntry>,
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct SavedEntry {
            seed: u64,
            /// Absent in a state written before entries kept their
            /// configuration: the entry's own seed configured it.
            #[serde(default)]
            config_seed: Option<u64>,
            schedule: serde_json::Value,
            features: BTreeSet<String>,
            /// Absent in a state written before entries said so.
            #[serde(default)]
            find: bool,
        }
        let saved: Saved = serde_json::from_value(json.clone()).map_err(|e| e.to_string())?;
        if saved.corpus.len() > CORPUS_MAX {
            return Err(format!(
                "{} corpus entries, more than the {CORPUS_MAX} a search keeps",
                saved.corpus.len()
            ));
        }
        let mut guide = Guide::new(scenario, saved.next_seed, saved.search_seed);
        for (i, e) in saved.corpus.into_iter().enumerate() {
            let schedule = scenario::load_schedule(
                scenario,
                &format!("corpus entry {}", i + 1),
                &e.schedule.to_string(),
            )
            .map_err(|e| e.to_string())?;
            guide.corpus.push(Entry {
                seed: e.seed,
                config_seed: e.config_seed.unwrap_or(e.seed),
                schedule,
                features: e.features,
                find: e.find,
            });
        }
        guide.seen = saved.seen;
        guide.hits = saved.hits;
        guide.runs = saved.runs;
        guide.fresh = saved.fresh;
        guide.derived = saved.derived;
        guide.invalid = saved.invalid;
        Ok(guide)
    }
}

/// Search until the first find or `budget` runs; the runs' seeds count up from
/// `first_seed`, and `search_seed` seeds the choice of entries and edits.
pub fn search(setup: &Setup, budget: usize, first_seed: u64, search_seed: u64) -> Search {
    let mut guide = Guide::new(setup.scenario, first_seed, search_seed);
    let mut out = Search::default();
    while guide.runs < budget {
        let Some(next) =
            guide.next_run(&|seed, cfg| own_schedule(setup.scenario, setup.variant, seed, cfg))
        else {
            continue;
        };
        let result = play(setup.scenario, setup.variant, &next);
        let played = next
            .schedule
            .clone()
            .or_else(|| schedule_of(setup.scenario, &result));
        if is_find(&result) {
            let target = Target::of(&result).expect("a find has a target");
            let fixed_passed = Some(fixed_rerun(setup, &next));
            let scenario_text = played
                .as_ref()
                .map(|s| find_scenario(setup, &result, next.seed, s, &next.origin));
            out.find = Some(Find {
                run: next.run,
                seed: next.seed,
                origin: next.origin,
                outcome: target.outcome,
                checker: target.checker,
                scenario_text,
                fixed_passed,
            });
            break;
        }
        guide.observe(next.seed, played, &result);
    }
    out.runs = guide.runs;
    out.fresh = guide.fresh;
    out.derived = guide.derived;
    out.invalid = guide.invalid;
    out.corpus = guide.corpus_len();
    out.features = guide.features_len();
    out
}

/// Run what a guide asked for: a fresh seed, or a seed with its schedule.
pub fn play(scenario: &Scenario, variant: &Variant, next: &Next) -> RunResult {
    let inputs = Inputs {
        schedule: next.schedule.clone(),
        config_seed: next.config_seed,
        ..Default::default()
    };
    runner::run_with(scenario, variant, next.seed, &inputs)
}

/// The schedule a run of `seed` plays under the configuration of
/// `config_seed`: what its seed draws (or the file's own schedule).
pub fn own_schedule(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    config_seed: u64,
) -> Option<Schedule> {
    crate::sim::runner::swarm::plan(scenario, variant, seed, Some(config_seed), None).schedule
}

/// The schedule a run's window played, as the run recorded it.
pub fn schedule_of(scenario: &Scenario, result: &RunResult) -> Option<Schedule> {
    let json = result.schedule.as_ref()?;
    scenario::load_schedule(scenario, "the run's schedule", &json.to_string()).ok()
}

/// A find as a scenario file: the original, with the find's variant (its bug
/// modes) and its schedule written in, under its seed.
fn find_scenario(
    setup: &Setup,
    result: &RunResult,
    seed: u64,
    schedule: &Schedule,
    origin: &Origin,
) -> String {
    let names: Vec<String> = setup
        .scenario
        .nodes
        .iter()
        .map(|n| n.name.clone())
        .collect();
    let mut body = serde_json::json!({ "expect": "converged" });
    if let Some(target) = &setup.variant.target {
        body["target"] = serde_json::json!(target);
    }
    let bugs: serde_json::Map<String, serde_json::Value> = result
        .bugs
        .0
        .iter()
        .map(|(k, m)| (k.clone(), serde_json::to_value(m).expect("serializes")))
        .collect();
    if !bugs.is_empty() {
        body["bugs"] = serde_json::Value::Object(bugs);
    }
    // Named after the variant the search ran when the scenario has it (a
    // build's variant: `alpha24` runs alpha.24), else after the base variant
    // (a model key's arm is the base with its bugs set).
    let name = match setup.scenario.variant(&setup.variant.name) {
        Some(v) => v.name.clone(),
        None => setup.base.name.clone(),
    };
    let mut variants = serde_json::Map::new();
    variants.insert(name, body);
    let how = match origin {
        Origin::Fresh => "a fresh seed".to_string(),
        Origin::Derived { parent, edit } => format!(
            "the schedule of its parent run (seed {parent}) with one edit, {edit}, under seed {seed} and the parent's configuration"
        ),
    };
    let comment = format!(
        "Found by faultline's guided search: {how}.\n\
         It ended {} ({}); it expects `converged`, so it fails until the defect is fixed.\n\
         Replay: faultline run THIS_FILE",
        result.outcome,
        Target::of(result).map(|t| t.checker).unwrap_or_default()
    );
    let name = format!("{}-guided", setup.scenario.name);
    crate::lang::scenario::schedule::render::scenario(
        setup.tree,
        &name,
        &serde_json::Value::Object(variants),
        seed,
        result.swarm.as_ref().and_then(|d| d.config_seed),
        &schedule.to_json(&names),
        &comment,
    )
}

/// Run the find's schedule again with every bug fixed; whether it passed.
fn fixed_rerun(setup: &Setup, next: &Next) -> bool {
    !is_find(&play(setup.scenario, setup.fixed, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
model: raftkv
nodes: [n1, n2, n3]
variants:
  nightly:
    bugs: {CANARY-QUORUM: fixed}
    expect: converged
chaos: {auto: true, window: 8s}
"#;

    #[test]
    fn a_derived_run_plays_under_its_parent_s_configuration() {
        let scenario = scenario::load_str("g.yaml", TEXT).expect("valid");
        let variant = &scenario.variants[0];
        let mut guide = Guide::new(&scenario, 1, 1);
        let own = |seed, cfg| own_schedule(&scenario, variant, seed, cfg);
        // Fresh runs until the first derived one (the corpus then holds only
        // fresh runs, each configured by its own seed).
        let (next, parent) = loop {
            let Some(next) = guide.next_run(&own) else {
                continue;
            };
            if let Origin::Derived { parent, .. } = next.origin {
                break (next, parent);
            }
            let result = play(&scenario, variant, &next);
            guide.observe(next.seed, schedule_of(&scenario, &result), &result);
        };
        assert_ne!(next.seed, parent);
        assert_eq!(next.config_seed, Some(parent));
        let drew = play(&scenario, variant, &next).swarm.expect("drawn");
        assert_eq!(drew.config_seed, Some(parent));
        let parents = crate::sim::runner::swarm::plan(&scenario, variant, parent, None, None)
            .draw
            .expect("drawn");
        assert_eq!(
            crate::base::trail::SwarmDraw {
                config_seed: None,
                ..drew
            },
            parents,
            "the derived run's weights, pacing and params are its parent's"
        );
    }

    #[test]
    fn a_derived_run_is_its_parent_with_one_edit_and_finds_replay() {
        let scenario = scenario::load_str("g.yaml", TEXT).expect("valid");
        let tree =
            crate::lang::yaml::parse(TEXT, &crate::lang::yaml::Limits::default()).expect("yaml");
        let base = &scenario.variants[0];
        let mut buggy = Variant {
            name: base.name.clone(),
            loc: base.loc,
            target: None,
            bugs: base.bugs.clone(),
            params: base.params.clone(),
            expect: base.expect.clone(),
        };
        buggy
            .bugs
            .0
            .insert("CANARY-QUORUM".into(), faultline_api::BugMode::Buggy);
        let setup = Setup {
            scenario: &scenario,
            tree: &tree,
            variant: &buggy,
            base,
            fixed: base,
        };
        let search = search(&setup, 12, 1, 1);
        assert!(search.fresh >= WARMUP_RUNS.min(search.runs));
        let find = search.find.expect("the canary is found within 12 runs");
        assert_eq!(find.fixed_passed, Some(true), "attributable");
        let text = find.scenario_text.expect("a find is written out");
        if let Origin::Derived { .. } = find.origin {
            assert!(
                text.contains("config_seed: "),
                "a derived find names its configuration's seed:\n{text}"
            );
        }
        let replayed = scenario::load_str("find.yaml", &text).expect("the find loads");
        let r = runner::run(&replayed, &replayed.variants[0], find.seed);
        assert_eq!(
            r.outcome, find.outcome,
            "the written find ends as the find did"
        );
    }

    fn entry(seed: u64, features: &[&str], find: bool) -> Entry {
        Entry {
            seed,
            config_seed: seed,
            schedule: Schedule {
                window: std::time::Duration::from_secs(1),
                faults: Vec::new(),
                ops: None,
            },
            features: features.iter().map(|f| f.to_string()).collect(),
            find,
        }
    }

    #[test]
    fn a_full_corpus_gives_up_its_most_common_entry_and_keeps_near_misses() {
        let scenario = scenario::load_str("g.yaml", TEXT).expect("valid");
        let variant = &scenario.variants[0];
        let mut guide = Guide::new(&scenario, 1, 1);
        // The oldest entry reached a probe one run in a thousand reached; the
        // others only what every run reaches.
        guide
            .corpus
            .push(entry(1, &["common", "probe:near_miss"], false));
        for seed in 2..CORPUS_MAX as u64 + 1 {
            guide.corpus.push(entry(seed, &["common"], false));
        }
        guide.hits.insert("common".into(), 1000);
        guide.hits.insert("probe:near_miss".into(), 1);
        assert_eq!(guide.corpus.len(), CORPUS_MAX);
        assert_eq!(
            evicted(&guide.corpus, &guide.hits),
            1,
            "the oldest of the common ones"
        );
        // A run with something new joins the full corpus: the near miss stays.
        let result = play(
            &scenario,
            variant,
            &Next {
                run: 1,
                seed: 9_999,
                schedule: None,
                config_seed: None,
                origin: Origin::Fresh,
            },
        );
        guide.observe(9_999, schedule_of(&scenario, &result), &result);
        assert_eq!(guide.corpus.len(), CORPUS_MAX);
        assert_eq!(guide.corpus[0].seed, 1, "the near miss is kept");
        assert!(
            guide.corpus.iter().all(|e| e.seed != 2),
            "seed 2's entry gave way"
        );
        assert_eq!(guide.corpus.last().map(|e| e.seed), Some(9_999));
    }

    #[test]
    fn a_carried_corpus_leaves_its_finds_behind_and_restarts_the_count() {
        let scenario = scenario::load_str("g.yaml", TEXT).expect("valid");
        let mut guide = Guide::new(&scenario, 1, 1);
        guide.corpus.push(entry(3, &["a"], false));
        guide.corpus.push(entry(7, &["b", "violated"], true));
        guide.corpus.push(entry(9, &["c"], false));
        guide
            .seen
            .extend(["a", "b", "c", "violated"].map(String::from));
        guide.hits.insert("a".into(), 4);
        guide.runs = 12;
        guide.fresh = 5;
        guide.derived = 6;
        guide.invalid = 1;
        guide.next_seed = 13;
        // Through its saved state, as `sweep --corpus` reads it.
        let saved = guide.to_json();
        assert_eq!(saved["corpus"][1]["find"], true);
        let carried = Guide::from_json(&scenario, &saved)
            .expect("reads back")
            .carried(101);
        let seeds: Vec<u64> = carried.corpus.iter().map(|e| e.seed).collect();
        assert_eq!(seeds, [3, 9], "the find stays behind");
        assert_eq!(carried.seen.len(), 4, "what was reached stays reached");
        assert_eq!(carried.hits.get("a"), Some(&4));
        assert_eq!(
            (
                carried.runs,
                carried.fresh,
                carried.derived,
                carried.invalid
            ),
            (0, 0, 0, 0)
        );
        assert_eq!((carried.next_seed, carried.search_seed), (101, 101));
    }
}
