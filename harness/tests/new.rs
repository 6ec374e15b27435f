//! `faultline new MODEL [-o FILE] [--force]` (issue 26, item 17): a commented
//! starting scenario from the model's declarations, which validates and runs for
//! every model the binary knows.

mod common;

use common::{faultline, faultline_in, temp_dir};
use std::path::Path;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The models the binary knows, as `list --json` says.
fn models() -> Vec<serde_json::Value> {
    let out = faultline(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    listed["models"].as_array().unwrap().clone()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn every_model_gets_a_starting_scenario_that_validates_and_meets_its_expectations() {
    let dir = temp_dir("new", "every-model");
    let models = models();
    let names: Vec<&str> = models.iter().map(|m| m["name"].as_str().unwrap()).collect();
    for builtin in ["raftkv", "ozone-om", "hdds-reports", "zookeeper"] {
        assert!(names.contains(&builtin), "{builtin} in {names:?}");
    }
    for model in &models {
        let name = model["name"].as_str().unwrap();
        let file = dir.join(format!("{name}-first.yaml"));
        let out = faultline(&["new", name, "-o", s(&file)]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "new {name}: {stderr}");
        assert!(
            stderr.contains(&format!("wrote {}", file.display()))
                && stderr.contains("faultline run"),
            "{stderr}"
        );
        let yaml = std::fs::read_to_string(&file).unwrap();
        // From the model's declarations: its name, its setup, an op's example,
        // its first bug key in both modes, and the auto chaos section.
        assert!(yaml.contains(&format!("name: {name}-first\n")), "{yaml}");
        assert!(yaml.contains(&format!("model: {name}\n")), "{yaml}");
        assert!(yaml.contains("\n  - client: {"), "{yaml}");
        assert!(yaml.contains("expect: ok}"), "{yaml}");
        assert!(yaml.contains("\nchaos: {auto: true, window: "), "{yaml}");
        let bugs = model["bugs"].as_array().unwrap();
        if let Some(first) = bugs.first() {
            let key = first["key"].as_str().unwrap();
            assert!(yaml.contains(&format!("bugs: {{{key}: buggy}}")), "{yaml}");
            assert!(yaml.contains(&format!("bugs: {{{key}: fixed}}")), "{yaml}");
        } else {
            assert!(yaml.contains("\nexpect: converged\n"), "{yaml}");
        }
        let has_leader = faultline::base::models::find(name).is_some_and(|m| m.info().has_leader);
        if has_leader {
            assert!(yaml.contains("  - await: {leader: any"), "{yaml}");
            assert!(yaml.contains("  - restart: leader\n"), "{yaml}");
        }
        // Every line that is not YAML is a comment: a new user reads it.
        let comments = yaml
            .lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .count();
        assert!(comments >= 20, "{name}: {comments} comment lines\n{yaml}");

        let out = faultline(&["validate", s(&file)]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "validate {name}: {}",
            text(&out.stderr)
        );

        let out = faultline(&["run", s(&file), "--seed", "1"]);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {name}:\n{stdout}\n{}\n{yaml}",
            text(&out.stderr)
        );
        let variants: &[&str] = if bugs.is_empty() {
            &["default"]
        } else {
            &["buggy", "fixed"]
        };
        for variant in variants {
            assert!(
                stdout.contains(&format!("PASS {name}-first [{variant}]")),
                "{name} [{variant}]:\n{stdout}"
            );
        }
        if !bugs.is_empty() {
            assert!(
                stdout.contains(&format!("PASS {name}-first [fixed] converged")),
                "{stdout}"
            );
        }
        assert!(
            stdout.contains(&format!(
                "{n} run(s): {n} passed, 0 failed",
                n = variants.len()
            )),
            "{stdout}"
        );

        // The fail point offered in a comment is valid too, uncommented.
        if let Some(at) = yaml.find("  # - failpoint: ") {
            let armed = format!("{}  - {}", &yaml[..at], &yaml[at + "  # - ".len()..]);
            let file = dir.join(format!("{name}-failpoint.yaml"));
            std::fs::write(&file, &armed).unwrap();
            let out = faultline(&["validate", s(&file)]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name}: {}\n{armed}",
                text(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// raftkv's file in full, as a reader sees it, and its runs at seed 1.
#[test]
fn raftkv_starting_scenario_prints_to_stdout_and_both_variants_pass_at_seed_1() {
    let out = faultline(&["new", "raftkv"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let yaml = text(&out.stdout);
    assert!(
        yaml.starts_with("# A starting scenario for the `raftkv` model"),
        "{yaml}"
    );
    for line in [
        "name: raftkv-start\n",
        "nodes: [n1, n2, n3]\n",
        "#   heartbeat_ms:",
        "params: {}\n",
        "variants:\n  # `CANARY-QUORUM` buggy",
        "    bugs: {CANARY-QUORUM: buggy}\n",
        "    expect: [converged, diverged, violated, stuck]\n",
        "    bugs: {CANARY-QUORUM: fixed}\n",
        "    expect: converged\n",
        "  - await: {leader: any, within: 5s}\n",
        "  - client: {op: put, key: a, value: \"1\", expect: ok}\n",
        "  - restart: leader\n",
        "  # - failpoint: {node: n1, point: propose, action: {error: disk_full}, count: 1, optional: true}\n",
        "  - await: {leader: any, within: 10s}\n",
        "chaos: {auto: true, window: 1m}\n",
    ] {
        assert!(yaml.contains(line), "missing {line:?} in:\n{yaml}");
    }
    // The other bug keys are named for the reader.
    assert!(yaml.contains("#   CANARY-STALE-READ: ") && yaml.contains("#   CANARY-LOST-ACK: "));

    let dir = temp_dir("new", "stdout");
    std::fs::write(dir.join("printed.yaml"), &yaml).unwrap();
    let out = faultline_in(&dir, &["run", "printed.yaml", "--seed", "1"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("PASS raftkv-start [buggy]"), "{stdout}");
    assert!(
        stdout.contains("PASS raftkv-start [fixed] converged"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_existing_file_is_refused_without_force_and_replaced_with_it() {
    let dir = temp_dir("new", "existing");
    let file = dir.join("mine.yaml");
    std::fs::write(&file, "keep me\n").unwrap();
    let out = faultline(&["new", "raftkv", "-o", s(&file)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {}: already exists; not overwriting it",
            file.display()
        )) && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me\n");
    assert!(out.stdout.is_empty());

    let out = faultline(&["new", "raftkv", "-o", s(&file), "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert!(yaml.contains("name: mine\n"), "{yaml}");

    // A directory is no file to write, --force or not; --force needs -o.
    let out = faultline(&["new", "raftkv", "-o", s(&dir), "--force"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is a directory"),
        "{}",
        text(&out.stderr)
    );
    let out = faultline(&["new", "raftkv", "--force"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--out"), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_model_exits_2_with_a_suggestion_and_the_known_models() {
    let dir = temp_dir("new", "unknown");
    let file = dir.join("x.yaml");
    let out = faultline(&["new", "raftvk", "-o", s(&file)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: no model named `raftvk`; did you mean `raftkv`?"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the models are: raftkv, ozone-om, hdds-reports, zookeeper"),
        "{stderr}"
    );
    assert!(!file.exists() && out.stdout.is_empty());

    let out = faultline(&["new", "zookeper"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("did you mean `zookeeper`?"),
        "{}",
        text(&out.stderr)
    );

    // Nothing close: no suggestion, still the list.
    let out = faultline(&["new", "cassandra"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !stderr.contains("did you mean") && stderr.contains("the models are: "),
        "{stderr}"
    );

    // A model of a target build runs in that build's binary, and it says so.
    let out = faultline(&["new", "openraft"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`openraft` runs in its builds' binaries (faultline-targets.yaml)")
            && stderr.contains(" new openraft` (build it with `openraft/build`)"),
        "{stderr}"
    );
    for out in [faultline(&["new", "raftvk"]), faultline(&["new", ""])] {
        assert!(
            !text(&out.stderr).contains("panicked"),
            "{}",
            text(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn new_is_in_the_help_the_man_pages_and_the_completions() {
    let out = faultline(&["--help"]);
    let help = text(&out.stdout);
    assert!(
        help.lines().any(|l| l.trim_start().starts_with("new ")),
        "{help}"
    );
    let out = faultline(&["new", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains("--out") && help.contains("--force") && help.contains("<MODEL>"),
        "{help}"
    );

    let dir = temp_dir("new", "man");
    let out = faultline(&["man", "--out-dir", s(&dir)]);
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.join("faultline-new.1")).unwrap();
    assert!(page.contains("\\-\\-force"), "{page}");
    let out = faultline(&["completions", "bash"]);
    assert!(
        text(&out.stdout).contains("faultline__subcmd__new"),
        "bash completes `new`"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
