//! A test environment for the node API's own tests (the context's and the
//! kit's): an [`Env`] that keeps what nodes record, the messages they count and
//! the violations they report, and raises the errors a test sets on fail points.

use crate::bugs::BugSet;
use crate::ctx::NodeCtx;
use crate::env::{Env, Fault, NodeSpec, NodeStart, OpResult, Shared};
use crate::event::NodeEvent;
use crate::faults::{fail_point_name, FailPoint};
use crate::observe::Observation;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

pub struct TestEnv {
    run_id: String,
    /// point name -> the error kind it raises while armed.
    errors: RefCell<BTreeMap<&'static str, String>>,
    /// Every event a node recorded, as (node, event).
    pub events: RefCell<Vec<(String, NodeEvent)>>,
    pub messages: RefCell<Vec<(String, String, String)>>,
    pub violations: RefCell<Vec<(String, String, String)>>,
    shared: Shared,
}

impl TestEnv {
    /// `run_id` must be unique among the tests (the fail registry is global).
    pub fn new(run_id: &str) -> Rc<TestEnv> {
        Rc::new(TestEnv {
            run_id: run_id.to_string(),
            errors: RefCell::default(),
            events: RefCell::default(),
            messages: RefCell::default(),
            violations: RefCell::default(),
            shared: Shared::default(),
        })
    }

    /// A context for node `index` of `names`.
    pub fn ctx(self: &Rc<Self>, names: &[&str], index: usize) -> Rc<NodeCtx> {
        let start = NodeStart {
            index,
            nodes: names
                .iter()
                .map(|n| NodeSpec {
                    name: n.to_string(),
                    role: "node".into(),
                })
                .collect(),
            incarnation: 0,
            seed: 1,
            bugs: BugSet::default(),
            params: serde_json::Value::Null,
        };
        let (_inbox, receiver) = tokio::sync::mpsc::unbounded_channel();
        Rc::new(NodeCtx::new(start, self.clone(), receiver))
    }

    /// The notes recorded, as (node, text).
    pub fn notes(&self) -> Vec<(String, String)> {
        self.events
            .borrow()
            .iter()
            .filter_map(|(node, event)| match event {
                NodeEvent::Note { text } => Some((node.clone(), text.clone())),
                NodeEvent::Leader { .. }
                | NodeEvent::Apply { .. }
                | NodeEvent::Storage { .. }
                | NodeEvent::Service { .. }
                | NodeEvent::Submit { .. }
                | NodeEvent::Exit { .. }
                | NodeEvent::Probe { .. } => None,
            })
            .collect()
    }

    /// Make `point` on `node` raise `kind` (`None`: disarm it).
    pub fn arm(&self, node: &str, point: impl FailPoint, kind: Option<&str>) {
        let name = point.info().name;
        let full = fail_point_name(&self.run_id, node, name);
        match kind {
            Some(kind) => {
                self.errors.borrow_mut().insert(name, kind.to_string());
                fail::cfg(full, "return(1)").expect("a valid fail action");
            }
            None => {
                self.errors.borrow_mut().remove(name);
                fail::remove(full);
            }
        }
    }
}

impl Env for TestEnv {
    fn run_id(&self) -> &str {
        &self.run_id
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
    fn record(&self, node: &str, event: NodeEvent) {
        self.events.borrow_mut().push((node.to_string(), event));
    }
    fn message(&self, from: &str, to: &str, kind: &str) {
        let message = (from.to_string(), to.to_string(), kind.to_string());
        self.messages.borrow_mut().push(message);
    }
    fn fail_point(&self, _: &str, point: &'static str, _: &str) -> Option<Fault> {
        self.errors.borrow().get(point).cloned().map(Fault::Error)
    }
    fn publish(&self, _: &str, _: Observation) {}
    fn complete(&self, _: &str, _: u64, _: OpResult) {}
    fn exit(&self, _: &str, _: &str) {}
    fn stopped(&self, _: &str) {}
    fn shared(&self) -> &Shared {
        &self.shared
    }
    fn violation(&self, node: &str, invariant: &str, message: &str) {
        let violation = (node.to_string(), invariant.to_string(), message.to_string());
        self.violations.borrow_mut().push(violation);
    }
}
