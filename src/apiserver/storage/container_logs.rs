//! What the simulated kubelets keep on their nodes and `pods/log` reads: per pod (by uid) and
//! container, the lines the kubelet itself wrote about that container — it runs no process, so
//! these are the only true lines there are. Node-local state, not API objects, so it lives
//! beside the store rather than in it; bounded, the oldest pods forgotten first.

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

#[derive(Default)]
struct Inner {
    /// pod uid → container → lines.
    pods: HashMap<String, HashMap<String, Lines>>,
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
            .push((at.to_string(), line.to_string()));
    }

    /// The lines of one container, oldest first, with their timestamps.
    pub(crate) fn lines(&self, pod_uid: &str, container: &str) -> Lines {
        self.inner
            .lock()
            .ok()
            .and_then(|g| g.pods.get(pod_uid)?.get(container).cloned())
            .unwrap_or_default()
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
}
