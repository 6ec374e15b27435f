//! A property test run in CI: thousands of arbitrary and mutated scenario files
//! through parsing and validation. No input may panic; every one ends as a
//! scenario or as located errors. (`harness/fuzz/` runs the same property under
//! libFuzzer for as long as you like.)

mod common;

use faultline::scenario::{load_str, LoadError};

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
        for file in faultline::scenario::scenario_files(&[root.join(dir)]).unwrap() {
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
