//! JSON lines: one [`Event`] per line, in index order. Our own export, and the
//! format `History` is read back from.

use super::event::Event;
use super::record::History;
use std::fmt::Write as _;

pub fn to_jsonl(history: &History) -> String {
    let mut out = String::new();
    for event in history.events() {
        let line = serde_json::to_string(&event).expect("an event serializes");
        let _ = writeln!(out, "{line}");
    }
    out
}

/// Read JSON lines back; errors name the line (1-based). Blank lines are skipped.
pub fn from_jsonl(text: &str) -> Result<History, String> {
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: Event =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        events.push(event);
    }
    History::from_events(events).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::history::CompletionKind;
    use serde_json::{json, Value};

    #[test]
    fn round_trips_and_is_deterministic() {
        let mut h = History::new();
        let a = h
            .invoke(
                0,
                "put",
                json!({"key": "a", "value": "1"}),
                Some("n1".into()),
                1_000,
            )
            .unwrap();
        let b = h
            .invoke(1, "get", json!({"key": "a"}), None, 2_000)
            .unwrap();
        h.complete(a, CompletionKind::Ok, Value::Null, None, 3_000)
            .unwrap();
        h.complete(
            b,
            CompletionKind::Info,
            Value::Null,
            Some("timeout".into()),
            4_000,
        )
        .unwrap();
        let text = to_jsonl(&h);
        assert_eq!(text, to_jsonl(&h.clone()));
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"index":0,"time_ns":1000,"process":0,"type":"invoke","f":"put","value":{"key":"a","value":"1"},"node":"n1"}"#
        );
        assert_eq!(from_jsonl(&text).unwrap(), h);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = from_jsonl("\n{\"index\":0}\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let e =
            from_jsonl(r#"{"index":0,"time_ns":0,"process":0,"type":"ok","f":"get","bogus":1}"#)
                .unwrap_err();
        assert!(e.contains("bogus"), "{e}");
    }
}
