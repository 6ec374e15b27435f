//! Scenarios whose model is not built into this process: every variant names a
//! `target:` build, and the build's binary validates the file and runs it.
//!
//! This process reads only what it needs to dispatch (the name, the default
//! seed, the variants and their targets); the steps, ops and expectations are
//! checked by the target's binary, which has the model. A build that is listed
//! in the manifest but not built leaves its variants loaded but not runnable:
//! commands report them as not run, naming the build command
//! ([`Scenario::unbuilt`](super::Scenario::unbuilt)).

use super::validate::{default_settings, stem_of_file as file_stem, FILE_BYTES_MAX};
use super::{LoadError, Scenario, Variant};
use crate::base::trail::hex;
use crate::lang::diag::{Diagnostic, Diagnostics};
use crate::lang::yaml::{self, Node, Value};
use faultline_api::{Check, ClusterView, Model, ModelInfo, NodeCtx, ParsedOp};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};

/// Whether the file at `path` runs elsewhere: its model is not built into this
/// process and its variants name targets. Unreadable files say `false` (loading
/// them reports why).
pub fn runs_elsewhere(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| remote_parts(&text))
        .is_some()
}

/// The model name and the variants' targets, when the model is not in this
/// process and at least one variant names a target.
fn remote_parts(text: &str) -> Option<(String, Node)> {
    let limits = yaml::Limits {
        bytes_max: FILE_BYTES_MAX,
        ..yaml::Limits::default()
    };
    let root = yaml::parse(text, &limits).ok()?;
    let model = root.get("model")?.as_str()?.to_string();
    if crate::base::models::find(&model).is_some() {
        return None;
    }
    let Value::Map(entries) = &root.get("variants")?.value else {
        return None;
    };
    entries
        .iter()
        .any(|(_, body)| body.get("target").is_some())
        .then_some((model, root))
}

/// Load a scenario that runs elsewhere; `None` when the file is not one.
pub(super) fn load(file: &str, text: &str) -> Option<Result<Scenario, LoadError>> {
    let (model_name, root) = remote_parts(text)?;
    Some(load_parts(file, text, &model_name, &root))
}

fn load_parts(
    file: &str,
    text: &str,
    model_name: &str,
    root: &Node,
) -> Result<Scenario, LoadError> {
    let mut diags = Diagnostics::default();
    let mut variants = Vec::new();
    let mut binaries: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    if let Some(Value::Map(entries)) = root.get("variants").map(|v| &v.value) {
        for (key, body) in entries {
            if let Some(variant) =
                remote_variant(file, model_name, key, body, &mut diags, &mut binaries)
            {
                variants.push(variant);
            }
        }
    }
    if !diags.is_empty() {
        return Err(LoadError::Invalid(diags.sorted()));
    }
    // The builds check everything this process cannot: steps, ops, expectations.
    // With none of them built, only what dispatch needs is checked here; the
    // variants are not run, and say so.
    for binary in binaries.values() {
        match crate::lang::targets::validate_in(binary, file, text) {
            Ok(()) => {}
            Err(Ok(diagnostics)) => return Err(LoadError::Invalid(diagnostics)),
            Err(Err(message)) => return Err(LoadError::Io(message)),
        }
    }
    let mut settings = default_settings();
    if let Some(seed) = root
        .get("defaults")
        .and_then(|d| d.get("seed"))
        .and_then(|s| match s.value {
            Value::Int(n) => u64::try_from(n).ok(),
            // Not a seed; the target's binary reports it when it validates.
            Value::Null
            | Value::Bool(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => None,
        })
    {
        settings.seed = seed;
    }
    let name_loc = root
        .get("name")
        .map_or(crate::lang::yaml::Loc { line: 1, col: 1 }, |n| n.loc);
    Ok(Scenario {
        file: file.to_string(),
        name_loc,
        name: root
            .get("name")
            .and_then(Node::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| file_stem(file)),
        description: root
            .get("description")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string(),
        sha256: hex(&Sha256::digest(text.as_bytes())),
        source: text.into(),
        model: remote_model(model_name),
        nodes: Vec::new(),
        settings,
        variants,
        steps: Vec::new(),
        chaos: None,
        workload: None,
        finale: Vec::new(),
    })
}

/// One variant of a scenario whose model runs in a target's binary: its
/// target must be a listed build of the model (`binaries` gets its binary, when
/// built); its errors go to `diags`.
fn remote_variant(
    file: &str,
    model_name: &str,
    key: &Node,
    body: &Node,
    diags: &mut Diagnostics,
    binaries: &mut BTreeMap<String, std::path::PathBuf>,
) -> Option<Variant> {
    let name = key.as_str().unwrap_or_default().to_string();
    let Some(target_node) = body.get("target") else {
        diags.push(
            Diagnostic::new(
                file,
                key.loc,
                format!(
                    "variant `{name}` has no `target`, and model `{model_name}` is not built into this binary"
                ),
            )
            .hint(format!(
                "give every variant a `target: {model_name}@RELEASE` listed in {}",
                crate::lang::targets::MANIFEST
            )),
        );
        return None;
    };
    let Some(target) = target_node.as_str() else {
        diags.push(Diagnostic::new(
            file,
            target_node.loc,
            "a target is NAME@RELEASE",
        ));
        return None;
    };
    match crate::lang::targets::parse(target) {
        Ok((name, _)) if name == model_name => {}
        Ok((name, _)) => {
            diags.push(Diagnostic::new(
                file,
                target_node.loc,
                format!("target `{target}` is a build of `{name}`, but this scenario's model is `{model_name}`"),
            ));
            return None;
        }
        Err(message) => {
            diags.push(Diagnostic::new(file, target_node.loc, message));
            return None;
        }
    }
    match crate::lang::targets::locate(Path::new(file), target) {
        // A build that is listed but not built: the variant loads, and
        // is reported as not run (`Scenario::unbuilt`).
        Ok(build) if build.check().is_err() => {}
        Ok(build) => {
            binaries.insert(target.to_string(), build.binary);
        }
        Err(message) => {
            diags.push(Diagnostic::new(file, target_node.loc, message));
            return None;
        }
    }
    Some(Variant {
        name,
        loc: key.loc,
        target: Some(target.to_string()),
        bugs: Default::default(),
        params: serde_json::Value::Null,
        expect: super::Expect {
            known: known_defects(body),
            ..Default::default()
        },
    })
}

/// A model that lives in another binary: only its name is known here. Every
/// variant of its scenarios runs in a target's binary, so nothing here ever
/// starts its nodes or judges its runs.
struct Remote {
    info: ModelInfo,
}

impl Model for Remote {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn parse_op(&self, _op: &serde_json::Value) -> Result<ParsedOp, String> {
        Err(format!(
            "model `{}` is checked by its target's binary",
            self.info.name
        ))
    }

    fn parse_params(&self, _params: &serde_json::Value) -> Result<(), String> {
        Ok(())
    }

    fn start(&self, _ctx: NodeCtx) -> Pin<Box<dyn Future<Output = turmoil::Result>>> {
        unreachable!(
            "model `{}` runs in its target's binary; the runner dispatches every variant there",
            self.info.name
        )
    }

    fn check(&self, invariant: &str, _cluster: &ClusterView) -> Check {
        Check::Fail(format!(
            "invariant `{invariant}` of model `{}` is judged in its target's binary",
            self.info.name
        ))
    }
}

/// One stand-in per model name for the life of the process.
fn remote_model(name: &str) -> &'static dyn Model {
    static REMOTES: OnceLock<Mutex<BTreeMap<String, &'static (dyn Model + Sync)>>> =
        OnceLock::new();
    let mut remotes = REMOTES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *remotes.entry(name.to_string()).or_insert_with(|| {
        let name: &'static str = Box::leak(name.to_string().into_boxed_str());
        Box::leak(Box::new(Remote {
            info: ModelInfo {
                name,
                summary: "a model built into a target's binary",
                roles: Vec::new(),
                ops: Vec::new(),
                fail_points: Vec::new(),
                invariants: Vec::new(),
                bugs: Vec::new(),
                probes: Vec::new(),
                index_format: Default::default(),
                has_leader: false,
                leader_transfer: false,
                params: Vec::new(),
                // Its keys are declared in the target's binary.
                observations: Vec::new(),
                reports_removed: false,
                // Judged in the target's binary, by the model's own declaration.
                history: faultline_api::HistoryModel::None,
                chaos: faultline_api::ChaosDomain::DEFAULT,
            },
        }))
    })
}

/// A variant's `expect.except` entries as written (the build's binary checks
/// them): dispatch needs to know a variant has known defects, so that a run
/// made without them (a hunt's arm) is judged without them.
fn known_defects(body: &Node) -> Vec<super::KnownDefect> {
    let Some(except) = body.get("expect").and_then(|e| e.get("except")) else {
        return Vec::new();
    };
    let items: Vec<&Node> = match &except.value {
        Value::Seq(items) => items.iter().collect(),
        Value::Map(_)
        | Value::Null
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Str(_) => {
            vec![except]
        }
    };
    items
        .into_iter()
        .filter_map(|item| crate::lang::yaml::from_node::<super::raw::KnownDefect>(item).ok())
        .map(|raw| super::KnownDefect {
            loc: raw.key.loc,
            key: raw.key.value,
            checker: raw.checker.value,
        })
        .collect()
}
