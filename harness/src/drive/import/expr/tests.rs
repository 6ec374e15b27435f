//! Tests of the expression syntax: parsing, evaluation, the errors.

use super::*;

fn state() -> State {
    State {
        index: 3,
        path: "$.states[3]".into(),
        action: Some("flush".into()),
        action_path: String::new(),
        picks: vec![
            ("c".into(), Value::Int(2)),
            ("lost".into(), Value::Str("request".into())),
        ],
        vars: vec![
            ("m::applied".into(), Value::Int(10)),
            (
                "m::buffer".into(),
                Value::List(vec![Value::Int(9), Value::Int(11)]),
            ),
            (
                "m::recon".into(),
                Value::Map(vec![
                    (Value::Int(1), Value::Str("CLOSED".into())),
                    (Value::Int(2), Value::Str("UNHEALTHY".into())),
                ]),
            ),
            ("m::leader".into(), Value::Bool(true)),
            (
                "m::opt".into(),
                Value::Record(vec![
                    ("tag".into(), Value::Str("Some".into())),
                    ("value".into(), Value::Int(4)),
                ]),
            ),
            ("m::raw".into(), Value::Unserializable("Nat".into())),
        ],
    }
}

fn vars(s: &State) -> Vec<String> {
    s.vars.iter().map(|(n, _)| n.clone()).collect()
}

fn eval(source: &str) -> Result<Rendered, EvalError> {
    let s = state();
    let mut prev = state();
    prev.vars[0].1 = Value::Int(8);
    let names = vars(&s);
    let scope = Scope::new(&s, Some(&prev), &names, "flush");
    Template::parse(source).unwrap().eval(&scope)
}

fn text_of(source: &str) -> String {
    eval(source).unwrap().into_text().unwrap()
}

#[test]
fn a_lone_placeholder_keeps_the_value_and_its_type() {
    assert_eq!(eval("{picks.c}"), Ok(Rendered::Value(Value::Int(2))));
    assert_eq!(
        eval("{picks.c}").unwrap().to_json(),
        Ok(serde_json::json!(2))
    );
    assert_eq!(
        eval("{state.buffer}").unwrap().to_json(),
        Ok(serde_json::json!([9, 11]))
    );
    assert_eq!(
        eval(" {picks.c}").unwrap().to_json(),
        Ok(serde_json::json!(" 2"))
    );
}

#[test]
fn text_mixes_literals_and_values() {
    assert_eq!(text_of("/v/b/k{index}"), "/v/b/k3");
    assert_eq!(text_of("drop_{picks.lost}"), "drop_request");
    assert_eq!(
        text_of("{action}: {prev.applied} -> {state.applied}"),
        "flush: 8 -> 10"
    );
    assert_eq!(text_of("{{literal}} {state.leader}"), "{literal} true");
    assert_eq!(text_of("{state.m::applied}"), "10");
}

#[test]
fn collections_paths_and_filters() {
    assert_eq!(text_of("{state.buffer}"), "9,11");
    assert_eq!(text_of("{state.buffer | len}"), "2");
    assert_eq!(text_of("{state.buffer[-1]}"), "11");
    assert_eq!(text_of("{state.buffer[0]}"), "9");
    assert_eq!(text_of("{state.recon}"), "1=CLOSED,2=UNHEALTHY");
    assert_eq!(text_of("{state.recon.2}"), "UNHEALTHY");
    assert_eq!(text_of("{state.recon[1]}"), "CLOSED");
    assert_eq!(
        text_of(r#"{state.recon | each("C{key}={value}")}"#),
        "C1=CLOSED,C2=UNHEALTHY"
    );
    assert_eq!(
        text_of(r#"{state.recon | each("C{key}") | join(" ")}"#),
        "C1 C2"
    );
    assert_eq!(text_of("{state.opt}"), "Some(4)");
    assert_eq!(text_of("{state.opt.value}"), "4");
}

#[test]
fn evaluation_errors_say_what_is_missing() {
    let err = |s: &str| eval(s).and_then(|r| r.into_text()).unwrap_err().to_string();
    assert!(
        err("{state.nope}").starts_with("the trace has no variable `nope` (variables: m::applied")
    );
    assert_eq!(
        err("{picks.node}"),
        "the action made no nondet pick `node` (picks: c, lost)"
    );
    assert_eq!(
        err("{state.applied | len}"),
        "unmappable value: `len` of an integer, which is not a collection"
    );
    assert_eq!(
        err("{state.raw}"),
        "unmappable value: the checker could not write this value (Nat)"
    );
    assert_eq!(
        err("{state.raw | len}"),
        "unmappable value: the checker could not write this value (Nat)"
    );
    assert_eq!(
        err("{state.buffer[5]}"),
        "unmappable value: index 5 is outside a collection of 2"
    );
    let s = state();
    let names = vars(&s);
    let first = Scope::new(&s, None, &names, "init");
    assert_eq!(
        Template::parse("{prev.applied}").unwrap().eval(&first),
        Err(EvalError::NoPrevious)
    );
    let ambiguous = vec!["a::x".to_string(), "b::x".to_string()];
    assert_eq!(
        resolve_var("x", &ambiguous).unwrap_err().to_string(),
        "`x` could be any of a::x, b::x: write the full name"
    );
}

#[test]
fn syntax_errors_point_at_the_character() {
    let err = |s: &str| Template::parse(s).unwrap_err().to_string();
    assert_eq!(
        err("x{stat.a}"),
        "unknown root `stat` (did you mean `state`?); roots: state, prev, picks, index, action (at character 3)"
    );
    assert_eq!(
        err("{state}"),
        "`state` needs a name: `state.NAME` (at character 7)"
    );
    assert_eq!(
        err("{state.a"),
        "`{` without its `}` (write `{{` for a literal brace) (at character 1)"
    );
    assert_eq!(
        err("a}"),
        "`}` without its `{` (write `}}` for a literal brace) (at character 2)"
    );
    assert!(err("{state.a | lne}").starts_with("unknown filter `lne` (did you mean `len`?)"));
    assert!(err("{state.a | join(x)}").starts_with("a double-quoted string"));
    assert!(err("{key}").starts_with("`key` names an entry only inside `each"));
    assert!(err(r#"{state.a | each("{kee}")}"#).contains("in each(\"{kee}\"): unknown root `kee`"));
    assert!(err("{state.a b}").starts_with("unexpected `b`"));
    assert!(err("{}").starts_with("an empty placeholder"));
}

#[test]
fn literal_templates_and_variables() {
    assert!(Template::parse("plain text").unwrap().is_literal());
    assert!(!Template::parse("{index}").unwrap().is_literal());
    assert_eq!(
        Template::parse(r#"{state.a}{prev.b | each("{value}")}"#)
            .unwrap()
            .variables(),
        vec!["a", "b"]
    );
}
