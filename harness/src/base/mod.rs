//! What every stage speaks: the actions a run takes and what each means (effect), the trail it records, outcomes, durations, the seed's random streams, the model registry, text and file helpers.

pub mod action;
pub mod duration;
pub mod effect;
pub mod fsio;
pub mod models;
pub mod outcome;
pub mod panic;
pub mod streams;
pub mod text;
pub mod trail;
