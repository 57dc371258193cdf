//! TUI tests: key sequences through the keymap and `update`, and every view drawn into
//! ratatui's TestBackend (snapshots in `snapshots/`, plus assertions that say what matters).

mod captions_fit;
mod command_line;
mod compare;
mod fit;
mod fixtures;
mod formulas;
mod journey_data;
mod journey_workload;
mod journey_write;
mod live;
mod live_updates;
mod loading_progress;
mod render;
mod render_finish;
mod render_stepped;
mod sched_truth;
mod sequences;
mod sequences_finish;
mod sequences_stepped;
mod stepped_fixtures;
mod story;
mod tree;
mod truth;
mod workload_fixture;
