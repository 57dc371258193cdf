//! HorizontalPodAutoscalers through real kubectl, as a workshop makes them: `kubectl autoscale`
//! (autoscaling/v1 from kubectl before 1.33, v2 from 1.33), `get hpa` with upstream's columns,
//! both versions of one object, `describe`, `explain`, a v1 manifest, and an invalid HPA
//! refused with kube-apiserver's message. Then the controller, with the default kubectl only
//! (on a 1 s `--horizontal-pod-autoscaler-sync-period` instead of 15 s): a Deployment below
//! minReplicas scaled up, one above maxReplicas scaled down, and every metric failing as on a cluster without metrics-server. With
//! `KEXPLORE_TEST_STORE=etcd` the HPA is read back from etcd, stored as autoscaling/v2.

use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, etcdctl, wait_for, which};

const V1_MANIFEST: &str = "apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 1
  maxReplicas: 3
  targetCPUUtilizationPercentage: 70
";

const GHOST: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: ghost}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ghost}
  maxReplicas: 2
";

const BAD: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 3
";

fn write(srv: &ServeProcess, name: &str, text: &str) -> String {
    let path = srv.dir.path().join(name);
    std::fs::write(&path, text).expect("write manifest");
    path.to_string_lossy().into_owned()
}

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {e}: {out}", k.label))
}

fn autoscale_as_the_workshop_does(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    k.ok(&["create", "deployment", "web", "--image=nginx:1.25"]);
    let out = k.ok(&[
        "autoscale",
        "deployment",
        "web",
        "--min=2",
        "--max=4",
        "--cpu-percent=50",
    ]);
    assert_eq!(
        out.trim(),
        "horizontalpodautoscaler.autoscaling/web autoscaled",
        "{label}"
    );

    let out = k.ok(&["get", "hpa"]);
    let mut lines = out.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE"
        ],
        "{label}: {out}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    // No metrics API: the current value is unknown, as without metrics-server.
    assert_eq!(
        row[..7],
        [
            "web",
            "Deployment/web",
            "cpu:",
            "<unknown>/50%",
            "2",
            "4",
            "0"
        ],
        "{label}: {out}"
    );

    // One object, both versions.
    let v2 = json(
        k,
        &[
            "get",
            "horizontalpodautoscalers.v2.autoscaling",
            "web",
            "-o",
            "json",
        ],
    );
    assert_eq!(v2["apiVersion"], "autoscaling/v2", "{label}: {v2}");
    let target = &v2["spec"]["metrics"][0]["resource"]["target"];
    assert_eq!(target["averageUtilization"], 50, "{label}: {v2}");
    assert_eq!(target["type"], "Utilization", "{label}: {v2}");
    assert_eq!(v2["spec"]["minReplicas"], 2, "{label}: {v2}");
    let v1 = json(
        k,
        &[
            "get",
            "horizontalpodautoscalers.v1.autoscaling",
            "web",
            "-o",
            "json",
        ],
    );
    assert_eq!(v1["apiVersion"], "autoscaling/v1", "{label}: {v1}");
    assert_eq!(
        v1["spec"]["targetCPUUtilizationPercentage"], 50,
        "{label}: {v1}"
    );
    assert_eq!(
        v1["status"],
        serde_json::json!({"currentReplicas": 0, "desiredReplicas": 0}),
        "{label}: {v1}"
    );
    assert_eq!(v1["metadata"]["uid"], v2["metadata"]["uid"], "{label}");

    let described = k.ok(&["describe", "hpa", "web"]);
    for want in [
        "Reference:",
        "Deployment/web",
        "Min replicas:",
        "Max replicas:",
    ] {
        assert!(
            described.contains(want),
            "{label}: no {want:?} in\n{described}"
        );
    }
    assert!(
        described.contains("<unknown> / 50%"),
        "{label}: no unknown CPU in\n{described}"
    );
    let explained = k.ok(&["explain", "hpa.spec.metrics"]);
    assert!(explained.contains("MetricSpec"), "{label}: {explained}");

    // A v1 manifest: its CPU target becomes the stored v2 object's metric.
    let file = write(srv, "api-hpa.yaml", V1_MANIFEST);
    let out = k.ok(&["apply", "-f", &file]);
    assert!(
        out.contains("horizontalpodautoscaler.autoscaling/api created"),
        "{label}: {out}"
    );
    let api = json(
        k,
        &[
            "get",
            "horizontalpodautoscalers.v2.autoscaling",
            "api",
            "-o",
            "json",
        ],
    );
    assert_eq!(
        api["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 70,
        "{label}: {api}"
    );
    // Applied again unchanged: nothing to do.
    let out = k.ok(&["apply", "-f", &file]);
    assert!(out.contains("unchanged"), "{label}: {out}");

    let file = write(srv, "bad-hpa.yaml", BAD);
    let out = k.run(&["apply", "-f", &file]);
    assert_eq!(out.code, 1, "{label}: {}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            "The HorizontalPodAutoscaler \"bad\" is invalid: spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"
        ),
        "{label}: {}",
        out.stderr
    );

    if let Some(etcd) = srv.etcd.as_ref().filter(|_| which("etcdctl").is_some()) {
        let out = etcdctl(etcd)
            .args([
                "get",
                "/registry/horizontalpodautoscalers/default/web",
                "--print-value-only",
            ])
            .output()
            .expect("run etcdctl");
        let stored: Value = serde_json::from_slice(&out.stdout).expect("the HPA as JSON in etcd");
        assert_eq!(stored["apiVersion"], "autoscaling/v2", "{label}: {stored}");
    }
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let resources = k.ok(&["api-resources", "--api-group=autoscaling", "--no-headers"]);
        assert!(
            resources.contains("horizontalpodautoscalers")
                && resources.split_whitespace().any(|w| w == "hpa")
                && resources.contains("autoscaling/v2"),
            "{label}: {resources}"
        );
        autoscale_as_the_workshop_does(&k, &srv);
    });
}

per_kubectl!(run_version);

/// The HPA's status as (type, status, reason) of each condition.
fn conditions(k: &Kubectl, name: &str) -> Vec<(String, String, String)> {
    let hpa = json(k, &["get", "hpa", name, "-o", "json"]);
    hpa["status"]["conditions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let f = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                    (f("type"), f("status"), f("reason"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn replicas(k: &Kubectl, deployment: &str) -> i64 {
    json(k, &["get", "deployment", deployment, "-o", "json"])["spec"]["replicas"]
        .as_i64()
        .unwrap_or(-1)
}

/// Two sync periods and the loop's 2 s resync, with room for a loaded machine.
const PERIODS: Duration = Duration::from_secs(30);

#[test]
fn the_controller_holds_the_bounds_and_says_why_it_cannot_measure() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--horizontal-pod-autoscaler-sync-period=1s"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        k.ok(&["create", "deployment", "web", "--image=nginx:1.25"]);
        k.ok(&[
            "autoscale",
            "deployment",
            "web",
            "--min=2",
            "--max=4",
            "--cpu-percent=50",
        ]);
        // An HPA whose target does not exist (kubectl autoscale would refuse it): looked at in
        // the same periods as web's.
        k.ok(&["apply", "-f", &write(&srv, "ghost.yaml", GHOST)]);

        // Below minReplicas: scaled up, whatever the metrics say.
        let scaled = wait_for(PERIODS, || (replicas(&k, "web") == 2).then_some(()));
        assert!(scaled.is_some(), "web was not scaled to minReplicas");
        let events = k.ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=web,involvedObject.kind=HorizontalPodAutoscaler",
        ]);
        assert!(
            events
                .contains("New size: 2; reason: Current number of replicas below Spec.MinReplicas"),
            "{events}"
        );

        // Within the bounds: the metrics are asked for, and there is no metrics API.
        let failed = wait_for(PERIODS, || {
            conditions(&k, "web")
                .contains(&(
                    "ScalingActive".into(),
                    "False".into(),
                    "FailedGetResourceMetric".into(),
                ))
                .then_some(())
        });
        assert!(failed.is_some(), "{:?}", conditions(&k, "web"));
        let described = k.ok(&["describe", "hpa", "web"]);
        for want in [
            "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)",
            "FailedComputeMetricsReplicas",
            "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value",
        ] {
            assert!(described.contains(want), "no {want:?} in\n{described}");
        }
        let hpa = json(&k, &["get", "hpa", "web", "-o", "json"]);
        assert_eq!(hpa["status"]["currentReplicas"], 2, "{hpa}");
        assert_eq!(hpa["status"]["desiredReplicas"], 2, "{hpa}");
        assert!(hpa["status"]["lastScaleTime"].is_string(), "{hpa}");
        // autoscaling/v1 carries the conditions in an annotation, as upstream's conversion.
        let v1 = json(
            &k,
            &[
                "get",
                "horizontalpodautoscalers.v1.autoscaling",
                "web",
                "-o",
                "json",
            ],
        );
        let note = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/conditions"]
            .as_str()
            .unwrap_or_default();
        assert!(note.contains("FailedGetResourceMetric"), "{v1}");

        // Above maxReplicas: scaled down to it.
        k.ok(&["scale", "deployment", "web", "--replicas=9"]);
        let down = wait_for(PERIODS, || (replicas(&k, "web") == 4).then_some(()));
        assert!(down.is_some(), "web was not scaled down to maxReplicas");
        // Through the scale subresource, as upstream's scale client: the count is
        // kube-controller-manager's, in its Update entry with subresource scale.
        let web = json(
            &k,
            &[
                "get",
                "deployment",
                "web",
                "-o",
                "json",
                "--show-managed-fields",
            ],
        );
        let owners: Vec<(Value, Value)> = web["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e.pointer("/fieldsV1/f:spec/f:replicas").is_some())
            .map(|e| (e["manager"].clone(), e["subresource"].clone()))
            .collect();
        assert_eq!(
            owners,
            vec![(Value::from("kube-controller-manager"), Value::from("scale"))],
            "{web}"
        );
        let events = k.ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.kind=HorizontalPodAutoscaler",
        ]);
        assert!(
            events
                .contains("New size: 4; reason: Current number of replicas above Spec.MaxReplicas"),
            "{events}"
        );

        // A target that does not exist: AbleToScale False, with the reason.
        let lost = wait_for(PERIODS, || {
            conditions(&k, "ghost")
                .contains(&(
                    "AbleToScale".into(),
                    "False".into(),
                    "FailedGetScale".into(),
                ))
                .then_some(())
        });
        assert!(lost.is_some(), "{:?}", conditions(&k, "ghost"));
        let described = k.ok(&["describe", "hpa", "ghost"]);
        assert!(
            described.contains("deployments.apps \"ghost\" not found"),
            "{described}"
        );
    });
}
