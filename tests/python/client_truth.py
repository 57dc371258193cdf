"""The official Python client against `kexplore serve` (driven by tests/python_client.rs).

Each check exits non-zero with the reason on stderr: dry runs stay dry, an invalid dryRun is
kube-apiserver's 422, server-side apply through the dynamic client creates, a watch sees the
pod Running, the health endpoints answer without credentials, and componentstatuses report the
scheduler and controller-manager healthy, and a claim binds to a volume through the typed clients.
"""
import base64
import ssl
import sys
import tempfile
import urllib.request

from kubernetes import client, config, dynamic, watch


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
v1 = client.CoreV1Api(api)
# No scheduler picks this pod up, so nothing but the dry runs below could move its
# resourceVersion (a scheduled pod's binding and kubelet updates raced them).
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "py-app"},
       "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx:1.27"}]}}
v1.create_namespaced_pod("default", pod)
before = v1.read_namespaced_pod("py-app", "default")

v1.delete_namespaced_pod("py-app", "default", dry_run="All")
v1.patch_namespaced_pod("py-app", "default", {"metadata": {"labels": {"dry": "run"}}}, dry_run="All")
after = v1.read_namespaced_pod("py-app", "default")
if after.metadata.resource_version != before.metadata.resource_version:
    fail(f"a dry run moved resourceVersion {before.metadata.resource_version} -> {after.metadata.resource_version}")
if after.metadata.deletion_timestamp is not None or (after.metadata.labels or {}).get("dry"):
    fail("a dry run changed the pod")
print("dry runs: nothing changed")

try:
    v1.delete_namespaced_pod("py-app", "default", dry_run="Bogus")
    fail("dryRun=Bogus was accepted")
except client.ApiException as e:
    if e.status != 422 or "Unsupported value" not in e.body:
        fail(f"dryRun=Bogus: {e.status} {e.body}")
print("dryRun=Bogus: 422 Unsupported value")

pods = dynamic.DynamicClient(api).resources.get(api_version="v1", kind="Pod")
applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "py-ssa", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
r = pods.server_side_apply(body=applied, namespace="default", field_manager="python")
managers = [m.manager for m in r.metadata.managedFields]
if managers != ["python"]:
    fail(f"server-side apply's managedFields: {managers}")
print("server-side apply created py-ssa, managed by python")

w = watch.Watch()
phase = None
for ev in w.stream(v1.list_namespaced_pod, "default", field_selector="metadata.name=py-ssa",
                   timeout_seconds=20):
    phase = ev["object"].status.phase
    if phase == "Running":
        w.stop()
if phase != "Running":
    fail(f"the watch ended with py-ssa {phase}")
print("watch: py-ssa Running")

cfg = client.Configuration.get_default_copy()
ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert)
for path in ("/readyz", "/livez", "/healthz", "/version"):
    with urllib.request.urlopen(cfg.host + path, context=ctx, timeout=10) as resp:
        if resp.status != 200:
            fail(f"{path} without credentials: {resp.status}")
print("health and version: 200 without credentials")

statuses = {c.metadata.name: c.conditions[0] for c in v1.list_component_status().items}
for name in ("scheduler", "controller-manager"):
    c = statuses.get(name)
    if c is None or c.type != "Healthy" or c.status != "True" or c.message != "ok":
        fail(f"componentstatus {name}: {c}")
try:
    v1.read_component_status("kubelet")
    fail("componentstatus kubelet was found")
except client.ApiException as e:
    if e.status != 404:
        fail(f"componentstatus kubelet: {e.status} {e.body}")
print(f"componentstatuses: {', '.join(sorted(statuses))} healthy; kubelet 404")

# Storage through the typed clients: the default class, a volume and a claim bound to it.
storage = client.StorageV1Api(api)
defaults = [c.metadata.name for c in storage.list_storage_class().items
            if (c.metadata.annotations or {}).get("storageclass.kubernetes.io/is-default-class") == "true"]
if not defaults:
    fail("no default StorageClass")
v1.create_persistent_volume({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "py-pv"},
                             "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                      "storageClassName": "manual", "hostPath": {"path": "/data/py"}}})
v1.create_namespaced_persistent_volume_claim("default", {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "py-claim"},
    "spec": {"storageClassName": "manual", "accessModes": ["ReadWriteOnce"],
             "resources": {"requests": {"storage": "1Gi"}}}})
w = watch.Watch()
bound = None
for ev in w.stream(v1.list_namespaced_persistent_volume_claim, "default",
                   field_selector="metadata.name=py-claim", timeout_seconds=20):
    bound = ev["object"].spec.volume_name
    if ev["object"].status.phase == "Bound":
        w.stop()
pv = v1.read_persistent_volume("py-pv")
if bound != "py-pv" or pv.status.phase != "Bound" or pv.spec.claim_ref.name != "py-claim":
    fail(f"py-claim bound to {bound}; py-pv {pv.status.phase} for {pv.spec.claim_ref}")
print(f"storage: default class {defaults[0]}; py-claim bound to py-pv")
