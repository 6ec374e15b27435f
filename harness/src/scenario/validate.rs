//! From YAML text to a typed [`Scenario`], with every error located.
//!
//! Parsing and validation are one pass over the YAML tree: serde (with
//! `deny_unknown_fields`) reads each part's structure, then names, durations and
//! model-specific values are resolved. Each step and each variant is read on its
//! own, so one bad step never hides the errors of the next.

use super::raw;
use super::*;
use crate::diag::{Diagnostic, Diagnostics};
use crate::duration;
use crate::trail::hex;
use crate::yaml::{self, from_node, nearest, Loc, Node, Spanned, Value};
use nodes::api::{BugMode, ModelInfo};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// Bounds on what a scenario file may ask for. Documented in docs/scenario-format.md.
pub const FILE_BYTES_MAX: usize = 1024 * 1024;
pub const NODES_MAX: usize = 32;
pub const STEPS_MAX: usize = 10_000;
pub const REPEAT_COUNT_MAX: u32 = 100_000;
pub const FAULTS_MAX: usize = 2_000;
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

pub fn load(path: &Path) -> Result<Scenario, LoadError> {
    let file = path.display().to_string();
    let metadata =
        std::fs::metadata(path).map_err(|e| LoadError::Io(format!("{file}: cannot read: {e}")))?;
    if metadata.is_dir() {
        return Err(LoadError::Io(format!(
            "{file}: is a directory; give a scenario file"
        )));
    }
    if metadata.len() as usize > FILE_BYTES_MAX {
        let message = format!(
            "file is {} bytes; the limit is {FILE_BYTES_MAX}",
            metadata.len()
        );
        return Err(invalid(Diagnostic::new(
            &file,
            Loc { line: 1, col: 1 },
            message,
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| LoadError::Io(format!("{file}: cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        invalid(Diagnostic::new(
            &file,
            Loc { line: 1, col: 1 },
            format!("file is not UTF-8 ({e})"),
        ))
    })?;
    load_str(&file, &text)
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
    let mut v = Validator {
        file,
        diags: Diagnostics::default(),
        info: None,
        nodes: Vec::new(),
        faults: 0,
        variant_names: Vec::new(),
    };
    let scenario = v.scenario(&root, sha256);
    match scenario {
        Some(s) if v.diags.is_empty() => Ok(s),
        _ => {
            if v.diags.is_empty() {
                v.error(root.loc, "invalid scenario");
            }
            Err(LoadError::Invalid(v.diags.sorted()))
        }
    }
}

struct Validator<'a> {
    file: &'a str,
    diags: Diagnostics,
    info: Option<&'static ModelInfo>,
    nodes: Vec<NodeSpec>,
    /// Fault steps seen so far (bounded by FAULTS_MAX).
    faults: usize,
    /// The variant names the file declares, for steps that name variants.
    variant_names: Vec<String>,
}

/// The step kinds, as written in files. One line per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KindName {
    Client,
    TransferLeader,
    Partition,
    Heal,
    Hold,
    Release,
    Latency,
    Crash,
    Restart,
    Stop,
    Start,
    FailPoint,
    ClearFailPoint,
    Sleep,
    Await,
    Check,
    Repeat,
}

const KIND_NAMES: &[(&str, KindName)] = &[
    ("client", KindName::Client),
    ("transfer_leader", KindName::TransferLeader),
    ("partition", KindName::Partition),
    ("heal", KindName::Heal),
    ("hold", KindName::Hold),
    ("release", KindName::Release),
    ("latency", KindName::Latency),
    ("crash", KindName::Crash),
    ("restart", KindName::Restart),
    ("stop", KindName::Stop),
    ("start", KindName::Start),
    ("failpoint", KindName::FailPoint),
    ("clear_failpoint", KindName::ClearFailPoint),
    ("sleep", KindName::Sleep),
    ("await", KindName::Await),
    ("check", KindName::Check),
    ("repeat", KindName::Repeat),
];

pub fn step_kind_names() -> Vec<&'static str> {
    KIND_NAMES.iter().map(|(name, _)| *name).collect()
}

fn list(names: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{}`", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl<'a> Validator<'a> {
    fn error(&mut self, loc: Loc, message: impl Into<String>) {
        self.diags.push(Diagnostic::new(self.file, loc, message));
    }

    fn error_hint(&mut self, loc: Loc, message: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diagnostic::new(self.file, loc, message).hint(hint));
    }

    fn yaml_error(&mut self, error: yaml::Error) {
        self.error(error.loc, error.message);
    }

    fn unknown_name<'n>(
        &mut self,
        loc: Loc,
        what: &str,
        name: &str,
        candidates: impl IntoIterator<Item = &'n str> + Clone,
    ) {
        let message = format!("unknown {what} `{name}`");
        let valid = list(candidates.clone());
        match nearest(name, candidates) {
            Some(best) => self.error_hint(
                loc,
                message,
                format!("did you mean `{best}`? valid: {valid}"),
            ),
            None => self.error_hint(loc, message, format!("valid: {valid}")),
        }
    }

    // ---- top level ----

    fn scenario(&mut self, root: &Node, sha256: String) -> Option<Scenario> {
        let Value::Map(entries) = &root.value else {
            self.error(
                root.loc,
                format!(
                    "a scenario is a mapping (model, nodes, steps, ...), found {}",
                    root.kind_name()
                ),
            );
            return None;
        };
        for (key, _) in entries {
            if let Some(k) = key.as_str() {
                if !raw::TOP_LEVEL_KEYS.contains(&k) {
                    self.unknown_name(
                        key.loc,
                        "top-level key",
                        k,
                        raw::TOP_LEVEL_KEYS.iter().copied(),
                    );
                }
            }
        }
        let header_node = map_filtered(root, |k| {
            raw::TOP_LEVEL_KEYS.contains(&k) && k != "steps" && k != "variants"
        });
        let header: Option<raw::Header> = match from_node(&header_node) {
            Ok(h) => Some(h),
            Err(e) => {
                self.yaml_error(e);
                None
            }
        };
        let model = self.model(root)?;
        self.info = Some(model.info());
        self.nodes(root.get("nodes"), root.loc);
        let defaults = header.and_then(|h| h.defaults).unwrap_or_default();
        let settings = self.settings(&defaults, root.get("heal"));
        let params = self.params(root.get("params"));
        let variants = self.variants(root, &params);
        self.variant_names = declared_variants(root);
        let chaos = root.get("chaos").and_then(|node| self.chaos(node));
        let steps = match root.get("steps") {
            None => {
                self.error_hint(
                    root.loc,
                    "scenario has no `steps`",
                    "add `steps:` with at least one step",
                );
                Vec::new()
            }
            Some(node) => self.steps(node),
        };
        let name = root
            .get("name")
            .and_then(Node::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| file_stem(self.file));
        let description = root
            .get("description")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string();
        Some(Scenario {
            file: self.file.to_string(),
            name,
            description,
            sha256,
            model,
            nodes: self.nodes.clone(),
            settings,
            variants,
            steps,
            chaos,
        })
    }

    fn model(&mut self, root: &Node) -> Option<&'static dyn Model> {
        let Some(node) = root.get("model") else {
            let names = nodes::registry::names();
            self.error_hint(
                root.loc,
                "scenario has no `model`",
                format!("add `model:` with one of {}", list(names)),
            );
            return None;
        };
        let Some(name) = node.as_str() else {
            self.error(
                node.loc,
                format!("`model` is a name, found {}", node.kind_name()),
            );
            return None;
        };
        match nodes::registry::find(name) {
            Some(model) => Some(model),
            None => {
                self.unknown_name(node.loc, "model", name, nodes::registry::names());
                None
            }
        }
    }

    fn nodes(&mut self, node: Option<&Node>, root_loc: Loc) {
        let info = self.info.expect("model resolved");
        let Some(node) = node else {
            self.error_hint(
                root_loc,
                "scenario has no `nodes`",
                "add `nodes: [n1, n2, n3]`",
            );
            return;
        };
        let Value::Seq(items) = &node.value else {
            self.error(
                node.loc,
                format!("`nodes` is a list, found {}", node.kind_name()),
            );
            return;
        };
        if items.is_empty() || items.len() > NODES_MAX {
            self.error(
                node.loc,
                format!(
                    "a scenario has 1..={NODES_MAX} nodes, found {}",
                    items.len()
                ),
            );
        }
        let default_role = info.roles[0].name;
        for item in items {
            let (name, role) = match &item.value {
                Value::Str(name) => (
                    Spanned {
                        loc: item.loc,
                        value: name.clone(),
                    },
                    None,
                ),
                Value::Map(_) => match from_node::<raw::NodeFull>(item) {
                    Ok(full) => (full.name, Some(full.role)),
                    Err(e) => {
                        self.yaml_error(e);
                        continue;
                    }
                },
                _ => {
                    self.error(
                        item.loc,
                        format!(
                            "a node is a name or {{name: NAME, role: ROLE}}, found {}",
                            item.kind_name()
                        ),
                    );
                    continue;
                }
            };
            self.node_name_ok(&name);
            let role = match role {
                None => default_role.to_string(),
                Some(role) if info.role(&role.value).is_some() => role.value,
                Some(role) => {
                    self.unknown_name(
                        role.loc,
                        "role",
                        &role.value,
                        info.roles.iter().map(|r| r.name),
                    );
                    continue;
                }
            };
            self.nodes.push(NodeSpec {
                name: name.value,
                role,
            });
        }
        if let Err(message) = info.check_nodes(&self.nodes) {
            if self.diags.is_empty() {
                self.error(node.loc, message);
            }
        }
    }

    fn node_name_ok(&mut self, name: &Spanned<String>) {
        let valid = !name.value.is_empty()
            && name.value.len() <= 32
            && name
                .value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            self.error(
                name.loc,
                format!(
                    "node name `{}` must be 1-32 letters, digits, `-` or `_`",
                    name.value
                ),
            );
        } else if RESERVED_NODE_NAMES.contains(&name.value.as_str()) {
            self.error(
                name.loc,
                format!("`{}` is reserved; name the node differently", name.value),
            );
        } else if self.nodes.iter().any(|n| n.name == name.value) {
            self.error(name.loc, format!("node `{}` is listed twice", name.value));
        }
    }

    fn params(&mut self, node: Option<&Node>) -> Option<(Loc, serde_json::Value)> {
        let node = node?;
        match &node.value {
            Value::Map(_) => Some((node.loc, node.to_json())),
            Value::Null => None,
            _ => {
                self.error(
                    node.loc,
                    format!("`params` is a mapping, found {}", node.kind_name()),
                );
                None
            }
        }
    }

    // ---- settings ----

    fn duration(&mut self, text: &Spanned<String>) -> Option<std::time::Duration> {
        match duration::parse(&text.value) {
            Ok(d) if d > DURATION_MAX => {
                self.error(
                    text.loc,
                    format!("duration `{}` is over the limit of 7 days", text.value),
                );
                None
            }
            Ok(d) => Some(d),
            Err(message) => {
                self.error(text.loc, message);
                None
            }
        }
    }

    fn duration_or(
        &mut self,
        text: &Option<Spanned<String>>,
        default: std::time::Duration,
    ) -> std::time::Duration {
        match text {
            None => default,
            Some(text) => self.duration(text).unwrap_or(default),
        }
    }

    fn settings(&mut self, raw: &raw::Defaults, heal: Option<&Node>) -> Settings {
        let mut s = default_settings();
        if let Some(seed) = &raw.seed {
            s.seed = seed.value;
        }
        if let Some(tick) = &raw.tick {
            if let Some(d) = self.duration(tick) {
                if d.as_millis() == 0
                    || d.as_micros() % 1000 != 0
                    || d > std::time::Duration::from_secs(1)
                {
                    self.error(tick.loc, "`tick` is a whole number of milliseconds, 1ms..=1s (turmoil's timer resolution is 1 ms)");
                } else {
                    s.tick = d;
                }
            }
        }
        if let Some(latency) = &raw.latency {
            s.latency_min = self.duration_or(&Some(latency.min.clone()), s.latency_min);
            s.latency_max = self.duration_or(&Some(latency.max.clone()), s.latency_max);
            if s.latency_min > s.latency_max {
                self.error(latency.min.loc, "latency `min` is greater than `max`");
            }
        }
        s.op_timeout = self.duration_or(&raw.op_timeout, s.op_timeout);
        if let Some(limits) = &raw.limits {
            self.limits(limits, &mut s.limits);
        }
        s.random_order = raw.random_order.unwrap_or(false);
        s.heal = self.heal(heal, s.heal.clone());
        s
    }

    fn limits(&mut self, raw: &raw::RawLimits, limits: &mut Limits) {
        limits.duration = self.duration_or(&raw.duration, limits.duration);
        let positive = |v: &mut Self, value: &Option<Spanned<u64>>, name: &str| -> Option<u64> {
            let value = value.as_ref()?;
            if value.value == 0 {
                v.error(value.loc, format!("limit `{name}` must be at least 1"));
                return None;
            }
            Some(value.value)
        };
        if let Some(steps) = positive(self, &raw.steps, "steps") {
            limits.steps = steps;
        }
        if let Some(events) = positive(self, &raw.events, "events") {
            limits.events = events as usize;
        }
        if let Some(messages) = positive(self, &raw.messages_in_flight, "messages_in_flight") {
            limits.messages_in_flight = messages as usize;
        }
    }

    fn heal(&mut self, node: Option<&Node>, default: Option<Heal>) -> Option<Heal> {
        let Some(node) = node else { return default };
        let mut heal = default.expect("heal is on by default");
        match &node.value {
            Value::Bool(false) => None,
            Value::Bool(true) => Some(heal),
            Value::Map(_) => match from_node::<raw::HealSpec>(node) {
                Ok(spec) => {
                    heal.within = self.duration_or(&spec.within, heal.within);
                    heal.settle = self.duration_or(&spec.settle, heal.settle);
                    Some(heal)
                }
                Err(e) => {
                    self.yaml_error(e);
                    Some(heal)
                }
            },
            _ => {
                self.error(
                    node.loc,
                    "`heal` is `false`, `true` or {within: 30s, settle: 1s}",
                );
                Some(heal)
            }
        }
    }

    // ---- variants and expectations ----

    fn variants(&mut self, root: &Node, params: &Option<(Loc, serde_json::Value)>) -> Vec<Variant> {
        let mut variants = Vec::new();
        match (root.get("expect"), root.get("variants")) {
            (Some(expect), Some(v)) => {
                self.error_hint(
                    expect.loc,
                    "both `expect` and `variants` are given",
                    "put `expect:` inside each variant",
                );
                let _ = v;
            }
            (Some(expect), None) => {
                if let Some(expect) = self.expect(expect) {
                    let bugs = BugSet::default();
                    let merged = self.merge_params(params, &None, root.loc);
                    variants.push(Variant {
                        name: "default".into(),
                        loc: root.loc,
                        bugs,
                        params: merged,
                        expect,
                    });
                }
            }
            (None, Some(node)) => self.variant_map(node, params, &mut variants),
            (None, None) => self.error_hint(
                root.loc,
                "scenario has no expectations",
                "add `expect: converged` or `variants:` with an `expect:` for each",
            ),
        }
        variants
    }

    fn variant_map(
        &mut self,
        node: &Node,
        params: &Option<(Loc, serde_json::Value)>,
        out: &mut Vec<Variant>,
    ) {
        let Value::Map(entries) = &node.value else {
            self.error(
                node.loc,
                "`variants` is a mapping from variant name to {bugs, params, expect}",
            );
            return;
        };
        if entries.is_empty() {
            self.error(node.loc, "`variants` is empty");
        }
        for (key, body) in entries {
            let Some(name) = key.as_str() else {
                self.error(key.loc, "a variant name is a string");
                continue;
            };
            if out.iter().any(|v| v.name == name) {
                self.error(key.loc, format!("variant `{name}` is given twice"));
            }
            if let Err(e) = from_node::<raw::Variant>(body) {
                self.yaml_error(e);
                continue;
            }
            let bugs = self.bugs(body.get("bugs"));
            let own = self.params(body.get("params"));
            let merged = self.merge_params(params, &own, key.loc);
            let Some(expect) = body.get("expect").and_then(|e| self.expect(e)) else {
                continue;
            };
            out.push(Variant {
                name: name.to_string(),
                loc: key.loc,
                bugs,
                params: merged,
                expect,
            });
        }
    }

    fn bugs(&mut self, node: Option<&Node>) -> BugSet {
        let info = self.info.expect("model resolved");
        let mut set = BugSet::default();
        let Some(node) = node else { return set };
        let Value::Map(entries) = &node.value else {
            self.error(
                node.loc,
                "`bugs` is a mapping from report key to `buggy` or `fixed`",
            );
            return set;
        };
        for (key, mode) in entries {
            let Some(k) = key.as_str() else { continue };
            if info.bug(k).is_none() {
                let keys: Vec<&str> = info.bugs.iter().map(|b| b.key).collect();
                if keys.is_empty() {
                    self.error(
                        key.loc,
                        format!("model `{}` has no known bugs; remove `{k}`", info.name),
                    );
                } else {
                    self.unknown_name(key.loc, "bug key", k, keys);
                }
                continue;
            }
            let mode = match mode.as_str() {
                Some("buggy") => BugMode::Buggy,
                Some("fixed") => BugMode::Fixed,
                _ => {
                    self.error(mode.loc, format!("bug `{k}` is `buggy` or `fixed`"));
                    continue;
                }
            };
            set.0.insert(k.to_string(), mode);
        }
        set
    }

    fn merge_params(
        &mut self,
        base: &Option<(Loc, serde_json::Value)>,
        own: &Option<(Loc, serde_json::Value)>,
        fallback: Loc,
    ) -> serde_json::Value {
        let mut merged = serde_json::Map::new();
        for (_, value) in base.iter().chain(own.iter()) {
            if let serde_json::Value::Object(map) = value {
                for (k, v) in map {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
        let merged = serde_json::Value::Object(merged);
        let model = nodes::registry::find(self.info.expect("model").name).expect("registered");
        if let Err(message) = model.parse_params(&merged) {
            let loc = own
                .as_ref()
                .or(base.as_ref())
                .map(|(loc, _)| *loc)
                .unwrap_or(fallback);
            match serde_suggestion(&message) {
                Some(best) => self.error_hint(
                    loc,
                    format!("invalid params: {message}"),
                    format!("did you mean `{best}`?"),
                ),
                None => self.error(loc, format!("invalid params: {message}")),
            }
        }
        merged
    }

    fn expect(&mut self, node: &Node) -> Option<Expect> {
        let mut expect = Expect::default();
        match &node.value {
            Value::Str(_) | Value::Seq(_) => expect.outcomes = self.outcomes(node)?,
            Value::Map(_) => {
                let full = match from_node::<raw::ExpectFull>(node) {
                    Ok(full) => full,
                    Err(e) => {
                        self.yaml_error(e);
                        return None;
                    }
                };
                expect.outcomes = self.outcomes(node.get("outcome").expect("serde checked"))?;
                expect.trail = full
                    .trail
                    .iter()
                    .filter_map(|m| self.trail_match(m))
                    .collect();
                expect.absent = full
                    .absent
                    .iter()
                    .filter_map(|m| self.trail_match(m))
                    .collect();
                expect.observed = full
                    .observed
                    .iter()
                    .filter_map(|o| self.observed(o))
                    .collect();
            }
            _ => {
                self.error(node.loc, "`expect` is an outcome, a list of outcomes, or {outcome, trail, absent, observed}");
                return None;
            }
        }
        Some(expect)
    }

    fn outcomes(&mut self, node: &Node) -> Option<Vec<Outcome>> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) if !items.is_empty() => items.iter().collect(),
            _ => {
                self.error(node.loc, "an expected outcome is one of `converged`, `diverged`, `violated`, `stuck`, `crashed` (or a list of them)");
                return None;
            }
        };
        let mut outcomes = Vec::new();
        for item in items {
            let name = item.as_str().unwrap_or("");
            match Outcome::parse(name) {
                Some(o) => outcomes.push(o),
                None => self.unknown_name(
                    item.loc,
                    "outcome",
                    name,
                    Outcome::ALL.iter().map(|o| o.name()),
                ),
            }
        }
        (!outcomes.is_empty()).then_some(outcomes)
    }

    fn trail_match(&mut self, m: &Spanned<raw::TrailMatch>) -> Option<TrailMatch> {
        let raw = &m.value;
        if let Some(node) = &raw.node {
            self.node_ref(node)?;
        }
        let kind = match &raw.kind {
            None => None,
            Some(kind) => {
                match serde_json::from_value::<Kind>(serde_json::Value::String(kind.value.clone()))
                {
                    Ok(k) => Some(k),
                    Err(_) => {
                        let names: Vec<String> = Kind::ALL.iter().map(|k| k.name()).collect();
                        self.unknown_name(
                            kind.loc,
                            "event kind",
                            &kind.value,
                            names.iter().map(String::as_str),
                        );
                        return None;
                    }
                }
            }
        };
        if raw.node.is_none() && kind.is_none() && raw.contains.is_none() {
            self.error(
                m.loc,
                "a trail match needs at least one of `node`, `kind`, `contains`",
            );
            return None;
        }
        Some(TrailMatch {
            loc: m.loc,
            node: raw.node.as_ref().map(|n| n.value.clone()),
            kind,
            contains: raw.contains.clone(),
            count: raw.count,
        })
    }

    fn observed(&mut self, o: &Spanned<raw::Observed>) -> Option<ObservedMatch> {
        let node = self.node_ref(&o.value.node)?;
        Some(ObservedMatch {
            loc: o.loc,
            node,
            key: o.value.key.clone(),
            value: o.value.value.clone(),
        })
    }

    // ---- names ----

    fn node_ref(&mut self, name: &Spanned<String>) -> Option<NodeId> {
        if let Some(id) = self.nodes.iter().position(|n| n.name == name.value) {
            return Some(id);
        }
        let names: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
        self.unknown_name(
            name.loc,
            "node",
            &name.value,
            names.iter().map(String::as_str),
        );
        None
    }

    fn target(&mut self, name: &Spanned<String>) -> Option<Target> {
        let info = self.info.expect("model");
        if name.value == "leader" {
            if info.has_leader {
                return Some(Target::Leader);
            }
            self.error(
                name.loc,
                format!("model `{}` has no leader; name a node", info.name),
            );
            return None;
        }
        self.node_ref(name).map(Target::Node)
    }

    fn node_pair(&mut self, between: &Spanned<Vec<Spanned<String>>>) -> Option<(NodeId, NodeId)> {
        if between.value.len() != 2 {
            self.error(
                between.loc,
                format!("`between` names two nodes, found {}", between.value.len()),
            );
            return None;
        }
        let a = self.node_ref(&between.value[0]);
        let b = self.node_ref(&between.value[1]);
        let (a, b) = (a?, b?);
        if a == b {
            self.error(between.loc, "`between` names the same node twice");
            return None;
        }
        Some((a, b))
    }

    fn point(&mut self, name: &Spanned<String>) -> Option<&'static FailPointInfo> {
        let info = self.info.expect("model");
        if let Some(point) = info.fail_point(&name.value) {
            return Some(point);
        }
        let names: Vec<&str> = info.fail_points.iter().map(|p| p.name).collect();
        if names.is_empty() {
            self.error(
                name.loc,
                format!("model `{}` declares no fail points", info.name),
            );
        } else {
            self.unknown_name(name.loc, "fail point", &name.value, names);
        }
        None
    }

    // ---- steps ----

    fn steps(&mut self, node: &Node) -> Vec<Step> {
        let Value::Seq(items) = &node.value else {
            self.error(
                node.loc,
                format!("`steps` is a list, found {}", node.kind_name()),
            );
            return Vec::new();
        };
        if items.is_empty() {
            self.error_hint(
                node.loc,
                "`steps` is empty: a run that tests nothing is not green",
                "add at least one step",
            );
        }
        let mut steps = Vec::new();
        for item in items {
            if steps.len() >= STEPS_MAX {
                self.error(item.loc, format!("more than {STEPS_MAX} steps in one list"));
                break;
            }
            if let Some(step) = self.step(item) {
                steps.push(step);
            }
        }
        steps
    }

    fn step(&mut self, node: &Node) -> Option<Step> {
        let (key, body) = match &node.value {
            Value::Map(entries) if entries.len() == 1 => (&entries[0].0, &entries[0].1),
            Value::Str(kind) => {
                self.error_hint(
                    node.loc,
                    format!("step `{kind}` needs a value"),
                    format!("write `- {kind}: ...`"),
                );
                return None;
            }
            _ => {
                self.error_hint(
                    node.loc,
                    "a step is a mapping with one key, the step kind",
                    "for example `- crash: n1` or `- sleep: 2s`",
                );
                return None;
            }
        };
        let name = key.as_str().unwrap_or("");
        let Some(kind) = KIND_NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k) else {
            self.unknown_name(key.loc, "step kind", name, step_kind_names());
            return None;
        };
        if is_fault(kind) {
            self.faults += 1;
            if self.faults == FAULTS_MAX + 1 {
                self.error(key.loc, format!("more than {FAULTS_MAX} fault steps"));
            }
        }
        let kind = self.step_kind(kind, body)?;
        Some(Step { loc: key.loc, kind })
    }

    /// The one place that reads each step kind.
    fn step_kind(&mut self, kind: KindName, body: &Node) -> Option<StepKind> {
        match kind {
            KindName::Client => self.client(body),
            KindName::TransferLeader => self.transfer_leader(body),
            KindName::Partition => self.partition(body),
            KindName::Heal => match &body.value {
                Value::Null | Value::Bool(true) => Some(StepKind::Heal),
                Value::Map(m) if m.is_empty() => Some(StepKind::Heal),
                Value::Str(s) if s == "all" => Some(StepKind::Heal),
                _ => {
                    self.error(
                        body.loc,
                        "`heal` repairs every partition: write `- heal: all`",
                    );
                    None
                }
            },
            KindName::Hold => {
                let between = self.read::<raw::Between>(body)?;
                let (a, b) = self.node_pair(&between.between)?;
                Some(StepKind::Hold { a, b })
            }
            KindName::Release => self.release(body),
            KindName::Latency => {
                let raw = self.read::<raw::Latency2>(body)?;
                let pair = self.node_pair(&raw.between);
                let delay = match raw.delay.value.as_str() {
                    "default" => None,
                    _ => Some(self.duration(&raw.delay)?),
                };
                let (a, b) = pair?;
                Some(StepKind::Latency { a, b, delay })
            }
            KindName::Crash => self.process(body, true).map(StepKind::Crash),
            KindName::Restart => self.process(body, true).map(StepKind::Restart),
            KindName::Stop => self.process(body, true).map(StepKind::Stop),
            KindName::Start => self.process(body, false).map(StepKind::Start),
            KindName::FailPoint => self.failpoint(body),
            KindName::ClearFailPoint => {
                let raw = self.read::<raw::PointRef>(body)?;
                let node = self.node_ref(&raw.node);
                let point = self.point(&raw.point);
                Some(StepKind::ClearFailPoint {
                    node: node?,
                    point: point?,
                })
            }
            KindName::Sleep => {
                let text = self.read::<Spanned<String>>(body)?;
                self.duration(&text).map(StepKind::Sleep)
            }
            KindName::Await => self.await_step(body),
            KindName::Check => self.check(body),
            KindName::Repeat => {
                let raw = self.read::<raw::Repeat>(body)?;
                if raw.count.value == 0 || raw.count.value > REPEAT_COUNT_MAX {
                    self.error(raw.count.loc, format!("`count` is 1..={REPEAT_COUNT_MAX}"));
                    return None;
                }
                let steps = self.steps(body.get("steps").expect("serde checked"));
                Some(StepKind::Repeat {
                    count: raw.count.value,
                    steps,
                })
            }
        }
    }

    fn read<T: serde::de::DeserializeOwned>(&mut self, node: &Node) -> Option<T> {
        match from_node(node) {
            Ok(value) => Some(value),
            Err(e) => {
                self.yaml_error(e);
                None
            }
        }
    }

    fn client(&mut self, body: &Node) -> Option<StepKind> {
        let info = self.info.expect("model");
        let Value::Map(_) = &body.value else {
            self.error_hint(
                body.loc,
                "`client` is a mapping",
                "for example `- client: {on: leader, op: put, key: a, value: \"1\"}`",
            );
            return None;
        };
        let options = self.read::<raw::ClientOptions>(&map_filtered(body, |k| {
            raw::CLIENT_OPTION_KEYS.contains(&k)
        }))?;
        let op_node = map_filtered(body, |k| !raw::CLIENT_OPTION_KEYS.contains(&k));
        let Some(op_name_node) = op_node.get("op") else {
            let ops: Vec<&str> = info.ops.iter().map(|o| o.name).collect();
            self.error_hint(
                body.loc,
                "`client` needs `op`",
                format!("ops of `{}`: {}", info.name, list(ops)),
            );
            return None;
        };
        let op_name = op_name_node.as_str().unwrap_or("");
        if info.op(op_name).is_none() {
            self.unknown_name(
                op_name_node.loc,
                "op",
                op_name,
                info.ops.iter().map(|o| o.name),
            );
            return None;
        }
        let model = nodes::registry::find(info.name).expect("registered");
        let op = match model.parse_op(&op_node.to_json()) {
            Ok(op) => op,
            Err(message) => {
                let loc = locate_field(&op_node, &message).unwrap_or(body.loc);
                let example = info.op(op_name).map(|o| o.example).unwrap_or("");
                let hint = match serde_suggestion(&message) {
                    Some(best) => format!("did you mean `{best}`? for example {example}"),
                    None => format!("for example {example}"),
                };
                self.error_hint(loc, format!("op `{op_name}`: {message}"), hint);
                return None;
            }
        };
        let target = match &options.on {
            Some(on) => self.target(on)?,
            None if info.has_leader => Target::Leader,
            None => {
                self.error_hint(
                    body.loc,
                    format!("model `{}` has no leader: say which node", info.name),
                    "add `on: NODE`",
                );
                return None;
            }
        };
        let timeout = self.duration_or(&options.timeout, default_settings().op_timeout);
        let expect = match &options.expect {
            None => None,
            Some(e) => Some(self.op_expect(e)?),
        };
        Some(StepKind::Client(ClientStep {
            target,
            op,
            wait: options.wait.unwrap_or(true),
            timeout,
            expect,
        }))
    }

    fn op_expect(&mut self, text: &Spanned<String>) -> Option<OpExpect> {
        let value = text.value.trim();
        if value == "ok" {
            return Some(OpExpect::Ok);
        }
        if value == "error" {
            return Some(OpExpect::Error(None));
        }
        if let Some(rest) = value.strip_prefix("error:") {
            return Some(OpExpect::Error(Some(rest.trim().to_string())));
        }
        self.error(
            text.loc,
            format!("op `expect` is `ok`, `error` or `error: TEXT`, found `{value}`"),
        );
        None
    }

    fn transfer_leader(&mut self, body: &Node) -> Option<StepKind> {
        let info = self.info.expect("model");
        if !info.leader_transfer {
            self.error(
                body.loc,
                format!("model `{}` does not support `transfer_leader`", info.name),
            );
            return None;
        }
        let raw = match &body.value {
            Value::Str(to) => raw::TransferLeader {
                to: Spanned {
                    loc: body.loc,
                    value: to.clone(),
                },
                timeout: None,
            },
            _ => self.read::<raw::TransferLeader>(body)?,
        };
        let to = if raw.to.value == "follower" {
            None
        } else {
            Some(self.node_ref(&raw.to)?)
        };
        let timeout = self.duration_or(&raw.timeout, default_settings().op_timeout);
        Some(StepKind::TransferLeader { to, timeout })
    }

    fn partition(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.read::<raw::Partition>(body)?;
        let forms = [
            raw.groups.is_some(),
            raw.isolate.is_some(),
            raw.from.is_some() || raw.to.is_some(),
        ];
        if forms.iter().filter(|f| **f).count() != 1 {
            self.error_hint(
                body.loc,
                "a partition is one of: `groups`, `isolate`, or `from` + `to` (one-way)",
                "for example `{groups: [[n1], [n2, n3]]}`, `{isolate: leader}` or `{from: n1, to: [n2]}`",
            );
            return None;
        }
        if let Some(groups) = &raw.groups {
            let mut seen = BTreeSet::new();
            let mut targets = Vec::new();
            for group in groups {
                let mut g = Vec::new();
                for name in group {
                    let target = self.target(name)?;
                    if !seen.insert(name.value.clone()) {
                        self.error(name.loc, format!("`{}` is in two groups", name.value));
                        return None;
                    }
                    g.push(target);
                }
                if g.is_empty() {
                    self.error(body.loc, "a partition group is empty");
                    return None;
                }
                targets.push(g);
            }
            if targets.len() < 2 {
                self.error(body.loc, "`groups` needs at least two groups");
                return None;
            }
            return Some(StepKind::Partition(Partition::Groups(targets)));
        }
        if let Some(isolate) = &raw.isolate {
            if self.nodes.len() < 2 {
                self.error(isolate.loc, "isolating the only node cuts no link");
                return None;
            }
            return Some(StepKind::Partition(Partition::Isolate(
                self.target(isolate)?,
            )));
        }
        let (Some(from), Some(to)) = (&raw.from, &raw.to) else {
            self.error(body.loc, "a one-way partition needs both `from` and `to`");
            return None;
        };
        if to.is_empty() {
            self.error(body.loc, "`to` names at least one node");
            return None;
        }
        let from_target = self.target(from)?;
        let mut targets = Vec::new();
        for name in to {
            if name.value == from.value {
                self.error(name.loc, "a node cannot be cut from itself");
                return None;
            }
            targets.push(self.target(name)?);
        }
        Some(StepKind::Partition(Partition::OneWay {
            from: from_target,
            to: targets,
        }))
    }

    fn release(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.read::<raw::Release>(body)?;
        match (&raw.between, &raw.failpoint) {
            (Some(between), None) if raw.node.is_none() => {
                let (a, b) = self.node_pair(between)?;
                Some(StepKind::Release { a, b })
            }
            (None, Some(point)) => {
                let Some(node) = &raw.node else {
                    self.error(body.loc, "releasing a fail point needs `node`");
                    return None;
                };
                let node = self.node_ref(node);
                let point = self.point(point);
                Some(StepKind::ReleaseFailPoint {
                    node: node?,
                    point: point?,
                })
            }
            _ => {
                self.error_hint(
                    body.loc,
                    "`release` takes `between: [a, b]` (held messages) or `node` + `failpoint` (a stalled point)",
                    "for example `{between: [n1, n2]}` or `{node: om1, failpoint: double_buffer.flush}`",
                );
                None
            }
        }
    }

    fn process(&mut self, body: &Node, leader_ok: bool) -> Option<ProcessStep> {
        let raw = match &body.value {
            Value::Str(name) => raw::Process {
                node: Spanned {
                    loc: body.loc,
                    value: name.clone(),
                },
                optional: false,
            },
            Value::Map(_) => self.read::<raw::Process>(body)?,
            _ => {
                self.error(
                    body.loc,
                    "name a node: `- crash: n1` or `- crash: {node: n1, optional: true}`",
                );
                return None;
            }
        };
        if raw.node.value == "leader" && !leader_ok {
            self.error(
                raw.node.loc,
                "a down node cannot be the leader: name the node to start",
            );
            return None;
        }
        let target = self.target(&raw.node)?;
        Some(ProcessStep {
            target,
            optional: raw.optional,
        })
    }

    fn fault_action(
        &mut self,
        point: &'static FailPointInfo,
        action: &Spanned<raw::Action>,
    ) -> Option<FaultAction> {
        let loc = action.loc;
        match &action.value {
            raw::Action::Error(_) if point.errors.is_empty() => {
                self.error(loc, format!("fail point `{}` raises no errors", point.name));
                None
            }
            raw::Action::Error(kind) if !point.errors.contains(&kind.as_str()) => {
                self.unknown_name(loc, "error kind", kind, point.errors.iter().copied());
                None
            }
            raw::Action::Error(kind) => Some(FaultAction::Error(kind.clone())),
            raw::Action::Panic if point.panic => Some(FaultAction::Panic),
            raw::Action::Panic => {
                self.error(loc, format!("fail point `{}` cannot panic", point.name));
                None
            }
            raw::Action::Stall(_) if !point.stall => {
                let message = format!(
                    "fail point `{}` cannot stall (it is not on an await path)",
                    point.name
                );
                self.error(loc, message);
                None
            }
            raw::Action::Stall(until) if until == "release" => Some(FaultAction::StallUntilRelease),
            raw::Action::Stall(duration) => {
                let text = Spanned {
                    loc,
                    value: duration.clone(),
                };
                self.duration(&text).map(FaultAction::Stall)
            }
        }
    }

    fn failpoint(&mut self, body: &Node) -> Option<StepKind> {
        let raw = self.read::<raw::FailPoint>(body)?;
        let node = self.node_ref(&raw.node);
        let point = self.point(&raw.point);
        let (node, point) = (node?, point?);
        let action = self.fault_action(point, &raw.action)?;
        if let Some(count) = &raw.count {
            if count.value == 0 {
                self.error(
                    count.loc,
                    "`count` is at least 1 (to disarm, use `clear_failpoint`)",
                );
            }
        }
        if let Some(p) = &raw.probability {
            if !(p.value > 0.0 && p.value <= 1.0) {
                self.error(p.loc, "`probability` is in (0, 1]");
            }
        }
        Some(StepKind::FailPoint(ArmStep {
            node,
            point,
            action,
            count: raw.count.map(|c| c.value),
            probability: raw.probability.map(|p| p.value),
            optional: raw.optional,
        }))
    }

    fn await_step(&mut self, body: &Node) -> Option<StepKind> {
        let default_within = std::time::Duration::from_secs(30);
        if let Value::Str(word) = &body.value {
            let condition = match word.as_str() {
                "leader" => Condition::Leader(None),
                "ops_done" => Condition::OpsDone,
                "quiescent" => Condition::Quiescent,
                other => {
                    self.unknown_name(
                        body.loc,
                        "await condition",
                        other,
                        ["leader", "ops_done", "quiescent"],
                    );
                    return None;
                }
            };
            if condition == Condition::Leader(None) && !self.info.expect("model").has_leader {
                self.error(body.loc, "this model has no leader to await");
                return None;
            }
            return Some(StepKind::Await {
                condition,
                within: default_within,
                variants: Vec::new(),
            });
        }
        let raw = self.read::<raw::Await>(body)?;
        let given = [
            raw.leader.is_some(),
            raw.applied.is_some(),
            raw.up.is_some(),
            raw.down.is_some(),
            raw.ops_done.is_some(),
            raw.quiescent.is_some(),
            raw.observed.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            self.error_hint(
                body.loc,
                "`await` needs exactly one condition",
                "one of `leader`, `applied`, `up`, `down`, `ops_done`, `quiescent`, `observed`",
            );
            return None;
        }
        let within = self.duration_or(&raw.within, default_within);
        let condition = if let Some(leader) = &raw.leader {
            if !self.info.expect("model").has_leader {
                self.error(leader.loc, "this model has no leader to await");
                return None;
            }
            if leader.value == "any" {
                Condition::Leader(None)
            } else {
                Condition::Leader(Some(self.node_ref(leader)?))
            }
        } else if let Some(applied) = &raw.applied {
            let mut nodes = Vec::new();
            for name in raw.nodes.iter().flatten() {
                nodes.push(self.node_ref(name)?);
            }
            Condition::Applied {
                index: applied.value,
                nodes,
            }
        } else if let Some(up) = &raw.up {
            Condition::Up(self.node_ref(up)?)
        } else if let Some(down) = &raw.down {
            Condition::Down(self.node_ref(down)?)
        } else if raw.ops_done.is_some() {
            Condition::OpsDone
        } else if raw.quiescent.is_some() {
            Condition::Quiescent
        } else {
            let observed = raw.observed.as_ref().expect("one condition given");
            let node = self.node_ref(&observed.value.node)?;
            Condition::Observed {
                node,
                key: observed.value.key.clone(),
                value: observed.value.value.clone(),
            }
        };
        let variants = match &raw.variants {
            None => Vec::new(),
            Some(names) if names.is_empty() => {
                self.error_hint(
                    body.loc,
                    "`variants: []` names no variant, so the step would never run",
                    "leave `variants` out to run it in every variant",
                );
                return None;
            }
            Some(names) => self.step_variants(names)?,
        };
        Some(StepKind::Await {
            condition,
            within,
            variants,
        })
    }

    /// The variants a step is limited to (empty: every variant), each one declared.
    fn step_variants(&mut self, names: &[Spanned<String>]) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for name in names {
            if !self.variant_names.contains(&name.value) {
                let declared = self.variant_names.clone();
                self.unknown_name(
                    name.loc,
                    "variant",
                    &name.value,
                    declared.iter().map(String::as_str),
                );
                return None;
            }
            out.push(name.value.clone());
        }
        Some(out)
    }

    fn check(&mut self, body: &Node) -> Option<StepKind> {
        let default_within = std::time::Duration::from_secs(30);
        if body.as_str() == Some("converged") {
            return Some(StepKind::Check(CheckStep::Converged {
                within: default_within,
            }));
        }
        let raw = self.read::<raw::Check>(body)?;
        match (raw.converged, &raw.invariant) {
            (Some(true), None) => {
                let within = self.duration_or(&raw.within, default_within);
                Some(StepKind::Check(CheckStep::Converged { within }))
            }
            (None, Some(name)) => {
                let info = self.info.expect("model");
                match info.invariant(&name.value) {
                    Some(inv) => Some(StepKind::Check(CheckStep::Invariant(inv.name))),
                    None => {
                        self.unknown_name(
                            name.loc,
                            "invariant",
                            &name.value,
                            info.invariants.iter().map(|i| i.name),
                        );
                        None
                    }
                }
            }
            _ => {
                self.error_hint(
                    body.loc,
                    "`check` is `converged` or {invariant: NAME}",
                    "for example `- check: converged`",
                );
                None
            }
        }
    }
}

impl Validator<'_> {
    fn range(
        &mut self,
        range: &Option<raw::Range>,
        default: (Duration, Duration),
    ) -> (Duration, Duration) {
        let Some(range) = range else { return default };
        let min = self.duration(&range.min).unwrap_or(default.0);
        let max = self.duration(&range.max).unwrap_or(default.1);
        if min > max {
            self.error(range.min.loc, "`min` is greater than `max`");
        }
        (min, max)
    }

    fn chaos(&mut self, node: &Node) -> Option<Chaos> {
        let raw = self.read::<raw::Chaos>(node)?;
        let window = self.duration(&raw.window)?;
        if window.is_zero() {
            self.error(raw.window.loc, "the chaos `window` must be longer than 0s");
        }
        let concurrent_max = raw.concurrent_max.as_ref().map(|c| c.value).unwrap_or(2);
        if concurrent_max == 0 {
            self.error(
                raw.concurrent_max.as_ref().expect("given").loc,
                "`concurrent_max` is at least 1",
            );
        }
        let spacing = self.range(
            &raw.spacing,
            (Duration::from_millis(200), Duration::from_secs(2)),
        );
        let duration = self.range(
            &raw.duration,
            (Duration::from_millis(500), Duration::from_secs(5)),
        );
        let faults = self.chaos_faults(node.get("faults").expect("serde checked"));
        let workload = node.get("workload").and_then(|w| self.workload(w));
        if faults.is_empty() && workload.is_none() {
            self.error(
                node.loc,
                "chaos with no fault kinds and no workload tests nothing",
            );
        }
        Some(Chaos {
            loc: node.loc,
            window,
            swarm: raw.swarm,
            concurrent_max: concurrent_max as usize,
            spacing,
            duration,
            faults,
            workload,
        })
    }

    fn chaos_faults(&mut self, node: &Node) -> Vec<ChaosFault> {
        let info = self.info.expect("model");
        let Value::Map(entries) = &node.value else {
            self.error(
                node.loc,
                "`faults` maps fault kinds to weights, e.g. {partition: 2, crash: 1}",
            );
            return Vec::new();
        };
        let mut faults = Vec::new();
        for (key, body) in entries {
            let name = key.as_str().unwrap_or("");
            if !raw::CHAOS_FAULT_KINDS.contains(&name) {
                self.unknown_name(
                    key.loc,
                    "chaos fault kind",
                    name,
                    raw::CHAOS_FAULT_KINDS.iter().copied(),
                );
                continue;
            }
            let spec = match &body.value {
                Value::Int(w) if *w >= 0 => raw::ChaosFault {
                    weight: Spanned {
                        loc: body.loc,
                        value: *w as u32,
                    },
                    delay: None,
                    points: None,
                },
                _ => match self.read::<raw::ChaosFault>(body) {
                    Some(spec) => spec,
                    None => continue,
                },
            };
            if spec.weight.value == 0 {
                continue;
            }
            let kind = match name {
                "partition" => ChaosKind::Partition,
                "oneway" => ChaosKind::OneWay,
                "hold" => ChaosKind::Hold,
                "latency" => {
                    let (min, max) = self.range(
                        &spec.delay,
                        (Duration::from_millis(20), Duration::from_millis(500)),
                    );
                    ChaosKind::Latency { min, max }
                }
                "crash" => ChaosKind::Crash,
                "restart" => ChaosKind::Restart,
                "stop" => ChaosKind::Stop,
                "transfer_leader" if !info.leader_transfer => {
                    self.error(
                        key.loc,
                        format!("model `{}` does not support `transfer_leader`", info.name),
                    );
                    continue;
                }
                "transfer_leader" => ChaosKind::TransferLeader,
                _ => {
                    let Some(points) = &spec.points else {
                        self.error_hint(
                            body.loc,
                            "`failpoint` needs `points`",
                            "e.g. {weight: 1, points: [{point: P, action: {error: K}}]}",
                        );
                        continue;
                    };
                    ChaosKind::FailPoint(
                        points.iter().filter_map(|p| self.chaos_point(p)).collect(),
                    )
                }
            };
            faults.push(ChaosFault {
                kind,
                weight: spec.weight.value,
            });
        }
        faults
    }

    fn chaos_point(&mut self, raw: &Spanned<raw::ChaosPoint>) -> Option<ChaosPoint> {
        let point = self.point(&raw.value.point)?;
        let action = self.fault_action(point, &raw.value.action)?;
        let mut nodes = Vec::new();
        for name in raw.value.nodes.iter().flatten() {
            nodes.push(self.node_ref(name)?);
        }
        Some(ChaosPoint {
            point,
            action,
            nodes,
        })
    }

    fn workload(&mut self, node: &Node) -> Option<Workload> {
        let info = self.info.expect("model");
        let raw = self.read::<raw::Workload>(node)?;
        let every = self.duration(&raw.every)?;
        if every.is_zero() {
            self.error(
                raw.every.loc,
                "the workload's `every` must be longer than 0s",
            );
            return None;
        }
        let ops_node = node.get("ops").expect("serde checked");
        let Value::Seq(items) = &ops_node.value else {
            self.error(ops_node.loc, "`ops` is a list of op templates");
            return None;
        };
        let mut ops = Vec::new();
        for item in items {
            ops.push(self.workload_op(item)?);
        }
        if ops.is_empty() {
            self.error(ops_node.loc, "the workload needs at least one op");
            return None;
        }
        let target = match &raw.on {
            Some(on) => Some(self.target(on)?),
            None if info.has_leader => Some(Target::Leader),
            None if ops.iter().all(|op| op.target.is_some()) => None,
            None => {
                self.error_hint(
                    node.loc,
                    format!("model `{}` has no leader: say which node", info.name),
                    "add `on: NODE` to the workload or to each op",
                );
                return None;
            }
        };
        Some(Workload { every, target, ops })
    }

    /// One op template; its own `on` (reserved by the client step, so never an op
    /// argument) sends it elsewhere than the workload's `on`.
    fn workload_op(&mut self, item: &Node) -> Option<WorkloadOp> {
        let info = self.info.expect("model");
        let target = match item.get("on") {
            Some(on) => {
                let on: Spanned<String> = self.read(on)?;
                Some(self.target(&on)?)
            }
            None => None,
        };
        let mut template = item.to_json();
        if let serde_json::Value::Object(map) = &mut template {
            map.remove("on");
        }
        let model = nodes::registry::find(info.name).expect("registered");
        // Check the template with the smallest and the largest draws.
        for pick in [Pick::Low, Pick::High] {
            let sample = match expand_template(
                &template,
                &mut |lo, hi| if pick == Pick::Low { lo } else { hi },
                0,
            ) {
                Ok(sample) => sample,
                Err(message) => {
                    self.error(item.loc, message);
                    return None;
                }
            };
            if let Err(message) = model.parse_op(&sample) {
                let loc = locate_field(item, &message).unwrap_or(item.loc);
                self.error(loc, format!("workload op: {message}"));
                return None;
            }
        }
        Some(WorkloadOp { target, template })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Pick {
    Low,
    High,
}

/// Fill a workload op template: in string values, `{A..B}` becomes a number drawn
/// by `draw(A, B)` and `{seq}` the op's sequence number.
pub fn expand_template(
    template: &serde_json::Value,
    draw: &mut dyn FnMut(i64, i64) -> i64,
    seq: u64,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match template {
        // A string that is one placeholder and nothing else becomes a number.
        J::String(text) if is_single_placeholder(text) => {
            let n = expand_string(text, draw, seq)?;
            n.parse::<i64>().map(J::from).unwrap_or(J::String(n))
        }
        J::String(text) => J::String(expand_string(text, draw, seq)?),
        J::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                out.insert(k.clone(), expand_template(v, draw, seq)?);
            }
            J::Object(out)
        }
        J::Array(items) => J::Array(
            items
                .iter()
                .map(|v| expand_template(v, draw, seq))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

fn expand_string(
    text: &str,
    draw: &mut dyn FnMut(i64, i64) -> i64,
    seq: u64,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in template `{text}`"))?
            + open;
        let inner = &rest[open + 1..close];
        if inner == "seq" {
            out.push_str(&seq.to_string());
        } else if let Some((lo, hi)) = inner.split_once("..") {
            let (Ok(lo), Ok(hi)) = (lo.trim().parse::<i64>(), hi.trim().parse::<i64>()) else {
                return Err(format!(
                    "`{{{inner}}}` in `{text}` is not a range like {{1..5}}"
                ));
            };
            if lo > hi {
                return Err(format!("range `{{{inner}}}` in `{text}` is empty"));
            }
            out.push_str(&draw(lo, hi).to_string());
        } else {
            return Err(format!(
                "unknown placeholder `{{{inner}}}` in `{text}`; use {{A..B}} or {{seq}}"
            ));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_single_placeholder(text: &str) -> bool {
    text.starts_with('{') && text.ends_with('}') && text.matches('{').count() == 1
}

fn is_fault(kind: KindName) -> bool {
    matches!(
        kind,
        KindName::Partition
            | KindName::Hold
            | KindName::Latency
            | KindName::Crash
            | KindName::Restart
            | KindName::Stop
            | KindName::TransferLeader
            | KindName::FailPoint
    )
}

pub fn default_settings() -> Settings {
    Settings {
        seed: 1,
        tick: std::time::Duration::from_millis(1),
        latency_min: std::time::Duration::from_millis(1),
        latency_max: std::time::Duration::from_millis(5),
        op_timeout: std::time::Duration::from_secs(10),
        limits: Limits {
            duration: std::time::Duration::from_secs(4 * 3600),
            steps: 20_000_000,
            events: 200_000,
            messages_in_flight: 50_000,
        },
        heal: Some(Heal {
            within: std::time::Duration::from_secs(30),
            settle: std::time::Duration::from_secs(1),
        }),
        random_order: false,
    }
}

/// The variant names as the file writes them (`default` for a top-level `expect`),
/// whether or not each variant is itself valid, so a step naming one is not a second error.
fn declared_variants(root: &Node) -> Vec<String> {
    match root.get("variants").map(|v| &v.value) {
        Some(Value::Map(entries)) => entries
            .iter()
            .filter_map(|(k, _)| k.as_str().map(str::to_string))
            .collect(),
        _ => vec!["default".to_string()],
    }
}

fn file_stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string())
}

/// A copy of a mapping node with only the keys `keep` accepts.
fn map_filtered(node: &Node, keep: impl Fn(&str) -> bool) -> Node {
    let Value::Map(entries) = &node.value else {
        return node.clone();
    };
    let kept = entries
        .iter()
        .filter(|(k, _)| k.as_str().map(&keep).unwrap_or(true))
        .cloned()
        .collect();
    Node {
        loc: node.loc,
        value: Value::Map(kept),
    }
}

/// Point at the key a serde message names first (`unknown field `kye`, expected
/// `key``): the key itself for an unknown field, else that key's value.
fn locate_field(map: &Node, message: &str) -> Option<Loc> {
    let Value::Map(entries) = &map.value else {
        return None;
    };
    let named = message.split('`').nth(1)?;
    let (key, value) = entries.iter().find(|(k, _)| k.as_str() == Some(named))?;
    Some(if message.contains("unknown field") {
        key.loc
    } else {
        value.loc
    })
}

/// serde's "unknown field `kye`, expected `key` or `value`": the nearest valid name.
fn serde_suggestion(message: &str) -> Option<String> {
    if !message.starts_with("unknown field") && !message.starts_with("unknown variant") {
        return None;
    }
    let names: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let (wrong, valid) = names.split_first()?;
    nearest(wrong, valid.iter().copied()).map(str::to_string)
}
