//! The fail points of the foca model (its one registry of names) and its probes.
//!
//! The points sit where the node hands bytes and timer events to and from foca,
//! which is sans-IO: `send` before a datagram foca produced goes out, `receive`
//! before a datagram reaches `Foca::handle_data`, `timer` before a timer event
//! foca scheduled reaches `Foca::handle_timer`. An error at `send` or `receive`
//! loses the datagram; a stall holds it (or the timer event) in flight.

use faultline_api::kit::message_point_within;
use faultline_api::{FailPoint, FailPointInfo, PointChaos};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    Send,
    Receive,
    Timer,
}

/// The latest chaos makes a timer event (the down bound allows for it).
pub const TIMER_LATE_MAX_MS: u64 = 300;

// Loss and delay are what UDP does; SWIM is built to survive them. A message
// is held at most 1 s.
static SEND: FailPointInfo = message_point_within(
    "send",
    "a datagram foca produced leaves this node (error: lost; stall: held in flight)",
    1_000,
);
static RECEIVE: FailPointInfo = message_point_within(
    "receive",
    "a datagram reaches this node, before Foca::handle_data (error: lost; stall: held)",
    1_000,
);
static TIMER: FailPointInfo = FailPointInfo {
    name: "timer",
    summary: "a timer event foca scheduled fires, before Foca::handle_timer (stall: it fires late)",
    errors: &[],
    stall: true,
    panic: false,
    // A late timer is a busy or paused process. A lost one is not in the
    // domain: foca's runtime contract is that every submitted event is handed
    // back (a lost ProbeRandomMember would end probing for good).
    chaos: PointChaos::stall(5, TIMER_LATE_MAX_MS),
};

impl FailPoint for Point {
    fn info(self) -> &'static FailPointInfo {
        match self {
            Point::Send => &SEND,
            Point::Receive => &RECEIVE,
            Point::Timer => &TIMER,
        }
    }
}

pub fn all() -> Vec<&'static FailPointInfo> {
    [Point::Send, Point::Receive, Point::Timer]
        .into_iter()
        .map(Point::info)
        .collect()
}

faultline_api::probes! {
    /// Where foca's membership paths begin, as the node sees them.
    pub enum FocaProbe {
        MemberDown {
            name: "foca_member_down",
            rare: false,
            summary: "a node learned a member Down (Notification::MemberDown)",
        },
        TurnUndeadFromDown {
            name: "foca_turn_undead_from_down",
            rare: true,
            summary: "a TurnUndead arrived from a member this node holds Down: the sides of a healed partition see each other Down (caio/foca#25)",
        },
        TurnUndeadWhileUp {
            name: "foca_turn_undead_while_up",
            rare: true,
            summary: "a TurnUndead arrived from a member that does not hold this node's identity Down: foca's ChangeSuspectToDown sends one even when the suspicion was refuted and nothing was declared Down, and the node renews a live identity",
        },
        IdentityRenewed {
            name: "foca_identity_renewed",
            rare: true,
            summary: "a node renewed its identity to rejoin (Notification::Rejoin)",
        },
        Idle {
            name: "foca_idle",
            rare: true,
            summary: "a node has no active member left (Notification::Idle)",
        },
    }
}
