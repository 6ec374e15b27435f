//! The history checker's view of a datanode: each container on each datanode is
//! an object whose state goes through the container events one at a time, by
//! the same transitions the datanode applies; a volume failure takes its
//! containers out together. Judged over a run, it says whether every answer a
//! client got fits one order of the events: an acknowledged event the datanode
//! later behaves as if it never saw (a container set lost in a restart) fails it.
//!
//! SCM's deleted-block log is an object too (`scm/txs`): `delete_blocks` takes
//! the next transaction id of a durable sequence (`DeletedBlockLog`'s), so each
//! acknowledged one names the id after the last, and an id is never given twice,
//! even across a restart of SCM.

use super::datanode::transition;
use super::deletion::TXS_MAX;
use super::report::ContainerState;
use super::{Config, HddsOp, Params};
use faultline_api::{OpResult, Sequential};
use serde_json::{json, Value};
use std::collections::BTreeSet;

pub struct Containers;

/// The containers an op acts on; `None` for ops that act on none.
fn containers_of(op: &HddsOp) -> Option<Vec<u64>> {
    match op {
        HddsOp::Create { container }
        | HddsOp::Close { container }
        | HddsOp::MarkUnhealthy { container }
        | HddsOp::Delete { container }
        | HddsOp::Import { container } => Some(vec![*container]),
        HddsOp::FailVolume { containers } => Some(
            containers
                .iter()
                .copied()
                .collect::<BTreeSet<u64>>()
                .into_iter()
                .collect(),
        ),
        HddsOp::DeleteBlocks {} | HddsOp::BuildFcr { .. } | HddsOp::CommandStatus { .. } => None,
    }
}

/// The deleted-block log's object: its state is the last transaction id given.
const TXS: &str = "txs";

/// `delete_blocks` against the last id given: an answer names the next one
/// (`tx7` after 6), or refuses once the log's bound is reached.
fn next_tx(last: &Value, answer: Option<&OpResult>) -> Option<Value> {
    let last = last.as_u64()?;
    if last >= TXS_MAX {
        let full = format!("at most {TXS_MAX} deleted-block transactions");
        return match answer {
            None => Some(json!(last)),
            Some(a) => (!a.ok && a.error.as_deref() == Some(full.as_str())).then(|| json!(last)),
        };
    }
    let next = last + 1;
    match answer {
        None => Some(json!(next)),
        Some(a) => {
            (a.ok && a.value.as_deref() == Some(format!("tx{next}").as_str())).then(|| json!(next))
        }
    }
}

#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn decode(state: &Value) -> Option<Option<ContainerState>> {
    match state {
        Value::Null => Some(None),
        other => serde_json::from_value(other.clone()).ok().map(Some),
    }
}

fn encode(state: Option<ContainerState>) -> Value {
    state.map_or(Value::Null, |s| {
        serde_json::to_value(s).expect("states serialize")
    })
}

impl Sequential for Containers {
    fn objects(&self, op: &Value, node: &str) -> Vec<String> {
        let containers = serde_json::from_value::<HddsOp>(op.clone())
            .ok()
            .and_then(|op| containers_of(&op))
            .unwrap_or_default();
        if matches!(
            serde_json::from_value::<HddsOp>(op.clone()),
            Ok(HddsOp::DeleteBlocks {})
        ) {
            return vec![format!("{node}/{TXS}")];
        }
        if containers.is_empty() {
            return vec![format!("{node}/-")];
        }
        containers.iter().map(|c| format!("{node}/C{c}")).collect()
    }

    /// Every datanode holds the `containers` param's containers CLOSED on its
    /// first start.
    fn initial(&self, object: &str, params: &Value) -> Value {
        if object.ends_with(&format!("/{TXS}")) {
            // No transaction logged yet.
            return json!(0);
        }
        let params: Params = serde_json::from_value(params.clone()).unwrap_or_default();
        let held = Config::from_params(&params).containers;
        let container = object
            .rsplit_once("/C")
            .and_then(|(_, c)| c.parse::<u64>().ok());
        match container {
            Some(c) if held.contains(&c) => encode(Some(ContainerState::Closed)),
            _ => Value::Null,
        }
    }

    fn step(&self, states: &[Value], op: &Value, answer: Option<&OpResult>) -> Option<Vec<Value>> {
        let op: HddsOp = serde_json::from_value(op.clone()).ok()?;
        if let HddsOp::DeleteBlocks {} = op {
            return next_tx(states.first()?, answer).map(|s| vec![s]);
        }
        let containers = containers_of(&op)?;
        let old: Vec<Option<ContainerState>> = states.iter().map(decode).collect::<Option<_>>()?;
        // What the datanode does: the states after, or the refusal it answers.
        let outcome: Result<Vec<Option<ContainerState>>, String> = match &op {
            HddsOp::FailVolume { .. } => {
                match containers.iter().zip(&old).find(|(_, s)| s.is_none()) {
                    Some((missing, _)) => Err(format!("C{missing}: no such container")),
                    None => Ok(vec![None; old.len()]),
                }
            }
            HddsOp::Create { .. }
            | HddsOp::Close { .. }
            | HddsOp::MarkUnhealthy { .. }
            | HddsOp::Delete { .. }
            | HddsOp::Import { .. }
            | HddsOp::DeleteBlocks { .. }
            | HddsOp::CommandStatus { .. }
            | HddsOp::BuildFcr { .. } => {
                let (container, state) = (containers.first()?, old.first()?);
                transition(&op, *state)
                    .map(|new| vec![new])
                    .map_err(|why| format!("C{container}: {why}"))
            }
        };
        let unchanged = || states.to_vec();
        match (outcome, answer) {
            (Ok(new), None) => Some(new.into_iter().map(encode).collect()),
            (Ok(new), Some(a)) if a.ok => Some(new.into_iter().map(encode).collect()),
            (Ok(_), Some(_)) => None,
            (Err(_), None) => Some(unchanged()),
            (Err(said), Some(a)) => {
                (!a.ok && a.error.as_deref() == Some(said.as_str())).then(unchanged)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(
        spec: &Containers,
        state: &Value,
        op: &Value,
        answer: Option<OpResult>,
    ) -> Option<Value> {
        spec.step(std::slice::from_ref(state), op, answer.as_ref())
            .map(|mut v| v.remove(0))
    }

    #[test]
    fn answers_must_fit_the_container_state() {
        let spec = Containers;
        let create = json!({"op": "create", "container": 2});
        let close = json!({"op": "close", "container": 2});
        assert_eq!(spec.objects(&create, "dn1"), ["dn1/C2"]);
        let open = one(&spec, &Value::Null, &create, Some(OpResult::ok()))
            .expect("an absent container can be created");
        assert_eq!(open, json!("OPEN"));
        assert!(
            one(&spec, &open, &create, Some(OpResult::ok())).is_none(),
            "an OPEN container cannot be created again"
        );
        let refused = OpResult::error("C2: exists (OPEN)");
        assert_eq!(
            one(&spec, &open, &create, Some(refused)),
            Some(open.clone())
        );
        assert!(
            one(&spec, &Value::Null, &close, Some(OpResult::ok())).is_none(),
            "an absent container cannot be closed"
        );
        assert_eq!(one(&spec, &open, &close, None), Some(json!("CLOSED")));
        assert_eq!(spec.initial("dn1/C1", &json!({})), json!("CLOSED"));
        assert_eq!(spec.initial("dn1/C2", &json!({})), Value::Null);
        assert_eq!(
            spec.initial("dn1/C2", &json!({"containers": [2]})),
            json!("CLOSED")
        );
    }

    #[test]
    fn a_deleted_block_transaction_takes_the_next_id_never_one_given_before() {
        let spec = Containers;
        let delete = json!({"op": "delete_blocks"});
        assert_eq!(spec.objects(&delete, "scm"), ["scm/txs"]);
        assert_eq!(spec.initial("scm/txs", &json!({})), json!(0));
        let tx = |n: u64| Some(OpResult::value(format!("tx{n}")));
        assert_eq!(one(&spec, &json!(0), &delete, tx(1)), Some(json!(1)));
        assert_eq!(one(&spec, &json!(6), &delete, tx(7)), Some(json!(7)));
        // An id given again (a sequence lost in a restart) fits no order.
        assert!(one(&spec, &json!(7), &delete, tx(7)).is_none());
        assert!(one(&spec, &json!(7), &delete, tx(9)).is_none());
        // Unanswered: it may have taken the next id.
        assert_eq!(one(&spec, &json!(7), &delete, None), Some(json!(8)));
        let full = OpResult::error(format!("at most {TXS_MAX} deleted-block transactions"));
        assert_eq!(
            one(&spec, &json!(TXS_MAX), &delete, Some(full.clone())),
            Some(json!(TXS_MAX))
        );
        assert!(one(&spec, &json!(3), &delete, Some(full)).is_none());
    }

    #[test]
    fn a_volume_failure_takes_all_its_containers_or_none() {
        let spec = Containers;
        let fail = json!({"op": "fail_volume", "containers": [3, 1]});
        assert_eq!(spec.objects(&fail, "dn1"), ["dn1/C1", "dn1/C3"]);
        let closed = json!("CLOSED");
        let both = [closed.clone(), closed.clone()];
        let ok = OpResult::value("removed");
        assert_eq!(
            spec.step(&both, &fail, Some(&ok)),
            Some(vec![Value::Null, Value::Null])
        );
        let half = [closed.clone(), Value::Null];
        assert!(spec.step(&half, &fail, Some(&ok)).is_none());
        let refused = OpResult::error("C3: no such container");
        assert_eq!(spec.step(&half, &fail, Some(&refused)), Some(half.to_vec()));
    }
}
