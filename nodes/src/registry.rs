//! The one table of models. Adding a model is one module plus one line here.

use crate::api::Model;

static RAFTKV: crate::raftkv::RaftKv = crate::raftkv::RaftKv;

/// Every model, in the order `faultline list` shows them.
pub fn models() -> Vec<&'static dyn Model> {
    let mut models: Vec<&'static dyn Model> = vec![&RAFTKV];
    models.extend(crate::ozone::model());
    models.extend(crate::hdds::model());
    models.extend(crate::zookeeper::model());
    #[cfg(feature = "test-models")]
    models.push(&crate::testing::Faulty);
    models
}

pub fn find(name: &str) -> Option<&'static dyn Model> {
    models().into_iter().find(|m| m.info().name == name)
}

pub fn names() -> Vec<&'static str> {
    models().into_iter().map(|m| m.info().name).collect()
}
