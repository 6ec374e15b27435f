//! Each scripted bug scenario's buggy variant reaches the probes of its
//! defect's mechanism, on the node the report names: the probes sit on the
//! preconditions the defect needs, so a chaos run that hits them was in the
//! window, and one that never does was not.

mod common;

use faultline::sim::runner;
use faultline_api::NodeEvent;
use std::collections::BTreeSet;

/// (scenario file, variant, node, probes of the mechanism that node must reach).
const MECHANISMS: &[(&str, &str, &str, &[&str])] = &[
    (
        "ozone/hdds-10798-leader-not-ready.yaml",
        "buggy",
        "om1",
        &[
            "om_leader_with_unflushed_buffer",
            "om_startup_entry_notified_with_applied_lag",
            "om_flush_kept_applied_below_notified",
        ],
    ),
    (
        "ozone/hdds-17670-active-store.yaml",
        "buggy",
        "om1",
        &[
            "om_dds_submit_in_later_term",
            "om_dds_submit_after_term_change",
        ],
    ),
    (
        "ozone/hdds-17603-purge-read-error.yaml",
        "buggy",
        "om2",
        &[
            "om_snapshot_purge_read_from_db",
            "om_critical_error_terminates",
            "om_restart_log_above_transaction_info",
        ],
    ),
    (
        "ozone/hdds-17062-dropped-closed.yaml",
        "buggy",
        "dn1",
        &[
            "hdds_fcr_built_with_icrs_in_flight",
            "hdds_failed_heartbeat_with_icrs",
            "hdds_put_back_after_fcr_build",
        ],
    ),
    (
        "ozone/hdds-17062-dropped-closed.yaml",
        "buggy",
        "recon",
        &["hdds_receiver_icr_over_fcr"],
    ),
    (
        "zookeeper/zookeeper-4541-lost-txn.yaml",
        "buggy",
        "zk1",
        &[
            "zk_sync_thread_busy_at_follower_shutdown",
            "zk_ack_after_learner_socket_closed",
            "zk_sync_thread_died",
        ],
    ),
    (
        "zookeeper/zookeeper-4541-lost-txn.yaml",
        "buggy",
        "zk2",
        &["zk_learner_synced_by_empty_diff"],
    ),
];

#[test]
fn each_bug_scenario_reaches_the_probes_of_its_mechanism() {
    let mut failures = Vec::new();
    for (file, variant_name, node, probes) in MECHANISMS {
        let path = common::workspace().join("scenarios").join(file);
        let scenario = faultline::lang::scenario::load(&path)
            .unwrap_or_else(|e| panic!("{file} does not load:\n{e}"));
        let variant = scenario
            .variants
            .iter()
            .find(|v| v.name == *variant_name)
            .unwrap_or_else(|| panic!("{file} has no variant {variant_name}"));
        let result = runner::run(&scenario, variant, scenario.settings.seed);
        assert!(
            result.passed,
            "{file} [{variant_name}]: {:?}",
            result.findings
        );
        let info = scenario.model.info();
        let reached: BTreeSet<&str> = result
            .trail
            .iter()
            .filter(|e| e.node.as_deref() == Some(*node))
            .filter_map(|e| match e.node_event() {
                Some(NodeEvent::Probe { probe, .. }) => Some(probe.as_str()),
                _ => None,
            })
            .collect();
        for probe in *probes {
            assert!(
                info.probe(probe).is_some(),
                "{file}: `{probe}` is not a probe of {}",
                info.name
            );
            if !reached.contains(probe) {
                failures.push(format!(
                    "{file} [{variant_name}]: {node} does not reach `{probe}` (reached: {reached:?})"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// HDDS-17670's precondition is a batch scanned in one term and submitted in a
/// later one. A run held before its leader check scans afresh in the new term:
/// `hdds-17670-term-read-first.yaml` holds om1's run there across two leader
/// changes, and its buggy variant (which submits, harmlessly) reaches neither
/// probe, where `hdds-17670-active-store.yaml` (held after the scan) reaches both.
#[test]
fn a_run_held_before_its_leader_check_is_not_hdds_17670_s_precondition() {
    let path = common::workspace().join("scenarios/ozone/hdds-17670-term-read-first.yaml");
    let scenario = faultline::lang::scenario::load(&path).unwrap();
    let variant = scenario.variant("buggy").unwrap();
    let result = runner::run(&scenario, variant, scenario.settings.seed);
    assert!(result.passed, "{:?}", result.findings);
    let probes: Vec<&str> = result
        .trail
        .iter()
        .filter_map(|e| match e.node_event() {
            Some(NodeEvent::Probe { probe, .. }) => Some(probe.as_str()),
            _ => None,
        })
        .filter(|p| p.starts_with("om_dds_submit"))
        .collect();
    assert!(probes.is_empty(), "{probes:?}");
    assert!(
        result
            .trail
            .iter()
            .any(|e| e.detail.contains("dir_deleting.post_term_read fired")),
        "the run was held before its leader check"
    );
}

/// The run report lists every probe of the model: where and when a node reached
/// it, or that the run never did.
#[test]
fn the_html_report_lists_the_probes_reached_and_not_reached() {
    let path = common::workspace().join("scenarios/ozone/hdds-17062-dropped-closed.yaml");
    let scenario = faultline::lang::scenario::load(&path).unwrap();
    let variant = scenario.variant("buggy").unwrap();
    let result = runner::run(&scenario, variant, scenario.settings.seed);
    let page = faultline::report::run_html(&result);
    let section = page
        .split(r#"<section id="probes">"#)
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .expect("a probes section");
    let rows: Vec<&str> = section.split("<tr").skip(2).collect();
    let info = scenario.model.info();
    assert_eq!(rows.len(), info.probes.len(), "one row per declared probe");
    let row = |name: &str| {
        rows.iter()
            .find(|r| r.contains(&format!("<code>{name}</code>")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{section}"))
    };
    let put_back = row("hdds_put_back_after_fcr_build");
    assert!(put_back.contains("dn1 at "), "{put_back}");
    assert!(!put_back.contains("class=\"never\""), "{put_back}");
    let retried = row("hdds_delete_blocks_retried");
    assert!(retried.contains("not reached"), "{retried}");
    assert!(retried.starts_with(r#" class="never""#), "{retried}");
}
