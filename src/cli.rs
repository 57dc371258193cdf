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
