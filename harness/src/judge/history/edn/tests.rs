//! Tests of the EDN writer and reader and of the Jepsen mapping, with a check of
//! the shapes Jepsen's tools read.

use super::*;
use crate::judge::history::record::History;
use crate::judge::history::CompletionKind;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[test]
fn writes_and_reads_back_edn_values() {
    let value = Edn::Map(vec![
        (Edn::kw("type"), Edn::kw("ok")),
        (
            Edn::kw("value"),
            Edn::Vector(vec![Edn::Int(-3), Edn::Str("a \"b\"\n".into()), Edn::Nil]),
        ),
        (Edn::kw("set"), Edn::Set(vec![Edn::Bool(true)])),
        (Edn::kw("x"), Edn::Float(1.5)),
    ]);
    let text = value.to_string();
    assert_eq!(
        text,
        "{:type :ok, :value [-3 \"a \\\"b\\\"\\n\" nil], :set #{true}, :x 1.5}"
    );
    assert_eq!(parse(&text).unwrap(), vec![value]);
}

fn small_history() -> History {
    let mut h = History::new();
    let a = h
        .invoke(
            0,
            "append",
            json!({"key": "x", "value": 1}),
            Some("n1".into()),
            10,
        )
        .unwrap();
    let r = h.invoke(1, "get", json!({"key": "x"}), None, 11).unwrap();
    h.complete(a, CompletionKind::Ok, Value::Null, None, 12)
        .unwrap();
    h.complete(r, CompletionKind::Ok, json!([1]), None, 13)
        .unwrap();
    let lost = h
        .invoke(0, "append", json!({"key": "x", "value": 2}), None, 14)
        .unwrap();
    h.complete(
        lost,
        CompletionKind::Info,
        Value::Null,
        Some("timeout".into()),
        15,
    )
    .unwrap();
    let z = h
        .invoke(0, "append", json!({"key": "z", "value": 3}), None, 15)
        .unwrap();
    h.complete(z, CompletionKind::Ok, Value::Null, None, 15)
        .unwrap();
    let w = h
        .invoke(0, "put", json!({"key": "y", "value": "v"}), None, 16)
        .unwrap();
    h.complete(w, CompletionKind::Ok, Value::Null, None, 17)
        .unwrap();
    let g = h.invoke(1, "get", json!({"key": "y"}), None, 18).unwrap();
    h.complete(
        g,
        CompletionKind::Ok,
        Value::Null,
        Some("not found".into()),
        19,
    )
    .unwrap();
    h
}

#[test]
fn list_append_export_has_the_shape_elle_reads() {
    let h = small_history();
    let text = to_edn(&h, &EdnShape::ListAppend);
    assert_eq!(validate_jepsen(&text, &EdnShape::ListAppend), Ok(10));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "{:type :invoke, :f :txn, :value [[:append \"x\" 1]], :process 0, :time 10, :index 0, :node \"n1\"}"
    );
    assert_eq!(
        lines[3],
        "{:type :ok, :f :txn, :value [[:r \"x\" [1]]], :process 1, :time 13, :index 3}"
    );
    // After its :info, client 0's next op runs as a fresh process (0 + 2).
    assert!(
        lines[5].contains(":type :info") && lines[5].contains(":process 0"),
        "{}",
        lines[5]
    );
    assert!(
        lines[6].contains(":process 2") && lines[6].contains("[:append \"z\" 3]"),
        "{}",
        lines[6]
    );
    assert!(lines[8].contains("[:r \"y\" nil]"), "{}", lines[8]);
    assert!(
        lines[9].contains("[:r \"y\" []]"),
        "absent reads as empty: {}",
        lines[9]
    );
}

#[test]
fn register_export_has_the_shape_knossos_reads() {
    let h = small_history();
    let one = to_edn(
        &h,
        &EdnShape::Register {
            key: Some("y".into()),
        },
    );
    assert_eq!(
        validate_jepsen(&one, &EdnShape::Register { key: None }),
        Ok(4)
    );
    assert!(
        one.starts_with("{:type :invoke, :f :write, :value \"v\", :process 2, :time 16, :index 0}"),
        "{one}"
    );
    assert!(one.contains("{:type :ok, :f :read, :value nil, :process 1, :time 19, :index 3, :error \"not found\"}"), "{one}");
    let all = to_edn(&h, &EdnShape::Register { key: None });
    assert!(all.contains(":value [\"y\" \"v\"]"), "{all}");
    let generic = to_edn(&h, &EdnShape::Generic);
    assert_eq!(validate_jepsen(&generic, &EdnShape::Generic), Ok(12));
    assert!(
        generic.contains(":f :append, :value {:key \"x\", :value 1}"),
        "{generic}"
    );
}

#[test]
fn the_shape_check_can_fail() {
    let bad = [
        "{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0, :time 0, :index 1}",
        "{:type :begin, :f :txn, :value [], :process 0, :time 0, :index 0}",
        "{:type :ok, :f :txn, :value [], :process 0, :time 0, :index 0}",
        "{:type :invoke, :f :txn, :value [[:w 1 2]], :process 0, :time 0, :index 0}",
        "{:type :invoke, :f :txn, :value [[:r 1 [2]]], :process 0, :time 0, :index 0}",
        "{:type :invoke, :f :txn, :value [], :process 0, :time 0, :index 0, :extra 1}",
        "{:type :invoke, :f :txn, :value [], :process 0, :time 0, :index 0}\n\
         {:type :info, :f :txn, :value [], :process 0, :time 1, :index 1}\n\
         {:type :invoke, :f :txn, :value [], :process 0, :time 2, :index 2}",
    ];
    for text in bad {
        assert!(
            validate_jepsen(text, &EdnShape::ListAppend).is_err(),
            "{text}"
        );
    }
}

#[test]
fn reader_errors_name_line_and_column() {
    let e = parse("{:a 1}\n  {:b").unwrap_err();
    assert_eq!((e.line, e.col), (2, 6), "{e}");
    let e = parse("{:a}").unwrap_err();
    assert!(e.message.contains("even"), "{e}");
    let deep = "[".repeat(MAX_DEPTH + 5);
    assert!(parse(&deep).unwrap_err().message.contains("deeper"));
    assert!(parse("#inst \"2020\"").is_err());
}

#[test]
fn reads_a_knossos_style_history_with_comments_and_nemesis() {
    let text = "[{:process 0, :type :invoke, :f :write, :value 1}\n\
                ; a comment\n\
                {:process :nemesis, :type :info, :f :start}\n\
                {:process 0, :type :ok, :f :write, :value 1}\n\
                {:process 1, :type :invoke, :f :read, :value nil}\n\
                {:process 1, :type :info, :f :read, :value nil, :error :timeout}]";
    let h = read_jepsen(text).unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h.ops()[0].args, json!({"value": 1}));
    assert_eq!(
        h.ops()[1].completion.as_ref().unwrap().kind,
        CompletionKind::Info
    );
    assert_eq!(
        h.ops()[1].completion.as_ref().unwrap().error.as_deref(),
        Some("timeout")
    );
    assert!(matches!(
        read_jepsen("[{:type :ok}]"),
        Err(ReadError::Op(0, _))
    ));
}

/// Check EDN text against the history shape Jepsen's tools read (jepsen-io/history's
/// README; elle-cli's README for list-append): every event a map with `:type`
/// one of `:invoke`/`:ok`/`:fail`/`:info`, a keyword `:f`, an integer
/// `:process`, `:time` in ns and `:index` dense from 0; each process
/// single-threaded, never invoking again after an `:info`; for
/// [`EdnShape::ListAppend`], `:f :txn` and `:value` a vector of
/// `[:append k v]` / `[:r k nil-or-list]` micro-ops; for [`EdnShape::Register`],
/// `:f` one of `:read`/`:write`/`:cas`. Returns the number of events.
fn validate_jepsen(text: &str, shape: &EdnShape) -> Result<usize, String> {
    let forms = parse(text).map_err(|e| e.to_string())?;
    let mut open: BTreeMap<i64, bool> = BTreeMap::new();
    let mut crashed: BTreeMap<i64, bool> = BTreeMap::new();
    let mut last_time = 0i64;
    for (i, form) in forms.iter().enumerate() {
        let at = |m: String| format!("event {i}: {m}: {form}");
        let Edn::Map(entries) = form else {
            return Err(at("not a map".into()));
        };
        known_keys(entries).map_err(at)?;
        let kind = match form.get("type") {
            Some(Edn::Keyword(k)) if ["invoke", "ok", "fail", "info"].contains(&k.as_str()) => {
                k.as_str()
            }
            _ => return Err(at("`:type` is not :invoke, :ok, :fail or :info".into())),
        };
        let Some(Edn::Keyword(f)) = form.get("f") else {
            return Err(at("`:f` is not a keyword".into()));
        };
        let Some(Edn::Int(process)) = form.get("process") else {
            return Err(at("`:process` is not an integer".into()));
        };
        match form.get("index") {
            Some(Edn::Int(index)) if *index == i as i64 => {}
            _ => return Err(at(format!("`:index` is not {i}"))),
        }
        match form.get("time") {
            Some(Edn::Int(t)) if *t >= last_time => last_time = *t,
            _ => return Err(at("`:time` is not an ascending integer".into())),
        }
        if form.get("value").is_none() {
            return Err(at("no `:value`".into()));
        }
        if kind == "invoke" {
            if crashed.contains_key(process) {
                return Err(at(format!("process {process} invokes after an :info")));
            }
            if open.insert(*process, true).is_some() {
                return Err(at(format!(
                    "process {process} invokes with an op outstanding"
                )));
            }
        } else {
            if open.remove(process).is_none() {
                return Err(at(format!(
                    "process {process} completes with nothing outstanding"
                )));
            }
            if kind == "info" {
                crashed.insert(*process, true);
            }
        }
        shaped(shape, f, kind, form).map_err(at)?;
    }
    Ok(forms.len())
}

/// Only the keys Jepsen's ops have.
fn known_keys(entries: &[(Edn, Edn)]) -> Result<(), String> {
    for (k, _) in entries {
        match k {
            Edn::Keyword(k)
                if [
                    "type", "f", "value", "process", "time", "index", "error", "node",
                ]
                .contains(&k.as_str()) => {}
            other @ (Edn::Nil
            | Edn::Bool(_)
            | Edn::Int(_)
            | Edn::Float(_)
            | Edn::Str(_)
            | Edn::Keyword(_)
            | Edn::Symbol(_)
            | Edn::Vector(_)
            | Edn::List(_)
            | Edn::Set(_)
            | Edn::Map(_)) => return Err(format!("unexpected key {other}")),
        }
    }
    Ok(())
}

/// What `shape` asks of one op beyond the generic form.
fn shaped(shape: &EdnShape, f: &str, kind: &str, form: &Edn) -> Result<(), String> {
    match shape {
        EdnShape::Generic => {}
        EdnShape::Register { .. } => {
            if !["read", "write", "cas"].contains(&f) {
                return Err(format!("`:f :{f}` is not a register op"));
            }
        }
        EdnShape::ListAppend => {
            if f != "txn" {
                return Err("`:f` is not :txn".into());
            }
            let Some(Edn::Vector(micro)) = form.get("value") else {
                return Err("`:value` is not a vector of micro-ops".into());
            };
            for m in micro {
                let ok = match m {
                    Edn::Vector(parts) => match parts.as_slice() {
                        [Edn::Keyword(a), _, v] if a == "append" => !matches!(v, Edn::Nil),
                        [Edn::Keyword(r), _, Edn::Nil] if r == "r" => true,
                        [Edn::Keyword(r), _, Edn::Vector(_)] if r == "r" => kind != "invoke",
                        _ => false,
                    },
                    Edn::Nil
                    | Edn::Bool(_)
                    | Edn::Int(_)
                    | Edn::Float(_)
                    | Edn::Str(_)
                    | Edn::Keyword(_)
                    | Edn::Symbol(_)
                    | Edn::List(_)
                    | Edn::Set(_)
                    | Edn::Map(_) => false,
                };
                if !ok {
                    return Err(format!(
                        "{m} is not an [:append k v] or [:r k ...] micro-op"
                    ));
                }
            }
        }
    }
    Ok(())
}
