//! The pod subresources a kubelet serves (upstream `pkg/registry/core/pod/rest/log.go`,
//! `subresources.go` and the kubelet's `validateContainerLogStatus`): `log` returns what the
//! simulated kubelet recorded for the container — it runs no process, so nothing else exists —
//! with `tailLines`, `timestamps`, `limitBytes`, `follow` (`pod_log_follow`) and `previous` (the
//! instance before a restart: a container whose simulated exit code makes it restart); `exec`, `attach` and `portforward` answer a Status
//! saying plainly that there is no process to reach.

use hyper::body::Bytes;
use serde_json::Value;

use crate::apiserver::endpoints::pod_log_follow;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::util;

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn names(pod: &Value, list: &str) -> Vec<String> {
    pod.pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
        .map(|cs| cs.iter().map(|c| s(c, "/name").to_string()).collect())
        .unwrap_or_default()
}

fn pod_key(ctx: &Ctx<'_>) -> String {
    format!("/registry/pods/{}/{}", ctx.info.namespace, ctx.info.name)
}

fn pod(ctx: &Ctx<'_>) -> Result<std::sync::Arc<Value>, ApiError> {
    ctx.api
        .store
        .get(&pod_key(ctx))
        .ok_or_else(|| ApiError::not_found("", "pods", &ctx.info.name))
}

/// The container a request names, or the pod's only one (upstream `LogLocation` /
/// `streamLocation`).
fn container(ctx: &Ctx<'_>, pod: &Value) -> Result<String, ApiError> {
    let name = &ctx.info.name;
    let containers = names(pod, "containers");
    let inits = names(pod, "initContainers");
    let ephemeral = names(pod, "ephemeralContainers");
    match ctx.info.query("container").filter(|c| !c.is_empty()) {
        Some(c)
            if containers
                .iter()
                .chain(&inits)
                .chain(&ephemeral)
                .any(|n| n == c) =>
        {
            Ok(c.to_string())
        }
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {name}"
        ))),
        None => match containers.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            many => {
                let mut e = format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    many.join(" ")
                );
                if !inits.is_empty() {
                    e.push_str(&format!(
                        " or one of the init containers: [{}]",
                        inits.join(" ")
                    ));
                }
                if !ephemeral.is_empty() {
                    e.push_str(&format!(
                        " or one of the ephemeral containers: [{}]",
                        ephemeral.join(" ")
                    ));
                }
                Err(ApiError::bad_request(e))
            }
        },
    }
}

/// `GET …/pods/<name>/log`.
pub(crate) fn log(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pod = pod(ctx)?;
    let cname = container(ctx, &pod)?;
    let text = |body: String| Reply::Raw {
        code: 200,
        content_type: "text/plain",
        body: Bytes::from(body),
    };
    if s(&pod, "/spec/nodeName").is_empty() {
        // Upstream: no host, no location, an empty log.
        return Ok(text(String::new()));
    }
    let pod_name = &ctx.info.name;
    let status = pod_log_follow::container_status(&pod, &cname);
    let bad = |m: String| Err(ApiError::bad_request(m));
    let Some(status) = status else {
        return bad(format!(
            "container {cname:?} in pod {pod_name:?} is not available"
        ));
    };
    let uid = s(&pod, "/metadata/uid");
    let logs = &ctx.api.container_logs;
    // Which instance, as the kubelet picks it: the running or terminated one, or, asked for
    // `previous` or waiting to restart, the last that terminated. The log keeps a container's
    // lines as the current instance's until it is started again, so while it waits out its
    // back-off, the last to terminate is still the current one.
    let waiting = status.pointer("/state/waiting").is_some();
    let last_terminated = status.pointer("/lastState/terminated").is_some();
    let instance = if waiting && last_terminated {
        logs.lines(uid, &cname)
    } else if ctx.info.query("previous") == Some("true") {
        match logs.previous_lines(uid, &cname) {
            Some(lines) if last_terminated => lines,
            _ => {
                return bad(format!(
                    "previous terminated container {cname:?} in pod {pod_name:?} not found"
                ));
            }
        }
    } else if !waiting {
        logs.lines(uid, &cname)
    } else {
        let reason = status
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return bad(format!(
            "container {cname:?} in pod {pod_name:?} is waiting to start: {reason}"
        ));
    };
    // Followed while it runs: the current instance, lines to come included.
    let follow = ctx.info.query("follow") == Some("true")
        && ctx.info.query("previous") != Some("true")
        && status.pointer("/state/running").is_some();
    let seen = instance.len();
    let mut lines = instance;
    if let Some(since) = ctx.info.query("sinceTime").map(str::to_string).or_else(|| {
        let secs: i64 = ctx.info.query("sinceSeconds")?.parse().ok()?;
        Some(util::rfc3339(
            time::OffsetDateTime::now_utc() - time::Duration::seconds(secs),
        ))
    }) {
        let since = util::parse_time(&since);
        lines.retain(|(at, _)| util::parse_time(at) >= since);
    }
    if let Some(n) = ctx
        .info
        .query("tailLines")
        .and_then(|n| n.parse::<usize>().ok())
    {
        let skip = lines.len().saturating_sub(n);
        lines.drain(..skip);
    }
    let stamped = ctx.info.query("timestamps") == Some("true");
    let mut body = String::new();
    for (at, line) in &lines {
        body.push_str(&pod_log_follow::line(at, line, stamped));
    }
    let limit = ctx
        .info
        .query("limitBytes")
        .and_then(|n| n.parse::<usize>().ok());
    if let Some(limit) = limit
        && body.len() > limit
    {
        let mut cut = limit;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
    }
    if !follow {
        return Ok(text(body));
    }
    let f = pod_log_follow::Follow {
        key: pod_key(ctx),
        uid: uid.to_string(),
        container: cname,
        seen,
        timestamps: stamped,
        left: limit.map(|l| l - body.len()),
    };
    Ok(pod_log_follow::stream(ctx.api.clone(), f, body))
}

/// `exec`, `attach` and `portforward`: the checks upstream makes before it dials the kubelet,
/// then the truth — there is no process on a simulated kubelet.
pub(crate) fn no_process(ctx: &mut Ctx<'_>, sub: &str) -> Result<Reply, ApiError> {
    let pod = pod(ctx)?;
    let name = &ctx.info.name;
    if sub != "portforward" {
        container(ctx, &pod)?;
    }
    let node = s(&pod, "/spec/nodeName");
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let what = match sub {
        "exec" => "no command can be executed in its containers",
        "attach" => "there is no process to attach to",
        _ => "there is no process listening to forward ports to",
    };
    Err(ApiError::bad_request(format!(
        "pod {name} runs on node {node}, whose kubelet is simulated by kexplore serve: it runs no processes, so {what}"
    )))
}
