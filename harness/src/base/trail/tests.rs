//! Tests of the trail: events, their payloads' text, the digest, the JSON form.

use super::*;
use crate::base::action::{ActionResult, FaultAction};
use faultline_api::{ApplyResult, Role};

fn note(t_ms: u64, text: &str) -> Event {
    Event::new(t_ms, Some("n1"), None, Data::Node(NodeEvent::note(text)))
}

#[test]
fn digest_is_order_and_content_sensitive() {
    let mut a = Trail::default();
    a.push(note(1, "x"));
    a.push(note(2, "y"));
    let mut b = Trail::default();
    b.push(note(1, "x"));
    b.push(note(2, "y"));
    assert_eq!(a.digest(), b.digest());
    b.events[1].detail = "z".into();
    assert_ne!(a.digest(), b.digest());
    assert_eq!(first_difference(&a.events, &b.events).unwrap().0, 1);
}

#[test]
fn finish_sorts_stably_by_time() {
    let mut t = Trail::default();
    t.push(note(5, "a"));
    t.push(note(3, "b"));
    t.push(note(5, "c"));
    t.finish();
    let details: Vec<_> = t.iter().map(|e| e.detail.as_str()).collect();
    assert_eq!(details, ["b", "a", "c"]);
}

#[test]
fn every_kind_is_listed_once_and_names_itself() {
    let names: std::collections::BTreeSet<String> = Kind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(names.len(), Kind::ALL.len());
    for &kind in Kind::ALL {
        let back: Kind = serde_json::from_value(serde_json::json!(kind.name())).unwrap();
        assert_eq!(back, kind);
    }
}

fn samples() -> Vec<Event> {
    vec![
        Event::new(
            1,
            Some("zk2"),
            None,
            Data::Node(NodeEvent::Leader {
                role: Role::Leader,
                term: 2,
                leader: Some("zk2".into()),
                text: "leader term 2: NEWLEADER acked by zk1, zk2, last zxid 0x100000003".into(),
            }),
        ),
        Event::new(
            2,
            Some("om2"),
            None,
            Data::Node(NodeEvent::Apply {
                term: Some(1),
                index: Some(9),
                what: "CreateSnapshot /v/b/s1".into(),
                result: ApplyResult::Failed {
                    error: "INTERNAL_ERROR".into(),
                },
                keys: vec!["chain./v/b".into()],
                text: "apply (t:1, i:9) CreateSnapshot /v/b/s1 (client) -> INTERNAL_ERROR".into(),
            }),
        ),
        Event::new(
            3,
            Some("n1"),
            Some(7),
            Data::Action(Acted {
                action: Action::Crash { node: "n1".into() },
                result: ActionResult::Done,
                fault: None,
            }),
        ),
        Event::new(4, None, None, Data::Heal(HealStep::Ended { settled: true })),
        Event::new(
            5,
            Some("n1"),
            None,
            Data::FailPointHit(Hit {
                point: "apply".into(),
                fired: Some(FaultAction::StallUntilRelease),
                probability: None,
            }),
        ),
    ]
}

#[test]
fn events_round_trip_with_their_kind_detail_and_payload() {
    for event in samples() {
        let line = serde_json::to_string(&event).unwrap();
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(back, event, "{line}");
        assert_eq!(back.kind, back.data.kind());
    }
    let events = samples();
    assert_eq!(events[0].kind, Kind::Leader);
    assert!(events[0].detail.starts_with("leader term 2: NEWLEADER"));
    assert_eq!(events[2].detail, "crash (unsynced writes lost)");
    assert_eq!(
        events[2].action(),
        Some(&Action::Crash { node: "n1".into() })
    );
    assert_eq!(events[4].detail, "apply fired: stall until release");
}

#[test]
fn typed_fields_are_found_by_name() {
    let events = samples();
    assert_eq!(events[0].field("term"), Some(serde_json::json!(2)));
    assert_eq!(events[0].field("role"), Some(serde_json::json!("leader")));
    assert_eq!(events[1].field("index"), Some(serde_json::json!(9)));
    assert_eq!(
        events[1].field("error"),
        Some(serde_json::json!("INTERNAL_ERROR"))
    );
    assert_eq!(events[2].field("node"), Some(serde_json::json!("n1")));
    assert_eq!(events[3].field("settled"), Some(serde_json::json!(true)));
    assert_eq!(events[4].field("point"), Some(serde_json::json!("apply")));
    assert_eq!(events[0].field("nope"), None);
    assert_eq!(
        events[1].field("result"),
        Some(serde_json::json!({"failed": {"error": "INTERNAL_ERROR"}}))
    );
    // A field named like its variant's tag is the field, not the tag.
    let probe = NodeEvent::Probe {
        probe: "purge.window".into(),
        text: "probe purge.window: ...".into(),
    };
    let probe = Event::new(6, Some("om1"), None, Data::Node(probe));
    assert_eq!(probe.kind, Kind::Probe);
    assert_eq!(
        probe.field("probe"),
        Some(serde_json::json!("purge.window"))
    );
    assert_eq!(events[1].keys(), ["chain./v/b".to_string()]);
}

#[test]
#[should_panic(expected = "kind follows from its payload")]
fn a_kind_that_disagrees_with_the_payload_is_refused() {
    let mut event = note(1, "x");
    event.kind = Kind::Apply;
    Trail::default().push(event);
}
