//! Server-side printing: `meta.k8s.io/v1` Table responses for `kubectl get`, with the columns
//! kube-apiserver's printers produce (`pkg/printers/internalversion`, specs/apiserver.md §10).

use serde_json::{Value, json};

use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::registry::strategy::Strategy;

/// A row's cells, from the kind's strategy (upstream's default convertor when it has none).
fn cells(group: &str, kind: &str, o: &Value) -> Vec<Value> {
    match strategies::of(group, kind) {
        Some(k) => k.cells(o),
        None => strategies::Default.cells(o),
    }
}

fn columns(group: &str, kind: &str) -> Vec<Value> {
    match strategies::of(group, kind) {
        Some(k) => k.columns(),
        None => strategies::Default.columns(),
    }
}

/// PartialObjectMetadata for a row (`includeObject=Metadata`, the default).
fn row_object(o: &Value, include: &str, table_v1beta1: bool) -> Option<Value> {
    match include {
        "None" => None,
        "Object" => Some(o.clone()),
        _ => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": if table_v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
            "metadata": o.get("metadata").cloned().unwrap_or(json!({})),
        })),
    }
}

/// A Table of `items`; `with_columns` false for watch events after the first.
pub fn table(
    def: &ResourceDef,
    items: &[&Value],
    rv: &str,
    include: &str,
    v1beta1: bool,
    with_columns: bool,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(def.group, def.kind, o)});
            if let Some(obj) = row_object(o, include, v1beta1) {
                row["object"] = obj;
            }
            row
        })
        .collect();
    let mut t = json!({
        "kind": "Table",
        "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
        "metadata": {"resourceVersion": rv},
    });
    if with_columns {
        t["columnDefinitions"] = Value::Array(columns(def.group, def.kind));
    } else {
        t["columnDefinitions"] = Value::Null;
    }
    t["rows"] = Value::Array(rows);
    t
}
