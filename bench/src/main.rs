//! `a2a-bench`: the load harness of issue 6.
//!
//! One command runs everything (see `BENCHMARKS.md`):
//!
//! ```text
//! cargo run --release -p a2a-bench -- [--smoke] [--duration 10s] [--rounds 3] [--servers LIST]
//! ```
//!
//! The harness starts every server under test as a child process of its own binary
//! (`a2a-bench serve <kind> <port>`, or the Python SDK's uvicorn), pinned to core 0 with `taskset`
//! when the machine has two or more cores, checks each server's answers, then drives it from
//! core 1 with the load generator of [`load`], and prints one table.
//!
//! `a2a-bench grpc` compares the gRPC bindings (ours and the official Rust SDK's, see [`grpc`]).
//! `a2a-bench store` measures the stores (memory, SQLite, PostgreSQL; see [`store`]).
//!
//! Everything stays on 127.0.0.1 and every loop is bounded in time and count.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod grpc;
mod load;
mod procfs;
mod push;
mod report;
mod run;
mod servers;
mod store;
mod wire;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return match servers::serve(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("a2a-bench serve: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.first().map(String::as_str) == Some("push") {
        return match push::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("a2a-bench push: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.first().map(String::as_str) == Some("drive") {
        return match run::drive(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("a2a-bench drive: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.first().map(String::as_str) == Some("store") {
        return match store::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("a2a-bench store: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.first().map(String::as_str) == Some("grpc") {
        return match grpc::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("a2a-bench grpc: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let opts = match cli::Options::parse(&args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("a2a-bench: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    match run::run(&opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("a2a-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
