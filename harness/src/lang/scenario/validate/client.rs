//! `client` steps: an op of the model, with the step's own options.

use super::errors::{list, locate_field, map_filtered, serde_suggestion};
use super::names::Reader;
use super::templates::{expand_template, placeholders};
use crate::lang::scenario::raw;
use crate::lang::scenario::{ClientOp, ClientStep, OpExpect, StepKind, Target};
use crate::lang::yaml::{Node, Spanned, Value};
use faultline_api::ParsedOp;
use schemars::{JsonSchema, Schema, SchemaGenerator};

impl Reader<'_, '_> {
    pub(super) fn client(&mut self, body: &Node) -> Option<StepKind> {
        let info = self.info;
        let Value::Map(_) = &body.value else {
            self.e.error_hint(
                body.loc,
                "`client` is a mapping",
                "for example `- client: {on: leader, op: put, key: a, value: \"1\"}`",
            );
            return None;
        };
        let options = self.e.read::<raw::ClientOptions>(&map_filtered(body, |k| {
            raw::CLIENT_OPTION_KEYS.contains(&k)
        }))?;
        let op_node = map_filtered(body, |k| !raw::CLIENT_OPTION_KEYS.contains(&k));
        let Some(op_name_node) = op_node.get("op") else {
            let ops: Vec<&str> = info.ops.iter().map(|o| o.name).collect();
            self.e.error_hint(
                body.loc,
                "`client` needs `op`",
                format!("ops of `{}`: {}", info.name, list(ops)),
            );
            return None;
        };
        let op_name = op_name_node.as_str().unwrap_or("");
        // The op and the node are checked both, so that one error never hides
        // the other.
        let op = if info.op(op_name).is_none() {
            self.e.unknown_name(
                op_name_node.loc,
                "op",
                op_name,
                info.ops.iter().map(|o| o.name),
            );
            None
        } else {
            self.client_op(&op_node, op_name, body)
        };
        let target = match &options.on {
            Some(on) => self.target(on),
            None if info.has_leader => Some(Target::Leader),
            None => {
                self.e.error_hint(
                    body.loc,
                    format!("model `{}` has no leader: say which node", info.name),
                    "add `on: NODE`",
                );
                None
            }
        };
        let (op, target) = (op?, target?);
        let timeout = self
            .e
            .duration_or(&options.timeout, self.settings.op_timeout);
        let expect = match &options.expect {
            None => None,
            Some(e) => Some(self.op_expect(e)?),
        };
        if let Some(e) = &options.expect {
            if super::templates::placeholders(&Node {
                loc: e.loc,
                value: Value::Str(e.value.clone()),
            })
            .unwrap_or(true)
            {
                self.e.error_hint(
                    e.loc,
                    "placeholders are expanded in the op's arguments, not in `expect`",
                    "write the error text literally (`{{` and `}}` are not needed here)",
                );
                return None;
            }
        }
        Some(StepKind::Client(ClientStep {
            target,
            op,
            wait: options.wait.unwrap_or(true),
            timeout,
            expect,
        }))
    }

    /// The op as written: fixed, or a template whose placeholders expand when the
    /// step runs, checked here with the smallest and the largest draws.
    fn client_op(&mut self, op_node: &Node, op_name: &str, body: &Node) -> Option<ClientOp> {
        let template = match placeholders(op_node) {
            Ok(template) => template,
            Err((loc, message)) => {
                self.e.error(loc, message);
                return None;
            }
        };
        let json = op_node.to_json();
        if !template {
            return self
                .parse_op(&json, op_node, op_name, body)
                .map(ClientOp::Fixed);
        }
        for low in [true, false] {
            let sample = expand_template(&json, &mut |lo, hi| if low { lo } else { hi }, 0)
                .expect("placeholders checked");
            self.parse_op(&sample, op_node, op_name, body)?;
        }
        Some(ClientOp::Template(json))
    }

    fn parse_op(
        &mut self,
        json: &serde_json::Value,
        op_node: &Node,
        op_name: &str,
        body: &Node,
    ) -> Option<ParsedOp> {
        // An unknown field is left out and the op read again, so every unknown
        // field of the op is reported in one pass (bounded by the op's fields).
        let mut json = json.clone();
        let mut reported = false;
        loop {
            match self.model.parse_op(&json) {
                Ok(op) => return (!reported).then_some(op),
                // Left without a field it needed by a removal: a consequence.
                Err(message) if reported && message.contains("missing field") => return None,
                Err(message) => {
                    let loc = locate_field(op_node, &message).unwrap_or(body.loc);
                    let example = self.info.op(op_name).map(|o| o.example).unwrap_or("");
                    let hint = match serde_suggestion(&message) {
                        Some(best) => format!("did you mean `{best}`? for example {example}"),
                        None => format!("for example {example}"),
                    };
                    self.e
                        .error_hint(loc, format!("op `{op_name}`: {message}"), hint);
                    reported = true;
                    let unknown = message
                        .split_once("unknown field `")
                        .and_then(|(_, rest)| rest.split_once('`'))
                        .map(|(field, _)| field.to_string());
                    let removed = match (&mut json, unknown) {
                        (serde_json::Value::Object(map), Some(field)) => {
                            map.remove(&field).is_some()
                        }
                        _ => false,
                    };
                    if !removed {
                        return None;
                    }
                }
            }
        }
    }

    pub(super) fn op_expect(&mut self, text: &Spanned<String>) -> Option<OpExpect> {
        let value = text.value.trim();
        if value == "ok" {
            return Some(OpExpect::Ok);
        }
        if value == "error" {
            return Some(OpExpect::Error(None));
        }
        if let Some(rest) = value.strip_prefix("error:") {
            return Some(OpExpect::Error(Some(rest.trim().to_string())));
        }
        self.e.error(
            text.loc,
            format!("op `expect` is `ok`, `error` or `error: TEXT`, found `{value}`"),
        );
        None
    }
}

/// A `client` step's value, as [`Reader::client`] reads it: the options of
/// [`raw::ClientOptions`], and every other key the op's (`op` and its arguments,
/// which the model checks).
pub(super) fn client_schema(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = raw::ClientOptions::json_schema(generator);
    schema.remove("additionalProperties");
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            "op".into(),
            serde_json::json!({"type": "string", "description": "One of the model's ops (`faultline list MODEL`); its arguments are keys beside it."}),
        );
    }
    schema.insert("required".into(), serde_json::json!(["op"]));
    schema
}
