//! Builds the location-annotated [`Node`] tree from the YAML parser's event stream.
//!
//! We drive `granit_parser` (the event parser underneath serde-saphyr, re-exported by it)
//! directly instead of going through serde-saphyr's own deserializer, because the event stream
//! tells us exactly what we need and nothing is lost on the way: the position of every node
//! (block and flow), whether a scalar was quoted (quoted scalars are always strings), tags, and
//! anchors/aliases, which we expand ourselves under our own budgets.

use std::collections::BTreeMap;
use std::num::ParseIntError;

use serde_saphyr::granit_parser::{
    self as gp, ErrorKind, Event, Marker, Parser, ScalarStyle, ScanError, Span, Tag,
};

use super::{Error, Limits, Loc, Node, Value};

/// Parse exactly one YAML document into a tree; see [`super::parse`].
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "saphyr's parser events are not our enum (and non-exhaustive): any other event there is a parser defect reported as one"
)]
pub(super) fn parse(text: &str, limits: &Limits) -> Result<Node, Error> {
    if text.len() > limits.bytes_max {
        let message = format!(
            "file is {} bytes; the limit is {}",
            text.len(),
            limits.bytes_max
        );
        return Err(Error::new(Loc { line: 1, col: 1 }, message));
    }
    // Our depth check counts block and flow collections together, and the parser's own
    // nesting limits count each kind separately, so with the same number the parser can only
    // trip where we would too. It must stay armed: the scanner may read far ahead of the
    // events we see (e.g. `{a: {a: {a: ...`), and its limit then fires first.
    let options = gp::options! {
        emit_comments: false,
        flow_nesting_limit: limits.depth_max,
        block_nesting_limit: limits.depth_max,
    };
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut builder = Builder::new(limits);
    let mut documents = 0usize;
    let mut root: Option<Node> = None;
    while let Some(item) = parser.next_event() {
        let (event, span) = item.map_err(|e| scan_error(&e, limits))?;
        match event {
            Event::StreamEnd => break,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    let message = "a file may hold only one YAML document, but a second one \
                                   starts here";
                    return Err(Error::new(loc_of(&span.start), message));
                }
            }
            Event::Scalar(ref text, ScalarStyle::Plain, 0, None)
                if builder.stack.is_empty() && text == "~" && span.start == span.end =>
            {
                // The parser reports a document with no content (e.g. only `---`) as an
                // implicit, zero-width null. Treat that like a file with no document at all.
            }
            other => {
                if let Some(node) = builder.event(other, &span)? {
                    root = Some(node);
                }
            }
        }
    }
    root.ok_or_else(|| Error::new(Loc { line: 1, col: 1 }, "empty document"))
}

/// Convert the parser's 0-based column into our 1-based [`Loc`].
fn loc_of(marker: &Marker) -> Loc {
    let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Loc {
        line: clamp(marker.line()),
        col: clamp(marker.col()).saturating_add(1),
    }
}

fn scan_error(error: &ScanError, limits: &Limits) -> Error {
    let loc = loc_of(error.marker());
    if matches!(error.kind(), ErrorKind::RecursionLimitExceeded) {
        return depth_error(limits, loc);
    }
    let info = error.info();
    let detail = if info.is_empty() {
        "invalid YAML"
    } else {
        &info
    };
    Error::new(loc, format!("YAML syntax error: {detail}"))
}

fn depth_error(limits: &Limits, loc: Loc) -> Error {
    let message = format!("nesting deeper than {} levels", limits.depth_max);
    Error::new(loc, message)
}

/// A finished anchored node, with what it costs to copy it again at an alias.
struct Anchored {
    node: Node,
    /// Nodes in the subtree (all of them get copied on expansion).
    nodes: usize,
    /// Alias expansions inside the subtree, counted transitively; re-expanding the anchor
    /// repeats all of them, which is what makes "billion laughs" files explode.
    aliases: usize,
    /// Nesting levels of the subtree (0 for a scalar).
    height: usize,
    /// Bytes of scalar text in the subtree (all of it gets copied on expansion).
    bytes: usize,
}

/// Identity of a scalar mapping key, for duplicate detection.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
}

enum Collection {
    Seq(Vec<Node>),
    Map {
        entries: Vec<(Node, Node)>,
        /// A key waiting for its value.
        key: Option<Node>,
        /// Keys seen so far and where, for "first defined at" in duplicate-key errors.
        seen: BTreeMap<KeyId, Loc>,
    },
}

/// A collection that is still open.
struct Frame {
    loc: Loc,
    anchor: usize,
    /// Counter values when the frame opened; the differences at close are the subtree's cost.
    nodes_at_start: usize,
    aliases_at_start: usize,
    bytes_at_start: usize,
    /// Largest height among finished children.
    child_height: usize,
    items: Collection,
}

struct Builder<'l> {
    limits: &'l Limits,
    stack: Vec<Frame>,
    anchors: BTreeMap<usize, Anchored>,
    /// Nodes in the tree so far, including copies made by alias expansion.
    nodes: usize,
    /// Alias expansions so far, counting those inside copied subtrees.
    aliases: usize,
    /// Bytes of scalar text so far, counting copies.
    bytes: usize,
}

impl<'l> Builder<'l> {
    fn new(limits: &'l Limits) -> Self {
        Builder {
            limits,
            stack: Vec::new(),
            anchors: BTreeMap::new(),
            nodes: 0,
            aliases: 0,
            bytes: 0,
        }
    }

    /// Feed one event. Returns the root node once it is complete.
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "saphyr's parser events are not our enum (and non-exhaustive): the rest carry nothing the tree keeps"
    )]
    fn event(&mut self, event: Event<'_>, span: &Span) -> Result<Option<Node>, Error> {
        let loc = loc_of(&span.start);
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.count_nodes(1, loc)?;
                let start = (self.nodes - 1, self.aliases, self.bytes);
                self.count_bytes(text.len(), loc)?;
                let value = scalar_value(&text, style, tag.as_deref(), loc)?;
                self.finish(Node { loc, value }, anchor, start, 0)
            }
            Event::SequenceStart(_, anchor, tag) => {
                check_collection_tag(tag.as_deref(), "seq", loc)?;
                self.open(loc, anchor, Collection::Seq(Vec::new()))?;
                Ok(None)
            }
            Event::MappingStart(_, anchor, tag) => {
                check_collection_tag(tag.as_deref(), "map", loc)?;
                let map = Collection::Map {
                    entries: Vec::new(),
                    key: None,
                    seen: BTreeMap::new(),
                };
                self.open(loc, anchor, map)?;
                Ok(None)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(loc),
            Event::Alias(id) => self.alias(id, loc),
            Event::UnresolvedAlias(name) => Err(Error::new(
                loc,
                format!("alias `*{name}` has no matching anchor"),
            )),
            // Document boundaries, comments and anchor metadata carry no data for us.
            _ => Ok(None),
        }
    }

    fn count_nodes(&mut self, added: usize, loc: Loc) -> Result<(), Error> {
        self.nodes = self.nodes.saturating_add(added);
        if self.nodes > self.limits.nodes_max {
            let message = format!(
                "document has more than {} nodes (values, lists and mappings)",
                self.limits.nodes_max
            );
            return Err(Error::new(loc, message));
        }
        Ok(())
    }

    fn count_bytes(&mut self, added: usize, loc: Loc) -> Result<(), Error> {
        self.bytes = self.bytes.saturating_add(added);
        if self.bytes > self.limits.expanded_bytes_max {
            let message = format!(
                "document holds more than {} bytes of text once its aliases are expanded \
                 (aliases copy what they refer to)",
                self.limits.expanded_bytes_max
            );
            return Err(Error::new(loc, message));
        }
        Ok(())
    }

    fn open(&mut self, loc: Loc, anchor: usize, items: Collection) -> Result<(), Error> {
        if self.stack.len() >= self.limits.depth_max {
            return Err(depth_error(self.limits, loc));
        }
        self.count_nodes(1, loc)?;
        self.stack.push(Frame {
            loc,
            anchor,
            nodes_at_start: self.nodes - 1,
            aliases_at_start: self.aliases,
            bytes_at_start: self.bytes,
            child_height: 0,
            items,
        });
        Ok(())
    }

    fn close(&mut self, end: Loc) -> Result<Option<Node>, Error> {
        let Some(frame) = self.stack.pop() else {
            // The parser never emits an unbalanced end; report rather than panic if it did.
            return Err(Error::new(end, "unbalanced end of a YAML collection"));
        };
        let value = match frame.items {
            Collection::Seq(items) => Value::Seq(items),
            Collection::Map { entries, key, .. } => {
                if let Some(key) = key {
                    // Unreachable with a well-behaved parser (it emits an implicit null value).
                    return Err(Error::new(key.loc, "mapping key without a value"));
                }
                Value::Map(entries)
            }
        };
        let node = Node {
            loc: frame.loc,
            value,
        };
        let height = frame.child_height + 1;
        let start = (
            frame.nodes_at_start,
            frame.aliases_at_start,
            frame.bytes_at_start,
        );
        self.finish(node, frame.anchor, start, height)
    }

    /// Record a finished node under its anchor (if any) and hand it to its parent.
    /// `start` holds the node, alias and byte counters from when the node began.
    fn finish(
        &mut self,
        node: Node,
        anchor: usize,
        start: (usize, usize, usize),
        height: usize,
    ) -> Result<Option<Node>, Error> {
        let (nodes_at_start, aliases_at_start, bytes_at_start) = start;
        if anchor != 0 {
            let anchored = Anchored {
                node: node.clone(),
                nodes: self.nodes - nodes_at_start,
                aliases: self.aliases - aliases_at_start,
                height,
                bytes: self.bytes - bytes_at_start,
            };
            self.anchors.insert(anchor, anchored);
        }
        self.attach(node, height)
    }

    /// Expand `*alias` by copying the anchored node, after checking every budget so that a
    /// malicious file is rejected before any large copy is made.
    fn alias(&mut self, id: usize, loc: Loc) -> Result<Option<Node>, Error> {
        let Some(anchored) = self.anchors.get(&id) else {
            // The parser resolves names, so the only way to get here is an alias to a
            // collection that is still open, e.g. `&a [*a]`.
            return Err(Error::new(loc, "alias refers to its own enclosing anchor"));
        };
        let expansions = self.aliases.saturating_add(1 + anchored.aliases);
        if expansions > self.limits.alias_expansions_max {
            let message = format!(
                "alias expansion limit reached (a 'billion laughs' file?): more than {} alias \
                 expansions",
                self.limits.alias_expansions_max
            );
            return Err(Error::new(loc, message));
        }
        if self.stack.len() + anchored.height > self.limits.depth_max {
            return Err(depth_error(self.limits, loc));
        }
        let (nodes, height, bytes) = (anchored.nodes, anchored.height, anchored.bytes);
        // Every budget is checked before the copy is made.
        self.aliases = expansions;
        self.count_nodes(nodes, loc)?;
        self.count_bytes(bytes, loc)?;
        let mut node = self.anchors[&id].node.clone();
        // Errors about the value as a whole should point at the alias that put it here;
        // nested nodes keep pointing into the anchored definition, where their text is.
        node.loc = loc;
        self.attach(node, height)
    }

    /// Add a finished node to the open collection, or return it if it is the root.
    fn attach(&mut self, node: Node, height: usize) -> Result<Option<Node>, Error> {
        let Some(frame) = self.stack.last_mut() else {
            return Ok(Some(node));
        };
        frame.child_height = frame.child_height.max(height);
        match &mut frame.items {
            Collection::Seq(items) => items.push(node),
            Collection::Map { entries, key, seen } => match key.take() {
                Some(k) => entries.push((k, node)),
                None => {
                    check_new_key(&node, seen)?;
                    *key = Some(node);
                }
            },
        }
        Ok(None)
    }
}

/// Keys must be scalars (serde and JSON need plain names) and unique.
fn check_new_key(key: &Node, seen: &mut BTreeMap<KeyId, Loc>) -> Result<(), Error> {
    let id = match &key.value {
        Value::Null => KeyId::Null,
        Value::Bool(b) => KeyId::Bool(*b),
        Value::Int(i) => KeyId::Int(*i),
        Value::Float(f) => KeyId::Float(f.to_bits()),
        Value::Str(s) => KeyId::Str(s.clone()),
        Value::Seq(_) | Value::Map(_) => {
            let message = format!(
                "mapping keys must be plain values, but this key is {}",
                key.kind_name()
            );
            return Err(Error::new(key.loc, message));
        }
    };
    if let Some(first) = seen.get(&id) {
        let name = super::scalar_text(&key.value).unwrap_or_default();
        let message = format!("duplicate key `{name}` (first defined at {first})");
        return Err(Error::new(key.loc, message));
    }
    seen.insert(id, key.loc);
    Ok(())
}

/// Whether `tag` is the non-specific `!` tag, which only forces "not a plain scalar".
fn is_non_specific(tag: &Tag) -> bool {
    tag.handle().is_empty() && tag.suffix() == "!"
}

fn unsupported_tag(tag: &Tag, loc: Loc) -> Error {
    let message = format!(
        "unsupported YAML tag `{}`; only the standard `!!str`, `!!int`, `!!float`, `!!bool`, \
         `!!null`, `!!seq` and `!!map` are allowed",
        tag.original()
    );
    Error::new(loc, message)
}

fn check_collection_tag(tag: Option<&Tag>, kind: &str, loc: Loc) -> Result<(), Error> {
    match tag {
        None => Ok(()),
        Some(t) if is_non_specific(t) || t.core_suffix() == Some(kind) => Ok(()),
        Some(t) => Err(unsupported_tag(t, loc)),
    }
}

/// Resolve a scalar per the YAML 1.2 core schema; quoted and block scalars are strings.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "saphyr's scalar styles are not our enum (and non-exhaustive): every quoted or block scalar is a string"
)]
fn scalar_value(
    text: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
    loc: Loc,
) -> Result<Value, Error> {
    let Some(tag) = tag else {
        return match style {
            ScalarStyle::Plain => resolve_plain(text, loc),
            _ => Ok(Value::Str(text.to_string())),
        };
    };
    if is_non_specific(tag) {
        return Ok(Value::Str(text.to_string()));
    }
    let Some(kind) = tag.core_suffix() else {
        return Err(unsupported_tag(tag, loc));
    };
    if kind == "str" {
        return Ok(Value::Str(text.to_string()));
    }
    // `!!int "5"` and friends: resolve the text as if plain, then insist on the tagged kind.
    let value = resolve_plain(text, loc)?;
    match (kind, value) {
        ("null", v @ Value::Null) | ("bool", v @ Value::Bool(_)) | ("int", v @ Value::Int(_)) => {
            Ok(v)
        }
        ("float", v @ Value::Float(_)) => Ok(v),
        #[allow(
            clippy::cast_precision_loss,
            reason = "an explicit `!!float 5` asks for exactly this"
        )]
        ("float", Value::Int(i)) => Ok(Value::Float(i as f64)),
        _ => Err(Error::new(
            loc,
            format!("`{}` does not fit the tag `{}`", text, tag.original()),
        )),
    }
}

/// YAML 1.2 core schema resolution of a plain (unquoted) scalar.
fn resolve_plain(text: &str, loc: Loc) -> Result<Value, Error> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => return Ok(Value::Float(f64::NAN)),
        _ => {}
    }
    if let Some(int) = parse_int(text) {
        return int.map(Value::Int).map_err(|_| {
            let message = format!(
                "integer `{text}` does not fit in 64 bits (the range is {} to {})",
                i64::MIN,
                i64::MAX
            );
            Error::new(loc, message)
        });
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        let sign = if text.starts_with('-') { -1.0 } else { 1.0 };
        return Ok(Value::Float(sign * f64::INFINITY));
    }
    if is_float_syntax(text) {
        if let Ok(f) = text.parse::<f64>() {
            return Ok(Value::Float(f));
        }
    }
    Ok(Value::Str(text.to_string()))
}

/// `None` if `text` is not integer syntax; `Some(Err(_))` if it is but overflows i64.
fn parse_int(text: &str) -> Option<Result<i64, ParseIntError>> {
    let all = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(hex) = text.strip_prefix("0x") {
        return all(hex, 16).then(|| i64::from_str_radix(hex, 16));
    }
    if let Some(oct) = text.strip_prefix("0o") {
        return all(oct, 8).then(|| i64::from_str_radix(oct, 8));
    }
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    // i64::from_str accepts a leading '+', like the core schema.
    all(digits, 10).then(|| text.parse::<i64>())
}

/// Core schema float: `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`.
/// Checked by hand because Rust's float parser also accepts words like `inf` and `nan`.
fn is_float_syntax(text: &str) -> bool {
    let bytes = text.strip_prefix(['+', '-']).unwrap_or(text).as_bytes();
    let digits_from = |i: usize| {
        bytes[i.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int_digits = digits_from(0);
    let mut i = int_digits;
    let mut frac_digits = 0;
    if bytes.get(i) == Some(&b'.') {
        frac_digits = digits_from(i + 1);
        i += 1 + frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = digits_from(i);
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == bytes.len()
}
