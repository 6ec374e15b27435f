//! Errors in scenario files: every one with file:line:col and, where we can, what to write instead.
//!
//! `Display` gives the plain form, one line per error (`file:line:col: error: ...`
//! and an indented `help:`), which editors and tests read. [`render`] adds a source
//! excerpt with a caret under the column (through `annotate-snippets`), styled for a
//! terminal; the first line stays `file:line:col:` so editors still jump to it.

use crate::base::text::{printable, printable_lines};
use crate::lang::yaml::Loc;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use anstyle::{AnsiColor, Style};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub file: String,
    pub loc: Loc,
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn new(file: &str, loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_string(),
            loc,
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            printable(&self.file),
            self.loc.line,
            self.loc.col,
            printable_lines(&self.message)
        )?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  help: {}", printable_lines(hint))?;
        }
        Ok(())
    }
}

/// All the errors found in one file, in file order.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn sorted(mut self) -> Self {
        self.0.sort_by_key(|d| d.loc);
        self
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

const LOCATION: Style = Style::new().bold();
const ERROR: Style = AnsiColor::Red.on_default().bold();
const HELP: Style = AnsiColor::Cyan.on_default().bold();

/// The longest stretch of a source line shown in an excerpt.
const EXCERPT_CHARS_MAX: usize = 120;
/// Excerpts for at most this many diagnostics of a file; the rest are plain lines
/// (finding a column in a long line costs its length, and a hostile file can hold
/// hundreds of thousands of errors on one line).
const EXCERPTS_MAX: usize = 50;

/// Every diagnostic with an excerpt of `source` (when given) under it, styled
/// with ANSI codes (print it through `anstream`, which drops them when the
/// output is not a terminal or colour is off).
pub fn render(diagnostics: &Diagnostics, source: Option<&str>) -> String {
    let mut out = String::new();
    for (i, d) in diagnostics.0.iter().enumerate() {
        out.push_str(&render_one(d, source.filter(|_| i < EXCERPTS_MAX)));
    }
    out
}

fn render_one(d: &Diagnostic, source: Option<&str>) -> String {
    let mut out = format!(
        "{LOCATION}{}:{}:{}:{LOCATION:#} {ERROR}error:{ERROR:#} {}\n",
        printable(&d.file),
        d.loc.line,
        d.loc.col,
        printable_lines(&d.message)
    );
    if let Some((line, span)) = source.and_then(|s| excerpt(s, d.loc)) {
        let group = Group::with_level(Level::ERROR).element(
            Snippet::source(line.as_str())
                .line_start(d.loc.line as usize)
                .annotation(AnnotationKind::Primary.span(span)),
        );
        out.push_str(&Renderer::styled().render(&[group]));
        out.push('\n');
    }
    if let Some(hint) = &d.hint {
        out.push_str(&format!(
            "  {HELP}help:{HELP:#} {}\n",
            printable_lines(hint)
        ));
    }
    out
}

/// The source line of `loc`, escaped and cut to a window around the column, and
/// the byte span in it to put the caret under (the word at the column).
fn excerpt(source: &str, loc: Loc) -> Option<(String, std::ops::Range<usize>)> {
    let line = source.lines().nth((loc.line as usize).checked_sub(1)?)?;
    let wanted = (loc.col as usize).saturating_sub(1);
    let start = wanted.saturating_sub(EXCERPT_CHARS_MAX / 2);
    // Only the window is collected: index 0 of `chars` is column `start`.
    let chars: Vec<char> = line.chars().skip(start).take(EXCERPT_CHARS_MAX).collect();
    let col = (wanted - start).min(chars.len());
    let (start, end) = (0, chars.len());
    let word_end = (col..end)
        .find(|&i| {
            // A `:` ends the word only where YAML ends a plain scalar at it
            // (before a space or the end): `invariant:NAME` is one word.
            let colon_ends = chars[i] == ':' && chars.get(i + 1).is_none_or(|c| c.is_whitespace());
            chars[i].is_whitespace() || ",{}[]".contains(chars[i]) || colon_ends
        })
        .unwrap_or(end)
        .max(col + 1);
    let mut text = String::new();
    let mut span = 0..0;
    for (i, c) in chars.iter().enumerate().take(end).skip(start) {
        if i == col {
            span.start = text.len();
        }
        text.push_str(&printable(&c.to_string()));
        if i + 1 == word_end {
            span.end = text.len();
        }
    }
    if span.end <= span.start {
        // The column is at or past the end of the line: point just after it.
        span = text.len()..text.len();
    }
    Some((text, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn a_rendered_error_starts_with_its_location_and_points_at_the_column() {
        let source = "model: raftkv\nsteps:\n  - crash: n9\n";
        let d = Diagnostic::new("s.yaml", Loc { line: 3, col: 12 }, "unknown node `n9`")
            .hint("did you mean `n1`?");
        let text = strip(&render(&Diagnostics(vec![d]), Some(source)));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "s.yaml:3:12: error: unknown node `n9`", "{text}");
        let at = lines
            .iter()
            .position(|l| l.contains("- crash: n9"))
            .unwrap();
        let source_line = lines[at];
        let caret_line = lines[at + 1];
        let caret = caret_line.find('^').unwrap();
        assert_eq!(&source_line[caret..caret + 2], "n9", "{text}");
        assert!(caret_line[caret..].starts_with("^^"), "{text}");
        assert!(text.contains("help: did you mean `n1`?"), "{text}");
    }

    /// A plain scalar with a `:` inside (`invariant:NAME`, a checker) is one
    /// word: the caret covers the name, not the part before the colon.
    #[test]
    fn the_caret_covers_a_name_with_a_colon_inside() {
        let source = "except: [{key: K, checker: invariant:snapshots_agre}]\n";
        let d = Diagnostic::new("s.yaml", Loc { line: 1, col: 28 }, "unknown checker");
        let text = strip(&render(&Diagnostics(vec![d]), Some(source)));
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("checker: inv"))
            .unwrap();
        let (source_line, caret_line) = (lines[at], lines[at + 1]);
        let caret = caret_line.find('^').unwrap();
        let carets = caret_line[caret..].trim_end().len();
        assert_eq!(
            &source_line[caret..caret + carets],
            "invariant:snapshots_agre",
            "{text}"
        );
    }

    #[test]
    fn hostile_source_lines_are_escaped_in_excerpts() {
        let source = "name: \u{1b}]0;pwned\u{7}x\n";
        let d = Diagnostic::new("s.yaml", Loc { line: 1, col: 7 }, "bad");
        let text = render(&Diagnostics(vec![d]), Some(source));
        assert!(
            !text.contains("\u{7}") && !text.contains("]0;pwned\u{7}"),
            "{text:?}"
        );
        assert!(strip(&text).contains("\\u{1b}]0;pwned\\u{7}x"), "{text:?}");
    }
}
