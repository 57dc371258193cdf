//! The terminal UI: the only module that knows ratatui and crossterm.
//!
//! Flow (see docs/DESIGN "How the TUI works"): `app` owns the loop and `AppState`; terminal
//! events become `Action`s through `keymap`; `update` changes the state and returns `Effect`s;
//! `effects` performs them off the UI thread and answers on the loop's channel; `views` draw.

pub mod action;
pub mod app;
pub mod captions;
pub mod captions_workload;
pub mod command;
pub mod connection;
pub mod editor;
pub mod effects;
pub mod embedded;
pub mod etcd_chain;
pub mod filter;
pub mod journey;
pub mod keymap;
pub mod lesson;
pub mod quiz;
pub mod sched;
pub mod session;
pub mod state;
pub mod stepped;
pub mod story;
pub mod terminal;
pub mod theme;
pub mod trust_tree;
pub mod update;
pub mod views;
pub mod widgets;

#[cfg(test)]
mod tests;
