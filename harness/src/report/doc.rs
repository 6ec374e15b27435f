//! A section of a report as blocks, written once and rendered both into
//! `summary.md` (as Markdown) and into `index.html` (as escaped HTML): the
//! sweep's coverage ledger is one.
//!
//! Text is Markdown-flavoured: `code` and **strong** spans are all the inline
//! markup there is. In HTML every text is escaped first; a span whose marker
//! has no partner stays as it is written.

use super::html::escape::esc as escape;

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// `##` (2) or `###` (3).
    Heading(u8, String),
    Para(String),
    List(Vec<String>),
    Table {
        head: Vec<String>,
        /// Per column: numbers, right-aligned.
        right: Vec<bool>,
        rows: Vec<Vec<String>>,
    },
}

/// The blocks as Markdown, each followed by a blank line.
pub fn markdown(blocks: &[Block]) -> String {
    let mut md = String::new();
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                md.push_str(&format!("{} {text}\n\n", "#".repeat(usize::from(*level))))
            }
            Block::Para(text) => md.push_str(&format!("{text}\n\n")),
            Block::List(items) => {
                for item in items {
                    md.push_str(&format!("- {item}\n"));
                }
                md.push('\n');
            }
            Block::Table { head, right, rows } => {
                md.push_str(&format!("| {} |\n|", head.join(" | ")));
                for i in 0..head.len() {
                    md.push_str(if right.get(i) == Some(&true) {
                        "---:|"
                    } else {
                        "---|"
                    });
                }
                md.push('\n');
                for row in rows {
                    md.push_str(&format!("| {} |\n", row.join(" | ")));
                }
                md.push('\n');
            }
        }
    }
    md
}

/// The blocks as HTML (every text escaped).
pub fn html(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                out.push_str(&format!("<h{level}>{}</h{level}>\n", inline(text)))
            }
            Block::Para(text) => out.push_str(&format!("<p>{}</p>\n", inline(text))),
            Block::List(items) => {
                out.push_str("<ul>");
                for item in items {
                    out.push_str(&format!("<li>{}</li>", inline(item)));
                }
                out.push_str("</ul>\n");
            }
            Block::Table { head, right, rows } => {
                out.push_str("<div class=\"scroll\"><table class=\"grid\"><thead><tr>");
                for h in head {
                    out.push_str(&format!("<th>{}</th>", inline(h)));
                }
                out.push_str("</tr></thead><tbody>");
                for row in rows {
                    out.push_str("<tr>");
                    for (i, cell) in row.iter().enumerate() {
                        let class = if right.get(i) == Some(&true) {
                            " class=\"n\""
                        } else {
                            ""
                        };
                        out.push_str(&format!("<td{class}>{}</td>", inline(cell)));
                    }
                    out.push_str("</tr>");
                }
                out.push_str("</tbody></table></div>\n");
            }
        }
    }
    out
}

/// Escaped text with its `code` and **strong** spans as elements.
fn inline(text: &str) -> String {
    spans(
        text,
        "`",
        &|part| format!("<code>{}</code>", escape(part)),
        &|rest| {
            spans(
                rest,
                "**",
                &|part| format!("<strong>{}</strong>", escape(part)),
                &|plain| escape(plain),
            )
        },
    )
}

/// `text` split at `marker`: the parts between two markers through `inside`,
/// the others (and an unpartnered marker's, with the marker) through `outside`.
fn spans(
    text: &str,
    marker: &str,
    inside: &dyn Fn(&str) -> String,
    outside: &dyn Fn(&str) -> String,
) -> String {
    let parts: Vec<&str> = text.split(marker).collect();
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 && i + 1 < parts.len() {
            out.push_str(&inside(part));
        } else {
            if i % 2 == 1 {
                out.push_str(&outside(marker));
            }
            out.push_str(&outside(part));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_become_elements_and_everything_is_escaped() {
        assert_eq!(
            inline("**2 probe(s)** `m` `<p>`: a < b"),
            "<strong>2 probe(s)</strong> <code>m</code> <code>&lt;p&gt;</code>: a &lt; b"
        );
        assert_eq!(inline("odd ` tick"), "odd ` tick");
        assert_eq!(inline("`**not strong**`"), "<code>**not strong**</code>");
    }

    #[test]
    fn markdown_and_html_carry_the_same_table() {
        let blocks = [
            Block::Heading(3, "Model `kv`".into()),
            Block::Table {
                head: vec!["probe".into(), "runs".into()],
                right: vec![false, true],
                rows: vec![vec!["`p`".into(), "3".into()]],
            },
        ];
        assert_eq!(
            markdown(&blocks),
            "### Model `kv`\n\n| probe | runs |\n|---|---:|\n| `p` | 3 |\n\n"
        );
        let html = html(&blocks);
        assert!(html.contains("<h3>Model <code>kv</code></h3>"), "{html}");
        assert!(
            html.contains("<td><code>p</code></td><td class=\"n\">3</td>"),
            "{html}"
        );
    }
}
