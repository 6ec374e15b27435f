//! The mapping's expression syntax: text with `{...}` placeholders.
//!
//! ```text
//! template := ( text | "{{" | "}}" | "{" expr "}" )*
//! expr     := root access* ( "|" filter )*
//! root     := "state." NAME | "prev." NAME | "picks." NAME | "index" | "action"
//!           | "key" | "value"                      (only inside `each`)
//! access   := "." NAME | "[" INTEGER "]"           (record field or map key; list
//!                                                   element, negative from the end)
//! filter   := "len" | "join(" STRING ")" | "each(" STRING ")"
//! ```
//!
//! `state.x` is variable `x` of the state the step is made for, `prev.x` of the
//! state before it, `picks.c` the nondet pick `c` of the action that led to the
//! state, `index` the state's number, `action` the action's name. A variable name
//! may be written without its module prefix (`x` for `buggy::indices::x`) when only
//! one variable ends so. `each("C{key}={value}")` formats every entry of a map (or
//! element of a list, set or tuple, with its position as `key`) through a template;
//! `join(", ")` joins elements with a separator; `len` counts them.
//!
//! A template that is one placeholder and nothing else gives the value itself
//! (`container: "{picks.c}"` becomes `container: 2`, a number); any other template
//! gives text. As text, lists, sets and tuples join their elements with `,`, maps
//! write `key=value` entries, a sum type's value writes its tag (`None`, or
//! `Some(3)`), booleans `true`/`false`.

use super::itf::{State, Value};
use std::fmt;

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub source: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq)]
struct Expr {
    root: Root,
    path: Vec<Access>,
    filters: Vec<Filter>,
}

#[derive(Clone, Debug, PartialEq)]
enum Root {
    State(String),
    Prev(String),
    Pick(String),
    Index,
    Action,
    Key,
    Value,
}

#[derive(Clone, Debug, PartialEq)]
enum Access {
    Field(String),
    Index(i64),
}

#[derive(Clone, Debug, PartialEq)]
enum Filter {
    Len,
    Join(String),
    Each(Template),
}

/// A syntax error: what is wrong and the character (from 0) where it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub at: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at character {})", self.message, self.at + 1)
    }
}

const ROOTS: &[&str] = &["state", "prev", "picks", "index", "action"];
const FILTERS: &[&str] = &["len", "join", "each"];

impl Template {
    /// Parse `source`. `inside_each`: the template is an `each(..)` argument, where
    /// `key` and `value` name the entry being formatted.
    pub fn parse(source: &str) -> Result<Template, SyntaxError> {
        Self::parse_in(source, false)
    }

    fn parse_in(source: &str, inside_each: bool) -> Result<Template, SyntaxError> {
        let chars: Vec<char> = source.chars().collect();
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '{' if chars.get(i + 1) == Some(&'{') => {
                    text.push('{');
                    i += 2;
                }
                '}' if chars.get(i + 1) == Some(&'}') => {
                    text.push('}');
                    i += 2;
                }
                '}' => {
                    return Err(SyntaxError {
                        at: i,
                        message: "`}` without its `{` (write `}}` for a literal brace)".into(),
                    })
                }
                '{' => {
                    let end = closing_brace(&chars, i)?;
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    let mut p = ExprParser {
                        chars: &chars[..end],
                        pos: i + 1,
                        inside_each,
                    };
                    parts.push(Part::Expr(p.expr()?));
                    i = end + 1;
                }
                c => {
                    text.push(c);
                    i += 1;
                }
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Template {
            source: source.to_string(),
            parts,
        })
    }

    /// Whether the template has any placeholder (a plain text is copied as is).
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// The state variables the template reads (`state.x`, `prev.x`), for checks.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for part in &self.parts {
            if let Part::Expr(e) = part {
                if let Root::State(n) | Root::Prev(n) = &e.root {
                    out.push(n.as_str());
                }
                for f in &e.filters {
                    if let Filter::Each(t) = f {
                        out.extend(t.variables());
                    }
                }
            }
        }
        out
    }

    /// Evaluate: a lone placeholder gives its value, anything else text.
    pub fn eval(&self, scope: &Scope) -> Result<Rendered, EvalError> {
        if let [Part::Expr(e)] = self.parts.as_slice() {
            return Ok(Rendered::Value(e.eval(scope)?));
        }
        Ok(Rendered::Text(self.eval_text(scope)?))
    }

    /// Evaluate to text.
    pub fn eval_text(&self, scope: &Scope) -> Result<String, EvalError> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Expr(e) => out.push_str(&text(&e.eval(scope)?)?),
            }
        }
        Ok(out)
    }
}

/// The `}` that closes the placeholder opened at `open`, skipping quoted strings.
fn closing_brace(chars: &[char], open: usize) -> Result<usize, SyntaxError> {
    let mut i = open + 1;
    let mut quoted = false;
    while i < chars.len() {
        match chars[i] {
            '\\' if quoted => i += 1,
            '"' => quoted = !quoted,
            '}' if !quoted => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Err(SyntaxError {
        at: open,
        message: "`{` without its `}` (write `{{` for a literal brace)".into(),
    })
}

struct ExprParser<'a> {
    chars: &'a [char],
    pos: usize,
    inside_each: bool,
}

impl ExprParser<'_> {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            at: self.pos,
            message: message.into(),
        })
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A name: letters, digits, `_`, and `::` module separators (`m::x`).
    fn name(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.chars[start..self.pos].iter().collect())
    }

    fn expr(&mut self) -> Result<Expr, SyntaxError> {
        let root = self.root()?;
        let mut path = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some('.') => {
                    self.pos += 1;
                    match self.name() {
                        Some(n) => path.push(Access::Field(n)),
                        None => return self.err("a field name after `.`"),
                    }
                }
                Some('[') => {
                    self.pos += 1;
                    path.push(Access::Index(self.integer()?));
                    if !self.eat(']') {
                        return self.err("`]` after the index");
                    }
                }
                _ => break,
            }
        }
        let mut filters = Vec::new();
        while self.eat('|') {
            filters.push(self.filter()?);
        }
        self.skip_ws();
        if self.pos < self.chars.len() {
            return self.err(format!(
                "unexpected `{}`: a placeholder is `{{root.name}}`, then `| filter`s",
                self.chars[self.pos]
            ));
        }
        Ok(Expr {
            root,
            path,
            filters,
        })
    }

    fn root(&mut self) -> Result<Root, SyntaxError> {
        self.skip_ws();
        let at = self.pos;
        let Some(word) = self.name() else {
            return self.err("an empty placeholder: write `{state.NAME}`, `{picks.NAME}`, ...");
        };
        let member = |p: &mut Self, root: &str| -> Result<String, SyntaxError> {
            if p.peek() != Some('.') {
                return p.err(format!("`{root}` needs a name: `{root}.NAME`"));
            }
            p.pos += 1;
            match p.name() {
                Some(n) => Ok(n),
                None => p.err(format!("a name after `{root}.`")),
            }
        };
        match word.as_str() {
            "state" => Ok(Root::State(member(self, "state")?)),
            "prev" => Ok(Root::Prev(member(self, "prev")?)),
            "picks" => Ok(Root::Pick(member(self, "picks")?)),
            "index" => Ok(Root::Index),
            "action" => Ok(Root::Action),
            "key" if self.inside_each => Ok(Root::Key),
            "value" if self.inside_each => Ok(Root::Value),
            "key" | "value" => {
                self.pos = at;
                self.err(format!(
                    "`{word}` names an entry only inside `each(\"...\")`"
                ))
            }
            other => {
                self.pos = at;
                let hint = crate::lang::yaml::nearest(other, ROOTS.iter().copied())
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                self.err(format!(
                    "unknown root `{other}`{hint}; roots: state, prev, picks, index, action"
                ))
            }
        }
    }

    fn integer(&mut self) -> Result<i64, SyntaxError> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        text.parse().or_else(|_| {
            self.pos = start;
            self.err("an integer index")
        })
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.skip_ws();
        if self.peek() != Some('"') {
            return self.err("a double-quoted string");
        }
        self.pos += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return self.err("the string has no closing `\"`"),
                Some('"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c @ ('"' | '\\')) => out.push(c),
                        Some('n') => out.push('\n'),
                        _ => return self.err("escapes are `\\\"`, `\\\\` and `\\n`"),
                    }
                    self.pos += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn filter(&mut self) -> Result<Filter, SyntaxError> {
        self.skip_ws();
        let at = self.pos;
        let Some(word) = self.name() else {
            return self.err("a filter after `|`: len, join(\"SEP\"), each(\"TEMPLATE\")");
        };
        let arg = |p: &mut Self| -> Result<(usize, String), SyntaxError> {
            if !p.eat('(') {
                return p.err(format!("`{word}` takes one string: `{word}(\"...\")`"));
            }
            p.skip_ws();
            let start = p.pos + 1;
            let s = p.string()?;
            if !p.eat(')') {
                return p.err("`)` after the string");
            }
            Ok((start, s))
        };
        match word.as_str() {
            "len" => Ok(Filter::Len),
            "join" => Ok(Filter::Join(arg(self)?.1)),
            "each" => {
                let (start, source) = arg(self)?;
                let inner = Template::parse_in(&source, true).map_err(|e| SyntaxError {
                    // Close enough when the string has no escapes.
                    at: start + e.at,
                    message: format!("in each(\"{source}\"): {}", e.message),
                })?;
                Ok(Filter::Each(inner))
            }
            other => {
                self.pos = at;
                let hint = crate::lang::yaml::nearest(other, FILTERS.iter().copied())
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                self.err(format!(
                    "unknown filter `{other}`{hint}; filters: len, join(\"SEP\"), each(\"TEMPLATE\")"
                ))
            }
        }
    }
}

/// What a template evaluates to.
#[derive(Clone, Debug, PartialEq)]
pub enum Rendered {
    /// A lone placeholder: the value itself.
    Value(Value),
    Text(String),
}

impl Rendered {
    /// As a JSON value for a scenario step: a value keeps its type.
    pub fn to_json(&self) -> Result<serde_json::Value, EvalError> {
        match self {
            Rendered::Value(v) => to_json(v),
            Rendered::Text(t) => Ok(serde_json::Value::String(t.clone())),
        }
    }

    pub fn into_text(self) -> Result<String, EvalError> {
        match self {
            Rendered::Value(v) => text(&v),
            Rendered::Text(t) => Ok(t),
        }
    }
}

/// Everything a template can read.
pub struct Scope<'a> {
    pub state: &'a State,
    pub prev: Option<&'a State>,
    /// The trace's variable names, to resolve short names.
    pub vars: &'a [String],
    /// The action that led to `state`.
    pub action: &'a str,
    entry: Option<(&'a Value, &'a Value)>,
}

impl<'a> Scope<'a> {
    pub fn new(
        state: &'a State,
        prev: Option<&'a State>,
        vars: &'a [String],
        action: &'a str,
    ) -> Self {
        Scope {
            state,
            prev,
            vars,
            action,
            entry: None,
        }
    }
}

/// Why a template could not be evaluated against a trace state.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// The trace has no such variable (`known`: the ones it has).
    MissingVariable { name: String, known: Vec<String> },
    /// A short name that more than one variable ends with.
    AmbiguousVariable { name: String, matches: Vec<String> },
    /// The action made no such pick (`known`: the ones it made).
    MissingPick { name: String, known: Vec<String> },
    /// `prev` at the first state.
    NoPrevious,
    /// The value exists but cannot become what the template asks for.
    Unmappable(String),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::MissingVariable { name, known } => write!(
                f,
                "the trace has no variable `{name}` (variables: {})",
                known.join(", ")
            ),
            EvalError::AmbiguousVariable { name, matches } => write!(
                f,
                "`{name}` could be any of {}: write the full name",
                matches.join(", ")
            ),
            EvalError::MissingPick { name, known } if known.is_empty() => {
                write!(f, "the action made no nondet pick `{name}` (it made none)")
            }
            EvalError::MissingPick { name, known } => write!(
                f,
                "the action made no nondet pick `{name}` (picks: {})",
                known.join(", ")
            ),
            EvalError::NoPrevious => write!(f, "`prev` has no value at the first state"),
            EvalError::Unmappable(why) => write!(f, "unmappable value: {why}"),
        }
    }
}

/// Resolve a variable name: exact, or the one variable whose last `::` segment it is.
pub fn resolve_var<'v>(name: &str, vars: &'v [String]) -> Result<&'v str, EvalError> {
    if let Some(v) = vars.iter().find(|v| *v == name) {
        return Ok(v);
    }
    let suffix = format!("::{name}");
    let matches: Vec<&String> = vars.iter().filter(|v| v.ends_with(&suffix)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(EvalError::MissingVariable {
            name: name.to_string(),
            known: vars.to_vec(),
        }),
        many => Err(EvalError::AmbiguousVariable {
            name: name.to_string(),
            matches: many.iter().map(|s| s.to_string()).collect(),
        }),
    }
}

impl Expr {
    fn eval(&self, scope: &Scope) -> Result<Value, EvalError> {
        let mut value = match &self.root {
            Root::State(name) => var(scope.state, name, scope.vars)?,
            Root::Prev(name) => var(scope.prev.ok_or(EvalError::NoPrevious)?, name, scope.vars)?,
            Root::Pick(name) => {
                scope
                    .state
                    .pick(name)
                    .cloned()
                    .ok_or_else(|| EvalError::MissingPick {
                        name: name.clone(),
                        known: scope.state.picks.iter().map(|(n, _)| n.clone()).collect(),
                    })?
            }
            Root::Index => Value::Int(scope.state.index.into()),
            Root::Action => Value::Str(scope.action.to_string()),
            Root::Key => scope.entry.expect("parsed inside each").0.clone(),
            Root::Value => scope.entry.expect("parsed inside each").1.clone(),
        };
        for access in &self.path {
            value = access.apply(written(value)?)?;
        }
        for filter in &self.filters {
            value = filter.apply(written(value)?, scope)?;
        }
        Ok(value)
    }
}

/// A value the checker wrote out: paths and filters cannot look into one it could not.
fn written(value: Value) -> Result<Value, EvalError> {
    match value {
        Value::Unserializable(what) => Err(unserializable(&what)),
        v @ (Value::Bool(_)
        | Value::Int(_)
        | Value::Str(_)
        | Value::List(_)
        | Value::Set(_)
        | Value::Tup(_)
        | Value::Map(_)
        | Value::Record(_)) => Ok(v),
    }
}

fn unserializable(what: &str) -> EvalError {
    EvalError::Unmappable(format!("the checker could not write this value ({what})"))
}

fn var(state: &State, name: &str, vars: &[String]) -> Result<Value, EvalError> {
    let full = resolve_var(name, vars)?;
    state
        .var(full)
        .cloned()
        .ok_or_else(|| EvalError::MissingVariable {
            name: full.to_string(),
            known: state.vars.iter().map(|(n, _)| n.clone()).collect(),
        })
}

impl Access {
    fn apply(&self, value: Value) -> Result<Value, EvalError> {
        match (self, value) {
            (Access::Field(f), Value::Record(fields)) => fields
                .into_iter()
                .find(|(n, _)| n == f)
                .map(|(_, v)| v)
                .ok_or_else(|| EvalError::Unmappable(format!("the record has no field `{f}`"))),
            (Access::Field(f), Value::Map(entries)) => {
                let found = entries
                    .iter()
                    .position(|(k, _)| text(k).is_ok_and(|t| &t == f));
                match found {
                    Some(i) => Ok(entries.into_iter().nth(i).expect("found").1),
                    None => Err(EvalError::Unmappable(format!("the map has no key `{f}`"))),
                }
            }
            (Access::Index(i), Value::List(items) | Value::Tup(items) | Value::Set(items)) => {
                let len = items.len() as i64;
                let at = if *i < 0 { len + i } else { *i };
                if at < 0 || at >= len {
                    return Err(EvalError::Unmappable(format!(
                        "index {i} is outside a collection of {len}"
                    )));
                }
                Ok(items.into_iter().nth(at as usize).expect("in range"))
            }
            (Access::Index(i), Value::Map(entries)) => entries
                .into_iter()
                .find(|(k, _)| *k == Value::Int((*i).into()))
                .map(|(_, v)| v)
                .ok_or_else(|| EvalError::Unmappable(format!("the map has no key {i}"))),
            (Access::Field(f), other) => Err(EvalError::Unmappable(format!(
                "`.{f}` of {}, which has no fields",
                other.kind_name()
            ))),
            (Access::Index(i), other) => Err(EvalError::Unmappable(format!(
                "`[{i}]` of {}, which has no elements",
                other.kind_name()
            ))),
        }
    }
}

/// The entries of a collection: (key, value) of a map, (position, element) otherwise.
fn entries(value: &Value) -> Option<Vec<(Value, Value)>> {
    match value {
        Value::Map(entries) => Some(entries.clone()),
        Value::List(items) | Value::Set(items) | Value::Tup(items) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i128), v.clone()))
                .collect(),
        ),
        Value::Record(fields) => Some(
            fields
                .iter()
                .map(|(k, v)| (Value::Str(k.clone()), v.clone()))
                .collect(),
        ),
        Value::Bool(_) | Value::Int(_) | Value::Str(_) | Value::Unserializable(_) => None,
    }
}

impl Filter {
    fn name(&self) -> &'static str {
        match self {
            Filter::Len => "len",
            Filter::Join(_) => "join",
            Filter::Each(_) => "each",
        }
    }

    fn apply(&self, value: Value, scope: &Scope) -> Result<Value, EvalError> {
        if let (Filter::Len, Value::Str(s)) = (self, &value) {
            return Ok(Value::Int(s.chars().count() as i128));
        }
        let Some(items) = entries(&value) else {
            return Err(EvalError::Unmappable(format!(
                "`{}` of {}, which is not a collection",
                self.name(),
                value.kind_name()
            )));
        };
        match self {
            Filter::Len => Ok(Value::Int(items.len() as i128)),
            Filter::Join(sep) => {
                let texts: Result<Vec<String>, EvalError> =
                    items.iter().map(|(_, v)| text(v)).collect();
                Ok(Value::Str(texts?.join(sep)))
            }
            Filter::Each(template) => {
                let mut out = Vec::new();
                for (k, v) in &items {
                    let inner = Scope {
                        state: scope.state,
                        prev: scope.prev,
                        vars: scope.vars,
                        action: scope.action,
                        entry: Some((k, v)),
                    };
                    out.push(match template.eval(&inner)? {
                        Rendered::Value(v) => v,
                        Rendered::Text(t) => Value::Str(t),
                    });
                }
                Ok(Value::List(out))
            }
        }
    }
}

/// A value as text (see the module doc).
pub fn text(value: &Value) -> Result<String, EvalError> {
    let join = |items: &[Value]| -> Result<String, EvalError> {
        Ok(items
            .iter()
            .map(text)
            .collect::<Result<Vec<_>, _>>()?
            .join(","))
    };
    match value {
        Value::Bool(b) => Ok(b.to_string()),
        Value::Int(i) => Ok(i.to_string()),
        Value::Str(s) => Ok(s.clone()),
        Value::List(items) | Value::Set(items) | Value::Tup(items) => join(items),
        Value::Map(entries) => Ok(entries
            .iter()
            .map(|(k, v)| Ok(format!("{}={}", text(k)?, text(v)?)))
            .collect::<Result<Vec<_>, EvalError>>()?
            .join(",")),
        Value::Record(fields) => match value.as_variant() {
            Some((tag, Value::Tup(unit))) if unit.is_empty() => Ok(tag.to_string()),
            Some((tag, inner)) => Ok(format!("{tag}({})", text(inner)?)),
            None => Ok(fields
                .iter()
                .map(|(k, v)| Ok(format!("{k}={}", text(v)?)))
                .collect::<Result<Vec<_>, EvalError>>()?
                .join(",")),
        },
        Value::Unserializable(what) => Err(unserializable(what)),
    }
}

/// A value as JSON, keeping its type (for step parameters).
pub fn to_json(value: &Value) -> Result<serde_json::Value, EvalError> {
    use serde_json::Value as J;
    match value {
        Value::Bool(b) => Ok(J::Bool(*b)),
        Value::Int(i) => i64::try_from(*i).map(J::from).map_err(|_| {
            EvalError::Unmappable(format!("{i} does not fit a scenario number (64 bits)"))
        }),
        Value::Str(s) => Ok(J::String(s.clone())),
        Value::List(items) | Value::Set(items) | Value::Tup(items) => Ok(J::Array(
            items.iter().map(to_json).collect::<Result<_, _>>()?,
        )),
        Value::Map(entries) => {
            let mut map = serde_json::Map::new();
            for (k, v) in entries {
                map.insert(text(k)?, to_json(v)?);
            }
            Ok(J::Object(map))
        }
        Value::Record(fields) => {
            let mut map = serde_json::Map::new();
            for (k, v) in fields {
                map.insert(k.clone(), to_json(v)?);
            }
            Ok(J::Object(map))
        }
        Value::Unserializable(what) => Err(unserializable(what)),
    }
}

#[cfg(test)]
mod tests;
