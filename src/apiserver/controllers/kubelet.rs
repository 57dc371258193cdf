//! Simulated kubelets — one per node, no containers run: bound pods go Pending →
//! ContainerCreating → Running with the conditions, pod IPs (from the node's podCIDR) and
//! events (Pulling, Pulled, Created, Started) a kubelet reports, pulling images as their
//! imagePullPolicy says (`kubelet_images.rs`); terminating pods are stopped
//! and removed; nodes keep a Lease heartbeat (`kubelet_node.rs`, with the annotation that
//! stops a kubelet: its pods are then neither started nor stopped). A start that an earlier
//! runner left unfinished (serve restarted, a replica took over) is carried on from the pod's
//! stored status, as a restarted kubelet finds its containers. Everything they write says it is
//! simulated.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::kubelet_completion as completion;
use crate::apiserver::controllers::kubelet_containers::{
    Backoff, CONFIG_ERROR, FAILED_MOUNT, NEVER_PULL, POLL, RESUMED, STEP, State, WAITING, already,
    config_failed, container_statuses, image_refusal, init_container_statuses, pull_image,
    ran_since, refusal_events, start_container,
};
use crate::apiserver::controllers::kubelet_ephemeral as ephemeral;
use crate::apiserver::controllers::kubelet_image_name::INVALID_IMAGE_NAME;
use crate::apiserver::controllers::kubelet_images::NodeImages;
use crate::apiserver::controllers::kubelet_init;
use crate::apiserver::controllers::kubelet_ipam::PodIps;
use crate::apiserver::controllers::kubelet_node;
use crate::apiserver::controllers::kubelet_probes as probes;
use crate::apiserver::controllers::kubelet_refs as refs;
use crate::apiserver::controllers::kubelet_report::{
    self as report, cond, event, not_ready, s, set_status, step, still_starting,
};
use crate::apiserver::controllers::kubelet_restarts;
use crate::apiserver::controllers::kubelet_sandbox;
use crate::apiserver::controllers::kubelet_stop;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::tracked_keys::TrackedKeys;
use crate::apiserver::util;
use crate::apiserver::util::At;

/// A bound pod the kubelet has to act on: one being deleted, one not started yet, or a running
/// one with an ephemeral container to start.
fn needs_kubelet(p: &Value) -> bool {
    if s(p, "/spec/nodeName").is_empty() {
        return false;
    }
    // A pod a finalizer keeps after its containers stopped needs nothing more from it.
    let terminating = p.at("/metadata/deletionTimestamp").is_some() && !kubelet_stop::stopped(p);
    let fresh = p.at("/status/containerStatuses").is_none() && s(p, "/status/phase") == "Pending";
    terminating || fresh || ephemeral::waiting(p)
}

/// A bound pod a kubelet began and did not finish: started but not running yet, or running to
/// completion. Only a runner that was interrupted leaves one (serve restarted or crashed,
/// another replica took the kubelets over); the next runner goes on with each, once, from its
/// stored status.
fn interrupted(p: &Value) -> bool {
    if s(p, "/spec/nodeName").is_empty() || p.at("/metadata/deletionTimestamp").is_some() {
        return false;
    }
    match s(p, "/status/phase") {
        "Pending" => p.at("/status/containerStatuses").is_some(),
        "Running" => completion::exit_code(p).is_some(),
        _ => false,
    }
}

/// The pods being started or stopped, and what starting one needs.
struct Starts {
    api: Arc<Api>,
    /// `<namespace>/<name>` of each pod being started or stopped: not read again meanwhile.
    busy: HashSet<String>,
    ips: PodIps,
    node_images: NodeImages,
    done: tokio::sync::mpsc::UnboundedSender<String>,
}

impl Starts {
    /// Starts (or goes on starting) or stops the pod at `key`, unless that is under way or its
    /// node's kubelet is stopped.
    fn begin(&mut self, key: &str, stopped: &HashSet<String>) {
        let Some(short) = key.strip_prefix("/registry/pods/") else {
            return;
        };
        if self.busy.contains(short) {
            return;
        }
        let Some(v) = self.api.store.get_view(key) else {
            return;
        };
        let node = s(&v, "/spec/nodeName").to_string();
        if stopped.contains(&node) {
            return;
        }
        // Whole: the kubelet starts what the spec says.
        let Some(p) = self.api.store.get(key) else {
            return;
        };
        let terminating = p.at("/metadata/deletionTimestamp").is_some();
        let held = s(&p, "/status/podIP");
        let ip = if p.at("/spec/hostNetwork").and_then(Value::as_bool) == Some(true) {
            // A host-network pod's address is its node's, as the kubelet reports it: none is
            // taken from the podCIDR, or given back.
            host_ip(&self.api, &node)
        } else if terminating {
            self.ips.release(&node, held);
            String::new()
        } else if !held.is_empty() {
            // A start that goes on keeps its sandbox, and so its address.
            held.to_string()
        } else {
            self.ips.allocate(&self.api, &node).unwrap_or_default()
        };
        let short = short.to_string();
        self.busy.insert(short.clone());
        let api = self.api.clone();
        let done = self.done.clone();
        let node_images = self.node_images.clone();
        if let Some(n) = self.api.store.get(&format!("/registry/minions/{node}")) {
            node_images.reported(&node, &n);
        }
        let pod = (*p).clone();
        tokio::spawn(async move {
            if terminating {
                kubelet_stop::stop_pod(&api, &pod).await;
            } else if ephemeral::waiting(&pod) {
                ephemeral::start(&api, &pod, &node_images).await;
            } else {
                start_pod(&api, &pod, &ip, &node_images).await;
            }
            let _ = done.send(short);
        });
    }
}

/// `renew`: how often the kubelets renew their node Leases (`kubelet_node::renew_interval`).
pub async fn run(api: Arc<Api>, renew: Duration, mut stop: watch::Receiver<bool>) {
    let mut changes = api.store.changes();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut starts = Starts {
        api: api.clone(),
        busy: HashSet::new(),
        ips: PodIps::default(),
        node_images: NodeImages::default(),
        done: done_tx,
    };
    let mut heartbeat = tokio::time::interval(renew);
    let report_every = (kubelet_node::STATUS_REPORT.as_millis() / renew.as_millis().max(1)).max(1);
    let mut beats: u64 = 0;
    let mut todo = TrackedKeys::new("/registry/pods/", needs_kubelet);
    let stopped = kubelet_node::stopped(&api);
    for (key, item) in api.store.list_items("/registry/pods/").0 {
        if interrupted(&item.view()) {
            starts.begin(&key, &stopped);
        }
    }
    loop {
        changes.borrow_and_update();
        todo.catch_up(&*api.store);
        let stopped = kubelet_node::stopped(&api);
        for key in &todo.keys {
            starts.begin(key, &stopped);
        }
        tokio::select! {
            _ = stop.changed() => return,
            Some(k) = done_rx.recv() => { starts.busy.remove(&k); }
            _ = heartbeat.tick() => {
                beats += 1;
                // The Lease every beat; the node's own status when it changed, else every
                // 5 minutes, as nodeStatusReportFrequency does.
                kubelet_node::heartbeats(&api, u128::from(beats).is_multiple_of(report_every));
            }
            r = changes.changed() => if r.is_err() { return },
        }
    }
}

fn host_ip(api: &Api, node: &str) -> String {
    api.store
        .get(&format!("/registry/minions/{node}"))
        .and_then(|v| {
            v.at("/status/addresses")
                .and_then(Value::as_array)
                .and_then(|a| {
                    a.iter()
                        .find(|x| s(x, "/type") == "InternalIP")
                        .map(|x| s(x, "/address").to_string())
                })
        })
        .unwrap_or_default()
}

async fn start_pod(api: &Api, pod: &Value, ip: &str, node_images: &NodeImages) {
    let node = s(pod, "/spec/nodeName").to_string();
    let mut containers = report::containers(pod, "containers");
    let inits = report::containers(pod, "initContainers");
    // A start a restart interrupted goes on from what the status says was done.
    let resumed = pod.at("/status/startTime").is_some();
    let p = if resumed {
        step(
            api,
            pod,
            RESUMED,
            json!({"node": node, "note": "this pod's start was interrupted (serve restarted, or another replica took the kubelets over): it goes on from its stored status"}),
        );
        Arc::new(pod.clone())
    } else {
        match creating(api, pod, &node, (&containers, &inits)) {
            Some(p) => p,
            None => return,
        }
    };
    // The volumes first: until each can be set up, no sandbox and no container.
    if !mounted(api, &p, &node).await || !kubelet_sandbox::created(api, &p, &node).await {
        return;
    }
    let before_init = already(&p, "initContainerStatuses");
    if !inits.is_empty()
        && !kubelet_init::run(api, (&p, ip, &node), node_images, &before_init).await
    {
        return;
    }
    let before = already(&p, "containerStatuses");
    let mut states: Vec<(String, State)> = Vec::new();
    for c in &containers {
        let cname = s(c, "/name");
        if let Some((_, running @ State::Running(_))) = before.iter().find(|(n, _)| n == cname) {
            states.push((cname.to_string(), running.clone()));
            continue;
        }
        tokio::time::sleep(STEP / 2).await;
        let state = start_one(api, &p, &node, c, node_images).await;
        states.push((cname.to_string(), state));
    }
    tokio::time::sleep(STEP / 2).await;
    let mut retry = Backoff::default();
    let mut shown = None;
    loop {
        if states.iter().all(|(_, st)| matches!(st, State::Running(_))) {
            break;
        }
        if shown.as_ref() != Some(&states) {
            some_waiting(api, pod, ip, &containers, &states);
            shown = Some(states.clone());
        }
        tokio::time::sleep(POLL).await;
        let Some(now_pod) = still_starting(api, pod) else {
            return;
        };
        // Each sync starts from the spec as it is now: `kubectl set image` changes a pod's.
        containers = report::containers(&now_pod, "containers");
        let due = retry.due();
        for (cname, st) in &mut states {
            let State::Waiting(reason, _) = st else {
                continue;
            };
            let Some(c) = containers.iter().find(|c| s(c, "/name") == cname.as_str()) else {
                continue;
            };
            let field = format!("spec.containers{{{cname}}}");
            if *reason == CONFIG_ERROR {
                // A missing ConfigMap or Secret may appear.
                match refs::config_error(api, &now_pod, c) {
                    None => *st = start_container(api, &now_pod, &node, (cname, &field)),
                    Some(why) => {
                        if due {
                            config_failed(api, &now_pod, &node, (cname, &field), &why, false);
                        }
                        *st = State::Waiting(CONFIG_ERROR, why);
                    }
                }
                continue;
            }
            if ![NEVER_PULL, INVALID_IMAGE_NAME].contains(reason) {
                continue;
            }
            // An image the kubelet could not have: it asks again on every sync.
            match image_refusal(&node, c, node_images) {
                None => *st = start_one(api, &now_pod, &node, c, node_images).await,
                Some(refusal) => {
                    if due {
                        refusal_events(api, &now_pod, (&node, &field), &refusal);
                    }
                    *st = State::Waiting(refusal.reason, refusal.message);
                }
            }
        }
    }
    let ip = ip.to_string();
    let started_at = states
        .iter()
        .filter_map(|(_, st)| match st {
            State::Running(at) => Some(at.clone()),
            State::Waiting(..) | State::Completed(..) => None,
        })
        .max()
        .unwrap_or_else(util::now);
    let gates = probes::gates(&containers, &states);
    // A resumed pod whose containers all ran already keeps its status as it stands, its
    // probes still to pass; one that was crash-looping has had them started again.
    let was_running = s(&p, "/status/phase") == "Running";
    let all_ran = states.iter().all(|(name, _)| {
        before
            .iter()
            .any(|(n, st)| n == name && matches!(st, State::Running(_)))
    });
    let running = if was_running && all_ran {
        Some(p.clone())
    } else {
        now_running(
            api,
            pod,
            &ip,
            (&containers, &states),
            (&gates, !was_running),
        )
    };
    let Some(mut p) = running else {
        return;
    };
    while let Some(at) = probes::next_change(&gates, time::OffsetDateTime::now_utc()) {
        let wait = at - time::OffsetDateTime::now_utc();
        tokio::time::sleep(Duration::try_from(wait).unwrap_or_default()).await;
        if still_starting(api, pod).is_none() {
            return;
        }
        match now_running(api, pod, &ip, (&containers, &states), (&gates, false)) {
            Some(now) => p = now,
            None => return,
        }
    }
    if completion::exit_code(&p).is_some() {
        let already = if resumed {
            ran_since(&started_at)
        } else {
            Duration::ZERO
        };
        kubelet_restarts::run_until_done(api, &p, (&started_at, already), node_images).await;
    }
}

/// One container's start: its image, its environment, then the container itself, or the
/// reason it waits.
async fn start_one(api: &Api, p: &Value, node: &str, c: &Value, node_images: &NodeImages) -> State {
    let cname = s(c, "/name");
    let field = format!("spec.containers{{{cname}}}");
    if let Err((reason, message)) = pull_image(api, p, node, c, &field, node_images).await {
        return State::Waiting(reason, message);
    }
    // The image is there; the container's environment is made next.
    if let Some(why) = refs::config_error(api, p, c) {
        config_failed(api, p, node, (cname, &field), &why, true);
        return State::Waiting(CONFIG_ERROR, why);
    }
    start_container(api, p, node, (cname, &field))
}

/// Every container runs: the pod is Running (`first`: it was not), and Ready once every probe
/// that gates it has passed (`kubelet_probes`).
fn now_running(
    api: &Api,
    pod: &Value,
    ip: &str,
    (containers, states): (&[Value], &[(String, State)]),
    (gates, first): (&[(probes::Gate, String)], bool),
) -> Option<Arc<Value>> {
    let now = util::now();
    let (unstarted, unready) = probes::pending(gates, time::OffsetDateTime::now_utc());
    let ready = |t: &str| {
        if unready.is_empty() {
            cond(t, "True", &now)
        } else {
            not_ready(t, &unready.join(" "), &now)
        }
    };
    let mut statuses = container_statuses(containers, states);
    probes::mark(&mut statuses, (&unstarted, &unready));
    let p = set_status(api, pod, |st| {
        st["phase"] = json!("Running");
        st["podIP"] = json!(ip);
        st["podIPs"] = json!([{"ip": ip}]);
        // A condition keeps its transition time while its status stays.
        let kept = |t: &str, mut next: Value| {
            let before = st["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == t));
            if let Some(b) = before.filter(|b| b["status"] == next["status"]) {
                next["lastTransitionTime"] = b["lastTransitionTime"].clone();
            }
            next
        };
        st["conditions"] = json!([
            kept(
                "PodReadyToStartContainers",
                cond("PodReadyToStartContainers", "True", &now)
            ),
            kept("Initialized", cond("Initialized", "True", &now)),
            kept("Ready", ready("Ready")),
            kept("ContainersReady", ready("ContainersReady")),
            kept("PodScheduled", cond("PodScheduled", "True", &now))
        ]);
        // What a restart left (kubelet_restarts) stays: the count and the instance before.
        for next in statuses.iter_mut() {
            let before = st["containerStatuses"]
                .as_array()
                .and_then(|l| l.iter().find(|c| c["name"] == next["name"]));
            if let Some(before) = before {
                next["restartCount"] = before["restartCount"].clone();
                if let Some(last) = before.get("lastState") {
                    next["lastState"] = last.clone();
                }
            }
        }
        st["containerStatuses"] = json!(statuses);
    })?;
    let detail = if first {
        json!({"podIP": ip, "resourceVersion": p.at("/metadata/resourceVersion")})
    } else {
        json!({"resourceVersion": p.at("/metadata/resourceVersion"),
               "notStarted": unstarted, "notReady": unready,
               "note": "simulated: the probes pass when upstream's prober may first run them (initialDelaySeconds); none is sent"})
    };
    let name = match (first, unready.is_empty()) {
        (true, _) => "Running",
        (false, true) => "Ready",
        (false, false) => "Probe",
    };
    step(api, &p, name, detail);
    Some(p)
}

/// The kubelet's first status for a pod it starts: its node's address, the start time, every
/// container waiting (ContainerCreating, or PodInitializing behind init containers:
/// `kubectl get` says Init:0/N).
fn creating(
    api: &Api,
    pod: &Value,
    node: &str,
    (containers, inits): (&[Value], &[Value]),
) -> Option<Arc<Value>> {
    let now = util::now();
    let host = host_ip(api, node);
    let waiting = if inits.is_empty() {
        let creating: Vec<(String, State)> = containers
            .iter()
            .map(|c| {
                let waiting = State::Waiting("ContainerCreating", String::new());
                (s(c, "/name").to_string(), waiting)
            })
            .collect();
        container_statuses(containers, &creating)
    } else {
        container_statuses(containers, &kubelet_init::initializing(containers))
    };
    let initialized = if inits.is_empty() {
        cond("Initialized", "True", &now)
    } else {
        // None has started yet, sidecars included.
        let names: Vec<&str> = inits.iter().map(|c| s(c, "/name")).collect();
        kubelet_init::not_initialized(&names, &now)
    };
    let unready = containers
        .iter()
        .map(|c| s(c, "/name"))
        .collect::<Vec<_>>()
        .join(" ");
    let p = set_status(api, pod, |st| {
        // Upstream's kubelet leaves them unset when its node has no address, never "".
        if !host.is_empty() {
            st["hostIP"] = json!(host);
            st["hostIPs"] = json!([{"ip": host}]);
        }
        st["startTime"] = json!(now);
        st["conditions"] = json!([
            cond("PodReadyToStartContainers", "False", &now),
            initialized,
            not_ready("Ready", &unready, &now),
            not_ready("ContainersReady", &unready, &now),
            cond("PodScheduled", "True", &now)
        ]);
        st["containerStatuses"] = json!(waiting);
        if !inits.is_empty() {
            st["initContainerStatuses"] = json!(init_container_statuses(
                inits,
                &kubelet_init::initializing(inits)
            ));
        }
    })?;
    step(
        api,
        &p,
        "ContainerCreating",
        json!({"node": node, "hostIP": host}),
    );
    Some(p)
}

/// Waits until every volume of the pod can be set up, reporting FailedMount meanwhile; false
/// when the pod went away first.
async fn mounted(api: &Api, pod: &Value, node: &str) -> bool {
    let mut retry = Backoff::default();
    let mut first = true;
    loop {
        let Some(why) = refs::failed_mount(api, pod) else {
            return true;
        };
        if first || retry.due() {
            event(api, pod, node, "", ("Warning", FAILED_MOUNT), &why);
        }
        if first {
            step(api, pod, FAILED_MOUNT, json!({"message": why}));
            first = false;
        }
        tokio::time::sleep(POLL).await;
        if still_starting(api, pod).is_none() {
            return false;
        }
    }
}

/// Some containers wait (an image `Never` pulled that is not on the node, an environment
/// that cannot be made): the pod stays Pending with its sandbox (and so its IP), the others
/// running, as upstream's kubelet reports it.
fn some_waiting(
    api: &Api,
    pod: &Value,
    ip: &str,
    containers: &[Value],
    states: &[(String, State)],
) {
    let now = util::now();
    let unready = states
        .iter()
        .filter(|(_, st)| matches!(st, State::Waiting(..)))
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let reasons: Vec<&str> = states
        .iter()
        .filter_map(|(_, st)| match st {
            State::Waiting(reason, _) => Some(*reason),
            State::Running(_) | State::Completed(..) => None,
        })
        .collect();
    if let Some(p) = set_status(api, pod, |st| {
        st["phase"] = json!("Pending");
        st["podIP"] = json!(ip);
        st["podIPs"] = json!([{"ip": ip}]);
        st["conditions"] = json!([
            cond("PodReadyToStartContainers", "True", &now),
            cond("Initialized", "True", &now),
            not_ready("Ready", &unready, &now),
            not_ready("ContainersReady", &unready, &now),
            cond("PodScheduled", "True", &now)
        ]);
        st["containerStatuses"] = json!(container_statuses(containers, states));
    }) {
        step(
            api,
            &p,
            WAITING,
            json!({"podIP": ip, "reason": reasons.join(","), "containers": unready}),
        );
    }
}
