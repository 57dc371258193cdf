//! The audit log: one `audit.k8s.io/v1` Event per request (stage ResponseComplete, or
//! ResponseStarted for watches), JSON lines, so a pod's journey can be read after the fact.
//! Level Metadata for reads, RequestResponse-like object references for writes; no bodies,
//! so no secret ever lands in the file.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::apiserver::request::info::RequestInfo;
use crate::apiserver::request::trace::{RequestTrace, Stage};
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::transport::tls::ConnInfo;
use crate::apiserver::util;

pub struct AuditLog {
    file: Mutex<std::io::BufWriter<std::fs::File>>,
}

impl AuditLog {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt as _;
        // The log names every user, group and object: readable by its owner only.
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(AuditLog {
            file: Mutex::new(std::io::BufWriter::new(f)),
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        trace: &RequestTrace,
        info: &RequestInfo,
        user: Option<&UserInfo>,
        user_agent: &str,
        conn: &ConnInfo,
        status: Option<&Value>,
        received: &str,
    ) {
        let stage = if info.verb == "watch" && trace.code < 400 {
            "ResponseStarted"
        } else {
            "ResponseComplete"
        };
        let mut ev = json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": trace.audit_id,
            "stage": stage,
            "requestURI": trace.uri,
            "verb": info.verb,
            "user": trace.impersonated_by.as_ref().or(user).map(|u| json!(u)).unwrap_or(json!({})),
            "sourceIPs": conn.remote.map(|r| vec![r.ip().to_string()]).unwrap_or_default(),
            "userAgent": user_agent,
            "requestReceivedTimestamp": received,
            "stageTimestamp": util::now_micro(),
        });
        if let (Some(_), Some(as_user)) = (&trace.impersonated_by, user) {
            ev["impersonatedUser"] = json!(as_user);
        }
        if info.is_resource_request {
            let mut o = json!({"resource": info.resource, "apiVersion": info.api_version});
            for (k, v) in [
                ("namespace", &info.namespace),
                ("name", &info.name),
                ("apiGroup", &info.api_group),
                ("subresource", &info.subresource),
            ] {
                if !v.is_empty() {
                    o[k] = json!(v);
                }
            }
            if let Some(uid) = trace
                .find(Stage::Storage)
                .and_then(|s| s.detail.value().get("uid").cloned())
                .filter(|u| !u.is_null())
            {
                o["uid"] = uid;
            }
            ev["objectRef"] = o;
        }
        ev["responseStatus"] = match status {
            Some(s) => {
                let mut s = s.clone();
                if let Some(m) = s.as_object_mut() {
                    m.remove("kind");
                    m.remove("apiVersion");
                }
                s
            }
            None => json!({"metadata": {}, "code": trace.code}),
        };
        if let Some(a) = trace.find(Stage::Authorization) {
            let a = a.detail.value();
            ev["annotations"] = json!({
                "authorization.k8s.io/decision": a.get("decision").cloned().unwrap_or(json!("forbid")),
                "authorization.k8s.io/reason": a.get("reason").cloned().unwrap_or(json!("")),
            });
        }
        let mut line = serde_json::to_vec(&ev).unwrap_or_default();
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = f.write_all(&line);
        let _ = f.flush();
    }
}
