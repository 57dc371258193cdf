//! What can happen to the app: user intents (from the keymap or the mouse), and the results
//! of effects coming back on the loop's channel. `update` is the only consumer.

use super::connection::probe::ConnectionReport;
use super::sched::live::LiveCluster;
use super::sched::model::ClusterData;
use super::sched::watch::LiveUpdate;
use super::state::LoadedContext;
use crate::journey::build::Collected;

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

/// An effect's result carried by an action. Results have no meaningful equality (they hold
/// handshake records, traces, whole clusters); two payloads are equal only if they are the same.
#[derive(Debug, Clone)]
pub struct Payload<T>(pub Box<T>);

impl<T> Payload<T> {
    pub fn new(v: T) -> Payload<T> {
        Payload(Box::new(v))
    }
}

impl<T> PartialEq for Payload<T> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(&*self.0, &*other.0)
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
    /// Autoplay's clock (milliseconds since the Unix epoch), beating while autoplay runs.
    Beat(i64),
    /// A mouse click at column, row.
    Click(u16, u16),
    /// An effect finished: a context was resolved and inspected.
    ContextLoaded(Box<LoadedContext>),
    /// View 3's probe finished.
    ConnectionDone(Payload<ConnectionReport>),
    /// View 4's run collected something new; `true` when it has finished.
    JourneyProgress(Payload<Collected>, bool),
    /// View 4's run of a workload collected something new; `true` when it has finished.
    WorkloadProgress(Payload<crate::journey::workload::WorkloadCollected>, bool),
    /// View 5's cluster arrived (or could not be listed).
    ClusterLoaded(Payload<Result<ClusterData, String>>),
    /// View 5's lists got further: each collection's items so far and total.
    ClusterProgress(Payload<Vec<(String, crate::client::cluster::ListProgress)>>),
    /// View 5's live cluster arrived, with its pods to choose from (or could not be listed).
    LiveClusterLoaded(Payload<Result<LiveCluster, String>>),
    /// View 5's watch: the live cluster changed (coalesced), or its watch's status did.
    LiveChanged(Payload<LiveUpdate>),
    /// $EDITOR returned: the manifest's new text, or why it could not be read.
    ManifestEdited(Result<String, String>),
    /// `r`: run the current view's probe, journey or listing again.
    Refresh,
    /// `e` (view 4): edit the pod manifest in $EDITOR.
    EditPod,
    /// `l` (view 4): the next pod manifest (this one, then those in scenarios/).
    NextPod,
    /// `Enter` (view 4): this pod's filter and score in view 5.
    OpenInScheduler,
    /// `f` (view 5): the formula behind the score under the cursor.
    ToggleFormula,
    /// `o` (view 5): sort by scheduler order, name, score.
    CycleSort,
    /// `/`: type a filter for the node list.
    StartFilter,
    FilterInput(char),
    FilterBack,
    /// Enter keeps the filter, Esc clears it.
    FilterEnd(bool),
    /// `+` / `-` (view 5): the pod's request of the chosen resource, up or down.
    More,
    Less,
    /// `c` (view 5): switch `+`/`-` between cpu and memory.
    SwitchResource,
    /// `t` (view 5): tolerate every taint, or not.
    ToggleTolerations,
    /// `s` (view 5): the next nodeSelector label (then none).
    NextSelector,
    /// `P`: presenter mode on / off.
    TogglePresent,
    /// `W` (view 4): ask whether to create the pod for real on a remote server.
    AskForReal,
    /// `y` (view 4): yes to that question.
    ConfirmForReal,
    /// `w` (view 5, live cluster): show / hide the cluster's Pending and bound pods.
    TogglePods,
    /// `:`: type a command (`:pods`, `:ns NAME`, …).
    StartCommand,
    CommandInput(char),
    CommandBack,
    /// Enter runs the command, Esc drops it.
    CommandEnd(bool),
    /// Esc outside an overlay: clear the `/` filter kept with Enter.
    ClearFilter,
    /// `x` (view 5): undo every what-if (requests, tolerations, nodeSelector).
    ResetWhatIf,
    /// Views 2 and 3 with `--etcd`: the API server's chain to etcd, or back to the context's.
    ToggleChain,
    /// Keys 1–9 at view 5's "which node wins?" (presenter mode): the room's guess.
    Guess(usize),
    /// `:lesson` returned: the lesson's title, or why it stopped.
    LessonDone(Result<String, String>),
    /// `b` (view 5): the default and the bin-packing profile side by side.
    CompareProfiles,
    /// `d` (view 5's pods list): describe the pod under the cursor, with its events.
    Describe,
    /// The description of pod `namespace/name` (or why the server gave none).
    Described(String, Result<Vec<String>, String>),
}
