//! A readable log on stderr in one line (feature `log`, on by default): where the server
//! listens, one access line per request (target `a2a::access`), failures with their cause.
//!
//! ```no_run
//! a2a_runtime::log::init();
//! ```
//!
//! `RUST_LOG` filters it (default `info`; for example `RUST_LOG=warn` or
//! `RUST_LOG=info,a2a::access=off`). Colours are used only when stderr is a terminal. An
//! application with its own `tracing` subscriber does not call this: the runtime's events go to
//! whatever subscriber is installed.

/// The filter `RUST_LOG` asks for, else `info` (also when `RUST_LOG` does not parse: a log
/// that is on beats one silenced by a typo).
pub(crate) fn filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
}

/// Installs the log as the process's `tracing` subscriber. Returns `false`, and changes
/// nothing, when a subscriber is already installed.
pub fn init() -> bool {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init()
        .is_ok()
}
