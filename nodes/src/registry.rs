//! The one table of models. Adding a model is one module plus one line here.

use faultline_api::Model;

static RAFTKV: crate::raftkv::RaftKv = crate::raftkv::RaftKv;

/// Every model, in the order `faultline list` shows them.
pub fn models() -> Vec<&'static dyn Model> {
    let mut models: Vec<&'static dyn Model> = vec![&RAFTKV];
    models.extend(crate::ozone::model());
    models.extend(crate::hdds::model());
    models.extend(crate::zookeeper::model());
    models
}

/// Every model of this crate: the listed ones, then the one kept for the
/// harness's own tests (`faulty`), which is found by name but never listed.
pub fn every() -> Vec<&'static dyn Model> {
    let mut models = models();
    models.push(&crate::testing::Faulty);
    models
}

/// The model of this name: a listed one, or one kept for the harness's tests.
pub fn find(name: &str) -> Option<&'static dyn Model> {
    every().into_iter().find(|m| m.info().name == name)
}

pub fn names() -> Vec<&'static str> {
    models().into_iter().map(|m| m.info().name).collect()
}

#[cfg(test)]
mod tests {
    use super::every;
    use faultline_api::{check_probe_table, Consistency, HistoryModel, ParamKind, ParamValue};
    use serde_json::json;

    /// `faulty` is found by name, and no list names it.
    #[test]
    fn the_test_model_is_found_by_name_and_never_listed() {
        assert!(super::find("faulty").is_some());
        assert!(!super::names().contains(&"faulty"));
        assert!(!super::models().iter().any(|m| m.info().name == "faulty"));
        assert_eq!(every().len(), super::models().len() + 1);
    }

    /// Every model declares the keys its nodes publish, each key once and with
    /// a summary (the test `observation_keys` holds them to what runs publish).
    #[test]
    fn every_model_declares_its_observation_keys() {
        for model in every() {
            let info = model.info();
            assert!(
                !info.observations.is_empty(),
                "model {} declares no keys",
                info.name
            );
            let mut seen = std::collections::BTreeSet::new();
            for o in &info.observations {
                assert!(
                    seen.insert((o.kind, o.key)),
                    "{}: `{}` twice",
                    info.name,
                    o.key
                );
                assert!(
                    !o.summary.is_empty(),
                    "{}: `{}` has no summary",
                    info.name,
                    o.key
                );
            }
        }
    }

    /// Every model declares probes, and its table keeps the rules the ledger
    /// relies on: snake_case names, each once, each with a summary.
    #[test]
    fn every_model_declares_a_valid_probe_table() {
        for model in every() {
            let info = model.info();
            assert!(
                !info.probes.is_empty(),
                "model {} declares no probes",
                info.name
            );
            if let Err(why) = check_probe_table(&info.probes) {
                panic!("model {}: {why}", info.name);
            }
            for probe in &info.probes {
                assert_eq!(info.probe(probe.name), Some(*probe), "{}", probe.name);
            }
        }
    }

    /// `NodeCtx::probe` takes only a probe table's variants, so what a model's
    /// nodes can report is the tables its code reports from. Each model's
    /// `ModelInfo::probes` must be exactly those tables: a probe reported but
    /// not declared would be invisible to `faultline list` and the ledger.
    #[test]
    fn every_probe_a_model_can_report_is_declared() {
        use crate::hdds::HddsProbe;
        use crate::ozone::OmProbe;
        use crate::raft::RaftProbe;
        use crate::zookeeper::ZkProbe;
        let reported = [
            ("raftkv", RaftProbe::infos()),
            ("ozone-om", [OmProbe::infos(), RaftProbe::infos()].concat()),
            ("hdds-reports", HddsProbe::infos()),
            ("zookeeper", ZkProbe::infos()),
        ];
        for (name, tables) in &reported {
            let model = super::find(name).expect("a registered model");
            assert_eq!(&model.info().probes, tables, "model {name}");
        }
        let covered: Vec<&str> = reported.iter().map(|(name, _)| *name).collect();
        for name in super::names() {
            assert!(
                covered.contains(&name) || name == "faulty",
                "model {name}: say which probe tables it reports from"
            );
        }
    }

    /// Every declared probe has a site: its variant is named in the model's code
    /// outside test modules (a declared probe no code reports would count as
    /// never reached in every sweep). The bundled runs reaching each one is
    /// checked in the harness's determinism test.
    #[test]
    fn every_declared_probe_is_reported_somewhere_in_the_code() {
        use faultline_api::Probe;
        fn sources(dir: &std::path::Path, out: &mut String) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    sources(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    // Code before a file's test module: a test naming a probe is no site.
                    let code = text.split("#[cfg(test)]").next().unwrap_or("");
                    out.push_str(code);
                }
            }
        }
        let mut code = String::new();
        sources(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut code,
        );
        fn check<P: Probe + std::fmt::Debug>(table: &str, all: &[P], code: &str) {
            for probe in all {
                let site = format!("{table}::{probe:?}");
                assert!(
                    ["probe", "hit", "push"]
                        .iter()
                        .any(|call| code.contains(&format!("{call}({site})"))),
                    "probe `{}` ({site}) is declared but never reported",
                    probe.info().name
                );
            }
        }
        check("RaftProbe", crate::raft::RaftProbe::ALL, &code);
        check("OmProbe", crate::ozone::OmProbe::ALL, &code);
        check("HddsProbe", crate::hdds::HddsProbe::ALL, &code);
        check("ZkProbe", crate::zookeeper::ZkProbe::ALL, &code);
        check("FaultyProbe", crate::testing::FaultyProbe::ALL, &code);
    }

    /// serde names every field it expects when it meets an unknown one: that list
    /// must be exactly the declared parameters, so none can go undeclared.
    #[test]
    fn every_model_declares_exactly_its_params() {
        for model in every() {
            let info = model.info();
            let declared: Vec<&str> = info.params.iter().map(|p| p.name).collect();
            let message = model
                .parse_params(&json!({"__undeclared": 1}))
                .expect_err("an unknown key is refused");
            let mut expected: Vec<&str> = message.split('`').skip(3).step_by(2).collect();
            if message.contains("there are no fields") {
                expected.clear();
            }
            let mut sorted = declared.clone();
            sorted.sort_unstable();
            expected.sort_unstable();
            assert_eq!(sorted, expected, "model {}: {message}", info.name);
        }
    }

    /// The bounds of a kind, as values a scenario may write.
    fn bounds(kind: &ParamKind) -> Vec<serde_json::Value> {
        match kind {
            ParamKind::Integer { min, max } => vec![json!(min), json!(max)],
            ParamKind::DurationMs { min, max } => vec![json!(min), json!(max)],
            ParamKind::Choice { choices } => choices.iter().map(|c| json!(c)).collect(),
            ParamKind::PerNode { value, single, .. } if *single => bounds(value),
            ParamKind::PerNode { .. }
            | ParamKind::Bool
            | ParamKind::Text
            | ParamKind::Node
            | ParamKind::IntegerList { .. } => Vec::new(),
        }
    }

    /// Each default lies within its own bounds and is accepted by the model; each
    /// bound is accepted too (bounds are where the model is valid).
    #[test]
    fn defaults_and_bounds_are_accepted() {
        for model in every() {
            let info = model.info();
            for param in &info.params {
                let name = param.name;
                let mut values = Vec::new();
                if let Some(default) = &param.default {
                    let value = serde_json::to_value(default).unwrap();
                    assert_eq!(
                        param.kind.check(&value, &[]),
                        Ok(()),
                        "{}.{name}: default",
                        info.name
                    );
                    values.push(value);
                }
                values.extend(bounds(&param.kind));
                if let ParamKind::PerNode { value, single, .. } = &param.kind {
                    // A map of one node to each bound of the value's kind.
                    let plain = bounds(value);
                    values.extend(plain.iter().map(|v| json!({ "n1": v })));
                    if !single {
                        values.retain(|v| v.is_object());
                    }
                }
                for value in values {
                    // Raft timings are checked together: pair a bound with room for it.
                    let mut params = json!({ name: value });
                    if name == "heartbeat_ms" {
                        params["election_timeout_ms_min"] = json!(60_000);
                        params["election_timeout_ms_max"] = json!(60_000);
                    } else if name.starts_with("election_timeout_ms") {
                        params = json!({"heartbeat_ms": 1, "election_timeout_ms_min": value, "election_timeout_ms_max": value});
                    }
                    assert_eq!(
                        model.parse_params(&params),
                        Ok(()),
                        "{}: {params}",
                        info.name
                    );
                }
                assert!(
                    !matches!(param.default, Some(ParamValue::Text(""))),
                    "{}.{name}: an empty default",
                    info.name
                );
            }
        }
    }

    /// Every op says what it promises and how its answers read, and the model
    /// names something that can judge it. (The harness's tests run each judged
    /// op's example through the checker it names.)
    #[test]
    fn every_op_declares_its_consistency_and_answers() {
        for model in every() {
            let info = model.info();
            assert_eq!(
                info.history == HistoryModel::Own,
                model.sequential().is_some(),
                "{}: `Own` history iff the model has its own specification",
                info.name
            );
            for op in &info.ops {
                let at = format!("{}.{}", info.name, op.name);
                let answers = op.answers;
                for prefix in answers.definite.iter().chain(answers.refused) {
                    assert!(
                        !prefix.is_empty(),
                        "{at}: an empty prefix reads every error"
                    );
                }
                for d in answers.definite {
                    for r in answers.refused {
                        assert!(
                            !d.starts_with(r) && !r.starts_with(d),
                            "{at}: `{d}` and `{r}` overlap"
                        );
                    }
                }
                match op.consistency {
                    Consistency::Unjudged => {}
                    Consistency::Linearizable => assert_ne!(
                        info.history,
                        HistoryModel::None,
                        "{at} is judged, but the model names no history model"
                    ),
                    Consistency::SessionMonotonic => assert_eq!(
                        info.history,
                        HistoryModel::ZooKeeper,
                        "{at}: only the ZooKeeper model judges session reads"
                    ),
                }
            }
            if info.history != HistoryModel::None {
                assert!(
                    info.ops
                        .iter()
                        .any(|o| o.consistency != Consistency::Unjudged),
                    "{}: a history model with no judged op judges nothing",
                    info.name
                );
            }
        }
    }
}
