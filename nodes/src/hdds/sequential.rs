//! The history checker's view of a datanode: each container on each datanode is
//! an object whose state goes through the container events one at a time, by
//! the same transitions the datanode applies. Judged over a run, it says whether
//! every answer a client got fits one order of the events: an acknowledged event
//! the datanode later behaves as if it never saw (a container set lost in a
//! restart) fails it.

use super::datanode::transition;
use super::report::ContainerState;
use super::{Config, HddsOp, Params};
use crate::api::{OpResult, Sequential};
use serde_json::Value;

pub struct Containers;

fn container_of(op: &HddsOp) -> Option<u64> {
    match op {
        HddsOp::Create { container }
        | HddsOp::Close { container }
        | HddsOp::MarkUnhealthy { container }
        | HddsOp::Delete { container }
        | HddsOp::Import { container } => Some(*container),
        HddsOp::DeleteBlocks {} | HddsOp::BuildFcr { .. } => None,
    }
}

impl Sequential for Containers {
    fn object(&self, op: &Value, node: &str) -> String {
        let container = serde_json::from_value::<HddsOp>(op.clone())
            .ok()
            .and_then(|op| container_of(&op));
        match container {
            Some(c) => format!("{node}/C{c}"),
            None => format!("{node}/-"),
        }
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
            Some(c) if held.contains(&c) => {
                serde_json::to_value(ContainerState::Closed).expect("states serialize")
            }
            _ => Value::Null,
        }
    }

    fn step(&self, state: &Value, op: &Value, answer: Option<&OpResult>) -> Option<Value> {
        let op: HddsOp = serde_json::from_value(op.clone()).ok()?;
        let container = container_of(&op)?;
        let old: Option<ContainerState> = match state {
            Value::Null => None,
            other => Some(serde_json::from_value(other.clone()).ok()?),
        };
        let encode = |s: Option<ContainerState>| {
            s.map_or(Value::Null, |s| {
                serde_json::to_value(s).expect("states serialize")
            })
        };
        match (transition(&op, old), answer) {
            (Ok(new), None) => Some(encode(new)),
            (Ok(new), Some(a)) if a.ok => Some(encode(new)),
            (Err(why), Some(a)) => {
                let said = format!("C{container}: {why}");
                (!a.ok && a.error.as_deref() == Some(said.as_str())).then(|| state.clone())
            }
            // A refusal changes nothing, whatever the answer was.
            (Err(_), None) => Some(state.clone()),
            (Ok(_), Some(_)) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_must_fit_the_container_state() {
        let spec = Containers;
        let create = json!({"op": "create", "container": 2});
        let close = json!({"op": "close", "container": 2});
        assert_eq!(spec.object(&create, "dn1"), "dn1/C2");
        let open = spec
            .step(&Value::Null, &create, Some(&OpResult::ok()))
            .expect("an absent container can be created");
        assert_eq!(open, json!("OPEN"));
        assert!(
            spec.step(&open, &create, Some(&OpResult::ok())).is_none(),
            "an OPEN container cannot be created again"
        );
        let refused = OpResult::error("C2: exists (OPEN)");
        assert_eq!(
            spec.step(&open, &create, Some(&refused)),
            Some(open.clone())
        );
        assert!(
            spec.step(&Value::Null, &close, Some(&OpResult::ok()))
                .is_none(),
            "an absent container cannot be closed"
        );
        assert_eq!(spec.step(&open, &close, None), Some(json!("CLOSED")));
        assert_eq!(spec.initial("dn1/C1", &json!({})), json!("CLOSED"));
        assert_eq!(spec.initial("dn1/C2", &json!({})), Value::Null);
        assert_eq!(
            spec.initial("dn1/C2", &json!({"containers": [2]})),
            json!("CLOSED")
        );
    }
}
