//! The simulated kubelets pull images as their imagePullPolicy says, with upstream's events:
//! a tagged image pulled once on a node is "already present on machine" for the next pod
//! there, `Always` pulls again, and `Never` with the image absent leaves the container waiting
//! with ErrImageNeverPull (the pod Pending, its sandbox IP set), and an image name that is no
//! reference (`Nginx`) with InvalidImageName; a ConfigMap or Secret a pod
//! mounts or reads its environment from holds it until it exists; init containers run to
//! completion, one after another, before the app (one that keeps failing in
//! Init:CrashLoopBackOff until it is fixed); a Job pod's sidecar is stopped once the work is
//! done — checked with kubectl.

use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, wait_for};

/// The pod's events as (type, reason, message), once `last_reason` is among them.
fn events(k: &Kubectl, pod: &str, last_reason: &str) -> Vec<(String, String, String)> {
    wait_for(Duration::from_secs(20), || {
        let out = k.ok(&[
            "get",
            "events",
            "--field-selector",
            &format!("involvedObject.name={pod}"),
            "-o",
            "json",
        ]);
        let v: Value = serde_json::from_str(&out).ok()?;
        let evs: Vec<(String, String, String)> = v["items"]
            .as_array()?
            .iter()
            .map(|e| {
                let f = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                (f("type"), f("reason"), f("message"))
            })
            .collect();
        evs.iter().any(|e| e.1 == last_reason).then_some(evs)
    })
    .unwrap_or_else(|| panic!("{}: no {last_reason} event for {pod}", k.label))
}

fn has(evs: &[(String, String, String)], ty: &str, reason: &str, message: &str) -> bool {
    evs.iter()
        .any(|e| (e.0.as_str(), e.1.as_str(), e.2.as_str()) == (ty, reason, message))
}

/// The kubelet found `image` on the node: "already present on machine", and no Pulling.
fn assert_not_pulled(evs: &[(String, String, String)], image: &str) {
    let present = format!("Container image {image:?} already present on machine");
    assert!(has(evs, "Normal", "Pulled", &present), "{evs:?}");
    assert!(!evs.iter().any(|e| e.1 == "Pulling"), "{evs:?}");
}

/// `kubectl run NAME --image=IMAGE [--image-pull-policy=POLICY]` on NODE.
fn run_on(k: &Kubectl, name: &str, image: &str, policy: Option<&str>, node: &str) {
    let image = format!("--image={image}");
    let on = format!(r#"{{"spec":{{"nodeName":"{node}"}}}}"#);
    let policy = policy.map(|p| format!("--image-pull-policy={p}"));
    let mut args = vec!["run", name, image.as_str(), "--overrides", on.as_str()];
    args.extend(policy.as_deref());
    k.ok(&args);
}

/// A node whose status lists an image (as a scenario's nodes may, for ImageLocality) holds
/// it: its kubelet does not pull it, and `Never` finds it — the kubelet and the scheduler read
/// the same list.
#[test]
fn an_image_the_node_reports_is_already_present() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let images =
            r#"{"status":{"images":[{"names":["example.com/app:1.0"],"sizeBytes":200000000}]}}"#;
        k.ok(&[
            "patch",
            "node",
            "node-3",
            "--subresource=status",
            "--type=merge",
            "-p",
            images,
        ]);
        run_on(
            &k,
            "reported",
            "example.com/app:1.0",
            Some("Never"),
            "node-3",
        );
        assert_not_pulled(&events(&k, "reported", "Started"), "example.com/app:1.0");
    });
}

#[test]
fn pulls_follow_the_image_pull_policy_and_what_the_node_holds() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let run = |name: &str, image: &str, policy: Option<&str>, node: &str| {
            run_on(&k, name, image, policy, node);
        };
        run("first", "nginx:1.27", None, "node-2");
        let first = events(&k, "first", "Started");
        assert!(
            has(&first, "Normal", "Pulling", r#"Pulling image "nginx:1.27""#),
            "{first:?}"
        );

        // Same node, same tagged image (IfNotPresent): not pulled again.
        run("second", "nginx:1.27", None, "node-2");
        assert_not_pulled(&events(&k, "second", "Started"), "nginx:1.27");

        // Always pulls whatever the node holds; another node holds nothing yet.
        run("third", "nginx:1.27", Some("Always"), "node-2");
        assert!(
            events(&k, "third", "Started")
                .iter()
                .any(|e| e.1 == "Pulling")
        );
        run("elsewhere", "nginx:1.27", None, "node-1");
        assert!(
            events(&k, "elsewhere", "Started")
                .iter()
                .any(|e| e.1 == "Pulling")
        );

        // Never, and the node lacks it: the container waits, the pod stays Pending.
        run("never", "app:v1", Some("Never"), "node-2");
        let never = events(&k, "never", "ErrImageNeverPull");
        assert!(
            has(
                &never,
                "Warning",
                "ErrImageNeverPull",
                r#"Container image "app:v1" is not present with pull policy of Never"#
            ),
            "{never:?}"
        );
        let failed = events(&k, "never", "Failed");
        assert!(
            has(&failed, "Warning", "Failed", "Error: ErrImageNeverPull"),
            "{failed:?}"
        );
        // The kubelet records the event before it writes the status (upstream orders them
        // no better), so wait for the container to leave ContainerCreating.
        let pod: Value = wait_for(Duration::from_secs(10), || {
            let p: Value =
                serde_json::from_str(&k.ok(&["get", "pod", "never", "-o", "json"])).ok()?;
            let waiting = &p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"];
            (waiting.is_string() && waiting != "ContainerCreating").then_some(p)
        })
        .unwrap_or_default();
        assert_eq!(pod["status"]["phase"], "Pending", "{pod}");
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ErrImageNeverPull",
            "{pod}"
        );
        assert!(
            pod["status"]["podIP"]
                .as_str()
                .is_some_and(|ip| !ip.is_empty())
        );
        let get = k.ok(&["get", "pod", "never"]);
        assert!(get.contains("ErrImageNeverPull"), "{get}");
        // The same policy with the image on the node starts.
        run("never-present", "nginx:1.27", Some("Never"), "node-2");
        let present = events(&k, "never-present", "Started");
        assert!(!present.iter().any(|e| e.1 == "Pulling"), "{present:?}");

        // A name that is no image reference (the API server stores it): the kubelet's image
        // manager cannot parse it, whatever the policy, and the container waits.
        // (`kubectl run` checks the name itself; a manifest goes to the server as written.)
        let manifest = srv.dir.path().join("upper.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: Pod\nmetadata: {name: upper}\nspec:\n  nodeName: node-1\n  containers: [{name: upper, image: \"Nginx:1.27\"}]\n",
        )
        .expect("write manifest");
        k.ok(&["create", "-f", &manifest.to_string_lossy()]);
        let message = r#"Failed to apply default image tag "Nginx:1.27": couldn't parse image name "Nginx:1.27": invalid reference format: repository name (library/Nginx) must be lowercase"#;
        let upper = events(&k, "upper", "Failed");
        assert!(
            has(&upper, "Warning", "InspectFailed", message)
                && has(&upper, "Warning", "Failed", "Error: InvalidImageName")
                && !upper.iter().any(|e| e.1 == "Pulling" || e.1 == "Started"),
            "{upper:?}"
        );
        let pod: Value = wait_for(Duration::from_secs(10), || {
            let p: Value =
                serde_json::from_str(&k.ok(&["get", "pod", "upper", "-o", "json"])).ok()?;
            let waiting = &p["status"]["containerStatuses"][0]["state"]["waiting"];
            (waiting["reason"] == "InvalidImageName").then_some(p)
        })
        .unwrap_or_default();
        assert_eq!(pod["status"]["phase"], "Pending", "{pod}");
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"], message,
            "{pod}"
        );
        let get = k.ok(&["get", "pod", "upper"]);
        assert!(get.contains("InvalidImageName"), "{get}");
        // The kubelet asks again on each sync: once the name is fixed the container starts.
        k.ok(&["set", "image", "pod/upper", "upper=nginx:1.27"]);
        let fixed = wait_for(Duration::from_secs(15), || {
            let p = self::pod(&k, "upper");
            (p["status"]["phase"] == "Running").then_some(p)
        });
        assert!(
            fixed.is_some(),
            "{}",
            k.ok(&["get", "pod", "upper", "-o", "yaml"])
        );
        // And a pod that brings the image to the node lets the one that would `Never` pull it
        // start.
        run("brings", "app:v1", None, "node-2");
        let started = wait_for(Duration::from_secs(15), || {
            let p = self::pod(&k, "never");
            (p["status"]["phase"] == "Running").then_some(p)
        });
        assert!(
            started.is_some(),
            "{}",
            k.ok(&["get", "pod", "never", "-o", "yaml"])
        );
        // The same for an init container: the pod waits in Init:InvalidImageName until fixed.
        let manifest = srv.dir.path().join("init-upper.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: Pod\nmetadata: {name: init-upper}\nspec:\n  nodeName: node-1\n  initContainers: [{name: setup, image: \"Busybox\"}]\n  containers: [{name: app, image: \"nginx:1.27\"}]\n",
        )
        .expect("write manifest");
        k.ok(&["create", "-f", &manifest.to_string_lossy()]);
        let waiting = wait_for(Duration::from_secs(15), || {
            let get = k.ok(&["get", "pod", "init-upper"]);
            get.contains("Init:InvalidImageName").then_some(get)
        });
        assert!(
            waiting.is_some(),
            "{}",
            k.ok(&["get", "pod", "init-upper", "-o", "yaml"])
        );
        k.ok(&["set", "image", "pod/init-upper", "setup=busybox"]);
        let fixed = wait_for(Duration::from_secs(20), || {
            let p = self::pod(&k, "init-upper");
            (p["status"]["phase"] == "Running").then_some(p)
        });
        assert!(
            fixed.is_some(),
            "{}",
            k.ok(&["get", "pod", "init-upper", "-o", "yaml"])
        );
    });
}

/// The pod as `kubectl get -o json` shows it.
fn pod(k: &Kubectl, name: &str) -> Value {
    serde_json::from_str(&k.ok(&["get", "pod", name, "-o", "json"])).unwrap_or_default()
}

/// A ConfigMap or Secret a pod needs and that is not there: the pod waits as a kubelet makes
/// it wait (a volume: ContainerCreating with FailedMount; an environment: that container in
/// CreateContainerConfigError, the others running), with upstream's words, and starts once the
/// object is created.
#[test]
fn a_missing_config_map_or_secret_holds_the_pod_until_it_is_created() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("pods.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: Pod\nmetadata: {name: vol}\nspec:\n  containers: [{name: app, image: nginx}]\n  volumes: [{name: cfg, configMap: {name: app-config}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: env}\nspec:\n  containers:\n  - name: app\n    image: nginx\n    env: [{name: MODE, valueFrom: {secretKeyRef: {name: creds, key: mode}}}]\n  - name: side\n    image: busybox\n",
        )
        .expect("write pods.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let vol = events(&k, "vol", "FailedMount");
        assert!(
            has(
                &vol,
                "Warning",
                "FailedMount",
                r#"MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found"#
            ),
            "{label}: {vol:?}"
        );
        let env = events(&k, "env", "Failed");
        assert!(
            has(
                &env,
                "Warning",
                "Failed",
                r#"Error: secret "creds" not found"#
            ),
            "{label}: {env:?}"
        );
        let get = k.ok(&["get", "pods"]);
        let waiting = wait_for(Duration::from_secs(20), || {
            let p = pod(&k, "env");
            (p["status"]["containerStatuses"][1]["ready"] == true).then_some(p)
        })
        .unwrap_or_else(|| panic!("{label}: env's side container never ran"));
        assert_eq!(waiting["status"]["phase"], "Pending", "{label}: {waiting}");
        assert_eq!(
            waiting["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "CreateContainerConfigError",
            "{label}: {waiting}"
        );
        let vol_pod = pod(&k, "vol");
        assert_eq!(
            (
                &vol_pod["status"]["phase"],
                &vol_pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
            ),
            (&Value::from("Pending"), &Value::from("ContainerCreating")),
            "{label}: {vol_pod}"
        );
        assert!(vol_pod["status"].get("podIP").is_none(), "{vol_pod}");
        assert!(get.contains("ContainerCreating"), "{label}: {get}");

        // A Secret without the key: the message names the key now.
        k.ok(&[
            "create",
            "secret",
            "generic",
            "creds",
            "--from-literal=user=u",
        ]);
        let keyless = wait_for(Duration::from_secs(20), || {
            let p = pod(&k, "env");
            let m = p["status"]["containerStatuses"][0]["state"]["waiting"]["message"].clone();
            (m == "couldn't find key mode in Secret default/creds").then_some(m)
        });
        assert!(keyless.is_some(), "{label}: {}", pod(&k, "env"));

        // Both created: both pods run.
        k.ok(&["create", "configmap", "app-config", "--from-literal=a=b"]);
        k.ok(&[
            "patch",
            "secret",
            "creds",
            "--type=merge",
            "-p",
            r#"{"stringData":{"mode":"fast"}}"#,
        ]);
        for name in ["vol", "env"] {
            let running = wait_for(Duration::from_secs(20), || {
                let p = pod(&k, name);
                (p["status"]["phase"] == "Running").then_some(p)
            });
            assert!(running.is_some(), "{label}: {name}: {}", pod(&k, name));
        }
        let get = k.ok(&["get", "pod", "env"]);
        assert!(get.contains("2/2     Running"), "{label}: {get}");
    });
}

/// Init containers run first, one after the other, as `kubectl get` shows it (the server's
/// table): Init:0/2 while the first runs, then the sidecar started and left running, then
/// Running with every init container's status.
#[test]
fn init_containers_run_to_completion_before_the_app() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "2"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("init.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: Pod\nmetadata: {name: init}\nspec:\n  initContainers:\n  - {name: migrate, image: busybox}\n  - {name: proxy, image: envoy, restartPolicy: Always}\n  containers: [{name: app, image: nginx}]\n",
        )
        .expect("write init.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let mut seen: Vec<String> = Vec::new();
        let running = wait_for(Duration::from_secs(30), || {
            let row = k.ok(&["get", "pod", "init", "--no-headers"]);
            let cols: Vec<&str> = row.split_whitespace().collect();
            let shown = format!("{} {}", cols.get(1)?, cols.get(2)?);
            if seen.last() != Some(&shown) {
                seen.push(shown.clone());
            }
            (shown == "2/2 Running").then_some(())
        });
        assert!(running.is_some(), "{label}: {seen:?}");
        assert!(
            seen.contains(&"0/2 Init:0/2".to_string()),
            "{label}: {seen:?}"
        );
        let p = pod(&k, "init");
        let inits = &p["status"]["initContainerStatuses"];
        assert_eq!(
            inits[0]["state"]["terminated"]["reason"], "Completed",
            "{label}: {p}"
        );
        assert_eq!(inits[0]["ready"], true, "{label}: {p}");
        assert!(inits[1]["state"]["running"].is_object(), "{label}: {p}");
        let evs = events(&k, "init", "Started");
        let started: Vec<&str> = evs
            .iter()
            .filter(|e| e.1 == "Started")
            .map(|e| e.2.as_str())
            .collect();
        assert_eq!(
            started,
            [
                "Started container migrate",
                "Started container proxy",
                "Started container app"
            ],
            "{label}: {evs:?}"
        );
    });
}

#[test]
fn a_job_pods_sidecar_is_stopped_once_its_work_is_done() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "1"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("job.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      initContainers: [{name: proxy, image: envoy, restartPolicy: Always}]\n      containers: [{name: work, image: busybox}]\n",
        )
        .expect("write job.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        k.ok(&[
            "wait",
            "--for=condition=complete",
            "job/batch",
            "--timeout=30s",
        ]);
        let out = k.ok(&["get", "pods", "-l", "job-name=batch", "-o", "json"]);
        let list: Value = serde_json::from_str(&out).expect("a pod list");
        let p = &list["items"][0];
        assert_eq!(p["status"]["phase"], "Succeeded", "{label}: {p}");
        let proxy = &p["status"]["initContainerStatuses"][0];
        assert_eq!(
            proxy["state"]["terminated"]["reason"], "Completed",
            "{label}: {p}"
        );
        assert_eq!(proxy["ready"], false, "{label}: {p}");
        let name = p["metadata"]["name"].as_str().unwrap_or_default();
        let evs = events(&k, name, "Killing");
        assert!(
            has(&evs, "Normal", "Killing", "Stopping container proxy"),
            "{label}: {evs:?}"
        );
    });
}

#[test]
fn a_readiness_probe_keeps_the_pod_unready_until_its_initial_delay() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("probed.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: Pod\nmetadata: {name: probed}\nspec:\n  containers:\n  - name: app\n    image: nginx\n    readinessProbe: {httpGet: {path: /, port: 80}, initialDelaySeconds: 5}\n",
        )
        .expect("write probed.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let mut seen: Vec<(String, std::time::Instant)> = Vec::new();
        let ready = wait_for(Duration::from_secs(30), || {
            let row = k.ok(&["get", "pod", "probed", "--no-headers"]);
            let cols: Vec<&str> = row.split_whitespace().collect();
            let shown = format!("{} {}", cols.get(1)?, cols.get(2)?);
            if seen.last().map(|s| &s.0) != Some(&shown) {
                seen.push((shown.clone(), std::time::Instant::now()));
            }
            (shown == "1/1 Running").then_some(())
        });
        let shown: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
        assert!(ready.is_some(), "{label}: {shown:?}");
        let unready = seen.iter().find(|s| s.0 == "0/1 Running");
        let Some((_, since)) = unready else {
            panic!("{label}: never 0/1 Running: {shown:?}");
        };
        let waited = seen.last().map(|s| s.1 - *since).unwrap_or_default();
        assert!(
            waited >= Duration::from_secs(1),
            "{label}: {shown:?} in {waited:?}"
        );
        let p = pod(&k, "probed");
        let ready = p["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(ready["status"], "True", "{label}: {p}");
        assert_eq!(
            p["status"]["containerStatuses"][0]["ready"], true,
            "{label}: {p}"
        );
        // The probe as a real cluster stores it: kubectl describe printed `timeout=0s
        // period=0s #success=0 #failure=0` before the API's probe defaults were applied.
        let described = k.ok(&["describe", "pod", "probed"]);
        let readiness = described
            .lines()
            .find(|l| l.trim_start().starts_with("Readiness:"))
            .unwrap_or_default();
        assert!(
            readiness.ends_with(
                " http-get http://:80/ delay=5s timeout=1s period=10s #success=1 #failure=3"
            ),
            "{label}: {described}"
        );
    });
}

#[test]
fn a_container_that_keeps_failing_goes_into_crash_loop_back_off() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("crash.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: crash\n  annotations: {kexplore.dev/simulated-exit-code: \"3\", kexplore.dev/simulated-run-seconds: \"3\"}\nspec:\n  containers: [{name: app, image: busybox}]\n",
        )
        .expect("write crash.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let mut seen: Vec<String> = Vec::new();
        let looping = wait_for(Duration::from_secs(40), || {
            let row = k.ok(&["get", "pod", "crash", "--no-headers"]);
            let cols: Vec<&str> = row.split_whitespace().collect();
            let shown = format!("{} {} {}", cols.get(1)?, cols.get(2)?, cols.get(3)?);
            if seen.last() != Some(&shown) {
                seen.push(shown.clone());
            }
            (shown.starts_with("1/1 Running 2")).then_some(())
        });
        assert!(looping.is_some(), "{label}: {seen:?}");
        // Exit, restarted at once; exit again, then 10 s of back-off before the next start.
        // (The exit itself shows as Error for less than a second before the restart: too
        // short to be sure a poll sees it; lastState below says how it ended.)
        for want in ["1/1 Running 1", "0/1 CrashLoopBackOff 1"] {
            assert!(
                seen.iter().any(|s| s == want),
                "{label}: no {want:?} in {seen:?}"
            );
        }
        let p = pod(&k, "crash");
        let app = &p["status"]["containerStatuses"][0];
        assert_eq!(app["restartCount"], 2, "{label}: {p}");
        assert_eq!(
            app["lastState"]["terminated"]["exitCode"], 3,
            "{label}: {p}"
        );
        assert_eq!(
            app["lastState"]["terminated"]["reason"], "Error",
            "{label}: {p}"
        );
        let evs = events(&k, "crash", "BackOff");
        let uid = p["metadata"]["uid"].as_str().unwrap_or_default();
        let backoff =
            format!("Back-off restarting failed container app in pod crash_default({uid})");
        assert!(
            has(&evs, "Warning", "BackOff", &backoff),
            "{label}: {evs:?}"
        );
        // The instance that last terminated ran and exited; each instance's lines begin with
        // its own image check, never the instance before's exit.
        let previous = k.ok(&["logs", "crash", "--previous"]);
        let lines: Vec<&str> = previous.lines().collect();
        assert!(
            lines
                .first()
                .is_some_and(|l| l.contains("image \"busybox\"")),
            "{label}: {previous}"
        );
        assert!(
            lines
                .last()
                .is_some_and(|l| l.contains("exited with code 3")),
            "{label}: {previous}"
        );
    });
}

#[test]
fn an_init_container_that_keeps_failing_holds_the_pod_in_init_crash_loop_back_off() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("init-crash.yaml");
        let pod_with = |name: &str, policy: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations: {{kexplore.dev/simulated-init-exit-code: \"1\", kexplore.dev/simulated-run-seconds: \"2\"}}\nspec:\n  restartPolicy: {policy}\n  initContainers: [{{name: migrate, image: busybox}}]\n  containers: [{{name: app, image: nginx}}]\n"
            )
        };
        std::fs::write(
            &manifest,
            format!(
                "{}---\n{}",
                pod_with("init-crash", "Always"),
                pod_with("init-once", "Never")
            ),
        )
        .expect("write init-crash.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let mut seen: Vec<String> = Vec::new();
        let looping = wait_for(Duration::from_secs(40), || {
            let row = k.ok(&["get", "pod", "init-crash", "--no-headers"]);
            let cols: Vec<&str> = row.split_whitespace().collect();
            let shown = format!("{} {} {}", cols.get(1)?, cols.get(2)?, cols.get(3)?);
            if seen.last() != Some(&shown) {
                seen.push(shown.clone());
            }
            (shown == "0/1 Init:CrashLoopBackOff 1").then_some(())
        });
        assert!(looping.is_some(), "{label}: {seen:?}");
        let p = pod(&k, "init-crash");
        let init = &p["status"]["initContainerStatuses"][0];
        assert_eq!(init["restartCount"], 1, "{label}: {p}");
        assert_eq!(
            init["lastState"]["terminated"]["exitCode"], 1,
            "{label}: {p}"
        );
        assert_eq!(
            init["lastState"]["terminated"]["reason"], "Error",
            "{label}: {p}"
        );
        assert_eq!(p["status"]["phase"], "Pending", "{label}: {p}");
        assert_eq!(
            p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing",
            "{label}: {p}"
        );
        let uid = p["metadata"]["uid"].as_str().unwrap_or_default();
        let evs = events(&k, "init-crash", "BackOff");
        let backoff = format!(
            "Back-off restarting failed container migrate in pod init-crash_default({uid})"
        );
        assert!(
            has(&evs, "Warning", "BackOff", &backoff),
            "{label}: {evs:?}"
        );

        // Fixed while it waits out its back-off: the next run completes and the app starts.
        k.ok(&[
            "annotate",
            "pod",
            "init-crash",
            "kexplore.dev/simulated-init-exit-code-",
        ]);
        let running = wait_for(Duration::from_secs(40), || {
            let row = k.ok(&["get", "pod", "init-crash", "--no-headers"]);
            let cols: Vec<&str> = row.split_whitespace().collect();
            (cols.get(1..3) == Some(&["1/1", "Running"][..])).then_some(())
        });
        assert!(
            running.is_some(),
            "{label}: {}",
            k.ok(&["get", "pod", "init-crash"])
        );
        let p = pod(&k, "init-crash");
        let init = &p["status"]["initContainerStatuses"][0];
        assert_eq!(
            init["state"]["terminated"]["reason"], "Completed",
            "{label}: {p}"
        );
        assert_eq!(init["restartCount"], 2, "{label}: {p}");

        // restartPolicy Never: the first failure ends the pod.
        let failed = wait_for(Duration::from_secs(30), || {
            let p = pod(&k, "init-once");
            (p["status"]["phase"] == "Failed").then_some(p)
        });
        let p = failed.unwrap_or_else(|| panic!("{label}: init-once did not fail"));
        let row = k.ok(&["get", "pod", "init-once", "--no-headers"]);
        assert_eq!(
            row.split_whitespace().nth(2),
            Some("Init:Error"),
            "{label}: {row}"
        );
        assert_eq!(
            p["status"]["initContainerStatuses"][0]["restartCount"], 0,
            "{label}: {p}"
        );
    });
}

#[test]
fn a_job_whose_pods_fail_stops_at_its_backoff_limit() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("fails.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: fails}\nspec:\n  backoffLimit: 1\n  template:\n    metadata:\n      annotations: {kexplore.dev/simulated-exit-code: \"1\", kexplore.dev/simulated-run-seconds: \"1\"}\n    spec:\n      restartPolicy: Never\n      containers: [{name: work, image: busybox}]\n",
        )
        .expect("write fails.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        k.ok(&[
            "wait",
            "--for=condition=failed",
            "job/fails",
            "--timeout=60s",
        ]);
        let out = k.ok(&["get", "job", "fails", "-o", "json"]);
        let job: Value = serde_json::from_str(&out).expect("a job");
        let failed = job["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Failed"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(failed["reason"], "BackoffLimitExceeded", "{label}: {job}");
        assert_eq!(job["status"]["failed"], 2, "{label}: {job}");
        let pods = k.ok(&["get", "pods", "-l", "job-name=fails", "--no-headers"]);
        assert_eq!(pods.matches(" Error ").count(), 2, "{label}: {pods}");
        // The replacement waited upstream's 10 s back-off after the first pod failed (it was
        // created at once before).
        let out = k.ok(&["get", "pods", "-l", "job-name=fails", "-o", "json"]);
        let pods: Value = serde_json::from_str(&out).expect("pods");
        let secs = |t: &Value| {
            let t = t.as_str().unwrap_or_default();
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
                .map(|t| t.unix_timestamp())
                .unwrap_or_else(|e| panic!("{label}: {t}: {e}"))
        };
        let mut items = pods["items"].as_array().cloned().unwrap_or_default();
        items.sort_by_key(|p| secs(&p["metadata"]["creationTimestamp"]));
        let ended =
            &items[0]["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"];
        let waited = secs(&items[1]["metadata"]["creationTimestamp"]) - secs(ended);
        assert!(
            waited >= 9,
            "{label}: replaced {waited} s after the failure: {pods}"
        );
    });
}

/// `kubectl debug` adds an ephemeral container through `pods/ephemeralcontainers`: the kubelet
/// pulls its image and starts it (running, never ready), `kubectl logs -c` reads it, and the
/// subresource refuses what upstream refuses: a target that is not one of the pod's
/// containers, an ephemeral container taken back, and any on create. `kubectl debug node/…`'s
/// pod has its node's address. The oldest kubectl and the default one (which panicked on this
/// server's 404 before the subresource was served).
#[test]
fn kubectl_debug_adds_an_ephemeral_container_the_kubelet_starts() {
    for label in ["kubectl", "1.27"] {
        with_kubectl(label, |label, bin| {
            let srv = ServeProcess::start(&[]);
            let k = Kubectl::new(label, bin, srv.kubeconfig());
            k.ok(&["run", "web", "--image=nginx:1.25"]);
            k.ok(&["wait", "--for=condition=Ready", "pod/web", "--timeout=30s"]);
            k.ok(&[
                "debug",
                "web",
                "--image=busybox:1.36",
                "--target=web",
                "-c",
                "dbg",
            ]);
            let running = wait_for(Duration::from_secs(20), || {
                let p = pod(&k, "web");
                let st = p["status"]["ephemeralContainerStatuses"][0].clone();
                st["state"]["running"].is_object().then_some(p)
            })
            .unwrap_or_else(|| panic!("{label}: dbg never ran: {}", pod(&k, "web")));
            let ec = &running["spec"]["ephemeralContainers"][0];
            assert_eq!(ec["name"], "dbg", "{label}: {running}");
            assert_eq!(ec["targetContainerName"], "web", "{label}: {running}");
            assert_eq!(ec["imagePullPolicy"], "IfNotPresent", "{label}: {running}");
            let st = &running["status"]["ephemeralContainerStatuses"][0];
            assert_eq!(st["ready"], false, "{label}: {st}");
            assert_eq!(
                running["status"]["containerStatuses"][0]["ready"], true,
                "{label}: the pod's own container is untouched: {running}"
            );
            let evs = events(&k, "web", "Started");
            assert!(
                has(&evs, "Normal", "Started", "Started container dbg"),
                "{label}: {evs:?}"
            );
            // The write is the subresource's own in managedFields, as kube-apiserver records it.
            let managed: Value = serde_json::from_str(&k.ok(&[
                "get",
                "pod",
                "web",
                "-o",
                "json",
                "--show-managed-fields",
            ]))
            .unwrap_or_default();
            let entries = managed["metadata"]["managedFields"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(
                entries.iter().any(|e| {
                    e["subresource"] == "ephemeralcontainers"
                        && e["fieldsV1"]["f:spec"]["f:ephemeralContainers"]["k:{\"name\":\"dbg\"}"]
                            .is_object()
                }),
                "{label}: {entries:?}"
            );
            let log = k.ok(&["logs", "web", "-c", "dbg"]);
            assert!(log.contains("no process runs"), "{label}: {log}");

            let bad = k.run(&[
                "debug",
                "web",
                "--image=busybox",
                "--target=nope",
                "-c",
                "d2",
            ]);
            assert!(
                bad.code != 0
                    && bad.stderr.contains(
                        "spec.ephemeralContainers[1].targetContainerName: Not found: \"nope\""
                    ),
                "{label}: {}",
                bad.stderr
            );
            // Taken back through the subresource: refused, the container stays.
            let mut body = running.clone();
            body["spec"]["ephemeralContainers"] = serde_json::json!([]);
            let file = srv.dir.path().join("no-ephemeral.json");
            std::fs::write(&file, body.to_string()).expect("write");
            let gone = k.run(&[
                "replace",
                "--raw",
                "/api/v1/namespaces/default/pods/web/ephemeralcontainers",
                "-f",
                file.to_str().unwrap_or_default(),
            ]);
            assert!(
                gone.code != 0
                    && gone
                        .stderr
                        .contains("existing ephemeral containers \"dbg\" may not be removed"),
                "{label}: {}{}",
                gone.stdout,
                gone.stderr
            );
            // A create may not bring any.
            let file = srv.dir.path().join("with-ephemeral.yaml");
            std::fs::write(
                &file,
                "apiVersion: v1\nkind: Pod\nmetadata: {name: eph}\nspec:\n  containers: [{name: c, image: nginx}]\n  ephemeralContainers: [{name: dbg, image: busybox}]\n",
            )
            .expect("write");
            let created = k.run(&["create", "-f", file.to_str().unwrap_or_default()]);
            assert!(
                created
                    .stderr
                    .contains("spec.ephemeralContainers: Forbidden: cannot be set on create"),
                "{label}: {}",
                created.stderr
            );
            // A node's debugging pod is on the node's network: its address is the node's.
            k.ok(&["debug", "node/node-1", "--image=busybox"]);
            let debugger = wait_for(Duration::from_secs(20), || {
                let list: Value =
                    serde_json::from_str(&k.ok(&["get", "pods", "-o", "json"])).ok()?;
                list["items"]
                    .as_array()?
                    .iter()
                    .find(|p| {
                        p["metadata"]["name"]
                            .as_str()
                            .is_some_and(|n| n.starts_with("node-debugger-node-1-"))
                            && p["status"]["phase"] == "Running"
                    })
                    .cloned()
            })
            .unwrap_or_else(|| panic!("{label}: no running node debugger"));
            assert_eq!(debugger["spec"]["hostNetwork"], true, "{label}: {debugger}");
            assert_eq!(
                debugger["status"]["podIP"], debugger["status"]["hostIP"],
                "{label}: {debugger}"
            );
        });
    }
}
