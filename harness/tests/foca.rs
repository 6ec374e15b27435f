//! The foca model on its builds (foca/build; scripts/test runs it first):
//! caio/foca#25 reproduced on 0.11.0 and gone on 0.12.0 and 2.0.0, for the
//! reason the issue gives, and the runs replay byte for byte.

mod common;

use std::process::Command;

/// The foca builds. A test that needs them fails without them, naming the
/// command: it never skips.
fn foca_builds() {
    let root = common::workspace();
    for build in ["v0_11", "v0_12", "v2_0"] {
        let binary = root.join(format!("target/release/faultline-foca-{build}"));
        assert!(
            binary.exists(),
            "{} is missing: run `foca/build` (scripts/test does)",
            binary.display()
        );
    }
}

fn faultline(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(common::workspace())
        .env_remove("FAULTLINE_TARGETS")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

const BUG: &str = "scenarios/foca/foca-25-partition-merge.yaml";

#[test]
fn foca_25_never_merges_on_0_11_and_merges_on_0_12_and_2_0() {
    foca_builds();
    for seed in ["1", "2", "3"] {
        let (code, out) = faultline(&["run", BUG, "--variant", "buggy", "--seed", seed, "-v"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(
            out.contains("[buggy] stuck (expected stuck)"),
            "0.11.0 ends stuck: {out}"
        );
        // For #25's reason: two healed nodes hear each other (the TurnUndead
        // exchange) for longer than the bound and still see each other Down.
        assert!(
            out.contains("stuck [invariant:members_merge]: members_merge: n")
                && out.contains("ms (bound 10000 ms) and still does not see"),
            "{out}"
        );
        for fixed in ["fixed", "fixed-2-0"] {
            let (code, out) = faultline(&["run", BUG, "--variant", fixed, "--seed", seed]);
            assert_eq!(code, Some(0), "{out}");
            assert!(
                out.contains(&format!("[{fixed}] converged (expected converged)")),
                "{out}"
            );
        }
    }
}

/// A member whose `receive` loses every datagram is still heard by its peers
/// while they hold it Down; it cannot hear that it is Down, so members_merge's
/// clock waits for it to hear again (foca-auto with seven members on 2.0.0,
/// seed 167, failed before). Every release then merges, n1 renewing its
/// identity (the scenario's trail expectation).
#[test]
fn a_member_that_cannot_hear_is_judged_from_when_it_hears_again_and_merges() {
    meets_its_expectation_on_every_release("scenarios/foca/foca-deaf-member.yaml");
}

/// The same with the links to the member cut one way: the clock waits for
/// the last network fault on the pair's link (ended stuck before).
#[test]
fn a_member_cut_off_one_way_is_judged_from_the_repair_and_merges() {
    meets_its_expectation_on_every_release("scenarios/foca/foca-deaf-by-link.yaml");
}

/// Every release tells a member whose suspicion was refuted that it is Down,
/// and the member renews a live identity
/// (docs/findings/foca-turn-undead-after-refutation.md): the scenario expects
/// the probe of a TurnUndead from a member that does not hold the receiver
/// Down, then the renewal, and the three members merge again.
#[test]
fn every_release_sends_turn_undead_after_a_refuted_suspicion_and_the_member_renews() {
    meets_its_expectation_on_every_release("scenarios/foca/foca-refuted-suspicion.yaml");
}

/// A scenario whose variants `v0_11`, `v0_12` and `v2_0` all expect
/// `converged` (with the trail items the file names) meets it on each build.
fn meets_its_expectation_on_every_release(scenario: &str) {
    foca_builds();
    for variant in ["v0_11", "v0_12", "v2_0"] {
        let (code, out) = faultline(&["run", scenario, "--variant", variant, "-v"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(
            out.contains(&format!("[{variant}] converged (expected converged)")),
            "{out}"
        );
    }
}

#[test]
fn a_foca_run_replays_byte_for_byte_on_each_build() {
    foca_builds();
    for variant in ["buggy", "fixed", "fixed-2-0"] {
        let digest = || {
            let (code, out) = faultline(&["run", BUG, "--variant", variant, "--seed", "7", "-v"]);
            assert_eq!(code, Some(0), "{out}");
            out.split("digest=")
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .map(str::to_string)
                .unwrap_or_else(|| panic!("no digest: {out}"))
        };
        assert_eq!(digest(), digest(), "{variant}");
    }
}
