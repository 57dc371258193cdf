//! `kexplore schedule -f FILE...`: read manifests, run the scheduler simulation pod by pod,
//! print per-node tables (text) or the contract's JSON. Without -f, the selected context's
//! cluster is listed instead ("why is my pod Pending?"); `--pod NS/NAME` explains one pod and,
//! when it is bound, compares the simulation's node with the real one.

use std::fmt::Write as _;

use serde::Serialize;

use super::{CommandError, CommandResult};
use crate::cli::{GlobalArgs, OutputFormat, ScheduleArgs};
use crate::client::http::ApiClient;
use crate::client::snapshot::{EncodedPods, FetchOptions, fetch_live_with};
use crate::kubeconfig::{Kubeconfig, Selection};
use crate::scheduler::manifests::Manifests;
use crate::scheduler::plugins;
use crate::scheduler::profile::config;
use crate::scheduler::release::{Basis, Modelling};
use crate::scheduler::trace::{FilterVerdict, NodeScore, PodTrace};
use crate::scheduler::why::{self, Comparison, Modelled};
use crate::scheduler::{KubeVersion, PodInfo, Scheduler, simulate, world};
use crate::wrap::wrap;

#[derive(Serialize)]
struct Output<'a> {
    profile: &'a str,
    kube_version: String,
    /// Which release is modelled and why (default, --kube-version, the server's /version).
    release: &'a Modelling,
    seed: u64,
    pods: &'a [PodTrace],
    /// What the simulation models (plugins judged, weights, plugins passing every node).
    modelled: &'a Modelled,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<ClusterInfo>,
    /// `--pod` on a bound pod: the simulation's node next to the real one.
    #[serde(skip_serializing_if = "<[Comparison]>::is_empty")]
    comparisons: &'a [Comparison],
    /// What the simulation assumed for valid but incomplete input ("node1: no allocatable
    /// reported: treated as 0").
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

/// Where a live run's nodes and pods came from.
#[derive(Serialize, Clone)]
struct ClusterInfo {
    server: String,
    context: String,
    /// `/version`'s gitVersion, when the server answered it.
    server_version: Option<String>,
    /// Collections RBAC kept from this user, and what that means for the simulation.
    not_visible: Vec<String>,
}

/// Nodes and pods, the pods of a live cluster still encoded unless one is in focus, and
/// where a live cluster's came from.
type Input = (
    Manifests,
    Option<EncodedPods>,
    Option<(ClusterInfo, Modelling)>,
);

/// Nodes and pods: from files, or listed from the live cluster.
fn input(global: &GlobalArgs, args: &ScheduleArgs) -> Result<Input, CommandError> {
    if !args.files.is_empty() {
        let mut manifests = Manifests::default();
        for path in &args.files {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CommandError::Input(format!("{}: {e}", path.display())))?;
            manifests
                .add_text(&path.display().to_string(), &text)
                .map_err(|e| CommandError::Input(e.to_string()))?;
        }
        return Ok((manifests, None, None));
    }
    let selection = Selection::from_environment(global.kubeconfig.as_deref()).ok_or_else(|| {
        CommandError::Input(
            "no manifests (-f FILE) and no kubeconfig to list a cluster from".into(),
        )
    })?;
    let ctx = Kubeconfig::load(&selection)?.resolve(global.context.as_deref())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    let live = rt.block_on(async {
        let api = ApiClient::connect(&ctx)
            .await
            .map_err(|e| CommandError::Failed(e.to_string()))?;
        let ns = if ctx.namespace.is_empty() {
            "default"
        } else {
            &ctx.namespace
        };
        // Only what the simulation reads is kept of each object, as it is decoded.
        let opts = FetchOptions {
            progress: &|_, _| {},
            trim: true,
            // `--pod` takes its pod out of the encoded list before the cluster is compiled.
            pods_encoded: true,
            storage: true,
        };
        fetch_live_with(&api, ns, opts).await.map_err(|e| {
            CommandError::Failed(format!(
                "listing the cluster at {}: {e}",
                ctx.cluster.server
            ))
        })
    })?;
    let info = ClusterInfo {
        server: ctx.cluster.server.clone(),
        context: ctx.context_name.clone(),
        server_version: live.modelling.server.clone(),
        not_visible: live.not_visible,
    };
    Ok((
        live.manifests,
        live.encoded_pods,
        Some((info, live.modelling)),
    ))
}

pub fn run(global: &GlobalArgs, args: &ScheduleArgs) -> CommandResult {
    let focus = match &args.pod {
        Some(p) => Some(parse_pod_key(p)?),
        None => None,
    };
    let asked = match &args.kube_version {
        Some(v) => Some(KubeVersion::parse(v).map_err(|e| CommandError::Input(e.to_string()))?),
        None => None,
    };
    let (mut manifests, mut encoded, live) = input(global, args)?;
    // A live cluster's pods stay encoded: the focused one is decoded on its own and joins the
    // manifests, where `split_out` below finds it as it finds a file's.
    if let (Some(key), Some(pods)) = (&focus, encoded.as_mut())
        && let Some(pod) = pods.take(key)
    {
        let pod = pod.map_err(|e| {
            CommandError::Failed(format!(
                "listing the cluster at {}: {}: {key}: {e}",
                live.as_ref().map_or("", |(i, _)| i.server.as_str()),
                pods.source.file
            ))
        })?;
        manifests.pods.push((pod, pods.source.clone()));
    }
    let release = match (asked, &live) {
        (Some(v), live) => Modelling::asked(v, live.as_ref().and_then(|(_, m)| m.server.clone())),
        (None, Some((_, m))) => m.clone(),
        (None, None) => Modelling::default_release(),
    };
    let version = release.version;
    let live = live.map(|(info, _)| info);
    let profiles = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CommandError::Input(format!("{}: {e}", path.display())))?;
            Some(
                config::load(&text, version)
                    .map_err(|e| CommandError::Input(format!("{}: {e}", path.display())))?,
            )
        }
        None => None,
    };
    // `--pod`: that pod alone, taken out of the cluster so a bound pod's own requests do not
    // count against the node it runs on.
    let focused = match &focus {
        Some(key) => Some(why::split_out(&mut manifests, key).ok_or_else(|| {
            let msg = format!(
                "--pod {key}: no such pod in the {}",
                where_from(args, &live)
            );
            if live.is_some() {
                CommandError::Failed(msg)
            } else {
                CommandError::Input(msg)
            }
        })?),
        None => None,
    };
    let world = match encoded {
        Some(pods) => {
            let source = pods.source.clone();
            let mut undecodable = None;
            let decoded = pods.decode().map_while(|p| {
                p.map_err(|e| undecodable = Some(e))
                    .ok()
                    .map(|p| (p, &source))
            });
            let w = world::build_with_pods(&manifests, decoded, version);
            if let Some(e) = undecodable {
                return Err(CommandError::Failed(format!(
                    "listing the cluster at {}: {}: {e}",
                    live.as_ref().map_or("", |i| i.server.as_str()),
                    source.file
                )));
            }
            w
        }
        None => world::build(&manifests, version),
    }
    .map_err(|e| CommandError::Input(e.0))?;
    if let Some(n) = &args.node
        && world.snapshot.node(n).is_none()
    {
        return Err(CommandError::Input(format!(
            "--node {n}: no such node in the input"
        )));
    }
    let mut snapshot = world.snapshot;
    let mut scheduler = Scheduler::new(version, profiles, args.seed);
    scheduler.full_breakdown = args.breakdown;
    let profile = scheduler
        .profiles
        .first()
        .map(|p| (**p).clone())
        .unwrap_or_else(|| crate::scheduler::Profile::default_for(version));
    let profile_name = profile.scheduler_name.clone();
    let modelled = why::modelled(&profile, version, snapshot.volumes.is_some());
    let mut comparisons = Vec::new();
    let (pending, traces) = match focused {
        Some(f) => {
            let info = snapshot
                .pod_info(&f.pod)
                .map_err(|e| CommandError::Input(format!("--pod: {e}")))?;
            let requests = vec![(info.key(), describe_requests(&info))];
            let trace = scheduler.schedule_one(&snapshot, &info);
            if let Some(b) = &f.bound {
                comparisons.push(why::compare(&trace, b, args.seed));
            }
            (requests, vec![trace])
        }
        None => {
            let requests: Vec<(String, String)> = world
                .pending
                .iter()
                .map(|p| (p.key(), describe_requests(p)))
                .collect();
            let traces = simulate(&mut scheduler, &mut snapshot, world.pending);
            (requests, traces)
        }
    };

    match global.output {
        OutputFormat::Json => {
            let out = Output {
                profile: &profile_name,
                kube_version: version.to_string(),
                release: &release,
                seed: args.seed,
                pods: &traces,
                modelled: &modelled,
                cluster: live,
                comparisons: &comparisons,
                notes: &world.notes,
            };
            let json = serde_json::to_string_pretty(&out)
                .map_err(|e| CommandError::Failed(format!("serializing the trace: {e}")))?;
            println!("{json}");
        }
        OutputFormat::Text => {
            let mut s = String::new();
            let legacy = if version.is_legacy() {
                " (legacy predicates and 0-10 priorities)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "kube-scheduler {version}{legacy} (simulated) · profile {profile_name} · {} nodes · {} pending pods · seed {}",
                snapshot.num_nodes(),
                if focus.is_some() {
                    traces.len()
                } else {
                    pending.len()
                },
                args.seed
            );
            if let Some(info) = &live {
                render_live_header(&mut s, info, &release, &modelled);
            } else if release.basis == Basis::Default {
                let _ = writeln!(s, "{}", release.summary);
            }
            for w in &world.warnings {
                let _ = writeln!(s, "warning: {w}");
            }
            for n in &world.notes {
                let _ = writeln!(s, "note: {n}");
            }
            if live.is_some() && traces.is_empty() {
                let _ = writeln!(
                    s,
                    "\nno pending pods: every pod you can see has a node (--pod NS/NAME explains one)"
                );
            }
            for t in &traces {
                let req = pending
                    .iter()
                    .find(|(k, _)| *k == t.pod)
                    .map(|(_, r)| r.as_str())
                    .unwrap_or("");
                render_pod(&mut s, t, req, args);
            }
            for c in &comparisons {
                render_comparison(&mut s, c);
            }
            print!("{s}");
        }
    }
    Ok(0)
}

fn where_from(args: &ScheduleArgs, live: &Option<ClusterInfo>) -> String {
    match live {
        Some(i) => format!("cluster at {} (pods you may list)", i.server),
        None => format!(
            "input ({})",
            args.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn parse_pod_key(s: &str) -> Result<String, CommandError> {
    match s.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(s.to_string())
        }
        _ => Err(CommandError::Input(format!(
            "--pod {s:?}: expected NAMESPACE/NAME"
        ))),
    }
}

fn render_live_header(s: &mut String, info: &ClusterInfo, release: &Modelling, m: &Modelled) {
    let _ = writeln!(
        s,
        "cluster {} (context {}) · server {}",
        info.server,
        info.context,
        info.server_version.as_deref().unwrap_or("version unknown"),
    );
    let _ = writeln!(s, "{}", release.summary);
    let scores: Vec<String> = m.scores.iter().map(|(n, w)| format!("{n}×{w}")).collect();
    let _ = writeln!(
        s,
        "{}",
        wrap(
            &format!("filter plugins judged: {}", m.filters.join(", ")),
            98,
            ""
        )
    );
    let _ = writeln!(
        s,
        "{}",
        wrap(
            &format!("score plugins × weight: {}", scores.join(", ")),
            98,
            ""
        )
    );
    if !m.not_simulated.is_empty() {
        let why = if m.not_simulated.iter().any(|p| p == "VolumeBinding") {
            "no claims, volumes or resource slices are listed"
        } else {
            "no CSINodes, volume zones or resource slices are modelled"
        };
        let _ = writeln!(
            s,
            "{}",
            wrap(
                &format!(
                    "not simulated (pass every node; {why}): {}",
                    m.not_simulated.join(", ")
                ),
                98,
                ""
            )
        );
    }
    for n in &info.not_visible {
        let _ = writeln!(s, "{}", wrap(&format!("not visible to you: {n}"), 98, ""));
    }
}

fn render_comparison(s: &mut String, c: &Comparison) {
    let sim = c.simulated.as_deref().unwrap_or("no node");
    let _ = writeln!(
        s,
        "\nBound: {} runs on {}; the simulation picks {sim} — {}",
        c.pod,
        c.actual,
        if c.agrees {
            "they agree"
        } else {
            "they differ"
        }
    );
    let _ = writeln!(
        s,
        "  {} in the simulation: {}",
        c.actual, c.actual_in_simulation
    );
    for r in &c.reasons {
        let _ = writeln!(s, "{}", wrap(&format!("- {r}"), 98, "  "));
    }
}

fn describe_requests(p: &PodInfo) -> String {
    let r = &p.requests.actual;
    let mut parts = vec![
        format!("cpu {}", milli(r.milli_cpu)),
        format!("memory {}", bytes(r.memory)),
    ];
    if r.ephemeral_storage > 0 {
        parts.push(format!("ephemeral-storage {}", bytes(r.ephemeral_storage)));
    }
    for (n, v) in &r.scalars {
        parts.push(format!("{n} {v}"));
    }
    parts.join(", ")
}

fn milli(m: i64) -> String {
    if m % 1000 == 0 {
        format!("{}", m / 1000)
    } else {
        format!("{m}m")
    }
}

fn bytes(b: i64) -> String {
    for (unit, size) in [("Gi", 1i64 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
        if b >= size && b % size == 0 {
            return format!("{}{unit}", b / size);
        }
    }
    for (unit, size) in [("G", 1_000_000_000i64), ("M", 1_000_000), ("k", 1000)] {
        if b >= size && b % size == 0 {
            return format!("{}{unit}", b / size);
        }
    }
    b.to_string()
}

fn verdict_line(s: &mut String, v: &FilterVerdict, w: usize) {
    let (mark, plugin) = if v.passed {
        ("✓ pass", "")
    } else {
        ("✗ fail", v.plugin.unwrap_or(""))
    };
    // Filter never ran on a node PreFilter decided: say so, with the status's code.
    let how = if v.pre_filter {
        format!(" ({}, at PreFilter)", v.code.as_str())
    } else {
        String::new()
    };
    let line = format!(
        "  {:<w$}  {mark}  {plugin:<18} {}{how}",
        v.node,
        v.reasons().join(", ")
    );
    let _ = writeln!(s, "{}", line.trim_end());
}

fn render_pod(s: &mut String, t: &PodTrace, requests: &str, args: &ScheduleArgs) {
    let _ = writeln!(
        s,
        "\n━━ Pod {}  (priority {}; requests {requests})",
        t.pod, t.priority
    );
    if t.filter.is_empty() && t.selected.is_none() && t.message.is_none() {
        for n in &t.notes {
            let _ = writeln!(s, "note: {n}");
        }
        return;
    }
    let top = args.top.max(1);
    let w = t
        .filter
        .iter()
        .map(|v| v.node.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 28);
    let sampled = if t.skipped_by_sampling.is_empty() {
        String::new()
    } else {
        format!(
            "\n  {} not evaluated: finding {} feasible nodes was enough (numFeasibleNodesToFind)",
            t.skipped_by_sampling.len(),
            t.num_feasible_nodes_to_find
        )
    };
    let decided_at_pre_filter = t.filter.iter().filter(|v| v.pre_filter).count();
    let pre_filtered = if decided_at_pre_filter == 0 {
        String::new()
    } else {
        format!("\n  {decided_at_pre_filter} decided at PreFilter: Filter does not run on them")
    };
    let _ = writeln!(
        s,
        "Filter — {} of {} node(s) evaluated from index {}, {} feasible{pre_filtered}{sampled}",
        t.filter.len() - decided_at_pre_filter,
        t.nodes_total,
        t.start_index,
        t.nodes_feasible
    );
    let _ = writeln!(s, "  {:<w$}  RESULT  {:<18} REASONS", "NODE", "PLUGIN");
    if t.filter.len() <= top {
        for v in &t.filter {
            verdict_line(s, v, w);
        }
    } else {
        // Many nodes: one line per distinct outcome, then the first few failures.
        let mut groups: Vec<(String, usize)> = Vec::new();
        for v in &t.filter {
            let key = if v.passed {
                "✓ pass".to_string()
            } else {
                format!("✗ {}: {}", v.plugin.unwrap_or(""), v.reasons().join(", "))
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, c)) => *c += 1,
                None => groups.push((key, 1)),
            }
        }
        groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (k, c) in &groups {
            let _ = writeln!(s, "  {c:>6} node(s)  {k}");
        }
        for v in t.filter.iter().filter(|v| !v.passed).take(top) {
            verdict_line(s, v, w);
        }
    }
    if let Some(name) = &args.node {
        render_node(s, t, name);
    }
    match t.score.len() {
        0 if t.nodes_feasible == 1 => {
            let _ = writeln!(
                s,
                "Score — not run: one feasible node is selected without scoring, as kube-scheduler does"
            );
        }
        0 => {}
        _ => render_scores(s, t, top),
    }
    if let Some(b) = t.breakdown.as_ref().filter(|b| !b.score.is_empty()) {
        let _ = writeln!(
            s,
            "Breakdown (display only, the decision above is unchanged): every node filtered, {} feasible scored",
            b.score.len()
        );
        let mut shown = t.clone();
        shown.score = b.score.clone();
        shown.nodes_scored = b.score.len();
        shown.tied.clear();
        shown.prescore.clear();
        render_scores(s, &shown, top);
    }
    match (&t.selected, &t.message) {
        (Some(n), _) => {
            let how = t.tie_break.as_deref().unwrap_or("");
            let _ = writeln!(s, "Result: → {n}  ({how})");
        }
        (None, Some(m)) => {
            let _ = writeln!(s, "Result: unschedulable\n{}", wrap(m, 98, "  "));
        }
        (None, None) => {}
    }
    for n in &t.notes {
        let _ = writeln!(s, "note: {n}");
    }
}

fn render_scores(s: &mut String, t: &PodTrace, top: usize) {
    let plugins: Vec<(&str, i64)> = t.score[0]
        .plugins
        .iter()
        .map(|p| (p.name, p.weight))
        .collect();
    let skipped: Vec<&str> = t
        .prescore
        .iter()
        .filter(|p| p.code == crate::scheduler::Code::Skip)
        .map(|p| p.plugin)
        .collect();
    let _ = writeln!(
        s,
        "Score — {} node(s) scored; cells are normalized scores, TOTAL = Σ score × weight{}",
        t.nodes_scored,
        if skipped.is_empty() {
            String::new()
        } else {
            format!(
                "\n  PreScore skipped (adds nothing): {}",
                skipped.join(", ")
            )
        }
    );
    let w = t
        .score
        .iter()
        .map(|n| n.node.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    let titles: Vec<String> = plugins
        .iter()
        .map(|(p, wt)| format!("{}×{wt}", plugins::short(p)))
        .collect();
    let widths: Vec<usize> = titles.iter().map(|t| t.chars().count().max(6)).collect();
    let mut head = format!("  {:<w$}", "NODE");
    for (t, cw) in titles.iter().zip(&widths) {
        let _ = write!(head, " {t:>cw$}");
    }
    let _ = writeln!(s, "{head} {:>6}", "TOTAL");
    let mut order: Vec<&NodeScore> = t.score.iter().collect();
    order.sort_by_key(|n| std::cmp::Reverse(n.total));
    for ns in order.iter().take(top) {
        let mut line = format!("  {:<w$}", ns.node);
        for (p, cw) in ns.plugins.iter().zip(&widths) {
            let _ = write!(line, " {:>cw$}", p.normalized);
        }
        let star = if t.selected.as_deref() == Some(&*ns.node) {
            " ★"
        } else if t.tied.contains(&ns.node) {
            " ="
        } else {
            ""
        };
        let _ = writeln!(s, "{line} {:>6}{star}", ns.total);
    }
    if order.len() > top {
        let last = order.last().map(|n| n.total).unwrap_or(0);
        let _ = writeln!(
            s,
            "  … {} more scored node(s), lowest total {last} (--top N, --node NAME)",
            order.len() - top
        );
    }
    if t.tied.len() > 1 {
        let cap = top.min(6);
        let shown: Vec<&str> = t.tied.iter().take(cap).map(|n| &**n).collect();
        let more = if t.tied.len() > cap {
            format!(" and {} more", t.tied.len() - cap)
        } else {
            String::new()
        };
        let line = format!("tied at the best total: {}{more}", shown.join(", "));
        let _ = writeln!(s, "{}", wrap(&line, 98, "  "));
    }
}

fn render_node(s: &mut String, t: &PodTrace, name: &str) {
    let _ = writeln!(s, "Node {name}:");
    match t.filter.iter().find(|v| v.node == name) {
        Some(v) if v.passed => {
            let _ = writeln!(s, "  filter: ✓ passed every Filter plugin");
        }
        Some(v) => {
            let _ = writeln!(
                s,
                "  filter: ✗ {} ({}{}): {}",
                v.plugin.unwrap_or(""),
                v.code.as_str(),
                if v.pre_filter { ", at PreFilter" } else { "" },
                v.reasons().join(", ")
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  filter: not evaluated — the scheduler found enough feasible nodes before reaching it"
            );
        }
    }
    if let Some(ns) = t.score.iter().find(|n| n.node == name) {
        let _ = writeln!(
            s,
            "  {:<34} {:>6} {:>10} {:>6} {:>8}",
            "score plugin", "raw", "normalized", "weight", "weighted"
        );
        for p in &ns.plugins {
            let _ = writeln!(
                s,
                "  {:<34} {:>6} {:>10} {:>6} {:>8}",
                p.name, p.raw, p.normalized, p.weight, p.weighted
            );
        }
        let _ = writeln!(
            s,
            "  {:<34} {:>6} {:>10} {:>6} {:>8}",
            "total", "", "", "", ns.total
        );
    }
}
