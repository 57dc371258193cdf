//! What the simulated kubelets keep on their nodes and `pods/log` reads: per pod (by uid) and
//! container, the lines the kubelet itself wrote about that container — it runs no process, so
//! these are the only true lines there are. Like a kubelet, it keeps a restarted container's
//! previous instance (`kubectl logs --previous`). Node-local state, not API objects, so it
//! lives beside the store rather than in it; bounded, the oldest pods forgotten first.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How many pods' logs are kept (a kubelet keeps logs of the pods on its node only).
const MAX_PODS: usize = 20_000;

#[derive(Default)]
pub struct ContainerLogs {
    inner: Mutex<Inner>,
}

/// A container's lines, each with its RFC 3339 timestamp.
type Lines = Vec<(String, String)>;

/// A container's current instance, and the one before it when it was restarted.
#[derive(Default)]
struct Instances {
    current: Lines,
    previous: Option<Lines>,
}

#[derive(Default)]
struct Inner {
    /// pod uid → container → its instances' lines.
    pods: HashMap<String, HashMap<String, Instances>>,
    /// Pod uids in the order their first line came.
    order: VecDeque<String>,
}

impl ContainerLogs {
    /// Append a line for one container of one pod.
    pub(crate) fn append(&self, pod_uid: &str, container: &str, at: &str, line: &str) {
        let Ok(mut g) = self.inner.lock() else {
            return;
        };
        if !g.pods.contains_key(pod_uid) {
            g.order.push_back(pod_uid.to_string());
            while g.order.len() > MAX_PODS {
                if let Some(old) = g.order.pop_front() {
                    g.pods.remove(&old);
                }
            }
        }
        g.pods
            .entry(pod_uid.to_string())
            .or_default()
            .entry(container.to_string())
            .or_default()
            .current
            .push((at.to_string(), line.to_string()));
    }

    /// The container was started again: its lines so far become the previous instance's.
    pub(crate) fn restarted(&self, pod_uid: &str, container: &str) {
        let Ok(mut g) = self.inner.lock() else {
            return;
        };
        if let Some(c) = g.pods.get_mut(pod_uid).and_then(|p| p.get_mut(container)) {
            c.previous = Some(std::mem::take(&mut c.current));
        }
    }

    /// The lines of one container's current instance, oldest first, with their timestamps.
    pub(crate) fn lines(&self, pod_uid: &str, container: &str) -> Lines {
        self.inner
            .lock()
            .ok()
            .and_then(|g| Some(g.pods.get(pod_uid)?.get(container)?.current.clone()))
            .unwrap_or_default()
    }

    /// The lines of the instance before a restart, if the container was restarted.
    pub(crate) fn previous_lines(&self, pod_uid: &str, container: &str) -> Option<Lines> {
        let g = self.inner.lock().ok()?;
        g.pods.get(pod_uid)?.get(container)?.previous.clone()
    }

    /// A pod is gone from its node: its logs go with it (its place in `order` ages out).
    pub(crate) fn forget(&self, pod_uid: &str) {
        if let Ok(mut g) = self.inner.lock() {
            g.pods.remove(pod_uid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_per_container_and_forgotten_with_the_pod() {
        let logs = ContainerLogs::default();
        logs.append("u1", "c", "t1", "one");
        logs.append("u1", "c", "t2", "two");
        logs.append("u1", "d", "t1", "other");
        assert_eq!(
            logs.lines("u1", "c"),
            vec![("t1".into(), "one".into()), ("t2".into(), "two".into())]
        );
        logs.forget("u1");
        assert!(logs.lines("u1", "c").is_empty());
    }

    #[test]
    fn a_restart_keeps_the_previous_instance() {
        let logs = ContainerLogs::default();
        logs.append("u1", "c", "t1", "first run");
        assert_eq!(logs.previous_lines("u1", "c"), None);
        logs.restarted("u1", "c");
        logs.append("u1", "c", "t2", "second run");
        assert_eq!(
            logs.lines("u1", "c"),
            vec![("t2".into(), "second run".into())]
        );
        assert_eq!(
            logs.previous_lines("u1", "c"),
            Some(vec![("t1".into(), "first run".into())])
        );
    }
}
