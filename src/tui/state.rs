//! Everything the screen shows, owned by the loop and changed only by `update`.

use super::action::View;
use super::connection::ConnState;
use super::journey::JourneyState;
use super::sched::SchedState;
pub use super::session::{ContextFacts, LoadedContext, Source};
use crate::kubeconfig::Kubeconfig;

/// An overlay drawn above the current view.
/// How far the details pane scrolls before it has been drawn once.
pub const DETAIL_SCROLL_LIMIT: u16 = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// The key list; `scroll` is the first line shown.
    Help { scroll: u16 },
    /// View 1's merged kubeconfig over the whole view (it has no room below 100 columns).
    Merged { scroll: u16 },
    /// `d`: the pod described as `kubectl describe` does, with its events.
    Describe { scroll: u16 },
}

/// What `d` shows: the pod (`namespace/name`), then its description or why there is none
/// (`None` while the server is asked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub pod: String,
    pub lines: Option<Result<Vec<String>, String>>,
}

/// How long an answer stays in the footer.
const FLASH_SECS: i64 = 6;

/// A command's answer in the footer, until `until` (seconds since the Unix epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    /// Done as asked (else refused: why is the text).
    pub ok: bool,
    pub until: i64,
}

#[derive(Debug)]
pub struct AppState {
    pub view: View,
    pub overlay: Option<Overlay>,
    pub source: Source,
    /// The context the status bar and view 2 describe.
    pub active: Option<LoadedContext>,
    /// A context switch requested and not yet loaded.
    pub pending: Option<String>,
    /// View 1: the cursor over the contexts list.
    pub context_cursor: usize,
    /// View 2: the cursor over the rows of the trust tree.
    pub cert_cursor: usize,
    /// View 2: the first line shown of the certificate's fields (PgUp/PgDn).
    pub fields_scroll: u16,
    /// Seconds since the Unix epoch; expiry countdowns are relative to it.
    pub now_unix: i64,
    /// Columns × rows, as last reported.
    pub size: (u16, u16),
    pub quit: bool,
    /// Presenter mode: chrome hidden, a caption per step, the "which node wins?" question.
    pub present: bool,
    /// Tell the story by itself, a step every this many seconds (fractions allowed).
    pub autoplay: Option<f64>,
    /// Milliseconds since the Unix epoch, as the last tick or beat said.
    pub now_ms: i64,
    /// When the step last moved, in milliseconds (autoplay counts from here).
    pub last_step_ms: i64,
    /// The embedded cluster, when kexplore started one.
    pub embedded: Option<super::embedded::EmbeddedFacts>,
    /// View 3.
    pub conn: ConnState,
    /// View 4.
    pub journey: JourneyState,
    /// View 5.
    pub sched: SchedState,
    /// `--embedded --etcd`: the API server's chain to etcd (views 2 and 3, `E`).
    pub etcd: Option<super::etcd_chain::EtcdChain>,
    /// Which chain views 2 and 3 show.
    pub chain: super::etcd_chain::Chain,
    /// Presenter mode's questions and the room's guesses.
    pub quiz: super::quiz::Quiz,
    /// Views 3 and 4: the first line shown of the details pane (PgUp/PgDn).
    pub detail_scroll: u16,
    /// The most `detail_scroll` can be for the details last drawn (set as they are drawn): a
    /// page down on a detail shorter than its pane leaves it in sight.
    pub detail_scroll_max: std::cell::Cell<u16>,
    /// Keys go to the `/` filter being typed.
    pub typing: bool,
    /// Views 1 and 2: the `/` filter of their lists.
    pub list_filter: super::filter::ListFilters,
    /// The `:` command line being typed.
    pub command: Option<String>,
    /// The last command's answer.
    pub flash: Option<Flash>,
    /// `d`'s pod description.
    pub described: Option<Described>,
    /// Turns once per tick while something runs (progress you can see moving).
    pub spinner: usize,
}

impl AppState {
    /// A fresh state on `source`, with `active` already loaded (or `None` without kubeconfig).
    pub fn new(source: Source, active: Option<LoadedContext>, now_unix: i64) -> AppState {
        let context_cursor = match (&source, &active) {
            (Source::Loaded { kubeconfig, .. }, Some(a)) => kubeconfig
                .contexts
                .iter()
                .position(|c| c.value.name == a.name)
                .unwrap_or(0),
            _ => 0,
        };
        let cert_cursor = active
            .as_ref()
            .and_then(LoadedContext::report)
            .map_or(0, super::trust_tree::worst_row);
        AppState {
            view: View::Kubeconfig,
            overlay: None,
            source,
            active,
            pending: None,
            context_cursor,
            cert_cursor,
            fields_scroll: 0,
            now_unix,
            size: (0, 0),
            quit: false,
            present: false,
            autoplay: None,
            now_ms: now_unix * 1000,
            last_step_ms: now_unix * 1000,
            embedded: None,
            conn: ConnState::default(),
            journey: JourneyState::default(),
            sched: SchedState::default(),
            quiz: Default::default(),
            etcd: None,
            chain: Default::default(),
            detail_scroll: 0,
            detail_scroll_max: std::cell::Cell::new(DETAIL_SCROLL_LIMIT),
            typing: false,
            list_filter: Default::default(),
            command: None,
            flash: None,
            described: None,
            spinner: 0,
        }
    }

    pub fn kubeconfig(&self) -> Option<&Kubeconfig> {
        match &self.source {
            Source::Loaded { kubeconfig, .. } => Some(kubeconfig),
            Source::NotFound { .. } => None,
        }
    }

    pub fn kubeconfig_arc(&self) -> Option<std::sync::Arc<Kubeconfig>> {
        match &self.source {
            Source::Loaded { kubeconfig, .. } => Some(kubeconfig.clone()),
            Source::NotFound { .. } => None,
        }
    }

    pub fn context_count(&self) -> usize {
        self.kubeconfig().map_or(0, |k| k.contexts.len())
    }

    /// The name of the context under the view-1 cursor.
    pub fn context_under_cursor(&self) -> Option<&str> {
        self.kubeconfig()?
            .contexts
            .get(self.context_cursor)
            .map(|c| c.value.name.as_str())
    }

    /// The name of the context views 3-5 talk to.
    pub fn context_name(&self) -> Option<String> {
        self.active
            .as_ref()
            .filter(|a| a.resolved.is_ok())
            .map(|a| a.name.clone())
    }

    /// Says `text` in the footer for a few seconds: done (`ok`) or refused, and why.
    pub fn flash(&mut self, text: impl Into<String>, ok: bool) {
        self.flash = Some(Flash {
            text: text.into(),
            ok,
            until: self.now_unix + FLASH_SECS,
        });
    }

    /// The credentials views 2 and 3 show: the context's, or the API server's to etcd.
    pub fn chain_context(&self) -> Option<&LoadedContext> {
        match (&self.chain, &self.etcd) {
            (super::etcd_chain::Chain::Etcd, Some(e)) => Some(&e.context),
            _ => self.active.as_ref(),
        }
    }

    /// View 3's connection for the chain shown.
    pub fn conn(&self) -> &ConnState {
        match (&self.chain, &self.etcd) {
            (super::etcd_chain::Chain::Etcd, Some(e)) => &e.conn,
            _ => &self.conn,
        }
    }

    pub fn conn_mut(&mut self) -> &mut ConnState {
        match (&self.chain, &mut self.etcd) {
            (super::etcd_chain::Chain::Etcd, Some(e)) => &mut e.conn,
            _ => &mut self.conn,
        }
    }

    pub fn help_open(&self) -> bool {
        matches!(self.overlay, Some(Overlay::Help { .. }))
    }

    /// Whether any overlay is open (keys then go to it first).
    pub fn overlay_open(&self) -> bool {
        self.overlay.is_some()
    }
}
