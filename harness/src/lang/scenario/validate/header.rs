//! Phase one: the header. The model, the nodes, the settings and the variants,
//! which every step is read against. Nothing after this phase holds an `Option`
//! of them: a file whose model cannot be resolved stops here.

use super::errors::{list, serde_suggestion, Errors};
use super::names::Reader;
use super::{HISTORY_STEPS_MAX, NODES_MAX, RESERVED_NODE_NAMES};
use crate::lang::scenario::raw;
use crate::lang::scenario::{Heal, HistoryCheck, Limits, NodeSpec, Settings, Variant};
use crate::lang::yaml::{from_node, Loc, Node, Spanned, Value};
use faultline_api::{BugMode, BugSet, ChaosDomain, Model, ModelInfo};
use schemars::{json_schema, Schema, SchemaGenerator};
use std::time::Duration;

/// What the header phase resolves.
pub(super) struct Header {
    pub model: &'static dyn Model,
    pub nodes: Vec<NodeSpec>,
    pub settings: Settings,
    pub variants: Vec<Variant>,
    /// The variant names as the file writes them, for steps that name variants.
    pub variant_names: Vec<String>,
    /// The top-level `params` (what chaos-drawn params are laid over).
    pub params: Option<serde_json::Value>,
}

/// Read the header of `root`; `None` when the model (or the file's shape) is
/// unusable, so that nothing else can be checked.
pub(super) fn read(e: &mut Errors, root: &Node) -> Option<Header> {
    let Value::Map(entries) = &root.value else {
        e.error(
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
                e.unknown_name(
                    key.loc,
                    "top-level key",
                    k,
                    raw::TOP_LEVEL_KEYS.iter().copied(),
                );
            }
        }
    }
    let header_node = super::errors::map_filtered(root, |k| {
        raw::TOP_LEVEL_KEYS.contains(&k) && k != "steps" && k != "variants"
    });
    let mut header: Option<raw::Header> = e.read(&header_node);
    let Some(model) = e.model(root) else {
        // Say that the rest waits for the model, so the user does not take the
        // one error for all there are.
        if let Some(last) = e.diags.0.last_mut() {
            let note = "the rest of the file is read against the model, so it is checked once the model is known";
            last.hint = Some(match last.hint.take() {
                Some(hint) => format!("{hint}; {note}"),
                None => note.to_string(),
            });
        }
        return None;
    };
    let nodes = e.nodes(model, root.get("nodes"), root.loc);
    let defaults = header
        .as_mut()
        .and_then(|h| h.defaults.take())
        .unwrap_or_default();
    // A chaos section turns the final generator on; `auto: true` takes the
    // model's domain for whatever the file leaves out.
    let chaos = root.get("chaos");
    let domain = auto_chaos(root).then_some(&model.info().chaos);
    let mut settings = e.settings(model, &defaults, root.get("heal"), domain, chaos.is_some());
    if let Some(history) = header.as_ref().and_then(|h| h.history.as_ref()) {
        e.history_check(history, &mut settings.history);
    }
    let params = e.params(root.get("params"), model.info(), &nodes);
    let variant_names = declared_variants(root);
    let variants = Reader::new(e, model, &nodes, &settings, &variant_names).variants(root, &params);
    Some(Header {
        model,
        nodes,
        settings,
        variants,
        variant_names,
        params: params.map(|(_, v)| v),
    })
}

impl Errors<'_> {
    fn model(&mut self, root: &Node) -> Option<&'static dyn Model> {
        let Some(node) = root.get("model") else {
            let names = crate::base::models::names();
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
        match crate::base::models::find(name) {
            Some(model) => Some(model),
            None => {
                self.unknown_name(node.loc, "model", name, crate::base::models::names());
                None
            }
        }
    }

    fn nodes(&mut self, model: &dyn Model, node: Option<&Node>, root_loc: Loc) -> Vec<NodeSpec> {
        let info = model.info();
        let mut nodes = Vec::new();
        let Some(node) = node else {
            self.error_hint(
                root_loc,
                "scenario has no `nodes`",
                "add `nodes: [n1, n2, n3]`",
            );
            return nodes;
        };
        let Value::Seq(items) = &node.value else {
            self.error(
                node.loc,
                format!("`nodes` is a list, found {}", node.kind_name()),
            );
            return nodes;
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
                Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Seq(_) => {
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
            self.node_name_ok(&name, &nodes);
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
            nodes.push(NodeSpec {
                name: name.value,
                role,
            });
        }
        if let Err(message) = model.check_nodes(&nodes) {
            if self.diags.is_empty() {
                self.error(node.loc, message);
            }
        }
        nodes
    }

    fn node_name_ok(&mut self, name: &Spanned<String>, nodes: &[NodeSpec]) {
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
        } else if nodes.iter().any(|n| n.name == name.value) {
            self.error(name.loc, format!("node `{}` is listed twice", name.value));
        }
    }

    /// `params` (top-level or a variant's), each key checked against the model's
    /// declaration at its own location. Keys that fail are left out of the result,
    /// so that the model's own check (cross-key rules) does not repeat them.
    fn params(
        &mut self,
        node: Option<&Node>,
        info: &ModelInfo,
        nodes: &[NodeSpec],
    ) -> Option<(Loc, serde_json::Value)> {
        let node = node?;
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        match &node.value {
            Value::Map(entries) => {
                let mut checked = serde_json::Map::new();
                for (key, value) in entries {
                    let name = key.as_str().unwrap_or("");
                    let Some(param) = info.param(name) else {
                        if info.params.is_empty() {
                            self.error(
                                key.loc,
                                format!("model `{}` takes no params; remove `{name}`", info.name),
                            );
                        } else {
                            self.unknown_name(
                                key.loc,
                                "param",
                                name,
                                info.params.iter().map(|p| p.name),
                            );
                        }
                        continue;
                    };
                    let json = value.to_json();
                    match param.kind.check_entry(&json, &names) {
                        Ok(()) => {
                            checked.insert(name.to_string(), json);
                        }
                        Err((entry, message)) => {
                            // A per-node map's error points at the node's entry.
                            let loc = match (&entry, &value.value) {
                                (Some(node), Value::Map(items)) => items
                                    .iter()
                                    .find(|(k, _)| k.as_str() == Some(node.as_str()))
                                    .map_or(value.loc, |(k, _)| k.loc),
                                _ => value.loc,
                            };
                            self.error_hint(
                                loc,
                                format!("param `{name}`: {message}"),
                                format!("`{name}`: {}, {}", param.kind.describe(), param.summary),
                            )
                        }
                    }
                }
                Some((node.loc, serde_json::Value::Object(checked)))
            }
            Value::Null => None,
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Seq(_) => {
                self.error(
                    node.loc,
                    format!("`params` is a mapping, found {}", node.kind_name()),
                );
                None
            }
        }
    }

    fn settings(
        &mut self,
        model: &dyn Model,
        raw: &raw::Defaults,
        heal: Option<&Node>,
        domain: Option<&ChaosDomain>,
        chaos: bool,
    ) -> Settings {
        let mut s = default_settings();
        if let Some(d) = domain {
            let ms = Duration::from_millis;
            s.tick = ms(d.tick_ms);
            s.latency_min = ms(d.link_latency_ms.0);
            s.latency_max = ms(d.link_latency_ms.1);
            s.op_timeout = ms(d.op_timeout_ms);
            s.heal = Some(Heal {
                within: ms(d.heal_within_ms),
                settle: ms(d.heal_settle_ms),
                final_ops: true,
                allow_unjudged: Vec::new(),
            });
        }
        if let Some(heal) = &mut s.heal {
            heal.final_ops = chaos;
        }
        if let Some(seed) = &raw.seed {
            s.seed = seed.value;
        }
        if let Some(tick) = &raw.tick {
            if let Some(d) = self.duration(tick) {
                if d.as_millis() == 0 || d.as_micros() % 1000 != 0 || d > Duration::from_secs(1) {
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
        s.heal = self.heal(heal, s.heal.clone(), model);
        s
    }

    fn history_check(&mut self, raw: &raw::HistorySpec, history: &mut HistoryCheck) {
        if let Some(check) = raw.check {
            history.enabled = check;
        }
        for (value, into, name) in [
            (&raw.steps, &mut history.steps, "steps"),
            (&raw.shrink_steps, &mut history.shrink_steps, "shrink_steps"),
        ] {
            let Some(value) = value else { continue };
            if value.value == 0 || value.value > HISTORY_STEPS_MAX {
                self.error(
                    value.loc,
                    format!(
                        "history `{name}` is 1..={HISTORY_STEPS_MAX}, found {}",
                        value.value
                    ),
                );
            } else {
                *into = value.value;
            }
        }
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

    fn heal(
        &mut self,
        node: Option<&Node>,
        default: Option<Heal>,
        model: &dyn Model,
    ) -> Option<Heal> {
        let Some(node) = node else { return default };
        let mut heal = default.expect("heal is on by default");
        match &node.value {
            Value::Bool(false) => None,
            Value::Bool(true) => Some(heal),
            Value::Map(_) => match from_node::<raw::HealSpec>(node) {
                Ok(spec) => {
                    heal.within = self.duration_or(&spec.within, heal.within);
                    heal.settle = self.duration_or(&spec.settle, heal.settle);
                    heal.final_ops = spec.final_ops.unwrap_or(heal.final_ops);
                    let liveness: Vec<&str> = model
                        .info()
                        .invariants
                        .iter()
                        .filter(|i| i.kind == faultline_api::InvariantKind::Liveness)
                        .map(|i| i.name)
                        .collect();
                    for name in spec.unjudged.iter().flatten() {
                        if liveness.contains(&name.value.as_str()) {
                            heal.allow_unjudged.push(name.value.clone());
                        } else if liveness.is_empty() {
                            self.error(
                                name.loc,
                                format!(
                                    "`{}`: model `{}` declares no liveness invariant, so nothing can be left unjudged",
                                    name.value,
                                    model.info().name
                                ),
                            );
                        } else {
                            self.unknown_name(
                                name.loc,
                                "liveness invariant",
                                &name.value,
                                liveness.iter().copied(),
                            );
                        }
                    }
                    Some(heal)
                }
                Err(e) => {
                    self.yaml_error(e);
                    Some(heal)
                }
            },
            Value::Null | Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Seq(_) => {
                self.error(
                    node.loc,
                    "`heal` is `false`, `true` or {within: 30s, settle: 1s}",
                );
                Some(heal)
            }
        }
    }
}

/// Whether the scenario's chaos section says `auto: true`.
pub(super) fn auto_chaos(root: &Node) -> bool {
    root.get("chaos")
        .and_then(|c| c.get("auto"))
        .is_some_and(|a| matches!(a.value, Value::Bool(true)))
}

impl Reader<'_, '_> {
    pub(super) fn variants(
        &mut self,
        root: &Node,
        params: &Option<(Loc, serde_json::Value)>,
    ) -> Vec<Variant> {
        let mut variants = Vec::new();
        match (root.get("expect"), root.get("variants")) {
            (Some(expect), Some(v)) => {
                self.e.error_hint(
                    expect.loc,
                    "both `expect` and `variants` are given",
                    "put `expect:` inside each variant",
                );
                let _ = v;
            }
            (Some(expect), None) => {
                if let Some(expect) = self.expect(expect) {
                    let bugs = BugSet::default();
                    self.known_defects_buggy(&expect.known, &bugs, None);
                    let merged = self.merge_params(params, &None, root.loc);
                    variants.push(Variant {
                        name: "default".into(),
                        loc: root.loc,
                        target: None,
                        bugs,
                        params: merged,
                        expect,
                    });
                }
            }
            (None, Some(node)) => self.variant_map(node, params, &mut variants),
            // A chaos section built from the model's domain tests the fixed
            // code: every replica must agree and every invariant hold.
            (None, None) if auto_chaos(root) => variants.push(Variant {
                name: "default".into(),
                loc: root.loc,
                target: None,
                bugs: BugSet::default(),
                params: self.merge_params(params, &None, root.loc),
                expect: crate::lang::scenario::Expect {
                    outcomes: vec![crate::base::outcome::Outcome::Converged],
                    ..Default::default()
                },
            }),
            (None, None) => self.e.error_hint(
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
            self.e.error(
                node.loc,
                "`variants` is a mapping from variant name to {bugs, params, expect}",
            );
            return;
        };
        if entries.is_empty() {
            self.e.error(node.loc, "`variants` is empty");
        }
        if entries.len() > super::VARIANTS_MAX {
            self.e.error(
                entries[super::VARIANTS_MAX].0.loc,
                format!("more than {} variants", super::VARIANTS_MAX),
            );
            return;
        }
        for (key, body) in entries {
            let Some(name) = key.as_str() else {
                self.e.error(key.loc, "a variant name is a string");
                continue;
            };
            if out.iter().any(|v| v.name == name) {
                self.e
                    .error(key.loc, format!("variant `{name}` is given twice"));
            }
            // Read with every shape error reported; the checks below still run
            // on the rest of the variant.
            let Some(raw) = self.e.read::<raw::Variant>(body) else {
                continue;
            };
            let target = raw.target.and_then(|t| self.target_build(&t));
            let bugs = self.bugs(body.get("bugs"));
            let own = self.e.params(body.get("params"), self.info, self.nodes);
            let merged = self.merge_params(params, &own, key.loc);
            let Some(expect) = body.get("expect").and_then(|e| self.expect(e)) else {
                continue;
            };
            self.known_defects_buggy(&expect.known, &bugs, target.as_deref());
            out.push(Variant {
                name: name.to_string(),
                loc: key.loc,
                target,
                bugs,
                params: merged,
                expect,
            });
        }
    }

    /// A variant's `target: NAME@RELEASE`: a build of this scenario's model.
    fn target_build(&mut self, target: &Spanned<String>) -> Option<String> {
        let model = self.info.name;
        match crate::lang::targets::parse(&target.value) {
            Ok((name, _)) if name == model => Some(target.value.clone()),
            Ok((name, _)) => {
                self.e.error(
                    target.loc,
                    format!(
                        "target `{}` is a build of `{name}`, but this scenario's model is `{model}`",
                        target.value
                    ),
                );
                None
            }
            Err(message) => {
                self.e.error(target.loc, message);
                None
            }
        }
    }

    fn bugs(&mut self, node: Option<&Node>) -> BugSet {
        let info = self.info;
        let mut set = BugSet::default();
        let Some(node) = node else { return set };
        let Value::Map(entries) = &node.value else {
            self.e.error(
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
                    self.e.error(
                        key.loc,
                        format!("model `{}` has no known bugs; remove `{k}`", info.name),
                    );
                } else {
                    self.e.unknown_name(key.loc, "bug key", k, keys);
                }
                continue;
            }
            let mode = match mode.as_str() {
                Some("buggy") => BugMode::Buggy,
                Some("fixed") => BugMode::Fixed,
                _ => {
                    self.e
                        .error(mode.loc, format!("bug `{k}` is `buggy` or `fixed`"));
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
        if let Err(message) = self.model.parse_params(&merged) {
            let loc = own
                .as_ref()
                .or(base.as_ref())
                .map(|(loc, _)| *loc)
                .unwrap_or(fallback);
            match serde_suggestion(&message) {
                Some(best) => self.e.error_hint(
                    loc,
                    format!("invalid params: {message}"),
                    format!("did you mean `{best}`?"),
                ),
                None => self.e.error(loc, format!("invalid params: {message}")),
            }
            // Invalid params are never used; keeping each variant's copy of a large
            // invalid map is what made params times variants a memory bomb.
            return serde_json::Value::Null;
        }
        merged
    }
}

/// The variant names as the file writes them (`default` for a top-level `expect`),
/// whether or not each variant is itself valid, so a step naming one is not a second error.
pub(super) fn declared_variants(root: &Node) -> Vec<String> {
    match root.get("variants").map(|v| &v.value) {
        Some(Value::Map(entries)) => entries
            .iter()
            .filter_map(|(k, _)| k.as_str().map(str::to_string))
            .collect(),
        _ => vec!["default".to_string()],
    }
}

pub(in crate::lang::scenario) fn default_settings() -> Settings {
    Settings {
        seed: 1,
        tick: Duration::from_millis(1),
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(5),
        op_timeout: Duration::from_secs(10),
        limits: Limits {
            duration: Duration::from_secs(4 * 3600),
            steps: 20_000_000,
            events: 200_000,
            messages_in_flight: 50_000,
        },
        heal: Some(Heal {
            within: Duration::from_secs(30),
            settle: Duration::from_secs(1),
            final_ops: false,
            allow_unjudged: Vec::new(),
        }),
        random_order: false,
        history: HistoryCheck {
            enabled: true,
            steps: 10_000_000,
            shrink_steps: 2_000_000,
        },
    }
}

// ---- The JSON Schema of what this phase reads from the tree (the `schema`
// module of `scenario` fills raw's placeholders with these). ----

/// `nodes:` as [`Errors::nodes`] reads it: 1..=NODES_MAX names or `{name, role}`.
pub(in crate::lang::scenario) fn nodes_schema(generator: &mut SchemaGenerator) -> Schema {
    let full = generator.subschema_for::<raw::NodeFull>();
    json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": NODES_MAX,
        "items": {"anyOf": [node_name_schema(generator), full]},
    })
}

/// A node's name as [`Errors::node_name_ok`] accepts it.
pub(in crate::lang::scenario) fn node_name_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]{1,32}$",
        "not": {"enum": RESERVED_NODE_NAMES},
    })
}

/// `params:` (top-level and a variant's) as [`Errors::params`] reads it: a
/// mapping whose keys and values the model checks.
pub(in crate::lang::scenario) fn params_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["object", "null"]})
}

/// `heal:` as [`Errors::heal`] reads it.
pub(in crate::lang::scenario) fn heal_schema(generator: &mut SchemaGenerator) -> Schema {
    let spec = generator.subschema_for::<raw::HealSpec>();
    json_schema!({"anyOf": [{"type": "boolean"}, spec]})
}

/// A variant's `bugs:` as [`Reader::bugs`] reads it.
pub(in crate::lang::scenario) fn bugs_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "additionalProperties": {"enum": ["buggy", "fixed"]},
    })
}

/// `variants:` as [`Reader::variant_map`] reads it.
pub(in crate::lang::scenario) fn variants_schema(generator: &mut SchemaGenerator) -> Schema {
    let variant = generator.subschema_for::<raw::Variant>();
    json_schema!({
        "type": "object",
        "description": "Variant name -> {target, bugs, params, expect}: each runs the same steps with its own bug modes and params (or give `expect`).",
        "minProperties": 1,
        "maxProperties": super::VARIANTS_MAX,
        "additionalProperties": variant,
    })
}

/// What [`read`] and [`Reader::variants`] ask of the whole file: not both
/// `expect` and `variants`; unless the chaos section says `auto: true`,
/// `steps` and one of `expect` or `variants`.
pub(in crate::lang::scenario) fn top_level_shape(schema: &mut Schema) {
    let auto = json_schema!({
        "required": ["chaos"],
        "properties": {"chaos": {"required": ["auto"], "properties": {"auto": {"const": true}}}},
    });
    schema.insert(
        "not".into(),
        serde_json::json!({"required": ["expect", "variants"]}),
    );
    schema.insert("if".into(), auto.to_value());
    schema.insert(
        "else".into(),
        serde_json::json!({
            "required": ["steps"],
            "anyOf": [{"required": ["expect"]}, {"required": ["variants"]}],
        }),
    );
}
