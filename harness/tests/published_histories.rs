//! The consistency checker on histories other projects published, with the
//! verdicts those projects expect (see tests/data/histories/README.md).

use faultline::judge::check::Verdict;
use faultline::judge::consistency::register::{NilRead, Register};
use faultline::judge::consistency::{check, Budget};
use faultline::judge::history::{read_jepsen, Event, EventType, History};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn data(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/histories")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no data in {}", root.display());
    files
}

/// The verdict alone: no steps spent shrinking witnesses.
fn verdict(spec: Register, history: &History) -> (Verdict, String) {
    let budget = Budget {
        shrink_steps: 0,
        ..Budget::default()
    };
    let report = check(spec, history, &budget);
    (report.verdict, report.message)
}

#[test]
fn knossos_cas_register_histories() {
    for (dir, expected) in [
        ("knossos/good", Verdict::Pass),
        ("knossos/bad", Verdict::Fail),
    ] {
        for file in data(dir) {
            let history = read_jepsen(&std::fs::read_to_string(&file).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // Knossos's cas-register starts at nil and takes a nil read as any value.
            let (got, message) = verdict(Register::new(None, NilRead::Any), &history);
            assert_eq!(got, expected, "{}: {message}", file.display());
        }
    }
}

#[test]
fn a_knossos_violation_shrinks_to_a_small_witness() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/histories/knossos/bad/rethink-fail-minimal.edn");
    let history = read_jepsen(&std::fs::read_to_string(file).unwrap()).unwrap();
    let report = check(
        Register::new(None, NilRead::Any),
        &history,
        &Budget::default(),
    );
    assert_eq!(report.verdict, Verdict::Fail);
    let w = report.witness.unwrap();
    assert!(w.minimal);
    // Knossos's comment in the file: the value is 0, then a concurrent write of
    // 4 and a read of 3. The read of 3 is the op nothing explains.
    let recorded: Vec<&str> = w
        .ops
        .iter()
        .filter(|o| o.as_recorded)
        .map(|o| o.reads_as.as_str())
        .collect();
    assert_eq!(recorded, vec!["read -> 3"], "{w:?}");
}

#[test]
fn porcupine_kv_histories() {
    for file in data("porcupine/kv") {
        let history = read_jepsen(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let expected = if name.contains("-ok") {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        // Porcupine's kv store starts every key at "" and appends text.
        let (got, message) = verdict(Register::new(Some(json!("")), NilRead::Absent), &history);
        assert_eq!(got, expected, "{name}: {message}");
    }
}

/// One line of a Jepsen etcd log: `INFO  jepsen.util - 3\t:invoke\t:cas\t[3 0]`.
fn etcd_events(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(" - ") else {
            continue;
        };
        // Fields are tab- or space-separated; a cas value is `[3 0]`.
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 4 {
            continue;
        }
        let (process, kind, f) = (fields[0], fields[1], fields[2]);
        let value = fields[3..].join(" ");
        let value = value.as_str();
        let value: Value = match value {
            "nil" | ":timed-out" => Value::Null,
            v if v.starts_with('[') => {
                let pair: Vec<i64> = v
                    .trim_matches(['[', ']'])
                    .split(' ')
                    .map(|n| n.parse().unwrap())
                    .collect();
                json!(pair)
            }
            v => json!(v.parse::<i64>().unwrap()),
        };
        let f = f.trim_start_matches(':').to_string();
        let (kind, value) = match (kind, f.as_str()) {
            (":invoke", "read") => (EventType::Invoke, json!({})),
            (":invoke", _) => (EventType::Invoke, json!({ "value": value })),
            (":ok", "read") => (EventType::Ok, value),
            (":ok", "cas") => (EventType::Ok, json!(true)),
            (":ok", _) => (EventType::Ok, Value::Null),
            // As Porcupine's etcd model reads them: a failed cas compared and
            // found another value; a read that timed out did nothing.
            (":fail", "cas") => (EventType::Ok, json!(false)),
            (":fail", _) => (EventType::Fail, Value::Null),
            (":info", _) => (EventType::Info, Value::Null),
            (other, _) => panic!("unknown type {other} in {line:?}"),
        };
        events.push(Event {
            index: events.len() as u64,
            time_ns: events.len() as u64,
            process: process.parse().unwrap(),
            kind,
            f,
            value,
            error: None,
            node: None,
        });
    }
    events
}

#[test]
fn porcupine_etcd_histories() {
    let linearizable = [
        2, 5, 7, 18, 25, 31, 38, 45, 48, 49, 51, 53, 56, 67, 75, 76, 80, 87, 92, 98, 100, 101, 102,
    ];
    let files = data("porcupine/etcd");
    assert_eq!(files.len(), 102);
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let n: u32 = name
            .trim_start_matches("etcd_")
            .trim_end_matches(".log")
            .parse()
            .unwrap();
        let history = History::from_events(etcd_events(&std::fs::read_to_string(&file).unwrap()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = if linearizable.contains(&n) {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        let (got, message) = verdict(Register::new(None, NilRead::Absent), &history);
        assert_eq!(got, expected, "{name}: {message}");
    }
}
