//! The shape of `harness/src`: no import circle between its files, nor between its
//! top-level modules, and only the command line picks exit codes. A path through
//! a `mod.rs` that re-exports a child's item (`pub use child::item`) counts as
//! an import of the child, so a circle through a re-export is seen. The node API
//! (`api/src`) has no import circle either, and depends on no crate of ours. A circle makes
//! every module in it depend on all the others (the command line once imported
//! the sweep, which imported the command line back for its exit codes).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `cli/exit.rs` -> ["cli", "exit"]; `sweep/mod.rs` -> ["sweep"]; `lib.rs` -> [].
fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text before the unit tests: tests may reach anywhere.
fn code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    }
}

/// Every `crate::a::b` / `super::c` path in `text`, with `{...}` groups expanded
/// one level, resolved against `module`.
fn paths(text: &str, module: &Module) -> Vec<Module> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let path = &rest[..end];
        // `super` is the parent module, for `a/b.rs` and `a/b/mod.rs` alike
        // (both are module a::b).
        let mut base: Module = if path.starts_with("crate") {
            Vec::new()
        } else {
            module[..module.len().saturating_sub(1)].to_vec()
        };
        let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        segments.remove(0);
        while segments.first() == Some(&"super") {
            base.pop();
            segments.remove(0);
        }
        let mut full = base.clone();
        full.extend(segments.iter().map(|s| s.to_string()));
        found.push(full.clone());
        if rest[end..].starts_with('{') {
            if let Some(close) = rest[end..].find('}') {
                for item in rest[end + 1..end + close].split(',') {
                    let item = item.split(" as ").next().unwrap().trim();
                    if item.is_empty() || item == "self" || item.contains('{') {
                        continue;
                    }
                    let mut p = full.clone();
                    p.extend(item.split("::").map(str::to_string));
                    found.push(p);
                }
            }
        }
        i += end.max(1);
    }
    found
}

/// The modules a file declares (`mod x;`, `pub(super) mod y;`).
fn children(text: &str) -> BTreeSet<&str> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = match line.strip_prefix("pub") {
                Some(rest) if rest.starts_with('(') => &rest[rest.find(')')? + 1..],
                Some(rest) => rest,
                None => line,
            };
            let name = rest.trim_start().strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim())
        })
        .collect()
}

/// What a file re-exports from the modules it declares: `pub use a::{b, c as d};`
/// and `pub(in crate::x) use e::f;` give `b` -> `a::b`, `d` -> `a::c`, `f` -> `e::f`.
/// A name imported through the re-export is the child's, not the file's.
fn reexports(text: &str) -> BTreeMap<String, Vec<String>> {
    let children = children(text);
    let mut out = BTreeMap::new();
    for (at, _) in text.match_indices("pub") {
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        if !text[line_start..at].trim().is_empty() {
            continue;
        }
        let mut rest = &text[at + 3..];
        if rest.starts_with('(') {
            let Some(close) = rest.find(')') else {
                continue;
            };
            rest = &rest[close + 1..];
        }
        let Some(rest) = rest.trim_start().strip_prefix("use ") else {
            continue;
        };
        let statement: String = rest[..rest.find(';').unwrap_or(rest.len())]
            .chars()
            .filter(|c| !c.is_whitespace() || *c == ' ')
            .collect();
        let (prefix, items) = match statement.find("::{") {
            Some(open) => (
                &statement[..open],
                statement[open + 3..].trim_end_matches('}').to_string(),
            ),
            None => match statement.rfind("::") {
                Some(sep) => (&statement[..sep], statement[sep + 2..].to_string()),
                None => continue,
            },
        };
        let prefix: Vec<String> = prefix.trim().split("::").map(str::to_string).collect();
        if !children.contains(prefix[0].as_str()) {
            continue;
        }
        for item in items.split(',') {
            let mut parts = item.split(" as ");
            let path = parts.next().unwrap().trim();
            if path.is_empty() || path == "self" || path.contains('{') || path == "*" {
                continue;
            }
            let name = parts
                .next()
                .map_or_else(|| path.rsplit("::").next().unwrap().trim(), str::trim);
            let mut target = prefix.clone();
            target.extend(path.split("::").map(str::to_string));
            out.insert(name.to_string(), target);
        }
    }
    out
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    graph_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// The import graph of the files under one crate's `src`.
fn graph_of(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let modules: BTreeMap<Module, PathBuf> = files
        .iter()
        .map(|f| (module_of(root, f), f.clone()))
        .collect();
    let texts: BTreeMap<&Module, String> = modules
        .iter()
        .map(|(m, f)| (m, std::fs::read_to_string(f).unwrap()))
        .collect();
    let reexported: BTreeMap<&Module, BTreeMap<String, Vec<String>>> = texts
        .iter()
        .map(|(m, text)| (*m, reexports(code(text))))
        .collect();
    // The file that defines what `path` names: the longest module prefix, or,
    // when that module re-exports the next segment from a child, the child's.
    let resolve = |path: &Module| -> Option<Module> {
        let mut path = path.clone();
        for _ in 0..8 {
            let module = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|m| modules.contains_key(m))?;
            let through = path
                .get(module.len())
                .and_then(|name| reexported[&module].get(name));
            let Some(target) = through else {
                return Some(module);
            };
            let mut next = module.clone();
            next.extend(target.iter().cloned());
            next.extend(path[module.len() + 1..].iter().cloned());
            path = next;
        }
        None
    };
    let mut edges = BTreeMap::new();
    for (module, text) in &texts {
        let module = *module;
        let mut to = BTreeSet::new();
        for path in paths(code(text), module) {
            if let Some(target) = resolve(&path) {
                if target != *module {
                    to.insert(target);
                }
            }
        }
        edges.insert(module.clone(), to);
    }
    edges
}

/// Strongly connected components with more than one member (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn show(circles: &[Vec<Module>]) -> String {
    circles
        .iter()
        .map(|c| {
            c.iter()
                .map(|m| {
                    if m.is_empty() {
                        "lib".into()
                    } else {
                        m.join("/")
                    }
                })
                .collect::<Vec<_>>()
                .join(" <-> ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_two_files_of_harness_src_import_each_other_in_a_circle() {
    let edges = graph();
    assert!(edges.len() > 40, "found {} files", edges.len());
    let found = circles(&edges);
    assert!(found.is_empty(), "import circles:\n{}", show(&found));
}

/// The node API (`api/`, crate `faultline-api`) is a face of its own: no two of its
/// files import each other in a circle (the context once held both the harness's
/// side and the node's, and the bug modes sat with the model contract that needs
/// the context), and it depends on neither the models nor the harness.
#[test]
fn the_node_api_crate_has_no_import_circle_and_depends_on_no_other_crate_of_ours() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let edges = graph_of(&workspace.join("api/src"));
    assert!(edges.len() > 10, "found {} files", edges.len());
    let found = circles(&edges);
    assert!(found.is_empty(), "import circles:\n{}", show(&found));
    let manifest = std::fs::read_to_string(workspace.join("api/Cargo.toml")).unwrap();
    for ours in [
        "faultline-nodes",
        "faultline =",
        "faultline.workspace",
        "path =",
    ] {
        assert!(
            !manifest.contains(ours),
            "api/Cargo.toml names `{ours}`: the node API depends on no crate of ours"
        );
    }
}

#[test]
fn no_two_top_level_modules_import_each_other_in_a_circle() {
    let mut top: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, to) in graph() {
        let from: Module = from.into_iter().take(1).collect();
        let entry = top.entry(from.clone()).or_default();
        for t in to {
            let t: Module = t.into_iter().take(1).collect();
            if t != from {
                entry.insert(t);
            }
        }
    }
    let found = circles(&top);
    assert!(found.is_empty(), "module circles:\n{}", show(&found));
}

/// The folders of `harness/src` are the stages a run passes through, and each
/// imports only the stages before it: the picture's floors read as the path a run
/// takes (`lib.rs` says what each holds).
const STAGES: [&str; 7] = ["base", "lang", "judge", "sim", "report", "drive", "cli"];

#[test]
fn each_stage_imports_only_the_stages_before_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut tops: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    tops.sort();
    let mut expected: Vec<String> = STAGES.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(
        tops, expected,
        "harness/src holds exactly the stage folders"
    );
    let rank = |m: &Module| m.first().and_then(|s| STAGES.iter().position(|x| x == s));
    let mut upward = Vec::new();
    for (from, to) in graph() {
        let Some(f) = rank(&from) else { continue };
        for t in to {
            if let Some(r) = rank(&t) {
                if r > f {
                    upward.push(format!("{} -> {}", from.join("/"), t.join("/")));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that run up a stage:\n{}",
        upward.join("\n")
    );
}
#[test]
fn the_checker_finds_a_circle_when_there_is_one() {
    let m = |s: &str| -> Module { s.split('/').map(str::to_string).collect() };
    let mut edges = BTreeMap::new();
    edges.insert(m("a"), [m("b")].into_iter().collect());
    edges.insert(m("b"), [m("c")].into_iter().collect());
    edges.insert(m("c"), [m("a")].into_iter().collect());
    edges.insert(m("d"), [m("a")].into_iter().collect());
    let found = circles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 3);
    // The path reader resolves `super::` and `{a, b::c}` groups.
    let got = paths(
        "use super::results::{self, key};\nuse crate::report::{RunRecord, html::x};",
        &m("sweep/merge"),
    );
    assert!(got.contains(&m("sweep/results/key")), "{got:?}");
    assert!(got.contains(&m("report/html/x")), "{got:?}");
    // A `mod.rs` re-export names the child that defines the item.
    let re = reexports(
        "mod a;\npub(crate) mod b;\npub use a::{x, y as z};\npub(in crate::p) use b::w::v;\npub use crate::q::r;",
    );
    assert_eq!(re["x"], ["a", "x"]);
    assert_eq!(re["z"], ["a", "y"]);
    assert_eq!(re["v"], ["b", "w", "v"]);
    assert!(!re.contains_key("r"), "{re:?}");
}

#[test]
fn only_the_command_line_defines_or_uses_exit_codes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    for file in files {
        let rel = file.strip_prefix(&root).unwrap();
        if rel.starts_with("cli") || rel == Path::new("main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for needle in ["EXIT_", "cli::exit", "process::exit", "ExitCode"] {
            assert!(
                !code(&text).contains(needle),
                "{} mentions {needle}: exit codes belong to cli/exit.rs",
                rel.display()
            );
        }
    }
}

/// The determinism bans live in the workspace's `clippy.toml`, so `cargo clippy`
/// refuses a wall-clock read, an unseeded RNG or a std hash container; the few
/// sanctioned exceptions each say why, in the same words a reviewer greps for.
#[test]
fn clippy_bans_the_determinism_hazards_and_every_exception_says_why() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let config = std::fs::read_to_string(workspace.join("clippy.toml")).unwrap();
    for banned in [
        "std::time::Instant::now",
        "std::time::SystemTime::now",
        "rand::thread_rng",
        "rand::rng",
        "std::collections::HashMap",
        "std::collections::HashSet",
    ] {
        assert!(
            config.contains(&format!("path = \"{banned}\"")),
            "clippy.toml does not ban {banned}"
        );
    }
    let mut files = Vec::new();
    for dir in [
        "harness/src",
        "harness/tests",
        "harness/benches",
        "api/src",
        "nodes/src",
    ] {
        let dir = workspace.join(dir);
        if dir.is_dir() {
            sources(&dir, &mut files);
        }
    }
    let mut types_allowed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let rel = file.strip_prefix(workspace).unwrap().display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            // The allow and its reason, on one line or over the next few.
            let attribute = lines[i..lines.len().min(i + 4)].join(" ");
            if line.contains("clippy::disallowed_methods") && !line.contains("\"clippy::") {
                assert!(
                    attribute.contains("reason = \"wall-clock ok: "),
                    "{rel}:{}: an allowed wall-clock read must say `reason = \"wall-clock ok: why\"`",
                    i + 1
                );
            }
            if line.contains("clippy::disallowed_types") && !line.contains("\"clippy::") {
                types_allowed.push(format!("{rel}:{}", i + 1));
            }
        }
    }
    // Only the fixed-hasher aliases may name a std hash container.
    assert!(
        types_allowed
            .iter()
            .all(|at| at.starts_with("harness/src/judge/consistency/hasher.rs:")),
        "std HashMap/HashSet allowed outside consistency/hasher.rs: {types_allowed:?}"
    );
}
