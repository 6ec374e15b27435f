//! Reporting errors while reading a scenario: every one with file:line:col, and
//! the helpers every reader shares (typed reads, durations, "did you mean").

use super::DURATION_MAX;
use crate::diag::{Diagnostic, Diagnostics};
use crate::duration;
use crate::yaml::{self, from_node, nearest, Loc, Node, Spanned, Value};
use std::path::Path;
use std::time::Duration;

/// The errors of one file, in the order found (sorted by location at the end).
pub(super) struct Errors<'f> {
    pub file: &'f str,
    pub diags: Diagnostics,
}

impl<'f> Errors<'f> {
    pub fn new(file: &'f str) -> Self {
        Errors {
            file,
            diags: Diagnostics::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.diags.is_empty()
    }

    pub fn error(&mut self, loc: Loc, message: impl Into<String>) {
        self.diags.push(Diagnostic::new(self.file, loc, message));
    }

    pub fn error_hint(&mut self, loc: Loc, message: impl Into<String>, hint: impl Into<String>) {
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
                format!("{} valid: {valid}", crate::text::did_you_mean(name, best)),
            ),
            None => self.error_hint(loc, message, format!("valid: {valid}")),
        }
    }

    pub fn read<T: serde::de::DeserializeOwned>(&mut self, node: &Node) -> Option<T> {
        match from_node(node) {
            Ok(value) => Some(value),
            Err(e) => {
                self.yaml_error(e);
                None
            }
        }
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

pub(in crate::scenario) fn file_stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string())
}
