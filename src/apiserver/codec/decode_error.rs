//! A body that does not fit its kind's types, worded as kube-apiserver's JSON decoder (Go's
//! encoding/json, forked as sigs.k8s.io/json) words it:
//! `json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container`
//! — the innermost struct, the path of struct fields from the root (no indices, no map keys)
//! and the Go type. The types come from the same k8s-openapi schemas the OpenAPI document
//! serves; an error that is not a type mismatch keeps serde's words after the exact path.
//! The schemas do not carry Go's names for named scalar types, so a `v1.RestartPolicy` field
//! is reported as `string`; named maps of quantities are `v1.ResourceList`, as in core/v1.

use serde_json::{Map, Value};
use serde_path_to_error::{Path, Segment};

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::apiserver::registry::openapi;
use crate::apiserver::registry::resources::{RESOURCES, ResourceDef};
use crate::apiserver::registry::validation::parse_quantity;
use crate::apiserver::util::At;
use crate::scheduler::quantity::Quantity;

/// The k8s-openapi schemas of `def`'s kind and every type it references, built once.
fn schemas(def: &ResourceDef) -> &'static Map<String, Value> {
    &types(def).defs
}

/// A kind's schemas, and what the quantity check needs of them, built once.
struct Types {
    defs: Map<String, Value>,
    /// The definition of the kind itself (`io.k8s.api.core.v1.Pod`).
    root: Option<String>,
    /// The definitions that hold a Quantity somewhere inside (`holding_quantities`).
    holding: HashSet<String>,
    /// Of each of those with properties, the properties that can hold one, in key order: the
    /// only ones the check looks at in an object of that type.
    props: HashMap<String, Vec<String>>,
}

fn types(def: &ResourceDef) -> &'static Types {
    static ALL: OnceLock<Vec<Types>> = OnceLock::new();
    static EMPTY: OnceLock<Types> = OnceLock::new();
    let all = ALL.get_or_init(|| RESOURCES.iter().map(kind_types).collect());
    RESOURCES
        .iter()
        .position(|r| (r.group, r.version, r.kind) == (def.group, def.version, def.kind))
        .and_then(|i| all.get(i))
        .unwrap_or_else(|| {
            EMPTY.get_or_init(|| Types {
                defs: Map::new(),
                root: None,
                holding: HashSet::new(),
                props: HashMap::new(),
            })
        })
}

fn kind_types(def: &ResourceDef) -> Types {
    let defs = openapi::type_schemas(def);
    let holding = holding_quantities(&defs);
    let props = holding
        .iter()
        .filter_map(|name| {
            let p = defs.get(name)?.get("properties")?.as_object()?;
            let mut names: Vec<String> = p
                .iter()
                .filter(|(_, s)| may_hold_quantity(s, &holding))
                .map(|(k, _)| k.clone())
                .collect();
            names.sort();
            Some((name.clone(), names))
        })
        .collect();
    Types {
        root: root_name(def, &defs).cloned(),
        defs,
        holding,
        props,
    }
}

/// The definitions that hold a Quantity, directly or through others (the least fixpoint, so
/// recursive types are answered exactly): the quantity check walks only into these, not
/// through a pod's metadata, managed fields, probes and tolerations.
fn holding_quantities(defs: &Map<String, Value>) -> HashSet<String> {
    let mut holding = HashSet::new();
    loop {
        let found: Vec<String> = defs
            .iter()
            .filter(|(name, schema)| {
                !holding.contains(name.as_str()) && may_hold_quantity(schema, &holding)
            })
            .map(|(name, _)| name.clone())
            .collect();
        if found.is_empty() {
            return holding;
        }
        holding.extend(found);
    }
}

/// Whether a value of `schema` can hold a Quantity, given the definitions known to.
fn may_hold_quantity(schema: &Value, holding: &HashSet<String>) -> bool {
    if let Some(name) = ref_name(schema) {
        return name == QUANTITY || holding.contains(name);
    }
    let inner = |key: &str| {
        schema
            .get(key)
            .is_some_and(|s| may_hold_quantity(s, holding))
    };
    inner("items")
        || inner("additionalProperties")
        || schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.values().any(|s| may_hold_quantity(s, holding)))
}

/// upstream `resource.ErrFormatWrong`, which a malformed quantity gets while decoding.
const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// The first malformed quantity anywhere in a decoded object, in upstream's words followed by
/// what and where it is (upstream names neither). Every well-formed one on the way is
/// rewritten in its canonical form, as kube-apiserver stores and answers it (`0.5` → `500m`).
pub(crate) fn malformed_quantity(def: &ResourceDef, obj: &mut Value) -> Option<String> {
    let t = types(def);
    let root = t.defs.get(t.root.as_ref()?)?;
    let mut path = String::new();
    find_quantity(t, root, obj, &mut path)
        .map(|(q, at)| format!("{QUANTITY_FORMAT} (got {q:?} at {at})"))
}

fn find_quantity(
    t: &Types,
    schema: &Value,
    value: &mut Value,
    path: &mut String,
) -> Option<(String, String)> {
    if ref_name(schema) == Some(QUANTITY) {
        let Value::String(q) = value else {
            return None;
        };
        if parse_quantity(q).is_none() {
            return Some((q.clone(), path.clone()));
        }
        if let Some(c) = Quantity::parse(q).ok().and_then(|q| q.canonical()) {
            *q = c;
        }
        return None;
    }
    if !may_hold_quantity(schema, &t.holding) {
        return None;
    }
    let (name, schema) = resolve(&t.defs, schema);
    let len = path.len();
    let at = |k: &str, sub: &Value, v: &mut Value, path: &mut String| {
        path.truncate(len);
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(k);
        find_quantity(t, sub, v, path)
    };
    let found = match (value, name.and_then(|n| t.props.get(n))) {
        // A known type: only the properties that can hold one.
        (Value::Object(m), Some(props)) => props.iter().find_map(|k| {
            let v = m.get_mut(k)?;
            at(k, schema.get("properties")?.get(k)?, v, path)
        }),
        (Value::Object(m), None) => m.iter_mut().find_map(|(k, v)| {
            let sub = schema
                .get("properties")
                .and_then(|p| p.get(k))
                .or_else(|| schema.get("additionalProperties"))?;
            at(k, sub, v, path)
        }),
        (Value::Array(a), _) => a.iter_mut().enumerate().find_map(|(i, v)| {
            path.truncate(len);
            path.push_str(&format!("[{i}]"));
            find_quantity(t, schema.get("items")?, v, path)
        }),
        _ => None,
    };
    path.truncate(len);
    found
}

/// The message for a body of `def` whose decoding failed at `path` with serde's `message`.
pub(crate) fn describe(def: &ResourceDef, input: &Value, path: &Path, message: &str) -> String {
    if let Some(go) = base64_error(message) {
        return go;
    }
    let defs = schemas(def);
    match mismatch(def, defs, input, path) {
        Some(m) => m,
        None if path.iter().next().is_none() => message.to_string(),
        None => format!("{path}: {message}"),
    }
}

/// `encoding/base64`'s `CorruptInputError` for the base64 crate's bad-symbol errors, which
/// would otherwise quote a byte of the value (a Secret's, say) back to the client and into the
/// request's trace.
fn base64_error(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("Invalid symbol ")
        .or_else(|| message.strip_prefix("Invalid last symbol "))?;
    let offset = rest.split("offset ").nth(1)?.trim_end_matches('.');
    let offset: usize = offset.trim().parse().ok()?;
    Some(format!("illegal base64 data at input byte {offset}"))
}

/// The Go package's last element and type name of a schema name
/// (`io.k8s.api.core.v1.Container` → `v1.Container`).
fn go_named(name: &str) -> String {
    let mut parts = name.rsplit('.');
    let ty = parts.next().unwrap_or_default();
    match parts.next() {
        Some(pkg) => format!("{pkg}.{ty}"),
        None => ty.to_string(),
    }
}

/// The definition a schema refers to, directly or as `allOf: [{$ref}]` (how a described
/// field refers to its type).
fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .or_else(|| schema.at("/allOf/0/$ref"))
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
}

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Go's `reflect.Type.String()` of the field a schema describes.
fn go_type(schema: &Value) -> String {
    if let Some(name) = ref_name(schema) {
        return go_named(name);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => format!("[]{}", go_type(&schema["items"])),
        // Every map of quantities in the served kinds is core/v1's named `ResourceList`.
        Some("object") if ref_name(&schema["additionalProperties"]) == Some(QUANTITY) => {
            "v1.ResourceList".into()
        }
        Some("object") => format!("map[string]{}", go_type(&schema["additionalProperties"])),
        Some("integer") => schema
            .get("format")
            .and_then(Value::as_str)
            .unwrap_or("int64")
            .to_string(),
        Some("number") => "float64".into(),
        Some("boolean") => "bool".into(),
        Some("string") => "string".into(),
        _ => "interface {}".into(),
    }
}

/// Go's description of a JSON value that does not fit (`UnmarshalTypeError.Value`).
fn go_value(v: &Value) -> String {
    match v {
        Value::String(_) => "string".into(),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "bool".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

/// Why `value` does not fit `schema` in Go's words, or None when it fits.
fn misfit(defs: &Map<String, Value>, schema: &Value, value: &Value) -> Option<String> {
    let resolved = resolve(defs, schema).1;
    let ty = resolved.get("type").and_then(Value::as_str);
    let int_or_string = resolved.get("x-kubernetes-int-or-string").is_some();
    let fits = match (value, ty) {
        (Value::Null, _) => true,
        _ if int_or_string => matches!(value, Value::String(_)) || value.is_i64(),
        // resource.Quantity reads a bare number too.
        (Value::Number(_), Some("string")) => ref_name(schema) == Some(QUANTITY),
        (Value::String(_), Some("string")) => true,
        (Value::Number(n), Some("integer")) => {
            let bits32 = resolved.get("format").and_then(Value::as_str) == Some("int32");
            let fits = n
                .as_i64()
                .is_some_and(|i| !bits32 || i32::try_from(i).is_ok());
            if !fits {
                return Some(format!("number {n}"));
            }
            true
        }
        (Value::Number(_), Some("number")) => true,
        (Value::Bool(_), Some("boolean")) => true,
        (Value::Array(_), Some("array")) => true,
        (Value::Object(_), Some("object") | None) => true,
        _ => false,
    };
    (!fits).then(|| go_value(value))
}

/// A schema with its `$ref` followed, and the definition name it came from.
fn resolve<'a>(defs: &'a Map<String, Value>, schema: &'a Value) -> (Option<&'a str>, &'a Value) {
    match ref_name(schema) {
        Some(name) => (Some(name), defs.get(name).unwrap_or(schema)),
        None => (None, schema),
    }
}

/// The definition name of `def`'s kind among `defs` (`io.k8s.api.core.v1.Pod`).
fn root_name<'a>(def: &ResourceDef, defs: &'a Map<String, Value>) -> Option<&'a String> {
    let pkg = match def.group {
        "" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    let suffix = format!(".{pkg}.{}.{}", def.version, def.kind);
    defs.keys().find(|k| k.ends_with(&suffix))
}

/// Walk the schema along the path serde failed at; the Go message when the value there does
/// not fit its type.
fn mismatch(
    def: &ResourceDef,
    defs: &Map<String, Value>,
    input: &Value,
    path: &Path,
) -> Option<String> {
    let root = root_name(def, defs)?;
    let mut schema = defs.get(root)?;
    let mut current = Some(root.as_str());
    let mut owner = def.kind.to_string();
    let mut fields: Vec<String> = Vec::new();
    let mut value = input;
    for seg in path.iter() {
        let (name, resolved) = resolve(defs, schema);
        if name.is_some() {
            current = name;
        }
        match seg {
            Segment::Map { key } => {
                value = value.get(key)?;
                if let Some(p) = resolved.get("properties").and_then(|p| p.get(key)) {
                    owner = current
                        .and_then(|n| n.rsplit('.').next())
                        .unwrap_or_default()
                        .to_string();
                    fields.push(key.clone());
                    schema = p;
                } else {
                    schema = resolved.get("additionalProperties")?;
                }
                current = None;
            }
            Segment::Seq { index } => {
                value = value.get(*index)?;
                schema = resolved.get("items")?;
                current = None;
            }
            _ => return None,
        }
    }
    let what = misfit(defs, schema, value)?;
    let ty = go_type(schema);
    Some(if fields.is_empty() {
        format!("json: cannot unmarshal {what} into Go value of type {ty}")
    } else {
        format!(
            "json: cannot unmarshal {what} into Go struct field {owner}.{} of type {ty}",
            fields.join(".")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::registry::resources::lookup;

    /// The quantity check walks into a pod's containers and volumes, not its metadata, probes
    /// or tolerations (which hold none).
    #[test]
    fn only_types_leading_to_a_quantity_are_walked() {
        let Some(pods) = lookup("", "v1", "pods") else {
            return;
        };
        let types = types(pods);
        let holding = &types.holding;
        for t in ["PodSpec", "Container", "ResourceRequirements", "Volume"] {
            assert!(holding.contains(&format!("io.k8s.api.core.v1.{t}")), "{t}");
        }
        let spec = &types.props["io.k8s.api.core.v1.PodSpec"];
        for p in ["containers", "initContainers", "overhead", "volumes"] {
            assert!(spec.iter().any(|s| s == p), "{p} in {spec:?}");
        }
        assert!(!spec.iter().any(|s| s == "tolerations"), "{spec:?}");
        for t in [
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
            "io.k8s.api.core.v1.Probe",
            "io.k8s.api.core.v1.Toleration",
        ] {
            assert!(!holding.contains(t), "{t}");
        }
    }
}
