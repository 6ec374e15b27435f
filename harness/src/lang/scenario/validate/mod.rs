//! From YAML text to a typed [`Scenario`], with every error located.
//!
//! Two phases. The header phase (`header`) resolves the model, the nodes, the
//! settings and the variants; the step phase reads the steps and the chaos section
//! with a [`Reader`](names::Reader) that holds those, resolved. In each part serde
//! (with `deny_unknown_fields`) reads the structure, then names, durations and
//! model-specific values are resolved. Each step and each variant is read on its
//! own, so one bad step never hides the errors of the next.

mod chaos;
mod client;
mod conditions;
mod domain;
mod errors;
mod expectations;
mod header;
mod matchers;
mod names;
mod network;
mod schedule;
mod steps;
mod templates;
mod workload;

pub use templates::expand_template;
// The JSON Schema of what each reader reads from the tree, beside the reader
// (the scenario's schema module fills raw's placeholders with these and
// assembles the document; raw.rs names none of them).
pub(in crate::lang::scenario) use chaos::{
    chaos_faults_schema, chaos_params_schema, chaos_schema, point_action_schema,
    restart_exited_schema,
};
pub(in crate::lang::scenario) use conditions::{await_shape, since_schema};
pub(in crate::lang::scenario) use expectations::{
    event_kind_schema, except_schema, expect_schema, observed_list_schema, outcomes_schema,
    trail_match_shape,
};
pub(in crate::lang::scenario) use header::{
    bugs_schema, heal_schema, node_name_schema, nodes_schema, params_schema, top_level_shape,
    variants_schema,
};
pub(in crate::lang::scenario) use matchers::{
    absent_schema, bound_schema, observed_schema, observed_shape,
};
pub(in crate::lang::scenario) use schedule::{
    op_schema, schedule_ref_schema, scheduled_faults_schema, scheduled_ops_schema,
};
pub(in crate::lang::scenario) use steps::{
    check_shape, delay_schema, partition_shape, release_shape, stall_schema, steps_schema,
};
pub(in crate::lang::scenario) use workload::{workload_ops_schema, workload_schema};
// For scenarios whose model runs in a target's binary (remote.rs).
pub(super) use errors::file_stem as stem_of_file;
pub(super) use header::default_settings;

use super::Scenario;
use crate::base::trail::hex;
use crate::lang::diag::{Diagnostic, Diagnostics};
use crate::lang::yaml::{self, Loc, Node};
use errors::{file_stem, Errors};
use names::Reader;
use sha2::{Digest, Sha256};

/// Bounds on what a scenario file may ask for. Documented in docs/scenario-format.md.
pub const FILE_BYTES_MAX: usize = 1024 * 1024;
pub const NODES_MAX: usize = crate::base::streams::NODES_MAX;
pub const STEPS_MAX: usize = 10_000;
/// Each variant holds its own copy of the scenario's params: bounded, so that
/// params times variants stays small (docs/scenario-format.md, "Limits").
pub const VARIANTS_MAX: usize = 1_000;
pub const REPEAT_COUNT_MAX: u32 = 100_000;
/// Steps a scenario runs with every `repeat` expanded: nested repeats multiply.
pub const EXPANDED_STEPS_MAX: u64 = 1_000_000;
pub const FAULTS_MAX: usize = 2_000;
/// The consistency checker's budget: memory grows with its steps (tens of bytes
/// each), so a billion is a few tens of GiB at most.
pub const HISTORY_STEPS_MAX: u64 = 1_000_000_000;
/// Concurrent clients of one workload.
pub const CLIENTS_MAX: u64 = 100;
pub const DURATION_MAX: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

const RESERVED_NODE_NAMES: &[&str] = &["leader", "follower", "any", "all", "none"];

#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Io(String),
    /// The file was read; these are its errors.
    Invalid(Diagnostics),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Io(message) => writeln!(f, "{message}"),
            LoadError::Invalid(diagnostics) => write!(f, "{diagnostics}"),
        }
    }
}

fn invalid(diagnostic: Diagnostic) -> LoadError {
    LoadError::Invalid(Diagnostics(vec![diagnostic]))
}

pub fn load_str(file: &str, text: &str) -> Result<Scenario, LoadError> {
    let limits = yaml::Limits {
        bytes_max: FILE_BYTES_MAX,
        ..yaml::Limits::default()
    };
    let root =
        yaml::parse(text, &limits).map_err(|e| invalid(Diagnostic::new(file, e.loc, e.message)))?;
    let sha256 = hex(&Sha256::digest(text.as_bytes()));
    let mut e = Errors::new(file);
    let scenario = read(&mut e, &root, sha256, text);
    match scenario {
        Some(s) if e.is_empty() => Ok(s),
        _ => {
            if e.is_empty() {
                e.error(root.loc, "invalid scenario");
            }
            Err(LoadError::Invalid(e.diags.sorted()))
        }
    }
}

/// A schedule document (`{window, faults, ops}`, YAML or JSON), validated
/// against a loaded scenario's model and nodes; errors name `file`.
pub fn load_schedule(
    scenario: &Scenario,
    file: &str,
    text: &str,
) -> Result<crate::lang::scenario::schedule::Schedule, LoadError> {
    let limits = yaml::Limits {
        bytes_max: schedule::SCHEDULE_BYTES_MAX as usize,
        ..yaml::Limits::default()
    };
    let root =
        yaml::parse(text, &limits).map_err(|e| invalid(Diagnostic::new(file, e.loc, e.message)))?;
    let mut e = Errors::new(file);
    let names: Vec<String> = scenario.variants.iter().map(|v| v.name.clone()).collect();
    let schedule = Reader::new(
        &mut e,
        scenario.model,
        &scenario.nodes,
        &scenario.settings,
        &names,
    )
    .schedule(&root);
    match schedule {
        Some(s) if e.is_empty() => Ok(s),
        _ => {
            if e.is_empty() {
                e.error(root.loc, "invalid schedule");
            }
            Err(LoadError::Invalid(e.diags.sorted()))
        }
    }
}

/// Both phases: the header, then the steps and chaos read against it.
fn read(e: &mut Errors, root: &Node, sha256: String, text: &str) -> Option<Scenario> {
    let header = header::read(e, root)?;
    let mut reader = Reader::new(
        e,
        header.model,
        &header.nodes,
        &header.settings,
        &header.variant_names,
    );
    let chaos = root
        .get("chaos")
        .and_then(|node| reader.chaos(node, header.params.as_ref()));
    let workload_node = root.get("workload");
    let workload = workload_node.and_then(|node| reader.workload(node));
    reader.has_workload = workload_node.is_some();
    let auto = root
        .get("chaos")
        .and_then(|c| c.get("auto"))
        .filter(|_| header::auto_chaos(root));
    let steps = script(&mut reader, root, auto, header.model);
    if let (Some(node), 0) = (workload_node, reader.workload_starts) {
        reader.e.error_hint(
            node.loc,
            "the `workload:` is never started: a workload that never runs tests nothing",
            "add a `- workload: start` step (it runs until `- workload: stop` or the end of the steps)",
        );
    }
    let finale = finale(&mut reader, root, &header.settings, header.model);
    let name_loc = root.get("name").map_or(Loc { line: 1, col: 1 }, |n| n.loc);
    let name = root
        .get("name")
        .and_then(Node::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| file_stem(e.file));
    let description = root
        .get("description")
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_string();
    Some(Scenario {
        file: e.file.to_string(),
        name,
        name_loc,
        description,
        sha256,
        source: text.into(),
        model: header.model,
        nodes: header.nodes,
        settings: header.settings,
        variants: header.variants,
        steps,
        chaos,
        workload,
        finale,
    })
}

/// The steps: the file's, or with `chaos: {auto: true}` and none, the model's
/// own setup (what brings a fresh cluster to where its workload can run).
fn script(
    reader: &mut Reader<'_, '_>,
    root: &Node,
    auto: Option<&Node>,
    model: &'static dyn faultline_api::Model,
) -> Vec<super::Step> {
    match root.get("steps") {
        // The model's own setup: what brings a fresh cluster to where its
        // workload can run.
        None if auto.is_some() => {
            let loc = auto.map_or(root.loc, |a| a.loc);
            let setup = model.info().chaos.setup;
            setup
                .iter()
                .filter_map(|text| {
                    reader
                        .domain_text(loc, "setup step", text, |r, node| r.step(node))
                        .flatten()
                })
                .collect()
        }
        None => {
            reader.e.error_hint(
                root.loc,
                "scenario has no `steps`",
                "add `steps:` with at least one step",
            );
            Vec::new()
        }
        Some(node) => {
            let steps = reader.steps(node);
            let expanded = steps::expanded_steps(&steps);
            if expanded > EXPANDED_STEPS_MAX {
                reader.e.error_hint(
                    node.loc,
                    format!("the steps run {expanded} steps with every `repeat` expanded; the limit is {EXPANDED_STEPS_MAX}"),
                    "lower the `repeat` counts",
                );
            }
            steps
        }
    }
}

/// The final generator: the model's final ops, checked like workload ops.
fn finale(
    reader: &mut Reader<'_, '_>,
    root: &Node,
    settings: &super::Settings,
    model: &'static dyn faultline_api::Model,
) -> Vec<super::WorkloadOp> {
    let finale_on = settings.heal.as_ref().is_some_and(|h| h.final_ops);
    if finale_on {
        let loc = root
            .get("heal")
            .or_else(|| root.get("chaos"))
            .map_or(root.loc, |n| n.loc);
        let texts = model.info().chaos.final_ops;
        texts
            .iter()
            .filter_map(|text| {
                reader
                    .domain_text(loc, "final op", text, |r, node| r.workload_op(node))
                    .flatten()
            })
            .collect()
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests;
