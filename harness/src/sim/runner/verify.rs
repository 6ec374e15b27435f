//! A fault named as a cause is checked: the same seed and schedule without the
//! faults a finding's cause names is run once more, and the cause keeps naming
//! them only if the finding then goes away. Otherwise the faults were in effect
//! but did not make the failure, and the cause says so instead.
//!
//! For a run with a bug key on, the differential run explains it
//! (`check::differential`); this check is for the rest: a model's own defect,
//! a fixed run that fails, a scenario without bug keys.

use super::result::CauseCheck;
use super::RunResult;
use super::{run_with, Inputs};
use crate::base::action::{Acted, Action};
use crate::base::trail::{Data, Event};
use crate::judge::check::cause::{self, Cause};
use crate::lang::scenario::{Scenario, Variant};
use std::collections::BTreeSet;

/// The schedule entry whose action this trail position is, or which armed the
/// fail point this hit is of.
fn entry_of(events: &[Event], at: usize) -> Option<u32> {
    let event = events.get(at)?;
    if let Data::Action(Acted { fault, .. }) = &event.data {
        return *fault;
    }
    let Data::FailPointHit(hit) = &event.data else {
        return None;
    };
    let node = event.node.as_deref()?;
    events[..at].iter().rev().find_map(|e| {
        if let Data::Action(Acted {
            action: Action::ArmFailPoint { node: n, point, .. },
            fault,
            ..
        }) = &e.data
        {
            (n == node && *point == hit.point).then_some(*fault)
        } else {
            None
        }
    })?
}

/// The schedule entries a cause names: the faults in effect at its event and
/// the fail points whose effects it follows.
fn named(c: &Cause, events: &[Event]) -> BTreeSet<u32> {
    c.faults
        .iter()
        .map(|f| f.event)
        .chain(c.effects.iter().map(|e| e.hit.event))
        .filter_map(|i| entry_of(events, i))
        .collect()
}

/// Check the causes of a failed chaos run's findings by one rerun without the
/// faults they name, and rewrite each cause to say what the rerun showed.
/// `None` (nothing changed) when the run passed, had no schedule, or its
/// causes name no scheduled fault.
pub fn confirm_causes(
    scenario: &Scenario,
    variant: &Variant,
    seed: u64,
    inputs: &Inputs,
    result: &mut RunResult,
) -> Option<CauseCheck> {
    if result.passed {
        return None;
    }
    let target = super::target::Target::of(result)?;
    let json = result.schedule.as_ref()?;
    let mut schedule =
        crate::lang::scenario::load_schedule(scenario, "report.json", &json.to_string()).ok()?;
    let events = &result.trail.events;
    let mut removed = BTreeSet::new();
    for f in &result.findings {
        if let Some(c) = cause::of(f) {
            removed.extend(named(&c, events));
        }
    }
    let removed: Vec<u32> = removed
        .into_iter()
        .filter(|&i| (i as usize) < schedule.faults.len())
        .collect();
    if removed.is_empty() {
        return None;
    }
    let names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
    let described: Vec<String> = removed
        .iter()
        .map(|&i| schedule.faults[i as usize].describe(&names))
        .collect();
    for &i in removed.iter().rev() {
        schedule.faults.remove(i as usize);
    }
    let rerun = run_with(
        scenario,
        variant,
        seed,
        &Inputs {
            schedule: Some(schedule),
            ..inputs.clone()
        },
    );
    let check = CauseCheck {
        removed,
        finding_gone: !target.met_by(&rerun),
        described,
        rerun_outcome: rerun.outcome,
        rerun_digest: rerun.trail_digest.clone(),
    };
    for f in result.findings.iter_mut() {
        let Some(mut c) = cause::of(f) else { continue };
        if named(&c, events).is_empty() {
            continue;
        }
        c.confirmed = Some(check.finding_gone);
        c.summary = if check.finding_gone {
            format!(
                "{} (the same seed and schedule without {} ends {}: checked by one rerun)",
                c.summary,
                check.described.join("; "),
                check.rerun_outcome
            )
        } else {
            format!(
                "not the faults in effect: the same seed and schedule without {} still ends {} (checked by one rerun)",
                check.described.join("; "),
                target.describe()
            )
        };
        cause::set(f, &c);
    }
    Some(check)
}
