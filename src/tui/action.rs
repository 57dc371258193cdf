//! What can happen to the app: user intents (from the keymap or the mouse), and the results
//! of effects coming back on the loop's channel. `update` is the only consumer.

use super::state::LoadedContext;

/// The five views, in the contract's order; the number key is `index() + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    Kubeconfig,
    Certificates,
    Connection,
    PodJourney,
    Scheduler,
}

impl View {
    pub const ALL: [View; 5] = [
        View::Kubeconfig,
        View::Certificates,
        View::Connection,
        View::PodJourney,
        View::Scheduler,
    ];

    pub fn index(self) -> usize {
        match self {
            View::Kubeconfig => 0,
            View::Certificates => 1,
            View::Connection => 2,
            View::PodJourney => 3,
            View::Scheduler => 4,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            View::Kubeconfig => "Kubeconfig",
            View::Certificates => "Certificates",
            View::Connection => "Connection",
            View::PodJourney => "Pod journey",
            View::Scheduler => "Scheduler",
        }
    }

    pub fn next(self) -> View {
        View::ALL[(self.index() + 1) % View::ALL.len()]
    }

    pub fn previous(self) -> View {
        View::ALL[(self.index() + View::ALL.len() - 1) % View::ALL.len()]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Quit,
    ShowView(View),
    NextView,
    PreviousView,
    MoveUp,
    MoveDown,
    PageUp,
    PageDown,
    Select,
    NextStep,
    PreviousStep,
    ToggleHelp,
    CloseOverlay,
    /// View 1: the merged kubeconfig as an overlay.
    ShowMerged,
    /// The terminal's new size, columns × rows.
    Resize(u16, u16),
    /// The clock moved on (seconds since the Unix epoch): expiry countdowns follow it.
    Tick(i64),
    /// A mouse click at column, row.
    Click(u16, u16),
    /// An effect finished: a context was resolved and inspected.
    ContextLoaded(Box<LoadedContext>),
}
