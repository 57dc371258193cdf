//! Presenter mode's captions are read whole at 80×24: none is cut at the caption box's
//! bottom edge, whatever the step, the write mode or where a journey failed.

use super::stepped_fixtures as fx;
use crate::journey::STAGES;
use crate::journey::run::WriteMode;
use crate::stage::Stage;
use crate::tui::captions;
use crate::tui::captions_workload;
use crate::tui::connection::ladder;
use crate::tui::sched::steps::Step;

/// The caption box at 80 columns: 74 columns inside its border, two rows.
const WIDTH: usize = 74;
const ROWS: usize = 2;

/// Rows a caption takes when wrapped at word boundaries, as the caption box wraps it.
fn rows(text: &str) -> usize {
    let mut rows = 1;
    let mut used = 0;
    for word in text.split(' ') {
        let w = word.chars().count();
        if used > 0 && used + 1 + w > WIDTH {
            rows += 1;
            used = 0;
        }
        used += if used > 0 { 1 + w } else { w };
    }
    rows
}

#[test]
fn every_caption_fits_the_box_at_80_columns() {
    let mut all: Vec<String> = vec![captions::connection(None)];
    // Every rung of a handshake that succeeds and of one that fails.
    let creds = fx::alibaba_creds();
    for failure in [None, Some(fx::unknown_authority())] {
        for rung in ladder::build(&fx::connection(failure), Some(&creds)) {
            all.push(captions::connection(Some(&rung)));
        }
    }
    for write in [WriteMode::DryRun, WriteMode::ForReal] {
        for step in 0..=STAGES.len() {
            all.push(captions::journey(step, write, None));
            for f in STAGES {
                all.push(captions::journey(step, write, Some(f)));
            }
        }
        let kinds = [
            ("Deployment", "deployments"),
            ("ReplicaSet", "replicasets"),
            ("DaemonSet", "daemonsets"),
            ("StatefulSet", "statefulsets"),
        ];
        for k in kinds {
            all.push(captions_workload::caption(None, false, k, write));
            all.push(captions_workload::caption(None, true, k, write));
            let stages = STAGES[..7].iter().copied().chain([
                Stage::DeploymentController,
                Stage::ReplicasetController,
                Stage::DaemonsetController,
                Stage::StatefulsetController,
            ]);
            for s in stages {
                all.push(captions_workload::caption(Some(s), false, k, write));
            }
        }
    }
    let steps = [
        Step::Nodes,
        Step::Filter(vec![0]),
        Step::Predict,
        Step::Score(0),
        Step::Result,
    ];
    for step in steps.iter().map(Some).chain([None]) {
        for (placed, scored) in [(true, true), (true, false), (false, false)] {
            all.push(captions::scheduler(step, placed, scored).into());
        }
    }
    let long: Vec<&String> = all.iter().filter(|c| rows(c) > ROWS).collect();
    assert!(
        long.is_empty(),
        "more than {ROWS} rows of {WIDTH}: {long:#?}"
    );
}
