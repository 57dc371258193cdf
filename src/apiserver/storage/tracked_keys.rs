//! The keys under a prefix whose current object matches a predicate, kept current from the
//! store's history: a change costs a lookup per changed object instead of a scan of every object,
//! which made each write O(pods) for the scheduler loop and the simulated kubelets. Predicates
//! see the control loops' view of an object (`controller_view`).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::apiserver::storage::interface::Storage;

pub struct TrackedKeys {
    pub keys: BTreeSet<String>,
    prefix: &'static str,
    wanted: Box<dyn Fn(&Value) -> bool + Send + Sync>,
    /// Every revision up to this one has been looked at; None until the first full scan.
    pos: Option<u64>,
}

impl TrackedKeys {
    pub fn new(
        prefix: &'static str,
        wanted: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        TrackedKeys {
            keys: BTreeSet::new(),
            prefix,
            wanted: Box::new(wanted),
            pos: None,
        }
    }

    /// Whether `v` is one of the objects tracked (the object may have changed since).
    pub fn wants(&self, v: &Value) -> bool {
        (self.wanted)(v)
    }

    pub fn catch_up(&mut self, store: &dyn Storage) {
        loop {
            let Some(pos) = self.pos else {
                let (objects, rv) = store.list_items(self.prefix);
                self.keys = objects
                    .into_iter()
                    .filter(|(_, v)| (self.wanted)(&v.view()))
                    .map(|(k, _)| k)
                    .collect();
                self.pos = Some(rv);
                return;
            };
            let Ok(page) = store.history_after(self.prefix, pos, 4096, usize::MAX) else {
                // Fell out of the history (a very long pause): start over from a full scan.
                self.pos = None;
                continue;
            };
            for ev in &page.events {
                // The object's state now, not at the event: only the current one matters here.
                // Its view (a predicate reads what the control loops read): cached, the other
                // loops that read the same pod next find it parsed.
                match store.get_view(&ev.key) {
                    Some(v) if (self.wanted)(&v) => self.keys.insert(ev.key.clone()),
                    _ => self.keys.remove(&ev.key),
                };
            }
            self.pos = Some(page.through);
            if !page.more {
                return;
            }
        }
    }
}
