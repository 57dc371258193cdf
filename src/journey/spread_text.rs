//! PodTopologySpread's reasoning as lines (the CLI's score stage, view 4): which constraints,
//! whose selector, each domain's matching pods and the skew the pod would make on each node,
//! beside the scores the scheduler gave. Everything comes from the server's report
//! (`scheduler::spread_why`), so nothing here is recomputed or guessed.

use serde_json::Value;

fn s(v: &Value, p: &str) -> String {
    match v.pointer(p) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The short name of a topology key (`hostname`, `zone`).
fn short(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// Whose pods the constraints count.
pub fn selected_by(sp: &Value) -> String {
    let mut by = Vec::new();
    if let Some(o) = sp.get("owner").filter(|o| o.is_object()) {
        let sel = s(o, "/selector");
        by.push(if sel.is_empty() {
            format!("{} {}", s(o, "/kind"), s(o, "/name"))
        } else {
            format!("{} {} ({sel})", s(o, "/kind"), s(o, "/name"))
        });
    }
    for svc in sp["services"].as_array().into_iter().flatten() {
        by.push(format!("a Service ({})", svc.as_str().unwrap_or_default()));
    }
    by.join(" and ")
}

pub fn lines(sp: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let from = s(sp, "/constraints_from");
    if from == "system defaults" {
        out.push(format!(
            "PodTopologySpread: no constraints of its own, so the system defaults count the pods selected by {}",
            selected_by(sp)
        ));
    } else {
        out.push(format!("PodTopologySpread: {from}"));
    }
    for c in sp["constraints"].as_array().into_iter().flatten() {
        let key = s(c, "/topologyKey");
        let domains: Vec<String> = c["domains"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| format!("{} {}", s(d, "/value"), s(d, "/matching")))
            .collect();
        let head = format!(
            "  {key} maxSkew {} {}",
            s(c, "/maxSkew"),
            s(c, "/whenUnsatisfiable")
        );
        out.push(if domains.is_empty() {
            format!("{head}: no scored node has this label, so it counts nothing")
        } else {
            format!(
                "{head}: matching pods {} (min {})",
                domains.join(", "),
                s(c, "/min")
            )
        });
    }
    for n in sp["nodes"].as_array().into_iter().flatten() {
        let per: Vec<String> = n["constraints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["value"].is_string())
            .map(|c| {
                format!(
                    "{} {} matching, skew if here {}",
                    short(&s(c, "/topologyKey")),
                    s(c, "/matching"),
                    s(c, "/skew_if_here")
                )
            })
            .collect();
        out.push(format!(
            "  {:<12} {} → raw {}, normalized {}",
            s(n, "/node"),
            per.join("; "),
            s(n, "/raw"),
            s(n, "/normalized")
        ));
    }
    out.push("  fewer matching pods in the node's domain (a smaller skew) score higher".into());
    out
}
