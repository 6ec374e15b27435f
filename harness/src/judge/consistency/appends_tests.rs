//! The appends check against the search: on random small histories of one key
//! (appends of different texts, reads of what a real register would answer,
//! of an older or reordered text, or of nothing, lost appends and reads, any
//! overlap), both give the same verdict, and every violation the check names
//! fails on its own.

use super::against_search::{agree, Rng};
use super::register::RegisterOp;
use super::spec::Entry;
use crate::judge::history::{CompletionKind, History};
use serde_json::{json, Value};

/// An op in flight: its history id, its append text (`None`: a read), and
/// whether an append has taken effect yet.
struct Open {
    id: usize,
    text: Option<String>,
    applied: bool,
}

/// Up to seven ops on one key. Each append takes effect at its invoke or at
/// its completion (a lost one maybe never); a read answers the text as it is,
/// a shorter prefix, the appended texts in another order, or "not found".
fn random_history(rng: &mut Rng) -> History {
    let n = 1 + rng.below(7) as usize;
    let mut h = History::new();
    let mut text = String::new();
    let mut appended: Vec<String> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let (mut started, mut t) = (0usize, 0u64);
    while started < n || !open.is_empty() {
        t += 1_000_000;
        if started < n && (open.is_empty() || rng.below(2) == 0) {
            let append = rng.below(2) == 0;
            let (f, args, own) = if append {
                let own = format!("+{}", started + 1);
                (
                    "append",
                    json!({"key": "k", "value": own.clone()}),
                    Some(own),
                )
            } else {
                ("get", json!({"key": "k"}), None)
            };
            let id = h.invoke(started as u64, f, args, None, t).unwrap();
            let mut op = Open {
                id,
                text: own,
                applied: false,
            };
            if let Some(own) = op.text.as_ref().filter(|_| rng.below(2) == 0) {
                text.push_str(own);
                appended.push(own.clone());
                op.applied = true;
            }
            open.push(op);
            started += 1;
        } else {
            let op = open.swap_remove(rng.below(open.len() as u64) as usize);
            let lost = rng.below(5) == 0;
            let (kind, value, error) = match (&op.text, lost) {
                (Some(own), _) => {
                    if !op.applied && (!lost || rng.below(2) == 0) {
                        text.push_str(own);
                        appended.push(own.clone());
                    }
                    if lost {
                        (CompletionKind::Info, Value::Null, Some("timeout"))
                    } else {
                        (CompletionKind::Ok, Value::Null, None)
                    }
                }
                (None, true) => (CompletionKind::Info, Value::Null, Some("timeout")),
                (None, false) => {
                    let answer = match rng.below(6) {
                        0 => String::new(),
                        1 if !appended.is_empty() => {
                            let k = rng.below(appended.len() as u64) as usize;
                            appended[..k].concat()
                        }
                        2 if appended.len() > 1 => {
                            let mut shuffled = appended.clone();
                            shuffled.swap(0, appended.len() - 1);
                            shuffled.concat()
                        }
                        _ => text.clone(),
                    };
                    if answer.is_empty() {
                        (CompletionKind::Ok, Value::Null, Some("not found"))
                    } else {
                        (CompletionKind::Ok, json!(answer), None)
                    }
                }
            };
            h.complete(op.id, kind, value, error.map(str::to_string), t)
                .unwrap();
        }
    }
    h
}

#[test]
fn the_appends_check_and_the_search_agree_on_every_small_history() {
    let with_appends = |entries: &[Entry<RegisterOp>]| {
        entries
            .iter()
            .any(|e| matches!(e.op, RegisterOp::Append(_)))
    };
    let seen = agree(23, 20_000, random_history, with_appends);
    // Both verdicts are well represented, and the check decided the keys with
    // appends (the others are the zones' or the search's).
    assert!(
        seen.passed > 5_000 && seen.failed > 3_000,
        "{} passed, {} failed",
        seen.passed,
        seen.failed
    );
    assert!(
        seen.decided > 12_000,
        "{} decided with appends",
        seen.decided
    );
}
