//! `f`'s formulas against the scheduler's own numbers: on a cluster where every default score
//! plugin scores differently per node, each formula recomputed from the snapshot must land on
//! the raw and normalized scores the engine traced, for every plugin on every scored node —
//! also after what-if changes, and on the scenarios a workshop uses.

use super::stepped_fixtures as fx;
use crate::scheduler::KubeVersion;
use crate::tui::sched::fetch;
use crate::tui::sched::formula;
use crate::tui::sched::model::Model;

fn model(files: &[(&str, &str)], focus: &str, version: &str) -> Model {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    let data = fetch::from_files(
        &files,
        Some(focus),
        fx::app_pod(),
        KubeVersion::parse(version).expect("version"),
    )
    .expect("cluster");
    Model::new(data).expect("model")
}

/// Every check every formula makes, on every scored node: how many passed; panics on one
/// that does not.
fn assert_all_formulas_agree(m: &Model) -> usize {
    let mut checked = 0;
    for k in 0..m.snapshot.nodes.len() {
        let Some(si) = m.score_of[k] else { continue };
        for p in &m.trace.score[si].plugins {
            let lines = formula::lines(m, k, p);
            let text = lines.join("\n");
            assert!(!text.contains("! the scheduler says"), "{text}");
            assert!(!text.contains("not modelled"), "{text}");
            checked += text.matches('✓').count();
        }
    }
    checked
}

const EVERY: &str = include_str!("data/every_score_plugin.yaml");

#[test]
fn every_score_plugins_formula_matches_the_engine() {
    let m = model(&[("every.yaml", EVERY)], "default/web", "1.33");
    assert_eq!(m.trace.score.len(), 4, "all four nodes are scored");
    let names: Vec<&str> = m.trace.score[0].plugins.iter().map(|p| p.name).collect();
    for want in [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ] {
        assert!(names.contains(&want), "{want} scored: {names:?}");
    }
    // The plugins do give different numbers, so the checks compare something.
    for name in [
        "TaintToleration",
        "NodeAffinity",
        "PodTopologySpread",
        "InterPodAffinity",
        "ImageLocality",
    ] {
        let raws: std::collections::BTreeSet<i64> = m
            .trace
            .score
            .iter()
            .filter_map(|s| s.plugins.iter().find(|p| p.name == name))
            .map(|p| p.raw)
            .collect();
        assert!(raws.len() > 1, "{name} scores vary: {raws:?}");
    }
    // Each node: every plugin's raw, and the normalized score where the plugin normalizes.
    let checked = assert_all_formulas_agree(&m);
    assert!(checked >= 4 * 7, "{checked} checks");
}

#[test]
fn formulas_agree_after_what_ifs_and_on_v1_36() {
    let mut m = model(&[("every.yaml", EVERY)], "default/web", "1.33");
    m.bump(true);
    m.whatif.tolerate_all = true;
    m.rerun();
    assert_all_formulas_agree(&m);
    let m = model(&[("every.yaml", EVERY)], "default/web", "1.36");
    assert_all_formulas_agree(&m);
}

#[test]
fn formulas_agree_on_the_scenarios() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for (file, focus) in [
        ("node-affinity.yaml", None),
        ("pod-anti-affinity.yaml", None),
        ("topology-spread-zones.yaml", Some("default/api-4")),
        ("taints-and-tolerations.yaml", None),
        ("seed-three-nodes.yaml", None),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).expect("scenario");
        let mut manifests = crate::scheduler::manifests::Manifests::default();
        manifests.add_text(file, &text).expect("manifests");
        // The scenario's pending pod, else app.json.
        let pending = manifests
            .pods
            .iter()
            .map(|(p, _)| p)
            .find(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_none()))
            .map(crate::tui::sched::live::key_of);
        let focus = focus.map(str::to_string).or(pending).unwrap_or_default();
        let m = model(&[(file, &text)], &focus, "1.33");
        assert_all_formulas_agree(&m);
    }
}
