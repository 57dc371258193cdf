//! The terminal UI: the only module that knows ratatui and crossterm.
