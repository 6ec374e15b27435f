//! EDN, the format Jepsen's tools read: a writer for the exports `elle-cli` and
//! Knossos take, and a reader so published Jepsen histories can be checked here.
//!
//! The shapes follow Jepsen's documented history format (jepsen-io/history's
//! README, elle-cli's README): one map per event with `:type` (`:invoke`, `:ok`,
//! `:fail`, `:info`), `:f`, `:value`, `:process`, `:time` (ns) and `:index`
//! (dense, ascending). A process that crashed (`:info`) never invokes again in
//! Jepsen, so the exports give a client's later ops a fresh process number.
//!
//! This module is the EDN value, its writer and its reader; [`jepsen`] maps a
//! `History` to and from Jepsen's shapes.

use serde_json::{Map, Number, Value};
use std::fmt::{self, Write as _};

mod jepsen;

pub use jepsen::{left_out, read_jepsen, to_edn, EdnShape, ReadError};

/// An EDN value.
#[derive(Clone, Debug, PartialEq)]
pub enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Keyword(String),
    Symbol(String),
    Vector(Vec<Edn>),
    List(Vec<Edn>),
    Set(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
}

impl Edn {
    pub fn kw(name: &str) -> Edn {
        Edn::Keyword(name.to_string())
    }

    /// A map's value under keyword `name`.
    pub fn get(&self, name: &str) -> Option<&Edn> {
        match self {
            Edn::Map(entries) => entries.iter().find_map(|(k, v)| match k {
                Edn::Keyword(k) if k == name => Some(v),
                Edn::Nil
                | Edn::Bool(_)
                | Edn::Int(_)
                | Edn::Float(_)
                | Edn::Str(_)
                | Edn::Keyword(_)
                | Edn::Symbol(_)
                | Edn::Vector(_)
                | Edn::List(_)
                | Edn::Set(_)
                | Edn::Map(_) => None,
            }),
            Edn::Nil
            | Edn::Bool(_)
            | Edn::Int(_)
            | Edn::Float(_)
            | Edn::Str(_)
            | Edn::Keyword(_)
            | Edn::Symbol(_)
            | Edn::Vector(_)
            | Edn::List(_)
            | Edn::Set(_) => None,
        }
    }

    /// JSON has no keywords: they become strings (without the colon), sets and
    /// lists become arrays, map keys are written as text.
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
    )]
    pub fn to_json(&self) -> Value {
        match self {
            Edn::Nil => Value::Null,
            Edn::Bool(b) => Value::Bool(*b),
            Edn::Int(i) => Value::Number((*i).into()),
            Edn::Float(f) => Number::from_f64(*f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Edn::Str(s) | Edn::Keyword(s) | Edn::Symbol(s) => Value::String(s.clone()),
            Edn::Vector(items) | Edn::List(items) | Edn::Set(items) => {
                Value::Array(items.iter().map(Edn::to_json).collect())
            }
            Edn::Map(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    let key = match k.to_json() {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    map.insert(key, v.to_json());
                }
                Value::Object(map)
            }
        }
    }

    /// JSON as EDN: object keys become keywords where they can be.
    pub fn from_json(value: &Value) -> Edn {
        match value {
            Value::Null => Edn::Nil,
            Value::Bool(b) => Edn::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Edn::Int(i),
                None => Edn::Float(n.as_f64().unwrap_or(0.0)),
            },
            Value::String(s) => Edn::Str(s.clone()),
            Value::Array(items) => Edn::Vector(items.iter().map(Edn::from_json).collect()),
            Value::Object(map) => Edn::Map(
                map.iter()
                    .map(|(k, v)| {
                        let key = if is_keyword_name(k) {
                            Edn::kw(k)
                        } else {
                            Edn::Str(k.clone())
                        };
                        (key, Edn::from_json(v))
                    })
                    .collect(),
            ),
        }
    }
}

fn is_keyword_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || "*+!-_?<>=".contains(c))
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "*+!-_?<>=.".contains(c))
}

impl fmt::Display for Edn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, open: &str, items: &[Edn], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_char(' ')?;
                }
                write!(f, "{item}")?;
            }
            f.write_str(close)
        }
        match self {
            Edn::Nil => f.write_str("nil"),
            Edn::Bool(b) => write!(f, "{b}"),
            Edn::Int(i) => write!(f, "{i}"),
            Edn::Float(x) if x.is_finite() => {
                let s = format!("{x}");
                if s.contains('.') || s.contains('e') {
                    f.write_str(&s)
                } else {
                    write!(f, "{s}.0")
                }
            }
            Edn::Float(_) => f.write_str("nil"),
            Edn::Str(s) => {
                f.write_char('"')?;
                for c in s.chars() {
                    match c {
                        '"' => f.write_str("\\\"")?,
                        '\\' => f.write_str("\\\\")?,
                        '\n' => f.write_str("\\n")?,
                        '\r' => f.write_str("\\r")?,
                        '\t' => f.write_str("\\t")?,
                        c => f.write_char(c)?,
                    }
                }
                f.write_char('"')
            }
            Edn::Keyword(k) => write!(f, ":{k}"),
            Edn::Symbol(s) => f.write_str(s),
            Edn::Vector(items) => seq(f, "[", items, "]"),
            Edn::List(items) => seq(f, "(", items, ")"),
            Edn::Set(items) => seq(f, "#{", items, "}"),
            Edn::Map(entries) => {
                f.write_char('{')?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_char('}')
            }
        }
    }
}

/// Why EDN text did not parse, with its line and column (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdnError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for EdnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for EdnError {}

/// Nesting deeper than this is refused, so a hostile file cannot blow the stack.
const MAX_DEPTH: usize = 128;

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, message: impl Into<String>) -> EdnError {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        EdnError {
            line,
            col,
            message: message.into(),
        }
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.text.get(self.at) {
            if b == b';' {
                while self.text.get(self.at).is_some_and(|&b| b != b'\n') {
                    self.at += 1;
                }
            } else if b.is_ascii_whitespace() || b == b',' {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn at_end(&mut self) -> bool {
        self.skip_space();
        self.at >= self.text.len()
    }

    fn seq(&mut self, close: u8, depth: usize) -> Result<Vec<Edn>, EdnError> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.text.get(self.at) {
                None => return Err(self.error(format!("missing `{}`", close as char))),
                Some(&b) if b == close => {
                    self.at += 1;
                    return Ok(items);
                }
                Some(_) => items.push(self.form(depth + 1)?),
            }
        }
    }

    fn token(&mut self) -> &str {
        let start = self.at;
        while let Some(&b) = self.text.get(self.at) {
            if b.is_ascii_whitespace() || b",()[]{}\";".contains(&b) {
                break;
            }
            self.at += 1;
        }
        std::str::from_utf8(&self.text[start..self.at]).unwrap_or("")
    }

    fn string(&mut self) -> Result<Edn, EdnError> {
        self.at += 1;
        let mut bytes = Vec::new();
        loop {
            match self.text.get(self.at) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(b'\\') => {
                    let escaped = match self.text.get(self.at + 1) {
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        Some(b'r') => b'\r',
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        _ => return Err(self.error("unknown escape in string")),
                    };
                    bytes.push(escaped);
                    self.at += 2;
                }
                Some(&b) => {
                    bytes.push(b);
                    self.at += 1;
                }
            }
        }
        String::from_utf8(bytes)
            .map(Edn::Str)
            .map_err(|_| self.error("string is not UTF-8"))
    }

    fn form(&mut self, depth: usize) -> Result<Edn, EdnError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH}")));
        }
        self.skip_space();
        let Some(&b) = self.text.get(self.at) else {
            return Err(self.error("unexpected end of input"));
        };
        match b {
            b'[' => {
                self.at += 1;
                Ok(Edn::Vector(self.seq(b']', depth)?))
            }
            b'(' => {
                self.at += 1;
                Ok(Edn::List(self.seq(b')', depth)?))
            }
            b'{' => {
                self.at += 1;
                let items = self.seq(b'}', depth)?;
                if items.len() % 2 != 0 {
                    return Err(self.error("a map needs an even number of forms"));
                }
                let mut entries = Vec::with_capacity(items.len() / 2);
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Edn::Map(entries))
            }
            b'#' if self.text.get(self.at + 1) == Some(&b'{') => {
                self.at += 2;
                Ok(Edn::Set(self.seq(b'}', depth)?))
            }
            b'#' => Err(self.error("tagged literals are not supported")),
            b'"' => self.string(),
            b')' | b']' | b'}' => Err(self.error(format!("unexpected `{}`", b as char))),
            _ => {
                let start = self.at;
                let token = self.token().to_string();
                if token.is_empty() {
                    self.at = start + 1;
                    return Err(self.error(format!("unexpected `{}`", b as char)));
                }
                Ok(atom(&token).ok_or_else(|| {
                    self.at = start;
                    self.error(format!("cannot read `{token}`"))
                })?)
            }
        }
    }
}

fn atom(token: &str) -> Option<Edn> {
    match token {
        "nil" => return Some(Edn::Nil),
        "true" => return Some(Edn::Bool(true)),
        "false" => return Some(Edn::Bool(false)),
        _ => {}
    }
    if let Some(name) = token.strip_prefix(':') {
        return (!name.is_empty()).then(|| Edn::kw(name));
    }
    let first = token.as_bytes()[0];
    let numeric = first.is_ascii_digit()
        || (matches!(first, b'-' | b'+')
            && token.len() > 1
            && token.as_bytes()[1].is_ascii_digit());
    if numeric {
        let digits = token.trim_end_matches('N');
        if let Ok(i) = digits.parse::<i64>() {
            return Some(Edn::Int(i));
        }
        return token
            .trim_end_matches('M')
            .parse::<f64>()
            .ok()
            .map(Edn::Float);
    }
    Some(Edn::Symbol(token.to_string()))
}

/// Every top-level form of EDN text.
pub fn parse(text: &str) -> Result<Vec<Edn>, EdnError> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let mut forms = Vec::new();
    while !reader.at_end() {
        forms.push(reader.form(0)?);
    }
    Ok(forms)
}

#[cfg(test)]
mod tests;
