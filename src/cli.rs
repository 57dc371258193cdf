//! The command line, as clap types. Parsing only: dispatch lives in main.rs, work in commands/.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::apiserver::storage::service_alloc::{Ipv4Cidr, PortRange};
use crate::apiserver::transport::limits::{
    Limits, MIN_MAX_HEADER_BYTES, parse_duration, parse_node_monitor_grace_period,
    parse_sync_period,
};

#[derive(Debug, Parser)]
#[command(
    name = "kexplore",
    version,
    about = "Explore how a Kubernetes cluster lets a client in and decides where a pod runs",
    long_about = "Explore how a Kubernetes cluster lets a client in and decides where a pod runs.\n\n\
                  Without a subcommand, kexplore opens the terminal UI on the selected kubeconfig \
                  (--kubeconfig, else $KUBECONFIG, else ~/.kube/config)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file to use (no merging), as kubectl's --kubeconfig.
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use instead of current-context.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// TUI theme: a built-in name (default, light, high-contrast) or a path to a YAML theme.
    #[arg(long, global = true, value_name = "NAME|PATH")]
    pub theme: Option<String>,
}

/// Options of the terminal UI (no subcommand).
#[derive(Debug, Args, Clone, Default)]
pub struct TuiArgs {
    /// Explore a freshly started embedded API server (loopback, mTLS, new PKI) whatever
    /// kubeconfig exists. Without any kubeconfig this is what `kexplore` does anyway.
    #[arg(long)]
    pub embedded: bool,
    /// With --embedded: keep the embedded cluster in a local etcd started from PATH (its own
    /// PKI, loopback, stopped on exit), as `serve --etcd`.
    #[arg(long, requires = "embedded")]
    pub etcd: bool,
    /// Presenter mode: larger layout, chrome hidden, a caption for every step (P toggles).
    #[arg(long)]
    pub present: bool,
    /// Tell the story by itself (views 1-5 in presenter order, or a `--lesson`), a step every
    /// SECS seconds; fractions are allowed (`0.5`, at least 0.1); any key takes over.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub autoplay: Option<f64>,
    /// Manifests preloaded into the embedded cluster (YAML or JSON: Nodes, Pods, ...).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub scenario: Vec<PathBuf>,
    /// Run this lesson instead of the views (as `kexplore lesson FILE`).
    #[arg(long, value_name = "FILE")]
    pub lesson: Option<PathBuf>,
    /// The manifest view 4 sends: a pod, or a Deployment, ReplicaSet, DaemonSet or StatefulSet
    /// (default: scenarios/app.json, the seed's pod).
    #[arg(long, value_name = "FILE")]
    pub pod: Option<PathBuf>,
    /// View 4 creates its pod on a remote server for real; without it a remote server gets
    /// dry runs (the status bar says READ-ONLY) and `W` asks before each real create.
    #[arg(long)]
    pub for_real: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode and check the selected context's certificates, keys and chain of trust.
    Certs(CertsArgs),
    /// Run the embedded API server (mTLS, scheduler loop, simulated kubelets) until Ctrl-C / SIGTERM.
    Serve(Box<ServeArgs>),
    /// Create a pod through an API server and print every stage it passes.
    Journey(JourneyArgs),
    /// Simulate the kube-scheduler on Kubernetes manifests: per-node filter and score results.
    Schedule(ScheduleArgs),
    /// Work with cluster scenarios (manifests for `schedule` and `serve --scenario`).
    #[command(subcommand)]
    Scenario(ScenarioCommand),
    /// Run a lesson (YAML: steps with a caption, an action, a question and its computed
    /// reveal) on a fresh embedded cluster. Space moves on, 1-9 guess, q quits.
    Lesson(LessonArgs),
    /// Run a local etcd cluster (from PATH, on loopback, with kubeadm's etcd PKI) for
    /// `serve --etcd-servers` replicas, until Ctrl-C / SIGTERM: a control plane to take apart.
    Etcd(EtcdArgs),
}

#[derive(Debug, Args, Clone)]
pub struct EtcdArgs {
    /// How many members (3 survives the loss of one).
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u8).range(1..=7))]
    pub members: u8,
    /// Where the PKI is kept (etcd/ca.crt, etcd/server.crt, etcd/peer.crt,
    /// apiserver-etcd-client.crt; minted when missing): pass the same --pki-dir to serve.
    #[arg(long, value_name = "DIR")]
    pub pki_dir: PathBuf,
    /// Where the members keep their data (m0, m1, … under it; reused when present).
    #[arg(long, value_name = "DIR")]
    pub data_dir: PathBuf,
}

#[derive(Debug, Args, Clone)]
pub struct LessonArgs {
    /// The lesson file (see lessons/ and README's "Workshop").
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Run unattended: every SECS seconds (fractions allowed, e.g. 0.5) the next screen, three
    /// times as long at a question. Any key takes over.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub autoplay: Option<f64>,
    /// Manifests preloaded into the embedded cluster (YAML or JSON: Nodes, Pods, ...).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub scenario: Vec<PathBuf>,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds between 0 and 3600"
        )),
    }
}

#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// Print a synthetic cluster as multi-document YAML: nodes, running pods and pending pods.
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Number of nodes (spread over three zones).
    #[arg(long, default_value_t = 100)]
    pub nodes: usize,
    /// Running pods per node.
    #[arg(long, default_value_t = 10)]
    pub pods_per_node: usize,
    /// Pending pods to schedule.
    #[arg(long, default_value_t = 1)]
    pub pending: usize,
    /// What the pending pods ask for.
    #[arg(long, value_enum, default_value_t = PendingKindArg::Plain)]
    pub kind: PendingKindArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PendingKindArg {
    Plain,
    NodeAffinity,
    PodAntiAffinity,
    PodAffinity,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:6443")]
    pub listen: std::net::SocketAddr,
    /// Write a kubeconfig (contexts kexplore-admin and jane) here, atomically, mode 0600, once accepting.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Keep the CA, serving and client certificates here (reused when present, created when missing).
    #[arg(long, value_name = "DIR")]
    pub pki_dir: Option<PathBuf>,
    /// Manifests (Nodes, Pods, ...) to preload; YAML (multi-document, kind: List) or JSON.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub scenario: Vec<PathBuf>,
    /// Start without the demo cluster (the seed's three nodes and a control-plane node).
    #[arg(long)]
    pub no_demo: bool,
    /// Seconds a simulated container runs before it exits 0 (Succeeded, reason Completed), for
    /// pods that restart Never or OnFailure, such as a Job's; pods that restart Always keep
    /// running. No process runs either way: the simulated kubelets only report the phases. A
    /// pod's annotation kexplore.dev/simulated-run-seconds overrides it.
    #[arg(long, value_name = "SECONDS",
          default_value_t = crate::apiserver::request::context::DEFAULT_SIMULATED_RUN.as_secs())]
    pub simulated_run_seconds: u64,
    /// Static bearer tokens, as kube-apiserver's --token-auth-file (token,user,uid,"group1,group2").
    #[arg(long, value_name = "FILE")]
    pub token_auth_file: Option<PathBuf>,
    /// The `iss` of service-account tokens (`kubectl create token`) and the audience the server
    /// accepts them for, as kube-apiserver's --service-account-issuer.
    #[arg(
        long,
        value_name = "URL",
        default_value = "https://kubernetes.default.svc.cluster.local"
    )]
    pub service_account_issuer: String,
    /// Write an audit.k8s.io/v1 Event per request here (JSON lines).
    #[arg(long, value_name = "PATH")]
    pub audit_log_path: Option<PathBuf>,
    /// kube-scheduler's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): its
    /// profiles, each placing the pods whose spec.schedulerName names it, as kube-scheduler's
    /// --config does. Without it the default profile (default-scheduler) alone.
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,
    /// Largest request body accepted; a larger one gets 413, refused from its Content-Length
    /// alone when announced (kube-apiserver's MaxRequestBodyBytes, 3 MiB).
    #[arg(long, value_name = "BYTES", help_heading = "Limits",
          default_value_t = Limits::default().max_request_body_bytes as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_resource_write_bytes: u64,
    /// Largest request head (request line and headers; the header list on HTTP/2); a larger
    /// one gets 431.
    #[arg(long, value_name = "BYTES", help_heading = "Limits",
          default_value_t = Limits::default().max_header_bytes as u64,
          value_parser = clap::value_parser!(u64).range(MIN_MAX_HEADER_BYTES as u64..=u32::MAX as u64))]
    pub max_header_bytes: u64,
    /// Time a client has to send a whole request head, then its connection is closed
    /// (Go's ReadHeaderTimeout; 0 disables).
    #[arg(long, value_name = "DURATION", help_heading = "Limits", default_value = "30s",
          value_parser = parse_duration)]
    pub read_header_timeout: Duration,
    /// Time a request's body has to arrive once its head has; a client still sending then
    /// gets 504 Timeout (kube-apiserver's --request-timeout; 0 disables).
    #[arg(long, value_name = "DURATION", help_heading = "Limits", default_value = "60s",
          value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Close a connection with no request in flight for this long; HTTP/2 gets a GOAWAY
    /// (Go's IdleTimeout; 0 disables).
    #[arg(long, value_name = "DURATION", help_heading = "Limits", default_value = "90s",
          value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// HTTP/2 PING interval while streams (watches) are open; a PING unanswered as long closes
    /// the connection, so a vanished client frees its watches (0 disables).
    #[arg(long, value_name = "DURATION", help_heading = "Limits", default_value = "30s",
          value_parser = parse_duration)]
    pub http2_keepalive_interval: Duration,
    /// Connections served at once; beyond it new connections wait in the listen backlog until
    /// one closes (0: no cap).
    #[arg(long, value_name = "N", help_heading = "Limits",
          default_value_t = Limits::default().max_connections)]
    pub max_connections: usize,
    /// Watches served at once; beyond it a watch gets 429 TooManyRequests with Retry-After
    /// (0: no cap).
    #[arg(long, value_name = "N", help_heading = "Limits",
          default_value_t = Limits::default().max_watches)]
    pub max_watches: usize,
    /// Non-mutating requests in flight at once (watches and system:masters exempt); beyond it
    /// 429 with Retry-After: 1, as kube-apiserver (0: no limit).
    #[arg(long, value_name = "N", help_heading = "Limits",
          default_value_t = Limits::default().max_requests_inflight)]
    pub max_requests_inflight: usize,
    /// Mutating requests in flight at once, as kube-apiserver (0: no limit).
    #[arg(long, value_name = "N", help_heading = "Limits",
          default_value_t = Limits::default().max_mutating_requests_inflight)]
    pub max_mutating_requests_inflight: usize,
    /// On SIGTERM/SIGINT: stop accepting, end watches, give requests in flight this long to
    /// finish, then exit.
    #[arg(long, value_name = "DURATION", help_heading = "Limits", default_value = "10s",
          value_parser = parse_duration)]
    pub shutdown_grace_period: Duration,
    /// A node whose kubelet has not renewed its Lease for this long becomes Ready=Unknown and
    /// gets the node.kubernetes.io/unreachable taints; its pods are evicted after their
    /// tolerationSeconds (kube-controller-manager's --node-monitor-grace-period, 50s since 1.32).
    /// Stop a simulated kubelet with `kubectl annotate node NODE kexplore.dev/kubelet=stopped`
    /// (`=not-ready` posts Ready=False instead; `kexplore.dev/kubelet-` starts it again).
    #[arg(long, value_name = "DURATION", help_heading = "Nodes", default_value = "50s",
          value_parser = parse_node_monitor_grace_period)]
    pub node_monitor_grace_period: Duration,
    /// How often the horizontal pod autoscaler controller reconciles each HPA
    /// (kube-controller-manager's flag of the same name); a new HPA is first looked at one
    /// period after it appears. The control loops wake at least every 2 s.
    #[arg(long, value_name = "DURATION", help_heading = "Controllers", default_value = "15s",
          value_parser = parse_sync_period)]
    pub horizontal_pod_autoscaler_sync_period: Duration,
    /// Changes kept for watches and for reads at past revisions (continue tokens,
    /// resourceVersionMatch=Exact); a watch or list from before them gets 410 Expired and the
    /// client lists again (set it low to demonstrate that).
    #[arg(long, value_name = "N", help_heading = "Limits",
          default_value_t = Limits::default().history.max_events as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub watch_history_events: u64,
    /// Bytes of encoded objects kept in that history (the newest change always stays).
    #[arg(long, value_name = "BYTES", help_heading = "Limits",
          default_value_t = Limits::default().history.max_bytes as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub watch_history_bytes: u64,
    /// The CIDR Services' ClusterIPs are allocated from (its first address is the `kubernetes`
    /// Service's), as kube-apiserver's flag.
    #[arg(long, value_name = "CIDR", default_value = "10.96.0.0/12")]
    pub service_cluster_ip_range: Ipv4Cidr,
    /// The ports NodePort Services' nodePorts are allocated from, as kube-apiserver's flag.
    #[arg(long, value_name = "RANGE", default_value = "30000-32767")]
    pub service_node_port_range: PortRange,
    /// Keep the cluster in etcd at these client URLs (comma-separated) instead of in memory,
    /// as kube-apiserver's --etcd-servers.
    #[arg(
        long,
        value_name = "URL,...",
        help_heading = "etcd",
        value_delimiter = ',',
        conflicts_with = "etcd"
    )]
    pub etcd_servers: Vec<String>,
    /// The CA that signed etcd's serving certificate.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "etcd",
        requires = "etcd_servers"
    )]
    pub etcd_cafile: Option<PathBuf>,
    /// The client certificate presented to etcd.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "etcd",
        requires = "etcd_servers"
    )]
    pub etcd_certfile: Option<PathBuf>,
    /// The private key of --etcd-certfile.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "etcd",
        requires = "etcd_servers"
    )]
    pub etcd_keyfile: Option<PathBuf>,
    /// The root of every key in etcd.
    #[arg(
        long,
        value_name = "PREFIX",
        help_heading = "etcd",
        default_value = "/registry"
    )]
    pub etcd_prefix: String,
    /// Compact etcd's history this often, to the revision seen one interval earlier (0: never).
    #[arg(long, value_name = "DURATION", help_heading = "etcd", default_value = "5m",
          value_parser = parse_duration)]
    pub etcd_compaction_interval: Duration,
    /// Start a local etcd from PATH on loopback, with its own PKI (etcd/ca.crt, etcd/server.crt,
    /// etcd/peer.crt, apiserver-etcd-client.crt in --pki-dir), and keep the cluster there;
    /// it stops with the server.
    #[arg(long, help_heading = "etcd")]
    pub etcd: bool,
    /// Where --etcd keeps its data (reused when present); default: a scratch directory
    /// removed on exit.
    #[arg(long, value_name = "DIR", help_heading = "etcd", requires = "etcd")]
    pub etcd_data_dir: Option<PathBuf>,
    /// How many etcd members --etcd starts as one cluster on loopback (3 survives the loss of
    /// one); each has its data under --etcd-data-dir/m0, m1, …
    #[arg(long, value_name = "N", help_heading = "etcd", requires = "etcd", default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=7))]
    pub etcd_members: u8,
}

#[derive(Debug, Args)]
pub struct JourneyArgs {
    /// The manifest to create (YAML or JSON): a pod, or a Deployment, ReplicaSet, DaemonSet or
    /// StatefulSet (followed through its controllers to its pods).
    #[arg(short = 'f', long = "filename", value_name = "POD")]
    pub file: PathBuf,
    /// The namespace to create it in, as kubectl's -n: fills one the manifest leaves open (else
    /// the context's, else default); a manifest that names another is refused.
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Manifests preloaded into the embedded server (when no kubeconfig is given).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub scenario: Vec<PathBuf>,
    /// Use an in-process embedded server even when a kubeconfig exists.
    #[arg(long)]
    pub embedded: bool,
    /// Seconds to wait for the pod to be scheduled and running.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Really create the pod on a server reached through a kubeconfig and follow the real
    /// scheduler and kubelet. Without it such a server gets `dryRun=All`: every check, no write.
    #[arg(long)]
    pub for_real: bool,
    /// Delete the pod at the end (with --for-real).
    #[arg(long, requires = "for_real")]
    pub cleanup: bool,
}

#[derive(Debug, Args)]
pub struct ScheduleArgs {
    /// Manifest files: YAML (multi-document, `kind: List`) or JSON. Nodes and Pods are used;
    /// pods with spec.nodeName are running, the others are scheduled in queue order. Without
    /// -f, the nodes and pods of the selected kubeconfig context's cluster ("why Pending?").
    #[arg(short = 'f', long = "filename", value_name = "FILE", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Only this pod (NAMESPACE/NAME): a pending one is explained per node; for a bound one the
    /// simulation's choice is compared with its real spec.nodeName.
    #[arg(long, value_name = "NS/NAME")]
    pub pod: Option<String>,
    /// A kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration (profiles, plugins, weights,
    /// pluginConfig, percentageOfNodesToScore).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The kube-scheduler release whose behaviour to model: 1.25..1.38, or 1.13 for the legacy
    /// predicates and 0-10 priorities. Default: the newest modelled.
    #[arg(long = "kube-version", value_name = "X.Y")]
    pub kube_version: Option<String>,
    /// Seed of the tie-break among equally scored nodes (same seed, same choices).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Show one node's full detail (filter verdict, every plugin's raw/normalized/weighted score).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// How many nodes the text tables show before summarizing.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Also evaluate every node and score every feasible one, for display only (the decision is
    /// unchanged); shown under "breakdown" in JSON.
    #[arg(long)]
    pub breakdown: bool,
}

#[derive(Debug, Args)]
pub struct CertsArgs {
    /// Exit 1 when any check is an error (for scripts).
    #[arg(long)]
    pub check: bool,
    /// Also connect to the server with mutual TLS and show the chain it presents.
    #[arg(long)]
    pub connect: bool,
}
