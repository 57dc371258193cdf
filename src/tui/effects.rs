//! The effects runner: performs what `update` asked for, off the UI thread, and sends the
//! result back on the loop's channel as an `Action`. This is the seam for the async work of
//! later issues (connect, create a pod, watch): they become `Effect` variants run on tokio
//! tasks that send into the same `Sender`.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use super::action::Action;
use super::app::AppEvent;
use super::session;
use super::update::Effect;
use crate::kubeconfig::Kubeconfig;

pub struct EffectRunner {
    tx: Sender<AppEvent>,
    kubeconfig: Option<Arc<Kubeconfig>>,
}

impl EffectRunner {
    pub fn new(tx: Sender<AppEvent>, kubeconfig: Option<Arc<Kubeconfig>>) -> Self {
        EffectRunner { tx, kubeconfig }
    }

    pub fn run(&self, effect: Effect) {
        match effect {
            Effect::LoadContext(name) => {
                let Some(kubeconfig) = self.kubeconfig.clone() else {
                    return;
                };
                let tx = self.tx.clone();
                // Reading referenced files and decoding certificates is quick, but a file on a
                // slow mount must never freeze the screen.
                std::thread::spawn(move || {
                    let loaded = session::load_context(&kubeconfig, Some(&name));
                    // The loop may have ended meanwhile; then nobody needs the answer.
                    let _ = tx.send(AppEvent::Action(Action::ContextLoaded(Box::new(loaded))));
                });
            }
        }
    }
}
