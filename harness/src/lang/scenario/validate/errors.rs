//! Reporting errors while reading a scenario: every one with file:line:col, and
//! the helpers every reader shares (typed reads, durations, "did you mean").

use super::DURATION_MAX;
use crate::base::duration;
use crate::lang::diag::{Diagnostic, Diagnostics};
use crate::lang::yaml::{self, from_node, nearest, Loc, Node, Spanned, Value};
use std::path::Path;
use std::time::Duration;

/// Most entries one [`Errors::read`] leaves out to find the errors after its first.
pub(super) const READ_PRUNES_MAX: usize = 64;

/// Leave out of `node` the mapping entry whose key is at `loc` or whose scalar
/// value is, or the scalar list item at `loc`, wherever it is nested; the key's
/// name (empty for a list item), or `None` when nothing there is at `loc`
/// (an error located at a mapping or a list itself is not pruned: what to leave
/// out is not clear).
fn prune(node: &mut Node, loc: Loc) -> Option<(String, Loc)> {
    let scalar_at = |n: &Node| !matches!(n.value, Value::Map(_) | Value::Seq(_)) && n.loc == loc;
    let at = node.loc;
    match &mut node.value {
        Value::Map(entries) => {
            if let Some(i) = entries
                .iter()
                .position(|(k, v)| k.loc == loc || scalar_at(v))
            {
                let (key, _) = entries.remove(i);
                return Some((key.as_str().unwrap_or("").to_string(), at));
            }
            entries.iter_mut().find_map(|(_, v)| prune(v, loc))
        }
        Value::Seq(items) => {
            if let Some(i) = items.iter().position(scalar_at) {
                items.remove(i);
                return Some((String::new(), at));
            }
            items.iter_mut().find_map(|v| prune(v, loc))
        }
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => None,
    }
}

/// The errors of one file, in the order found (sorted by location at the end).
pub(super) struct Errors<'f> {
    pub file: &'f str,
    pub diags: Diagnostics,
    /// Mappings and lists [`Errors::read`] left an entry out of: an error
    /// located at one of them afterwards ("needs exactly one condition") is a
    /// consequence of the entry left out, already reported, and is dropped.
    pruned: Vec<Loc>,
}

impl<'f> Errors<'f> {
    pub fn new(file: &'f str) -> Self {
        Errors {
            file,
            diags: Diagnostics::default(),
            pruned: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.diags.is_empty()
    }

    pub fn error(&mut self, loc: Loc, message: impl Into<String>) {
        if self.pruned.contains(&loc) {
            return;
        }
        self.diags.push(Diagnostic::new(self.file, loc, message));
    }

    pub fn error_hint(&mut self, loc: Loc, message: impl Into<String>, hint: impl Into<String>) {
        if self.pruned.contains(&loc) {
            return;
        }
        self.diags
            .push(Diagnostic::new(self.file, loc, message).hint(hint));
    }

    pub fn yaml_error(&mut self, error: yaml::Error) {
        self.error(error.loc, error.message);
    }

    pub fn unknown_name<'n>(
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
                format!(
                    "{} valid: {valid}",
                    crate::base::text::did_you_mean(name, best)
                ),
            ),
            None => self.error_hint(loc, message, format!("valid: {valid}")),
        }
    }

    /// Read `node` as `T`. serde stops at a mapping's first error, so after one
    /// the entry it names (a key, or a scalar value, or a list item) is left
    /// out and the read is tried again, up to [`READ_PRUNES_MAX`] times: every
    /// such error of the mapping is reported in one pass. What is read from the
    /// pruned tree is returned, so the checks after this one still run on the
    /// rest; the file has errors, so it never loads. A "missing field" error for
    /// a field this read left out is its own doing, and ends the read unreported.
    pub fn read<T: serde::de::DeserializeOwned>(&mut self, node: &Node) -> Option<T> {
        let mut pruned: Option<Node> = None;
        let mut removed: Vec<String> = Vec::new();
        for _ in 0..=READ_PRUNES_MAX {
            let tree = pruned.as_ref().unwrap_or(node);
            let e = match from_node(tree) {
                Ok(value) => return Some(value),
                Err(e) => e,
            };
            if removed.iter().any(|k| {
                e.message.contains(&format!("missing field `{k}`"))
                    || e.message.contains(&format!("missing required field `{k}`"))
            }) || self.pruned.contains(&e.loc)
            {
                return None;
            }
            let mut next = tree.clone();
            let entry = prune(&mut next, e.loc);
            self.yaml_error(e);
            let (key, parent) = entry?;
            removed.push(key);
            self.pruned.push(parent);
            pruned = Some(next);
        }
        None
    }

    pub fn duration(&mut self, text: &Spanned<String>) -> Option<Duration> {
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

    pub fn duration_or(&mut self, text: &Option<Spanned<String>>, default: Duration) -> Duration {
        match text {
            None => default,
            Some(text) => self.duration(text).unwrap_or(default),
        }
    }
}

pub(super) fn list(names: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{}`", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A copy of a mapping node with only the keys `keep` accepts.
pub(super) fn map_filtered(node: &Node, keep: impl Fn(&str) -> bool) -> Node {
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
pub(super) fn locate_field(map: &Node, message: &str) -> Option<Loc> {
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
pub(super) fn serde_suggestion(message: &str) -> Option<String> {
    if !message.starts_with("unknown field") && !message.starts_with("unknown variant") {
        return None;
    }
    let names: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let (wrong, valid) = names.split_first()?;
    nearest(wrong, valid.iter().copied()).map(str::to_string)
}

pub(in crate::lang::scenario) fn file_stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string())
}
