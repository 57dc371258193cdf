//! `kubectl logs -f` (`follow=true`) of a running container: the lines so far, then each line
//! the simulated kubelet records as it records it, until the container stops running (its
//! exit line sent), is started again, or the pod goes — as a kubelet's log stream ends when
//! the container exits. `limitBytes` bounds the whole stream.

use std::sync::Arc;
use std::time::Duration;

use hyper::body::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::apiserver::codec::body::ApiBody;
use crate::apiserver::request::context::{Api, Reply};

/// How often the stream looks for new lines: the simulated kubelet writes a few a second at most.
const POLL: Duration = Duration::from_millis(250);
/// Lines waiting for a client that does not read.
const QUEUE: usize = 64;

/// What a followed log stream needs to know.
pub(crate) struct Follow {
    pub(crate) key: String,
    pub(crate) uid: String,
    pub(crate) container: String,
    /// Lines of the current instance already sent or skipped.
    pub(crate) seen: usize,
    pub(crate) timestamps: bool,
    /// Bytes the stream may still send, when limited.
    pub(crate) left: Option<usize>,
}

/// One log line as the endpoint writes it.
pub(crate) fn line(at: &str, text: &str, timestamps: bool) -> String {
    if timestamps {
        format!("{at} {text}\n")
    } else {
        format!("{text}\n")
    }
}

/// The container's status in the pod, app, init or ephemeral.
pub(crate) fn container_status<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    [
        "/status/containerStatuses",
        "/status/initContainerStatuses",
        "/status/ephemeralContainerStatuses",
    ]
    .into_iter()
    .filter_map(|l| pod.pointer(l).and_then(Value::as_array))
    .flatten()
    .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

/// Bytes cut to what `left` allows; None once nothing more may be sent.
fn within(mut text: String, left: &mut Option<usize>) -> Option<String> {
    let Some(n) = left.as_mut() else {
        return Some(text);
    };
    if *n == 0 {
        return None;
    }
    if text.len() > *n {
        let mut cut = *n;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    *n -= text.len();
    Some(text)
}

/// The stream: `first` (the lines so far, already cut), then what follows.
pub(crate) fn stream(api: Arc<Api>, mut f: Follow, first: String) -> Reply {
    let (tx, rx) = mpsc::channel::<Bytes>(QUEUE);
    tokio::spawn(async move {
        if !first.is_empty() && tx.send(Bytes::from(first)).await.is_err() {
            return;
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = tx.closed() => return,
            }
            let pod = api
                .store
                .get(&f.key)
                .filter(|p| p.pointer("/metadata/uid").and_then(Value::as_str) == Some(&f.uid));
            let Some(pod) = pod else { return };
            let running = container_status(&pod, &f.container)
                .is_some_and(|c| c.pointer("/state/running").is_some());
            let lines = api.container_logs.lines(&f.uid, &f.container);
            if lines.len() < f.seen {
                // Started again: this instance's stream is over.
                return;
            }
            let mut chunk = String::new();
            for (at, text) in &lines[f.seen..] {
                chunk.push_str(&line(at, text, f.timestamps));
            }
            f.seen = lines.len();
            if !chunk.is_empty() {
                let Some(chunk) = within(chunk, &mut f.left) else {
                    return;
                };
                if tx.send(Bytes::from(chunk)).await.is_err() {
                    return;
                }
            }
            if !running || f.left == Some(0) {
                return;
            }
        }
    });
    Reply::Stream {
        content_type: "text/plain",
        body: ApiBody::Stream(rx),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_limit_holds_across_the_stream() {
        let mut left = Some(10);
        assert_eq!(
            within("abcdef\n".into(), &mut left).as_deref(),
            Some("abcdef\n")
        );
        assert_eq!(within("ghijkl\n".into(), &mut left).as_deref(), Some("ghi"));
        assert_eq!(within("more\n".into(), &mut left), None);
        let mut none = None;
        assert_eq!(within("x\n".into(), &mut none).as_deref(), Some("x\n"));
    }
}
