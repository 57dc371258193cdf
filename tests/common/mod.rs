//! Helpers shared by the certs tests: where the samples are, and every (kubeconfig, context).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kexplore::kubeconfig::{Kubeconfig, ResolvedContext, Selection};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn samples() -> PathBuf {
    root().join("sample-kubeconfigs")
}

/// Every sample kubeconfig (the `*.yaml` files and `file-references/config`).
pub fn sample_kubeconfigs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(samples())
        .expect("sample-kubeconfigs/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    out.push(samples().join("file-references").join("config"));
    out.sort();
    out
}

/// Every context of every sample, resolved.
pub fn all_contexts() -> Vec<(PathBuf, ResolvedContext)> {
    let mut out = Vec::new();
    for path in sample_kubeconfigs() {
        let kc = Kubeconfig::load(&Selection::Explicit(path.clone()))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for name in kc.context_names() {
            let ctx = kc
                .resolve(Some(&name))
                .unwrap_or_else(|e| panic!("{} {name}: {e}", path.display()));
            out.push((path.clone(), ctx));
        }
    }
    out
}

/// Every `*.crt` file under `sample-kubeconfigs/` (the server side of the chains).
pub fn crt_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(crt_files(&p));
            } else if p.extension().is_some_and(|x| x == "crt") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
