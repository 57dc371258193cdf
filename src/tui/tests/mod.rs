//! TUI tests: key sequences through the keymap and `update`, and every view drawn into
//! ratatui's TestBackend (snapshots in `snapshots/`, plus assertions that say what matters).

mod fixtures;
mod render;
mod sequences;
mod tree;
