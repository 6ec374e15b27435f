//! Op templates: `{A..B}` and `{seq}` placeholders in string values, the same in
//! scripted `client` steps and in chaos workloads. `{{` and `}}` are literal braces.

use crate::lang::yaml::{Loc, Node, Value};

/// Fill an op template: in string values, `{A..B}` becomes a number drawn by
/// `draw(A, B)` and `{seq}` the run's op sequence number.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
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

/// One placeholder or literal run of a template string.
enum Piece<'t> {
    Text(&'t str),
    Seq,
    Range(i64, i64),
}

/// Split a template string; an unknown, unclosed or empty placeholder is an error.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let Some(at) = rest.find(['{', '}']) else {
            out.push(Piece::Text(rest));
            break;
        };
        if at > 0 {
            out.push(Piece::Text(&rest[..at]));
        }
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("{{") {
            out.push(Piece::Text("{"));
            rest = after;
            continue;
        }
        if let Some(after) = rest.strip_prefix("}}") {
            out.push(Piece::Text("}"));
            rest = after;
            continue;
        }
        if rest.starts_with('}') {
            return Err(format!(
                "unmatched `}}` in `{text}`; write `}}}}` for a literal brace"
            ));
        }
        let close = rest.find('}').ok_or_else(|| {
            format!("unclosed `{{` in `{text}`; write `{{{{` for a literal brace")
        })?;
        let inner = &rest[1..close];
        if inner == "seq" {
            out.push(Piece::Seq);
        } else if let Some((lo, hi)) = inner.split_once("..") {
            let (Ok(lo), Ok(hi)) = (lo.trim().parse::<i64>(), hi.trim().parse::<i64>()) else {
                return Err(format!(
                    "`{{{inner}}}` in `{text}` is not a range like {{1..5}}"
                ));
            };
            if lo > hi {
                return Err(format!("range `{{{inner}}}` in `{text}` is empty"));
            }
            out.push(Piece::Range(lo, hi));
        } else {
            return Err(format!(
                "unknown placeholder `{{{inner}}}` in `{text}`; use {{A..B}} or {{seq}} (`{{{{` for a literal brace)"
            ));
        }
        rest = &rest[close + 1..];
    }
    Ok(out)
}

fn expand_string(
    text: &str,
    draw: &mut dyn FnMut(i64, i64) -> i64,
    seq: u64,
) -> Result<String, String> {
    let mut out = String::new();
    for piece in pieces(text)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Seq => out.push_str(&seq.to_string()),
            Piece::Range(lo, hi) => out.push_str(&draw(lo, hi).to_string()),
        }
    }
    Ok(out)
}

fn is_single_placeholder(text: &str) -> bool {
    matches!(pieces(text).as_deref(), Ok([Piece::Seq | Piece::Range(..)]))
}

/// Whether any string value under `node` holds a placeholder (or a `{{` escape,
/// which only a template turns into a brace). The first string that cannot be
/// expanded is an error at its location.
pub(super) fn placeholders(node: &Node) -> Result<bool, (Loc, String)> {
    match &node.value {
        Value::Str(text) if text.contains(['{', '}']) => pieces(text)
            .map(|_| true)
            .map_err(|message| (node.loc, message)),
        Value::Seq(items) => items
            .iter()
            .try_fold(false, |any, item| Ok(placeholders(item)? || any)),
        Value::Map(entries) => entries
            .iter()
            .try_fold(false, |any, (_, value)| Ok(placeholders(value)? || any)),
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_expand_and_escapes_stay_literal() {
        let template = json!({"key": "k{1..3}", "value": "{{v}} {seq}", "n": "{5..5}"});
        let out = expand_template(&template, &mut |lo, _| lo, 7).unwrap();
        assert_eq!(out, json!({"key": "k1", "value": "{v} 7", "n": 5}));
    }

    #[test]
    fn what_cannot_expand_is_an_error() {
        for bad in ["{x}", "{3..1}", "{1..}", "a{", "a}b", "{seq"] {
            assert!(pieces(bad).is_err(), "{bad}");
        }
    }
}
