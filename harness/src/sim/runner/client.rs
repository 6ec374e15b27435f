//! Client steps: an op (fixed, or a template expanded with the seed's
//! placeholder draws) sent to the node a target names, waited for when the step
//! says so, and checked against the step's `expect`.

use super::pick::Want;
use super::{Driver, Halt};
use crate::base::action::Action;
use crate::base::trail::Data;
use crate::judge::check::Finding;
use crate::lang::scenario::{expand_template, ClientOp, ClientStep, OpExpect, Step};
use faultline_api::OpResult;
use rand::Rng;

impl Driver<'_> {
    pub(crate) fn client(&mut self, client: &ClientStep, step: &Step) -> Result<(), Halt> {
        let op = match &client.op {
            ClientOp::Fixed(op) => op.clone(),
            ClientOp::Template(template) => {
                let seq = self.next_seq();
                let rng = &mut self.placeholders;
                let expanded =
                    expand_template(template, &mut |lo, hi| rng.random_range(lo..=hi), seq)
                        .and_then(|json| self.scenario.model.parse_op(&json));
                match expanded {
                    Ok(op) => op,
                    Err(message) => {
                        // Checked at load with the extreme draws; a model may still
                        // refuse a value between them.
                        let invalid = Data::InvalidOp {
                            workload: false,
                            message: message.clone(),
                        };
                        self.event(None, invalid);
                        self.check_op(client, "op template", step, &OpResult::error(message));
                        return Ok(());
                    }
                }
            }
        };
        let Some(node) = self.pick(client.target, Want::Up, &[], client.timeout)? else {
            let why = self.no_node(client.target, Want::Up, client.timeout);
            let no_node = Data::NoNode {
                op: op.summary.clone(),
                why: why.clone(),
            };
            self.event(None, no_node);
            let now = self.cluster.elapsed();
            self.cluster
                .state_mut()
                .history
                .refused(super::recorder::SCRIPT, None, &op, &why, now);
            self.check_op(client, &op.summary, step, &OpResult::error(why));
            return Ok(());
        };
        let summary = op.summary.clone();
        let action = Action::Client {
            node: self.name(node),
            op,
        };
        let result = self.act_client(action, client.wait.then_some(client.timeout))?;
        if let Some(result) = result {
            self.check_op(client, &summary, step, &result);
        }
        Ok(())
    }

    /// `{seq}` of the next op template expanded in this run.
    pub(crate) fn next_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    fn check_op(&mut self, client: &ClientStep, summary: &str, step: &Step, result: &OpResult) {
        let Some(expect) = &client.expect else { return };
        let ok = match expect {
            OpExpect::Ok => result.ok,
            OpExpect::Error(None) => !result.ok,
            OpExpect::Error(Some(text)) => {
                !result.ok
                    && result
                        .error
                        .as_deref()
                        .unwrap_or("")
                        .contains(text.as_str())
            }
        };
        if !ok {
            let want = match expect {
                OpExpect::Ok => "ok".to_string(),
                OpExpect::Error(None) => "an error".to_string(),
                OpExpect::Error(Some(text)) => format!("an error containing {text:?}"),
            };
            let (file, line, col) = (&self.scenario.file, step.loc.line, step.loc.col);
            let message = format!("{file}:{line}:{col}: {summary} expected {want}, got {result}");
            self.finding(Finding::new("op-expect", None, message));
        }
    }
}
