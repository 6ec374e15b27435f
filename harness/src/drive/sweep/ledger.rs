//! The coverage ledger of a sweep (or a merge of shards): per model, which
//! probes were reached and first by which seed, which fail points were armed,
//! reached and fired, which fault kinds were drawn and took effect; per scenario
//! variant, how many distinct trails its seeds produced.
//!
//! Two judgments come out of it. A probe its model does not mark `rare` that no
//! run reached fails the sweep (FoundationDB's rule for code probes: the
//! ensemble never tested that path), for every model the sweep explored with a
//! chaos section; merge adds shards up before it judges, so a probe hit on one
//! shard is hit. And a variant whose seeds gave few distinct trails is warned
//! about: a thousand seeds of one schedule test that schedule once.

use crate::report::doc::{self, Block};
use crate::report::RunRecord;
use crate::sim::coverage::{Coverage, DeclaredProbe, FaultUse, PointUse};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Below this many runs a variant's distinct-trail count is not judged.
const FEW_TRAILS_MIN_RUNS: u64 = 10;
/// A variant is warned about when distinct trails * this <= runs.
const FEW_TRAILS_RATIO: u64 = 10;
/// Trail digests are kept by this many leading hex digits (64 bits).
const DIGEST_PREFIX: usize = 16;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    pub models: BTreeMap<String, ModelLedger>,
    /// Keyed `scenario [variant]`.
    pub variants: BTreeMap<String, VariantLedger>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelLedger {
    pub runs: u64,
    pub chaos_runs: u64,
    pub probes: BTreeMap<String, ProbeCount>,
    pub points: BTreeMap<String, PointUse>,
    pub faults: BTreeMap<String, FaultUse>,
    /// Liveness invariants some run could not judge, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unjudged: BTreeMap<String, UnjudgedCount>,
    /// The probe declarations the model's runs carried (an external model's;
    /// see [`Coverage::declared`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared: Vec<DeclaredProbe>,
}

/// The runs that could not judge one liveness invariant.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnjudgedCount {
    pub runs: u64,
    /// The lowest such seed, its scenario, and why it could not judge.
    pub first: Option<(u64, String, String)>,
}

/// A liveness invariant that runs of a sweep could not judge: those runs
/// tested nothing of it (it fails the sweep as an unreached probe does).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotJudged {
    pub model: String,
    pub invariant: String,
    /// Runs that could not judge it, of the model's runs.
    pub runs: u64,
    pub of_runs: u64,
    pub first_seed: u64,
    pub scenario: String,
    pub why: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeCount {
    /// Runs that reached it.
    pub runs: u64,
    /// The lowest seed that reached it, and in which scenario.
    pub first: Option<(u64, String)>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantLedger {
    pub model: String,
    pub runs: u64,
    #[serde(skip)]
    digests: BTreeSet<String>,
    /// Distinct trails (filled by `finish`).
    pub distinct_trails: u64,
}

/// A probe of a model that no run reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreached {
    pub model: String,
    pub probe: String,
    pub summary: String,
}

/// A model's declared probes as (name, rare, summary), from this process's
/// registry; a model this binary does not know has none here (a ledger judges
/// such a model by the declarations its runs carried: [`Ledger::declared`]).
pub fn declared(model: &str) -> Vec<(String, bool, String)> {
    triples(crate::base::models::probes(model, &[]))
}

fn triples(probes: Vec<DeclaredProbe>) -> Vec<(String, bool, String)> {
    probes
        .into_iter()
        .map(|p| (p.name, p.rare, p.summary))
        .collect()
}

/// What a sweep or merge concluded from its ledger.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Probes no run reached (each fails the sweep).
    pub unreached: Vec<Unreached>,
    /// Liveness invariants some run could not judge (each fails the sweep).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<NotJudged>,
    /// Variants with few distinct trails: (variant, runs, distinct) (a warning).
    pub few_trails: Vec<(String, u64, u64)>,
}

impl Ledger {
    /// The ledger of these records (those without coverage, from an older
    /// faultline, count as runs that reached nothing).
    pub fn of(records: &[RunRecord]) -> Ledger {
        let mut ledger = Ledger::default();
        let empty = Coverage::default();
        for r in records {
            let coverage = r.coverage.as_ref().unwrap_or(&empty);
            ledger.add(&r.scenario, &r.variant, r.seed, &r.trail_digest, coverage);
        }
        ledger
    }

    /// The judgments, with the registry's probe declarations, or for a model
    /// this process does not have, those its runs carried.
    pub fn verdict(&self) -> Verdict {
        self.verdict_with(|m| self.declared(m))
    }

    /// A model's declared probes as (name, rare, summary): the registry's, else
    /// the declarations its runs carried.
    pub fn declared(&self, model: &str) -> Vec<(String, bool, String)> {
        let carried = self
            .models
            .get(model)
            .map(|m| m.declared.as_slice())
            .unwrap_or_default();
        triples(crate::base::models::probes(model, carried))
    }

    /// The judgments, with these probe declarations.
    pub fn verdict_with(&self, declared: impl Fn(&str) -> Vec<(String, bool, String)>) -> Verdict {
        Verdict {
            unreached: self.unreached(declared),
            not_judged: self.not_judged(),
            few_trails: self.few_trails(),
        }
    }

    /// Count one run.
    pub fn add(&mut self, scenario: &str, variant: &str, seed: u64, digest: &str, c: &Coverage) {
        let model = self.models.entry(c.model.clone()).or_default();
        model.runs += 1;
        model.chaos_runs += u64::from(c.chaos);
        if model.declared.is_empty() && !c.declared.is_empty() {
            model.declared = c.declared.clone();
        }
        for probe in &c.probes {
            let count = model.probes.entry(probe.clone()).or_default();
            count.runs += 1;
            if count.first.as_ref().is_none_or(|(s, _)| seed < *s) {
                count.first = Some((seed, scenario.to_string()));
            }
        }
        for (point, used) in &c.points {
            let total = model.points.entry(point.clone()).or_default();
            total.armed += used.armed;
            total.reached += used.reached;
            total.fired += used.fired;
        }
        for (kind, used) in &c.faults {
            let total = model.faults.entry(kind.clone()).or_default();
            total.drawn += used.drawn;
            total.effective += used.effective;
        }
        for (invariant, why) in &c.unjudged {
            let count = model.unjudged.entry(invariant.clone()).or_default();
            count.runs += 1;
            if count.first.as_ref().is_none_or(|(s, _, _)| seed < *s) {
                count.first = Some((seed, scenario.to_string(), why.clone()));
            }
        }
        let v = self
            .variants
            .entry(format!("{scenario} [{variant}]"))
            .or_default();
        v.model = c.model.clone();
        v.runs += 1;
        v.digests
            .insert(digest.chars().take(DIGEST_PREFIX).collect());
        v.distinct_trails = v.digests.len() as u64;
    }

    /// Declared probes (not `rare`) of every model the ledger explored with
    /// chaos that no run reached. `declared` gives a model's probes as
    /// (name, rare, summary); an unknown model has none to judge.
    pub fn unreached(
        &self,
        declared: impl Fn(&str) -> Vec<(String, bool, String)>,
    ) -> Vec<Unreached> {
        let mut out = Vec::new();
        for (name, model) in &self.models {
            if model.chaos_runs == 0 {
                continue;
            }
            for (probe, rare, summary) in declared(name) {
                if !rare && model.probes.get(&probe).is_none_or(|c| c.runs == 0) {
                    out.push(Unreached {
                        model: name.clone(),
                        probe,
                        summary,
                    });
                }
            }
        }
        out
    }

    /// Liveness invariants some run could not judge.
    pub fn not_judged(&self) -> Vec<NotJudged> {
        let mut out = Vec::new();
        for (name, model) in &self.models {
            for (invariant, count) in &model.unjudged {
                let (first_seed, scenario, why) = count.first.clone().unwrap_or_default();
                out.push(NotJudged {
                    model: name.clone(),
                    invariant: invariant.clone(),
                    runs: count.runs,
                    of_runs: model.runs,
                    first_seed,
                    scenario,
                    why,
                });
            }
        }
        out
    }

    /// Variants whose seeds produced few distinct trails: `(variant, runs, distinct)`.
    pub fn few_trails(&self) -> Vec<(String, u64, u64)> {
        self.variants
            .iter()
            .filter(|(_, v)| {
                v.runs >= FEW_TRAILS_MIN_RUNS && v.distinct_trails * FEW_TRAILS_RATIO <= v.runs
            })
            .map(|(k, v)| (k.clone(), v.runs, v.distinct_trails))
            .collect()
    }

    /// The ledger as a Markdown section (summary.md).
    pub fn markdown(&self, declared: impl Fn(&str) -> Vec<(String, bool, String)>) -> String {
        doc::markdown(&self.blocks(declared))
    }

    /// The ledger as an HTML section (the dashboard), from the same blocks.
    pub fn html(&self, declared: impl Fn(&str) -> Vec<(String, bool, String)>) -> String {
        doc::html(&self.blocks(declared))
    }

    /// The ledger as blocks, for [`Ledger::markdown`] and [`Ledger::html`].
    pub fn blocks(&self, declared: impl Fn(&str) -> Vec<(String, bool, String)>) -> Vec<Block> {
        let mut out = vec![Block::Heading(2, "Coverage".into())];
        self.warning_blocks(&declared, &mut out);
        for (name, model) in &self.models {
            model_blocks(name, model, &declared(name), &mut out);
        }
        out.push(Block::Heading(3, "Distinct trails per variant".into()));
        out.push(table(
            &["variant", "runs", "distinct trails"],
            &[false, true, true],
            self.variants
                .iter()
                .map(|(key, v)| {
                    vec![
                        key.clone(),
                        v.runs.to_string(),
                        v.distinct_trails.to_string(),
                    ]
                })
                .collect(),
        ));
        out
    }

    /// The warnings above the tables: probes never reached, liveness invariants
    /// not judged, variants whose seeds change little.
    fn warning_blocks(
        &self,
        declared: &impl Fn(&str) -> Vec<(String, bool, String)>,
        out: &mut Vec<Block>,
    ) {
        let unreached = self.unreached(declared);
        if !unreached.is_empty() {
            out.push(Block::Para(format!(
                "**{} probe(s) never reached: this sweep did not test those paths.**",
                unreached.len()
            )));
            out.push(Block::List(
                unreached
                    .iter()
                    .map(|u| format!("`{}` `{}`: {}", u.model, u.probe, u.summary))
                    .collect(),
            ));
        }
        let not_judged = self.not_judged();
        if !not_judged.is_empty() {
            out.push(Block::Para(format!(
                "**{} liveness invariant(s) not judged by some runs: those runs could not have failed them.**",
                not_judged.len()
            )));
            out.push(Block::List(
                not_judged
                    .iter()
                    .map(|n| {
                        format!(
                            "`{}` `{}`: {} of {} run(s), first seed {} of `{}`: {}",
                            n.model,
                            n.invariant,
                            n.runs,
                            n.of_runs,
                            n.first_seed,
                            n.scenario,
                            n.why
                        )
                    })
                    .collect(),
            ));
        }
        for (variant, runs, distinct) in self.few_trails() {
            out.push(Block::Para(format!(
                "**Warning:** {variant}: {runs} run(s) gave only {distinct} distinct trail(s); its seeds change little."
            )));
        }
    }
}

/// A table block.
fn table(head: &[&str], right: &[bool], rows: Vec<Vec<String>>) -> Block {
    Block::Table {
        head: head.iter().map(|h| h.to_string()).collect(),
        right: right.to_vec(),
        rows,
    }
}

/// One model's heading and tables: its probes (as `probes` declares them), fail
/// points and fault kinds.
fn model_blocks(
    name: &str,
    model: &ModelLedger,
    probes: &[(String, bool, String)],
    out: &mut Vec<Block>,
) {
    out.push(Block::Heading(
        3,
        format!(
            "Model `{name}`: {} run(s), {} with chaos",
            model.runs, model.chaos_runs
        ),
    ));
    if !probes.is_empty() {
        let rows = probes
            .iter()
            .map(|(probe, rare, _)| {
                let count = model.probes.get(probe).cloned().unwrap_or_default();
                let first = count
                    .first
                    .map(|(s, scenario)| format!("{s} ({scenario})"))
                    .unwrap_or_else(|| "never".into());
                vec![
                    format!("`{probe}`"),
                    if *rare { "yes" } else { "no" }.to_string(),
                    count.runs.to_string(),
                    first,
                ]
            })
            .collect();
        out.push(table(
            &["probe", "rare", "runs that hit it", "first seed"],
            &[false, false, true, false],
            rows,
        ));
    }
    if !model.points.is_empty() {
        let rows = model
            .points
            .iter()
            .map(|(point, used)| {
                vec![
                    format!("`{point}`"),
                    used.armed.to_string(),
                    used.reached.to_string(),
                    used.fired.to_string(),
                ]
            })
            .collect();
        out.push(table(
            &["fail point", "armed", "reached", "fired"],
            &[false, true, true, true],
            rows,
        ));
    }
    if !model.faults.is_empty() {
        let rows = model
            .faults
            .iter()
            .map(|(kind, used)| {
                vec![
                    kind.clone(),
                    used.drawn.to_string(),
                    used.effective.to_string(),
                ]
            })
            .collect();
        out.push(table(
            &["fault kind", "drawn", "took effect"],
            &[false, true, true],
            rows,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coverage(model: &str, chaos: bool, probes: &[&str]) -> Coverage {
        Coverage {
            model: model.into(),
            chaos,
            probes: probes.iter().map(|p| p.to_string()).collect(),
            ..Coverage::default()
        }
    }

    fn declared(model: &str) -> Vec<(String, bool, String)> {
        match model {
            "m" => vec![
                ("often".into(), false, "a common path".into()),
                ("seldom".into(), true, "a rare path".into()),
                ("never".into(), false, "a path nobody took".into()),
            ],
            _ => Vec::new(),
        }
    }

    #[test]
    fn a_probe_never_hit_is_unreached_and_a_rare_one_is_not() {
        let mut ledger = Ledger::default();
        ledger.add("s", "v", 3, "aa", &coverage("m", true, &["often"]));
        ledger.add("s", "v", 1, "bb", &coverage("m", true, &["often"]));
        let unreached = ledger.unreached(declared);
        assert_eq!(unreached.len(), 1);
        assert_eq!(unreached[0].probe, "never");
        assert_eq!(ledger.models["m"].probes["often"].runs, 2);
        assert_eq!(
            ledger.models["m"].probes["often"].first,
            Some((1, "s".into()))
        );
    }

    #[test]
    fn a_liveness_invariant_some_run_could_not_judge_is_listed_with_its_first_seed() {
        let mut ledger = Ledger::default();
        ledger.add("s", "v", 1, "aa", &coverage("m", true, &["often", "never"]));
        assert!(ledger.verdict_with(declared).not_judged.is_empty());
        let mut c = coverage("m", true, &["often", "never"]);
        c.unjudged
            .insert("ready_within_bound".into(), "bound 60 s, 9 s left".into());
        ledger.add("s", "v", 7, "bb", &c);
        ledger.add("t", "v", 4, "cc", &c);
        let not_judged = ledger.verdict_with(declared).not_judged;
        assert_eq!(not_judged.len(), 1);
        let n = &not_judged[0];
        assert_eq!((n.runs, n.of_runs, n.first_seed), (2, 3, 4));
        assert_eq!(n.scenario, "t");
        assert!(ledger
            .markdown(declared)
            .contains("`ready_within_bound`: 2 of 3 run(s)"));
    }

    #[test]
    fn the_markdown_and_the_dashboards_html_are_one_ledger() {
        let mut ledger = Ledger::default();
        let mut c = coverage("m", true, &["often"]);
        c.faults.insert(
            "<b>kill</b>".into(),
            FaultUse {
                drawn: 2,
                effective: 1,
            },
        );
        ledger.add("s", "v", 1, "aa", &c);
        assert_eq!(
            ledger.markdown(declared),
            "## Coverage\n\n\
             **1 probe(s) never reached: this sweep did not test those paths.**\n\n\
             - `m` `never`: a path nobody took\n\n\
             ### Model `m`: 1 run(s), 1 with chaos\n\n\
             | probe | rare | runs that hit it | first seed |\n|---|---|---:|---|\n\
             | `often` | no | 1 | 1 (s) |\n| `seldom` | yes | 0 | never |\n| `never` | no | 0 | never |\n\n\
             | fault kind | drawn | took effect |\n|---|---:|---:|\n| <b>kill</b> | 2 | 1 |\n\n\
             ### Distinct trails per variant\n\n\
             | variant | runs | distinct trails |\n|---|---:|---:|\n| s [v] | 1 | 1 |\n\n"
        );
        let html = ledger.html(declared);
        assert!(
            html.starts_with("<h2>Coverage</h2>\n<p><strong>1 probe(s) never reached"),
            "{html}"
        );
        assert!(
            html.contains("<li><code>m</code> <code>never</code>: a path nobody took</li>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<td><code>often</code></td><td>no</td><td class=\"n\">1</td><td>1 (s)</td>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<td>&lt;b&gt;kill&lt;/b&gt;</td>"),
            "escaped: {html}"
        );
        assert!(!html.contains("<b>"), "{html}");
    }

    #[test]
    fn scripted_only_models_are_not_judged() {
        let mut ledger = Ledger::default();
        ledger.add("s", "v", 1, "aa", &coverage("m", false, &[]));
        assert!(ledger.unreached(declared).is_empty());
    }

    #[test]
    fn shards_added_up_reach_what_either_reached() {
        // Shard 1 hits `often`, shard 2 hits `never`: together nothing is unreached.
        let mut ledger = Ledger::default();
        ledger.add("s", "v", 1, "aa", &coverage("m", true, &["often"]));
        assert_eq!(ledger.unreached(declared).len(), 1);
        ledger.add("s", "v", 2, "bb", &coverage("m", true, &["never"]));
        assert!(ledger.unreached(declared).is_empty());
    }

    #[test]
    fn one_trail_for_many_seeds_is_flagged() {
        let mut ledger = Ledger::default();
        for seed in 1..=20 {
            ledger.add("same", "v", seed, "d1", &coverage("m", false, &[]));
            let digest = format!("{seed:016x}");
            ledger.add("varied", "v", seed, &digest, &coverage("m", false, &[]));
        }
        let few = ledger.few_trails();
        assert_eq!(few, vec![("same [v]".to_string(), 20, 1)]);
        assert_eq!(ledger.variants["varied [v]"].distinct_trails, 20);
    }
}
