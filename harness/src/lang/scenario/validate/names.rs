//! The reader of everything after the header, and how it resolves names: nodes,
//! node references, fail points, variants. It holds the resolved model, nodes and
//! settings, so no reader below the header checks for a missing model.

use super::errors::Errors;
use crate::lang::scenario::{NodeId, NodeSpec, Settings, Target};
use crate::lang::yaml::Spanned;
use faultline_api::{FailPointInfo, Model, ModelInfo};

pub(super) struct Reader<'r, 'f> {
    pub e: &'r mut Errors<'f>,
    pub model: &'static dyn Model,
    pub info: &'static ModelInfo,
    pub nodes: &'r [NodeSpec],
    /// The scenario's resolved defaults (`op_timeout` for client steps and transfers).
    pub settings: &'r Settings,
    /// The variant names the file declares, for steps that name variants.
    pub variant_names: &'r [String],
    /// Fault steps seen so far, as written (bounded by FAULTS_MAX).
    pub faults: usize,
    /// Whether the scenario has a top-level `workload:` for steps to start.
    pub has_workload: bool,
    /// `workload: start` steps seen.
    pub workload_starts: usize,
}

impl<'r, 'f> Reader<'r, 'f> {
    pub fn new(
        e: &'r mut Errors<'f>,
        model: &'static dyn Model,
        nodes: &'r [NodeSpec],
        settings: &'r Settings,
        variant_names: &'r [String],
    ) -> Self {
        Reader {
            e,
            model,
            info: model.info(),
            nodes,
            settings,
            variant_names,
            faults: 0,
            has_workload: false,
            workload_starts: 0,
        }
    }

    pub(super) fn node_ref(&mut self, name: &Spanned<String>) -> Option<NodeId> {
        if let Some(id) = self.nodes.iter().position(|n| n.name == name.value) {
            return Some(id);
        }
        let names: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
        self.e.unknown_name(
            name.loc,
            "node",
            &name.value,
            names.iter().map(String::as_str),
        );
        None
    }

    /// A node reference: a node name, `leader`, `follower`, `any` or a role of
    /// the model (the table in docs/scenario-format.md, "Node references").
    /// `leader` and `follower` need a model with leaders.
    pub(super) fn target(&mut self, name: &Spanned<String>) -> Option<Target> {
        let info = self.info;
        let target = match name.value.as_str() {
            "leader" => Target::Leader,
            "follower" => Target::Follower,
            "any" => return Some(Target::Any),
            other => {
                // A node's own name wins over a role of the same name.
                if let Some(id) = self.nodes.iter().position(|n| n.name == other) {
                    return Some(Target::Node(id));
                }
                if let Some(role) = info.role(other) {
                    return Some(Target::Role(role.name));
                }
                // Everything a reference may be here: the nodes, `any`, the
                // leader roles where the model has a leader, the model's roles.
                let mut valid: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
                if info.has_leader {
                    valid.extend(["leader", "follower"]);
                }
                valid.push("any");
                valid.extend(info.roles.iter().map(|r| r.name));
                self.e
                    .unknown_name(name.loc, "node", other, valid.iter().copied());
                return None;
            }
        };
        if !info.has_leader {
            self.e.error_hint(
                name.loc,
                format!(
                    "model `{}` has no leader, so `{}` names no node",
                    info.name, name.value
                ),
                "name a node, or write `any`",
            );
            return None;
        }
        Some(target)
    }

    /// The two ends of a link: two references that cannot be one node.
    pub(super) fn node_pair(
        &mut self,
        between: &Spanned<Vec<Spanned<String>>>,
    ) -> Option<(Target, Target)> {
        if between.value.len() != 2 {
            self.e.error(
                between.loc,
                format!("`between` names two nodes, found {}", between.value.len()),
            );
            return None;
        }
        let a = self.target(&between.value[0]);
        let b = self.target(&between.value[1]);
        let (a, b) = (a?, b?);
        let same = match a {
            Target::Node(x) => b == Target::Node(x),
            Target::Leader => b == Target::Leader,
            // `follower`, `any` and a role pick when the step runs: not judged here.
            Target::Follower | Target::Any | Target::Role(_) => false,
        };
        if same {
            self.e
                .error(between.loc, "`between` names the same node twice");
            return None;
        }
        Some((a, b))
    }

    pub(super) fn point(&mut self, name: &Spanned<String>) -> Option<&'static FailPointInfo> {
        let info = self.info;
        if let Some(point) = info.fail_point(&name.value) {
            return Some(point);
        }
        let names: Vec<&str> = info.fail_points.iter().map(|p| p.name).collect();
        if names.is_empty() {
            self.e.error(
                name.loc,
                format!("model `{}` declares no fail points", info.name),
            );
        } else {
            self.e
                .unknown_name(name.loc, "fail point", &name.value, names);
        }
        None
    }

    /// The variants a step is limited to (empty: every variant), each one declared.
    pub(super) fn step_variants(&mut self, names: &[Spanned<String>]) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for name in names {
            if !self.variant_names.contains(&name.value) {
                let declared = self.variant_names;
                self.e.unknown_name(
                    name.loc,
                    "variant",
                    &name.value,
                    declared.iter().map(String::as_str),
                );
                return None;
            }
            out.push(name.value.clone());
        }
        Some(out)
    }
}
