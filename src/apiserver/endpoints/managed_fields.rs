//! `metadata.managedFields`: which manager owns which fields, as structured-merge-diff keeps it.
//! A field set is a set of paths; a path element is a field (`f:image`), a list item by its
//! list-map keys (`k:{"name":"nginx"}`) or a set member (`v:"x"`), the `FieldsV1` spellings.
//! Lists are keyed by [`list_types`]; a list it does not name is atomic (a leaf).
//!
//! Writers: every client's create, PUT, PATCH and apply, the scale subresource's too; the
//! kubelet's and kube-scheduler's pod status writes; the control loops' creates and updates
//! (`controllers::client`) and the autoscaler's scale writes. Not modelled: field sets per API
//! version (one version per kind is served), `i:` index elements (no served list is keyed by
//! position), structs marked atomic, fields whose value is `null` (left out of sets), and the
//! server's other own writes (the objects a fresh cluster or a scenario starts with, binding,
//! node heartbeats, deletion, namespace finalization, Lease renewals), which record no entry.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::apiserver::registry::list_types::{self, ListType};
use crate::apiserver::registry::openapi;
use crate::apiserver::registry::resources::{self, ResourceDef};
use crate::apiserver::request::context::Ctx;
use crate::apiserver::util;

/// One path element, ordered as its `FieldsV1` key sorts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Elem {
    Field(String),
    /// The JSON object of the item's key fields, names sorted (`{"containerPort":80,"protocol":"TCP"}`).
    Key(String),
    /// The JSON of a set member.
    Value(String),
}

pub(crate) type Path = Vec<Elem>;
pub(crate) type FieldSet = BTreeSet<Path>;

impl Elem {
    fn encode(&self) -> String {
        match self {
            Elem::Field(f) => format!("f:{f}"),
            Elem::Key(k) => format!("k:{k}"),
            Elem::Value(v) => format!("v:{v}"),
        }
    }

    fn decode(s: &str) -> Option<Elem> {
        let (kind, rest) = s.split_at_checked(2)?;
        match kind {
            "f:" => Some(Elem::Field(rest.into())),
            "k:" => Some(Elem::Key(rest.into())),
            "v:" => Some(Elem::Value(rest.into())),
            _ => None,
        }
    }
}

/// A path as structured-merge-diff prints it: `.spec.containers[name="nginx"].image`.
pub(crate) fn render(path: &[Elem]) -> String {
    let mut out = String::new();
    for e in path {
        match e {
            Elem::Field(f) => {
                out.push('.');
                out.push_str(f);
            }
            Elem::Key(k) => {
                let fields: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
                let parts: Vec<String> = fields.iter().map(|(n, v)| format!("{n}={v}")).collect();
                out.push_str(&format!("[{}]", parts.join(",")));
            }
            Elem::Value(v) => out.push_str(&format!("[={v}]")),
        }
    }
    out
}

/// The `FieldsV1` JSON of a set: a member with children gets a `.` entry.
pub(crate) fn encode(set: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut node = &mut root;
        for e in path {
            node = match node
                .entry(e.encode())
                .or_insert_with(|| json!({}))
                .as_object_mut()
            {
                Some(m) => m,
                None => break,
            };
        }
    }
    // Members that also have children are marked with `.`.
    fn mark(node: &mut Map<String, Value>, prefix: &mut Path, set: &FieldSet) {
        for (k, child) in node.iter_mut() {
            let Some(e) = Elem::decode(k) else { continue };
            prefix.push(e);
            if let Some(m) = child.as_object_mut() {
                mark(m, prefix, set);
                if !m.is_empty() && set.contains(prefix) {
                    m.insert(".".into(), json!({}));
                }
            }
            prefix.pop();
        }
    }
    mark(&mut root, &mut Vec::new(), set);
    Value::Object(root)
}

/// The set a `FieldsV1` JSON describes.
pub(crate) fn decode(v: &Value) -> FieldSet {
    fn walk(v: &Value, prefix: &mut Path, out: &mut FieldSet) {
        let Some(m) = v.as_object() else { return };
        for (k, child) in m {
            if k == "." {
                out.insert(prefix.clone());
                continue;
            }
            let Some(e) = Elem::decode(k) else { continue };
            prefix.push(e);
            if child.as_object().is_some_and(Map::is_empty) {
                out.insert(prefix.clone());
            } else {
                walk(child, prefix, out);
            }
            prefix.pop();
        }
    }
    let mut out = FieldSet::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

/// Metadata fields no manager owns (upstream's `stripSet`).
const STRIPPED_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// The value of a key field when the item leaves it out: the defaulted `protocol` of a port,
/// so `{containerPort: 80}` and `{containerPort: 80, protocol: TCP}` are the same item.
fn key_default(field: &str) -> Option<Value> {
    (field == "protocol").then(|| json!("TCP"))
}

pub(crate) fn item_key(item: &Value, keys: &[&str]) -> String {
    let mut m = Map::new();
    for k in keys {
        if let Some(v) = item.get(*k).cloned().or_else(|| key_default(k)) {
            m.insert((*k).to_string(), v);
        }
    }
    Value::Object(m).to_string()
}

/// Whether a list item is the one a `k:` element names.
pub(crate) fn item_matches(item: &Value, key: &str) -> bool {
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(key) else {
        return false;
    };
    fields
        .iter()
        .all(|(f, v)| item.get(f).cloned().or_else(|| key_default(f)).as_ref() == Some(v))
}

/// Whether a set member is the one a `v:` element names.
fn member_matches(item: &Value, member: &str) -> bool {
    serde_json::from_str::<Value>(member).is_ok_and(|m| *item == m)
}

/// Which part of an object a write covers: the main resource leaves `status` to its
/// subresource, and the status subresource owns nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Main,
    Status,
}

impl Scope {
    pub(crate) fn of(def: &ResourceDef, sub: &str) -> Option<Scope> {
        match sub {
            "status" => Some(Scope::Status),
            // `kubectl debug`'s subresource writes a part of the spec, a namespace's
            // `finalize` its finalizers.
            "" | "ephemeralcontainers" | "finalize" if def.subresources.contains(&"status") => {
                Some(Scope::Main)
            }
            "" => None,
            _ => Some(Scope::Status),
        }
    }
}

/// Every path `v` sets, as the manager that applied `v` owns it: leaves and list items.
pub(crate) fn field_set(def: &ResourceDef, scope: Option<Scope>, v: &Value) -> FieldSet {
    collect(def, scope, v, false)
}

/// The paths an Update that wrote `v` from nothing owns: those of [`field_set`] plus each map
/// (labels, annotations, nodeSelector) itself, as structured-merge-diff's comparison adds a
/// map that appears (the `.` under `f:labels` of a create's entry); structs are not added.
pub(crate) fn update_field_set(def: &ResourceDef, scope: Option<Scope>, v: &Value) -> FieldSet {
    collect(def, scope, v, true)
}

fn collect(def: &ResourceDef, scope: Option<Scope>, v: &Value, maps: bool) -> FieldSet {
    let schemas = openapi::kind_schemas(def);
    let root = openapi::root_schema(def);
    let mut w = Walk {
        schemas,
        maps,
        out: FieldSet::new(),
    };
    let Some(m) = v.as_object() else { return w.out };
    for (k, val) in m {
        let keep = match (k.as_str(), scope) {
            ("apiVersion" | "kind", _) => false,
            ("status", Some(Scope::Main)) => false,
            ("status", _) => true,
            (_, Some(Scope::Status)) => false,
            _ => true,
        };
        if !keep || val.is_null() {
            continue;
        }
        let mut path = vec![Elem::Field(k.clone())];
        if k == "metadata" {
            let Some(meta) = val.as_object() else {
                continue;
            };
            let meta_ty = list_types::property_type(schemas, &root, "metadata");
            for (mk, mv) in meta {
                if STRIPPED_META.contains(&mk.as_str()) || mv.is_null() {
                    continue;
                }
                path.push(Elem::Field(mk.clone()));
                w.field(meta_ty.as_deref(), mk, mv, &mut path);
                path.pop();
            }
        } else {
            w.field(Some(&root), k, val, &mut path);
        }
    }
    w.out
}

struct Walk<'a> {
    schemas: &'a Map<String, Value>,
    /// Whether maps are members too (an Update's comparison) or only their entries (apply).
    maps: bool,
    out: FieldSet,
}

impl Walk<'_> {
    /// Add the paths under field `name` (of schema `owner`, value `v`, at `path`).
    fn field(&mut self, owner: Option<&str>, name: &str, v: &Value, path: &mut Path) {
        let ty = owner.and_then(|o| list_types::property_type(self.schemas, o, name));
        match v {
            Value::Object(m) if !m.is_empty() => {
                if self.maps && owner.is_some_and(|o| list_types::is_map(self.schemas, o, name)) {
                    self.out.insert(path.clone());
                }
                self.object(ty.as_deref(), m, path)
            }
            Value::Array(items) if !items.is_empty() => {
                match owner
                    .and_then(|o| list_types::lookup(o, name))
                    .map(|d| d.list_type)
                {
                    Some(ListType::Map(keys)) => {
                        for item in items {
                            path.push(Elem::Key(item_key(item, keys)));
                            self.out.insert(path.clone());
                            if let Some(m) = item.as_object() {
                                self.object(ty.as_deref(), m, path);
                            }
                            path.pop();
                        }
                    }
                    Some(ListType::Set) => {
                        for item in items {
                            path.push(Elem::Value(item.to_string()));
                            self.out.insert(path.clone());
                            path.pop();
                        }
                    }
                    _ => {
                        self.out.insert(path.clone());
                    }
                }
            }
            _ => {
                self.out.insert(path.clone());
            }
        }
    }

    fn object(&mut self, ty: Option<&str>, m: &Map<String, Value>, path: &mut Path) {
        for (k, v) in m {
            if v.is_null() {
                continue;
            }
            path.push(Elem::Field(k.clone()));
            self.field(ty, k, v, path);
            path.pop();
        }
    }
}

/// The value at `path` in `v`.
pub(crate) fn get<'a>(v: &'a Value, path: &[Elem]) -> Option<&'a Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(v);
    };
    let next = match first {
        Elem::Field(f) => v.get(f)?,
        Elem::Key(k) => v.as_array()?.iter().find(|i| item_matches(i, k))?,
        Elem::Value(s) => v.as_array()?.iter().find(|i| member_matches(i, s))?,
    };
    get(next, rest)
}

/// Remove what `path` names from `v` (a field, a list item, a set member).
pub(crate) fn remove(v: &mut Value, path: &[Elem]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    let Some(p) = get_mut(v, parent) else { return };
    match (last, p) {
        (Elem::Field(f), Value::Object(m)) => {
            m.remove(f);
        }
        (Elem::Key(k), Value::Array(a)) => a.retain(|i| !item_matches(i, k)),
        (Elem::Value(s), Value::Array(a)) => a.retain(|i| !member_matches(i, s)),
        _ => {}
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[Elem]) -> Option<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(v);
    };
    let next = match first {
        Elem::Field(f) => v.get_mut(f)?,
        Elem::Key(k) => v.as_array_mut()?.iter_mut().find(|i| item_matches(i, k))?,
        Elem::Value(s) => v.as_array_mut()?.iter_mut().find(|i| i.to_string() == *s)?,
    };
    get_mut(next, rest)
}

/// What a write changed, path by path (structured-merge-diff's `Comparison`).
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    pub(crate) fn changed(&self) -> FieldSet {
        self.added.union(&self.modified).cloned().collect()
    }
}

pub(crate) fn compare(
    def: &ResourceDef,
    scope: Option<Scope>,
    old: &Value,
    new: &Value,
) -> Comparison {
    let a = update_field_set(def, scope, old);
    let b = update_field_set(def, scope, new);
    let modified = a
        .intersection(&b)
        .filter(|p| !has_descendant(&b, p) && get(old, p) != get(new, p))
        .cloned()
        .collect();
    Comparison {
        added: b.difference(&a).cloned().collect(),
        removed: a.difference(&b).cloned().collect(),
        modified,
    }
}

fn is_prefix(prefix: &[Elem], path: &[Elem]) -> bool {
    path.len() > prefix.len() && path.starts_with(prefix)
}

/// Whether `set` holds a path below `p` (the paths below `p` sort right after it).
pub(crate) fn has_descendant(set: &FieldSet, p: &[Elem]) -> bool {
    use std::ops::Bound::{Excluded, Unbounded};
    set.range::<Path, _>((Excluded(p.to_vec()), Unbounded))
        .next()
        .is_some_and(|next| is_prefix(p, next))
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: String,
    pub set: FieldSet,
}

impl Entry {
    pub(crate) fn is_apply(&self) -> bool {
        self.operation == "Apply"
    }

    fn same_owner(&self, manager: &str, operation: &str, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }

    /// How a conflict names the manager (upstream's `printManager`).
    pub(crate) fn printed(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if !self.is_apply() {
            s.push_str(&format!(" using {}", self.api_version));
            if let Some(t) = &self.time {
                s.push_str(&format!(" at {t}"));
            }
        }
        s
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), encode(&self.set));
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }
}

/// The entries stored on `obj`.
pub(crate) fn entries(obj: &Value) -> Vec<Entry> {
    let Some(items) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let s = |i: &Value, k: &str| i.get(k).and_then(Value::as_str).map(String::from);
    items
        .iter()
        .map(|i| Entry {
            manager: s(i, "manager").unwrap_or_default(),
            operation: s(i, "operation").unwrap_or_default(),
            api_version: s(i, "apiVersion").unwrap_or_default(),
            time: s(i, "time"),
            subresource: s(i, "subresource").unwrap_or_default(),
            set: i.get("fieldsV1").map(decode).unwrap_or_default(),
        })
        .collect()
}

/// Store `entries` on `obj`, without the empty ones, in upstream's order (operation, time,
/// manager).
pub(crate) fn store(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        (&a.operation, &a.time, &a.manager, &a.subresource).cmp(&(
            &b.operation,
            &b.time,
            &b.manager,
            &b.subresource,
        ))
    });
    let list: Vec<Value> = entries.iter().map(Entry::to_json).collect();
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            m.remove("managedFields");
        } else {
            m.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// The entry of (`manager`, `operation`, `subresource`), created empty when missing.
pub(crate) fn entry_mut<'a>(
    entries: &'a mut Vec<Entry>,
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: &str,
) -> &'a mut Entry {
    let i = match entries
        .iter()
        .position(|e| e.same_owner(manager, operation, subresource))
    {
        Some(i) => i,
        None => {
            entries.push(Entry {
                manager: manager.into(),
                operation: operation.into(),
                api_version: api_version.into(),
                time: None,
                subresource: subresource.into(),
                set: FieldSet::new(),
            });
            entries.len() - 1
        }
    };
    &mut entries[i]
}

/// The managed fields after an Update (PUT, non-apply PATCH) by `manager` turned `old` into
/// `new`: the manager gains what it added or changed, everyone loses what changed under them
/// or was removed. An update that changes nothing leaves them as they were. The entries start
/// from those the request `sent` when it sent any (a client may rewrite them, as kubectl does
/// when it moves client-side apply's fields to server-side apply), else from `old`'s
/// (upstream's `decodeLiveOrNew`); a subresource write never rewrites them.
pub(crate) fn record_update(
    def: &ResourceDef,
    sub: &str,
    old: &Value,
    sent: &Value,
    new: &mut Value,
    manager: &str,
    now: &str,
) {
    let scope = Scope::of(def, sub);
    let cmp = compare(def, scope, old, new);
    let mut list = Some(entries(sent))
        .filter(|l| sub.is_empty() && !l.is_empty())
        .unwrap_or_else(|| entries(old));
    take_changes(&mut list, &cmp, def, manager, sub, now);
    store(new, list);
}

/// `manager`'s Update entry for `sub` gains what `cmp` saw changed; every entry loses what
/// changed under it or was removed. Nothing moves when nothing changed.
fn take_changes(
    list: &mut Vec<Entry>,
    cmp: &Comparison,
    def: &ResourceDef,
    manager: &str,
    sub: &str,
    now: &str,
) {
    if cmp.is_empty() {
        return;
    }
    let changed = cmp.changed();
    for e in list.iter_mut() {
        e.set
            .retain(|p| !changed.contains(p) && !cmp.removed.contains(p));
    }
    let e = entry_mut(list, manager, "Update", &def.api_version(), sub);
    e.set.extend(changed);
    e.api_version = def.api_version();
    e.time = Some(now.to_string());
}

/// A control loop's write of a whole object (`controllers::client::update`). Upstream's
/// controllers send an object's spec and metadata and its status in separate calls (Update,
/// UpdateStatus), so what changed outside `status` goes to `manager`'s entry and what changed
/// in it to the manager's entry with subresource `status`, for kinds that serve one.
pub(crate) fn record_own_write(def: &ResourceDef, old: &Value, new: &mut Value, manager: &str) {
    let subs: &[&str] = if def.subresources.contains(&"status") {
        &["", "status"]
    } else {
        &[""]
    };
    let now = util::now();
    let mut list = entries(old);
    let before = list.clone();
    for sub in subs {
        let cmp = compare(def, Scope::of(def, sub), old, new);
        take_changes(&mut list, &cmp, def, manager, sub, &now);
    }
    if list != before {
        store(new, list);
    }
}

/// What a create's Update entry owns: the fields of `sent` (defaulted) less the top-level ones
/// sent empty (`spec: {}`, `data: {}`). Upstream's field manager compares the new object with
/// the kind's zero value, which holds every top-level struct already and leaves empty maps
/// out, so `kubectl create namespace` owns the name label and no `f:spec`.
pub(crate) fn created_field_set(def: &ResourceDef, sent: &Value) -> FieldSet {
    let mut set = update_field_set(def, Scope::of(def, ""), sent);
    if let Some(top) = sent.as_object() {
        let empty = |f: &str| {
            top.get(f)
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty)
        };
        set.retain(|p| !matches!(p.as_slice(), [Elem::Field(f)] if empty(f)));
    }
    set
}

/// A created object's managed fields: the one entry of `manager`, owning `fields`, what it
/// sent once defaulted (`operation` `Update`, or `Apply` for a server-side apply). An Update
/// that owns nothing (`kubectl create serviceaccount`, a namespace's `default` account) records
/// no entry, as upstream's updater drops a manager whose set is empty; an applier keeps its
/// entry, empty or not.
pub(crate) fn stamp_created(
    obj: &mut Value,
    def: &ResourceDef,
    manager: &str,
    operation: &str,
    fields: &FieldSet,
    now: &str,
) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if operation == "Update" && fields.is_empty() {
        meta.remove("managedFields");
        return;
    }
    meta.insert(
        "managedFields".into(),
        json!([{
            "manager": manager, "operation": operation, "apiVersion": def.api_version(), "time": now,
            "fieldsType": "FieldsV1", "fieldsV1": encode(fields),
        }]),
    );
}

/// The managed fields after `manager` wrote `spec.replicas` through the scale subresource
/// (upstream's `ScaleHandler`): the count moves to an Update entry of the manager's with
/// subresource `scale`, in the parent's apiVersion, and every other entry loses it. A write
/// that leaves the count as it was changes no entry.
pub(crate) fn record_scale(
    def: &ResourceDef,
    old: &Value,
    new: &mut Value,
    manager: &str,
    now: &str,
) {
    if old.pointer("/spec/replicas") == new.pointer("/spec/replicas") {
        return;
    }
    let replicas: Path = vec![Elem::Field("spec".into()), Elem::Field("replicas".into())];
    let mut list = entries(old);
    for e in list.iter_mut() {
        e.set.remove(&replicas);
    }
    let e = entry_mut(&mut list, manager, "Update", &def.api_version(), "scale");
    e.set.insert(replicas);
    e.api_version = def.api_version();
    e.time = Some(now.to_string());
    store(new, list);
}

/// A control loop's write of a pod's status (the kubelet, kube-scheduler): upstream they PATCH
/// the status subresource, which records an Update entry for them like any client's.
pub(crate) fn record_pod_status_write(cur: &Value, next: &mut Value, manager: &str) {
    if let Some(def) = resources::by_kind("", "Pod") {
        let sent = next.clone();
        record_update(def, "status", cur, &sent, next, manager, &util::now());
    }
}

/// How an update records its managed fields.
#[derive(Debug, Clone)]
pub(crate) enum Stamp {
    /// An Update by this manager: ownership follows what it changed.
    Update(String),
    /// A server-side apply: the request worked the entries out; they are stored as sent.
    Applied,
}

impl Stamp {
    /// The Update of the request's manager.
    pub(crate) fn update(ctx: &Ctx<'_>) -> Stamp {
        Stamp::Update(request_manager(ctx))
    }

    /// Put the managed fields on `next`, the object about to replace `cur`.
    pub(crate) fn record(
        &self,
        def: &ResourceDef,
        sub: &str,
        cur: &Value,
        incoming: &Value,
        next: &mut Value,
    ) {
        match self {
            Stamp::Update(manager) => {
                record_update(def, sub, cur, incoming, next, manager, &util::now())
            }
            Stamp::Applied => {
                let applied = incoming.pointer("/metadata/managedFields").cloned();
                if let Some(m) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                    match applied {
                        Some(v) => m.insert("managedFields".into(), v),
                        None => m.remove("managedFields"),
                    };
                }
            }
        }
    }
}

/// The manager of the request in `ctx`, by [`manager_name`].
pub(crate) fn request_manager(ctx: &Ctx<'_>) -> String {
    manager_name(ctx.info.query("fieldManager"), &ctx.user_agent)
}

/// The manager a write names: `?fieldManager=`, else the User-Agent up to its first `/`
/// (upstream's `prefixFromUserAgent`), at most 128 characters.
pub(crate) fn manager_name(field_manager: Option<&str>, user_agent: &str) -> String {
    match field_manager {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => user_agent
            .split('/')
            .next()
            .unwrap_or_default()
            .chars()
            .take(128)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::registry::resources;

    fn pod() -> &'static ResourceDef {
        resources::lookup("", "v1", "pods").expect("pods are served")
    }

    #[test]
    fn a_pod_s_fields_as_upstream_spells_them() {
        let v = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}],
                     "tolerations": [{"key": "k", "operator": "Exists"}]},
            "status": {"phase": "Pending"}});
        let set = field_set(pod(), Scope::of(pod(), ""), &v);
        assert_eq!(
            encode(&set),
            json!({
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {"k:{\"name\":\"nginx\"}": {
                        ".": {}, "f:image": {}, "f:name": {},
                        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}},
                    }},
                    "f:tolerations": {},
                },
            })
        );
        assert_eq!(decode(&encode(&set)), set);
        let image = set
            .iter()
            .find(|p| p.last() == Some(&Elem::Field("image".into())))
            .map(|p| render(p));
        assert_eq!(
            image.as_deref(),
            Some(".spec.containers[name=\"nginx\"].image")
        );
        let port = set
            .iter()
            .find(|p| p.last() == Some(&Elem::Field("containerPort".into())))
            .cloned()
            .unwrap_or_default();
        assert_eq!(get(&v, &port), Some(&json!(80)));
    }

    #[test]
    fn an_update_from_nothing_owns_the_maps_it_added_but_not_the_structs() {
        let v = json!({"metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "i", "resources": {}}]}});
        assert_eq!(
            encode(&update_field_set(pod(), Scope::of(pod(), ""), &v)),
            json!({
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}},
                    "f:nodeSelector": {".": {}, "f:disk": {}},
                },
            })
        );
    }

    #[test]
    fn an_update_moves_ownership_of_what_it_changed() {
        let old = json!({"metadata": {"name": "p", "labels": {"a": "1", "b": "2", "d": "4"},
            "managedFields": [{"manager": "first", "operation": "Update", "apiVersion": "v1",
                "time": "t0", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}, "f:d": {}}}}}]}});
        let mut new = old.clone();
        new["metadata"]["labels"] = json!({"a": "9", "c": "3", "d": "4"});
        let sent = new.clone();
        record_update(pod(), "", &old, &sent, &mut new, "second", "t1");
        let list = entries(&new);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].manager, "first");
        assert_eq!(
            encode(&list[0].set),
            json!({"f:metadata": {"f:labels": {"f:d": {}}}})
        );
        assert_eq!(
            encode(&list[1].set),
            json!({"f:metadata": {"f:labels": {"f:a": {}, "f:c": {}}}})
        );
    }

    #[test]
    fn a_scale_write_moves_the_replicas_to_its_writer() {
        let def = resources::lookup("apps", "v1", "deployments").expect("deployments");
        let applied = json!({"f:spec": {"f:replicas": {}, "f:paused": {}}});
        let old = json!({"metadata": {"managedFields": [{"manager": "kubectl", "operation": "Apply",
            "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": applied}]},
            "spec": {"replicas": 2, "paused": false}});
        let mut same = old.clone();
        record_scale(def, &old, &mut same, "hpa", "T");
        assert_eq!(same, old, "an unchanged count changes no entry");
        let mut next = old.clone();
        next["spec"]["replicas"] = json!(5);
        record_scale(def, &old, &mut next, "hpa", "T");
        let list = entries(&next);
        assert_eq!(list.len(), 2);
        assert_eq!(encode(&list[0].set), json!({"f:spec": {"f:paused": {}}}));
        assert_eq!(
            (
                list[1].manager.as_str(),
                list[1].operation.as_str(),
                list[1].subresource.as_str()
            ),
            ("hpa", "Update", "scale")
        );
        assert_eq!(encode(&list[1].set), json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(
            list[1].printed(),
            "\"hpa\" with subresource \"scale\" using apps/v1 at T"
        );
    }

    #[test]
    fn a_control_loops_write_splits_into_its_update_and_its_status_entries() {
        let def = resources::lookup("apps", "v1", "deployments").expect("deployments");
        let mine = json!({"f:spec": {"f:replicas": {}}});
        let old = json!({"metadata": {"managedFields": [{"manager": "kubectl", "operation": "Apply",
            "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": mine}]},
            "spec": {"replicas": 2}});
        let mut same = old.clone();
        record_own_write(def, &old, &mut same, "kcm");
        assert_eq!(same, old, "nothing changed, no entry moves");
        let mut next = old.clone();
        next["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
        next["status"] = json!({"replicas": 2, "observedGeneration": 1});
        record_own_write(def, &old, &mut next, "kcm");
        let list = entries(&next);
        let find = |sub: &str| {
            list.iter()
                .find(|e| e.manager == "kcm" && e.operation == "Update" && e.subresource == sub)
                .map(|e| encode(&e.set))
        };
        assert_eq!(
            find(""),
            Some(json!({"f:metadata": {"f:annotations": {
                ".": {}, "f:deployment.kubernetes.io/revision": {}}}}))
        );
        assert_eq!(
            find("status"),
            Some(json!({"f:status": {"f:observedGeneration": {}, "f:replicas": {}}}))
        );
        assert_eq!(
            list.iter()
                .find(|e| e.manager == "kubectl")
                .map(|e| encode(&e.set)),
            Some(mine)
        );
        // A kind without a status subresource: one entry for all it changed.
        let cm = resources::lookup("", "v1", "configmaps").expect("configmaps");
        let old = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
        let mut next = old.clone();
        next["data"]["b"] = json!("2");
        record_own_write(cm, &old, &mut next, "kcm");
        let list = entries(&next);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].subresource, "");
        assert_eq!(encode(&list[0].set), json!({"f:data": {"f:b": {}}}));
    }
}
