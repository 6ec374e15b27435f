//! `faultline import`: a model checker's trace becomes a scenario (docs/trail-import.md).
//!
//! A trace (`itf`: ITF from Quint or Apalache, or TLC's `-dumpTrace json`) and a
//! mapping file (`mapping`: which steps each spec action makes, which
//! observations each spec variable is) give an ordinary scenario file. Each state
//! of the trace gives the steps of the action that led to it, each with a comment
//! naming the state, then (with `refinement`) one `await observed` per mapped
//! variable: the model must reach the spec's values, so a run that leaves the
//! spec's path stops at the first state where it did and names it.
//!
//! The output is checked with the scenario validator before it is written; an
//! error in it is reported at the mapping line that made it.

mod emit;
pub mod expr;
pub mod itf;
pub mod mapping;

use crate::lang::scenario::{self, LoadError};
use crate::lang::yaml::Loc;
use expr::{EvalError, Scope, Template};
use itf::{State, Trace};
use mapping::{Check, Mapping, Tree};
use serde_json::{json, Value as J};
use std::fmt;
use std::path::Path;

/// An error in the trace or the mapping: the file, where in it, what, and (when
/// both files matter) where in the trace. Boxed: errors are rare, results many.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError(Box<ErrorDetail>);

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorDetail {
    pub file: String,
    /// A mapping location (`line:col`).
    pub loc: Option<Loc>,
    /// A trace location (a JSON path).
    pub path: Option<String>,
    pub message: String,
    /// The other file's side, labelled: `trace: t.itf.json:$.states[3] (state 3,
    /// action flush)`, or `scenario: <stdout>:61:18: - client: ...`.
    pub also: Option<String>,
    pub hint: Option<String>,
}

impl std::ops::Deref for ImportError {
    type Target = ErrorDetail;
    fn deref(&self) -> &ErrorDetail {
        &self.0
    }
}

impl std::ops::DerefMut for ImportError {
    fn deref_mut(&mut self) -> &mut ErrorDetail {
        &mut self.0
    }
}

impl ImportError {
    fn new(file: &str, loc: Option<Loc>, path: Option<&str>, message: String) -> Self {
        ImportError(Box::new(ErrorDetail {
            file: file.to_string(),
            loc,
            path: path.map(str::to_string),
            message,
            also: None,
            hint: None,
        }))
    }

    pub fn at(file: &str, loc: Loc, message: impl Into<String>) -> Self {
        Self::new(file, Some(loc), None, message.into())
    }

    pub fn in_trace(file: &str, path: &str, message: impl Into<String>) -> Self {
        Self::new(file, None, Some(path), message.into())
    }

    fn io(file: &str, message: impl Into<String>) -> Self {
        Self::new(file, None, None, message.into())
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.0.hint = Some(hint.into());
        self
    }

    fn also(mut self, also: impl Into<String>) -> Self {
        self.0.also = Some(also.into());
        self
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.loc, &self.path) {
            (Some(loc), _) => write!(f, "{}:{}:{}: error: ", self.file, loc.line, loc.col)?,
            (None, Some(path)) => write!(f, "{}:{path}: error: ", self.file)?,
            (None, None) => write!(f, "{}: error: ", self.file)?,
        }
        write!(f, "{}", self.message)?;
        if let Some(also) = &self.also {
            write!(f, "\n  {also}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  help: {hint}")?;
        }
        Ok(())
    }
}

/// What an import made.
#[derive(Debug)]
pub struct ImportSummary {
    /// The scenario text (also written to the output file when one was given).
    pub text: String,
    pub written: Option<std::path::PathBuf>,
    pub states: usize,
    pub format: &'static str,
    pub steps: usize,
    pub refinements: usize,
    pub trace: String,
    pub mapping: String,
}

impl fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let out = self
            .written
            .as_ref()
            .map_or("<stdout>".to_string(), |p| p.display().to_string());
        write!(
            f,
            "imported {} state(s) of {} ({}) with {}: {} step(s), {} refinement check(s) -> {}",
            self.states,
            crate::base::text::printable(&self.trace),
            self.format,
            crate::base::text::printable(&self.mapping),
            self.steps,
            self.refinements,
            crate::base::text::printable(&out)
        )
    }
}

/// Every error of an import, in the order found.
#[derive(Debug)]
pub struct ImportErrors(pub Vec<ImportError>);

impl fmt::Display for ImportErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.0 {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ImportErrors {}

/// The command: read, build, validate, write.
pub fn import(
    trace: &Path,
    mapping: &Path,
    out: Option<&Path>,
) -> Result<ImportSummary, ImportErrors> {
    import_files(trace, mapping, out).map_err(ImportErrors)
}

/// A regular file of at most `limit` bytes, as text.
fn read(path: &Path, limit: usize) -> Result<String, Vec<ImportError>> {
    let file = path.display().to_string();
    let fail = |m: String| vec![ImportError::io(&file, m)];
    let bytes = crate::base::fsio::read_capped(path, limit as u64).map_err(|e| {
        fail(match e.kind {
            crate::base::fsio::ErrorKind::TooLarge { limit } => {
                format!("file is more than {limit} bytes; the limit is {limit}")
            }
            crate::base::fsio::ErrorKind::Io { .. }
            | crate::base::fsio::ErrorKind::NotRegular(_)
            | crate::base::fsio::ErrorKind::Symlink => e.to_string(),
        })
    })?;
    String::from_utf8(bytes).map_err(|_| fail("cannot read: the file is not UTF-8".into()))
}

fn import_files(
    trace: &Path,
    mapping: &Path,
    out: Option<&Path>,
) -> Result<ImportSummary, Vec<ImportError>> {
    let mapping_file = mapping.display().to_string();
    let trace_file = trace.display().to_string();
    let mapping = mapping::parse(&mapping_file, &read(mapping, mapping::FILE_BYTES_MAX)?)?;
    let trace = itf::parse(&read(trace, itf::FILE_BYTES_MAX)?)
        .map_err(|e| vec![ImportError::in_trace(&trace_file, &e.path, e.message)])?;
    let out_name = out.map_or("<stdout>".to_string(), |p| p.display().to_string());
    let generated = build(&mapping, &trace, &trace_file)?;
    check(&generated, &mapping, &out_name)?;
    if let Some(path) = out {
        crate::base::fsio::atomic_write(path, generated.text.as_bytes())
            .map_err(|e| vec![ImportError::io(&out_name, e.to_string())])?;
    }
    Ok(ImportSummary {
        text: generated.text,
        written: out.map(Path::to_path_buf),
        states: trace.states.len(),
        format: trace.format.name(),
        steps: generated.steps,
        refinements: generated.refinements,
        trace: trace_file,
        mapping: mapping_file,
    })
}

/// A generated scenario and, per line, the mapping place that made it.
pub struct Generated {
    pub text: String,
    origins: Vec<Option<Origin>>,
    pub steps: usize,
    pub refinements: usize,
}

#[derive(Clone, Debug)]
struct Origin {
    loc: Loc,
    what: String,
}

impl Origin {
    fn new(loc: Loc, what: impl Into<String>) -> Self {
        Origin {
            loc,
            what: what.into(),
        }
    }
}

/// Build the scenario text for `trace` with `mapping` (not yet validated).
pub fn build(
    mapping: &Mapping,
    trace: &Trace,
    trace_file: &str,
) -> Result<Generated, Vec<ImportError>> {
    let b = Builder {
        mapping,
        trace,
        trace_file,
    };
    b.check_variables()?;
    b.check_refinement_variants()?;
    let actions = b.actions().map_err(|e| vec![e])?;
    b.generate(&actions).map_err(|e| vec![e])
}

struct Builder<'a> {
    mapping: &'a Mapping,
    trace: &'a Trace,
    trace_file: &'a str,
}

impl Builder<'_> {
    /// Every variable a template names exists in the trace, before any state is
    /// rendered, so the error does not depend on which actions the trace took.
    fn check_variables(&self) -> Result<(), Vec<ImportError>> {
        let mut errors = Vec::new();
        for (loc, template) in self.mapping.templates() {
            for name in template.variables() {
                if let Err(e) = expr::resolve_var(name, &self.trace.vars) {
                    errors.push(
                        ImportError::at(
                            &self.mapping.file,
                            loc,
                            format!("in `{}`: {e}", template.source),
                        )
                        .also(format!("trace: {}:$.vars", self.trace_file)),
                    );
                }
            }
        }
        if let Some(var) = &self.mapping.action_variable {
            if let Err(e) = expr::resolve_var(&var.value, &self.trace.vars) {
                errors.push(
                    ImportError::at(&self.mapping.file, var.loc, format!("action_variable: {e}"))
                        .also(format!("trace: {}:$.vars", self.trace_file)),
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    fn check_refinement_variants(&self) -> Result<(), Vec<ImportError>> {
        let Some(r) = &self.mapping.refinement else {
            return Ok(());
        };
        let declared = self.mapping.variant_names();
        let errors: Vec<ImportError> = r
            .variants
            .iter()
            .filter(|v| !declared.contains(&v.value))
            .map(|v| {
                ImportError::at(
                    &self.mapping.file,
                    v.loc,
                    format!(
                        "refinement names the variant `{}`, which `scenario` does not declare",
                        v.value
                    ),
                )
                .hint(format!("declared: {}", declared.join(", ")))
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The action that led to each state, each one mapped.
    fn actions(&self) -> Result<Vec<String>, ImportError> {
        let mut out = Vec::new();
        for state in &self.trace.states {
            let (name, path) = match &self.mapping.action_variable {
                Some(var) => {
                    let full = expr::resolve_var(&var.value, &self.trace.vars).expect("checked");
                    let path = itf::path_key(&state.path, full);
                    match state.var(full) {
                        Some(itf::Value::Str(name)) => (name.clone(), path),
                        Some(other) => {
                            return Err(ImportError::in_trace(
                                self.trace_file,
                                &path,
                                format!("the action variable `{full}` holds {}, not an action name", other.kind_name()),
                            ))
                        }
                        None => {
                            return Err(ImportError::in_trace(
                                self.trace_file,
                                &state.path,
                                format!("state {} has no action variable `{full}`", state.index),
                            ))
                        }
                    }
                }
                None => match &state.action {
                    Some(name) => (name.clone(), state.action_path.clone()),
                    None => {
                        return Err(ImportError::in_trace(
                            self.trace_file,
                            &state.path,
                            format!("state {} does not say which action led to it", state.index),
                        )
                        .hint(
                            "run Quint with --mbt (it writes mbt::actionTaken), or name the variable that holds the action with `action_variable:` in the mapping",
                        ))
                    }
                },
            };
            if self.mapping.action(&name).is_none() {
                let known: Vec<&str> = self
                    .mapping
                    .actions
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect();
                let hint = match crate::lang::yaml::nearest(&name, known.iter().copied()) {
                    Some(best) => format!(
                        "did you mean `{best}`? the mapping maps: {}",
                        known.join(", ")
                    ),
                    None => format!("the mapping maps: {}", known.join(", ")),
                };
                return Err(ImportError::in_trace(
                    self.trace_file,
                    &path,
                    format!(
                        "unknown action `{name}` (state {}): {} has no entry for it under `actions`",
                        state.index, self.mapping.file
                    ),
                )
                .hint(hint));
            }
            out.push(name);
        }
        Ok(out)
    }

    fn state_label(&self, state: &State, action: &str) -> String {
        format!(
            "trace: {}:{} (state {}, action {action})",
            self.trace_file, state.path, state.index
        )
    }

    fn eval_error(
        &self,
        loc: Loc,
        template: &Template,
        e: EvalError,
        state: &State,
        action: &str,
    ) -> ImportError {
        ImportError::at(
            &self.mapping.file,
            loc,
            format!("in `{}`: {e}", template.source),
        )
        .also(self.state_label(state, action))
    }

    /// A tree with its templates filled in from `scope`.
    fn render(&self, tree: &Tree, scope: &Scope) -> Result<J, ImportError> {
        Ok(match tree {
            Tree::Json(v) => v.clone(),
            Tree::Text(loc, t) => t
                .eval(scope)
                .and_then(|r| r.to_json())
                .map_err(|e| self.eval_error(*loc, t, e, scope.state, scope.action))?,
            Tree::Seq(items) => J::Array(
                items
                    .iter()
                    .map(|i| self.render(i, scope))
                    .collect::<Result<_, _>>()?,
            ),
            Tree::Map(entries) => {
                let mut map = serde_json::Map::new();
                for (k, v) in entries {
                    map.insert(k.clone(), self.render(v, scope)?);
                }
                J::Object(map)
            }
        })
    }

    /// One observation at one state: (node, key, value) as the model would publish it.
    fn observation(
        &self,
        o: &mapping::Observe,
        scope: &Scope,
    ) -> Result<(String, String, String), ImportError> {
        let text = |t: &Template| {
            t.eval(scope)
                .and_then(|r| r.into_text())
                .map_err(|e| self.eval_error(o.loc, t, e, scope.state, scope.action))
        };
        let value = text(&o.value)?;
        let value = o.values.get(&value).cloned().unwrap_or(value);
        Ok((text(&o.node)?, text(&o.key)?, value))
    }

    fn scope<'s>(&'s self, i: usize, actions: &'s [String]) -> Scope<'s> {
        let states = &self.trace.states;
        let prev = i.checked_sub(1).map(|p| &states[p]);
        Scope::new(&states[i], prev, &self.trace.vars, &actions[i])
    }

    fn generate(&self, actions: &[String]) -> Result<Generated, ImportError> {
        let last = self.trace.states.len() - 1;
        let mut out = emit::Lines::default();
        self.header(&mut out, &self.scope(last, actions))?;
        out.raw("steps:", None);
        let prologue = &self.mapping.prologue;
        self.fixed_steps(&mut out, prologue, &self.scope(0, actions), "prologue")?;
        // The last observation of each `observe` entry, for `check: changed`.
        let mut previous = vec![None; self.mapping.observe.len()];
        for i in 0..self.trace.states.len() {
            self.state_steps(&mut out, &self.scope(i, actions), &mut previous)?;
        }
        let epilogue = &self.mapping.epilogue;
        self.fixed_steps(&mut out, epilogue, &self.scope(last, actions), "epilogue")?;
        Ok(out.finish())
    }

    /// Provenance comments and the scenario header (templates read the last state).
    fn header(&self, out: &mut emit::Lines, last: &Scope) -> Result<(), ImportError> {
        out.comment(&format!(
            "Generated by `faultline import` from {} ({}, {} states) with {}.",
            self.trace_file,
            self.trace.format.name(),
            self.trace.states.len(),
            self.mapping.file
        ));
        out.comment(
            "Each step's comment names the trace state it came from; rerun the import to change it.",
        );
        let mut header = Vec::new();
        for (key, loc, tree) in &self.mapping.header {
            header.push((key.clone(), *loc, self.render(tree, last)?));
        }
        self.guard_refinement(&mut header);
        for (key, loc, value) in &header {
            out.header_entry(key, value, Origin::new(*loc, format!("`scenario.{key}`")));
        }
        Ok(())
    }

    /// The prologue's or the epilogue's steps.
    fn fixed_steps(
        &self,
        out: &mut emit::Lines,
        steps: &[mapping::StepTemplate],
        scope: &Scope,
        part: &str,
    ) -> Result<(), ImportError> {
        for step in steps {
            let json = self.render(&step.tree, scope)?;
            out.step(&json, part, Origin::new(step.loc, format!("the {part}")));
        }
        Ok(())
    }

    /// One state: its action's steps, then its refinement checks.
    fn state_steps(
        &self,
        out: &mut emit::Lines,
        scope: &Scope,
        previous: &mut [Option<(String, String, String)>],
    ) -> Result<(), ImportError> {
        let (state, action) = (scope.state, scope.action);
        let label = action_comment(state, action);
        let what = format!("state {} (action {action})", state.index);
        let mut emitted = 0;
        for step in &self.mapping.action(action).expect("checked").steps {
            let json = self.render(&step.tree, scope)?;
            out.step(&json, &label, Origin::new(step.loc, what.clone()));
            emitted += 1;
        }
        if let Some(r) = &self.mapping.refinement {
            for (o, previous) in self.mapping.observe.iter().zip(previous.iter_mut()) {
                let seen = self.observation(o, scope)?;
                let unchanged = previous.as_ref() == Some(&seen);
                let first = previous.is_none();
                *previous = Some(seen.clone());
                if r.check == Check::Changed && !first && unchanged {
                    continue;
                }
                let (node, key, value) = seen;
                let mut body = json!({
                    "observed": {"node": node, "key": key, "value": value},
                    "within": r.within,
                });
                if !r.variants.is_empty() {
                    let names: Vec<&str> = r.variants.iter().map(|v| v.value.as_str()).collect();
                    body["variants"] = json!(names);
                }
                let comment = format!("state {}: refines {}", state.index, o.label);
                let origin = Origin::new(o.loc, what.clone());
                out.refinement(&json!({ "await": body }), &comment, origin);
                emitted += 1;
            }
        }
        if emitted == 0 {
            out.raw(&format!("  # {label} (no steps)"), None);
        }
        Ok(())
    }

    /// Each variant that must follow the trace also expects no missed await: a run
    /// that left the spec's path (or never reached a step's precondition) stops at
    /// that await as `stuck`, and must not pass as a variant that expects `stuck`
    /// for the reported reason.
    fn guard_refinement(&self, header: &mut [(String, Loc, J)]) {
        let Some(r) = &self.mapping.refinement else {
            return;
        };
        let wanted =
            |name: &str| r.variants.is_empty() || r.variants.iter().any(|v| v.value == name);
        for (key, _, value) in header.iter_mut() {
            match (key.as_str(), value) {
                ("variants", J::Object(variants)) => {
                    for (name, variant) in variants.iter_mut() {
                        if wanted(name) {
                            if let Some(expect) = variant.get_mut("expect") {
                                add_guard(expect);
                            }
                        }
                    }
                }
                ("expect", expect) if wanted("default") => add_guard(expect),
                _ => {}
            }
        }
    }
}

/// The trail event of a missed await (see `runner/interpret.rs`).
fn guard() -> J {
    json!({"kind": "await", "contains": "missed its deadline"})
}

fn add_guard(expect: &mut J) {
    if !expect.is_object() {
        *expect = json!({ "outcome": expect.take() });
    }
    let map = expect.as_object_mut().expect("an object now");
    let absent = map.entry("absent").or_insert_with(|| json!([]));
    if let Some(list) = absent.as_array_mut() {
        if !list.contains(&guard()) {
            list.push(guard());
        }
    }
}

/// `state 3: action markUnhealthy (c = 2)`.
fn action_comment(state: &State, action: &str) -> String {
    let picks: Vec<String> = state
        .picks
        .iter()
        .map(|(n, v)| format!("{n} = {}", expr::text(v).unwrap_or_else(|_| "?".into())))
        .collect();
    let mut label = format!("state {}: action {action}", state.index);
    if !picks.is_empty() {
        label.push_str(&format!(" ({})", picks.join(", ")));
    }
    label.replace(['\n', '\r'], " ")
}

/// Validate the generated text as a scenario; report each error at the mapping
/// place that made the line.
fn check(generated: &Generated, mapping: &Mapping, out_name: &str) -> Result<(), Vec<ImportError>> {
    let diagnostics = match scenario::load_str(out_name, &generated.text) {
        Ok(_) => return Ok(()),
        Err(LoadError::Io(message)) => return Err(vec![ImportError::io(out_name, message)]),
        Err(LoadError::Invalid(d)) => d,
    };
    let lines: Vec<&str> = generated.text.lines().collect();
    let errors = diagnostics
        .0
        .into_iter()
        .map(|d| {
            let line = d.loc.line as usize;
            let text = lines.get(line.wrapping_sub(1)).map_or("", |l| l.trim());
            let place = format!("scenario: {out_name}:{}:{}: {text}", d.loc.line, d.loc.col);
            let origin = generated
                .origins
                .get(line.wrapping_sub(1))
                .cloned()
                .flatten();
            let mut e = match origin {
                Some(o) => ImportError::at(
                    &mapping.file,
                    o.loc,
                    format!(
                        "the scenario line made for {} does not validate: {}",
                        o.what, d.message
                    ),
                ),
                None => ImportError::io(
                    out_name,
                    format!("the generated scenario does not validate: {}", d.message),
                ),
            };
            e.also = Some(place);
            e.hint = d.hint;
            e
        })
        .collect::<Vec<ImportError>>();
    // A mapping step that does not validate does not for every state that made it:
    // report the first.
    let mut seen = Vec::new();
    let errors = errors
        .into_iter()
        .filter(|e| {
            let key = (e.file.clone(), e.loc, e.message.clone());
            let first = !seen.contains(&key);
            seen.push(key);
            first
        })
        .collect();
    Err(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_turns_any_expectation_into_a_mapping_once() {
        let mut e = json!("stuck");
        add_guard(&mut e);
        add_guard(&mut e);
        assert_eq!(e, json!({"outcome": "stuck", "absent": [guard()]}));
        let mut e = json!({"outcome": ["stuck"], "absent": [{"kind": "exit"}]});
        add_guard(&mut e);
        assert_eq!(e["absent"], json!([{"kind": "exit"}, guard()]));
    }

    #[test]
    fn errors_print_both_files() {
        let e = ImportError::at("m.yaml", Loc { line: 3, col: 7 }, "in `{state.x}`: nope")
            .also("trace: t.json:$.states[2] (state 2, action a)")
            .hint("try y");
        assert_eq!(
            e.to_string(),
            "m.yaml:3:7: error: in `{state.x}`: nope\n  trace: t.json:$.states[2] (state 2, action a)\n  help: try y"
        );
        let e = ImportError::in_trace("t.json", "$.states[1].x", "bad");
        assert_eq!(e.to_string(), "t.json:$.states[1].x: error: bad");
    }
}
