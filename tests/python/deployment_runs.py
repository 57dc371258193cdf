"""The official Python client creates a Deployment on `kexplore serve` and watches its pods
come up (driven by tests/python_client.rs): the ReplicaSet the deployment controller makes,
three pods it owns, each seen Running through a watch, and the Deployment's status saying so.
"""
import sys
import time

from kubernetes import client, config, watch


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


config.load_kube_config(config_file=sys.argv[1])
apps = client.AppsV1Api()
v1 = client.CoreV1Api()
labels = {"app": "py-web"}
body = client.V1Deployment(
    metadata=client.V1ObjectMeta(name="py-web"),
    spec=client.V1DeploymentSpec(
        replicas=3,
        selector=client.V1LabelSelector(match_labels=labels),
        template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels=labels),
            spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx:1.27")]),
        ),
    ),
)
created = apps.create_namespaced_deployment("default", body)
if created.spec.strategy.type != "RollingUpdate" or created.spec.revision_history_limit != 10:
    fail(f"defaults: {created.spec.strategy} {created.spec.revision_history_limit}")
print("created py-web with upstream's defaults")

running = set()
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_pod, "default", label_selector="app=py-web", timeout_seconds=30):
    pod = ev["object"]
    owner = (pod.metadata.owner_references or [None])[0]
    if owner is None or owner.kind != "ReplicaSet" or not owner.controller:
        fail(f"{pod.metadata.name} is not controlled by a ReplicaSet: {owner}")
    if pod.status.phase == "Running" and pod.metadata.deletion_timestamp is None:
        running.add(pod.metadata.name)
    if len(running) == 3:
        w.stop()
if len(running) != 3:
    fail(f"the watch saw {sorted(running)} Running")
print("watch: 3 pods Running")

for _ in range(30):
    d = apps.read_namespaced_deployment("py-web", "default")
    if d.status.available_replicas == 3 and d.status.updated_replicas == 3:
        break
    time.sleep(0.5)
else:
    fail(f"status: {d.status}")
print("status: 3 available")
