//! The files of src/apiserver import each other without a cycle, so each stage of the request
//! pipeline can be read (and replaced) knowing only what lies below it. Imports are read from the
//! source (`use super::…`, `crate::apiserver::…` paths, brace groups included); unit-test modules
//! are left out, since a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every file under `dir` as its module path below `src/apiserver` (`mod.rs` is its folder).
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if p.is_dir() {
            let mut sub = prefix.to_vec();
            sub.push(name);
            modules(&p, &sub, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut m = prefix.to_vec();
            if stem != "mod" {
                m.push(stem.to_string());
            }
            let src = std::fs::read_to_string(&p).unwrap_or_default();
            out.insert(m, src);
        }
    }
}

/// The source without unit tests and line comments.
fn code(src: &str) -> String {
    let src = match src.find("#[cfg(test)]\nmod tests") {
        Some(i) => &src[..i],
        None => src,
    };
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a use tree such as `{a, b::{c, d}}` or `a::B` names, below `base`.
fn expand(base: &[String], tree: &str, out: &mut Vec<Module>) {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(base, &inner[start..], out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (head, rest) = match tree.split_once("::") {
        Some((h, r)) => (h.trim(), Some(r)),
        None => (tree.split_whitespace().next().unwrap_or_default(), None),
    };
    let mut path = base.to_vec();
    if head != "self" && head != "*" {
        path.push(head.to_string());
    }
    match rest {
        Some(r) => expand(&path, r, out),
        None => out.push(path),
    }
}

/// The text of a use tree starting at `s`: up to the matching `}` for a brace group, else the
/// path characters.
fn tree_at(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &s[..=i];
                }
            }
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => return &s[..i],
            _ => {}
        }
    }
    s
}

/// Which files each file imports.
fn graph(files: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let resolve = |path: &Module| -> Option<Module> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| files.contains_key(m))
    };
    let mut edges = BTreeMap::new();
    for (module, src) in files {
        let code = code(src);
        // `super` of a file is its folder; of a folder's mod.rs, the folder's parent.
        let here: Module = module[..module.len().saturating_sub(1)].to_vec();
        let mut paths = Vec::new();
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < code.len() {
            let word_start =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            let rest = &code[i..];
            if word_start && rest.starts_with("crate::apiserver::") {
                let t = tree_at(&rest["crate::apiserver::".len()..]);
                expand(&[], t, &mut paths);
                i += "crate::apiserver::".len() + t.len().max(1);
            } else if word_start && rest.starts_with("super::") {
                let mut base = here.clone();
                let mut r = &rest["super::".len()..];
                while let Some(next) = r.strip_prefix("super::") {
                    base.pop();
                    r = next;
                }
                let t = tree_at(r);
                expand(&base, t, &mut paths);
                i += rest.len() - r.len() + t.len().max(1);
            } else {
                i += rest.chars().next().map_or(1, char::len_utf8);
            }
        }
        let deps: BTreeSet<Module> = paths
            .iter()
            .filter_map(resolve)
            .filter(|d| d != module)
            .collect();
        edges.insert(module.clone(), deps);
    }
    edges
}

/// The groups of two or more files that import each other, round and round (Tarjan).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a Module) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for u in w.edges.get(v).into_iter().flatten() {
            let Some((u, _)) = w.edges.get_key_value(u) else {
                continue;
            };
            if !w.index.contains_key(u) {
                visit(w, u);
                let l = w.low[v].min(w.low[u]);
                w.low.insert(v, l);
            } else if w.on_stack.contains(u) {
                let l = w.low[v].min(w.index[u]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = Vec::new();
            while let Some(u) = w.stack.pop() {
                w.on_stack.remove(u);
                group.push(u.clone());
                if u == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                w.found.push(group);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "mod".into()
    } else {
        m.join("/")
    }
}

#[test]
fn apiserver_files_import_without_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/apiserver");
    let mut files = BTreeMap::new();
    modules(&root, &[], &mut files);
    assert!(files.len() > 40, "read only {} files", files.len());
    let edges = graph(&files);
    let report: Vec<String> = cycles(&edges)
        .iter()
        .map(|group| {
            let members: BTreeSet<&Module> = group.iter().collect();
            group
                .iter()
                .map(|m| {
                    let inside: Vec<String> = edges[m]
                        .iter()
                        .filter(|d| members.contains(d))
                        .map(name)
                        .collect();
                    format!("  {} -> {}", name(m), inside.join(", "))
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert!(
        report.is_empty(),
        "files in src/apiserver import each other in a cycle:\n{}",
        report.join("\n\n")
    );
}

/// The shared request types (`request/`) are what every stage imports, so they import no stage
/// that handles a request: no endpoint, admission plugin, registry entry or controller, and not
/// the handler chain.
#[test]
fn the_shared_request_types_import_no_handling_stage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/apiserver");
    let mut files = BTreeMap::new();
    modules(&root, &[], &mut files);
    let handling = |m: &Module| {
        matches!(
            m.first().map(String::as_str),
            Some("endpoints" | "admission" | "registry" | "controllers")
        ) || m.as_slice() == ["filters", "chain"]
    };
    let edges = graph(&files);
    let wrong: Vec<String> = edges
        .iter()
        .filter(|(m, _)| m.first().map(String::as_str) == Some("request"))
        .flat_map(|(m, deps)| {
            deps.iter()
                .filter(|d| handling(d))
                .map(move |d| format!("{} -> {}", name(m), name(d)))
        })
        .collect();
    assert!(
        edges
            .keys()
            .any(|m| m.first().map(String::as_str) == Some("request")),
        "no request/ folder read"
    );
    assert!(
        wrong.is_empty(),
        "request/ imports a handling stage: {wrong:?}"
    );
}

fn files(list: &[(&str, &str)]) -> BTreeMap<Module, String> {
    list.iter()
        .map(|(path, src)| {
            let m = if path.is_empty() {
                Vec::new()
            } else {
                path.split('/').map(String::from).collect()
            };
            (m, src.to_string())
        })
        .collect()
}

#[test]
fn the_check_sees_cycles_through_super_braces_and_crate_paths() {
    let cyclic = files(&[
        ("", "pub mod a;\npub mod b;"),
        ("a", "pub mod x;\npub mod y;"),
        ("a/x", "use super::{y::{self, Thing}, other};\n"),
        ("a/y", "fn f() { crate::apiserver::b::z::call(); }"),
        ("b", "pub mod z;"),
        ("b/z", "use super::super::a::x;\n#[cfg(test)]\nmod tests {}"),
    ]);
    let found = cycles(&graph(&cyclic));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].iter().map(name).collect::<Vec<_>>(),
        ["a/x", "a/y", "b/z"]
    );

    // The same files with the back edge only in comments and unit tests: no cycle.
    let acyclic = files(&[
        ("", "pub mod a;\npub mod b;"),
        ("a", "pub mod x;\npub mod y;"),
        ("a/x", "use super::{y::{self, Thing}, other};\n"),
        ("a/y", "fn f() { crate::apiserver::b::z::call(); }"),
        ("b", "pub mod z;"),
        (
            "b/z",
            "// use super::super::a::x;\n#[cfg(test)]\nmod tests { use crate::apiserver::a::x; }",
        ),
    ]);
    assert!(cycles(&graph(&acyclic)).is_empty());
}
