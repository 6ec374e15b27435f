//! A property test run in CI: thousands of arbitrary and mutated scenario files
//! through parsing and validation, generated files with anchors and aliases and
//! with nested repeats, and non-regular paths (fifos, devices, link loops). No
//! input may panic or block; every one ends as a scenario or as located errors.
//! (`harness/fuzz/` runs the same property under libFuzzer for as long as you like.)

mod common;

use faultline::lang::scenario::{load_str, LoadError};

/// A tiny deterministic generator (xorshift): the same inputs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    ":",
    "- ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\n",
    "  ",
    "&a ",
    "*a",
    "!tag ",
    "\"",
    "'",
    "#",
    "|",
    ">",
    "~",
    "null",
    "-1s",
    "1e400",
    "999999999999999999999",
    "leader",
    "steps:",
    "chaos:",
    "variants:",
    "expect:",
    "failpoint:",
    "partition:",
    "{groups: [[n1], [n2]]}",
    "client:",
    "op:",
    "await:",
    "repeat:",
    "\t",
    "\u{0}",
    "é",
    "<<: *a",
];

fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut text = base.to_string();
    for _ in 0..1 + rng.below(4) {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            text.push_str(TOKENS[rng.below(TOKENS.len())]);
            continue;
        }
        let at = rng.below(chars.len());
        text = match rng.below(6) {
            // Insert a token.
            0 => {
                chars[..at].iter().collect::<String>()
                    + TOKENS[rng.below(TOKENS.len())]
                    + &chars[at..].iter().collect::<String>()
            }
            // Delete a span.
            1 => {
                let end = (at + 1 + rng.below(40)).min(chars.len());
                chars[..at].iter().chain(&chars[end..]).collect()
            }
            // Duplicate a line.
            2 => {
                let lines: Vec<&str> = text.lines().collect();
                let i = rng.below(lines.len());
                let mut out: Vec<&str> = lines.clone();
                out.insert(i, lines[i]);
                out.join("\n")
            }
            // Truncate.
            3 => chars[..at].iter().collect(),
            // Replace a character with a random printable one.
            4 => {
                let mut c = chars;
                c[at] = (b' ' + (rng.next() % 95) as u8) as char;
                c.into_iter().collect()
            }
            // Swap two lines.
            _ => {
                let mut lines: Vec<&str> = text.lines().collect();
                let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(i, j);
                lines.join("\n")
            }
        };
    }
    text
}

fn check(text: &str) {
    match load_str("prop.yaml", text) {
        Ok(s) => assert!(!s.variants.is_empty() && !s.steps.is_empty()),
        Err(LoadError::Invalid(d)) => {
            assert!(!d.0.is_empty());
            assert!(
                d.0.iter().all(|e| e.loc.line >= 1 && !e.message.is_empty()),
                "{d}"
            );
        }
        Err(LoadError::Io(e)) => panic!("io error on a string: {e}"),
    }
}

#[test]
fn mutated_scenarios_never_panic() {
    let root = common::workspace();
    let mut bases = Vec::new();
    for dir in ["scenarios", "harness/tests/bad_input"] {
        for file in faultline::lang::scenario::scenario_files(&[root.join(dir)]).unwrap() {
            bases.push(std::fs::read_to_string(file).unwrap());
        }
    }
    let mut rng = Rng(0x5eed_f00d);
    let mut inputs = 0;
    for _ in 0..15_000 {
        let base = &bases[rng.below(bases.len())];
        let text = mutate(&mut rng, base);
        check(&text);
        inputs += 1;
    }
    assert_eq!(inputs, 15_000);
}

#[test]
fn arbitrary_token_soup_never_panics() {
    let mut rng = Rng(0xdead_beef);
    for _ in 0..10_000 {
        let mut text = String::new();
        for _ in 0..rng.below(60) {
            text.push_str(TOKENS[rng.below(TOKENS.len())]);
            if rng.below(3) == 0 {
                text.push_str(&format!("k{}", rng.below(9)));
            }
        }
        check(&text);
    }
}

/// A scenario with anchors and aliases placed at random: anchors on values,
/// lists and maps, aliases to them in later places (including inside other
/// anchored values, so expansions nest), and aliases of large strings.
fn alias_scenario(rng: &mut Rng) -> String {
    let mut text = String::from("model: raftkv\nnodes: [n1, n2, n3]\n");
    let mut anchors: Vec<String> = Vec::new();
    let value = |rng: &mut Rng, anchors: &[String]| -> String {
        match rng.below(6) {
            0 if !anchors.is_empty() => format!("*{}", anchors[rng.below(anchors.len())]),
            1 => format!("\"{}\"", "x".repeat(rng.below(2_000))),
            2 => format!("{}ms", rng.below(10_000)),
            3 if !anchors.is_empty() => {
                let refs: Vec<String> = (0..1 + rng.below(12))
                    .map(|_| format!("*{}", anchors[rng.below(anchors.len())]))
                    .collect();
                format!("[{}]", refs.join(", "))
            }
            4 => "{partition: {isolate: n1}}".to_string(),
            _ => "n2".to_string(),
        }
    };
    text.push_str("description: ");
    for i in 0..rng.below(30) {
        let name = format!("a{i}");
        let v = value(rng, &anchors);
        text.push_str(&format!("&{name} [{v}]\nx{i}: "));
        anchors.push(name);
    }
    text.push_str("null\n");
    text.push_str("expect: converged\nsteps:\n");
    for _ in 0..1 + rng.below(40) {
        let v = value(rng, &anchors);
        let step = match rng.below(5) {
            0 => format!("  - sleep: {v}\n"),
            1 => format!("  - crash: {v}\n"),
            2 => format!("  - {v}\n"),
            3 => format!("  - repeat: {{count: 3, steps: [{{sleep: {v}}}]}}\n"),
            _ => format!("  - client: {{on: {v}, op: put, key: {v}, value: {v}}}\n"),
        };
        text.push_str(&step);
    }
    text
}

/// Repeats nested up to six deep, with counts up to the limit and beyond.
fn nested_repeat_scenario(rng: &mut Rng) -> String {
    fn repeat(rng: &mut Rng, depth: usize) -> String {
        let count = match rng.below(4) {
            0 => rng.below(3) as u64,
            1 => 100_000,
            2 => 100_001 + rng.below(10) as u64,
            _ => rng.below(1_000) as u64,
        };
        let inner = if depth == 0 || rng.below(4) == 0 {
            [
                "{crash: {node: n1, optional: true}}",
                "{sleep: 1ms}",
                "{heal: all}",
            ][rng.below(3)]
            .to_string()
        } else {
            repeat(rng, depth - 1)
        };
        format!("{{repeat: {{count: {count}, steps: [{inner}]}}}}")
    }
    let mut text = String::from("model: raftkv\nnodes: [n1, n2, n3]\nexpect: converged\nsteps:\n");
    for _ in 0..1 + rng.below(5) {
        let depth = rng.below(6);
        text.push_str(&format!("  - {}\n", repeat(rng, depth)));
    }
    text
}

#[test]
fn generated_aliases_and_anchors_never_panic() {
    let mut rng = Rng(0xa11a_5eed);
    let mut inputs = 0;
    for _ in 0..2_000 {
        check(&alias_scenario(&mut rng));
        inputs += 1;
    }
    // Mutations of them too: anchors cut in half, aliases left dangling.
    for _ in 0..2_000 {
        let base = alias_scenario(&mut rng);
        check(&mutate(&mut rng, &base));
        inputs += 1;
    }
    assert_eq!(inputs, 4_000);
}

#[test]
fn generated_nested_repeats_never_panic() {
    let mut rng = Rng(0x4e57_ed00);
    for _ in 0..3_000 {
        check(&nested_repeat_scenario(&mut rng));
    }
}

#[test]
fn non_regular_paths_are_refused_without_blocking() {
    use faultline::lang::scenario::load;
    use std::os::unix::fs::symlink;
    let dir = common::temp_dir("fuzz-prop", "paths");
    let fifo = dir.join("fifo.yaml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    symlink("loop.yaml", dir.join("loop.yaml")).unwrap();
    symlink("missing.yaml", dir.join("dangling.yaml")).unwrap();
    symlink(&fifo, dir.join("to-fifo.yaml")).unwrap();
    symlink("/dev/zero", dir.join("to-zero.yaml")).unwrap();
    std::fs::create_dir(dir.join("dir.yaml")).unwrap();
    let socket = std::os::unix::net::UnixListener::bind(dir.join("socket.yaml")).unwrap();
    let paths: Vec<std::path::PathBuf> = [
        "fifo.yaml",
        "loop.yaml",
        "dangling.yaml",
        "to-fifo.yaml",
        "to-zero.yaml",
        "dir.yaml",
        "socket.yaml",
    ]
    .iter()
    .map(|p| dir.join(p))
    .chain(
        [
            "/dev/zero",
            "/dev/null",
            "/dev/urandom",
            "/dev/full",
            "/proc/self/mem",
        ]
        .map(Into::into),
    )
    .collect();
    let mut rng = Rng(0x0bad_f11e);
    for _ in 0..500 {
        let path = &paths[rng.below(paths.len())];
        match load(path) {
            Err(LoadError::Io(message)) => assert!(!message.is_empty()),
            Err(LoadError::Invalid(d)) => panic!("{}: read as a scenario: {d}", path.display()),
            Ok(_) => panic!("{}: loaded", path.display()),
        }
    }
    drop(socket);
    std::fs::remove_dir_all(&dir).unwrap();
}
