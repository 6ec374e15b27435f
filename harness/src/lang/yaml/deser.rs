//! A serde `Deserializer` over the [`Node`] tree.
//!
//! Location strategy: serde's derived code creates most errors through `de::Error` methods
//! with no idea where they happen, so those start out "unlocated" (`Loc` 0:0). Every
//! `deserialize_*` call on a node stamps its own location onto an unlocated error passing
//! through it. Since the innermost node an error passes is the first to stamp, the error ends
//! up pointing at the node where it arose: the value for a type error, the key for an unknown
//! field (the key is deserialized as an identifier), the mapping for a missing field (the
//! struct visitor reports it after reading the whole mapping).

use std::fmt::{Display, Write as _};

use serde::de::{self, value::BorrowedStrDeserializer, DeserializeSeed, IntoDeserializer, Visitor};

use super::{nearest, scalar_text, Error, Loc, Node, Value, SPANNED_NAME};

impl Error {
    /// Fill in the location unless an inner node already did.
    pub(super) fn or_at(mut self, loc: Loc) -> Self {
        if self.loc == Loc::default() {
            self.loc = loc;
        }
        self
    }
}

fn unlocated(message: impl Into<String>) -> Error {
    Error::new(Loc::default(), message)
}

/// "`a`, `b`, `c`" for messages that list the valid names.
fn list_names(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(out, "{sep}`{name}`");
    }
    out
}

/// "unknown field `kye`; did you mean `key`? expected one of `key`, `value`".
fn unknown_name(what: &str, name: &str, expected: &'static [&'static str]) -> Error {
    let mut message = format!("unknown {what} `{name}`;");
    if let Some(suggestion) = nearest(name, expected.iter().copied()) {
        let _ = write!(
            message,
            " {}",
            crate::base::text::did_you_mean(name, suggestion)
        );
    }
    if expected.is_empty() {
        let _ = write!(message, " no {what}s are allowed here");
    } else {
        let _ = write!(message, " expected one of {}", list_names(expected));
    }
    unlocated(message)
}

impl de::Error for Error {
    fn custom<T: Display>(msg: T) -> Self {
        unlocated(msg.to_string())
    }

    fn invalid_type(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        unlocated(format!("expected {exp}, found {unexp}"))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        unknown_name("field", field, expected)
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        unknown_name("variant", variant, expected)
    }

    fn missing_field(field: &'static str) -> Self {
        unlocated(format!("missing required field `{field}`"))
    }
}

/// "expected an integer, found a string", with a hint for the common quoted-number mistake.
fn type_error(node: &Node, expected: &str) -> Error {
    let mut message = format!("expected {expected}, found {}", node.kind_name());
    if let Value::Str(s) = &node.value {
        // Only digit-like text: plain `inf`/`nan` are strings too but were never quoted.
        let numeric = s
            .trim()
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
        if numeric && s.trim().parse::<f64>().is_ok() {
            let _ = write!(
                message,
                " (\"{s}\" is quoted; remove the quotes for a number)"
            );
        }
    }
    Error::new(node.loc, message)
}

impl Node {
    fn locate<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        result.map_err(|e| e.or_at(self.loc))
    }

    fn visit_integer<'de, V: Visitor<'de>>(&'de self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Int(i) => match u64::try_from(i) {
                Ok(u) => visitor.visit_u64(u),
                Err(_) => visitor.visit_i64(i),
            },
            Value::Null
            | Value::Bool(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => Err(type_error(self, "an integer")),
        }
    }

    fn visit_float<'de, V: Visitor<'de>>(&'de self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Float(f) => visitor.visit_f64(f),
            // `timeout: 3` for an f64 field is fine; the visitor converts.
            Value::Int(i) => visitor.visit_i64(i),
            Value::Null | Value::Bool(_) | Value::Str(_) | Value::Seq(_) | Value::Map(_) => {
                Err(type_error(self, "a number"))
            }
        }
    }

    /// Strings accept any scalar as its text: YAML users write `value: 1` for string fields.
    fn visit_text<'de, V: Visitor<'de>>(&'de self, visitor: V) -> Result<V::Value, Error> {
        match &self.value {
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
                visitor.visit_string(scalar_text(&self.value).unwrap_or_default())
            }
            Value::Null | Value::Seq(_) | Value::Map(_) => Err(type_error(self, "a string")),
        }
    }

    fn visit_items<'de, V: Visitor<'de>>(&'de self, visitor: V) -> Result<V::Value, Error> {
        let Value::Seq(items) = &self.value else {
            return Err(type_error(self, "a sequence"));
        };
        let mut access = Items(items.iter());
        let value = visitor.visit_seq(&mut access)?;
        // A tuple visitor stops after its length; leftovers mean the list was too long.
        let left = access.0.len();
        if left > 0 {
            let message = format!(
                "expected a sequence of {} items, found {}",
                items.len() - left,
                items.len()
            );
            return Err(Error::new(self.loc, message));
        }
        Ok(value)
    }

    fn visit_entries<'de, V: Visitor<'de>>(
        &'de self,
        visitor: V,
        null_is_empty: bool,
    ) -> Result<V::Value, Error> {
        match &self.value {
            Value::Map(entries) => visitor.visit_map(Entries {
                iter: entries.iter(),
                value: None,
            }),
            // `options:` with nothing under it reads naturally as "no options".
            Value::Null if null_is_empty => visitor.visit_map(Entries {
                iter: [].iter(),
                value: None,
            }),
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_) => Err(type_error(self, "a mapping")),
        }
    }

    fn visit_variant<'de, V: Visitor<'de>>(
        &'de self,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match &self.value {
            Value::Str(name) => visitor.visit_enum(UnitVariant { node: self, name }),
            Value::Map(entries) if entries.len() == 1 => {
                let (key, value) = &entries[0];
                visitor.visit_enum(MapVariant { key, value })
            }
            Value::Map(entries) => {
                let message = format!(
                    "expected a string or a single-key mapping, found a mapping with {} keys",
                    entries.len()
                );
                Err(Error::new(self.loc, message))
            }
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Seq(_) => {
                let expected = format!(
                    "a string or a single-key mapping (one of {})",
                    list_names(variants)
                );
                Err(type_error(self, &expected))
            }
        }
    }
}

/// Integer methods all share one strict implementation; the visitor checks the range.
macro_rules! integer_methods {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.locate(self.visit_integer(visitor))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &'de Node {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(_) => self.visit_integer(visitor),
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Seq(_) => self.visit_items(visitor),
            Value::Map(_) => self.visit_entries(visitor, false),
        };
        self.locate(result)
    }

    integer_methods! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_float(visitor))
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_float(visitor))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.value {
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Null
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => Err(type_error(self, "a boolean (true or false)")),
        };
        self.locate(result)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_text(visitor))
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_text(visitor))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_text(visitor))
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.value {
            Value::Str(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
            Value::Seq(_) => self.visit_items(visitor),
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Map(_) => {
                Err(type_error(self, "a string or a sequence of bytes"))
            }
        };
        self.locate(result)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.value {
            Value::Null => visitor.visit_none(),
            Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => visitor.visit_some(self),
        };
        self.locate(result)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => Err(type_error(self, "null (an empty value)")),
        };
        self.locate(result)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let result = if name == SPANNED_NAME {
            visitor.visit_map(SpannedParts {
                node: self,
                next: 0,
            })
        } else {
            visitor.visit_newtype_struct(self)
        };
        self.locate(result)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_items(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.locate(self.visit_items(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.locate(self.visit_items(visitor))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.locate(self.visit_entries(visitor, false))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.locate(self.visit_entries(visitor, true))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.locate(self.visit_variant(variants, visitor))
    }

    /// Field and variant names. Numbers and booleans are passed as text so that a key `1:`
    /// is reported as unknown field `1` instead of being taken as a field *index*.
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.value {
            Value::Null | Value::Seq(_) | Value::Map(_) => Err(type_error(self, "a name")),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
                self.visit_text(visitor)
            }
        };
        self.locate(result)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

/// Sequence items.
struct Items<'de>(std::slice::Iter<'de, Node>);

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        // Stamp here as well: some errors arise after the node's own deserialize call has
        // returned (e.g. serde's "did not match any variant of untagged enum").
        self.0
            .next()
            .map(|node| seed.deserialize(node).map_err(|e| e.or_at(node.loc)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// Mapping entries; keys go through the key node so key errors point at the key.
struct Entries<'de> {
    iter: std::slice::Iter<'de, (Node, Node)>,
    value: Option<&'de Node>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(key)
            .map(Some)
            .map_err(|e| e.or_at(key.loc))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value).map_err(|e| e.or_at(value.loc)),
            None => Err(unlocated("mapping value requested before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An enum written as a plain string: only unit variants fit.
struct UnitVariant<'de> {
    node: &'de Node,
    name: &'de str,
}

impl UnitVariant<'_> {
    fn needs_value(&self) -> Error {
        let message = format!(
            "`{}` needs a value; write it as a mapping `{}: ...`",
            self.name, self.name
        );
        Error::new(self.node.loc, message)
    }
}

impl<'de> de::EnumAccess<'de> for UnitVariant<'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self), Error> {
        Ok((seed.deserialize(self.node)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value, Error> {
        Err(self.needs_value())
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, Error> {
        Err(self.needs_value())
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(self.needs_value())
    }
}

/// An enum written as `{variant: value}`.
struct MapVariant<'de> {
    key: &'de Node,
    value: &'de Node,
}

impl<'de> de::EnumAccess<'de> for MapVariant<'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self), Error> {
        Ok((seed.deserialize(self.key)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for MapVariant<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value.value {
            Value::Null => Ok(()),
            Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Seq(_)
            | Value::Map(_) => {
                let name = scalar_text(&self.key.value).unwrap_or_default();
                let message = format!("`{name}` takes no value, found {}", self.value.kind_name());
                Err(Error::new(self.value.loc, message))
            }
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        let loc = self.value.loc;
        seed.deserialize(self.value).map_err(|e| e.or_at(loc))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_tuple(self.value, len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_struct(self.value, "", fields, visitor)
    }
}

/// The private protocol behind [`super::Spanned`]: when asked for the magic newtype we hand
/// its visitor a two-entry map, first the packed location, then the node itself.
struct SpannedParts<'de> {
    node: &'de Node,
    next: u8,
}

pub(super) fn pack_loc(loc: Loc) -> u64 {
    (u64::from(loc.line) << 32) | u64::from(loc.col)
}

pub(super) fn unpack_loc(packed: u64) -> Loc {
    let line = u32::try_from(packed >> 32).unwrap_or(u32::MAX);
    let col = u32::try_from(packed & u64::from(u32::MAX)).unwrap_or(u32::MAX);
    Loc { line, col }
}

impl<'de> de::MapAccess<'de> for SpannedParts<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let key = match self.next {
            0 => "loc",
            1 => "value",
            _ => return Ok(None),
        };
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        self.next += 1;
        match self.next {
            1 => seed.deserialize(pack_loc(self.node.loc).into_deserializer()),
            _ => seed.deserialize(self.node),
        }
    }
}
