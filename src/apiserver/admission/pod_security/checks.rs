//! The Pod Security Standards' checks (upstream `pod-security-admission/policy`), each with the
//! versions it has rules for, its reason and its detail in upstream's words: a pod refused
//! here reads as a 1.33 kube-apiserver refuses it.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{
    ContainerPort, PodSecurityContext, PodSpec, SecurityContext, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::apiserver::admission::pod_security::policy::{Level, LevelVersion};

/// The newest rules: in 1.33, `latest` means the v1.32 checks (sysctls changed last then).
pub(crate) const NEWEST_RULES: u32 = 32;

/// A check that failed: `reason (detail)` in the aggregated message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    pub(crate) reason: String,
    pub(crate) detail: String,
}

/// The failed checks of one evaluation, in upstream's order.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict(pub(crate) Vec<Violation>);

impl Verdict {
    pub(crate) fn allowed(&self) -> bool {
        self.0.is_empty()
    }

    /// `reason (detail), reason (detail)`: what the 403 and the warning say.
    pub(crate) fn detail(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|v| match v.detail.as_str() {
                "" => v.reason.clone(),
                d => format!("{} ({d})", v.reason),
            })
            .collect();
        parts.join(", ")
    }

    /// The reasons alone: what the namespace's check of its existing pods lists.
    pub(crate) fn reasons(&self) -> String {
        let parts: Vec<&str> = self.0.iter().map(|v| v.reason.as_str()).collect();
        parts.join(", ")
    }
}

/// The pod as a check sees it.
pub(crate) struct PodView<'a> {
    pub(crate) meta: &'a ObjectMeta,
    pub(crate) spec: &'a PodSpec,
    /// The minor version whose rules apply.
    minor: u32,
}

type CheckFn = fn(&PodView<'_>) -> Option<Violation>;

struct Check {
    id: &'static str,
    level: Level,
    /// The first version with rules for it.
    since: u32,
    /// The baseline check a restricted one replaces, from its own first version on.
    overrides: Option<&'static str>,
    run: CheckFn,
}

/// Baseline checks sorted by ID, then restricted ones sorted by ID: upstream sorts them so,
/// and its messages list failures in this order (`seLinuxOptions` before `seccomp…`: bytes).
const CHECKS: &[Check] = &[
    check(
        "appArmorProfile",
        Level::Baseline,
        0,
        None,
        app_armor_profile,
    ),
    check(
        "capabilities_baseline",
        Level::Baseline,
        0,
        None,
        capabilities_baseline,
    ),
    check("hostNamespaces", Level::Baseline, 0, None, host_namespaces),
    check(
        "hostPathVolumes",
        Level::Baseline,
        0,
        None,
        host_path_volumes,
    ),
    check("hostPorts", Level::Baseline, 0, None, host_ports),
    check("privileged", Level::Baseline, 0, None, privileged),
    check("procMount", Level::Baseline, 0, None, proc_mount),
    check("seLinuxOptions", Level::Baseline, 0, None, se_linux_options),
    check(
        "seccompProfile_baseline",
        Level::Baseline,
        0,
        None,
        seccomp_baseline,
    ),
    check("sysctls", Level::Baseline, 0, None, sysctls),
    check(
        "windowsHostProcess",
        Level::Baseline,
        0,
        None,
        windows_host_process,
    ),
    check(
        "allowPrivilegeEscalation",
        Level::Restricted,
        8,
        None,
        allow_privilege_escalation,
    ),
    check(
        "capabilities_restricted",
        Level::Restricted,
        22,
        Some("capabilities_baseline"),
        capabilities_restricted,
    ),
    check(
        "restrictedVolumes",
        Level::Restricted,
        0,
        Some("hostPathVolumes"),
        restricted_volumes,
    ),
    check("runAsNonRoot", Level::Restricted, 0, None, run_as_non_root),
    check("runAsUser", Level::Restricted, 23, None, run_as_user),
    check(
        "seccompProfile_restricted",
        Level::Restricted,
        19,
        Some("seccompProfile_baseline"),
        seccomp_restricted,
    ),
];

const fn check(
    id: &'static str,
    level: Level,
    since: u32,
    overrides: Option<&'static str>,
    run: CheckFn,
) -> Check {
    Check {
        id,
        level,
        since,
        overrides,
        run,
    }
}

/// Every check of `lv`'s level at its version, on the pod.
pub(crate) fn evaluate(lv: LevelVersion, meta: &ObjectMeta, spec: &PodSpec) -> Verdict {
    if lv.level == Level::Privileged {
        return Verdict::default();
    }
    let minor = lv.version.rules(NEWEST_RULES);
    let runs = |c: &Check| c.level <= lv.level && c.since <= minor;
    let overridden: Vec<&str> = CHECKS
        .iter()
        .filter(|c| runs(c))
        .filter_map(|c| c.overrides)
        .collect();
    let pod = PodView { meta, spec, minor };
    Verdict(
        CHECKS
            .iter()
            .filter(|c| runs(c) && !overridden.contains(&c.id))
            .filter_map(|c| (c.run)(&pod))
            .collect(),
    )
}

fn violation(reason: &str, detail: String) -> Option<Violation> {
    Some(Violation {
        reason: reason.to_string(),
        detail,
    })
}

/// `"a", "b"`: upstream's joinQuote (no escaping).
fn join_quote<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let items: Vec<String> = items
        .into_iter()
        .map(|s| format!("\"{}\"", s.as_ref()))
        .collect();
    items.join(", ")
}

fn pluralize<'a>(singular: &'a str, plural: &'a str, n: usize) -> &'a str {
    if n == 1 { singular } else { plural }
}

/// `container "a"` or `containers "a", "b"`.
fn containers_phrase(names: &[&str]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// `pod`, `containers "a"`, …, joined by ` and `: who set a forbidden value.
fn setters(pod: bool, names: &[&str]) -> String {
    let mut parts = Vec::new();
    if pod {
        parts.push("pod".to_string());
    }
    if !names.is_empty() {
        parts.push(containers_phrase(names));
    }
    parts.join(" and ")
}

/// A container of any kind, as the checks see it.
struct Container<'a> {
    name: &'a str,
    sc: Option<&'a SecurityContext>,
    ports: &'a [ContainerPort],
}

/// Init containers, then containers, then ephemeral containers, each in spec order: the order
/// upstream visits them, so the order its messages name them.
fn containers<'a>(spec: &'a PodSpec) -> impl Iterator<Item = Container<'a>> {
    let init = spec.init_containers.iter().flatten().map(|c| Container {
        name: &c.name,
        sc: c.security_context.as_ref(),
        ports: c.ports.as_deref().unwrap_or_default(),
    });
    let main = spec.containers.iter().map(|c| Container {
        name: &c.name,
        sc: c.security_context.as_ref(),
        ports: c.ports.as_deref().unwrap_or_default(),
    });
    let ephemeral = spec
        .ephemeral_containers
        .iter()
        .flatten()
        .map(|c| Container {
            name: &c.name,
            sc: c.security_context.as_ref(),
            ports: c.ports.as_deref().unwrap_or_default(),
        });
    init.chain(main).chain(ephemeral)
}

fn pod_sc<'a>(p: &PodView<'a>) -> Option<&'a PodSecurityContext> {
    p.spec.security_context.as_ref()
}

fn is_windows(p: &PodView<'_>) -> bool {
    p.spec.os.as_ref().is_some_and(|os| os.name == "windows")
}

fn host_namespaces(p: &PodView<'_>) -> Option<Violation> {
    let set: Vec<&str> = [
        (p.spec.host_network, "hostNetwork=true"),
        (p.spec.host_pid, "hostPID=true"),
        (p.spec.host_ipc, "hostIPC=true"),
    ]
    .into_iter()
    .filter(|(on, _)| *on == Some(true))
    .map(|(_, s)| s)
    .collect();
    (!set.is_empty())
        .then(|| violation("host namespaces", set.join(", ")))
        .flatten()
}

fn privileged(p: &PodView<'_>) -> Option<Violation> {
    let bad: Vec<&str> = containers(p.spec)
        .filter(|c| c.sc.and_then(|sc| sc.privileged) == Some(true))
        .map(|c| c.name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad)
        ),
    )
}

const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// The containers that set a forbidden value, in visiting order, and the values, as upstream's
/// sorted set of them: (names, values).
fn forbidden_values<'a, T: Ord>(
    spec: &'a PodSpec,
    bad: impl Fn(&Container<'a>) -> Vec<T>,
) -> (Vec<&'a str>, BTreeSet<T>) {
    let (mut names, mut values) = (Vec::new(), BTreeSet::new());
    for c in containers(spec) {
        let found = bad(&c);
        if !found.is_empty() {
            names.push(c.name);
            values.extend(found);
        }
    }
    (names, values)
}

/// The capabilities a container adds outside `allowed`.
fn added_beyond<'a>(c: &Container<'a>, allowed: &[&str]) -> Vec<&'a str> {
    c.sc.and_then(|sc| sc.capabilities.as_ref())
        .and_then(|caps| caps.add.as_deref())
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .filter(|cap| !allowed.contains(cap))
        .collect()
}

fn not_added(names: &[&str], caps: &BTreeSet<&str>) -> String {
    format!(
        "{} must not include {} in securityContext.capabilities.add",
        containers_phrase(names),
        join_quote(caps)
    )
}

fn capabilities_baseline(p: &PodView<'_>) -> Option<Violation> {
    let (names, caps) = forbidden_values(p.spec, |c| added_beyond(c, BASELINE_CAPABILITIES));
    if names.is_empty() {
        return None;
    }
    violation("non-default capabilities", not_added(&names, &caps))
}

fn host_path_volumes(p: &PodView<'_>) -> Option<Violation> {
    let bad: Vec<&str> = volumes(p.spec)
        .filter(|v| v.host_path.is_some())
        .map(|v| v.name.as_str())
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad)
        ),
    )
}

fn volumes(spec: &PodSpec) -> impl Iterator<Item = &Volume> {
    spec.volumes.iter().flatten()
}

fn host_ports(p: &PodView<'_>) -> Option<Violation> {
    // Upstream keeps them as a set of strings: sorted as text, `10, 20, 8080, 9`.
    let (names, ports) = forbidden_values(p.spec, |c| {
        c.ports
            .iter()
            .filter_map(|port| port.host_port.filter(|h| *h != 0))
            .map(|h| h.to_string())
            .collect()
    });
    if names.is_empty() {
        return None;
    }
    let ports: Vec<String> = ports.into_iter().collect();
    violation(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&names),
            pluralize("uses", "use", names.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    )
}

const APPARMOR_ANNOTATION: &str = "container.apparmor.security.beta.kubernetes.io/";

/// A profile type outside RuntimeDefault and Localhost (AppArmor's and seccomp's), set on the
/// pod and on which containers, and the types set: (pod, containers, types).
fn forbidden_profiles<'a>(
    p: &PodView<'a>,
    pod: Option<&'a str>,
    container: impl Fn(&'a SecurityContext) -> Option<&'a str>,
) -> (bool, Vec<&'a str>, BTreeSet<&'a str>) {
    let mut types = BTreeSet::new();
    let mut bad = |t: Option<&'a str>| match t {
        Some(t) if !matches!(t, "RuntimeDefault" | "Localhost") => {
            types.insert(t);
            true
        }
        _ => false,
    };
    let pod_bad = bad(pod);
    let names = containers(p.spec)
        .filter(|c| bad(c.sc.and_then(&container)))
        .map(|c| c.name)
        .collect();
    (pod_bad, names, types)
}

fn app_armor_profile(p: &PodView<'_>) -> Option<Violation> {
    let (pod_bad, names, types) = forbidden_profiles(
        p,
        pod_sc(p).and_then(|sc| Some(sc.app_armor_profile.as_ref()?.type_.as_str())),
        |sc| Some(sc.app_armor_profile.as_ref()?.type_.as_str()),
    );
    let annotations: BTreeSet<String> = p
        .meta
        .annotations
        .iter()
        .flatten()
        .filter(|(k, v)| {
            k.starts_with(APPARMOR_ANNOTATION)
                && !(v.is_empty() || *v == "runtime/default" || v.starts_with("localhost/"))
        })
        .map(|(k, v)| format!("{k}={}", go_quote(v)))
        .collect();
    if !pod_bad && names.is_empty() && annotations.is_empty() {
        return None;
    }
    let mut who = setters(pod_bad, &names);
    if !annotations.is_empty() {
        let noun = pluralize("annotation", "annotations", annotations.len());
        who = if who.is_empty() {
            noun.to_string()
        } else {
            format!("{who} and {noun}")
        };
    }
    let values: Vec<String> = types
        .into_iter()
        .map(String::from)
        .chain(annotations)
        .collect();
    violation(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            values.len(),
        ),
        format!(
            "{who} must not set AppArmor profile type to {}",
            join_quote(&values)
        ),
    )
}

/// Go's `%q` of a string, as upstream formats annotation values.
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn se_linux_options(p: &PodView<'_>) -> Option<Violation> {
    let allowed_type = |t: &str| {
        matches!(
            t,
            "" | "container_t" | "container_init_t" | "container_kvm_t"
        ) || (p.minor >= 31 && t == "container_engine_t")
    };
    let (mut types, mut user, mut role) = (BTreeSet::new(), false, false);
    let mut bad = |o: &k8s_openapi::api::core::v1::SELinuxOptions| {
        let mut is_bad = false;
        let t = o.type_.as_deref().unwrap_or_default();
        if !allowed_type(t) {
            types.insert(t.to_string());
            is_bad = true;
        }
        if o.user.as_deref().is_some_and(|u| !u.is_empty()) {
            user = true;
            is_bad = true;
        }
        if o.role.as_deref().is_some_and(|r| !r.is_empty()) {
            role = true;
            is_bad = true;
        }
        is_bad
    };
    let pod_bad = pod_sc(p)
        .and_then(|sc| sc.se_linux_options.as_ref())
        .is_some_and(&mut bad);
    let names: Vec<&str> = containers(p.spec)
        .filter(|c| {
            c.sc.and_then(|sc| sc.se_linux_options.as_ref())
                .is_some_and(&mut bad)
        })
        .map(|c| c.name)
        .collect();
    if !pod_bad && names.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", types.len()),
            join_quote(&types)
        ));
    }
    if user {
        data.push("user may not be set".to_string());
    }
    if role {
        data.push("role may not be set".to_string());
    }
    violation(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters(pod_bad, &names),
            data.join("; ")
        ),
    )
}

fn proc_mount(p: &PodView<'_>) -> Option<Violation> {
    let (names, types) = forbidden_values(p.spec, |c| {
        c.sc.and_then(|sc| sc.proc_mount.as_deref())
            .filter(|m| *m != "Default")
            .into_iter()
            .collect()
    });
    if names.is_empty() {
        return None;
    }
    violation(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&names),
            join_quote(&types)
        ),
    )
}

fn seccomp_allowed(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

fn seccomp_baseline(p: &PodView<'_>) -> Option<Violation> {
    if p.minor < 19 {
        return seccomp_annotations(p);
    }
    let (pod_bad, names, values) = forbidden_profiles(
        p,
        pod_sc(p).and_then(|sc| Some(sc.seccomp_profile.as_ref()?.type_.as_str())),
        |sc| Some(sc.seccomp_profile.as_ref()?.type_.as_str()),
    );
    if !pod_bad && names.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters(pod_bad, &names),
            join_quote(&values)
        ),
    )
}

/// Before v1.19 the profile was an annotation.
fn seccomp_annotations(p: &PodView<'_>) -> Option<Violation> {
    let annotations = p.meta.annotations.as_ref();
    let get = |k: &str| annotations.and_then(|a| a.get(k));
    let allowed =
        |v: &str| matches!(v, "runtime/default" | "docker/default") || v.starts_with("localhost/");
    let mut keys = vec!["seccomp.security.alpha.kubernetes.io/pod".to_string()];
    keys.extend(
        containers(p.spec)
            .map(|c| format!("container.seccomp.security.alpha.kubernetes.io/{}", c.name)),
    );
    let bad: BTreeSet<String> = keys
        .iter()
        .filter_map(|k| {
            get(k)
                .filter(|v| !allowed(v))
                .map(|v| format!("{k}={}", go_quote(v)))
        })
        .collect();
    if bad.is_empty() {
        return None;
    }
    let list: Vec<String> = bad.iter().cloned().collect();
    violation(
        "seccompProfile",
        format!(
            "{} {}",
            pluralize("forbidden annotation", "forbidden annotations", bad.len()),
            list.join(", ")
        ),
    )
}

/// The sysctls any pod may set, by the version that allowed them.
const SAFE_SYSCTLS: &[(u32, &str)] = &[
    (0, "kernel.shm_rmid_forced"),
    (0, "net.ipv4.ip_local_port_range"),
    (0, "net.ipv4.tcp_syncookies"),
    (0, "net.ipv4.ping_group_range"),
    (0, "net.ipv4.ip_unprivileged_port_start"),
    (27, "net.ipv4.ip_local_reserved_ports"),
    (29, "net.ipv4.tcp_keepalive_time"),
    (29, "net.ipv4.tcp_fin_timeout"),
    (29, "net.ipv4.tcp_keepalive_intvl"),
    (29, "net.ipv4.tcp_keepalive_probes"),
    (32, "net.ipv4.tcp_rmem"),
    (32, "net.ipv4.tcp_wmem"),
];

fn sysctls(p: &PodView<'_>) -> Option<Violation> {
    let safe = |name: &str| {
        SAFE_SYSCTLS
            .iter()
            .any(|(since, s)| *since <= p.minor && *s == name)
    };
    let bad: Vec<&str> = pod_sc(p)
        .and_then(|sc| sc.sysctls.as_ref())
        .into_iter()
        .flatten()
        .map(|s| s.name.as_str())
        .filter(|n| !safe(n))
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation("forbidden sysctls", bad.join(", "))
}

fn windows_host_process(p: &PodView<'_>) -> Option<Violation> {
    let pod_bad = pod_sc(p)
        .and_then(|sc| sc.windows_options.as_ref())
        .and_then(|w| w.host_process)
        == Some(true);
    let names: Vec<&str> = containers(p.spec)
        .filter(|c| {
            c.sc.and_then(|sc| sc.windows_options.as_ref())
                .and_then(|w| w.host_process)
                == Some(true)
        })
        .map(|c| c.name)
        .collect();
    if !pod_bad && names.is_empty() {
        return None;
    }
    violation(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters(pod_bad, &names)
        ),
    )
}

/// From v1.25 three restricted checks leave Windows pods alone.
fn windows_exempt(p: &PodView<'_>) -> bool {
    p.minor >= 25 && is_windows(p)
}

fn allow_privilege_escalation(p: &PodView<'_>) -> Option<Violation> {
    if windows_exempt(p) {
        return None;
    }
    let bad: Vec<&str> = containers(p.spec)
        .filter(|c| c.sc.and_then(|sc| sc.allow_privilege_escalation) != Some(false))
        .map(|c| c.name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad)
        ),
    )
}

fn capabilities_restricted(p: &PodView<'_>) -> Option<Violation> {
    if windows_exempt(p) {
        return None;
    }
    let no_drop: Vec<&str> = containers(p.spec)
        .filter(|c| {
            let drop = c.sc.and_then(|sc| sc.capabilities.as_ref()?.drop.as_ref());
            !drop.into_iter().flatten().any(|d| d == "ALL")
        })
        .map(|c| c.name)
        .collect();
    let (adding, caps) = forbidden_values(p.spec, |c| added_beyond(c, &["NET_BIND_SERVICE"]));
    let mut parts = Vec::new();
    if !no_drop.is_empty() {
        parts.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&no_drop)
        ));
    }
    if !adding.is_empty() {
        parts.push(not_added(&adding, &caps));
    }
    if parts.is_empty() {
        return None;
    }
    violation("unrestricted capabilities", parts.join("; "))
}

/// The volume's source as restricted names it, or None when restricted allows it.
fn restricted_type(v: &Volume) -> Option<&'static str> {
    let allowed = v.config_map.is_some()
        || v.csi.is_some()
        || v.downward_api.is_some()
        || v.empty_dir.is_some()
        || v.ephemeral.is_some()
        || v.image.is_some()
        || v.persistent_volume_claim.is_some()
        || v.projected.is_some()
        || v.secret.is_some();
    if allowed {
        return None;
    }
    let sources = [
        (v.host_path.is_some(), "hostPath"),
        (v.gce_persistent_disk.is_some(), "gcePersistentDisk"),
        (v.aws_elastic_block_store.is_some(), "awsElasticBlockStore"),
        (v.git_repo.is_some(), "gitRepo"),
        (v.nfs.is_some(), "nfs"),
        (v.iscsi.is_some(), "iscsi"),
        (v.glusterfs.is_some(), "glusterfs"),
        (v.rbd.is_some(), "rbd"),
        (v.flex_volume.is_some(), "flexVolume"),
        (v.cinder.is_some(), "cinder"),
        (v.cephfs.is_some(), "cephfs"),
        (v.flocker.is_some(), "flocker"),
        (v.fc.is_some(), "fc"),
        (v.azure_file.is_some(), "azureFile"),
        (v.vsphere_volume.is_some(), "vsphereVolume"),
        (v.quobyte.is_some(), "quobyte"),
        (v.azure_disk.is_some(), "azureDisk"),
        (v.photon_persistent_disk.is_some(), "photonPersistentDisk"),
        (v.portworx_volume.is_some(), "portworxVolume"),
        (v.scale_io.is_some(), "scaleIO"),
        (v.storageos.is_some(), "storageos"),
    ];
    Some(
        sources
            .iter()
            .find(|(set, _)| *set)
            .map_or("unknown", |(_, name)| name),
    )
}

fn restricted_volumes(p: &PodView<'_>) -> Option<Violation> {
    let (mut names, mut types) = (Vec::new(), BTreeSet::new());
    for v in volumes(p.spec) {
        if let Some(t) = restricted_type(v) {
            names.push(v.name.as_str());
            types.insert(t);
        }
    }
    if names.is_empty() {
        return None;
    }
    violation(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names),
            pluralize("uses", "use", names.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote(&types)
        ),
    )
}

fn run_as_non_root(p: &PodView<'_>) -> Option<Violation> {
    let pod = pod_sc(p).and_then(|sc| sc.run_as_non_root);
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in containers(p.spec) {
        match c.sc.and_then(|sc| sc.run_as_non_root) {
            Some(false) => explicit.push(c.name),
            Some(true) => {}
            None if pod == Some(true) => {}
            None => implicit.push(c.name),
        }
    }
    let pod_bad = pod == Some(false);
    if pod_bad || !explicit.is_empty() {
        return violation(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters(pod_bad, &explicit)
            ),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    violation(
        "runAsNonRoot != true",
        format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&implicit)
        ),
    )
}

fn run_as_user(p: &PodView<'_>) -> Option<Violation> {
    let pod_bad = pod_sc(p).and_then(|sc| sc.run_as_user) == Some(0);
    let names: Vec<&str> = containers(p.spec)
        .filter(|c| c.sc.and_then(|sc| sc.run_as_user) == Some(0))
        .map(|c| c.name)
        .collect();
    if !pod_bad && names.is_empty() {
        return None;
    }
    violation(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters(pod_bad, &names)),
    )
}

fn seccomp_restricted(p: &PodView<'_>) -> Option<Violation> {
    if windows_exempt(p) {
        return None;
    }
    let mut values = BTreeSet::new();
    let (mut pod_bad, mut pod_set) = (false, false);
    if let Some(s) = pod_sc(p).and_then(|sc| sc.seccomp_profile.as_ref()) {
        if seccomp_allowed(&s.type_) {
            pod_set = true;
        } else {
            pod_bad = true;
            values.insert(s.type_.as_str());
        }
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in containers(p.spec) {
        match c.sc.and_then(|sc| sc.seccomp_profile.as_ref()) {
            Some(s) if !seccomp_allowed(&s.type_) => {
                explicit.push(c.name);
                values.insert(s.type_.as_str());
            }
            Some(_) => {}
            None if pod_set => {}
            None => implicit.push(c.name),
        }
    }
    if pod_bad || !explicit.is_empty() {
        return violation(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                setters(pod_bad, &explicit),
                join_quote(&values)
            ),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&implicit)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::admission::pod_security::policy::Version;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::{Value, json};

    fn verdict(level: Level, version: Version, pod: Value) -> String {
        let pod: Pod = serde_json::from_value(pod).expect("pod");
        let spec = pod.spec.expect("spec");
        evaluate(LevelVersion { level, version }, &pod.metadata, &spec).detail()
    }

    fn restricted(pod: Value) -> String {
        verdict(Level::Restricted, Version::Latest, pod)
    }

    fn baseline(pod: Value) -> String {
        verdict(Level::Baseline, Version::Latest, pod)
    }

    #[test]
    fn the_checks_are_in_upstreams_order() {
        let ids = |level| {
            CHECKS
                .iter()
                .filter(|c| c.level == level)
                .map(|c| c.id)
                .collect::<Vec<_>>()
        };
        for level in [Level::Baseline, Level::Restricted] {
            let mut sorted = ids(level);
            sorted.sort_unstable();
            assert_eq!(ids(level), sorted, "byte order, as Go's sort of strings");
        }
        let first_restricted = CHECKS
            .iter()
            .position(|c| c.level == Level::Restricted)
            .expect("restricted checks");
        assert!(
            CHECKS[first_restricted..]
                .iter()
                .all(|c| c.level == Level::Restricted)
        );
    }

    #[test]
    fn a_bare_container_under_restricted_reads_as_upstreams_refusal() {
        assert_eq!(
            restricted(json!({"spec": {"containers": [{"name": "c", "image": "nginx"}]}})),
            "allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), \
             unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), \
             runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), \
             seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
        );
    }

    #[test]
    fn a_compliant_pod_passes_restricted() {
        let pod = json!({"spec": {
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "image": "nginx", "securityContext": {
                "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
            "volumes": [{"name": "cfg", "configMap": {"name": "x"}}, {"name": "tmp", "emptyDir": {}}]}});
        assert_eq!(restricted(pod), "");
    }

    #[test]
    fn baseline_names_host_namespaces_ports_and_privilege() {
        let pod = json!({"spec": {"hostPID": true, "hostNetwork": true,
            "containers": [
                {"name": "ubuntu", "image": "ubuntu", "securityContext": {"privileged": true},
                 "ports": [{"containerPort": 80, "hostPort": 9}, {"containerPort": 81, "hostPort": 8080}]},
                {"name": "b", "image": "x", "ports": [{"containerPort": 10, "hostPort": 10}]}]}});
        assert_eq!(
            baseline(pod),
            "host namespaces (hostNetwork=true, hostPID=true), \
             hostPort (containers \"ubuntu\", \"b\" use hostPorts 10, 8080, 9), \
             privileged (container \"ubuntu\" must not set securityContext.privileged=true)"
        );
    }

    #[test]
    fn capabilities_volumes_and_setters_are_worded_as_upstream() {
        let pod = json!({"spec": {
            "securityContext": {"runAsNonRoot": false, "runAsUser": 0,
                                "seLinuxOptions": {"type": "bad", "user": "u"}},
            "initContainers": [{"name": "i", "image": "x",
                "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "CHOWN"]}, "procMount": "Unmasked"}}],
            "containers": [{"name": "a", "image": "x",
                "securityContext": {"capabilities": {"add": ["NET_RAW"]}, "runAsUser": 0,
                                    "seccompProfile": {"type": "Unconfined"}}}],
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "n", "nfs": {"server": "s", "path": "/"}}]}});
        assert_eq!(
            baseline(pod.clone()),
            "non-default capabilities (containers \"i\", \"a\" must not include \"NET_RAW\", \"SYS_ADMIN\" in securityContext.capabilities.add), \
             hostPath volumes (volume \"h\"), \
             procMount (container \"i\" must not set securityContext.procMount to \"Unmasked\"), \
             seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type \"bad\"; user may not be set), \
             seccompProfile (container \"a\" must not set securityContext.seccompProfile.type to \"Unconfined\")"
        );
        let r = restricted(pod);
        assert!(
            r.contains("unrestricted capabilities (containers \"i\", \"a\" must set securityContext.capabilities.drop=[\"ALL\"]; containers \"i\", \"a\" must not include \"CHOWN\", \"NET_RAW\", \"SYS_ADMIN\" in securityContext.capabilities.add)"),
            "{r}"
        );
        assert!(
            r.contains("restricted volume types (volumes \"h\", \"n\" use restricted volume types \"hostPath\", \"nfs\")"),
            "{r}"
        );
        assert!(
            r.contains(
                "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)"
            ),
            "{r}"
        );
        assert!(
            r.contains("runAsUser=0 (pod and container \"a\" must not set runAsUser=0)"),
            "{r}"
        );
        assert!(
            r.contains("seccompProfile (container \"a\" must not set securityContext.seccompProfile.type to \"Unconfined\")"),
            "{r}"
        );
        assert!(
            !r.contains("hostPath volumes") && !r.contains("non-default"),
            "overridden: {r}"
        );
    }

    #[test]
    fn versions_choose_the_rules() {
        let pod = json!({"spec": {"securityContext": {"sysctls": [
            {"name": "net.ipv4.tcp_rmem", "value": "1"}, {"name": "kernel.msgmax", "value": "1"}]},
            "containers": [{"name": "c", "image": "x"}]}});
        assert_eq!(baseline(pod.clone()), "forbidden sysctls (kernel.msgmax)");
        assert_eq!(
            verdict(Level::Baseline, Version::Minor(25), pod),
            "forbidden sysctls (net.ipv4.tcp_rmem, kernel.msgmax)"
        );
        // runAsUser has rules from v1.23; capabilities_restricted from v1.22.
        let root = json!({"spec": {"securityContext": {"runAsUser": 0, "runAsNonRoot": true,
            "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "image": "x", "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}}}]}});
        assert_eq!(
            verdict(Level::Restricted, Version::Minor(22), root.clone()),
            ""
        );
        assert_eq!(
            restricted(root),
            "runAsUser=0 (pod must not set runAsUser=0)"
        );
    }

    #[test]
    fn windows_pods_skip_three_restricted_checks_from_v1_25() {
        let pod = json!({"spec": {"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true},
            "containers": [{"name": "c", "image": "x"}]}});
        assert_eq!(restricted(pod.clone()), "");
        assert!(
            verdict(Level::Restricted, Version::Minor(24), pod)
                .contains("allowPrivilegeEscalation")
        );
    }

    #[test]
    fn app_armor_annotations_and_fields() {
        let pod = json!({"metadata": {"annotations": {
                "container.apparmor.security.beta.kubernetes.io/c": "unconfined",
                "container.apparmor.security.beta.kubernetes.io/d": "localhost/x"}},
            "spec": {"containers": [{"name": "c", "image": "x",
                "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]}});
        assert_eq!(
            baseline(pod),
            "forbidden AppArmor profiles (container \"c\" and annotation must not set AppArmor profile type to \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\")"
        );
    }
}
