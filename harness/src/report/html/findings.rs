//! The findings, the departures from the fixed twin and the cause, as the page
//! lists them.

use super::escape::clip;
use super::{fmt_ms, index_format};
use crate::base::outcome::Outcome;
use crate::judge::check::cause::{self, Cause};
use crate::judge::check::Finding;
use crate::sim::runner::RunResult;

pub(super) struct FindingView<'a> {
    /// The outcome's name, or `fail` for a finding without one (badge class and text).
    pub(super) badge: &'static str,
    pub(super) checker: &'a str,
    pub(super) message: &'a str,
    /// The detail, pretty-printed, when there is one.
    pub(super) detail: Option<String>,
    /// The cause's sentence, when the finding carries one that the page's
    /// Cause section does not already give.
    pub(super) cause: Option<String>,
    /// Later findings of the same checker about the same thing (a mid-run
    /// check and the final check both finding one divergence), not listed again.
    pub(super) again: usize,
}

impl<'a> FindingView<'a> {
    pub(super) fn of(f: &'a Finding) -> FindingView<'a> {
        FindingView {
            badge: f.outcome.map(|o| o.name()).unwrap_or("fail"),
            checker: &f.checker,
            message: &f.message,
            detail: (!f.detail.is_null())
                .then(|| serde_json::to_string_pretty(&f.detail).unwrap_or_else(|_| "?".into())),
            cause: cause::of(f).map(|c| c.summary),
            again: 0,
        }
    }

    /// The run's findings as the page lists them: one entry per checker,
    /// outcome and subject (the key a finding names, else its message), with a
    /// count of the repeats; a cause only where the Cause section does not
    /// already say it, and none when a departure from the fixed twin is the cause.
    pub(super) fn all(r: &'a RunResult, shown: Option<&Cause>) -> Vec<FindingView<'a>> {
        let subject = |f: &'a Finding| {
            f.detail
                .get("key")
                .and_then(|k| k.as_str())
                .unwrap_or(&f.message)
        };
        let mut views: Vec<(FindingView<'a>, FindingId<'a>)> = Vec::new();
        for f in &r.findings {
            let id = (f.checker.as_str(), f.outcome, subject(f));
            if let Some((view, _)) = views.iter_mut().find(|(_, seen)| *seen == id) {
                view.again += 1;
                continue;
            }
            let mut view = FindingView::of(f);
            if r.departed() || view.cause.as_deref() == shown.map(|c| c.summary.as_str()) {
                view.cause = None;
            }
            views.push((view, id));
        }
        views.into_iter().map(|(view, _)| view).collect()
    }
}

/// What makes two findings the same for the page: checker, outcome, subject.
type FindingId<'a> = (&'a str, Option<Outcome>, &'a str);

/// Where a buggy run and its fixed twin first disagree, as the Cause section
/// shows it: both events side by side.
pub(super) struct DepartureView {
    pub(super) key: String,
    pub(super) event: usize,
    pub(super) buggy: Option<SideView>,
    pub(super) fixed: Option<SideView>,
    pub(super) fixed_passed: bool,
}

pub(super) struct SideView {
    pub(super) time: String,
    pub(super) node: String,
    pub(super) kind: String,
    pub(super) detail: String,
}

impl DepartureView {
    pub(super) fn of(d: &crate::judge::check::differential::Departure) -> DepartureView {
        let side = |s: &crate::judge::check::differential::Side| SideView {
            time: fmt_ms(s.t_ms),
            node: s.node.clone().unwrap_or_else(|| "harness".into()),
            kind: s.kind.name(),
            detail: s.detail.clone(),
        };
        DepartureView {
            key: d.key.clone(),
            event: d.event,
            buggy: d.buggy.as_ref().map(side),
            fixed: d.fixed.as_ref().map(side),
            fixed_passed: d.fixed_passed,
        }
    }
}

/// The cause, as the divergence view shows it: the sentence, what each replica
/// did at the index (or to the key), the faults in effect, the fault effects.
pub(super) struct CauseView {
    pub(super) summary: String,
    /// `index 11`, `key dn1/C1`, or empty (fault effects).
    pub(super) about: String,
    pub(super) rows: Vec<CauseRow>,
    /// Trail position, time, node and text of each fault in effect.
    pub(super) faults: Vec<(usize, String, String, String)>,
    /// Trail position of the hit and the effect in words.
    pub(super) effects: Vec<(usize, String)>,
}

pub(super) struct CauseRow {
    pub(super) node: String,
    pub(super) did: String,
    /// The apply event's trail position and time.
    pub(super) at: Option<(usize, String)>,
    /// Positions and words of the storage, hit and later events.
    pub(super) notes: Vec<(usize, String)>,
    pub(super) odd: bool,
}

impl CauseView {
    pub(super) fn of(r: &RunResult, c: &Cause) -> CauseView {
        let format = index_format(r);
        let about = match c.basis {
            cause::Basis::Index => c.index_shown.as_ref().map(|index| format!("index {index}")),
            cause::Basis::Key => c.key.as_ref().map(|key| format!("key {key}")),
            cause::Basis::Faults => None,
        }
        .unwrap_or_default();
        let rows = c
            .replicas
            .iter()
            .map(|rep| {
                let mut notes: Vec<(usize, String)> = Vec::new();
                for e in rep.hits.iter().chain(&rep.storage).chain(&rep.after) {
                    notes.push((
                        e.event,
                        format!(
                            "{} {}: {}",
                            fmt_ms(e.t_ms),
                            e.kind.name(),
                            clip(&e.detail, 160)
                        ),
                    ));
                }
                if let cause::Did::Lost { down, .. } = &rep.did {
                    notes.push((
                        down.event,
                        format!(
                            "{} went down: {}",
                            fmt_ms(down.t_ms),
                            clip(&down.detail, 160)
                        ),
                    ));
                }
                if let (Some(resumed), Some(at)) = (rep.resumed_at, c.index) {
                    if resumed > at {
                        notes.push((
                            usize::MAX,
                            format!(
                                "resumed at index {} without applying {} again",
                                format.show(resumed),
                                format.show(at)
                            ),
                        ));
                    }
                }
                CauseRow {
                    node: rep.node.clone(),
                    did: cause::did_words(&rep.did),
                    at: rep.did.at().map(|a| (a.event, fmt_ms(a.t_ms))),
                    notes,
                    odd: c.odd.contains(&rep.node),
                }
            })
            .collect();
        CauseView {
            summary: c.summary.clone(),
            about,
            rows,
            faults: c
                .faults
                .iter()
                .map(|f| {
                    (
                        f.event,
                        fmt_ms(f.t_ms),
                        f.node.clone().unwrap_or_else(|| "harness".into()),
                        f.detail.clone(),
                    )
                })
                .collect(),
            effects: c
                .effects
                .iter()
                .filter(|f| f.hit.event < r.trail.events.len())
                .map(|f| (f.hit.event, cause::effect_words(f, &r.trail.events, format)))
                .collect(),
        }
    }
}
