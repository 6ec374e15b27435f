//! Event classes: how prominent a trail event is, the symbol that marks it (and
//! the symbols' drawings and words), whether it is a fault, its tooltip text.

use crate::base::action::{Action, ActionResult};
use crate::base::trail::{Data, Event, Kind};
use crate::report::html::derive::{announces_leadership, role_of};
use crate::report::html::fmt_ms;
use faultline_api::Role;

/// How prominent an event is: lower draws first in a crowded row and is named first
/// in the row's text. A `match` without a wildcard: a new event kind must be placed.
pub(super) fn priority(e: &Event) -> u8 {
    match e.kind {
        Kind::Check if check_failed(e) => 0,
        Kind::Network
        | Kind::Crash
        | Kind::Restart
        | Kind::Stop
        | Kind::Start
        | Kind::Transfer
        | Kind::FailPointArm
        | Kind::Heal
        | Kind::Limit => 0,
        Kind::FailPointHit | Kind::FailPointRelease | Kind::FailPointClear | Kind::Check => 1,
        Kind::OpInvoke | Kind::OpOk | Kind::OpError | Kind::OpTimeout => 2,
        Kind::Leader if announces_leadership(e) => 3,
        Kind::Apply
        | Kind::Storage
        | Kind::Service
        | Kind::Submit
        | Kind::Exit
        | Kind::Probe
        | Kind::Note => 4,
        Kind::Leader => 5,
        Kind::Await | Kind::Sleep => 6,
    }
}

/// The symbol (in the SVG's `<defs>`) that marks an event.
pub fn symbol_of(e: &Event) -> &'static str {
    match e.kind {
        Kind::OpInvoke => "m-invoke",
        Kind::OpOk => "m-ok",
        Kind::OpError => "m-err",
        Kind::OpTimeout => "m-timeout",
        Kind::Network if repairs(e) => "m-net-heal",
        Kind::Network => "m-net",
        Kind::Crash => "m-crash",
        Kind::Restart => "m-restart",
        Kind::Stop => "m-stop",
        Kind::Start => "m-start",
        Kind::Transfer => "m-transfer",
        Kind::FailPointArm => "m-arm",
        Kind::FailPointHit if fired(e) => "m-hit",
        Kind::FailPointHit => "m-reach",
        Kind::FailPointClear | Kind::FailPointRelease => "m-fp-release",
        Kind::Sleep => "m-sleep",
        Kind::Await => "m-await",
        Kind::Check if !check_failed(e) => "m-check-ok",
        Kind::Check => "m-check-fail",
        Kind::Heal => "m-heal",
        Kind::Limit => "m-limit",
        Kind::Leader if announces_leadership(e) => "m-leader",
        Kind::Leader if role_of(e).is_some_and(|(r, _)| r == Role::Candidate) => "m-candidate",
        Kind::Leader => "m-follower",
        Kind::Apply => "m-apply",
        Kind::Storage => "m-storage",
        Kind::Service => "m-service",
        Kind::Submit => "m-submit",
        Kind::Exit => "m-exit",
        Kind::Probe => "m-probe",
        Kind::Note => "m-note",
    }
}

/// A mid-run check that found something.
pub fn check_failed(e: &Event) -> bool {
    matches!(&e.data, Data::Check(c) if !c.passed())
}

/// A fail-point hit that fired (not one the probability draw let pass).
fn fired(e: &Event) -> bool {
    matches!(&e.data, Data::FailPointHit(hit) if hit.fired.is_some())
}

/// A network action that repairs: a heal or a release of held messages.
fn repairs(e: &Event) -> bool {
    matches!(&e.data, Data::Action(a) if matches!(a.action, Action::Heal | Action::Release { .. }))
}

/// The op id of a client op's invocation or end, for pairing the two.
pub(super) fn op_id(e: &Event) -> Option<u64> {
    if let Data::OpEnd(end) = &e.data {
        return Some(end.op);
    }
    let Data::Action(acted) = &e.data else {
        return None;
    };
    let (Action::Client { .. }, ActionResult::Sent { op }) = (&acted.action, &acted.result) else {
        return None;
    };
    Some(*op)
}

/// Faults and fail-point firings: what the report's reader looks for first.
pub fn is_fault_mark(e: &Event) -> bool {
    is_fault_kind(e.kind)
}

pub fn is_fault_kind(kind: Kind) -> bool {
    kind.is_fault() || kind == Kind::FailPointHit
}

/// The symbols, each centred on 0,0 with a transparent disc under it so small marks
/// are easy to hover. Also used by the legend.
pub const DEFS: &str = r##"<defs>
<pattern id="hatch" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="#f1f3f5"/><line x1="0" y1="0" x2="0" y2="7" stroke="#cfd5db" stroke-width="2.5"/></pattern>
<marker id="arrow" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#78909c"/></marker>
<marker id="arrow-cut" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M1,1 L7,7 M7,1 L1,7" stroke="#e53935" stroke-width="1.6"/></marker>
<marker id="arrow-held" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#8e24aa"/></marker>
<marker id="arrow-gold" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#b28704"/></marker>
<g id="m-invoke"><circle r="7.5" fill="transparent"/><circle r="3.6" fill="#fff" stroke="#455a64" stroke-width="1.6"/></g>
<g id="m-ok"><circle r="7.5" fill="transparent"/><circle r="4.6" fill="#2e7d32"/><path d="M-2.2,0.1 L-0.6,1.8 L2.4,-1.6" stroke="#fff" stroke-width="1.4" fill="none"/></g>
<g id="m-err"><circle r="7.5" fill="transparent"/><circle r="4.6" fill="#c62828"/><path d="M-1.9,-1.9 L1.9,1.9 M1.9,-1.9 L-1.9,1.9" stroke="#fff" stroke-width="1.4"/></g>
<g id="m-timeout"><circle r="7.5" fill="transparent"/><rect x="-4" y="-4" width="8" height="8" fill="#fff" stroke="#8d6e63" stroke-width="1.8"/><path d="M-1.6,-1.6 L1.6,1.6 M1.6,-1.6 L-1.6,1.6" stroke="#8d6e63" stroke-width="1.2"/></g>
<g id="m-net"><circle r="7.5" fill="transparent"/><path d="M0,-6 L6,0 L0,6 L-6,0 z" fill="#d32f2f"/></g>
<g id="m-net-heal"><circle r="7.5" fill="transparent"/><path d="M0,-6 L6,0 L0,6 L-6,0 z" fill="#2e7d32"/></g>
<g id="m-crash"><circle r="7.5" fill="transparent"/><path d="M-4.6,-4.6 L4.6,4.6 M4.6,-4.6 L-4.6,4.6" stroke="#c62828" stroke-width="2.8" stroke-linecap="round"/></g>
<g id="m-restart"><circle r="7.5" fill="transparent"/><path d="M3.9,-2.6 A4.6,4.6 0 1 0 4.4,1.6" fill="none" stroke="#1565c0" stroke-width="2"/><path d="M5.8,-5.2 L5.2,-0.6 L1.2,-2.8 z" fill="#1565c0"/></g>
<g id="m-stop"><circle r="7.5" fill="transparent"/><rect x="-4.2" y="-4.2" width="8.4" height="8.4" fill="#455a64"/></g>
<g id="m-start"><circle r="7.5" fill="transparent"/><path d="M0,-5.4 L5.2,4.4 L-5.2,4.4 z" fill="#2e7d32"/></g>
<g id="m-transfer"><circle r="7.5" fill="transparent"/><path d="M0,-5.5 L5.5,0 L0,5.5 L-5.5,0 z" fill="#fbc02d" stroke="#8d6e00" stroke-width="1"/></g>
<g id="m-arm"><circle r="7.5" fill="transparent"/><path d="M-2.6,5.5 L-2.6,-5.5 L4.6,-3 L-2.6,-0.4" fill="#ef6c00" stroke="#ef6c00" stroke-width="1.5" stroke-linejoin="round"/></g>
<g id="m-hit"><circle r="7.5" fill="transparent"/><path d="M1.8,-6.4 L-3.8,0.9 L-0.3,0.9 L-1.8,6.4 L3.8,-0.9 L0.3,-0.9 z" fill="#e64a19"/></g>
<g id="m-reach"><circle r="7.5" fill="transparent"/><circle r="3.2" fill="none" stroke="#e64a19" stroke-width="1.3" stroke-dasharray="1.6 1.4"/></g>
<g id="m-fp-release"><circle r="7.5" fill="transparent"/><circle r="4" fill="#fff" stroke="#ef6c00" stroke-width="2"/></g>
<g id="m-sleep"><circle r="7.5" fill="transparent"/><path d="M-4.5,0 L4.5,0" stroke="#90a4ae" stroke-width="1.6"/></g>
<g id="m-await"><circle r="7.5" fill="transparent"/><circle r="3.4" fill="#fff" stroke="#78909c" stroke-width="1.5"/></g>
<g id="m-check-ok"><circle r="7.5" fill="transparent"/><circle r="5.2" fill="#e8f5e9" stroke="#2e7d32" stroke-width="1.5"/><path d="M-2.3,0 L-0.7,1.7 L2.4,-1.7" stroke="#2e7d32" stroke-width="1.5" fill="none"/></g>
<g id="m-check-fail"><circle r="7.5" fill="transparent"/><circle r="5.4" fill="#c62828"/><path d="M0,-3 L0,0.8 M0,2.7 L0,2.8" stroke="#fff" stroke-width="1.8" stroke-linecap="round"/></g>
<g id="m-heal"><circle r="7.5" fill="transparent"/><path d="M-1.6,-5.2 h3.2 v3.6 h3.6 v3.2 h-3.6 v3.6 h-3.2 v-3.6 h-3.6 v-3.2 h3.6 z" fill="#2e7d32"/></g>
<g id="m-limit"><circle r="7.5" fill="transparent"/><path d="M0,-5.8 L5.8,4.6 L-5.8,4.6 z" fill="#c62828"/></g>
<g id="m-leader"><circle r="7.5" fill="transparent"/><path d="M0,-6.4 L1.63,-2.24 L6.09,-1.98 L2.64,0.86 L3.76,5.18 L0,2.77 L-3.76,5.18 L-2.64,0.86 L-6.09,-1.98 L-1.63,-2.24 z" fill="#fbc02d" stroke="#9a7400" stroke-width="0.9" stroke-linejoin="round"/></g>
<g id="m-candidate"><circle r="7.5" fill="transparent"/><circle r="3" fill="#fff" stroke="#b08900" stroke-width="1.4"/></g>
<g id="m-follower"><circle r="7.5" fill="transparent"/><circle r="2" fill="#b0bec5"/></g>
<g id="m-apply"><circle r="7.5" fill="transparent"/><circle r="3" fill="#00897b"/></g>
<g id="m-storage"><circle r="7.5" fill="transparent"/><rect x="-3.2" y="-3.2" width="6.4" height="6.4" fill="#6d4c41"/></g>
<g id="m-service"><circle r="7.5" fill="transparent"/><path d="M-3.2,-3.6 L4,0 L-3.2,3.6 z" fill="#00838f"/></g>
<g id="m-submit"><circle r="7.5" fill="transparent"/><circle r="3" fill="#3949ab"/></g>
<g id="m-exit"><circle r="7.5" fill="transparent"/><rect x="-3.8" y="-3.8" width="7.6" height="7.6" fill="#b71c1c"/></g>
<g id="m-probe"><circle r="7.5" fill="transparent"/><path d="M0,-4 L4,0 L0,4 L-4,0 z" fill="none" stroke="#6a1b9a" stroke-width="1.5"/></g>
<g id="m-note"><circle r="7.5" fill="transparent"/><circle r="2.6" fill="#78909c"/></g>
</defs>"##;

/// The legend's entries: symbol, words. Shown above the diagram.
pub const LEGEND: &[(&str, &str)] = &[
    ("m-invoke", "client op sent"),
    ("m-ok", "op ok"),
    ("m-err", "op error"),
    ("m-timeout", "op timed out"),
    ("m-net", "partition / hold / latency"),
    ("m-net-heal", "network repaired"),
    ("m-crash", "crash"),
    ("m-restart", "restart"),
    ("m-stop", "stop"),
    ("m-start", "start"),
    ("m-transfer", "leadership transfer"),
    ("m-arm", "fail point armed"),
    ("m-hit", "fail point fired"),
    ("m-fp-release", "fail point released / cleared"),
    ("m-leader", "became leader"),
    ("m-candidate", "candidate"),
    ("m-follower", "follower"),
    ("m-apply", "apply"),
    ("m-storage", "storage"),
    ("m-service", "service"),
    ("m-probe", "probe reached"),
    ("m-check-ok", "check passed"),
    ("m-check-fail", "check failed"),
    ("m-heal", "heal phase"),
    ("m-limit", "limit hit"),
];

/// One event as tooltip text.
pub fn event_text(i: usize, e: &Event) -> String {
    let mut text = format!(
        "#{i} · {} · {} · {}\n{}",
        fmt_ms(e.t_ms),
        e.node.as_deref().unwrap_or("harness"),
        e.kind.name(),
        e.detail
    );
    if !e.keys().is_empty() {
        text.push_str(&format!("\nkeys: {}", e.keys().join(", ")));
    }
    if let Some(line) = e.line {
        text.push_str(&format!("\nscenario line {line}"));
    }
    text
}
