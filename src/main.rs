//! The binary: parse the command line, dispatch, turn errors into exit codes.

use std::process::ExitCode;

use clap::Parser;
use kexplore::cli::{Cli, Command, ScenarioCommand};
use kexplore::commands;

fn main() -> ExitCode {
    // One crypto provider for the whole process, before anything builds a TLS config.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match &cli.command {
        Some(Command::Certs(args)) => commands::certs::run(&cli.global, args),
        Some(Command::Serve(args)) => commands::serve::run(&cli.global, args),
        Some(Command::Journey(args)) => commands::journey::run(&cli.global, args),
        Some(Command::Schedule(args)) => commands::schedule::run(&cli.global, args),
        Some(Command::Scenario(ScenarioCommand::Generate(args))) => {
            commands::scenario::generate(args)
        }
        None => {
            exit_on_signals_restoring_terminal();
            commands::tui::run(&cli.global, &cli.tui)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("kexplore: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// The TUI owns the terminal (raw mode, alternate screen, mouse capture). SIGTERM, SIGHUP (the
/// terminal went away) and SIGINT would otherwise kill the process with all of that still set:
/// give the terminal back first, then exit with 128 + the signal's number as the default action
/// would. Only for the TUI: `serve` and `journey` shut down gracefully on their own signals.
fn exit_on_signals_restoring_terminal() {
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(|| {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                    signal(SignalKind::interrupt()),
                ) else {
                    return;
                };
                let code = tokio::select! {
                    _ = term.recv() => 128 + 15,
                    _ = hup.recv() => 128 + 1,
                    _ = int.recv() => 128 + 2,
                };
                kexplore::tui::terminal::restore();
                std::process::exit(code);
            });
        });
    // Without the thread the default actions stay: the process still ends, only less tidily.
    drop(spawned);
}
