//! EDN, the format Jepsen's tools read: a writer for the exports `elle-cli` and
//! Knossos take, and a reader so published Jepsen histories can be checked here.
//!
//! The shapes follow Jepsen's documented history format (jepsen-io/history's
//! README, elle-cli's README): one map per event with `:type` (`:invoke`, `:ok`,
//! `:fail`, `:info`), `:f`, `:value`, `:process`, `:time` (ns) and `:index`
//! (dense, ascending). A process that crashed (`:info`) never invokes again in
//! Jepsen, so the exports give a client's later ops a fresh process number.

use super::event::{Event, EventType};
use super::op::text;
use super::record::{History, HistoryError};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

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

// ---- export ----

/// Which of Jepsen's checkers the export is shaped for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdnShape {
    /// Every op as it is: `:f :<f>`, `:value` the arguments map on the invoke and
    /// the result on the completion.
    Generic,
    /// Knossos's register (`:read`, `:write`, `:cas`): `put`/`write` become
    /// `:write v`, `get`/`read` become `:read` (`nil` on the invoke and for an
    /// absent key: Knossos accepts a `nil` read as any value), `delete` becomes
    /// `:write nil`, `cas` keeps `[old new]`. `Some(key)`: only that key's ops,
    /// with plain values (Knossos checks one register). `None`: every key, the
    /// value as a `[key value]` tuple, the shape of `jepsen.independent`.
    Register { key: Option<String> },
    /// Elle's list-append: `append` becomes `:f :txn :value [[:append k v]]`, a
    /// read `[[:r k nil]]` on the invoke and `[[:r k [..]]]` on the completion.
    ListAppend,
}

/// Register ops by Jepsen's name.
fn register_f(f: &str) -> Option<&'static str> {
    match f {
        "read" | "get" => Some("read"),
        "write" | "put" | "delete" => Some("write"),
        "cas" => Some("cas"),
        _ => None,
    }
}

fn key_of(args: &Value) -> Option<String> {
    args.get("key").filter(|k| !k.is_null()).map(text)
}

fn key_edn(key: &str) -> Edn {
    match key.parse::<i64>() {
        Ok(i) => Edn::Int(i),
        Err(_) => Edn::Str(key.to_string()),
    }
}

/// One exported event's `:f` and `:value`, or `None` when the shape leaves it out.
fn shaped(shape: &EdnShape, event: &Event, invoke_args: &Value) -> Option<(Edn, Edn)> {
    let value_arg = || Edn::from_json(invoke_args.get("value").unwrap_or(&Value::Null));
    match shape {
        EdnShape::Generic => Some((Edn::kw(&event.f), Edn::from_json(&event.value))),
        EdnShape::Register { key } => {
            let f = register_f(&event.f)?;
            let op_key = key_of(invoke_args);
            if key.is_some() && key != &op_key {
                return None;
            }
            let plain = match (f, event.kind) {
                ("read", EventType::Invoke) => Edn::Nil,
                ("read", EventType::Ok) if event.error.is_some() => Edn::Nil,
                ("read", EventType::Ok) => Edn::from_json(&event.value),
                ("read", _) => Edn::Nil,
                ("write", _) if event.f == "delete" => Edn::Nil,
                _ => value_arg(),
            };
            let value = match (key, op_key) {
                (None, Some(k)) => Edn::Vector(vec![key_edn(&k), plain]),
                _ => plain,
            };
            Some((Edn::kw(f), value))
        }
        EdnShape::ListAppend => {
            let k = key_edn(&key_of(invoke_args)?);
            let micro = match event.f.as_str() {
                "append" => vec![Edn::kw("append"), k, value_arg()],
                "read" | "get" => {
                    let read = match event.kind {
                        EventType::Ok if event.error.is_some() => Edn::Vector(vec![]),
                        EventType::Ok => match Edn::from_json(&event.value) {
                            Edn::Nil => Edn::Vector(vec![]),
                            list @ (Edn::Bool(_)
                            | Edn::Int(_)
                            | Edn::Float(_)
                            | Edn::Str(_)
                            | Edn::Keyword(_)
                            | Edn::Symbol(_)
                            | Edn::Vector(_)
                            | Edn::List(_)
                            | Edn::Set(_)
                            | Edn::Map(_)) => list,
                        },
                        EventType::Invoke | EventType::Fail | EventType::Info => Edn::Nil,
                    };
                    vec![Edn::kw("r"), k, read]
                }
                _ => return None,
            };
            Some((Edn::kw("txn"), Edn::Vector(vec![Edn::Vector(micro)])))
        }
    }
}

/// The ops a shape has no form for (or that its key filter leaves out), by
/// their `:f`: what an export in that shape does not carry.
pub fn left_out(history: &History, shape: &EdnShape) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for op in history.ops() {
        let invoke = Event {
            index: op.invoke.index,
            time_ns: 0,
            process: op.process,
            kind: EventType::Invoke,
            f: op.f.clone(),
            value: op.args.clone(),
            error: None,
            node: None,
        };
        if shaped(shape, &invoke, &op.args).is_none() {
            *out.entry(op.f.clone()).or_default() += 1;
        }
    }
    out
}

/// The history as EDN, one event map per line, in the given shape.
pub fn to_edn(history: &History, shape: &EdnShape) -> String {
    let stride = history.ops().iter().map(|o| o.process).max().unwrap_or(0) + 1;
    // Jepsen processes never invoke again after a crash: a client's op after an
    // indeterminate one runs as process + k * stride.
    let mut generation: BTreeMap<u64, u64> = BTreeMap::new();
    let mut process_of: Vec<u64> = Vec::with_capacity(history.len());
    for op in history.ops() {
        let g = generation.entry(op.process).or_insert(0);
        process_of.push(op.process + *g * stride);
        if op.is_indeterminate() {
            *g += 1;
        }
    }
    let mut by_index: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, op) in history.ops().iter().enumerate() {
        by_index.insert(op.invoke.index, i);
        if let Some(c) = &op.completion {
            by_index.insert(c.at.index, i);
        }
    }
    let mut out = String::new();
    let mut index = 0u64;
    for event in history.events() {
        let op_id = by_index[&event.index];
        let op = &history.ops()[op_id];
        let Some((f, value)) = shaped(shape, &event, &op.args) else {
            continue;
        };
        let mut entries = vec![
            (Edn::kw("type"), Edn::kw(event.kind.name())),
            (Edn::kw("f"), f),
            (Edn::kw("value"), value),
            (Edn::kw("process"), Edn::Int(process_of[op_id] as i64)),
            (Edn::kw("time"), Edn::Int(event.time_ns as i64)),
            (Edn::kw("index"), Edn::Int(index as i64)),
        ];
        if let Some(e) = &event.error {
            entries.push((Edn::kw("error"), Edn::Str(e.clone())));
        }
        if let Some(n) = &event.node {
            entries.push((Edn::kw("node"), Edn::Str(n.clone())));
        }
        index += 1;
        let _ = writeln!(out, "{}", Edn::Map(entries));
    }
    out
}

/// Check EDN text against the history shape Jepsen's tools read (jepsen-io/history's
/// README; elle-cli's README for list-append): every event a map with `:type`
/// one of `:invoke`/`:ok`/`:fail`/`:info`, a keyword `:f`, an integer
/// `:process`, `:time` in ns and `:index` dense from 0; each process
/// single-threaded, never invoking again after an `:info`; for
/// [`EdnShape::ListAppend`], `:f :txn` and `:value` a vector of
/// `[:append k v]` / `[:r k nil-or-list]` micro-ops; for [`EdnShape::Register`],
/// `:f` one of `:read`/`:write`/`:cas`. Returns the number of events.
pub fn validate_jepsen(text: &str, shape: &EdnShape) -> Result<usize, String> {
    let forms = parse(text).map_err(|e| e.to_string())?;
    let mut open: BTreeMap<i64, bool> = BTreeMap::new();
    let mut crashed: BTreeMap<i64, bool> = BTreeMap::new();
    let mut last_time = 0i64;
    for (i, form) in forms.iter().enumerate() {
        let at = |m: String| format!("event {i}: {m}: {form}");
        let Edn::Map(entries) = form else {
            return Err(at("not a map".into()));
        };
        for (k, _) in entries {
            match k {
                Edn::Keyword(k)
                    if [
                        "type", "f", "value", "process", "time", "index", "error", "node",
                    ]
                    .contains(&k.as_str()) => {}
                other @ (Edn::Nil
                | Edn::Bool(_)
                | Edn::Int(_)
                | Edn::Float(_)
                | Edn::Str(_)
                | Edn::Keyword(_)
                | Edn::Symbol(_)
                | Edn::Vector(_)
                | Edn::List(_)
                | Edn::Set(_)
                | Edn::Map(_)) => return Err(at(format!("unexpected key {other}"))),
            }
        }
        let kind = match form.get("type") {
            Some(Edn::Keyword(k)) if ["invoke", "ok", "fail", "info"].contains(&k.as_str()) => {
                k.as_str()
            }
            _ => return Err(at("`:type` is not :invoke, :ok, :fail or :info".into())),
        };
        let Some(Edn::Keyword(f)) = form.get("f") else {
            return Err(at("`:f` is not a keyword".into()));
        };
        let Some(Edn::Int(process)) = form.get("process") else {
            return Err(at("`:process` is not an integer".into()));
        };
        match form.get("index") {
            Some(Edn::Int(index)) if *index == i as i64 => {}
            _ => return Err(at(format!("`:index` is not {i}"))),
        }
        match form.get("time") {
            Some(Edn::Int(t)) if *t >= last_time => last_time = *t,
            _ => return Err(at("`:time` is not an ascending integer".into())),
        }
        if form.get("value").is_none() {
            return Err(at("no `:value`".into()));
        }
        if kind == "invoke" {
            if crashed.contains_key(process) {
                return Err(at(format!("process {process} invokes after an :info")));
            }
            if open.insert(*process, true).is_some() {
                return Err(at(format!(
                    "process {process} invokes with an op outstanding"
                )));
            }
        } else {
            if open.remove(process).is_none() {
                return Err(at(format!(
                    "process {process} completes with nothing outstanding"
                )));
            }
            if kind == "info" {
                crashed.insert(*process, true);
            }
        }
        match shape {
            EdnShape::Generic => {}
            EdnShape::Register { .. } => {
                if !["read", "write", "cas"].contains(&f.as_str()) {
                    return Err(at(format!("`:f :{f}` is not a register op")));
                }
            }
            EdnShape::ListAppend => {
                if f != "txn" {
                    return Err(at("`:f` is not :txn".into()));
                }
                let Some(Edn::Vector(micro)) = form.get("value") else {
                    return Err(at("`:value` is not a vector of micro-ops".into()));
                };
                for m in micro {
                    let ok = match m {
                        Edn::Vector(parts) => match parts.as_slice() {
                            [Edn::Keyword(a), _, v] if a == "append" => !matches!(v, Edn::Nil),
                            [Edn::Keyword(r), _, Edn::Nil] if r == "r" => true,
                            [Edn::Keyword(r), _, Edn::Vector(_)] if r == "r" => kind != "invoke",
                            _ => false,
                        },
                        Edn::Nil
                        | Edn::Bool(_)
                        | Edn::Int(_)
                        | Edn::Float(_)
                        | Edn::Str(_)
                        | Edn::Keyword(_)
                        | Edn::Symbol(_)
                        | Edn::List(_)
                        | Edn::Set(_)
                        | Edn::Map(_) => false,
                    };
                    if !ok {
                        return Err(at(format!(
                            "{m} is not an [:append k v] or [:r k ...] micro-op"
                        )));
                    }
                }
            }
        }
    }
    Ok(forms.len())
}

// ---- reader ----

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

/// Why a Jepsen history could not be read.
#[derive(Debug)]
pub enum ReadError {
    Edn(EdnError),
    /// The op at this position (0-based) is not a usable op map.
    Op(usize, String),
    History(HistoryError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Edn(e) => write!(f, "{e}"),
            ReadError::Op(i, m) => write!(f, "op {i}: {m}"),
            ReadError::History(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// A Jepsen history (a sequence of op maps, or one vector or list of them) as a
/// [`History`]. Nemesis ops (non-integer `:process`) are left out. An invoke's
/// `:value` becomes the argument `value` (and a `:key`, as in Porcupine's kv
/// histories, the argument `key`); a completion's `:value` is its result.
/// Missing `:index` and `:time` are taken from the op's position.
pub fn read_jepsen(text: &str) -> Result<History, ReadError> {
    let mut forms = parse(text).map_err(ReadError::Edn)?;
    if forms.len() == 1 && matches!(forms[0], Edn::Vector(_) | Edn::List(_)) {
        forms = match forms.pop() {
            Some(Edn::Vector(items)) | Some(Edn::List(items)) => items,
            _ => unreachable!("matched above"),
        };
    }
    let mut events = Vec::with_capacity(forms.len());
    for (i, form) in forms.iter().enumerate() {
        if !matches!(form, Edn::Map(_)) {
            return Err(ReadError::Op(i, format!("expected an op map, got {form}")));
        }
        let process = match form.get("process") {
            Some(Edn::Int(p)) if *p >= 0 => *p as u64,
            Some(Edn::Int(_)) => return Err(ReadError::Op(i, "negative :process".into())),
            Some(_) => continue, // the nemesis
            None => return Err(ReadError::Op(i, "no :process".into())),
        };
        let kind = match form.get("type") {
            Some(Edn::Keyword(k)) => match k.as_str() {
                "invoke" => EventType::Invoke,
                "ok" => EventType::Ok,
                "fail" => EventType::Fail,
                "info" => EventType::Info,
                other => return Err(ReadError::Op(i, format!("unknown :type :{other}"))),
            },
            _ => return Err(ReadError::Op(i, "no :type keyword".into())),
        };
        let f = match form.get("f") {
            Some(Edn::Keyword(k)) | Some(Edn::Str(k)) | Some(Edn::Symbol(k)) => k.clone(),
            Some(other) => other.to_string(),
            None => return Err(ReadError::Op(i, "no :f".into())),
        };
        let int = |name: &str| match form.get(name) {
            Some(Edn::Int(v)) if *v >= 0 => Ok(Some(*v as u64)),
            None => Ok(None),
            Some(other) => Err(ReadError::Op(i, format!(":{name} is {other}, not a count"))),
        };
        let index = int("index")?.unwrap_or(i as u64);
        let time_ns = int("time")?.unwrap_or(i as u64);
        let raw = form.get("value").map(Edn::to_json).unwrap_or(Value::Null);
        let value = match kind {
            EventType::Invoke => {
                let mut args = Map::new();
                if let Some(key) = form.get("key") {
                    args.insert("key".into(), key.to_json());
                }
                if !raw.is_null() {
                    args.insert("value".into(), raw);
                }
                Value::Object(args)
            }
            EventType::Ok | EventType::Fail | EventType::Info => raw,
        };
        let error = form.get("error").map(|e| match e {
            Edn::Str(s) | Edn::Keyword(s) => s.clone(),
            other @ (Edn::Nil
            | Edn::Bool(_)
            | Edn::Int(_)
            | Edn::Float(_)
            | Edn::Symbol(_)
            | Edn::Vector(_)
            | Edn::List(_)
            | Edn::Set(_)
            | Edn::Map(_)) => other.to_string(),
        });
        events.push(Event {
            index,
            time_ns,
            process,
            kind,
            f,
            value,
            error,
            node: None,
        });
    }
    History::from_events(events).map_err(ReadError::History)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::CompletionKind;
    use serde_json::{json, Value};

    #[test]
    fn writes_and_reads_back_edn_values() {
        let value = Edn::Map(vec![
            (Edn::kw("type"), Edn::kw("ok")),
            (
                Edn::kw("value"),
                Edn::Vector(vec![Edn::Int(-3), Edn::Str("a \"b\"\n".into()), Edn::Nil]),
            ),
            (Edn::kw("set"), Edn::Set(vec![Edn::Bool(true)])),
            (Edn::kw("x"), Edn::Float(1.5)),
        ]);
        let text = value.to_string();
        assert_eq!(
            text,
            "{:type :ok, :value [-3 \"a \\\"b\\\"\\n\" nil], :set #{true}, :x 1.5}"
        );
        assert_eq!(parse(&text).unwrap(), vec![value]);
    }

    fn small_history() -> History {
        let mut h = History::new();
        let a = h
            .invoke(
                0,
                "append",
                json!({"key": "x", "value": 1}),
                Some("n1".into()),
                10,
            )
            .unwrap();
        let r = h.invoke(1, "get", json!({"key": "x"}), None, 11).unwrap();
        h.complete(a, CompletionKind::Ok, Value::Null, None, 12)
            .unwrap();
        h.complete(r, CompletionKind::Ok, json!([1]), None, 13)
            .unwrap();
        let lost = h
            .invoke(0, "append", json!({"key": "x", "value": 2}), None, 14)
            .unwrap();
        h.complete(
            lost,
            CompletionKind::Info,
            Value::Null,
            Some("timeout".into()),
            15,
        )
        .unwrap();
        let z = h
            .invoke(0, "append", json!({"key": "z", "value": 3}), None, 15)
            .unwrap();
        h.complete(z, CompletionKind::Ok, Value::Null, None, 15)
            .unwrap();
        let w = h
            .invoke(0, "put", json!({"key": "y", "value": "v"}), None, 16)
            .unwrap();
        h.complete(w, CompletionKind::Ok, Value::Null, None, 17)
            .unwrap();
        let g = h.invoke(1, "get", json!({"key": "y"}), None, 18).unwrap();
        h.complete(
            g,
            CompletionKind::Ok,
            Value::Null,
            Some("not found".into()),
            19,
        )
        .unwrap();
        h
    }

    #[test]
    fn list_append_export_has_the_shape_elle_reads() {
        let h = small_history();
        let text = to_edn(&h, &EdnShape::ListAppend);
        assert_eq!(validate_jepsen(&text, &EdnShape::ListAppend), Ok(10));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "{:type :invoke, :f :txn, :value [[:append \"x\" 1]], :process 0, :time 10, :index 0, :node \"n1\"}"
        );
        assert_eq!(
            lines[3],
            "{:type :ok, :f :txn, :value [[:r \"x\" [1]]], :process 1, :time 13, :index 3}"
        );
        // After its :info, client 0's next op runs as a fresh process (0 + 2).
        assert!(
            lines[5].contains(":type :info") && lines[5].contains(":process 0"),
            "{}",
            lines[5]
        );
        assert!(
            lines[6].contains(":process 2") && lines[6].contains("[:append \"z\" 3]"),
            "{}",
            lines[6]
        );
        assert!(lines[8].contains("[:r \"y\" nil]"), "{}", lines[8]);
        assert!(
            lines[9].contains("[:r \"y\" []]"),
            "absent reads as empty: {}",
            lines[9]
        );
    }

    #[test]
    fn register_export_has_the_shape_knossos_reads() {
        let h = small_history();
        let one = to_edn(
            &h,
            &EdnShape::Register {
                key: Some("y".into()),
            },
        );
        assert_eq!(
            validate_jepsen(&one, &EdnShape::Register { key: None }),
            Ok(4)
        );
        assert!(
            one.starts_with(
                "{:type :invoke, :f :write, :value \"v\", :process 2, :time 16, :index 0}"
            ),
            "{one}"
        );
        assert!(one.contains("{:type :ok, :f :read, :value nil, :process 1, :time 19, :index 3, :error \"not found\"}"), "{one}");
        let all = to_edn(&h, &EdnShape::Register { key: None });
        assert!(all.contains(":value [\"y\" \"v\"]"), "{all}");
        let generic = to_edn(&h, &EdnShape::Generic);
        assert_eq!(validate_jepsen(&generic, &EdnShape::Generic), Ok(12));
        assert!(
            generic.contains(":f :append, :value {:key \"x\", :value 1}"),
            "{generic}"
        );
    }

    #[test]
    fn the_shape_check_can_fail() {
        let bad = [
            "{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0, :time 0, :index 1}",
            "{:type :begin, :f :txn, :value [], :process 0, :time 0, :index 0}",
            "{:type :ok, :f :txn, :value [], :process 0, :time 0, :index 0}",
            "{:type :invoke, :f :txn, :value [[:w 1 2]], :process 0, :time 0, :index 0}",
            "{:type :invoke, :f :txn, :value [[:r 1 [2]]], :process 0, :time 0, :index 0}",
            "{:type :invoke, :f :txn, :value [], :process 0, :time 0, :index 0, :extra 1}",
            "{:type :invoke, :f :txn, :value [], :process 0, :time 0, :index 0}\n\
             {:type :info, :f :txn, :value [], :process 0, :time 1, :index 1}\n\
             {:type :invoke, :f :txn, :value [], :process 0, :time 2, :index 2}",
        ];
        for text in bad {
            assert!(
                validate_jepsen(text, &EdnShape::ListAppend).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn reader_errors_name_line_and_column() {
        let e = parse("{:a 1}\n  {:b").unwrap_err();
        assert_eq!((e.line, e.col), (2, 6), "{e}");
        let e = parse("{:a}").unwrap_err();
        assert!(e.message.contains("even"), "{e}");
        let deep = "[".repeat(MAX_DEPTH + 5);
        assert!(parse(&deep).unwrap_err().message.contains("deeper"));
        assert!(parse("#inst \"2020\"").is_err());
    }

    #[test]
    fn reads_a_knossos_style_history_with_comments_and_nemesis() {
        let text = "[{:process 0, :type :invoke, :f :write, :value 1}\n\
                    ; a comment\n\
                    {:process :nemesis, :type :info, :f :start}\n\
                    {:process 0, :type :ok, :f :write, :value 1}\n\
                    {:process 1, :type :invoke, :f :read, :value nil}\n\
                    {:process 1, :type :info, :f :read, :value nil, :error :timeout}]";
        let h = read_jepsen(text).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h.ops()[0].args, json!({"value": 1}));
        assert_eq!(
            h.ops()[1].completion.as_ref().unwrap().kind,
            CompletionKind::Info
        );
        assert_eq!(
            h.ops()[1].completion.as_ref().unwrap().error.as_deref(),
            Some("timeout")
        );
        assert!(matches!(
            read_jepsen("[{:type :ok}]"),
            Err(ReadError::Op(0, _))
        ));
    }
}
