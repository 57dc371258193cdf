//! View 3's state: the last connection report, the ladder built from it, and how many rungs
//! are revealed. The probe runs off the UI thread (`probe`); the ladder is pure (`ladder`).

pub mod ladder;
pub mod probe;

use ladder::Rung;
use probe::ConnectionReport;

#[derive(Debug, Default)]
pub struct ConnState {
    pub report: Option<ConnectionReport>,
    pub rungs: Vec<Rung>,
    /// Rungs revealed, at least 1 once a report is in.
    pub step: usize,
    /// A probe is under way (for this context).
    pub running: Option<String>,
}

impl ConnState {
    /// Takes a finished probe; the ladder starts at its first rung.
    pub fn set(&mut self, report: ConnectionReport, creds: Option<&crate::pki::CredentialReport>) {
        self.rungs = ladder::build(&report, creds);
        self.report = Some(report);
        self.step = 1;
        self.running = None;
    }

    /// The rung shown in detail (the last revealed one).
    pub fn current(&self) -> Option<&Rung> {
        self.rungs.get(self.step.checked_sub(1)?)
    }
}
