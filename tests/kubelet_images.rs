//! The simulated kubelets pull images as their imagePullPolicy says, with upstream's events:
//! a tagged image pulled once on a node is "already present on machine" for the next pod
//! there, `Always` pulls again, and `Never` with the image absent leaves the container waiting
//! with ErrImageNeverPull (the pod Pending, its sandbox IP set) — checked with kubectl.

use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
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

#[test]
fn pulls_follow_the_image_pull_policy_and_what_the_node_holds() {
    with_kubectl("kubectl", |label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        // `kubectl run NAME --image=IMAGE [--image-pull-policy=POLICY]` on NODE.
        let run = |name: &str, image: &str, policy: Option<&str>, node: &str| {
            let image = format!("--image={image}");
            let on = format!(r#"{{"spec":{{"nodeName":"{node}"}}}}"#);
            let policy = policy.map(|p| format!("--image-pull-policy={p}"));
            let mut args = vec!["run", name, image.as_str(), "--overrides", on.as_str()];
            args.extend(policy.as_deref());
            k.ok(&args);
        };
        run("first", "nginx:1.27", None, "node-2");
        let first = events(&k, "first", "Started");
        assert!(
            has(&first, "Normal", "Pulling", r#"Pulling image "nginx:1.27""#),
            "{first:?}"
        );

        // Same node, same tagged image (IfNotPresent): not pulled again.
        run("second", "nginx:1.27", None, "node-2");
        let second = events(&k, "second", "Started");
        assert!(
            has(
                &second,
                "Normal",
                "Pulled",
                r#"Container image "nginx:1.27" already present on machine"#
            ),
            "{second:?}"
        );
        assert!(!second.iter().any(|e| e.1 == "Pulling"), "{second:?}");

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
    });
}
