//! Fail-point declarations in one line each, with the chaos domain that suits
//! the kind of point.

use crate::chaos::PointChaos;
use crate::faults::FailPointInfo;

const LOST: &[&str] = &["lost"];

/// A fail point where a message arrives or leaves a node: an error loses it (the
/// sender's deadline runs out), a stall holds it in flight. Chaos may do both,
/// as a network does (a stall of 5 ms to 2 s).
pub const fn message_point(name: &'static str, summary: &'static str) -> FailPointInfo {
    message_point_within(name, summary, 2_000)
}

/// A [`message_point`] whose chaos holds a message at most `stall_max_ms` (a
/// protocol whose timers are shorter than 2 s, where a longer hold would only
/// test its timeouts).
pub const fn message_point_within(
    name: &'static str,
    summary: &'static str,
    stall_max_ms: u64,
) -> FailPointInfo {
    FailPointInfo {
        name,
        summary,
        errors: LOST,
        stall: true,
        panic: false,
        chaos: PointChaos {
            errors: LOST,
            stall_ms: Some((5, stall_max_ms)),
            ..PointChaos::NONE
        },
    }
}

/// A fail point on a node's disk or its own processing: a stall is a slow disk,
/// a panic the process dying there; an error (`errors`) only where the library
/// survives one. Chaos stalls (5 ms to 2 s) and panics, never errors: a library
/// that treats every storage error as fatal would test nothing but that.
pub const fn disk_point(
    name: &'static str,
    summary: &'static str,
    errors: &'static [&'static str],
) -> FailPointInfo {
    FailPointInfo {
        name,
        summary,
        errors,
        stall: true,
        panic: true,
        chaos: PointChaos {
            stall_ms: Some((5, 2_000)),
            panic: true,
            ..PointChaos::NONE
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_point_loses_or_holds_and_a_disk_point_stalls_or_dies() {
        let message = message_point("m", "a message");
        assert_eq!(message.errors, &["lost"]);
        assert!(message.stall && !message.panic);
        assert_eq!(message.chaos.errors, &["lost"]);
        assert_eq!(message.chaos.stall_ms, Some((5, 2_000)));
        let short = message_point_within("s", "a short hold", 1_000);
        assert_eq!(short.chaos.stall_ms, Some((5, 1_000)));
        assert_eq!((short.errors, short.stall), (message.errors, message.stall));
        let disk = disk_point("d", "a disk", &["io"]);
        assert_eq!(disk.errors, &["io"]);
        assert!(disk.stall && disk.panic);
        assert!(disk.chaos.errors.is_empty() && disk.chaos.panic);
    }
}
