//! Placeholder: the hdds model is being written.

use crate::api::Model;

/// The model, once registered.
pub fn model() -> Option<&'static dyn Model> {
    None
}
