//! Text from input on its way to a terminal or a message. Scenario names, variant
//! names, node names and values are whatever a file says; printed raw, an escape
//! sequence in one can clear the screen or retitle the window, and a bidi override
//! can make a line read backwards. Every name and value from input goes through
//! [`printable`] before it is printed.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as itself: C0 and C1 controls and DEL, the
/// bidirectional formatting characters, zero-width and other invisible format
/// characters, and the noncharacters U+FFFE and U+FFFF.
fn hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{00AD}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{FFFE}'
                | '\u{FFFF}'
        )
}

/// `text` with every hostile character written as a visible escape (`\u{1b}`), and
/// backslashes doubled so that an escape cannot be faked. Borrowed when nothing
/// needed escaping, which is almost always.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| hostile(c) || c == '\\') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if hostile(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Like [`printable`], but keeps line breaks and tabs: for multi-line messages
/// (diagnostics, finding texts) whose layout is ours.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| (hostile(c) && c != '\n' && c != '\t') || c == '\\')
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        for part in body.split_inclusive('\t') {
            let (p, tab) = match part.strip_suffix('\t') {
                Some(p) => (p, "\t"),
                None => (part, ""),
            };
            out.push_str(&printable(p));
            out.push_str(tab);
        }
        out.push_str(end);
    }
    Cow::Owned(out)
}

/// "did you mean `best`?", and when `word` holds non-ASCII characters where `best`
/// has ASCII ones (a Cyrillic `о` for a Latin `o`), a note that names them: the two
/// look alike on screen, and without the note the suggestion reads as nonsense.
pub fn did_you_mean(word: &str, best: &str) -> String {
    let mut hint = format!("did you mean `{}`?", printable(best));
    if let Some(note) = lookalike_note(word, best) {
        hint.push(' ');
        hint.push_str(&note);
    }
    hint
}

/// The non-ASCII characters of `word` that stand where `best` has an ASCII one, if
/// there are any (the suggestion was found by edit distance, so they are the
/// likely cause).
pub fn lookalike_note(word: &str, best: &str) -> Option<String> {
    let odd: Vec<char> = word
        .chars()
        .filter(|c| !c.is_ascii())
        .filter(|c| !best.contains(*c))
        .collect();
    if odd.is_empty() || !best.is_ascii() {
        return None;
    }
    let listed: Vec<String> = odd
        .iter()
        .map(|c| format!("`{}` U+{:04X}", printable(&c.to_string()), *c as u32))
        .collect();
    let (one, it) = if odd.len() == 1 {
        ("a letter", "it only looks")
    } else {
        ("letters", "they only look")
    };
    Some(format!(
        "(`{}` has {one} outside ASCII: {}; {it} like ASCII)",
        printable(word),
        listed.join(", ")
    ))
}

/// `text` as one word for a POSIX shell: as it is when it is only letters,
/// digits and `/._-=`, otherwise in single quotes.
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_controls_and_bidi_overrides_are_made_visible() {
        assert_eq!(printable("plain-name_1.v2"), "plain-name_1.v2");
        assert!(matches!(printable("日本 ok"), Cow::Borrowed(_)));
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("x\u{0}y"), "x\\u{0}y");
        assert_eq!(printable("evil\u{202E}txt"), "evil\\u{202e}txt");
        assert_eq!(printable("\u{9b}c"), "\\u{9b}c");
        assert_eq!(
            printable("a\\u{1b}"),
            "a\\\\u{1b}",
            "an escape cannot be faked"
        );
        assert_eq!(printable("l1\nl2"), "l1\\nl2");
        assert_eq!(
            printable_lines("l1\n\u{1b}]0;t\u{7}\n"),
            "l1\n\\u{1b}]0;t\\u{7}\n"
        );
        for c in ['\u{FFFE}', '\u{FFFF}', '\u{200B}', '\u{2066}'] {
            assert!(!printable(&c.to_string()).contains(c));
        }
    }

    #[test]
    fn a_lookalike_suggestion_says_why_it_looks_the_same() {
        // The first letter is CYRILLIC SMALL LETTER O.
        let hint = did_you_mean("\u{43e}m1", "om1");
        assert!(hint.starts_with("did you mean `om1`?"), "{hint}");
        assert!(hint.contains("U+043E"), "{hint}");
        assert!(hint.contains("it only looks like ASCII"), "{hint}");
        assert_eq!(did_you_mean("omm1", "om1"), "did you mean `om1`?");
    }
}
