//! Probes ("sometimes" conditions): named preconditions of a model's mechanisms,
//! checked where the code decides them, so that a run can say it reached them
//! (the window a bug needs, a rare branch). A node reports a hit with
//! [`NodeCtx::probe`](crate::NodeCtx::probe); the hit lands on the trail as a typed
//! probe event, at most once per probe per incarnation of the node (a probe on a
//! per-heartbeat path must not flood the trail). A probe is an observation: it
//! never changes what the model does.
//!
//! A model declares its probes in one table with [`probes!`](crate::probes): an
//! enum whose variants are the only values [`NodeCtx::probe`](crate::NodeCtx::probe)
//! takes, and the list `ALL` the model hands to
//! [`ModelInfo::probes`](crate::ModelInfo::probes). So a node cannot report a
//! probe its model does not declare. Names are `snake_case` and stable: sweeps,
//! the coverage ledger and CI key on them.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use crate::env::Env;
use crate::event::NodeEvent;

/// One declared probe.
#[derive(Debug, PartialEq, Eq)]
pub struct ProbeInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// A typical chaos run is not expected to reach it: a sweep that never hits a
    /// probe fails unless the probe is rare. Worth steering a search towards.
    pub rare: bool,
}

/// Implemented by each model's probe enum (declared with [`probes!`](crate::probes)).
pub trait Probe: Copy + 'static {
    fn info(self) -> &'static ProbeInfo;
}

/// Declares a model's probes in one table: an enum with one variant per probe, a
/// static [`ProbeInfo`] for each, [`Probe`] for the enum, and `ALL` (every
/// variant, in table order) with `infos()` for `ModelInfo::probes`.
///
/// ```
/// faultline_api::probes! {
///     /// The example's probes.
///     pub enum ExampleProbe {
///         PurgeWindow {
///             name: "purge_window",
///             rare: true,
///             summary: "a purge applied between two flushes",
///         },
///     }
/// }
/// use faultline_api::Probe;
/// assert_eq!(ExampleProbe::PurgeWindow.info().name, "purge_window");
/// assert_eq!(ExampleProbe::infos().len(), 1);
/// ```
#[macro_export]
macro_rules! probes {
    (
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident {
            $(
                $variant:ident {
                    name: $name:literal,
                    rare: $rare:literal,
                    summary: $summary:literal $(,)?
                }
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        $vis enum $enum {
            $(
                #[doc = $summary]
                $variant,
            )+
        }

        // A model uses both; a table declared for a test may not.
        #[allow(dead_code, reason = "a table declared for a test may not use both")]
        impl $enum {
            /// Every probe of the table, in table order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),+];

            /// The declarations, for `ModelInfo::probes`.
            pub fn infos() -> Vec<&'static $crate::ProbeInfo> {
                Self::ALL.iter().map(|p| $crate::Probe::info(*p)).collect()
            }
        }

        impl $crate::Probe for $enum {
            fn info(self) -> &'static $crate::ProbeInfo {
                match self {
                    $(
                        $enum::$variant => {
                            static INFO: $crate::ProbeInfo = $crate::ProbeInfo {
                                name: $name,
                                summary: $summary,
                                rare: $rare,
                            };
                            &INFO
                        }
                    )+
                }
            }
        }
    };
}

/// Where one incarnation of a node reports probe hits. Cheap to clone: the
/// node's tasks and protocol shells share one set of probes already reported,
/// which lives as long as the incarnation (a restart reports afresh).
#[derive(Clone)]
pub struct Probes {
    node: Rc<str>,
    env: Rc<dyn Env>,
    reported: Rc<RefCell<BTreeSet<&'static str>>>,
}

impl Probes {
    pub(crate) fn new(node: &str, env: Rc<dyn Env>) -> Probes {
        Probes {
            node: node.into(),
            env,
            reported: Rc::default(),
        }
    }

    /// The probe's condition holds here: on the trail the first time in this
    /// incarnation, ignored after that.
    pub fn hit(&self, probe: impl Probe) {
        let info = probe.info();
        if !self.reported.borrow_mut().insert(info.name) {
            return;
        }
        self.env.record(
            &self.node,
            NodeEvent::Probe {
                probe: info.name.to_string(),
                text: format!("probe {}: {}", info.name, info.summary),
            },
        );
    }
}

/// What every model's probe table must satisfy: names `snake_case` and unique,
/// summaries present. `Err` says which rule a probe breaks.
pub fn check_probe_table(probes: &[&'static ProbeInfo]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for probe in probes {
        let name = probe.name;
        let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
            && !name.ends_with('_')
            && !name.contains("__")
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !snake {
            return Err(format!("probe `{name}`: the name is not snake_case"));
        }
        if !seen.insert(name) {
            return Err(format!("probe `{name}` is declared twice"));
        }
        if probe.summary.trim().is_empty() {
            return Err(format!("probe `{name}` has no summary"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::probes! {
        /// A table for the tests.
        enum TestProbe {
            First {
                name: "first_probe",
                rare: false,
                summary: "the first condition",
            },
            Second {
                name: "second_probe",
                rare: true,
                summary: "the second condition",
            },
        }
    }

    #[test]
    fn the_table_declares_every_variant_in_order() {
        assert_eq!(TestProbe::ALL, &[TestProbe::First, TestProbe::Second]);
        let infos = TestProbe::infos();
        let names: Vec<&str> = infos.iter().map(|p| p.name).collect();
        assert_eq!(names, ["first_probe", "second_probe"]);
        assert!(!TestProbe::First.info().rare);
        assert!(TestProbe::Second.info().rare);
        assert_eq!(check_probe_table(&infos), Ok(()));
    }

    static GOOD: ProbeInfo = ProbeInfo {
        name: "a_good_name2",
        summary: "fine",
        rare: false,
    };
    static DOTTED: ProbeInfo = ProbeInfo {
        name: "purge.window",
        summary: "a dotted name",
        rare: false,
    };
    static UPPER: ProbeInfo = ProbeInfo {
        name: "Purge_window",
        summary: "an upper-case letter",
        rare: false,
    };
    static TRAILING: ProbeInfo = ProbeInfo {
        name: "purge_",
        summary: "a trailing underscore",
        rare: false,
    };
    static SILENT: ProbeInfo = ProbeInfo {
        name: "silent",
        summary: "  ",
        rare: false,
    };

    #[test]
    fn a_table_with_a_bad_name_a_twin_or_no_summary_is_refused() {
        assert_eq!(check_probe_table(&[&GOOD]), Ok(()));
        for bad in [&DOTTED, &UPPER, &TRAILING] {
            let error = check_probe_table(&[&GOOD, bad]).unwrap_err();
            assert!(error.contains("not snake_case"), "{error}");
        }
        let error = check_probe_table(&[&GOOD, &GOOD]).unwrap_err();
        assert!(error.contains("declared twice"), "{error}");
        let error = check_probe_table(&[&SILENT]).unwrap_err();
        assert!(error.contains("no summary"), "{error}");
    }
}
