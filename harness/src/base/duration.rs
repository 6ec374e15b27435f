//! Durations in scenario files: `150ms`, `2s`, `1.5s`, `1m30s`, `2h`.
//!
//! Hand-written rather than `humantime`, which would loosen the language:
//! humantime also reads `ns`, `us`, days, weeks, `M` (months, next to `m` for
//! minutes) and years, and spaces between parts; its errors carry no example of
//! what to write; and its formatter writes `1m 30s`, which scenarios (and this
//! parser) do not read, so the shrinker's output would no longer load. Fencing
//! all that around humantime takes as many lines as this parser.

use std::time::Duration;

/// Parse a duration. A bare number is an error (the unit is never guessed), and so
/// is a negative one.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; write for example `500ms`, `2s` or `1m30s`".into());
    }
    if text.starts_with('-') {
        return Err(format!("duration `{text}` is negative; durations are >= 0"));
    }
    let mut total_ms: f64 = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!(
                "cannot read duration `{text}`; write for example `500ms`, `2s` or `1m30s`"
            ));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("cannot read the number in duration `{text}`"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale_ms = match unit {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" | "min" => 60_000.0,
            "h" => 3_600_000.0,
            "" => {
                return Err(format!(
                    "duration `{text}` needs a unit: write `{number}s` or `{number}ms`"
                ))
            }
            other => {
                return Err(format!(
                    "unknown unit `{other}` in duration `{text}`; use ms, s, m or h"
                ))
            }
        };
        total_ms += number * scale_ms;
    }
    if !total_ms.is_finite() || total_ms > 1.0e15 {
        return Err(format!("duration `{text}` is too large"));
    }
    Ok(Duration::from_micros((total_ms * 1000.0).round() as u64))
}

/// What [`parse`] reads, as a regular expression (ECMA-262 and Rust `regex`
/// alike): parts of a number and a unit, around optional spaces. The scenario
/// file's JSON Schema gives it to editors; a test holds it to [`parse`].
pub const PATTERN: &str = r"^\s*(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ms|s|min|m|h))+\s*$";

/// A duration in the scenario file's JSON Schema.
pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "pattern": PATTERN,
        "description": "A duration: a number and a unit (ms, s, m, h), compounds allowed: 150ms, 2s, 1.5s, 1m30s",
    })
}

/// Format a duration the way scenarios write it.
pub fn format(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms == 0 {
        "0ms".into()
    } else if ms.is_multiple_of(3_600_000) {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Serde for a duration as whole milliseconds (`stall_ms: 3000`), the unit of
/// every trail payload.
pub mod ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(duration.as_millis() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_units_and_compounds() {
        assert_eq!(parse("150ms").unwrap(), Duration::from_millis(150));
        assert_eq!(parse("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse("0s").unwrap(), Duration::ZERO);
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert!(parse("-1s").unwrap_err().contains("negative"));
        assert!(parse("5").unwrap_err().contains("needs a unit"));
        assert!(parse("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse("soon").unwrap_err().contains("cannot read"));
        assert!(parse("").unwrap_err().contains("empty"));
    }

    #[test]
    fn the_schema_pattern_reads_what_parse_reads() {
        let pattern = regex::Regex::new(PATTERN).unwrap();
        for text in [
            "150ms",
            "2s",
            "1.5s",
            "1m30s",
            "2h",
            "0s",
            "5min",
            " 2s ",
            ".5s",
            "1.s",
            "1.5s.5s",
            "-1s",
            "5",
            "5 parsecs",
            "soon",
            "",
            "1500us",
            "1.2.3s",
            "1s 2s",
            "s",
            "2d",
            "1e3s",
        ] {
            assert_eq!(
                pattern.is_match(text),
                parse(text).is_ok(),
                "`{text}`: {:?}",
                parse(text)
            );
        }
    }

    #[test]
    fn formats_round_trip() {
        for text in ["150ms", "2s", "90s", "2m", "3h", "0ms"] {
            assert_eq!(format(parse(text).unwrap()), text);
        }
    }
}
