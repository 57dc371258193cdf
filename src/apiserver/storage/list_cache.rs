//! Encoded list responses, reused while the store's revision is unchanged: the server's
//! answer to many clients listing the same thing at once.

/// What the cached answers may hold in all: a few whole lists of a big cluster.
const MAX_BYTES: usize = 128 << 20;

/// Encoded list responses keyed by path+query, each tagged with the store revision it shows.
#[derive(Default)]
pub struct ListCache {
    inner: std::sync::Mutex<std::collections::HashMap<String, (u64, hyper::body::Bytes)>>,
}

impl ListCache {
    pub fn get(&self, key: &str, rv: u64) -> Option<hyper::body::Bytes> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.get(key)
            .filter(|(at, _)| *at == rv)
            .map(|(_, b)| b.clone())
    }

    pub fn put(&self, key: String, rv: u64, bytes: hyper::body::Bytes) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // An answer at an older revision can never be served again (`get` wants the current
        // one): on a busy cluster each was a whole list — 25 MB for 10,000 pods — kept for
        // nothing until 256 had piled up.
        g.retain(|_, (at, _)| *at >= rv);
        let held: usize = g.values().map(|(_, b)| b.len()).sum();
        if g.len() >= 256 || held + bytes.len() > MAX_BYTES {
            g.clear(); // bounded: a burst of distinct lists just starts over
        }
        g.insert(key, (rv, bytes));
    }
}
