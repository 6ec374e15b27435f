use std::collections::BTreeMap;

use serde::Deserialize;

use super::*;

fn loc(line: u32, col: u32) -> Loc {
    Loc { line, col }
}

fn parse_ok(text: &str) -> Node {
    parse(text, &Limits::default()).unwrap_or_else(|e| panic!("parse failed: {e}"))
}

fn parse_err(text: &str) -> Error {
    match parse(text, &Limits::default()) {
        Ok(node) => panic!("expected an error, parsed {node:?}"),
        Err(e) => e,
    }
}

/// Deserialize `T` from a whole file, expecting failure.
fn de_err<T: de::DeserializeOwned + fmt::Debug>(text: &str) -> Error {
    match from_node::<T>(&parse_ok(text)) {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e,
    }
}

#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "a test helper: any value that is not a sequence is a test failure"
)]
fn seq(node: &Node) -> &[Node] {
    match &node.value {
        Value::Seq(items) => items,
        other => panic!("not a sequence: {other:?}"),
    }
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Pair {
    key: String,
    value: u32,
}

const NESTED: &str = "\
name: demo
steps:
  - kind: start
    args: {node: n1, count: 3}
  - kind: stop
    list: [1, [2, 3]]
";

#[test]
fn locations_of_nested_block_nodes() {
    let root = parse_ok(NESTED);
    assert_eq!(root.loc, loc(1, 1));
    assert_eq!(root.key_node("name").unwrap().loc, loc(1, 1));
    assert_eq!(root.get("name").unwrap().loc, loc(1, 7));
    let steps = root.get("steps").unwrap();
    assert_eq!(
        steps.loc,
        loc(3, 3),
        "block sequence starts at its first dash"
    );
    let first = &seq(steps)[0];
    assert_eq!(first.loc, loc(3, 5));
    assert_eq!(first.get("kind").unwrap().loc, loc(3, 11));
    assert_eq!(seq(steps)[1].key_node("list").unwrap().loc, loc(6, 5));
}

#[test]
fn locations_of_nested_flow_nodes() {
    let root = parse_ok(NESTED);
    let steps = seq(root.get("steps").unwrap());
    let args = steps[0].get("args").unwrap();
    assert_eq!(args.loc, loc(4, 11));
    assert_eq!(args.key_node("node").unwrap().loc, loc(4, 12));
    assert_eq!(args.get("node").unwrap().loc, loc(4, 18));
    assert_eq!(args.get("count").unwrap().loc, loc(4, 29));
    let list = steps[1].get("list").unwrap();
    assert_eq!(list.loc, loc(6, 11));
    let inner = &seq(list)[1];
    assert_eq!(inner.loc, loc(6, 15));
    assert_eq!(seq(inner)[1].loc, loc(6, 19));
    assert_eq!(seq(inner)[1].value, Value::Int(3));
}

#[test]
fn unknown_field_points_at_key_with_hint() {
    let e = de_err::<Pair>("key: a\nvalue: 1\nkye: b\n");
    assert_eq!(e.loc, loc(3, 1));
    assert_eq!(
        e.message,
        "unknown field `kye`; did you mean `key`? expected one of `key`, `value`"
    );
    assert_eq!(
        e.to_string(),
        "3:1: unknown field `kye`; did you mean `key`? expected one of `key`, `value`"
    );
    let e = de_err::<Pair>("key: a\nvalue: 1\nzzzzzz: b\n");
    assert_eq!(
        e.message,
        "unknown field `zzzzzz`; expected one of `key`, `value`"
    );
}

#[test]
fn missing_field_points_at_the_mapping() {
    let e = de_err::<Vec<Pair>>("- key: a\n  value: 1\n- key: b\n");
    assert_eq!(e.loc, loc(3, 3));
    assert_eq!(e.message, "missing required field `value`");
}

#[test]
fn type_error_points_at_the_value() {
    let e = de_err::<Pair>("key: a\nvalue: [1]\n");
    assert_eq!(e.loc, loc(2, 8));
    assert_eq!(e.message, "expected an integer, found a sequence");
    // Out-of-range values are reported by serde's visitor, still at the value.
    let e = de_err::<Pair>("key: a\nvalue: -1\n");
    assert_eq!(e.loc, loc(2, 8));
    assert!(e.message.contains("-1"), "{}", e.message);
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Heal,
    Sleep(u64),
    Partition { a: String, b: String },
    Pair(u8, u8),
}

#[test]
fn enum_forms() {
    let steps: Vec<Step> = from_node(&parse_ok(
        "- heal\n- sleep: 5\n- partition: {a: x, b: y}\n- pair: [1, 2]\n- heal:\n",
    ))
    .unwrap();
    let partition = Step::Partition {
        a: "x".into(),
        b: "y".into(),
    };
    let expected = vec![
        Step::Heal,
        Step::Sleep(5),
        partition,
        Step::Pair(1, 2),
        Step::Heal,
    ];
    assert_eq!(steps, expected);

    let e = de_err::<Step>("sleep: 1\nheal: ~\n");
    assert_eq!(e.loc, loc(1, 1));
    assert!(e.message.contains("single-key mapping"), "{}", e.message);
    assert!(e.message.contains("2 keys"), "{}", e.message);

    let e = de_err::<Vec<Step>>("- heal\n- sleeep: 5\n");
    assert_eq!(e.loc, loc(2, 3));
    assert!(e
        .message
        .starts_with("unknown variant `sleeep`; did you mean `sleep`?"));
    assert!(e.message.contains("`heal`, `sleep`, `partition`, `pair`"));

    let e = de_err::<Step>("sleep\n");
    assert!(e.message.contains("`sleep` needs a value"), "{}", e.message);
    let e = de_err::<Step>("heal: 3\n");
    assert_eq!(
        (e.loc, e.message.as_str()),
        (loc(1, 7), "`heal` takes no value, found an integer")
    );
    let e = de_err::<Step>("[heal]\n");
    assert!(e
        .message
        .starts_with("expected a string or a single-key mapping"));
    let e = de_err::<Step>("pair: [1, 2, 3]\n");
    assert_eq!(e.loc, loc(1, 7));
    assert_eq!(e.message, "expected a sequence of 2 items, found 3");
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WithSpans {
    name: Spanned<String>,
    #[serde(default)]
    ports: Vec<Spanned<u16>>,
    maybe: Option<Spanned<bool>>,
}

#[test]
fn spanned_inside_struct_has_the_node_location() {
    let v: WithSpans = from_node(&parse_ok("name: web\nports: [80, 443]\n")).unwrap();
    assert_eq!(v.name.value, "web");
    assert_eq!(v.name.loc, loc(1, 7));
    assert_eq!(v.ports[1].value, 443);
    assert_eq!(v.ports[1].loc, loc(2, 13));
    assert!(v.maybe.is_none());
    let e = de_err::<WithSpans>("name: web\nports: [80, x]\n");
    assert_eq!(
        (e.loc, e.message.as_str()),
        (loc(2, 13), "expected an integer, found a string")
    );
    // A Spanned value from another deserializer still works, without a location.
    let v: Spanned<u32> = serde_json::from_str("7").unwrap();
    assert_eq!((v.loc, v.value), (Loc::default(), 7));
}

#[test]
fn scalars_convert_to_strings() {
    let m: BTreeMap<String, String> =
        from_node(&parse_ok("a: 1\nb: 1.5\nc: true\nd: '007'\ne: 2.0\n5: x\n")).unwrap();
    let text = |k: &str| m[k].as_str();
    assert_eq!(
        (
            text("a"),
            text("b"),
            text("c"),
            text("d"),
            text("e"),
            text("5")
        ),
        ("1", "1.5", "true", "007", "2.0", "x")
    );
    let e = de_err::<BTreeMap<String, String>>("a:\n");
    assert_eq!(
        (e.loc, e.message.as_str()),
        (loc(1, 2), "expected a string, found null (an empty value)")
    );
}

#[test]
fn integers_are_strict() {
    #[derive(Debug, Deserialize)]
    struct Nums {
        n: u64,
        f: f64,
    }
    let v: Nums = from_node(&parse_ok("n: 5\nf: 3\n")).unwrap();
    assert_eq!((v.n, v.f), (5, 3.0));
    let e = de_err::<Nums>("n: \"5\"\nf: 1\n");
    assert_eq!(e.loc, loc(1, 4));
    assert_eq!(
        e.message,
        "expected an integer, found a string (\"5\" is quoted; remove the quotes for a number)"
    );
    let e = de_err::<Nums>("n: 1.5\nf: 1\n");
    assert_eq!(e.message, "expected an integer, found a decimal number");
    let e = de_err::<Nums>("n: 1\nf: x\n");
    assert_eq!(
        (e.loc, e.message.as_str()),
        (loc(2, 4), "expected a number, found a string")
    );
    let e = de_err::<u8>("300\n");
    assert!(e.message.contains("300"), "{}", e.message);
}

#[test]
fn core_schema_scalars() {
    let root = parse_ok(
        "[~, null, true, False, 12, -3, 0x1F, 0o17, 1.5, -.5e1, .inf, -.INF, yes, '1', \"true\", 1_000]",
    );
    let values: Vec<&Value> = seq(&root).iter().map(|n| &n.value).collect();
    let s = |t: &str| Value::Str(t.to_string());
    let expected = [
        Value::Null,
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Int(12),
        Value::Int(-3),
        Value::Int(31),
        Value::Int(15),
        Value::Float(1.5),
        Value::Float(-5.0),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        s("yes"),
        s("1"),
        s("true"),
        s("1_000"),
    ];
    assert_eq!(values, expected.iter().collect::<Vec<_>>());
    assert_eq!(parse_ok("a:\n").get("a").unwrap().value, Value::Null);
    assert_eq!(
        parse_ok("a: |\n  block\n").get("a").unwrap().value,
        s("block\n")
    );
    assert!(matches!(parse_ok(".nan").value, Value::Float(f) if f.is_nan()));
    let e = parse_err("a: 99999999999999999999\n");
    assert_eq!(e.loc, loc(1, 4));
    assert!(
        e.message.contains("does not fit in 64 bits"),
        "{}",
        e.message
    );
}

#[test]
fn tags() {
    let root = parse_ok("a: !!str 5\nb: !!float 2\nc: ! 7\nd: !!map {x: 1}\n");
    assert_eq!(root.get("a").unwrap().value, Value::Str("5".into()));
    assert_eq!(root.get("b").unwrap().value, Value::Float(2.0));
    assert_eq!(root.get("c").unwrap().value, Value::Str("7".into()));
    let e = parse_err("a: !foo 5\n");
    assert!(
        e.message.contains("unsupported YAML tag `!foo`"),
        "{}",
        e.message
    );
    let e = parse_err("a: !!int x\n");
    assert!(e.message.contains("does not fit the tag"), "{}", e.message);
    let e = parse_err("a: !!seq {x: 1}\n");
    assert!(e.message.contains("unsupported YAML tag"), "{}", e.message);
}

#[test]
fn aliases_expand_and_point_at_the_alias() {
    let root = parse_ok("base: &b {x: 1}\ncopy: *b\n");
    let copy = root.get("copy").unwrap();
    assert_eq!(copy.loc, loc(2, 7));
    assert_eq!(copy.get("x").unwrap().value, Value::Int(1));
    assert_eq!(
        copy.get("x").unwrap().loc,
        loc(1, 14),
        "inner nodes point at the definition"
    );
    let e = parse_err("a: &a [1, *a]\n");
    assert!(
        e.message.contains("its own enclosing anchor"),
        "{}",
        e.message
    );
}

#[test]
fn limit_file_too_large() {
    let text = "a: 1\n".repeat(3 * 1024 * 1024 / 5 + 1);
    let e = parse_err(&text);
    assert_eq!(e.loc, loc(1, 1));
    assert_eq!(
        e.message,
        format!("file is {} bytes; the limit is 1048576", text.len())
    );
}

#[test]
fn limit_depth() {
    let text = "[".repeat(100) + &"]".repeat(100);
    let e = parse_err(&text);
    assert_eq!(e.message, "nesting deeper than 32 levels");
    assert_eq!(e.loc, loc(1, 33));
    let ok = "[".repeat(32) + &"]".repeat(32);
    assert!(parse(&ok, &Limits::default()).is_ok());
    // Pathological nesting fails fast with our message, not a stack overflow.
    for text in [
        "[".repeat(100_000),
        "{a: ".repeat(100_000),
        "- ".repeat(100_000) + "x",
    ] {
        assert_eq!(parse_err(&text).message, "nesting deeper than 32 levels");
    }
    // Exactly at the limit is fine, in block style too.
    let block: String = (0..31)
        .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
        .collect();
    assert!(parse(
        &(block + &"  ".repeat(31) + "last: 1\n"),
        &Limits::default()
    )
    .is_ok());
    assert!(parse(&("- ".repeat(32) + "x"), &Limits::default()).is_ok());
    let flat = Limits {
        depth_max: 0,
        ..Limits::default()
    };
    assert!(parse("5", &flat).is_ok());
    assert_eq!(
        parse("[5]", &flat).unwrap_err().message,
        "nesting deeper than 0 levels"
    );
    // Block nesting is counted too.
    let block: String = (0..40)
        .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
        .collect();
    assert_eq!(parse_err(&block).message, "nesting deeper than 32 levels");
    // An alias may not smuggle in depth beyond the limit.
    let deep = "[".repeat(20) + "1" + &"]".repeat(20);
    let text = format!("a: &a {deep}\nb: [[[[[[[[[[[[[[*a]]]]]]]]]]]]]]\n");
    assert_eq!(parse_err(&text).message, "nesting deeper than 32 levels");
}

#[test]
fn limit_billion_laughs() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        let refs = vec![format!("*{prev}"); 10].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    // A hang would show as a test timeout; speed belongs to the benchmark.
    let e = parse_err(&text);
    assert!(
        e.message
            .starts_with("alias expansion limit reached (a 'billion laughs' file?)"),
        "{}",
        e.message
    );
    assert_eq!(
        e.loc.line, 5,
        "fails at the first level that exceeds the budget"
    );
}

#[test]
fn limit_expanded_bytes_counts_what_aliases_copy() {
    // One 900 KB string and a few thousand aliases of it: few nodes, gigabytes of text.
    let mut text = format!("big: &s \"{}\"\nrefs:\n", "x".repeat(900_000));
    for _ in 0..2_000 {
        text.push_str("  - *s\n");
    }
    assert!(text.len() < 1 << 20);
    let e = parse_err(&text);
    assert!(
        e.message.starts_with(
            "document holds more than 8388608 bytes of text once its aliases are expanded"
        ),
        "{}",
        e.message
    );
    assert_eq!(
        e.loc.line, 11,
        "refused at the alias that crosses the budget"
    );
    // Keys count too, and the budget is exact.
    let limits = Limits {
        expanded_bytes_max: 10,
        ..Limits::default()
    };
    assert!(parse("a: &x abcd\nb: *x", &limits).is_ok());
    assert!(parse("a: &x abcd\nb: *x\nc: *x", &limits).is_err());
}

#[test]
fn limit_nodes() {
    let limits = Limits {
        nodes_max: 10,
        ..Limits::default()
    };
    let e = parse("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", &limits).unwrap_err();
    assert_eq!(e.loc, loc(1, 29));
    assert!(e.message.contains("more than 10 nodes"), "{}", e.message);
}

#[test]
fn duplicate_and_non_scalar_keys() {
    let e = parse_err("a: 1\nb:\n  c: 1\n  c: 2\n");
    assert_eq!(e.loc, loc(4, 3));
    assert_eq!(e.message, "duplicate key `c` (first defined at 3:3)");
    let e = parse_err("{x: 1, x: 2}");
    assert_eq!(e.loc, loc(1, 8));
    let e = parse_err("? [a]\n: b\n");
    assert_eq!(e.loc, loc(1, 3));
    assert!(
        e.message.contains("this key is a sequence"),
        "{}",
        e.message
    );
    // Same text, different YAML types: distinct keys.
    assert!(parse("1: a\n'1': b\n", &Limits::default()).is_ok());
}

#[test]
fn syntax_errors_have_locations() {
    let e = parse_err("a: 1\nb: [1, 2\n");
    assert!(
        e.message.starts_with("YAML syntax error: "),
        "{}",
        e.message
    );
    assert_eq!(e.loc.line, 2, "{e}");
    let e = parse_err("a: 1\n  b: 2\n");
    assert_eq!(e.loc.line, 2, "{e}");
    let e = parse_err("a: *nope\n");
    assert_eq!(e.loc, loc(1, 4), "{e}");
}

#[test]
fn document_count() {
    assert_eq!(parse_err("").message, "empty document");
    assert_eq!(parse_err("# only a comment\n").message, "empty document");
    assert_eq!(parse_err("---\n").message, "empty document");
    assert_eq!(parse_ok("--- 5\n").value, Value::Int(5));
    assert_eq!(parse_ok("~").value, Value::Null);
    let e = parse_err("a: 1\n---\nb: 2\n");
    assert_eq!(e.loc, loc(2, 1));
    assert!(
        e.message.contains("only one YAML document"),
        "{}",
        e.message
    );
}

#[test]
fn serde_attributes() {
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case", deny_unknown_fields)]
    struct Opts {
        node_count: u32,
        #[serde(default)]
        verbose: bool,
        label: Option<String>,
        tuple: Option<(u8, String)>,
        unit: Option<()>,
    }
    let v: Opts = from_node(&parse_ok("node_count: 3\ntuple: [1, x]\n")).unwrap();
    let expected = Opts {
        node_count: 3,
        verbose: false,
        label: None,
        tuple: Some((1, "x".into())),
        unit: None,
    };
    assert_eq!(v, expected);
    let e = de_err::<Opts>("node_count: 3\n1: x\n");
    assert_eq!(e.loc, loc(2, 1));
    assert!(e.message.starts_with("unknown field `1`"), "{}", e.message);
    // An empty mapping value reads as "no fields".
    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        opts: Inner,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        #[serde(default)]
        x: u8,
    }
    let v: Outer = from_node(&parse_ok("opts:\n")).unwrap();
    assert_eq!(
        v,
        Outer {
            opts: Inner { x: 0 }
        }
    );
}

#[test]
fn untagged_and_internally_tagged_enums() {
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(untagged)]
    enum Num {
        One(u32),
        Many(Vec<u32>),
    }
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
    enum Op {
        Kill { node: String },
        Wait { ms: u64 },
    }
    let v: Vec<Num> = from_node(&parse_ok("[1, [2, 3]]")).unwrap();
    assert_eq!(v, vec![Num::One(1), Num::Many(vec![2, 3])]);
    let v: Vec<Op> = from_node(&parse_ok(
        "- {kind: kill, node: n1}\n- {kind: wait, ms: 5}\n",
    ))
    .unwrap();
    let expected = vec![Op::Kill { node: "n1".into() }, Op::Wait { ms: 5 }];
    assert_eq!(v, expected);
    let e = de_err::<Vec<Op>>("- kind: kill\n  node: n1\n- kind: wiat\n  ms: 5\n");
    assert_eq!(e.loc, loc(3, 9), "the tag value itself: {e}");
    assert!(e.message.contains("did you mean `wait`?"), "{}", e.message);
    let e = de_err::<Vec<Num>>("[1, x]");
    assert_eq!(e.loc, loc(1, 5), "{e}");
}

#[test]
fn every_step_error_is_reported() {
    // The pattern the scenario loader uses: one from_node call per step, collecting errors.
    let root = parse_ok("steps:\n  - {key: a, value: 1}\n  - {key: b, valeu: 2}\n  - {key: c}\n");
    let errors: Vec<String> = seq(root.get("steps").unwrap())
        .iter()
        .filter_map(|step| from_node::<Pair>(step).err())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "3:14: unknown field `valeu`; did you mean `value`? expected one of `key`, `value`",
            "4:5: missing required field `value`",
        ]
    );
}

#[test]
fn node_helpers_and_json() {
    let root = parse_ok("a: {b: [1, 2.5, x, ~, true]}\n7: .inf\n");
    assert_eq!(root.kind_name(), "a mapping");
    let a = root.get("a").unwrap();
    assert_eq!(a.get("b").unwrap().kind_name(), "a sequence");
    assert!(root.get("7").is_none(), "get looks up string keys only");
    assert!(root.get("zz").is_none() && a.get("b").unwrap().get("x").is_none());
    assert_eq!(seq(a.get("b").unwrap())[2].as_str(), Some("x"));
    assert_eq!(
        root.to_json(),
        serde_json::json!({"a": {"b": [1, 2.5, "x", null, true]}, "7": ".inf"})
    );
}

#[test]
fn nearest_cases() {
    let fields = ["key", "value", "partition_duration", "seed"];
    assert_eq!(nearest("kye", fields), Some("key"));
    assert_eq!(nearest("KEY", fields), Some("key"));
    assert_eq!(nearest("valeu", fields), Some("value"));
    assert_eq!(nearest("vlue", fields), Some("value"));
    assert_eq!(
        nearest("partiton_duraton", fields),
        Some("partition_duration")
    );
    assert_eq!(nearest("sed", fields), Some("seed"));
    assert_eq!(nearest("zebra", fields), None);
    assert_eq!(nearest("x", fields), None);
    assert_eq!(nearest("", fields), None);
    assert_eq!(nearest("abc", []), None);
    assert_eq!(
        nearest("sleep", ["slept", "sleep"]),
        Some("sleep"),
        "exact wins"
    );
}

/// Tiny deterministic LCG (Knuth's MMIX constants); no rand crate needed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next()).unwrap_or(0) % n.max(1)
    }
}

fn mutate(rng: &mut Lcg, seed: &[u8]) -> Vec<u8> {
    const SPICY: &[u8] = b"[]{}:-,&*!|>?'\"#%@`~\t\n\r \\0123456789abcxyz.\xff\xc3";
    let mut bytes = seed.to_vec();
    for _ in 0..=rng.below(8) {
        let at = rng.below(bytes.len() + 1);
        let byte = if rng.below(4) == 0 {
            u8::try_from(rng.below(256)).unwrap_or(0)
        } else {
            SPICY[rng.below(SPICY.len())]
        };
        match rng.below(3) {
            0 => bytes.insert(at, byte),
            1 if at < bytes.len() => bytes[at] = byte,
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => bytes.push(byte),
        }
    }
    bytes
}

#[test]
fn random_and_mutated_input_never_panics() {
    let corpus: Vec<String> = vec![
        NESTED.to_string(),
        "a: &x [1, {b: *x}]\nc: !!str d\n? e\n: |\n  f\n  g\n".to_string(),
        "- {kind: kill, node: n1}\n- sleep: 5\n- 'q': \"x\\ty\"\n".to_string(),
        "--- >-\n  folded\n  text\n...\n".to_string(),
        "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n".to_string(),
    ];
    let mut rng = Lcg(0x5eed);
    let mut parsed = 0;
    for i in 0..4000 {
        let bytes = if i % 4 == 0 {
            (0..rng.below(64)).map(|_| random_byte(&mut rng)).collect()
        } else {
            let seed = corpus[rng.below(corpus.len())].as_bytes();
            mutate(&mut rng, seed)
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(node) = parse(&text, &Limits::default()) {
            parsed += 1;
            // Exercise the deserializer on whatever came out, too.
            let _ = from_node::<serde_json::Value>(&node);
            let _ = from_node::<Vec<Step>>(&node);
            let _ = node.to_json();
        }
    }
    assert!(
        parsed > 100,
        "the mutations should leave plenty of valid YAML ({parsed})"
    );
}

/// Mostly YAML punctuation, so random strings hit the parser's interesting paths.
fn random_byte(rng: &mut Lcg) -> u8 {
    const SPICY: &[u8] = b"[]{}:-,&*!|>?'\"#%\n \ta1";
    if rng.below(2) == 0 {
        SPICY[rng.below(SPICY.len())]
    } else {
        u8::try_from(rng.below(128)).unwrap_or(0)
    }
}
