//! The run report on hand-made results: escaping, lanes, marks, the divergence
//! view, bounds on big runs, determinism.

use super::*;
use crate::base::action::{Action, ActionResult};
use crate::base::trail::sample::*;
use crate::base::trail::{Data, Event, Trail};
use crate::judge::check::Finding;
use crate::sim::runner::env::OpRecord;
use crate::sim::runner::{FinalNode, MessageCount};
use faultline_api::{NodeEvent, Observation, OpResult, Role};
use serde_json::json;
use std::collections::BTreeSet;

fn final_node(name: &str, state: &[(&str, &str)]) -> FinalNode {
    let mut observation = Observation {
        role: Some("follower".into()),
        term: Some(2),
        applied: Some(8),
        ..Observation::default()
    };
    for (k, v) in state {
        observation.state.insert(k.to_string(), v.to_string());
    }
    FinalNode {
        name: name.into(),
        role: "replica".into(),
        up: true,
        starts: 1,
        observation,
    }
}

pub(crate) fn result(nodes: Vec<FinalNode>, events: Vec<Event>) -> RunResult {
    RunResult {
        schema_version: crate::sim::runner::REPORT_SCHEMA_VERSION,
        harness_version: "0.1.0".into(),
        scenario: "hand-made".into(),
        file: "scenarios/hand-made.yaml".into(),
        file_absolute: String::new(),
        scenario_sha256: "ab".repeat(32),
        model: "raftkv".into(),
        variant: "buggy".into(),
        target: None,
        bugs: Default::default(),
        params: serde_json::Value::Null,
        seed: 7,
        outcome: Outcome::Converged,
        expected: vec![Outcome::Converged],
        passed: true,
        known_defects: Vec::new(),
        trail_digest: "cd".repeat(32),
        sim_elapsed_ms: events.last().map(|e| e.t_ms + 1000).unwrap_or(0),
        sim_steps: 10,
        wall_ms: 3,
        findings: vec![],
        unjudged: Vec::new(),
        sequence: Vec::new(),
        differential: Vec::new(),
        cause_check: None,
        fail_points: vec![],
        bug_overrides: Default::default(),
        replay: "faultline run scenarios/hand-made.yaml --variant buggy --seed 7".into(),
        param_overrides: Vec::new(),
        nodes,
        ops: vec![],
        clients: Default::default(),
        messages_total: 0,
        messages: vec![],
        coverage: Default::default(),
        swarm: None,
        schedule: None,
        schedule_given: false,
        trail: Trail { events },
    }
}

/// A canary-like diverged run: n3 isolated, writes on both sides of the cut.
fn diverged() -> RunResult {
    let ok = OpResult::ok;
    let events = vec![
        leader(200, "n3", 1),
        invoke(201, "n3", 1, "put k=start"),
        answer(201, "n3", 1, "put k=start", ok()),
        done(202, partition(&[&["n3"], &["n1", "n2"]])),
        invoke(202, "n3", 2, "put k=minority"),
        answer(202, "n3", 2, "put k=minority", ok()),
        leader(450, "n1", 2),
        note(500, "n2", "compacted link k2"),
        invoke(2203, "n1", 3, "put k=majority"),
        answer(2203, "n1", 3, "put k=majority", ok()),
        act(2204, Action::Heal, ActionResult::Healed { links: 2 }),
        apply(2205, "n2", 8, &["k"], "apply index 8"),
        done(2300, Action::Crash { node: "n2".into() }),
        done(2400, Action::Start { node: "n2".into() }),
        heal_began(3400),
        heal_ended(4400),
    ];
    let mut r = result(
        vec![
            final_node("n1", &[("k", "majority"), ("k2", "x")]),
            final_node("n2", &[("k", "majority"), ("k2", "x")]),
            final_node("n3", &[("k", "minority"), ("k2", "y")]),
        ],
        events,
    );
    r.outcome = Outcome::Diverged;
    r.expected = vec![Outcome::Diverged, Outcome::Violated];
    r.findings = vec![
        Finding::new(
            "divergence",
            Some(Outcome::Diverged),
            "replicas disagree at applied index 8: first differing key `k`",
        )
        .with_detail(json!({
            "applied": 8,
            "key": "k",
            "values": {"n1": "majority", "n2": "majority", "n3": "minority"},
            "differing_keys": 2,
        })),
        Finding::new(
            "invariant:applied_entries_stable",
            Some(Outcome::Violated),
            "applied_entries_stable: n3: applied index 6 (term 1) now holds a term-2 entry",
        ),
    ];
    r.messages = vec![
        MessageCount {
            t_ms: 100,
            from: "n1".into(),
            to: "n2".into(),
            kind: "Append".into(),
            count: 3,
        },
        MessageCount {
            t_ms: 300,
            from: "n3".into(),
            to: "n1".into(),
            kind: "RequestVote".into(),
            count: 1,
        },
    ];
    r.messages_total = 4;
    r
}

/// (class, data-ev) of every diagram mark.
fn marks(page: &str) -> Vec<(String, String)> {
    page.match_indices(r#"<g class="mk"#)
        .map(|(at, _)| {
            let tag = &page[at..at + page[at..].find('>').unwrap()];
            let attr = |name: &str| {
                let start = tag.find(&format!(r#"{name}=""#)).unwrap() + name.len() + 2;
                tag[start..start + tag[start..].find('"').unwrap()].to_string()
            };
            (attr("class"), attr("data-ev"))
        })
        .collect()
}

fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!(r#"<section id="{id}""#))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = start + page[start..].find("</section>").unwrap();
    &page[start..end]
}

#[test]
fn hostile_scenario_data_cannot_inject_markup_or_script() {
    let evil_node = "<script>alert(1)</script>";
    let quote_node = "\" onmouseover=\"alert(2)";
    let svg_node = "</svg><img src=x onerror=alert(3)>";
    let key = "]]><script>alert(4)</script>";
    let value = "</script><script>alert(5)</script>'";
    let blink = NodeEvent::Leader {
        role: Role::Leader,
        term: 1,
        leader: None,
        text: "leader term 1 <blink>".into(),
    };
    let events = vec![
        node(1, evil_node, blink),
        done(2, partition(&[&[evil_node], &[svg_node]])),
        apply(
            3,
            quote_node,
            1,
            &[key],
            &format!("put {key}={value} -> ok"),
        ),
        harness(
            4,
            Some(svg_node),
            Data::Exited {
                reason: "crash </text></svg>]]>".into(),
            },
        ),
        note(5, "stranger<kbd>", "not a node of the run"),
    ];
    let mut r = result(
        vec![
            final_node(evil_node, &[(key, value)]),
            final_node(quote_node, &[(key, "other")]),
            final_node(svg_node, &[]),
        ],
        events,
    );
    r.scenario = "<marquee>scenario</marquee>".into();
    r.variant = "v\"'><script>".into();
    r.file = "x'\"<>.yaml".into();
    r.replay = "faultline run 'x'\\''\"<>.yaml'".into();
    r.model = "<model>".into();
    r.outcome = Outcome::Diverged;
    r.findings = vec![Finding::new("divergence<", Some(Outcome::Diverged), value)
        .with_detail(json!({"key": key, "values": {evil_node: value, quote_node: "other"}}))];
    r.messages = vec![MessageCount {
        t_ms: 0,
        from: evil_node.into(),
        to: quote_node.into(),
        kind: "<Vote>".into(),
        count: 2,
    }];
    r.nodes[0]
        .observation
        .facts
        .insert("<fact>".into(), value.into());
    let page = run_html(&r);
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert_eq!(page.matches("</script>").count(), 1);
    assert_eq!(
        page.matches("<svg").count(),
        page.matches("</svg>").count(),
        "no svg element opened or closed by data"
    );
    for forbidden in [
        "<img",
        "<marquee>",
        "<blink>",
        "<kbd>",
        "<model>",
        "<Vote>",
        "<fact>",
        "]]>",
        "\" onmouseover",
        "</text></svg>",
    ] {
        assert!(
            !page.contains(forbidden),
            "unescaped `{forbidden}` in the page"
        );
    }
    // The escaped text is still there for the reader.
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("]]&gt;&lt;script&gt;alert(4)"));
    // And the only script that may run is the page's own, by hash.
    assert!(page.contains(&format!(
        "content=\"{}\"",
        esc(&escape::csp(assets::SCRIPT))
    )));
}

#[test]
fn the_diagram_has_one_lane_per_node_in_order() {
    let names = ["a", "b", "c", "d", "e"];
    let r = result(
        names.iter().map(|n| final_node(n, &[])).collect(),
        vec![leader(10, "c", 1)],
    );
    let page = run_html(&r);
    assert_eq!(page.matches(r#"<g class="lane""#).count(), 5);
    let order: Vec<usize> = names
        .iter()
        .map(|n| page.find(&format!(r#"data-node="{n}">"#)).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "lanes in node order");
}

#[test]
fn every_fault_in_the_trail_has_a_mark_and_every_event_is_drawn() {
    let r = diverged();
    let page = run_html(&r);
    let marks = marks(&page);
    let drawn: BTreeSet<usize> = marks
        .iter()
        .flat_map(|(_, ev)| ev.split(',').map(|i| i.parse::<usize>().unwrap()))
        .collect();
    assert_eq!(drawn.len(), r.trail.len(), "one mark per trail event");
    for (i, e) in r.trail.events.iter().enumerate() {
        if diagram::is_fault_mark(e) {
            assert!(
                marks
                    .iter()
                    .any(|(class, ev)| class.split(' ').any(|c| c == "fault")
                        && *ev == i.to_string()),
                "fault #{i} ({}) has no fault mark",
                e.detail
            );
        }
    }
    // The partition and the crash are bands, the heal phase too.
    assert!(page.contains(r#"<g class="band band-partition" data-ev="3">"#));
    assert!(page.contains(r#"class="band band-down" data-ev="12""#));
    assert!(page.contains(r#"<g class="band band-heal""#));
    assert!(page.contains("partition n3 | n1, n2"));
    // n3's vote request was sent on a cut link: drawn as dropped.
    assert!(page.contains(r#"<line class="msg cut""#));
    assert!(page.contains("dropped by the network"));
    // Leader spans are marked with their terms.
    assert!(page.contains(">T1</text>") && page.contains(">T2</text>"));
}

#[test]
fn the_divergence_view_shows_the_key_the_replicas_the_invariant_and_the_events() {
    let r = diverged();
    let page = run_html(&r);
    let view = section(&page, "divergence");
    assert!(view.contains(r#"First differing key: <code class="key">k</code>"#));
    assert!(view.contains("at applied index <b>8</b>"));
    assert!(view.contains("(2 keys differ)"));
    // Replicas side by side, in node order, the odd one out marked.
    let n1 = view.find(r#"<div class="rname">n1</div>"#).unwrap();
    let n3 = view.find(r#"<div class="rname">n3</div>"#).unwrap();
    assert!(n1 < n3);
    assert!(view.contains(
        r#"<div class="replica odd"><div class="rname">n3</div><div class="rval">minority</div><div class="rnote">differs from the others</div>"#
    ));
    assert_eq!(
        view.matches(r#"<div class="rval">majority</div>"#).count(),
        2
    );
    // Every differing key of the final states, not just the first.
    assert!(view.contains("<td><code>k2</code></td>"));
    // The failed invariant is listed once, with the findings, not again here.
    assert!(!view.contains("applied_entries_stable: n3: applied index 6"));
    assert!(section(&page, "findings").contains("applied_entries_stable: n3: applied index 6"));
    // Events that touched `k`: by text or by their key list, not "link k2".
    let touched = &view[view.find("Trail events that touched").unwrap()..];
    for detail in [
        "put k=start",
        "put k=minority -&gt; ok",
        "put k=majority",
        "apply index 8",
    ] {
        assert!(touched.contains(detail), "{detail} missing");
    }
    assert!(!touched.contains("compacted link k2"));
    // And they are ringed in the diagram.
    assert!(page.contains(r#"<g class="mk k-op_ok touch" data-ev="5">"#));
}

#[test]
fn converged_runs_have_no_divergence_view() {
    let r = result(
        vec![final_node("n1", &[]), final_node("n2", &[])],
        vec![leader(1, "n1", 1)],
    );
    let page = run_html(&r);
    assert!(!page.contains(r#"<section id="divergence""#));
    assert!(page.contains("every replica agreed"));
}

#[test]
fn mentions_matches_whole_words() {
    assert!(mentions("put k=minority", "k"));
    assert!(mentions("first differing key `k`: n1", "k"));
    assert!(!mentions("repaired 2 cut link(s)", "k"));
    assert!(!mentions("C10 closed", "C1"));
    assert!(mentions("container C1 closed", "C1"));
    assert!(mentions("/vol/b/key1 deleted", "/vol/b/key1"));
    assert!(!mentions("anything", ""));
}

#[test]
fn the_page_is_deterministic_and_leaves_wall_time_out() {
    let r = diverged();
    let a = run_html(&r);
    let mut other = r.clone();
    other.wall_ms = 99_999;
    assert_eq!(a, run_html(&other));
}

#[test]
fn time_reads_like_time() {
    assert_eq!(fmt_ms(202), "202 ms");
    assert_eq!(fmt_ms(2_204), "2.204 s");
    assert_eq!(fmt_ms(723_250), "12:03.250");
    assert_eq!(fmt_ms(3_723_250), "1:02:03.250");
    assert_eq!(fmt_dur(2_000), "2.00 s");
    assert_eq!(fmt_dur(200_000), "3 min 20 s");
}

#[test]
fn an_empty_run_still_renders() {
    let page = run_html(&result(vec![], vec![]));
    assert!(page.contains("</html>"));
}

/// A 30-minute run with 5 nodes: 60k trail events, 2,000 ops, the message-bucket
/// limit reached. The page must stay bounded (and the numbers are in the docs).
#[test]
fn a_long_busy_run_stays_bounded() {
    let names = ["n1", "n2", "n3", "n4", "n5"];
    let minute = 60_000;
    let mut events = Vec::new();
    let mut ops = Vec::new();
    for i in 0..60_000u64 {
        let t = i * 30;
        let node = names[(i % 5) as usize];
        let e = match i % 200 {
            0 => done(t, partition(&[&["n1"], &["n2", "n3"]])),
            100 => act(t, Action::Heal, ActionResult::Healed { links: 2 }),
            50 => done(t, Action::Crash { node: node.into() }),
            60 => done(t, Action::Start { node: node.into() }),
            7 => leader(t, node, i / 7),
            k if k % 3 == 0 => {
                if ops.len() < 2_000 {
                    ops.push(OpRecord {
                        id: ops.len() as u64,
                        node: node.into(),
                        summary: format!("put k{i}=v"),
                        invoked_ms: t,
                        result: Some(OpResult::ok()),
                        completed_ms: Some(t + 40),
                        timed_out: false,
                        admin: false,
                    });
                }
                let id = ops.len() as u64;
                answer(t, node, id, &format!("put k{i}=v"), OpResult::ok())
            }
            _ => apply(t, node, i, &[], &format!("apply index {i}")),
        };
        events.push(e);
    }
    let mut r = result(names.iter().map(|n| final_node(n, &[])).collect(), events);
    r.sim_elapsed_ms = 30 * minute;
    r.ops = ops;
    for bucket in 0..(30 * minute / 100) {
        for (a, b) in [(0, 1), (1, 0), (0, 2), (2, 0), (3, 4), (4, 3), (1, 2)] {
            r.messages.push(MessageCount {
                t_ms: bucket * 100,
                from: names[a].into(),
                to: names[b].into(),
                kind: "Append".into(),
                count: 3,
            });
        }
    }
    r.messages_total = r.messages.iter().map(|m| m.count as u64).sum();
    let page = run_html(&r);
    let svg_start = page.find("<svg class=\"diagram\"").unwrap();
    let svg_len = page[svg_start..].find("</svg>").unwrap();
    let height: f64 = {
        let tag = &page[svg_start..svg_start + 300];
        let at = tag.find("height=\"").unwrap() + 8;
        tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
    };
    let arrows = page.matches("<line class=\"msg").count();
    eprintln!(
        "30-minute run: page {} bytes, diagram {} bytes, {} px tall, {} arrows, {} marks, trail rows {}",
        page.len(),
        svg_len,
        height,
        arrows,
        marks(&page).len(),
        page.matches("<tr id=\"ev-").count()
    );
    assert!(arrows <= diagram::ARROWS_MAX);
    assert!(height < 5_000.0, "{height}");
    assert!(page.matches("<tr id=\"ev-").count() <= TRAIL_ROWS_MAX);
    assert!(page.len() < 8_000_000, "{}", page.len());
}

#[test]
fn trail_rows_keep_head_tail_and_faults() {
    let mut events: Vec<Event> = (0..TRAIL_ROWS_MAX as u64 * 3)
        .map(|t| apply(t, "n1", t, &[], "apply"))
        .collect();
    events[15_000] = done(15_000, Action::Crash { node: "n1".into() });
    let rows = trail_rows(&events);
    assert!(rows.len() <= TRAIL_ROWS_MAX);
    assert!(rows.contains(&0) && rows.contains(&(events.len() - 1)));
    assert!(rows.contains(&15_000));
    assert!(rows.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_node_left_out_of_the_comparison_is_named_on_its_card_and_in_the_terminal() {
    let mut vouching = final_node("n1", &[("chain.x", "s1")]);
    vouching.observation.state.insert("k".into(), "1".into());
    let mut broken = final_node("n2", &[("chain.x", "")]);
    broken.observation.unvouched.insert("chain.".into());
    let mut down = final_node("n3", &[]);
    down.up = false;
    down.observation.unvouched.insert("other.".into());
    let r = result(vec![vouching, broken, down], vec![leader(1, "n1", 1)]);
    let page = run_html(&r);
    assert!(
        page.contains("not compared"),
        "the card names what was left out"
    );
    assert!(page.contains("chain.*"));
    let lines =
        crate::report::strip_styles(&crate::report::run_lines(&r, crate::report::Detail::Full));
    assert!(
        lines.contains("not compared [divergence]: n2 on `chain.*`"),
        "{lines}"
    );
    // A node that is down is not compared at all; the line is for up nodes.
    assert!(!lines.contains("n3 on"), "{lines}");
}

#[test]
fn a_finding_found_again_by_a_later_check_is_listed_once() {
    let mut r = diverged();
    let again = r.findings[0].clone();
    r.findings.push(again);
    let page = run_html(&r);
    let findings = section(&page, "findings");
    assert_eq!(
        findings
            .matches("replicas disagree at applied index 8: first differing key `k`")
            .count(),
        1,
        "{findings}"
    );
    assert!(findings.contains("found again by 1 later check(s) of the run"));
    // A different key from the same checker is its own entry.
    let mut other = r.findings[0].clone();
    other.message = "replicas disagree: first differing key `k2`".into();
    other.detail["key"] = json!("k2");
    r.findings.push(other);
    let page = run_html(&r);
    assert!(section(&page, "findings").contains("first differing key `k2`"));
}

#[test]
fn a_violated_run_without_a_differing_key_has_no_divergence_panel() {
    let mut r = diverged();
    r.findings.remove(0);
    r.outcome = Outcome::Violated;
    let page = run_html(&r);
    assert!(!page.contains(r#"<section id="divergence""#));
    assert!(!page.contains("No checker reported replicas holding different values"));
    assert!(!page.contains(r##"href="#divergence""##));
    assert_eq!(
        page.matches("applied_entries_stable: n3: applied index 6")
            .count(),
        1
    );
}

/// A partition, 20 client-op events (10 ops sent and answered), a heal.
fn ops_between_faults() -> RunResult {
    let mut events = vec![done(100, partition(&[&["n1"], &["n2", "n3"]]))];
    for op in 0..10u64 {
        let t = 200 + op * 50;
        let node = ["n2", "n3"][(op % 2) as usize];
        let put = format!("put k{op}=v");
        events.push(invoke(t, node, op, &put));
        events.push(answer(t + 5, node, op, &put, OpResult::ok()));
    }
    events.push(act(1000, Action::Heal, ActionResult::Healed { links: 2 }));
    let names = ["n1", "n2", "n3"];
    result(names.iter().map(|n| final_node(n, &[])).collect(), events)
}

/// The trail section's folded runs: (the `<tbody class="grp" ...>` tag, the
/// trail positions of the rows inside).
fn folded(page: &str) -> Vec<(String, Vec<usize>)> {
    let trail = section(page, "trail");
    trail
        .match_indices(r#"<tbody class="grp""#)
        .map(|(at, _)| {
            let body = &trail[at..at + trail[at..].find("</tbody>").unwrap()];
            let tag = body[..body.find('>').unwrap()].to_string();
            let rows = body
                .match_indices(r#"<tr id="ev-"#)
                .map(|(at, m)| {
                    let rest = &body[at + m.len()..];
                    rest[..rest.find('"').unwrap()].parse().unwrap()
                })
                .collect();
            (tag, rows)
        })
        .collect()
}

#[test]
fn a_run_of_ops_between_two_faults_is_one_summary_row_that_opens_to_its_rows() {
    let r = ops_between_faults();
    let page = run_html(&r);
    let groups = folded(&page);
    assert_eq!(groups.len(), 1, "one folded run: {groups:?}");
    let (tag, rows) = &groups[0];
    assert!(tag.contains(r#"data-ops="20""#), "{tag}");
    assert_eq!(*rows, (1..=20).collect::<Vec<usize>>(), "its 20 rows");
    let trail = section(&page, "trail");
    let summary = &trail[trail.find(r#"<tr class="gsum">"#).unwrap()..];
    let summary = &summary[..summary.find("</tr>").unwrap()];
    assert!(
        summary.contains("20 op events (10 sent, 10 ok) on n2 ×10, n3 ×10, 200 ms – 655 ms"),
        "{summary}"
    );
    assert!(summary.contains(r#"<input type="checkbox" class="gopen""#));
    // The faults are rows of their own, and every event keeps its row and id.
    for i in 0..r.trail.events.len() {
        assert_eq!(trail.matches(&format!(r#"<tr id="ev-{i}""#)).count(), 1);
    }
    assert!(!rows.contains(&0) && !rows.contains(&21));
    // Fewer than five ops stay rows.
    let mut short = ops_between_faults();
    short.trail.events.drain(5..21);
    assert_eq!(short.trail.events.len(), 6, "a fault, four ops, a heal");
    assert!(folded(&run_html(&short)).is_empty());
}

#[test]
fn an_op_a_sequence_entry_links_to_stays_a_row_of_its_own() {
    let mut r = ops_between_faults();
    r.sequence = vec![crate::judge::check::expect::SequenceMatch {
        entry: 1,
        line: 9,
        col: 7,
        describe: "node n3, kind op_ok".into(),
        event: Some(12),
        t_ms: Some(r.trail.events[12].t_ms),
    }];
    let page = run_html(&r);
    assert!(section(&page, "sequence").contains(r##"<a href="#ev-12">"##));
    let groups = folded(&page);
    let inside: Vec<usize> = groups.iter().flat_map(|(_, rows)| rows.clone()).collect();
    assert!(!inside.contains(&12), "the linked row is not folded");
    assert!(section(&page, "trail").contains(r#"<tr id="ev-12""#));
    // The ops on either side still fold: 11 before it, 8 after.
    let sizes: Vec<usize> = groups.iter().map(|(_, rows)| rows.len()).collect();
    assert_eq!(sizes, [11, 8]);
}
