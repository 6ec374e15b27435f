//! Workloads: the top-level `workload:` and a chaos section's, their op
//! templates checked by the model at their smallest and largest draws.

use super::errors::locate_field;
use super::names::Reader;
use super::templates::expand_template;
use crate::lang::scenario::raw;
use crate::lang::scenario::*;
use crate::lang::yaml::{Node, Spanned, Value};
use schemars::{json_schema, Schema, SchemaGenerator};

impl Reader<'_, '_> {
    pub(super) fn workload(&mut self, node: &Node) -> Option<Workload> {
        let info = self.info;
        let raw = self.e.read::<raw::Workload>(node)?;
        let every = self.e.duration(&raw.every)?;
        if every.is_zero() {
            self.e.error(
                raw.every.loc,
                "the workload's `every` must be longer than 0s",
            );
            return None;
        }
        let ops_node = node.get("ops").expect("serde checked");
        let Value::Seq(items) = &ops_node.value else {
            self.e
                .error(ops_node.loc, "`ops` is a list of op templates");
            return None;
        };
        let mut ops = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let mut op = self.workload_op(item)?;
            op.index = index;
            ops.push(op);
        }
        if ops.is_empty() {
            self.e
                .error(ops_node.loc, "the workload needs at least one op");
            return None;
        }
        let clients = match &raw.clients {
            None => None,
            Some(c) if (1..=super::CLIENTS_MAX).contains(&c.value) => Some(c.value as usize),
            Some(c) => {
                self.e.error(
                    c.loc,
                    format!("`clients` is 1..={}, found {}", super::CLIENTS_MAX, c.value),
                );
                return None;
            }
        };
        let target = match &raw.on {
            Some(on) => Some(self.target(on)?),
            None if info.has_leader => Some(Target::Leader),
            None if ops.iter().all(|op| op.target.is_some()) => None,
            None => {
                self.e.error_hint(
                    node.loc,
                    format!("model `{}` has no leader: say which node", info.name),
                    "add `on: NODE` to the workload or to each op",
                );
                return None;
            }
        };
        Some(Workload {
            loc: node.loc,
            every,
            clients,
            target,
            ops,
        })
    }

    /// One op template; its own `on` (reserved by the client step, so never an op
    /// argument) sends it elsewhere than the workload's `on`.
    pub(super) fn workload_op(&mut self, item: &Node) -> Option<WorkloadOp> {
        let target = match item.get("on") {
            Some(on) => {
                let on: Spanned<String> = self.e.read(on)?;
                Some(self.target(&on)?)
            }
            None => None,
        };
        let weight = match item.get("weight") {
            Some(w) => {
                let w: Spanned<u32> = self.e.read(w)?;
                if w.value == 0 {
                    self.e.error(
                        w.loc,
                        "an op's `weight` is at least 1 (leave the op out instead)",
                    );
                    return None;
                }
                w.value
            }
            None => 1,
        };
        let op_node = super::errors::map_filtered(item, |k| k != "on" && k != "weight");
        // The op's name, at the name (a name with a placeholder is left to the
        // checks of its draws).
        if let Some(name) = op_node
            .get("op")
            .filter(|n| !n.as_str().unwrap_or("").contains('{'))
        {
            let info = self.info;
            let text = name.as_str().unwrap_or("");
            if info.op(text).is_none() {
                self.e
                    .unknown_name(name.loc, "op", text, info.ops.iter().map(|o| o.name));
                return None;
            }
        }
        if let Err((loc, message)) = super::templates::placeholders(&op_node) {
            self.e.error(loc, message);
            return None;
        }
        let template = op_node.to_json();
        // Check the template with the smallest and the largest draws.
        for pick in [Pick::Low, Pick::High] {
            let sample = match expand_template(
                &template,
                &mut |lo, hi| if pick == Pick::Low { lo } else { hi },
                0,
            ) {
                Ok(sample) => sample,
                Err(message) => {
                    self.e.error(item.loc, message);
                    return None;
                }
            };
            if let Err(message) = self.model.parse_op(&sample) {
                let loc = locate_field(item, &message).unwrap_or(item.loc);
                self.e.error(loc, format!("workload op: {message}"));
                return None;
            }
        }
        Some(WorkloadOp {
            target,
            template,
            weight,
            index: 0,
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Pick {
    Low,
    High,
}
// ---- The JSON Schema of what this module reads from the tree. ----

/// A workload (top-level or chaos), as [`Reader::workload`] reads it.
pub(in crate::lang::scenario) fn workload_schema(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<raw::Workload>()
}
/// A workload's `ops:` as [`Reader::workload`] and [`Reader::workload_op`]
/// read them: op templates, each with its own `on` and `weight`.
pub(in crate::lang::scenario) fn workload_ops_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "properties": {
                "op": {"type": "string", "description": "One of the model's ops; its arguments (which may hold placeholders `{A..B}`, `{seq}`) are keys beside it."},
                "on": {"type": "string", "description": "A node reference (default: the workload's `on`)."},
                "weight": {"type": "integer", "minimum": 1, "maximum": u32::MAX, "description": "Relative frequency (default 1)."},
            },
            "required": ["op"],
        },
    })
}
