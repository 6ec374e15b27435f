//! Escaping for everything a report prints.
//!
//! Node names, keys, values, event details, file names and checker messages come
//! from scenarios, models and (for `faultline report`) from a JSON file anyone can
//! edit. None of it may ever become markup or script. The rules here:
//!
//! - Text goes through [`esc`] (in templates: every `{{ }}`, by [`Html`]) whether it lands in element content or in a quoted
//!   attribute value (HTML or inline SVG; the same five characters are special in
//!   both, and escaping `<` means no `</svg>`, `</script>` or `<![CDATA[` can start).
//! - Scenario data never lands in a tag name, attribute name, `class`, `id`, CSS or
//!   script: those are built from indices and fixed words only.
//! - Templates mark only the page's own CSS and script, the SVG diagram (built
//!   by `diagram/svg.rs` from escaped text) and the client lanes (built by
//!   `clients.rs` from escaped text) and the dashboard's coverage ledger (built
//!   by `report::doc` from escaped text) `|safe`; nothing from a scenario is.
//! - Links made from data go through [`href_path`], which can only produce a relative
//!   path (no scheme such as `javascript:`).
//! - The page's Content-Security-Policy allows only the one inline script, by hash
//!   ([`csp`]): even if some markup slipped through, an injected script would not run.

use askama::filters::Escaper;
use base64::Engine;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use sha2::{Digest, Sha256};
use std::fmt;

/// The escaper of the report templates (askama.toml) and of [`esc`]: text for
/// HTML/SVG element content and for quoted attribute values. Control characters
/// other than newline, tab and carriage return become U+FFFD (HTML treats most of
/// them as parse errors).
#[derive(Clone, Copy, Debug, Default)]
pub struct Html;

impl askama::filters::Escaper for Html {
    fn write_escaped_str<W: fmt::Write>(&self, mut dest: W, text: &str) -> fmt::Result {
        let mut plain = 0;
        for (at, c) in text.char_indices() {
            let replacement = match c {
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '"' => "&quot;",
                '\'' => "&#39;",
                '\n' | '\t' | '\r' => continue,
                c if c.is_control() => "\u{FFFD}",
                _ => continue,
            };
            dest.write_str(&text[plain..at])?;
            dest.write_str(replacement)?;
            plain = at + c.len_utf8();
        }
        dest.write_str(&text[plain..])
    }
}

/// Escape text for HTML/SVG element content and for quoted attribute values
/// (the rules of [`Html`]).
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    Html.write_escaped_str(&mut out, text)
        .expect("writing to a String cannot fail");
    out
}

/// At most `max` characters of `text`, with an ellipsis when cut (before escaping,
/// so an escape sequence is never split).
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// A relative URL for a relative file path: every segment percent-encoded (so a
/// `javascript:` prefix becomes the harmless file name `javascript%3A...`), empty
/// segments dropped (so `/etc/x` becomes `etc/x`), backslashes encoded.
pub fn href_path(path: &str) -> String {
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_encode)
        .collect();
    if segments.is_empty() {
        "#".to_string()
    } else {
        segments.join("/")
    }
}

/// Everything but RFC 3986's unreserved characters is encoded in a segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn percent_encode(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// The Content-Security-Policy of a report page: nothing may be fetched (no
/// network, no fonts, no images other than inline data), and the only script that
/// runs is `script`, identified by its sha256.
pub fn csp(script: &str) -> String {
    let digest = Sha256::digest(script.as_bytes());
    format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        base64(&digest)
    )
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_never_becomes_markup() {
        for hostile in [
            "<script>alert(1)</script>",
            "</svg><script>alert(1)</script>",
            "\" onmouseover=\"alert(1)",
            "' onload='alert(1)",
            "]]><script>x</script>",
            "<![CDATA[x]]>",
            "&lt;already&gt;",
        ] {
            let out = esc(hostile);
            assert!(!out.contains('<'), "{out}");
            assert!(!out.contains('>'), "{out}");
            assert!(!out.contains('"'), "{out}");
            assert!(!out.contains('\''), "{out}");
        }
        assert_eq!(
            esc("a<b>&\"c'\u{0}\u{1b}\n"),
            "a&lt;b&gt;&amp;&quot;c&#39;\u{FFFD}\u{FFFD}\n"
        );
    }

    #[test]
    fn links_from_data_stay_relative() {
        assert_eq!(
            href_path("raftkv/buggy/seed-1/report.html"),
            "raftkv/buggy/seed-1/report.html"
        );
        assert_eq!(
            href_path("javascript:alert(1)"),
            "javascript%3Aalert%281%29"
        );
        assert_eq!(href_path("/etc/passwd"), "etc/passwd");
        assert_eq!(href_path("a b/\"x\"<"), "a%20b/%22x%22%3C");
        assert_eq!(href_path(""), "#");
        assert_eq!(href_path("ä\\b~c"), "%C3%A4%5Cb~c");
    }

    #[test]
    fn base64_matches_known_values() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("äöü", 3), "äöü");
    }
}
