//! Guided search: keep the runs that reached something new, and derive new runs
//! from them by editing their recorded fault actions, instead of drawing every
//! seed fresh.
//!
//! A run's *features* are what it reached: each probe, each fail point that
//! fired, each kind of fault that took effect, each trail event kind, and the
//! order in which they first happened (which fault kind came last before a probe
//! or an event kind first appeared, and which probe preceded which). A run with a
//! feature no earlier run had joins the corpus with its recorded actions (the
//! trail's actions at their simulated times, as `faultline shrink` reads them).
//!
//! A derived run takes a corpus entry's actions and applies one to three
//! mutations to its fault actions (client ops are kept as they were): shift a
//! fault in time, swap the times of two, drop one (with the action that undoes
//! it), add one copied from any corpus entry at a new time, or move one to
//! another node. It runs as an ordinary scripted scenario (the shrinker's
//! template: the original header, the run's bugs and drawn params, `sleep` to
//! each action's time) under the entry's seed, so it is replayable from what is
//! recorded: the seed and the scenario text, which is written out when it fails.
//!
//! Nothing here knows a bug: the features are the model's declared probes and
//! the trail's own types, and the mutations treat every fault kind alike.

use crate::action::{Action, Timed};
use crate::outcome::Outcome;
use crate::runner::{self, RunResult};
use crate::scenario::{self, Scenario, Variant};
use crate::shrink::{Target, Template};
use crate::trail::Data;
use crate::yaml::Node;
use nodes::api::NodeEvent;
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// One fresh seed every this many runs once the corpus is not empty (the rest
/// are derived), so a corpus that went stale keeps receiving new material.
pub const FRESH_EVERY: usize = 4;
/// Fresh seeds before the first derived run.
pub const WARMUP_RUNS: usize = 4;
/// Most mutations applied to one derived run.
pub const MUTATIONS_MAX: usize = 3;
/// Most entries the corpus keeps (new ones replace the oldest derived ones
/// beyond this, so memory stays bounded whatever the budget).
pub const CORPUS_MAX: usize = 256;
/// The shifts a time mutation draws from, in ms (either sign).
const SHIFTS_MS: [u64; 5] = [50, 250, 1_000, 3_000, 10_000];

/// What a run reached, as a set of names.
pub fn features(result: &RunResult) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut last_fault: Option<&'static str> = None;
    let mut probes_seen: Vec<&str> = Vec::new();
    let mut kinds_seen: BTreeSet<String> = BTreeSet::new();
    for event in result.trail.iter() {
        match &event.data {
            Data::Action(acted) if acted.action.kind() != "client" => {
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

/// One mutation, described for the trail of the search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    Shift {
        at_ms: u64,
        to_ms: u64,
        kind: &'static str,
    },
    Swap {
        a_ms: u64,
        b_ms: u64,
    },
    Drop {
        at_ms: u64,
        kind: &'static str,
    },
    Add {
        to_ms: u64,
        kind: &'static str,
    },
    Retarget {
        at_ms: u64,
        from: String,
        to: String,
    },
}

impl std::fmt::Display for Mutation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mutation::Shift { at_ms, to_ms, kind } => {
                write!(f, "shift {kind} {at_ms} ms -> {to_ms} ms")
            }
            Mutation::Swap { a_ms, b_ms } => write!(f, "swap {a_ms} ms <-> {b_ms} ms"),
            Mutation::Drop { at_ms, kind } => write!(f, "drop {kind} at {at_ms} ms"),
            Mutation::Add { to_ms, kind } => write!(f, "add {kind} at {to_ms} ms"),
            Mutation::Retarget { at_ms, from, to } => {
                write!(f, "retarget {at_ms} ms {from} -> {to}")
            }
        }
    }
}

fn is_fault(action: &Action) -> bool {
    !matches!(action, Action::Client { .. })
}

/// The action that ends the fault `action` begins, if it is one that lasts.
fn undoes(begin: &Action, end: &Action) -> bool {
    match begin {
        Action::Crash { node } | Action::Stop { node } => {
            matches!(end, Action::Start { node: n } if n == node)
        }
        Action::Partition { .. } | Action::PartitionOneWay { .. } => matches!(end, Action::Heal),
        Action::Hold { between } => matches!(end, Action::Release { between: b } if b == between),
        Action::Latency {
            between,
            delay_ms: Some(_),
        } => matches!(end, Action::Latency { between: b, delay_ms: None } if b == between),
        Action::ArmFailPoint { node, point, .. } => matches!(
            end,
            Action::ClearFailPoint { node: n, point: p }
            | Action::ReleaseFailPoint { node: n, point: p } if n == node && p == point
        ),
        // Instant actions, and undos themselves: nothing lasts for them to end.
        Action::Client { .. }
        | Action::TransferLeader { .. }
        | Action::Heal
        | Action::Release { .. }
        | Action::Latency { delay_ms: None, .. }
        | Action::Restart { .. }
        | Action::Start { .. }
        | Action::ClearFailPoint { .. }
        | Action::ReleaseFailPoint { .. } => false,
    }
}

/// The index of the action that ends the fault at `i`, if any.
fn partner(actions: &[Timed], i: usize) -> Option<usize> {
    (i + 1..actions.len()).find(|&j| undoes(&actions[i].action, &actions[j].action))
}

/// Indices of the actions a mutation may pick: faults that begin something (or
/// are instant), never an undo alone.
fn begins(actions: &[Timed]) -> Vec<usize> {
    let undo_of_something: BTreeSet<usize> = (0..actions.len())
        .filter_map(|i| partner(actions, i))
        .collect();
    (0..actions.len())
        .filter(|i| is_fault(&actions[*i].action) && !undo_of_something.contains(i))
        .collect()
}

/// Every node name an action holds (a transfer's `to`, not its `from`: the
/// step form transfers from whoever leads then).
fn names_mut(action: &mut Action) -> Vec<&mut String> {
    match action {
        Action::Client { .. } | Action::Heal => Vec::new(),
        Action::TransferLeader { to, .. } => vec![to],
        Action::Partition { groups } => groups.iter_mut().flatten().collect(),
        Action::PartitionOneWay { from, to } => {
            std::iter::once(from).chain(to.iter_mut()).collect()
        }
        Action::Hold { between }
        | Action::Release { between }
        | Action::Latency { between, .. } => between.iter_mut().collect(),
        Action::Crash { node }
        | Action::Restart { node }
        | Action::Stop { node }
        | Action::Start { node }
        | Action::ArmFailPoint { node, .. }
        | Action::ClearFailPoint { node, .. }
        | Action::ReleaseFailPoint { node, .. } => vec![node],
    }
}

fn rename(action: &mut Action, from: &str, to: &str) {
    for name in names_mut(action) {
        if name == from {
            *name = to.to_string();
        }
    }
}

/// The node names an action mentions.
fn mentions(action: &Action) -> Vec<String> {
    let mut copy = action.clone();
    names_mut(&mut copy)
        .into_iter()
        .map(|n| n.clone())
        .collect()
}

/// Apply one random mutation to `actions` (kept in time order); `None` when the
/// drawn mutation does not apply (no fault to edit, one node only).
pub fn mutate_once(
    rng: &mut ChaCha8Rng,
    actions: &mut Vec<Timed>,
    donors: &[&Timed],
    nodes: &[String],
    span_ms: (u64, u64),
) -> Option<Mutation> {
    let picks = begins(actions);
    let (lo, hi) = span_ms;
    let mutation = match rng.random_range(0..5u8) {
        0 => {
            let &i = picks.choose(rng)?;
            let shift = *SHIFTS_MS.choose(rng).expect("not empty");
            let at = actions[i].t_ms;
            let to = if rng.random_bool(0.5) {
                at.saturating_sub(shift).max(lo)
            } else {
                (at + shift).min(hi)
            };
            // The fault and its undo move together, so it lasts as long as it did.
            if let Some(j) = partner(actions, i) {
                let length = actions[j].t_ms - at;
                actions[j].t_ms = to + length;
            }
            actions[i].t_ms = to;
            Mutation::Shift {
                at_ms: at,
                to_ms: to,
                kind: actions[i].action.kind(),
            }
        }
        1 => {
            if picks.len() < 2 {
                return None;
            }
            let chosen: Vec<usize> = picks.choose_multiple(rng, 2).copied().collect();
            let (i, j) = (chosen[0], chosen[1]);
            let (a, b) = (actions[i].t_ms, actions[j].t_ms);
            if a == b {
                return None;
            }
            for (k, from, to) in [(i, a, b), (j, b, a)] {
                if let Some(p) = partner(actions, k) {
                    actions[p].t_ms = to + (actions[p].t_ms - from);
                }
                actions[k].t_ms = to;
            }
            Mutation::Swap { a_ms: a, b_ms: b }
        }
        2 => {
            let &i = picks.choose(rng)?;
            let kind = actions[i].action.kind();
            let at = actions[i].t_ms;
            if let Some(j) = partner(actions, i) {
                actions.remove(j);
            }
            actions.remove(i);
            Mutation::Drop { at_ms: at, kind }
        }
        3 => {
            let donor = *donors.choose(rng)?;
            let to = rng.random_range(lo..=hi.max(lo));
            let kind = donor.action.kind();
            let mut added = donor.clone();
            added.t_ms = to;
            added.detail = format!("added by guided search: {}", donor.detail);
            actions.push(added);
            Mutation::Add { to_ms: to, kind }
        }
        _ => {
            let &i = picks.choose(rng)?;
            let named = mentions(&actions[i].action);
            let from = named.choose(rng)?.clone();
            let others: Vec<&String> = nodes.iter().filter(|n| **n != from).collect();
            let to = (*others.choose(rng)?).clone();
            let at = actions[i].t_ms;
            let j = partner(actions, i);
            rename(&mut actions[i].action, &from, &to);
            if let Some(j) = j {
                rename(&mut actions[j].action, &from, &to);
            }
            Mutation::Retarget {
                at_ms: at,
                from,
                to,
            }
        }
    };
    actions.sort_by_key(|a| a.t_ms);
    Some(mutation)
}

/// One corpus entry: a run that reached something new.
struct Entry {
    seed: u64,
    actions: Vec<Timed>,
    template: Template,
    features: BTreeSet<String>,
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
    let weights: Vec<f64> = corpus
        .iter()
        .map(|e| {
            e.features
                .iter()
                .map(|f| 1.0 / hits.get(f).copied().unwrap_or(1).max(1) as f64)
                .sum::<f64>()
                .max(1e-9)
        })
        .collect();
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

/// How a run of the search came about.
#[derive(Clone, Debug, serde::Serialize)]
pub enum Origin {
    Fresh,
    Derived { mutations: Vec<String> },
}

/// The first find of a search.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Find {
    /// Runs up to and including this one.
    pub run: usize,
    pub seed: u64,
    pub origin: Origin,
    pub outcome: Outcome,
    pub checker: String,
    /// The replayable scenario (a derived run's; a fresh one replays by seed).
    #[serde(skip)]
    pub scenario_text: Option<String>,
    /// The same schedule with every bug fixed: whether that run passed (the
    /// differential check that makes the find attributable).
    pub fixed_passed: Option<bool>,
}

/// What one search did.
#[derive(Clone, Debug, Default, serde::Serialize)]
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

/// Search until the first find or `budget` runs; fresh seeds count up from
/// `first_seed`, and `search_seed` seeds the choice of entries and mutations.
pub fn search(setup: &Setup, budget: usize, first_seed: u64, search_seed: u64) -> Search {
    let mut rng = crate::streams::Stream::Guided.rng(search_seed);
    let nodes: Vec<String> = setup
        .scenario
        .nodes
        .iter()
        .map(|n| n.name.clone())
        .collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut hits: BTreeMap<String, u64> = BTreeMap::new();
    let mut corpus: Vec<Entry> = Vec::new();
    let mut out = Search::default();
    let mut next_seed = first_seed;
    while out.runs < budget {
        out.runs += 1;
        let fresh = corpus.is_empty() || out.runs <= WARMUP_RUNS || out.runs % FRESH_EVERY == 0;
        let (seed, result, origin, text) = if fresh {
            let seed = next_seed;
            next_seed += 1;
            out.fresh += 1;
            let result = runner::run(setup.scenario, setup.variant, seed);
            (seed, result, Origin::Fresh, None)
        } else {
            out.derived += 1;
            let parent = choose(&mut rng, &corpus, &hits);
            let mut actions = parent.actions.clone();
            let span = span_of(&actions, parent.template.end_ms());
            let donors: Vec<&Timed> = corpus
                .iter()
                .flat_map(|e| {
                    let b = begins(&e.actions);
                    b.into_iter().map(move |i| &e.actions[i])
                })
                .filter(|t| partner_free(t))
                .collect();
            let mut mutations = Vec::new();
            for _ in 0..rng.random_range(1..=MUTATIONS_MAX) {
                if let Some(m) = mutate_once(&mut rng, &mut actions, &donors, &nodes, span) {
                    mutations.push(m.to_string());
                }
            }
            let text = parent
                .template
                .render(&actions, &provenance(parent.seed, &mutations));
            let Ok(derived) = scenario::load_str(&setup.scenario.file, &text) else {
                out.invalid += 1;
                continue;
            };
            let result = runner::run(&derived, &derived.variants[0], parent.seed);
            (
                parent.seed,
                result,
                Origin::Derived { mutations },
                Some(text),
            )
        };
        if is_find(&result) {
            let target = Target::of(&result).expect("a find has a target");
            let fixed_passed = Some(fixed_rerun(setup, seed, text.as_deref()));
            out.find = Some(Find {
                run: out.runs,
                seed,
                origin,
                outcome: target.outcome,
                checker: target.checker,
                scenario_text: text,
                fixed_passed,
            });
            break;
        }
        let reached = features(&result);
        for f in &reached {
            *hits.entry(f.clone()).or_default() += 1;
        }
        let new = reached.iter().any(|f| !seen.contains(f));
        if new {
            seen.extend(reached.iter().cloned());
            let name = format!("{}-guided", setup.scenario.name);
            if let Ok(template) = Template::with_variant(setup.tree, setup.base, &result, &name) {
                let actions = result.trail.actions();
                if corpus.len() >= CORPUS_MAX {
                    corpus.remove(0);
                }
                corpus.push(Entry {
                    seed,
                    actions,
                    template,
                    features: reached,
                });
            }
        }
    }
    out.corpus = corpus.len();
    out.features = seen.len();
    out
}

/// A fault to copy on its own: an instant one (a transfer, a restart). A lasting
/// one copied without its undo would last to the heal phase, which is a
/// different fault; retargeting and shifting cover those.
fn partner_free(t: &Timed) -> bool {
    matches!(
        t.action,
        Action::TransferLeader { .. } | Action::Restart { .. }
    )
}

/// The times a mutation may move a fault to: from the first fault action to the
/// end of the script.
fn span_of(actions: &[Timed], end_ms: u64) -> (u64, u64) {
    let lo = actions
        .iter()
        .find(|a| is_fault(&a.action))
        .map(|a| a.t_ms)
        .unwrap_or(0);
    let hi = end_ms.max(lo);
    (lo, hi)
}

fn provenance(seed: u64, mutations: &[String]) -> String {
    let mut text = format!(
        "Derived by faultline's guided search from the run of seed {seed}:\n\
         its recorded actions with these edits to its faults:\n"
    );
    for m in mutations {
        text.push_str(&format!("- {m}\n"));
    }
    text.push_str(&format!("Replay: faultline run THIS_FILE --seed {seed}"));
    text
}

/// Run the find's schedule again with every bug fixed; whether it passed.
fn fixed_rerun(setup: &Setup, seed: u64, text: Option<&str>) -> bool {
    let Some(text) = text else {
        return runner::run(setup.scenario, setup.fixed, seed).passed;
    };
    let Ok(derived) = scenario::load_str(&setup.scenario.file, text) else {
        return false;
    };
    // The same schedule with every bug key of the derived variant fixed.
    let v = &derived.variants[0];
    let mut bugs = v.bugs.clone();
    for mode in bugs.0.values_mut() {
        *mode = nodes::api::BugMode::Fixed;
    }
    let fixed = Variant {
        name: v.name.clone(),
        loc: v.loc,
        target: v.target.clone(),
        bugs,
        params: v.params.clone(),
        expect: v.expect.clone(),
    };
    !is_find(&runner::run(&derived, &fixed, seed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nodes::api::ParsedOp;

    fn t(t_ms: u64, action: Action) -> Timed {
        Timed {
            t_ms,
            action,
            detail: String::new(),
        }
    }

    fn crash(n: &str) -> Action {
        Action::Crash { node: n.into() }
    }
    fn start(n: &str) -> Action {
        Action::Start { node: n.into() }
    }
    fn transfer(to: &str) -> Action {
        Action::TransferLeader {
            from: "n1".into(),
            to: to.into(),
        }
    }
    fn client() -> Action {
        Action::Client {
            node: "n1".into(),
            op: ParsedOp {
                op: serde_json::json!({"put": "k"}),
                summary: "put k".into(),
            },
        }
    }

    fn schedule() -> Vec<Timed> {
        vec![
            t(100, client()),
            t(1_000, crash("n2")),
            t(1_500, client()),
            t(3_000, start("n2")),
            t(4_000, transfer("n3")),
        ]
    }

    #[test]
    fn undo_actions_are_never_picked_alone() {
        let s = schedule();
        assert_eq!(partner(&s, 1), Some(3));
        assert_eq!(begins(&s), vec![1, 4]);
    }

    #[test]
    fn mutations_keep_client_ops_order_and_pair_faults_with_their_undo() {
        let nodes: Vec<String> = ["n1", "n2", "n3"].map(String::from).to_vec();
        let original = schedule();
        let donor = t(0, transfer("n2"));
        let mut kinds = BTreeSet::new();
        for seed in 0..200 {
            let mut rng = crate::streams::Stream::Guided.rng(seed);
            let mut s = original.clone();
            let Some(m) = mutate_once(&mut rng, &mut s, &[&donor], &nodes, (1_000, 10_000)) else {
                continue;
            };
            kinds.insert(
                m.to_string()
                    .split(' ')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
            assert!(s.windows(2).all(|w| w[0].t_ms <= w[1].t_ms), "{m}: sorted");
            let clients: Vec<u64> = s
                .iter()
                .filter(|a| !is_fault(&a.action))
                .map(|a| a.t_ms)
                .collect();
            assert_eq!(clients, [100, 1_500], "{m}: client ops untouched");
            // A crash is always followed by the start of the same node.
            for (i, a) in s.iter().enumerate() {
                if let Action::Crash { .. } = a.action {
                    let j = partner(&s, i).unwrap_or_else(|| panic!("{m}: crash without start"));
                    assert_eq!(s[j].t_ms - a.t_ms, 2_000, "{m}: the crash lasts as long");
                }
            }
            assert!(s.iter().all(|a| a.t_ms >= 100 && a.t_ms <= 12_000), "{m}");
        }
        assert_eq!(kinds.len(), 5, "every kind of mutation is drawn: {kinds:?}");
    }

    #[test]
    fn retargeting_moves_a_fault_and_its_undo_together() {
        let mut s = vec![t(1_000, crash("n2")), t(2_000, start("n2"))];
        rename(&mut s[0].action, "n2", "n3");
        rename(&mut s[1].action, "n2", "n3");
        assert_eq!(partner(&s, 0), Some(1));
        assert_eq!(mentions(&s[0].action), ["n3"]);
    }
}
