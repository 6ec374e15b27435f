//! Scenario parsing and validation on arbitrary bytes: never a panic, never a hang,
//! bounded memory. Every input ends as a scenario or as located errors.
//!
//! The first byte picks a generator, the rest drives it: raw text (mode 0), a
//! scenario built with anchors and aliases (1), or one of nested repeats (2). The
//! generators reach the alias and repeat budgets far more often than raw bytes do.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Choices drawn from the fuzzer's bytes (zero once they run out).
struct Draw<'a>(&'a [u8]);

impl Draw<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn below(&mut self, n: usize) -> usize {
        (usize::from(self.byte()) << 8 | usize::from(self.byte())) % n.max(1)
    }
}

fn aliases(d: &mut Draw) -> String {
    let mut text = String::from("model: raftkv\nnodes: [n1, n2, n3]\nexpect: converged\n");
    let anchors = d.below(20);
    text.push_str("description: ");
    for i in 0..anchors {
        let value = match d.below(4) {
            0 => format!("\"{}\"", "x".repeat(d.below(60_000))),
            1 if i > 0 => {
                let refs: Vec<String> = (0..1 + d.below(16)).map(|_| format!("*a{}", d.below(i))).collect();
                format!("[{}]", refs.join(", "))
            }
            2 => format!("{}ms", d.below(100_000)),
            _ => "n1".into(),
        };
        text.push_str(&format!("&a{i} [{value}]\nx{i}: "));
    }
    text.push_str("null\nsteps:\n");
    for _ in 0..1 + d.below(200) {
        let target = if anchors > 0 { format!("*a{}", d.below(anchors)) } else { "1ms".into() };
        text.push_str(&match d.below(3) {
            0 => format!("  - sleep: {target}\n"),
            1 => format!("  - crash: {target}\n"),
            _ => format!("  - repeat: {{count: {}, steps: [{{sleep: {target}}}]}}\n", d.below(200_000)),
        });
    }
    text
}

fn repeats(d: &mut Draw, depth: usize) -> String {
    let count = d.below(200_001);
    let inner = if depth == 0 || d.below(4) == 0 {
        "{crash: {node: n1, optional: true}}".to_string()
    } else {
        repeats(d, depth - 1)
    };
    format!("{{repeat: {{count: {count}, steps: [{inner}]}}}}")
}

fn check(text: &str) {
    match faultline::lang::scenario::load_str("fuzz.yaml", text) {
        Ok(scenario) => assert!(!scenario.variants.is_empty() && !scenario.steps.is_empty()),
        Err(faultline::lang::scenario::LoadError::Invalid(d)) => assert!(!d.0.is_empty()),
        Err(faultline::lang::scenario::LoadError::Io(_)) => unreachable!("no I/O on a string"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((mode, rest)) = data.split_first() else { return };
    let mut d = Draw(rest);
    match mode % 3 {
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                check(text);
            }
        }
        1 => check(&aliases(&mut d)),
        _ => {
            let mut text = String::from("model: raftkv\nnodes: [n1]\nexpect: converged\nsteps:\n");
            for _ in 0..1 + d.below(8) {
                let depth = d.below(8);
                text.push_str(&format!("  - {}\n", repeats(&mut d, depth)));
            }
            check(&text);
        }
    }
});
