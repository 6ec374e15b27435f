//! The chaos fault kinds: the one table of their names. A chaos section's
//! `faults:` keys, the order a chaos section draws them in, the schema's list,
//! the model domains' exclusions and the coverage ledger all read it; every
//! reader of a kind matches over [`FaultKind`], so a new row is a compile error
//! wherever a kind must be handled (`ChaosKind`, the scheduled `Fault`, the
//! chaos reader, the nemesis).

/// Each row: the variant, the name files and reports write, and the fault step
/// that writes such a fault in a schedule.
macro_rules! fault_kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, step $step:literal;)+) => {
        /// A kind of fault the nemesis draws (`chaos: {faults: {KIND: WEIGHT}}`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum FaultKind {
            $($(#[$doc])* $variant,)+
        }

        impl FaultKind {
            /// Every kind, in the order the table lists them (the order a
            /// chaos section holds its faults in).
            pub const ALL: &[FaultKind] = &[$(FaultKind::$variant,)+];

            /// The kind as files and reports write it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(FaultKind::$variant => $name,)+
                }
            }

            /// The fault step that writes a fault of this kind.
            pub const fn step(self) -> &'static str {
                match self {
                    $(FaultKind::$variant => $step,)+
                }
            }
        }
    };
}

fault_kinds! {
    /// Two random groups, cut both ways.
    Partition = "partition", step "partition";
    /// One node's messages to some others dropped.
    OneWay = "oneway", step "partition";
    /// The messages between two nodes held, then delivered.
    Hold = "hold", step "hold";
    /// A link's delay raised.
    Latency = "latency", step "latency";
    Crash = "crash", step "crash";
    Restart = "restart", step "restart";
    Stop = "stop", step "stop";
    /// Leadership handed to another node (a model with leader transfer only).
    TransferLeader = "transfer_leader", step "transfer_leader";
    /// A fail point of the model armed.
    FailPoint = "failpoint", step "failpoint";
}

impl FaultKind {
    /// The kind a file names, if any.
    pub fn from_name(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Every name, in the table's order.
    pub fn names() -> impl Iterator<Item = &'static str> + Clone {
        FaultKind::ALL.iter().map(|k| k.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_by_its_name_and_only_it() {
        for &kind in FaultKind::ALL {
            assert_eq!(FaultKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(FaultKind::from_name("partitions"), None);
        let names: std::collections::BTreeSet<_> = FaultKind::names().collect();
        assert_eq!(names.len(), FaultKind::ALL.len());
        // The order a chaos section draws in is the table's.
        let mut sorted = FaultKind::ALL.to_vec();
        sorted.sort();
        assert_eq!(sorted, FaultKind::ALL);
    }
}
