//! Assemble a journey from what one run collected: the client's handshake facts and
//! responses (observed), the server's trace when it offers one (reported), and explanations
//! for what a remote server keeps to itself (inferred).

use serde_json::{Value, json};

use super::refusal;
use super::{Journey, STAGES, Source, Stage, StageReport, Status};
use crate::apiserver::controllers::kubelet_containers;

/// Everything a run gathered.
#[derive(Debug, Default, Clone)]
pub struct Collected {
    pub pod: String,
    pub server: String,
    /// The client's own handshake facts (version, cipher, chain verdict...), or its failure.
    pub handshake: Option<Result<Value, String>>,
    /// The create response: HTTP code and body.
    pub create: Option<(u16, Value)>,
    /// What the server's `/debug/kexplore/pods/<ns>/<name>` returned (embedded servers only).
    pub server_trace: Option<Value>,
    /// Watch events the client received for the pod after its creation.
    pub watch_events: Vec<Value>,
    /// The pod as last read.
    pub final_pod: Option<Value>,
    /// The pod's events as last listed (Scheduled, Pulling...).
    pub events: Vec<Value>,
    /// The create carried `dryRun=All`: the server checked everything and stored nothing.
    pub dry_run: bool,
    /// A dry run's stand-in for the scheduler: the default profile simulated on the live
    /// cluster (`{server_version, kube_version, not_visible, trace}` or `{error}`).
    pub simulation: Option<Value>,
    /// A real create on a server that does not report its scheduler: the simulation's node
    /// next to the one the real scheduler bound (`scheduler::why::Comparison`).
    pub comparison: Option<Value>,
    /// JSON pointers the server added or changed relative to the manifest (defaults, admission).
    pub admission_changes: Vec<String>,
    /// The same fields with their values, `{path, old, new}` (old from the manifest, new from
    /// the returned object), for a server that does not report its admission plugins.
    pub admission_diff: Vec<Value>,
    /// The lines `kubectl get` prints for the failure that stopped the run (a refused
    /// handshake, a 401), so a user can match them. `kubectl create -f` 1.29+ wraps the same
    /// error in its OpenAPI validation message, so these are not claimed as create's words.
    pub kubectl_says: Vec<String>,
    /// `--cleanup`: how the DELETE at the end went.
    pub cleanup: Option<Value>,
    /// A pod a workload controller created (not this client): `{controller, owner}`, e.g.
    /// `{"controller": "replicaset-controller", "owner": "ReplicaSet default/web-5d4c8"}`.
    pub created_by: Option<Value>,
    /// The run is over: what it did not see by now (a watch event, a node) it will not see.
    pub finished: bool,
}

const DRY_RUN: &str = "dry run: nothing stored";

fn stage(name: Stage, status: Status, source: Source, detail: Value) -> StageReport {
    StageReport {
        stage: name,
        status,
        source,
        detail,
    }
}

/// The request-trace stages of the create, by name (admission may appear more than once).
fn trace_stages(create: &Value, name: Stage) -> Vec<&Value> {
    create["stages"]
        .as_array()
        .map(|a| a.iter().filter(|s| s["stage"] == name).collect())
        .unwrap_or_default()
}

fn status_of(v: &Value) -> Status {
    v["status"]
        .as_str()
        .and_then(Status::parse)
        .unwrap_or(Status::Ok)
}

const INFERRED: &[(Stage, &str)] = &[
    (
        Stage::Authentication,
        "kube-apiserver maps the client certificate's CN to the user and its O values to groups (or reads a bearer token); not reported by this server",
    ),
    (
        Stage::Authorization,
        "the authorizer chain (Node, RBAC) must have allowed create on pods in this namespace, since the server accepted the create (a refusal would have been a 403)",
    ),
    (
        Stage::Admission,
        "the API's defaults, then the server's mutating admission (for a pod, kube-apiserver enables by default LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds, RuntimeClass and any mutating webhooks), then validating admission ran; a remote server does not say which changed what: the changes listed are the created pod against the manifest",
    ),
    (
        Stage::Validation,
        "the pod passed validation (a failure would have been a 422 Invalid)",
    ),
    (
        Stage::Storage,
        "the pod was written to etcd under /registry/pods/<namespace>/<name>; its resourceVersion is the etcd revision",
    ),
    (
        Stage::Filter,
        "kube-scheduler filtered the nodes; a remote scheduler does not report per-node results (see `kexplore schedule`)",
    ),
    (
        Stage::Score,
        "kube-scheduler scored the feasible nodes; not reported by a remote server",
    ),
];

fn inferred(name: Stage, status: Status) -> StageReport {
    let why = INFERRED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, w)| *w)
        .unwrap_or("not reported");
    stage(name, status, Source::Inferred, json!({"explanation": why}))
}

pub fn build(c: &Collected) -> Journey {
    let mut stages: Vec<StageReport> = Vec::new();
    let create_trace = c
        .server_trace
        .as_ref()
        .map(|t| &t["create"])
        .filter(|t| t.is_object());
    // A controller's pod: no connection and no response of this client's; its create's trace
    // (an in-process write) says what the request stages were.
    let by_controller = c.created_by.as_ref().map(|by| {
        let source = if create_trace.is_some() {
            Source::Reported
        } else {
            Source::Observed
        };
        let note = format!(
            "created in-process by the {} for {}: this client neither connected nor got a response for it",
            by["controller"].as_str().unwrap_or("controller"),
            by["owner"].as_str().unwrap_or("its owner")
        );
        (source, note)
    });
    // tls-handshake: always the client's own observation.
    stages.push(match &c.handshake {
        _ if by_controller.is_some() => {
            let (source, note) = by_controller
                .clone()
                .unwrap_or((Source::Observed, String::new()));
            stage(
                Stage::TlsHandshake,
                Status::Skipped,
                source,
                json!({"note": note, "created_by": c.created_by}),
            )
        }
        Some(Ok(d)) => stage(Stage::TlsHandshake, Status::Ok, Source::Observed, d.clone()),
        Some(Err(e)) => {
            let mut d = json!({"error": e});
            if !c.kubectl_says.is_empty() {
                d["kubectl_get_says"] = json!(c.kubectl_says);
            }
            stage(Stage::TlsHandshake, Status::Failed, Source::Observed, d)
        }
        None => stage(
            Stage::TlsHandshake,
            Status::Skipped,
            Source::Observed,
            json!({}),
        ),
    });
    let code = c.create.as_ref().map(|(code, _)| *code).unwrap_or(0);
    let created = (200..300).contains(&code) || (by_controller.is_some() && c.final_pod.is_some());
    let loops = c
        .server_trace
        .as_ref()
        .map(|t| &t["controlLoops"])
        .filter(|t| t.is_object());

    // A refusal without a trace: its Status says which stage refused.
    let refusal = match &c.create {
        Some((code, body)) if !created => refusal::refused_at(*code, body),
        _ => None,
    };
    let mut refused_already = false;
    // No HTTP answer at all: the request never reached these stages.
    let unanswered = match (&c.handshake, &c.create) {
        (Some(Err(_)), _) => "the request was never sent: no connection (see the TLS handshake)",
        (_, None) | (_, Some((0, _))) => "the request got no answer",
        _ => "the create failed; see the response",
    };
    for name in [
        Stage::Authentication,
        Stage::Authorization,
        Stage::Admission,
        Stage::Validation,
        Stage::Storage,
    ] {
        let s = match create_trace {
            Some(t) => {
                let found = trace_stages(t, name);
                if found.is_empty() {
                    stage(
                        name,
                        Status::Skipped,
                        Source::Reported,
                        json!({"note": "the request ended before this stage"}),
                    )
                } else if name == Stage::Admission {
                    let status = if found.iter().any(|s| status_of(s) == Status::Failed) {
                        Status::Failed
                    } else {
                        Status::Ok
                    };
                    let plugins: Vec<Value> = found
                        .iter()
                        .flat_map(|s| {
                            s["detail"]["plugins"]
                                .as_array()
                                .cloned()
                                .unwrap_or_default()
                        })
                        .collect();
                    stage(name, status, Source::Reported, json!({"plugins": plugins}))
                } else {
                    stage(
                        name,
                        status_of(found[0]),
                        Source::Reported,
                        found[0]["detail"].clone(),
                    )
                }
            }
            None if by_controller.is_some() => stage(
                name,
                Status::Skipped,
                Source::Inferred,
                json!({"explanation": "the server no longer holds the trace of the controller's create (it keeps the latest 2000 requests)"}),
            ),
            None if created && c.dry_run && name == Stage::Storage => stage(
                name,
                Status::Skipped,
                Source::Inferred,
                json!({"explanation": format!("{DRY_RUN} (dryRun=All): etcd is never written and no resourceVersion is assigned")}),
            ),
            None if created && name == Stage::Admission => {
                let mut st = inferred(name, Status::Ok);
                st.detail["changed_fields"] = json!(c.admission_changes);
                st.detail["changes"] = json!(c.admission_diff);
                st
            }
            // The write's revision is in the answer, even where the write itself is not.
            None if created && name == Stage::Storage => {
                let mut st = inferred(name, Status::Ok);
                st.detail["resourceVersion"] = c
                    .create
                    .as_ref()
                    .and_then(|(_, body)| body.pointer("/metadata/resourceVersion"))
                    .cloned()
                    .unwrap_or(Value::Null);
                st
            }
            None if created => inferred(name, Status::Ok),
            None => match refusal {
                Some((at, why)) if at == name => {
                    refused_already = true;
                    stage(
                        name,
                        Status::Failed,
                        Source::Inferred,
                        json!({"explanation": why}),
                    )
                }
                Some((at, _)) if refused_already => stage(
                    name,
                    Status::Skipped,
                    Source::Inferred,
                    json!({"explanation": refusal::after(at, name)}),
                ),
                Some((at, _)) => stage(
                    name,
                    Status::Ok,
                    Source::Inferred,
                    json!({"explanation": refusal::before(at, name)}),
                ),
                None => stage(
                    name,
                    Status::Skipped,
                    Source::Inferred,
                    json!({"explanation": unanswered}),
                ),
            },
        };
        stages.push(s);
    }

    // response: what the client received.
    stages.push(match &c.create {
        _ if by_controller.is_some() => {
            let (source, note) = by_controller.clone().unwrap_or((Source::Observed, String::new()));
            let pod = c.final_pod.as_ref();
            stage(
                Stage::Response,
                Status::Skipped,
                source,
                json!({"note": note, "created_by": c.created_by, "uid": pod.and_then(|p| p.pointer("/metadata/uid"))}),
            )
        }
        Some((code, body)) => {
            let mut d = json!({"code": code});
            if c.dry_run {
                d["dryRun"] = json!(true);
            }
            if created && c.dry_run {
                d["note"] = json!("the object the server would have stored (dryRun=All)");
                d["uid"] = body
                    .pointer("/metadata/uid")
                    .cloned()
                    .unwrap_or(Value::Null);
                d["changed_fields"] = json!(c.admission_changes);
                // What view 5 then places: the pod as admission left it, not as written.
                d["object"] = body.clone();
            } else if created {
                d["resourceVersion"] = body
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or(Value::Null);
                d["uid"] = body
                    .pointer("/metadata/uid")
                    .cloned()
                    .unwrap_or(Value::Null);
            } else {
                d["status"] = body.clone();
                if !c.kubectl_says.is_empty() {
                    d["kubectl_get_says"] = json!(c.kubectl_says);
                }
            }
            stage(
                Stage::Response,
                if created { Status::Ok } else { Status::Failed },
                Source::Observed,
                d,
            )
        }
        None => stage(
            Stage::Response,
            Status::Failed,
            Source::Observed,
            json!({"error": unanswered}),
        ),
    });

    // watch: the events this client saw for the pod.
    let events: Vec<Value> = c
        .watch_events
        .iter()
        .map(|e| {
            json!({"type": e["type"], "resourceVersion": e.pointer("/object/metadata/resourceVersion"),
                   "phase": e.pointer("/object/status/phase"), "nodeName": e.pointer("/object/spec/nodeName")})
        })
        .collect();
    if created && c.dry_run {
        dry_run_tail(c, &mut stages);
        return finish(c, stages);
    }
    stages.push(if !created {
        stage(Stage::Watch, Status::Skipped, Source::Observed, json!({}))
    } else if events.is_empty() && c.finished {
        // Nothing wrote to the pod after its create (no binding, no status) by the time the
        // journey read the watch.
        stage(
            Stage::Watch,
            Status::Skipped,
            Source::Observed,
            json!({"events": [], "note": "a watch from the create's resourceVersion saw no change to the pod: nothing had updated it yet"}),
        )
    } else {
        stage(
            Stage::Watch,
            if events.is_empty() {
                Status::Skipped
            } else {
                Status::Ok
            },
            Source::Observed,
            json!({"events": events}),
        )
    });

    // filter, score, binding, kubelet.
    let sched = loops.map(|l| &l["scheduling"]).filter(|s| s.is_object());
    let node = c
        .final_pod
        .as_ref()
        .and_then(|p| p.pointer("/spec/nodeName"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match sched {
        Some(s) => {
            let feasible = s["filter"]
                .as_array()
                .map(|f| f.iter().filter(|x| x["passed"] == json!(true)).count())
                .unwrap_or(0);
            let fstatus = if feasible > 0 {
                Status::Ok
            } else {
                Status::Failed
            };
            stages.push(stage(Stage::Filter, fstatus, Source::Reported, json!({"nodes_total": s["nodes_total"], "nodes_feasible": feasible, "filter": s["filter"], "message": s["message"], "engine": s["engine"]})));
            stages.push(stage(
                Stage::Score,
                if feasible > 0 {
                    Status::Ok
                } else {
                    Status::Skipped
                },
                Source::Reported,
                if feasible > 0 {
                    spread_detail(
                        json!({"score": s["score"], "selected": s["selected"], "tie_break": s["tie_break"]}),
                        &s["spread"],
                    )
                } else {
                    json!({"note": "not run: no node passed the filter", "score": [], "selected": null})
                },
            ));
        }
        None if c.simulation.is_some() => {
            match simulated(c, SIMULATED_FOR_REAL, Some(!node.is_empty())) {
                Ok([filter, score]) => stages.extend([filter, score]),
                Err(why) => {
                    let status = if node.is_empty() {
                        Status::Skipped
                    } else {
                        Status::Ok
                    };
                    for name in [Stage::Filter, Stage::Score] {
                        let mut st = inferred(name, status);
                        st.detail["simulation_error"] = json!(why);
                        stages.push(st);
                    }
                }
            }
        }
        None if !node.is_empty() => {
            // The server scheduled it but no longer holds the per-node verdicts: say so.
            let dropped = loops.and_then(|l| l["scheduling_dropped"].as_str());
            for name in [Stage::Filter, Stage::Score] {
                let mut st = inferred(name, Status::Ok);
                if let Some(why) = dropped {
                    st.detail["explanation"] = json!(why);
                }
                stages.push(st);
            }
        }
        None => {
            stages.push(stage(
                Stage::Filter,
                Status::Skipped,
                Source::Inferred,
                json!({"explanation": if created { "the pod was not scheduled in time" } else { "the pod was never created" }}),
            ));
            stages.push(stage(
                Stage::Score,
                Status::Skipped,
                Source::Inferred,
                json!({}),
            ));
        }
    }
    let binding = loops.map(|l| &l["binding"]).filter(|b| b.is_object());
    stages.push(match binding {
        Some(b) if b.get("error").is_some() => {
            stage(Stage::Binding, Status::Failed, Source::Reported, b.clone())
        }
        Some(b) => stage(Stage::Binding, Status::Ok, Source::Reported, b.clone()),
        None if !node.is_empty() => {
            let ev = c
                .events
                .iter()
                .find(|e| e["reason"] == json!("Scheduled"))
                .map(|e| e["message"].clone());
            stage(
                Stage::Binding,
                Status::Ok,
                Source::Observed,
                json!({"node": node, "event": ev}),
            )
        }
        None => stage(
            Stage::Binding,
            Status::Skipped,
            Source::Observed,
            match c.final_pod.as_ref().and_then(unschedulable_condition) {
                Some(cond) => json!({
                    "note": "not bound: the scheduler found no node for it; it stays Pending until the cluster changes",
                    "condition": cond,
                }),
                None => json!({"note": "not bound"}),
            },
        ),
    });
    let kubelet = loops
        .map(|l| l["kubelet"].clone())
        .filter(|k| k.as_array().is_some_and(|a| !a.is_empty()));
    let phase = c
        .final_pod
        .as_ref()
        .and_then(|p| p.pointer("/status/phase"))
        .cloned()
        .unwrap_or(Value::Null);
    stages.push(match kubelet {
        Some(steps) => {
            // A pod the kubelet could not start (a volume it cannot mount, an environment it
            // cannot make, an image it may not pull), or whose containers keep failing, failed
            // this stage: its last step says why. So did one whose containers ended in failure.
            let stuck = steps
                .as_array()
                .and_then(|s| s.last())
                .and_then(|last| last["step"].as_str())
                .is_some_and(kubelet_containers::stuck_step);
            let status = match phase.as_str() {
                Some("Failed") => Status::Failed,
                _ if stuck => Status::Failed,
                Some("Running" | "Succeeded") => Status::Ok,
                _ => Status::Skipped,
            };
            stage(
                Stage::Kubelet,
                status,
                Source::Reported,
                json!({"steps": steps, "phase": phase, "simulated": true}),
            )
        }
        None if phase == json!("Running") => {
            let reasons: Vec<Value> = c
                .events
                .iter()
                .filter(|e| e.pointer("/source/component") == Some(&json!("kubelet")))
                .map(|e| json!({"reason": e["reason"], "message": e["message"]}))
                .collect();
            stage(
                Stage::Kubelet,
                Status::Ok,
                Source::Observed,
                json!({"phase": phase, "events": reasons}),
            )
        }
        // Bound nowhere: no kubelet has it to run.
        None if c.finished && node.is_empty() && phase == json!("Pending") => stage(
            Stage::Kubelet,
            Status::Skipped,
            Source::Observed,
            json!({"phase": phase, "note": "no node, so no kubelet runs it: the pod stays Pending"}),
        ),
        None => stage(
            Stage::Kubelet,
            Status::Skipped,
            Source::Observed,
            json!({"phase": phase}),
        ),
    });
    finish(c, stages)
}

/// The score stage with PodTopologySpread's reasoning, when the server reported one.
fn spread_detail(mut score: Value, spread: &Value) -> Value {
    if spread.is_object() {
        score["spread"] = spread.clone();
    }
    score
}

fn finish(c: &Collected, stages: Vec<StageReport>) -> Journey {
    debug_assert!(stages.iter().map(|s| s.stage).eq(STAGES.iter().copied()));
    Journey {
        pod: c.pod.clone(),
        server: c.server.clone(),
        stages,
        dry_run: c.dry_run.then_some(true),
        cleanup: c.cleanup.clone(),
    }
}

const SIMULATED_DRY_RUN: &str = "simulated here on the listed nodes and pods with the default profile: a dry run never reaches kube-scheduler";
const SIMULATED_FOR_REAL: &str = "simulated by kexplore on the nodes and pods listed just before the create, with the default profile: this server does not report kube-scheduler's per-node results";

/// Filter and score from the simulation kexplore ran (inferred: the server did not say), or
/// why there is none. `bound` is None for a dry run, where the simulation's verdict is the
/// stage's status; after a real create it is whether the real scheduler bound the pod, which
/// decides the status whatever the simulation thought.
fn simulated(c: &Collected, how: &str, bound: Option<bool>) -> Result<[StageReport; 2], String> {
    let sim = c.simulation.as_ref();
    let Some(t) = sim.map(|s| &s["trace"]).filter(|t| t.is_object()) else {
        return Err(sim
            .and_then(|s| s["error"].as_str())
            .unwrap_or("no simulation ran")
            .to_string());
    };
    let feasible = t["nodes_feasible"].as_u64().unwrap_or(0);
    let mut filter = json!({
        "explanation": how,
        "nodes_total": t["nodes_total"], "nodes_feasible": feasible,
        "filter": t["filter"], "message": t["message"],
    });
    for k in ["server_version", "kube_version", "release", "not_visible"] {
        filter[k] = sim.map(|s| s[k].clone()).unwrap_or(Value::Null);
    }
    let mut score = json!({"explanation": how, "score": t["score"], "selected": t["selected"],
                           "tie_break": t["tie_break"]});
    if let Some(cmp) = &c.comparison {
        score["comparison"] = cmp.clone();
    }
    let (fstatus, sstatus) = match bound {
        Some(true) => (Status::Ok, Status::Ok),
        // Not bound in time: an unschedulable verdict is the likely reason, said as a failure.
        Some(false) if feasible == 0 => (Status::Failed, Status::Skipped),
        Some(false) => (Status::Skipped, Status::Skipped),
        None if feasible > 0 => (Status::Ok, Status::Ok),
        None => (Status::Failed, Status::Skipped),
    };
    Ok([
        stage(Stage::Filter, fstatus, Source::Inferred, filter),
        stage(Stage::Score, sstatus, Source::Inferred, score),
    ])
}

/// watch … kubelet after a dry run: nothing was stored, so nothing happened to watch; filter
/// and score come from the simulation on the live cluster.
fn dry_run_tail(c: &Collected, stages: &mut Vec<StageReport>) {
    stages.push(stage(
        Stage::Watch,
        Status::Skipped,
        Source::Inferred,
        json!({"explanation": format!("{DRY_RUN}, so no watch event is sent")}),
    ));
    let selected = c
        .simulation
        .as_ref()
        .and_then(|s| s.pointer("/trace/selected"))
        .cloned()
        .unwrap_or(Value::Null);
    match simulated(c, SIMULATED_DRY_RUN, None) {
        Ok([filter, score]) => stages.extend([filter, score]),
        Err(why) => {
            for name in [Stage::Filter, Stage::Score] {
                stages.push(stage(
                    name,
                    Status::Skipped,
                    Source::Inferred,
                    json!({"explanation": format!("{DRY_RUN}; the simulation could not run: {why}")}),
                ));
            }
        }
    }
    stages.push(stage(
        Stage::Binding,
        Status::Skipped,
        Source::Inferred,
        json!({"explanation": format!("{DRY_RUN}, so nothing is bound"), "simulated_node": selected}),
    ));
    stages.push(stage(
        Stage::Kubelet,
        Status::Skipped,
        Source::Inferred,
        json!({"explanation": format!("{DRY_RUN}, so no kubelet starts it")}),
    ));
}

/// The pod's PodScheduled condition when the scheduler's verdict is Unschedulable.
pub(crate) fn unschedulable_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|k| {
            k["type"] == "PodScheduled" && k["status"] == "False" && k["reason"] == "Unschedulable"
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dry_run(simulation: Option<Value>) -> Journey {
        build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((201, json!({"metadata": {"uid": "u"}}))),
            dry_run: true,
            simulation,
            admission_changes: vec!["/spec/priority".into()],
            ..Default::default()
        })
    }

    /// A pod nothing had written to when the run ended: the watch says so, and the kubelet
    /// that no node has says why it did not run. While the run goes on, neither is said yet.
    #[test]
    fn a_created_pod_nothing_touched_yet_says_why_watch_and_kubelet_are_empty() {
        let running = build(&Collected {
            create: Some((
                201,
                json!({"metadata": {"uid": "u", "resourceVersion": "7"}}),
            )),
            final_pod: Some(json!({"spec": {}, "status": {"phase": "Pending"}})),
            ..Default::default()
        });
        let later = |s: &&StageReport| matches!(s.stage, Stage::Watch | Stage::Kubelet);
        for st in running.stages.iter().filter(later) {
            assert!(
                st.detail.get("note").is_none(),
                "{}: {}",
                st.stage,
                st.detail
            );
        }
        let j = build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((
                201,
                json!({"metadata": {"uid": "u", "resourceVersion": "7"}}),
            )),
            final_pod: Some(json!({"spec": {}, "status": {"phase": "Pending"}})),
            finished: true,
            ..Default::default()
        });
        let by = |n: Stage| j.stages.iter().find(|s| s.stage == n).unwrap();
        assert_eq!(by(Stage::Watch).status, Status::Skipped);
        assert!(
            by(Stage::Watch).detail["note"]
                .as_str()
                .is_some_and(|n| n.contains("saw no change to the pod")),
            "{}",
            by(Stage::Watch).detail
        );
        assert_eq!(
            by(Stage::Kubelet).detail["note"],
            "no node, so no kubelet runs it: the pod stays Pending"
        );
    }

    #[test]
    fn a_dry_run_skips_what_needs_a_write_and_simulates_the_scheduler() {
        let j = dry_run(Some(json!({"kube_version": "v1.33", "not_visible": [],
            "trace": {"nodes_total": 3, "nodes_feasible": 2, "filter": [], "score": [],
                      "selected": "node-3", "message": null}})));
        let by = |n: Stage| j.stages.iter().find(|s| s.stage == n).unwrap();
        assert_eq!(j.dry_run, Some(true));
        for n in [Stage::Storage, Stage::Watch, Stage::Binding, Stage::Kubelet] {
            assert_eq!(by(n).status, Status::Skipped, "{n}");
            assert!(
                by(n).detail["explanation"]
                    .as_str()
                    .unwrap()
                    .contains(DRY_RUN),
                "{n}"
            );
        }
        assert_eq!(
            (by(Stage::Filter).status, by(Stage::Filter).source),
            (Status::Ok, Source::Inferred)
        );
        assert_eq!(by(Stage::Score).detail["selected"], "node-3");
        assert_eq!(by(Stage::Binding).detail["simulated_node"], "node-3");
        assert_eq!(
            by(Stage::Response).detail["changed_fields"][0],
            "/spec/priority"
        );
        // Nothing before storage may say the pod was stored.
        for s in &j.stages[..5] {
            let words = s.detail.to_string();
            assert!(!words.contains("was stored"), "{}: {words}", s.stage);
        }
        assert!(j.succeeded());
    }

    #[test]
    fn a_dry_run_whose_simulation_failed_says_why() {
        let j = dry_run(Some(json!({"error": "cannot list the cluster: forbidden"})));
        let filter = j.stages.iter().find(|s| s.stage == Stage::Filter).unwrap();
        assert_eq!(filter.status, Status::Skipped);
        assert!(
            filter.detail["explanation"]
                .as_str()
                .unwrap()
                .contains("forbidden")
        );
        let j = dry_run(Some(
            json!({"trace": {"nodes_total": 2, "nodes_feasible": 0,
            "message": "0/2 nodes are available"}}),
        ));
        let filter = j.stages.iter().find(|s| s.stage == Stage::Filter).unwrap();
        assert_eq!(
            filter.status,
            Status::Failed,
            "an unschedulable pod fails the run"
        );
    }

    #[test]
    fn a_real_create_without_a_server_trace_takes_filter_and_score_from_the_simulation() {
        let run = |node: Option<&str>, feasible: u64| {
            build(&Collected {
                pod: "default/app".into(),
                server: "https://x".into(),
                handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
                create: Some((
                    201,
                    json!({"metadata": {"uid": "u", "resourceVersion": "9"}}),
                )),
                final_pod: Some(json!({"spec": {"nodeName": node}})),
                simulation: Some(json!({"kube_version": "v1.33", "not_visible": [],
                    "trace": {"nodes_total": 2, "nodes_feasible": feasible, "filter": [],
                              "score": [], "selected": "node-2", "message": null}})),
                comparison: node
                    .map(|n| json!({"actual": n, "simulated": "node-2", "agrees": n == "node-2"})),
                ..Default::default()
            })
        };
        let j = run(Some("node-1"), 2);
        let by = |j: &Journey, n: Stage| j.stages.iter().find(|s| s.stage == n).cloned().unwrap();
        for n in [Stage::Filter, Stage::Score] {
            assert_eq!(
                (by(&j, n).status, by(&j, n).source),
                (Status::Ok, Source::Inferred),
                "{n}"
            );
        }
        assert_eq!(
            by(&j, Stage::Score).detail["comparison"]["actual"],
            "node-1"
        );
        assert_eq!(by(&j, Stage::Binding).source, Source::Observed);
        assert_eq!(by(&j, Stage::Storage).detail["resourceVersion"], "9");
        // The real scheduler bound it although the simulation found no node: reality decides.
        assert!(run(Some("node-1"), 0).succeeded());
        // Never bound, and the simulation says why: unschedulable.
        let j = run(None, 0);
        assert_eq!(by(&j, Stage::Filter).status, Status::Failed);
        assert!(by(&j, Stage::Score).detail.get("comparison").is_none());
    }

    /// A remote server reports no admission: the stage names every plugin kube-apiserver
    /// enables by default that can change a pod (LimitRanger and RuntimeClass were missing),
    /// and the changes seen, without claiming which plugin made them.
    #[test]
    fn a_remote_create_names_the_default_pod_admission_and_its_observed_changes() {
        let j = build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((
                201,
                json!({"metadata": {"uid": "u", "resourceVersion": "9"}}),
            )),
            admission_changes: vec!["/spec/overhead".into()],
            ..Default::default()
        });
        let admission = j
            .stages
            .iter()
            .find(|s| s.stage == Stage::Admission)
            .unwrap();
        assert_eq!(
            (admission.status, admission.source),
            (Status::Ok, Source::Inferred)
        );
        let why = admission.detail["explanation"].as_str().unwrap();
        for plugin in [
            "LimitRanger",
            "ServiceAccount",
            "Priority",
            "DefaultTolerationSeconds",
            "RuntimeClass",
            "webhooks",
        ] {
            assert!(why.contains(plugin), "{plugin}: {why}");
        }
        assert!(why.contains("does not say which changed what"), "{why}");
        assert_eq!(admission.detail["changed_fields"][0], "/spec/overhead");
    }

    /// The kubelet stage: ok once Running, failed while the pod is held (a volume it cannot
    /// mount, an environment it cannot make), or whose containers failed or keep failing;
    /// skipped while it is simply not there yet.
    #[test]
    fn a_pod_the_kubelet_cannot_start_fails_the_kubelet_stage() {
        let with_steps = |steps: &[&str], phase: &str| {
            let steps: Vec<Value> = steps
                .iter()
                .map(|s| json!({"step": s, "detail": {}}))
                .collect();
            let j = build(&Collected {
                pod: "default/app".into(),
                server: "https://x".into(),
                create: Some((201, json!({"metadata": {"uid": "u"}}))),
                server_trace: Some(json!({"controlLoops": {"kubelet": steps}})),
                final_pod: Some(
                    json!({"spec": {"nodeName": "node-1"}, "status": {"phase": phase}}),
                ),
                ..Default::default()
            });
            j.stages
                .iter()
                .find(|s| s.stage == Stage::Kubelet)
                .map(|s| s.status)
        };
        assert_eq!(
            with_steps(&["ContainerCreating", "Started"], "Running"),
            Some(Status::Ok)
        );
        assert_eq!(
            with_steps(&["ContainerCreating", "FailedMount"], "Pending"),
            Some(Status::Failed)
        );
        assert_eq!(
            with_steps(&["ContainerCreating", "Pulling", "Waiting"], "Pending"),
            Some(Status::Failed)
        );
        assert_eq!(
            with_steps(&["ContainerCreating", "Pulling"], "Pending"),
            Some(Status::Skipped)
        );
        // Containers that ran to completion, that failed, that keep failing.
        assert_eq!(
            with_steps(&["ContainerCreating", "Running", "Exited"], "Succeeded"),
            Some(Status::Ok)
        );
        assert_eq!(
            with_steps(&["ContainerCreating", "Running", "Exited"], "Failed"),
            Some(Status::Failed)
        );
        assert_eq!(
            with_steps(&["Running", "Exited", "CrashLoopBackOff"], "Running"),
            Some(Status::Failed)
        );
        assert_eq!(
            with_steps(&["Running", "Exited", "Restarted"], "Running"),
            Some(Status::Ok)
        );
    }

    #[test]
    fn failed_create_keeps_every_stage_in_order() {
        let c = Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((403, json!({"kind": "Status"}))),
            ..Default::default()
        };
        let j = build(&c);
        let names: Vec<Stage> = j.stages.iter().map(|s| s.stage).collect();
        assert_eq!(names, STAGES);
        assert!(!j.succeeded());
    }

    fn refused(code: u16, reason: &str, message: &str) -> Vec<(Stage, Status)> {
        let j = build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((
                code,
                json!({"kind": "Status", "reason": reason, "message": message, "code": code}),
            )),
            ..Default::default()
        });
        j.stages[1..6].iter().map(|s| (s.stage, s.status)).collect()
    }

    #[test]
    fn a_remote_refusal_fails_the_stage_its_answer_comes_from() {
        use Stage::*;
        use Status::*;
        let rbac = r#"pods "app" is forbidden: User "jane" cannot create resource "pods" in API group "" in the namespace "default""#;
        assert_eq!(
            refused(403, "Forbidden", rbac),
            [
                (Authentication, Ok),
                (Authorization, Failed),
                (Admission, Skipped),
                (Validation, Skipped),
                (Storage, Skipped)
            ]
        );
        assert_eq!(
            refused(409, "AlreadyExists", r#"pods "app" already exists"#),
            [
                (Authentication, Ok),
                (Authorization, Ok),
                (Admission, Ok),
                (Validation, Ok),
                (Storage, Failed)
            ]
        );
        // A 500 says nothing of where: no stage is blamed, none is said to have passed.
        assert!(
            refused(500, "InternalError", "boom")
                .iter()
                .all(|(_, s)| *s == Skipped)
        );
    }
}
