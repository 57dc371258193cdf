"""The official Python client asks `kexplore serve` about someone else's access (driven by
tests/python_client.rs): SubjectAccessReview and LocalSubjectAccessReview answered by RBAC for
the user and groups they name, upstream's validation refusing malformed ones with a 422, and a
ConfigMap a finalizer holds surviving its delete until the finalizer goes.
"""
import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


config.load_kube_config(config_file=sys.argv[1])
authz = client.AuthorizationV1Api()
rbac = client.RbacAuthorizationV1Api()
v1 = client.CoreV1Api()


def review(verb, namespace="default"):
    attrs = client.V1ResourceAttributes(verb=verb, resource="pods", namespace=namespace)
    spec = client.V1SubjectAccessReviewSpec(user="jane", groups=["system:authenticated"],
                                            resource_attributes=attrs)
    return authz.create_subject_access_review(client.V1SubjectAccessReview(spec=spec)).status


if review("list").allowed:
    fail("jane may list pods before any binding")
rbac.create_namespaced_role_binding("default", client.V1RoleBinding(
    metadata=client.V1ObjectMeta(name="jane-view"),
    role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="view"),
    subjects=[client.RbacV1Subject(kind="User", name="jane", api_group="rbac.authorization.k8s.io")],
))
s = review("list")
want = 'RBAC: allowed by RoleBinding "jane-view/default" of ClusterRole "view" to User "jane"'
if not s.allowed or s.reason != want:
    fail(f"after the binding: {s}")
if review("list", "kube-system").allowed or review("delete").allowed:
    fail("view in default granted more than list there")
print("subject access review: jane may list pods in default, by RoleBinding jane-view")

local = client.V1LocalSubjectAccessReview(
    metadata=client.V1ObjectMeta(namespace="default"),
    spec=client.V1SubjectAccessReviewSpec(
        user="jane",
        resource_attributes=client.V1ResourceAttributes(verb="get", resource="pods", namespace="default"),
    ),
)
if not authz.create_namespaced_local_subject_access_review("default", local).status.allowed:
    fail("local review: jane may get pods in default")
local.spec.resource_attributes.namespace = "kube-system"
try:
    authz.create_namespaced_local_subject_access_review("default", local)
    fail("a local review about another namespace was answered")
except ApiException as e:
    body = json.loads(e.body)
    if e.status != 422 or "spec.resourceAttributes.namespace: Invalid value: \"kube-system\": must match metadata.namespace" not in body["message"]:
        fail(f"local review about kube-system: {e.status} {body['message']}")
try:
    authz.create_subject_access_review(client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            non_resource_attributes=client.V1NonResourceAttributes(verb="get", path="/healthz"))))
    fail("a review naming nobody was answered")
except ApiException as e:
    if e.status != 422 or "at least one of user or group must be specified" not in json.loads(e.body)["message"]:
        fail(f"review naming nobody: {e.status} {e.body}")
print("access reviews: malformed ones refused with 422 in upstream's words")

v1.create_namespaced_config_map("default", client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="py-held", finalizers=["example.com/hold"])))
v1.delete_namespaced_config_map("py-held", "default")
held = v1.read_namespaced_config_map("py-held", "default")
if held.metadata.deletion_timestamp is None or held.metadata.finalizers != ["example.com/hold"]:
    fail(f"held ConfigMap: {held.metadata}")
v1.patch_namespaced_config_map("py-held", "default", {"metadata": {"finalizers": None}})
try:
    v1.read_namespaced_config_map("py-held", "default")
    fail("py-held stayed after its last finalizer went")
except ApiException as e:
    if e.status != 404:
        fail(f"py-held: {e.status}")
print("finalizers: py-held marked deleted, gone with its last finalizer")
