//! The models this process knows: the ones built into faultline
//! (`nodes::registry`) plus any that a binary of another crate registers with
//! `cli::main_with_models`. Scenario loading, `list` and the runner ask
//! here, never the static table directly, so a crate that puts its own service
//! on the harness gets every command for it.

use faultline_api::Model;
use std::sync::OnceLock;

/// Models registered by the binary, in its order. Set once, before any command runs.
static EXTRA: OnceLock<Vec<&'static (dyn Model + Sync)>> = OnceLock::new();

/// Add models to this process. Call once, before loading any scenario; a name
/// that is already taken (built in, or given twice) is an error.
pub fn register(models: &[&'static (dyn Model + Sync)]) -> Result<(), String> {
    let mut names: Vec<&str> = nodes::registry::every()
        .iter()
        .map(|m| m.info().name)
        .collect();
    for model in models {
        let name = model.info().name;
        if names.contains(&name) {
            return Err(format!("model `{name}` is registered twice"));
        }
        names.push(name);
    }
    EXTRA
        .set(models.to_vec())
        .map_err(|_| "models are registered once per process".to_string())
}

/// Every model, built-in ones first, in the order `faultline list` shows them.
pub fn all() -> Vec<&'static dyn Model> {
    let mut models = nodes::registry::models();
    if let Some(extra) = EXTRA.get() {
        models.extend(extra.iter().map(|m| *m as &'static dyn Model));
    }
    models
}

/// The model of this name: one `all` lists, or the harness's own test model
/// (`faulty`), which is found by name but never listed.
pub fn find(name: &str) -> Option<&'static dyn Model> {
    nodes::registry::find(name).or_else(|| all().into_iter().find(|m| m.info().name == name))
}

pub fn names() -> Vec<&'static str> {
    all().into_iter().map(|m| m.info().name).collect()
}

/// The model of this process that runs `target` (`NAME@RELEASE`), if any.
pub fn providing(target: &str) -> Option<&'static dyn Model> {
    let (name, release) = target.split_once('@')?;
    all()
        .into_iter()
        .find(|m| m.info().name == name && m.release() == Some(release))
}

/// The targets this process runs itself (`openraft@0.10.0-alpha.24`).
pub fn provided() -> Vec<String> {
    all()
        .into_iter()
        .filter_map(|m| m.release().map(|r| format!("{}@{r}", m.info().name)))
        .collect()
}

/// A model's declared probes: from this process's registry (built in or
/// registered), else from the declarations a run of it carried
/// (`Coverage::declared`); a model known
/// neither way has none.
pub fn probes(model: &str, carried: &[DeclaredProbe]) -> Vec<DeclaredProbe> {
    match find(model) {
        Some(m) => m
            .info()
            .probes
            .iter()
            .map(|p| DeclaredProbe {
                name: p.name.to_string(),
                rare: p.rare,
                summary: p.summary.to_string(),
            })
            .collect(),
        None => carried.to_vec(),
    }
}

/// The probe declarations a run of `model` carries in its coverage: none for a
/// model built into faultline (every faultline binary has those), all of them
/// for one registered by another binary.
pub fn carried_probes(model: &str) -> Vec<DeclaredProbe> {
    if nodes::registry::find(model).is_some() {
        return Vec::new();
    }
    probes(model, &[])
}

/// One probe a model declares, as a run's coverage carries it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeclaredProbe {
    pub name: String,
    pub rare: bool,
    pub summary: String,
}
