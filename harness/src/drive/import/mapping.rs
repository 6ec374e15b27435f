//! The mapping file: which scenario a spec's trace becomes (docs/trail-import.md).
//!
//! ```yaml
//! scenario: {model: .., nodes: .., variants: ..}   # the emitted scenario's header
//! action_variable: lastAction                      # optional: where the action name is
//! prologue: [steps]                                # before the first state's steps
//! actions: {write: [steps], init: []}              # per spec action
//! epilogue: [steps]                                # after the last state's
//! observe: [{node, key, var | value, values}]      # spec variables -> observations
//! refinement: {variants: [buggy], within: 5s, check: all}
//! ```
//!
//! Every string in `scenario`, the steps and `observe` is a template (`expr.rs`).
//! The file is read with the project's YAML module, so every error has its
//! `line:col`; all errors of the file are reported at once.

use super::expr::Template;
use super::ImportError;
use crate::lang::yaml::{self, from_node, Loc, Node, Spanned, Value};
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::BTreeMap;

pub const FILE_BYTES_MAX: usize = 1024 * 1024;

/// Keys of the emitted scenario the `scenario` header may set; the mapping makes
/// the steps, and a nemesis (`chaos`) has no place in a replayed trace.
fn header_keys() -> Vec<&'static str> {
    crate::lang::scenario::raw::TOP_LEVEL_KEYS
        .iter()
        .copied()
        .filter(|k| !matches!(*k, "steps" | "chaos"))
        .collect()
}

const TOP_KEYS: &[&str] = &[
    "scenario",
    "action_variable",
    "prologue",
    "actions",
    "epilogue",
    "observe",
    "refinement",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMapping {
    // Walked as trees below; serde checks only that they are there.
    #[allow(
        dead_code,
        reason = "walked as a tree; serde checks only that it is there"
    )]
    scenario: IgnoredAny,
    #[serde(default)]
    action_variable: Option<Spanned<String>>,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "walked as a tree; serde checks only that it is there"
    )]
    prologue: Option<IgnoredAny>,
    #[allow(
        dead_code,
        reason = "walked as a tree; serde checks only that it is there"
    )]
    actions: IgnoredAny,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "walked as a tree; serde checks only that it is there"
    )]
    epilogue: Option<IgnoredAny>,
    #[serde(default)]
    observe: Vec<Spanned<RawObserve>>,
    #[serde(default)]
    refinement: Option<RawRefinement>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawObserve {
    node: Spanned<String>,
    key: Spanned<String>,
    var: Option<Spanned<String>>,
    value: Option<Spanned<String>>,
    #[serde(default)]
    values: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRefinement {
    #[serde(default)]
    variants: Vec<Spanned<String>>,
    within: Option<Spanned<String>>,
    check: Option<Spanned<String>>,
}

/// A YAML value whose strings are templates.
#[derive(Clone, Debug)]
pub enum Tree {
    /// A scalar other than a string.
    Json(serde_json::Value),
    Text(Loc, Template),
    Seq(Vec<Tree>),
    Map(Vec<(String, Tree)>),
}

/// One step as the mapping writes it.
#[derive(Clone, Debug)]
pub struct StepTemplate {
    pub loc: Loc,
    pub tree: Tree,
}

#[derive(Clone, Debug)]
pub struct ActionMap {
    pub name: String,
    pub loc: Loc,
    pub steps: Vec<StepTemplate>,
}

/// A spec variable (or expression) the model publishes as `node`'s `key`.
#[derive(Clone, Debug)]
pub struct Observe {
    pub loc: Loc,
    pub node: Template,
    pub key: Template,
    pub value: Template,
    /// Spec text -> model text; values not listed pass unchanged.
    pub values: BTreeMap<String, String>,
    /// The spec side, for comments: the variable, or the value template.
    pub label: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// After every state, every observation.
    All,
    /// After every state, the observations whose spec value changed (and all at the first).
    Changed,
}

#[derive(Clone, Debug)]
pub struct Refinement {
    /// Variants that must follow the trace (empty: every variant).
    pub variants: Vec<Spanned<String>>,
    pub within: String,
    pub check: Check,
}

pub struct Mapping {
    pub file: String,
    /// The scenario header, in file order, with the location of each key.
    pub header: Vec<(String, Loc, Tree)>,
    pub action_variable: Option<Spanned<String>>,
    pub prologue: Vec<StepTemplate>,
    pub actions: Vec<ActionMap>,
    pub epilogue: Vec<StepTemplate>,
    pub observe: Vec<Observe>,
    pub refinement: Option<Refinement>,
}

impl Mapping {
    pub fn action(&self, name: &str) -> Option<&ActionMap> {
        self.actions.iter().find(|a| a.name == name)
    }

    /// The variant names the header declares (`default` for a top-level `expect`).
    pub fn variant_names(&self) -> Vec<String> {
        for (key, _, tree) in &self.header {
            if key == "variants" {
                if let Tree::Map(entries) = tree {
                    return entries.iter().map(|(k, _)| k.clone()).collect();
                }
            }
        }
        vec!["default".to_string()]
    }

    /// Every template with the location it was written at, for up-front checks.
    pub fn templates(&self) -> Vec<(Loc, &Template)> {
        let mut out = Vec::new();
        for (_, _, tree) in &self.header {
            collect(tree, &mut out);
        }
        let steps = self
            .prologue
            .iter()
            .chain(self.actions.iter().flat_map(|a| &a.steps))
            .chain(&self.epilogue);
        for step in steps {
            collect(&step.tree, &mut out);
        }
        for o in &self.observe {
            out.extend([(o.loc, &o.node), (o.loc, &o.key), (o.loc, &o.value)]);
        }
        out
    }
}

fn collect<'t>(tree: &'t Tree, out: &mut Vec<(Loc, &'t Template)>) {
    match tree {
        Tree::Json(_) => {}
        Tree::Text(loc, t) => out.push((*loc, t)),
        Tree::Seq(items) => items.iter().for_each(|t| collect(t, out)),
        Tree::Map(entries) => entries.iter().for_each(|(_, t)| collect(t, out)),
    }
}

/// Read a mapping file's text. All errors are returned, in file order.
pub fn parse(file: &str, text: &str) -> Result<Mapping, Vec<ImportError>> {
    let limits = yaml::Limits {
        bytes_max: FILE_BYTES_MAX,
        ..yaml::Limits::default()
    };
    let root =
        yaml::parse(text, &limits).map_err(|e| vec![ImportError::at(file, e.loc, e.message)])?;
    let mut r = Reader {
        file,
        errors: Vec::new(),
    };
    let mapping = r.mapping(&root);
    match mapping {
        Some(m) if r.errors.is_empty() => Ok(m),
        _ => {
            r.errors.sort_by_key(|e| e.loc);
            Err(r.errors)
        }
    }
}

struct Reader<'a> {
    file: &'a str,
    errors: Vec<ImportError>,
}

impl Reader<'_> {
    fn error(&mut self, loc: Loc, message: impl Into<String>) {
        self.errors.push(ImportError::at(self.file, loc, message));
    }

    fn error_hint(&mut self, loc: Loc, message: impl Into<String>, hint: impl Into<String>) {
        self.errors
            .push(ImportError::at(self.file, loc, message).hint(hint));
    }

    fn unknown_key(&mut self, key: &Node, what: &str, known: &[&str]) {
        let name = key.as_str().unwrap_or("");
        let valid = known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let hint = match yaml::nearest(name, known.iter().copied()) {
            Some(best) => format!("did you mean `{best}`? valid: {valid}"),
            None => format!("valid: {valid}"),
        };
        self.error_hint(key.loc, format!("unknown {what} `{name}`"), hint);
    }

    fn mapping(&mut self, root: &Node) -> Option<Mapping> {
        let Value::Map(entries) = &root.value else {
            self.error(
                root.loc,
                format!(
                    "a mapping file is a mapping (scenario, actions, ...), found {}",
                    root.kind_name()
                ),
            );
            return None;
        };
        for (key, _) in entries {
            if !key.as_str().is_some_and(|k| TOP_KEYS.contains(&k)) {
                self.unknown_key(key, "key", TOP_KEYS);
            }
        }
        let known = filtered(root, |k| TOP_KEYS.contains(&k));
        let raw: RawMapping = match from_node(&known) {
            Ok(raw) => raw,
            Err(e) => {
                self.error(e.loc, e.message);
                return None;
            }
        };
        let header = self.header(root.get("scenario").expect("serde checked"));
        let prologue = self.steps(root.get("prologue"), "prologue");
        let actions = self.actions(root.get("actions").expect("serde checked"));
        let epilogue = self.steps(root.get("epilogue"), "epilogue");
        let observe = raw
            .observe
            .into_iter()
            .filter_map(|o| self.observe(o))
            .collect();
        let refinement = raw.refinement.and_then(|r| self.refinement(r));
        Some(Mapping {
            file: self.file.to_string(),
            header,
            action_variable: raw.action_variable,
            prologue,
            actions,
            epilogue,
            observe,
            refinement,
        })
    }

    fn header(&mut self, node: &Node) -> Vec<(String, Loc, Tree)> {
        let Value::Map(entries) = &node.value else {
            self.error(
                node.loc,
                format!(
                    "`scenario` is the emitted scenario's header (model, nodes, variants, ...), found {}",
                    node.kind_name()
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let name = key.as_str().unwrap_or("");
            if name == "steps" || name == "chaos" {
                self.error_hint(
                    key.loc,
                    format!("`scenario` cannot set `{name}`"),
                    "the trace and the mapping's `prologue`, `actions` and `epilogue` make the steps",
                );
                continue;
            }
            if !header_keys().contains(&name) {
                self.unknown_key(key, "scenario key", &header_keys());
                continue;
            }
            if let Some(tree) = self.tree(value) {
                out.push((name.to_string(), key.loc, tree));
            }
        }
        if !out.iter().any(|(k, _, _)| k == "model") {
            self.error(node.loc, "`scenario` has no `model`");
        }
        out
    }

    fn tree(&mut self, node: &Node) -> Option<Tree> {
        Some(match &node.value {
            Value::Str(s) => match Template::parse(s) {
                Ok(t) => Tree::Text(node.loc, t),
                Err(e) => {
                    self.error(node.loc, format!("in `{s}`: {e}"));
                    return None;
                }
            },
            Value::Seq(items) => {
                let mut out = Vec::new();
                for item in items {
                    out.push(self.tree(item)?);
                }
                Tree::Seq(out)
            }
            Value::Map(entries) => {
                let mut out = Vec::new();
                for (k, v) in entries {
                    let key = match &k.value {
                        Value::Str(s) => s.clone(),
                        Value::Null
                        | Value::Bool(_)
                        | Value::Int(_)
                        | Value::Float(_)
                        | Value::Seq(_)
                        | Value::Map(_) => k.to_json().to_string(),
                    };
                    out.push((key, self.tree(v)?));
                }
                Tree::Map(out)
            }
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
                Tree::Json(node.to_json())
            }
        })
    }

    /// A list of steps (absent or null: none).
    fn steps(&mut self, node: Option<&Node>, what: &str) -> Vec<StepTemplate> {
        let Some(node) = node else {
            return Vec::new();
        };
        let items = match &node.value {
            Value::Null => return Vec::new(),
            Value::Seq(items) => items,
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Map(_) => {
                self.error(
                    node.loc,
                    format!("{what} is a list of steps, found {}", node.kind_name()),
                );
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for item in items {
            match &item.value {
                Value::Map(entries) if entries.len() == 1 => {
                    if let Some(tree) = self.tree(item) {
                        out.push(StepTemplate {
                            loc: entries[0].0.loc,
                            tree,
                        });
                    }
                }
                Value::Null
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Str(_)
                | Value::Seq(_)
                | Value::Map(_) => self.error_hint(
                    item.loc,
                    "a step is a mapping with one key, the step kind",
                    "for example `- release: {node: om1, failpoint: double_buffer.flush}`",
                ),
            }
        }
        out
    }

    fn actions(&mut self, node: &Node) -> Vec<ActionMap> {
        let Value::Map(entries) = &node.value else {
            self.error_hint(
                node.loc,
                format!(
                    "`actions` maps each spec action to its steps, found {}",
                    node.kind_name()
                ),
                "for example `actions: {init: [], flush: [{release: ...}]}`",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let Some(name) = key.as_str() else {
                self.error(key.loc, "an action name is a string");
                continue;
            };
            let what = format!("action `{name}`");
            out.push(ActionMap {
                name: name.to_string(),
                loc: key.loc,
                steps: self.steps(Some(value), &what),
            });
        }
        if out.is_empty() {
            self.error(node.loc, "`actions` maps no action");
        }
        out
    }

    fn template(&mut self, text: &Spanned<String>) -> Option<Template> {
        match Template::parse(&text.value) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(text.loc, format!("in `{}`: {e}", text.value));
                None
            }
        }
    }

    fn observe(&mut self, raw: Spanned<RawObserve>) -> Option<Observe> {
        let o = raw.value;
        let (value, label) = match (&o.var, &o.value) {
            (Some(var), None) => match Template::parse(&format!("{{state.{}}}", var.value)) {
                Ok(t) => (t, var.value.clone()),
                Err(_) => {
                    self.error(var.loc, format!("`{}` is not a variable name", var.value));
                    return None;
                }
            },
            (None, Some(value)) => (self.template(value)?, value.value.clone()),
            _ => {
                self.error_hint(
                    raw.loc,
                    "an observation needs exactly one of `var` and `value`",
                    "`var: x` is short for `value: \"{state.x}\"`",
                );
                return None;
            }
        };
        let node = self.template(&o.node);
        let key = self.template(&o.key);
        Some(Observe {
            loc: raw.loc,
            node: node?,
            key: key?,
            value,
            values: o.values,
            label,
        })
    }

    fn refinement(&mut self, r: RawRefinement) -> Option<Refinement> {
        let within = match r.within {
            None => "5s".to_string(),
            Some(w) => match crate::base::duration::parse(&w.value) {
                Ok(_) => w.value,
                Err(e) => {
                    self.error(w.loc, e.to_string());
                    return None;
                }
            },
        };
        let check = match r.check.as_ref().map(|c| c.value.as_str()) {
            None | Some("all") => Check::All,
            Some("changed") => Check::Changed,
            Some(other) => {
                let loc = r.check.as_ref().expect("some").loc;
                self.error_hint(
                    loc,
                    format!("unknown refinement check `{other}`"),
                    "`all` (every observation after every state) or `changed`",
                );
                return None;
            }
        };
        Some(Refinement {
            variants: r.variants,
            within,
            check,
        })
    }
}

/// `node` with only the entries whose key passes `keep` (for serde's view).
fn filtered(node: &Node, keep: impl Fn(&str) -> bool) -> Node {
    let Value::Map(entries) = &node.value else {
        return node.clone();
    };
    Node {
        loc: node.loc,
        value: Value::Map(
            entries
                .iter()
                .filter(|(k, _)| k.as_str().is_some_and(&keep))
                .cloned()
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
scenario:
  model: ozone-om
  nodes: [om1, om2, om3]
  variants:
    buggy: {bugs: {HDDS-10798: buggy}, expect: stuck}
    fixed: {expect: converged}
prologue:
  - await: {leader: om2, within: 5s}
actions:
  init: []
  write:
    - client: {op: put_file, path: "/v/b/k{index}", size: 1}
observe:
  - {node: om1, key: om_applied, var: ozoneApplied}
  - {node: om1, key: startup_index, var: startup, values: {"-1": "-"}}
refinement: {variants: [buggy], within: 2s, check: changed}
"#;

    #[test]
    fn reads_a_mapping() {
        let m = parse("m.yaml", GOOD).unwrap_or_else(|e| panic!("{}", e[0]));
        assert_eq!(
            m.header
                .iter()
                .map(|(k, _, _)| k.as_str())
                .collect::<Vec<_>>(),
            vec!["model", "nodes", "variants"]
        );
        assert_eq!(m.variant_names(), vec!["buggy", "fixed"]);
        assert_eq!(m.prologue.len(), 1);
        assert_eq!(m.action("init").unwrap().steps.len(), 0);
        assert_eq!(m.action("write").unwrap().loc, Loc { line: 12, col: 3 });
        assert_eq!(m.observe[1].values.get("-1").map(String::as_str), Some("-"));
        assert_eq!(m.observe[0].label, "ozoneApplied");
        let r = m.refinement.unwrap();
        assert_eq!((r.within.as_str(), r.check), ("2s", Check::Changed));
        assert_eq!(r.variants[0].value, "buggy");
    }

    fn errors(text: &str) -> Vec<String> {
        match parse("m.yaml", text) {
            Ok(_) => panic!("expected errors"),
            Err(e) => e.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn every_error_has_its_line_and_column() {
        let bad = GOOD
            .replace("prologue:", "prolog:")
            .replace("\"/v/b/k{index}\"", "\"/v/b/k{indx}\"")
            .replace("var: ozoneApplied}", "var: ozoneApplied, value: x}")
            .replace("check: changed", "check: some");
        let errs = errors(&bad);
        assert_eq!(errs.len(), 4, "{errs:#?}");
        assert!(
            errs[0].starts_with("m.yaml:8:1: error: unknown key `prolog`"),
            "{}",
            errs[0]
        );
        assert!(errs[0].contains("did you mean `prologue`?"), "{}", errs[0]);
        assert!(
            errs[1].starts_with("m.yaml:13:36: error: in `/v/b/k{indx}`: unknown root `indx` (did you mean `index`?)"),
            "{}",
            errs[1]
        );
        assert!(
            errs[2].starts_with(
                "m.yaml:15:5: error: an observation needs exactly one of `var` and `value`"
            ),
            "{}",
            errs[2]
        );
        assert!(
            errs[3].starts_with("m.yaml:17:52: error: unknown refinement check `some`"),
            "{}",
            errs[3]
        );
    }

    #[test]
    fn the_header_cannot_make_steps_and_needs_a_model() {
        let errs = errors("scenario: {nodes: [a], steps: []}\nactions: {init: []}\n");
        assert!(
            errs[0].starts_with("m.yaml:1:11: error: `scenario` has no `model`"),
            "{errs:#?}"
        );
        assert!(
            errs[1].starts_with("m.yaml:1:24: error: `scenario` cannot set `steps`"),
            "{errs:#?}"
        );
    }

    #[test]
    fn steps_are_one_key_mappings() {
        let errs = errors("scenario: {model: m}\nactions:\n  a: [{sleep: 1s, crash: n1}]\n");
        assert!(
            errs[0].starts_with("m.yaml:3:7: error: a step is a mapping with one key"),
            "{errs:#?}"
        );
        let errs = errors("scenario: {model: m}\nactions: []\n");
        assert!(
            errs[0].contains("`actions` maps each spec action to its steps"),
            "{errs:#?}"
        );
    }
}
