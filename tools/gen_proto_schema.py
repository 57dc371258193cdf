#!/usr/bin/env python3
"""Writes src/apiserver/codec/proto_schema.rs: the protobuf field numbers, JSON names and types of
every kind `kexplore serve` stores, read from the k8s-pb crate (kube-rs' prost bindings generated
from upstream's generated.proto files) and k8s-openapi (the JSON names).

    python3 tools/gen_proto_schema.py ~/.cargo/registry/src/*/k8s-pb-0.9.0 \
        ~/.cargo/registry/src/*/k8s-openapi-0.29.0 > src/apiserver/codec/proto_schema.rs
    cargo fmt

(`cargo info k8s-pb` downloads the crate's source.) Fields newer than the Kubernetes release
k8s-openapi's feature names (v1_33) are left out, as that kube-apiserver drops them; the run
stops if a JSON field of that release has no protobuf field.

k8s-pb itself cannot be the decoder: it has no serde, so its structs do not become the JSON the
rest of the server works on. The tables below drive proto_objects.rs instead.
"""
import os
import re
import sys

PB, OPENAPI = sys.argv[1], sys.argv[2]

# (apiVersion, kind, k8s-pb module, message) of every kind the server decodes.
ROOTS = [
    ("v1", "Pod", "api::core::v1", "Pod"),
    ("v1", "Node", "api::core::v1", "Node"),
    ("v1", "Namespace", "api::core::v1", "Namespace"),
    ("v1", "ServiceAccount", "api::core::v1", "ServiceAccount"),
    ("v1", "Binding", "api::core::v1", "Binding"),
    ("v1", "Event", "api::core::v1", "Event"),
    ("events.k8s.io/v1", "Event", "api::events::v1", "Event"),
    ("coordination.k8s.io/v1", "Lease", "api::coordination::v1", "Lease"),
    ("scheduling.k8s.io/v1", "PriorityClass", "api::scheduling::v1", "PriorityClass"),
    ("rbac.authorization.k8s.io/v1", "Role", "api::rbac::v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "api::rbac::v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "api::rbac::v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "api::rbac::v1", "ClusterRoleBinding"),
    ("authentication.k8s.io/v1", "SelfSubjectReview", "api::authentication::v1", "SelfSubjectReview"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "api::authorization::v1", "SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "api::authorization::v1", "SelfSubjectRulesReview"),
    ("v1", "ConfigMap", "api::core::v1", "ConfigMap"),
    ("v1", "Secret", "api::core::v1", "Secret"),
    ("v1", "Service", "api::core::v1", "Service"),
    ("v1", "Endpoints", "api::core::v1", "Endpoints"),
    ("v1", "LimitRange", "api::core::v1", "LimitRange"),
    ("v1", "ResourceQuota", "api::core::v1", "ResourceQuota"),
    ("v1", "PersistentVolumeClaim", "api::core::v1", "PersistentVolumeClaim"),
    ("v1", "ReplicationController", "api::core::v1", "ReplicationController"),
    ("discovery.k8s.io/v1", "EndpointSlice", "api::discovery::v1", "EndpointSlice"),
    ("apps/v1", "Deployment", "api::apps::v1", "Deployment"),
    ("apps/v1", "ReplicaSet", "api::apps::v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet", "api::apps::v1", "DaemonSet"),
    ("apps/v1", "StatefulSet", "api::apps::v1", "StatefulSet"),
    ("apps/v1", "ControllerRevision", "api::apps::v1", "ControllerRevision"),
    ("autoscaling/v1", "Scale", "api::autoscaling::v1", "Scale"),
    ("autoscaling/v1", "HorizontalPodAutoscaler", "api::autoscaling::v1", "HorizontalPodAutoscaler"),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "api::autoscaling::v2", "HorizontalPodAutoscaler"),
    ("batch/v1", "Job", "api::batch::v1", "Job"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest", "api::certificates::v1", "CertificateSigningRequest"),
    ("batch/v1", "CronJob", "api::batch::v1", "CronJob"),
    ("policy/v1", "PodDisruptionBudget", "api::policy::v1", "PodDisruptionBudget"),
    ("policy/v1", "Eviction", "api::policy::v1", "Eviction"),
    ("networking.k8s.io/v1", "Ingress", "api::networking::v1", "Ingress"),
    ("networking.k8s.io/v1", "IngressClass", "api::networking::v1", "IngressClass"),
    ("networking.k8s.io/v1", "NetworkPolicy", "api::networking::v1", "NetworkPolicy"),
    ("authentication.k8s.io/v1", "TokenRequest", "api::authentication::v1", "TokenRequest"),
    ("authentication.k8s.io/v1", "TokenReview", "api::authentication::v1", "TokenReview"),
    ("v1", "DeleteOptions", "apimachinery::pkg::apis::meta::v1", "DeleteOptions"),
]

# Messages whose JSON form is not an object.
SPECIAL = {
    "apimachinery::pkg::apis::meta::v1::Time": "Time",
    "apimachinery::pkg::apis::meta::v1::MicroTime": "MicroTime",
    "apimachinery::pkg::apis::meta::v1::Duration": "Duration",
    "apimachinery::pkg::apis::meta::v1::FieldsV1": "RawJson",
    "apimachinery::pkg::runtime::RawExtension": "RawJson",
    "apimachinery::pkg::api::resource::Quantity": "Quantity",
    "apimachinery::pkg::util::intstr::IntOrString": "IntOrString",
    "api::authentication::v1::ExtraValue": "Items",
    "api::certificates::v1::ExtraValue": "Items",
    "api::authorization::v1::ExtraValue": "Items",
}

FIELD = re.compile(r'#\[prost\((?P<attr>[^\]]*?)tag = "(?P<tag>\d+)"\)\]\s*(?:///[^\n]*\n\s*)*pub (?:r#)?(?P<name>\w+):\s*(?P<ty>.*?),\s*\n(?=\s*(?:///|#\[prost|$))', re.S)
STRUCT = re.compile(r'pub struct (\w+) \{(.*?)\n\}', re.S)


def module_file(module):
    return os.path.join(PB, "src", *module.split("::"), "mod.rs")


structs = {}


def load(module):
    if module in structs:
        return
    with open(module_file(module)) as f:
        text = f.read()
    structs[module] = {name: body + "\n" for name, body in STRUCT.findall(text)}


def resolve(module, rust_ty):
    """The (module, struct) a Rust type path names, relative to `module`."""
    path = re.sub(r"\s+|::core::option::Option<|::prost::alloc::vec::Vec<|>|,", "", rust_ty)
    parts = path.split("::")
    here = module.split("::")
    while parts and parts[0] == "super":
        parts.pop(0)
        here.pop()
    name = parts.pop()
    return "::".join(here + parts), name


def snake_case(name):
    """`DownwardAPIVolumeSource` → `downward_api_volume_source`, as k8s-openapi names its files."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def openapi_keys(module, name):
    """JSON names of k8s-openapi's v1_33 type for a k8s-pb message, keyed by the snake_case
    name with the underscores removed (prost and k8s-openapi split acronyms differently:
    `pod_cid_rs` / `pod_cidrs`), or None when 1.33 has no such type."""
    path = os.path.join(OPENAPI, "src", "v1_33", *module.split("::"), snake_case(name) + ".rs")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        pairs = re.findall(r'"(\w+)" => Field::Key_(\w+),', f.read())
    return {key.replace("_", ""): js for js, key in pairs}


def ident(module, name):
    short = module.replace("api::", "").replace("apimachinery::pkg::apis::", "").replace("::", "_")
    return f"{short}_{snake_case(name)}".upper()


emitted = {}
order = []


def ty_of(module, attr, rust_ty, where):
    attr = attr.strip().rstrip(",")
    if attr.startswith("btree_map"):
        kv = re.search(r'"string, (\w+)"', attr).group(1)
        if kv == "string":
            return "Ty::Map(&Ty::Str)"
        if kv == "bytes":
            return "Ty::Map(&Ty::Bytes)"
        target = resolve(module, rust_ty.split(",", 1)[1])
        if "::".join(target) in SPECIAL:
            return f"Ty::Map(&Ty::{SPECIAL['::'.join(target)]})"
        sys.exit(f"a map of messages ({where}) has no Ty yet")
    kind = attr.split(",")[0].split("=")[0].strip()
    repeated = "repeated" in attr
    if kind == "message":
        target = resolve(module, rust_ty)
        key = "::".join(target)
        if key in SPECIAL:
            t = f"Ty::{SPECIAL[key]}"
            return f"Ty::List(&{t})" if repeated else t
        t = f"&{message(*target)}"
        return f"Ty::Msgs({t})" if repeated else f"Ty::Msg({t})"
    scalar = {"string": "Str", "bool": "Bool", "int32": "Int", "int64": "Int", "bytes": "Bytes"}.get(kind)
    if scalar is None:
        sys.exit(f"{where}: {attr} has no Ty yet")
    return f"Ty::List(&Ty::{scalar})" if repeated else f"Ty::{scalar}"


def message(module, name, parent_keys=None):
    """The static of a message; an inlined one without a k8s-openapi type of its own (Go's
    VolumeSource, ProbeHandler) takes its JSON names from its parent's."""
    key = f"{module}::{name}"
    if key in emitted:
        return emitted[key]
    load(module)
    emitted[key] = ident(module, name)
    body = structs[module][name]
    fields = []
    if body.count("#[prost(") != len(FIELD.findall(body)):
        sys.exit(f"could not read every field of {key}")
    keys = openapi_keys(module, name) or parent_keys or {}
    for m in FIELD.finditer(body):
        tag, snake, attr = int(m["tag"]), m["name"], m["attr"]
        js = keys.get(snake.replace("_", ""))
        if js is None and attr.startswith("message") and "repeated" not in attr:
            # A Go struct embedded with `json:",inline"`: its fields are the parent's in JSON.
            target = resolve(module, m["ty"])
            load(target[0])
            inner = {f["name"].replace("_", "") for f in FIELD.finditer(structs[target[0]][target[1]])}
            if inner and len(inner & set(keys)) * 2 >= len(inner):
                fields.append((tag, snake, f"Ty::Inline(&{message(*target, keys)})"))
                continue
        if js is None:
            continue  # newer than 1.33: a 1.33 kube-apiserver drops it too
        fields.append((tag, js, ty_of(module, attr, m["ty"], name)))
    order.append((emitted[key], key, sorted(fields)))
    return emitted[key]


for _, kind, mod, msg in ROOTS:
    if openapi_keys(mod, msg) is None:
        sys.exit(f"{kind}: k8s-openapi has no {mod}::{msg} to name its JSON fields")
roots = [(av, kind, message(mod, msg)) for av, kind, mod, msg in ROOTS]

def check_coverage():
    """Every JSON field 1.33 knows has a protobuf field (apiVersion and kind ride in the
    envelope); stops the generator otherwise."""
    by_ident = {ident_: (key, fields) for ident_, key, fields in order}

    def names(ident_):
        out = set()
        for _, js, ty in by_ident[ident_][1]:
            m = re.match(r"Ty::Inline\(&(\w+)\)", ty)
            out |= names(m.group(1)) if m else {js}
        return out

    for ident_, (key, _) in by_ident.items():
        module, name = key.rsplit("::", 1)
        keys = openapi_keys(module, name)
        if keys is None or "::".join((module, name)) in SPECIAL:
            continue
        missing = set(keys.values()) - names(ident_) - {"apiVersion", "kind"}
        if missing:
            sys.exit(f"{key}: no protobuf field for {sorted(missing)}")


check_coverage()


print("//! GENERATED by tools/gen_proto_schema.py from k8s-pb 0.9 (upstream's generated.proto) and")
print("//! k8s-openapi 0.29 (JSON names): do not edit. Field numbers, JSON names and types of every")
print("//! kind `kexplore serve` stores, for proto_objects.rs.")
print()
print("use super::proto::{Msg, Ty};")
print()
print("/// The message of `kind` in `api_version`, if the server decodes it from protobuf.")
print("pub(crate) fn root(api_version: &str, kind: &str) -> Option<&'static Msg> {")
print("    Some(match (api_version, kind) {")
for av, kind, ident_ in roots:
    print(f'        ("{av}", "{kind}") => &{ident_},')
print("        _ => return None,")
print("    })")
print("}")
for ident_, key, fields in order:
    print()
    print(f"static {ident_}: Msg = Msg {{")
    print(f'    name: "{key.split("::")[-1]}",')
    print("    fields: &[")
    for tag, js, ty in fields:
        print(f'        ({tag}, "{js}", {ty}),')
    print("    ],")
    print("};")

