//! The nightly workflow hands the shards the binaries the build makes: every
//! path its build job uploads is faultline's or a target's binary as
//! `faultline-targets.yaml` names it, and every target's binary is uploaded
//! (actionlint checks the workflow's shape, not its paths).

mod common;

use std::collections::BTreeSet;

/// The paths listed under the build job's `faultline-bin` upload.
fn uploaded(workflow: &str) -> BTreeSet<String> {
    let start = workflow
        .find("name: faultline-bin\n")
        .expect("the build job uploads faultline-bin");
    let block = &workflow[start..];
    let paths = block.find("path: |\n").expect("a path list") + "path: |\n".len();
    block[paths..]
        .lines()
        .take_while(|l| !l.trim_start().starts_with("retention-days"))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `binary:` of every target in faultline-targets.yaml.
fn target_binaries(targets: &str) -> BTreeSet<String> {
    targets
        .lines()
        .filter_map(|l| l.trim().strip_prefix("binary:"))
        .map(|b| b.trim().to_string())
        .collect()
}

#[test]
fn the_nightly_uploads_exactly_the_binaries_the_build_makes() {
    let root = common::workspace();
    let workflow = std::fs::read_to_string(root.join(".github/workflows/nightly.yml")).unwrap();
    let targets = std::fs::read_to_string(root.join("faultline-targets.yaml")).unwrap();
    let mut expected = target_binaries(&targets);
    assert!(
        !expected.is_empty(),
        "faultline-targets.yaml names binaries"
    );
    expected.insert("target/release/faultline".into());
    assert_eq!(uploaded(&workflow), expected);
    // Every job that runs them makes the uploaded paths executable where they
    // landed: the same directory.
    for line in workflow.lines().filter(|l| l.contains("chmod +x")) {
        for word in line.split_whitespace().skip_while(|w| *w != "+x").skip(1) {
            let dir = word.rsplit_once('/').map(|(d, _)| d).unwrap_or(word);
            assert!(
                expected.iter().any(|p| p.starts_with(dir)),
                "`{word}` is not where the build's binaries are: {line}"
            );
        }
    }
}
