//! The effects runner: performs what `update` asked for, off the UI thread, and sends the
//! result back on the loop's channel as an `Action`. Local work (reading files) runs on a
//! thread; network work (connect, create a pod, list the cluster) runs as tokio tasks on the
//! runtime the TUI was given. Every result is sent on the same channel.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use super::action::{Action, Payload};
use super::app::AppEvent;
use super::connection::probe::Peer;
use super::session;
use super::update::Effect;
use super::{connection, sched};
use crate::kubeconfig::{Kubeconfig, ResolvedContext};

/// How long view 4 follows a created pod before giving up on it running.
const JOURNEY_FOLLOW: std::time::Duration = std::time::Duration::from_secs(30);

pub struct EffectRunner {
    tx: Sender<AppEvent>,
    kubeconfig: Option<Arc<Kubeconfig>>,
    rt: tokio::runtime::Handle,
}

impl EffectRunner {
    pub fn new(
        tx: Sender<AppEvent>,
        kubeconfig: Option<Arc<Kubeconfig>>,
        rt: tokio::runtime::Handle,
    ) -> Self {
        EffectRunner { tx, kubeconfig, rt }
    }

    fn resolve(&self, name: &str) -> Result<ResolvedContext, String> {
        let kc = self
            .kubeconfig
            .as_ref()
            .ok_or_else(|| "no kubeconfig".to_string())?;
        kc.resolve(Some(name)).map_err(|e| e.to_string())
    }

    /// View 3's connection, in the background; its report comes back as `ConnectionDone`.
    fn probe(
        &self,
        ctx: Result<ResolvedContext, String>,
        name: String,
        peer: Peer,
        send: impl Fn(Action) + Send + 'static,
    ) {
        self.rt.spawn(async move {
            let report = match ctx {
                Ok(ctx) => connection::probe::probe(&ctx, peer).await,
                Err(e) => connection::probe::unattempted(name, e),
            };
            send(Action::ConnectionDone(Payload::new(report)));
        });
    }

    pub fn run(&self, effect: Effect) {
        let tx = self.tx.clone();
        // The loop may have ended meanwhile; then nobody needs the answer.
        let send = move |a: Action| {
            let _ = tx.send(AppEvent::Action(a));
        };
        match effect {
            Effect::LoadContext(name) => {
                let Some(kubeconfig) = self.kubeconfig.clone() else {
                    return;
                };
                // Reading referenced files and decoding certificates is quick, but a file on a
                // slow mount must never freeze the screen.
                std::thread::spawn(move || {
                    let loaded = session::load_context(&kubeconfig, Some(&name));
                    send(Action::ContextLoaded(Box::new(loaded)));
                });
            }
            Effect::Connect(name) => {
                let ctx = self.resolve(&name);
                self.probe(ctx, name, Peer::ApiServer, send);
            }
            Effect::ConnectEtcd(path, name) => {
                let ctx = crate::kubeconfig::Kubeconfig::load_file(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|kc| kc.resolve(Some(&name)).map_err(|e| e.to_string()));
                self.probe(ctx, name, Peer::Etcd, send);
            }
            Effect::RunJourney {
                context,
                pod,
                replace,
                write,
            } => {
                let ctx = self.resolve(&context);
                let opts = crate::journey::run::RunOptions {
                    write,
                    cleanup: false,
                    replace_existing: replace,
                    timeout: JOURNEY_FOLLOW,
                };
                self.rt.spawn(async move {
                    match ctx {
                        Ok(ctx) if crate::journey::workload::kind_of(&pod).is_some() => {
                            crate::journey::workload::run(&ctx, &pod, &opts, |w, done| {
                                send(Action::WorkloadProgress(Payload::new(w.clone()), done));
                            })
                            .await;
                        }
                        Ok(ctx) => {
                            crate::journey::run::run(&ctx, &pod, &opts, |c, done| {
                                send(Action::JourneyProgress(Payload::new(c.clone()), done));
                            })
                            .await;
                        }
                        Err(e) => {
                            let c = crate::journey::build::Collected {
                                handshake: Some(Err(e)),
                                ..Default::default()
                            };
                            send(Action::JourneyProgress(Payload::new(c), true));
                        }
                    }
                });
            }
            Effect::LoadCluster {
                context,
                focus,
                fallback,
            } => {
                let ctx = self.resolve(&context);
                let report = send.clone();
                // Each page's progress, every collection's in one report.
                let shown = std::sync::Mutex::new(Vec::new());
                let progress = move |what: &str, p: &crate::client::cluster::ListProgress| {
                    let mut v = shown.lock().unwrap_or_else(|e| e.into_inner());
                    match v.iter_mut().find(|(w, _)| w == what) {
                        Some((_, old)) => *old = p.clone(),
                        None => v.push((what.to_string(), p.clone())),
                    }
                    report(Action::ClusterProgress(Payload::new(v.clone())));
                };
                self.rt.spawn(async move {
                    let r = match ctx {
                        Ok(ctx) => {
                            sched::fetch::fetch_with(&ctx, focus, *fallback, &progress).await
                        }
                        Err(e) => Err(e),
                    };
                    match r {
                        Ok((mut live, seed)) => {
                            // The list is shown at once; the watch then keeps it current for
                            // as long as the view holds the feed.
                            let (feed, alive) = sched::watch::Feed::new();
                            let id = feed.id;
                            live.feed = Some(feed);
                            send(Action::LiveClusterLoaded(Payload::new(Ok(live))));
                            sched::watch::follow(seed, id, alive, |u| {
                                send(Action::LiveChanged(Payload::new(u)))
                            })
                            .await;
                        }
                        Err(e) => send(Action::LiveClusterLoaded(Payload::new(Err(e)))),
                    }
                });
            }
            Effect::Describe {
                context,
                namespace,
                name,
            } => {
                let ctx = self.resolve(&context);
                self.rt.spawn(async move {
                    let key = format!("{namespace}/{name}");
                    let lines = match ctx {
                        Ok(ctx) => match crate::client::http::ApiClient::connect(&ctx).await {
                            Ok(api) => {
                                crate::client::describe::describe_pod(&api, &namespace, &name).await
                            }
                            Err(e) => Err(e.to_string()),
                        },
                        Err(e) => Err(e),
                    };
                    send(Action::Described(key, lines));
                });
            }
            // The loop runs the editor and the lesson player itself (it owns the terminal).
            Effect::Edit(_) | Effect::Lesson(_) => {}
        }
    }
}
