//! The text report of `kexplore certs`, pinned for two samples (paths redacted, clock fixed):
//! the layout is part of what users read, so changes to it should be deliberate.

mod common;

use kexplore::kubeconfig::{Kubeconfig, Selection};

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600;

fn text(file: &str) -> String {
    let path = common::samples().join(file);
    let kc = Kubeconfig::load(&Selection::Explicit(path)).expect("load");
    let ctx = kc.resolve(None).expect("resolve");
    let report = kexplore::pki::inspect_at(&ctx, NOW).expect("inspect");
    kexplore::pki::render::text(&report, NOW)
        .replace(&common::root().display().to_string(), "[ROOT]")
}

#[test]
fn text_alibaba_style() {
    insta::assert_snapshot!(text("alibaba-style.yaml"));
}

#[test]
fn text_intermediate_ca() {
    insta::assert_snapshot!(text("intermediate-ca.yaml"));
}

#[test]
fn text_file_references() {
    insta::assert_snapshot!(text("file-references/config"));
}
