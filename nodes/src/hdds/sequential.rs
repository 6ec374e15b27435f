//! The history checker's view of a datanode: each container on each datanode is
//! an object whose state goes through the container events one at a time, by
//! the same transitions the datanode applies; a volume failure takes its
//! containers out together. Judged over a run, it says whether every answer a
//! client got fits one order of the events: an acknowledged event the datanode
//! later behaves as if it never saw (a container set lost in a restart) fails it.

use super::datanode::transition;
use super::report::ContainerState;
use super::{Config, HddsOp, Params};
use crate::api::{OpResult, Sequential};
use serde_json::Value;
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
        if containers.is_empty() {
            return vec![format!("{node}/-")];
        }
        containers.iter().map(|c| format!("{node}/C{c}")).collect()
    }

    /// Every datanode holds the `containers` param's containers CLOSED on its
    /// first start.
    fn initial(&self, object: &str, params: &Value) -> Value {
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
            _ => {
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
