//! Writing the generated scenario: block-style YAML for the header (a mapping per
//! level, one flow line per leaf or list item), one flow line per step, with a
//! trailing comment naming the trace state. Every value goes through
//! [`crate::lang::yaml::flow`], which quotes whatever YAML would read differently, so the
//! text parses back to the same values.

use super::{Generated, Origin};
use crate::lang::yaml::flow;
use serde_json::Value as J;

/// Nesting levels written in block style; deeper values are one flow line.
const BLOCK_DEPTH_MAX: usize = 5;

#[derive(Default)]
pub(super) struct Lines {
    lines: Vec<(String, Option<Origin>)>,
    steps: usize,
    refinements: usize,
}

impl Lines {
    pub fn raw(&mut self, line: &str, origin: Option<Origin>) {
        self.lines.push((line.to_string(), origin));
    }

    pub fn comment(&mut self, text: &str) {
        self.raw(&format!("# {text}"), None);
    }

    /// A top-level key of the scenario and its value.
    pub fn header_entry(&mut self, key: &str, value: &J, origin: Origin) {
        self.block(0, key, value, 1, &origin);
    }

    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
    )]
    fn block(&mut self, indent: usize, key: &str, value: &J, depth: usize, origin: &Origin) {
        let pad = " ".repeat(indent);
        let key = flow(&J::String(key.to_string()));
        let deeper = depth < BLOCK_DEPTH_MAX;
        match value {
            J::String(s) => match literal_block(s) {
                Some((indicator, body)) => {
                    self.raw(&format!("{pad}{key}: {indicator}"), Some(origin.clone()));
                    for line in body {
                        let line = if line.is_empty() {
                            String::new()
                        } else {
                            format!("{pad}  {line}")
                        };
                        self.raw(&line, Some(origin.clone()));
                    }
                }
                None => self.raw(
                    &format!("{pad}{key}: {}", flow(value)),
                    Some(origin.clone()),
                ),
            },
            J::Object(map) if deeper && map.values().any(nested) => {
                self.raw(&format!("{pad}{key}:"), Some(origin.clone()));
                for (k, v) in map {
                    self.block(indent + 2, k, v, depth + 1, origin);
                }
            }
            J::Array(items) if deeper && nested(value) => {
                self.raw(&format!("{pad}{key}:"), Some(origin.clone()));
                for item in items {
                    self.raw(&format!("{pad}  - {}", flow(item)), Some(origin.clone()));
                }
            }
            _ => self.raw(
                &format!("{pad}{key}: {}", flow(value)),
                Some(origin.clone()),
            ),
        }
    }

    /// A step made from the mapping, with the comment naming its state.
    pub fn step(&mut self, step: &J, comment: &str, origin: Origin) {
        self.steps += 1;
        self.raw(
            &format!("  - {}  # {comment}", step_line(step)),
            Some(origin),
        );
    }

    /// A refinement check.
    pub fn refinement(&mut self, step: &J, comment: &str, origin: Origin) {
        self.refinements += 1;
        self.raw(
            &format!("  - {}  # {comment}", step_line(step)),
            Some(origin),
        );
    }

    pub fn finish(self) -> Generated {
        let mut text = String::new();
        let mut origins = Vec::new();
        for (line, origin) in self.lines {
            text.push_str(&line);
            text.push('\n');
            origins.push(origin);
        }
        Generated {
            text,
            origins,
            steps: self.steps,
            refinements: self.refinements,
        }
    }
}

/// Whether a value holds mappings or lists of mappings: then it is written in block
/// style, one line per entry; a value of scalars (`{seed: 1, tick: 10ms}`,
/// `[om1, om2]`) stays one flow line.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn nested(value: &J) -> bool {
    match value {
        J::Object(map) => !map.is_empty(),
        J::Array(items) => items.iter().any(|i| i.is_object() || i.is_array()),
        _ => false,
    }
}

/// `{"crash": "n1"}` as `crash: n1`: a step is a one-key mapping.
fn step_line(step: &J) -> String {
    match step.as_object() {
        Some(map) if map.len() == 1 => {
            let (kind, body) = map.iter().next().expect("one entry");
            format!("{}: {}", flow(&J::String(kind.clone())), flow(body))
        }
        _ => flow(step),
    }
}

/// A multi-line string as a literal block (`|` or `|-`) and its lines, when the
/// block would read back exactly; otherwise `None` (one quoted flow line).
fn literal_block(text: &str) -> Option<(&'static str, Vec<&str>)> {
    if !text.contains('\n')
        || text.starts_with([' ', '\n'])
        || text.ends_with("\n\n")
        || text.contains(['\r', '\t'])
        || text.lines().any(|l| l.ends_with(' '))
    {
        return None;
    }
    match text.strip_suffix('\n') {
        Some(body) => Some(("|", body.split('\n').collect())),
        None => Some(("|-", text.split('\n').collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::yaml::{parse, Limits, Loc};
    use serde_json::json;

    fn origin() -> Origin {
        Origin {
            loc: Loc { line: 1, col: 1 },
            what: "test".into(),
        }
    }

    #[test]
    fn the_header_reads_back_as_written() {
        let header = json!({
            "name": "x",
            "description": "two\nlines\n",
            "nodes": [{"name": "dn1", "role": "datanode"}, {"name": "recon", "role": "recon"}],
            "variants": {
                "buggy": {"bugs": {"HDDS-1": "buggy"}, "expect": {"outcome": "stuck",
                  "trail": [{"node": "om1", "contains": "a: \"b\" #c"}]}},
            },
            "params": {"containers": [1, 2]},
            "odd": " leading\nspace",
        });
        let mut lines = Lines::default();
        for (k, v) in header.as_object().unwrap() {
            lines.header_entry(k, v, origin());
        }
        let generated = lines.finish();
        assert!(
            generated.text.contains("description: |\n  two\n  lines\n"),
            "{}",
            generated.text
        );
        assert!(
            generated
                .text
                .contains("\n      trail:\n        - {node: om1"),
            "{}",
            generated.text
        );
        let back = parse(&generated.text, &Limits::default())
            .unwrap()
            .to_json();
        assert_eq!(back, header);
        assert_eq!(generated.origins.len(), generated.text.lines().count());
    }

    #[test]
    fn literal_blocks_only_where_they_read_back() {
        assert_eq!(literal_block("a\nb"), Some(("|-", vec!["a", "b"])));
        assert_eq!(literal_block("a\n\nb\n"), Some(("|", vec!["a", "", "b"])));
        assert_eq!(literal_block("one line"), None);
        assert_eq!(literal_block("a\n\n"), None);
        assert_eq!(literal_block(" a\nb"), None);
        assert_eq!(literal_block("a \nb"), None);
    }

    #[test]
    fn steps_carry_their_comment() {
        let mut lines = Lines::default();
        lines.step(
            &json!({"client": {"op": "put", "key": "a b"}}),
            "state 1: action w",
            origin(),
        );
        let g = lines.finish();
        assert_eq!(
            g.text,
            "  - client: {op: put, key: \"a b\"}  # state 1: action w\n"
        );
        assert_eq!(g.steps, 1);
    }
}
