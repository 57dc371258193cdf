//! Hostile inputs straight into the parsers the fuzz targets exercise (`fuzz/`), as ordinary
//! tests: edge cases found by reading the code, and a regression test for every crash a fuzz
//! run finds (named after the target and the artifact). Each must return a value or an error.

use kexplore::scheduler::manifests::Manifests;
use kexplore::scheduler::quantity::{Quantity, resource_value};
use kexplore::scheduler::{Scheduler, simulate, version, world};

/// What the `quantity` fuzz target does with one input.
fn quantity_case(text: &str) {
    if let Ok(q) = Quantity::parse(text) {
        let _ = q.value();
        let _ = q.milli_value();
    }
    for r in ["cpu", "memory", "nvidia.com/gpu"] {
        let _ = resource_value(r, text);
    }
}

/// What the `manifests` fuzz target does with one input.
fn manifests_case(text: &str) {
    let mut m = Manifests::default();
    if m.add_text("hostile.yaml", text).is_err() {
        return;
    }
    let Ok(w) = world::build(&m, version::NEWEST) else {
        return;
    };
    let mut snapshot = w.snapshot;
    let mut s = Scheduler::new(version::NEWEST, None, 1);
    let _ = simulate(&mut s, &mut snapshot, w.pending);
}

#[test]
fn quantity_edge_cases_are_values_or_errors() {
    let long_zeros = format!("0.{}1", "0".repeat(100_000));
    let long_digits = "9".repeat(100_000);
    for text in [
        "",
        "-",
        "+",
        ".",
        "-.",
        "1..2",
        "1e",
        "1e+",
        "1e-9999",
        "1e9999",
        "-1e9999",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "340282366920938463463374607431768211455",
        "340282366920938463463374607431768211456",
        "1Ei",
        "16Ei",
        "8Ei",
        "7.99999999999999999999Ei",
        "0.000000000000000000000000000000000000000001m",
        "1n",
        "-0",
        "−1",
        "１",
        "1Ki ",
        " 1Ki",
        "1 Ki",
        "1ki",
        "1KiB",
        long_zeros.as_str(),
        long_digits.as_str(),
    ] {
        quantity_case(text);
    }
    assert_eq!(Quantity::parse("1e-9999").and_then(|q| q.value()), Ok(1));
    assert!(Quantity::parse("16Ei").and_then(|q| q.value()).is_err());
}

#[test]
fn manifest_edge_cases_are_values_or_errors() {
    let nested_flow = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let nested_json = format!("{}{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    let billion_laughs = "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    let pods = [
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b, resources: {requests: {cpu: \"-5\", memory: \"-1Ei\"}}}]}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b, resources: {requests: {cpu: \"8Ei\", memory: \"16Ei\"}}}]}\n",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: \"-1\", memory: \"-1\", pods: \"-1\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b}]}\n",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: \"9223372036854775807\", memory: \"8Ei\", pods: \"9223372036854775807\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: -2147483648, containers: [{name: a, image: b, resources: {requests: {cpu: \"9223372036854775807\"}}}]}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {topologySpreadConstraints: [{maxSkew: 0, topologyKey: \"\", whenUnsatisfiable: DoNotSchedule}], containers: [{name: a, image: b}]}\n",
        "kind: List\nitems: [1, \"x\", null, {kind: Pod}]\n",
        "--- !!binary AAAA\n",
        "? [a]\n: b\n",
    ];
    for text in [nested_flow.as_str(), nested_json.as_str(), billion_laughs]
        .into_iter()
        .chain(pods)
    {
        manifests_case(text);
    }
}
