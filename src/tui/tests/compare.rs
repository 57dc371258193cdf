//! View 5's `b`: the default profile beside bin-packing, for the same pod and cluster.

use ratatui::crossterm::event::KeyCode::Char;

use super::fixtures::press;
use super::render::render;
use super::sequences_finish::view5_live;
use crate::scheduler::plugins::node_resources_fit::ScoringStrategy;
use crate::scheduler::profile::config;
use crate::tui::sched::compare;

#[test]
fn the_bin_packing_profile_differs_from_the_default_only_in_its_scoring_strategy() {
    let v = crate::scheduler::KubeVersion::parse("1.33").expect("version");
    let p = config::load(compare::BIN_PACKING, v).expect("loads");
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].args.fit.strategy, ScoringStrategy::MostAllocated);
    let d = crate::scheduler::Profile::default_for(v);
    assert_eq!(p[0].filters, d.filters);
    assert_eq!(p[0].scores, d.scores);
}

#[test]
fn b_shows_each_profiles_winner_whole_at_both_sizes_and_follows_the_what_if() {
    let mut s = view5_live(None);
    press(&mut s, &[Char('b')]);
    assert!(s.sched.compare);
    let m = s.sched.model().expect("model");
    let packed = m
        .bin_packing
        .clone()
        .expect("computed")
        .expect("the profile runs");
    let spread = m
        .trace
        .selected
        .clone()
        .expect("the default places app.json");
    let packed_at = packed.selected.clone().expect("bin-packing places it too");
    for (w, h) in [(80, 24), (120, 40)] {
        s.size = (w, h);
        let screen = render(&s, w, h);
        for want in [
            format!("★ {spread} wins"),
            format!("★ {packed_at} wins"),
            compare::DEFAULT_TITLE.to_string(),
            compare::BIN_PACKING_TITLE.to_string(),
        ] {
            assert!(screen.contains(&want), "{want} at {w}×{h}:\n{screen}");
        }
    }
    // A what-if re-runs both sides on the changed pod.
    press(&mut s, &[Char('+'), Char('+'), Char('+'), Char('+')]);
    let m = s.sched.model().expect("model");
    let again = m.bin_packing.clone().expect("kept").expect("runs");
    assert_eq!(again.pod, m.trace.pod);
    assert_ne!(
        serde_json::to_value(&again.score).ok(),
        serde_json::to_value(&packed.score).ok(),
        "2 more cpu change the bin-packing scores"
    );
    press(&mut s, &[Char('b')]);
    assert!(!s.sched.compare && s.sched.model().expect("model").bin_packing.is_none());
}
