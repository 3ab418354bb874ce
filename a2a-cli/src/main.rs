//! `a2a`: talk to an A2A agent from the command line, to the A2A CLI specification (v0.2).
//!
//! `card get`, `send` (blocking by default, `--async`, `--stream`), `task get|cancel|list|
//! subscribe|push-config|download`, `config show`, `completion`, `conformance`, `push receive`
//! and `call`, on JSON-RPC, HTTP+JSON or gRPC; `text` output by default and the protocol's own
//! JSON types with `-o json`. Run `a2a --help` for the exit codes, configuration and examples.

mod agent;
mod args;
mod chat;
mod commands;
mod config;
mod conformance;
mod failure;
mod receive;
mod render;
mod send;
mod task;
mod wait;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

use args::{CardCommand, Cli, Command, ConfigCommand, PushCommand};
use config::FileValues;
use failure::Failure;
use render::Renderer;

/// Whether the caller asked for JSON output (read before parsing, to shape a usage error).
fn asks_for_json(args: &[OsString]) -> bool {
    let mut prev = String::new();
    for a in args {
        let a = a.to_string_lossy();
        if a == "--" {
            break;
        }
        if (prev == "-o" || prev == "--output") && a == "json"
            || a == "--output=json"
            || a == "-ojson"
            || a == "-o=json"
        {
            return true;
        }
        prev = a.into_owned();
    }
    std::env::var("A2ACLI_OUTPUT").is_ok_and(|v| v == "json")
}

async fn run(cli: Cli, matches: &clap::ArgMatches, files: &FileValues) -> Result<(), Failure> {
    wait::listen_for_ctrl_c();
    let g = &cli.global;
    if g.insecure {
        // Never silent (spec §10.1): the agent is not authenticated, whatever is sent to it.
        eprintln!(
            "a2a: WARNING: TLS certificate verification is off (--insecure): the agent is not \
             authenticated, and anyone on the path can impersonate it"
        );
        if g.bearer.is_some() || g.api_key.is_some() {
            eprintln!(
                "a2a: WARNING: credentials (--bearer / --api-key) would go to an agent whose \
                 certificate is not verified"
            );
        }
    }
    let mut out = Renderer::new(g.json(), g.verbose);
    match cli.command {
        Command::Completion { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "a2a", &mut std::io::stdout());
        }
        Command::Card(CardCommand::Get { validate, extended }) => {
            commands::card_get(g, validate, extended, &out).await?;
        }
        Command::Send(args) => {
            let sub = matches
                .subcommand_matches("send")
                .ok_or_else(|| Failure::internal("send without its arguments"))?;
            send::run(g, &args, sub, &mut out).await?;
        }
        Command::Task(cmd) => task::run(g, cmd, &mut out).await?,
        Command::Config(ConfigCommand::Show) => commands::config_show(matches, files, &out)?,
        Command::Conformance => conformance::run(g, &out).await?,
        Command::Chat => chat::run(g, &out).await?,
        Command::Push(PushCommand::Receive {
            listen,
            count,
            token,
        }) => receive::run(&listen, count, token.as_deref(), &out).await?,
        Command::Call(args) => commands::call(g, args, &out).await?,
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let json = asks_for_json(&args);
    let files = match FileValues::load(&args) {
        Ok(f) => f,
        Err(f) => {
            f.report(json);
            return ExitCode::from(f.exit);
        }
    };
    let matches = match files.apply(Cli::command()).try_get_matches_from(&args) {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_owned();
            let f = Failure::usage(first);
            f.report(json);
            if !json {
                eprintln!("{text}");
            }
            return ExitCode::from(f.exit);
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let f = Failure::usage(e.to_string());
            f.report(json);
            return ExitCode::from(f.exit);
        }
    };
    let json = cli.global.json();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let f = Failure::internal(format!("could not start the runtime: {e}"));
            f.report(json);
            return ExitCode::from(f.exit);
        }
    };
    match runtime.block_on(run(cli, &matches, &files)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            f.report(json);
            ExitCode::from(f.exit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_is_seen_before_parsing() {
        let v = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(asks_for_json(&v(&["a2a", "-o", "json", "nope"])));
        assert!(asks_for_json(&v(&["a2a", "--output=json"])));
        assert!(!asks_for_json(&v(&["a2a", "send", "--", "-o", "json"])));
    }
}
