//! Scenario parsing and validation on arbitrary bytes: never a panic, never a hang,
//! bounded memory. Every input ends as a scenario or as located errors.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match faultline::scenario::load_str("fuzz.yaml", text) {
        Ok(scenario) => assert!(!scenario.variants.is_empty() && !scenario.steps.is_empty()),
        Err(faultline::scenario::LoadError::Invalid(d)) => assert!(!d.0.is_empty()),
        Err(faultline::scenario::LoadError::Io(_)) => unreachable!("no I/O on a string"),
    }
});
