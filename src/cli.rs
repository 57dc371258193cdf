//! The command line, as clap types. Parsing only: dispatch lives in main.rs, work in commands/.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// Simulate the kube-scheduler on Kubernetes manifests: per-node filter and score results.
    Schedule(ScheduleArgs),
}

#[derive(Debug, Args)]
pub struct ScheduleArgs {
    /// Manifest files: YAML (multi-document, `kind: List`) or JSON. Nodes and Pods are used;
    /// pods with spec.nodeName are running, the others are scheduled in queue order.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
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
