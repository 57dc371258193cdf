//! Exec credentials kept as client-go keeps them: one per plugin configuration and cluster for
//! the whole process, reused until its `expirationTimestamp` (forever without one), dropped when
//! the server answers 401 to it so the next request runs the plugin again.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::exec::{self, ExecCredential, ExecError};
use crate::kubeconfig::ResolvedCluster;
use crate::kubeconfig::model::ExecConfig;

struct Entry {
    credential: ExecCredential,
    /// None: no expiry given, valid until rejected.
    expires: Option<OffsetDateTime>,
}

fn cache() -> &'static Mutex<HashMap<String, Entry>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Entry>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The same plugin for another cluster may answer differently (provideClusterInfo).
fn key(exec: &ExecConfig, cluster: &ResolvedCluster) -> String {
    format!(
        "{}\u{0}{}",
        serde_json::to_string(exec).unwrap_or_default(),
        cluster.server
    )
}

/// When a credential stops being usable. An unreadable timestamp counts as already expired, so
/// such a credential serves the request it was fetched for and is never reused.
fn expiry(c: &ExecCredential) -> Result<Option<OffsetDateTime>, ()> {
    match &c.expiration_timestamp {
        None => Ok(None),
        Some(t) => OffsetDateTime::parse(t, &Rfc3339).map(Some).map_err(|_| ()),
    }
}

/// A valid credential: the cached one, else the plugin's fresh answer (cached when it may be).
/// Blocking when the plugin runs.
pub fn credential(
    exec_config: &ExecConfig,
    cluster: &ResolvedCluster,
    timeout: Duration,
) -> Result<ExecCredential, ExecError> {
    let k = key(exec_config, cluster);
    let now = OffsetDateTime::now_utc();
    if let Ok(map) = cache().lock()
        && let Some(e) = map.get(&k)
        && e.expires.is_none_or(|t| now < t)
    {
        return Ok(e.credential.clone());
    }
    let fresh = exec::run(exec_config, cluster, timeout)?;
    if let Ok(expires) = expiry(&fresh)
        && let Ok(mut map) = cache().lock()
    {
        map.insert(
            k,
            Entry {
                credential: fresh.clone(),
                expires,
            },
        );
    }
    Ok(fresh)
}

/// The server rejected `token` (401): forget it, unless another request already replaced it.
pub fn reject(exec_config: &ExecConfig, cluster: &ResolvedCluster, token: &str) {
    let k = key(exec_config, cluster);
    if let Ok(mut map) = cache().lock()
        && map.get(&k).is_some_and(|e| {
            e.credential.token.as_ref().map(|t| t.expose().as_str()) == Some(token)
        })
    {
        map.remove(&k);
    }
}
