//! YAML request bodies → JSON values, off the threads that serve connections.
//!
//! serde_yaml (libyaml underneath) spends ~1.3 s on a 2 MB flat list in a debug build, and the
//! depth scan (`yaml_depth`) cannot rule that out. So bodies are parsed one at a time on a
//! thread of their own: the runtime worker that waits for the answer does so in
//! `block_in_place` (its other tasks move to another thread), and however many such bodies
//! arrive, they cost one core, not every worker.

use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

use serde_json::Value;

use crate::apiserver::transport::yaml_depth;

type Reply = Sender<Result<Value, String>>;
type Job = (Vec<u8>, Reply);

static WORKER: OnceLock<Sender<Job>> = OnceLock::new();

fn parse_here(body: &[u8]) -> Result<Value, String> {
    serde_yaml::from_slice(body).map_err(|e| e.to_string())
}

fn worker() -> &'static Sender<Job> {
    WORKER.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        // Should the thread not start, `rx` is dropped with the closure: every send then
        // fails and callers parse where they are.
        let _ = std::thread::Builder::new()
            .name("kexplore-yaml".into())
            .spawn(move || {
                for (body, reply) in rx {
                    let _ = reply.send(parse_here(&body));
                }
            });
        tx
    })
}

/// Parse a YAML body into a Value, after the cheap depth scan.
pub fn parse(body: &[u8]) -> Result<Value, String> {
    yaml_depth::check(body)?;
    let on_workers = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if !on_workers {
        return parse_here(body);
    }
    tokio::task::block_in_place(|| {
        let (reply, answer) = channel();
        let sent = worker().send((body.to_vec(), reply)).is_ok();
        match sent.then(|| answer.recv().ok()).flatten() {
            Some(r) => r,
            None => parse_here(body),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_on_and_off_a_multi_threaded_runtime() {
        let want = serde_json::json!({"a": [1, "b"]});
        assert_eq!(parse(b"a: [1, b]\n"), Ok(want.clone()));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("runtime");
        let got = rt.block_on(async {
            tokio::spawn(async { parse(b"a: [1, b]\n") })
                .await
                .map_err(|e| e.to_string())
        });
        assert_eq!(got, Ok(Ok(want)));
        assert!(parse(b"a: [").is_err());
        assert!(parse("[".repeat(1000).as_bytes()).is_err());
    }
}
