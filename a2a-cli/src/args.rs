//! The command line: the commands and options of the A2A CLI specification (SPEC.md §5), plus
//! this tool's extras (`--extension`, `call`, `push receive`).

use std::path::PathBuf;
use std::time::Duration;

use a2a_runtime::types::{Metadata, TaskState, Timestamp};
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Exit codes:
  0  success: the operation ran and its result is printed, whatever the task's outcome
     (a FAILED, REJECTED or INPUT_REQUIRED task is a result, named in a warning on stderr)
  1  failure (a protocol error from the agent, a bad local file, an internal error)
  2  usage error (unknown flag, missing argument, malformed value)
  3  the agent or its card could not be reached or resolved (DNS, connection, TLS, no card)
  4  authentication could not be completed (no credential, or a rejected one)
  5  --timeout expired before the task reached a terminal or interrupted state
  130 interrupted (Ctrl-C); the task id and a resume command are printed first

Errors: the A2A error name (TaskNotFoundError, ...) for a protocol failure, an A2ACLI_ERR_*
code for the CLI's own; under -o json one {\"error\":{code,message,hint,a2aCode}} object on
stdout, and always `Error:`/`Message:`/`Hint:` lines on stderr.

Configuration: every option with an [env: A2ACLI_...] below can also be set in a .env file:
~/.config/a2a-cli/.env (global), then the nearest .env up from the working directory (or the
file given by --config). Precedence: flag > environment > local file > global file > default.
A file holding a credential must not be readable by others (chmod 600). `a2a config show`
prints each effective value and where it came from. A credential given as a flag is visible
in the process table and the shell history: prefer A2ACLI_BEARER / A2ACLI_API_KEY.

Examples:
  a2a -a http://127.0.0.1:8080 card get
  a2a send 'hello'
  a2a -o json send --text 'summarize' --file report.pdf --media-type application/pdf
  a2a -o json --stream send 'stream one two three'
  a2a send --async 'long job'          then: a2a task get --wait TASK_ID
  a2a send --task-id TASK_ID 'my answer'
  a2a --transport grpc --transport jsonrpc task get TASK_ID
  a2a task subscribe TASK_ID --last-event-id 7
  a2a task push-config set TASK_ID https://example.com/webhook --token secret
  a2a completion bash > /etc/bash_completion.d/a2a";

/// Talk to an A2A agent: read its card, send messages, follow and manage tasks.
#[derive(Debug, Parser)]
#[command(
    name = "a2a",
    version,
    about,
    disable_version_flag = true,
    after_long_help = AFTER_HELP,
    after_help = "Run `a2a --help` for exit codes, configuration and examples."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// Print the version and exit.
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    version: Option<bool>,
    /// The agent: a host or base URL (the well-known card path is appended), a card URL
    /// (used as-is), or a card file (`file://…` or a path).
    #[arg(
        short = 'a',
        long = "agent-card",
        visible_alias = "url",
        value_name = "REF",
        env = "A2ACLI_AGENT_CARD",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    pub(crate) agent_card: String,
    /// Preferred transport, repeatable, highest first (default: the card's order); a binding
    /// the card lacks is skipped.
    #[arg(
        long = "transport",
        visible_alias = "binding",
        value_enum,
        value_name = "BINDING",
        env = "A2ACLI_TRANSPORT",
        value_delimiter = ',',
        global = true
    )]
    pub(crate) transports: Vec<Binding>,
    /// Output format: `text` (`Label: value` lines) or `json` (the protocol's own types).
    #[arg(
        short = 'o',
        long = "output",
        value_enum,
        default_value = "text",
        env = "A2ACLI_OUTPUT",
        global = true
    )]
    pub(crate) output: Output,
    /// Send `Authorization: Bearer TOKEN` (where the card declares a bearer-capable scheme).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "A2ACLI_BEARER",
        hide_env_values = true,
        global = true
    )]
    pub(crate) bearer: Option<String>,
    /// Send this API key where the card's apiKey scheme places it (header, query or cookie).
    #[arg(
        long = "api-key",
        value_name = "KEY",
        env = "A2ACLI_API_KEY",
        hide_env_values = true,
        global = true
    )]
    pub(crate) api_key: Option<String>,
    /// An A2A service parameter, `key:value`, sent as an HTTP header or gRPC metadata
    /// (repeatable).
    #[arg(
        long = "svc-param",
        short = 'H',
        visible_alias = "header",
        value_name = "KEY:VALUE",
        global = true
    )]
    pub(crate) svc_params: Vec<String>,
    /// Trust only the CA certificates of this PEM file for TLS (instead of the system's roots).
    #[arg(
        long = "ca-cert",
        value_name = "PATH",
        env = "A2ACLI_CA_CERT",
        global = true
    )]
    pub(crate) ca_cert: Option<PathBuf>,
    /// Do not verify the agent's TLS certificate (a self-signed test server): the connection
    /// is encrypted but the agent is not authenticated. Warns on stderr; HTTP bindings only.
    #[arg(long = "insecure", short = 'k', env = "A2ACLI_INSECURE", global = true)]
    pub(crate) insecure: bool,
    /// Present this client certificate (PEM) to agents that ask for one: mutual TLS.
    #[arg(
        long = "cert",
        value_name = "PATH",
        env = "A2ACLI_CERT",
        requires = "key",
        global = true
    )]
    pub(crate) cert: Option<PathBuf>,
    /// The private key (PEM) of --cert.
    #[arg(
        long = "key",
        value_name = "PATH",
        env = "A2ACLI_KEY",
        requires = "cert",
        global = true
    )]
    pub(crate) key: Option<PathBuf>,
    /// Verify the card's signatures with this public key (PEM; ES256, RS256 or EdDSA): a card
    /// whose signatures do not verify is refused; an unsigned card is reported as such.
    #[arg(
        long = "card-key",
        value_name = "PATH",
        env = "A2ACLI_CARD_KEY",
        global = true
    )]
    pub(crate) card_key: Option<PathBuf>,
    /// The A2A protocol version to speak: `1.0` (any 1.x agent), or `0.3` to opt in to a
    /// legacy agent (never chosen silently).
    #[arg(
        long = "a2a-version",
        value_name = "VERSION",
        env = "A2ACLI_A2A_VERSION",
        default_value = "1.0",
        global = true
    )]
    pub(crate) a2a_version: String,
    /// Longest wait for a task to reach a terminal or interrupted state (`90s`, `5m`);
    /// default: no limit (Ctrl-C stops waiting and prints the task id).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, env = "A2ACLI_TIMEOUT", global = true)]
    pub(crate) timeout: Option<Duration>,
    /// How often to re-read a task's status while waiting (backs off to 4× this).
    #[arg(long = "poll-interval", value_name = "DURATION", value_parser = parse_duration, default_value = "2s", env = "A2ACLI_POLL_INTERVAL", global = true)]
    pub(crate) poll_interval: Duration,
    /// Timeout of each single request (and the longest silence tolerated on a stream).
    #[arg(long = "request-timeout", value_name = "DURATION", value_parser = parse_duration, default_value = "30s", env = "A2ACLI_REQUEST_TIMEOUT", global = true)]
    pub(crate) request_timeout: Duration,
    /// Diagnostics on stderr: card resolution, transport and version choice, timing, and
    /// every request and answer exchanged (credentials redacted).
    #[arg(long, env = "A2ACLI_DEBUG", global = true)]
    pub(crate) debug: bool,
    /// Show every part of the messages and artifacts, with their media types and metadata.
    #[arg(long, env = "A2ACLI_VERBOSE", global = true)]
    pub(crate) verbose: bool,
    /// Read configuration from this .env file instead of the local .env.
    #[arg(long, value_name = "PATH", env = "A2ACLI_CONFIG", global = true)]
    pub(crate) config: Option<PathBuf>,
    /// Follow the live event stream (`send`, `task subscribe`): each event as it arrives,
    /// JSON Lines with `-o json`. Never read from the environment or a file.
    #[arg(long, global = true)]
    pub(crate) stream: bool,
    /// Do not wait: return the task's identifiers at once (`send`).
    #[arg(long = "async", visible_alias = "return-immediately", alias = "no-wait", env = "A2ACLI_ASYNC", conflicts_with_all = ["wait", "stream"], global = true)]
    pub(crate) no_wait: bool,
    /// Wait for a terminal or interrupted state: the default of `send`; on `task get`, poll
    /// until then.
    #[arg(long, visible_alias = "watch", global = true)]
    pub(crate) wait: bool,
    /// Activate an extension by URI on every call (repeatable).
    #[arg(long = "extension", short = 'e', value_name = "URI", global = true)]
    pub(crate) extensions: Vec<String>,
}

impl Global {
    pub(crate) fn json(&self) -> bool {
        self.output == Output::Json
    }

    pub(crate) fn has_credentials(&self) -> bool {
        self.bearer.is_some() || self.api_key.is_some()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    /// `Label: value` lines.
    Text,
    /// The protocol's own JSON types: one document, or JSON Lines with `--stream`.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Binding {
    /// JSON-RPC 2.0.
    #[value(name = "jsonrpc", alias = "json-rpc", alias = "JSONRPC")]
    JsonRpc,
    /// HTTP+JSON (REST).
    #[value(
        name = "http+json",
        alias = "rest",
        alias = "http-json",
        alias = "HTTP+JSON"
    )]
    Rest,
    /// gRPC.
    #[value(name = "grpc", alias = "GRPC")]
    Grpc,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Agent card commands.
    #[command(subcommand)]
    Card(CardCommand),
    /// Send a message to start or continue an interaction; waits for the task to finish or
    /// pause unless --async.
    Send(SendArgs),
    /// Task commands.
    #[command(subcommand)]
    Task(TaskCommand),
    /// Configuration commands.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print a shell completion script.
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// A multi-turn session: each line a turn, the context (and a waiting task) carried
    /// across turns; reads stdin without prompting when it is not a terminal.
    Chat,
    /// Smoke-check a live agent: card, send, get, list, cancel, stream and errors.
    Conformance,
    /// Push notification helpers.
    #[command(subcommand)]
    Push(PushCommand),
    /// Call a method added by an extension (its extension is activated for the call).
    Call(CallArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum CardCommand {
    /// Fetch and show the agent card.
    Get {
        /// Check the card against the A2A schema (required fields, interfaces, skills).
        #[arg(long)]
        validate: bool,
        /// Fetch the authenticated extended card (the card must declare it).
        #[arg(long)]
        extended: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Show each effective setting and the source it came from (read-only).
    Show,
}

#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// The message text (a text part, placed where it stands among --text/--file/--data).
    pub(crate) message: Option<String>,
    /// A text part (repeatable, order-preserving).
    #[arg(long = "text", value_name = "STRING")]
    pub(crate) text: Vec<String>,
    /// A file part: a local path (sent inline) or an http(s) URL (sent by reference).
    #[arg(long = "file", value_name = "PATH|URL")]
    pub(crate) file: Vec<String>,
    /// A data part: a JSON file, `-` for stdin, or inline JSON.
    #[arg(long = "data", value_name = "PATH|-|JSON")]
    pub(crate) data: Vec<String>,
    /// The media type of the part flag just before it.
    #[arg(long = "media-type", value_name = "TYPE")]
    pub(crate) media_type: Vec<String>,
    /// Continue this task (e.g. one waiting in INPUT_REQUIRED).
    #[arg(long = "task-id", env = "A2ACLI_TASK_ID")]
    pub(crate) task_id: Option<String>,
    /// Start the task in this existing context.
    #[arg(long = "context-id", env = "A2ACLI_CONTEXT_ID")]
    pub(crate) context_id: Option<String>,
    /// Message metadata, a JSON object.
    #[arg(long, value_name = "JSON", value_parser = parse_object)]
    pub(crate) metadata: Option<Metadata>,
    /// How many history messages the answer should carry.
    #[arg(long = "history", visible_alias = "history-length", value_name = "N")]
    pub(crate) history: Option<i32>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TaskCommand {
    /// Show a task (state, artifacts, history); --wait polls until it is final or paused.
    Get {
        /// The task id.
        task_id: String,
        /// How many history messages to include.
        #[arg(long = "history", visible_alias = "history-length", value_name = "N")]
        history: Option<i32>,
    },
    /// Cancel a task and show its resulting state.
    Cancel {
        /// The task id.
        task_id: String,
    },
    /// List tasks, newest first, one page (or every page with --all).
    List(ListArgs),
    /// Follow a task's events until it is final or paused.
    Subscribe {
        /// The task id.
        task_id: String,
        /// Resume after this event id (sent as Last-Event-ID).
        #[arg(long = "last-event-id", value_name = "ID")]
        last_event_id: Option<String>,
    },
    /// Manage a task's push notification configs.
    #[command(subcommand, name = "push-config")]
    PushConfig(PushConfigCommand),
    /// Save a task's artifacts to files.
    Download {
        /// The task id.
        task_id: String,
        /// The directory to write into (created if missing).
        #[arg(long, value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// Only this artifact (by id or name).
        #[arg(long, value_name = "ID")]
        artifact: Option<String>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only tasks of this context.
    #[arg(long = "context-id")]
    pub(crate) context_id: Option<String>,
    /// Only tasks in this state (`working`, `completed`, `TASK_STATE_FAILED`, …).
    #[arg(long, value_parser = parse_state)]
    pub(crate) status: Option<TaskState>,
    /// Tasks per page.
    #[arg(long = "page-size")]
    pub(crate) page_size: Option<i32>,
    /// The page to read (a previous answer's next page token).
    #[arg(long = "page-token")]
    pub(crate) page_token: Option<String>,
    /// Only tasks whose status changed after this time (RFC 3339).
    #[arg(long = "updated-after", value_name = "TIME", value_parser = parse_timestamp)]
    pub(crate) updated_after: Option<Timestamp>,
    /// History messages per task.
    #[arg(long = "history", visible_alias = "history-length", value_name = "N")]
    pub(crate) history: Option<i32>,
    /// Include the tasks' artifacts.
    #[arg(long = "include-artifacts")]
    pub(crate) include_artifacts: bool,
    /// Walk every page (following next page tokens).
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PushConfigCommand {
    /// Create a push config for a task.
    Set {
        /// The task id.
        task_id: String,
        /// The webhook URL.
        #[arg(value_name = "WEBHOOK_URL")]
        webhook: String,
        /// The config id (assigned by the agent when absent).
        #[arg(long)]
        id: Option<String>,
        /// A token the agent sends back with each notification.
        #[arg(long)]
        token: Option<String>,
    },
    /// Show one push config.
    Get {
        /// The task id.
        task_id: String,
        /// The config id.
        id: String,
    },
    /// List a task's push configs.
    List {
        /// The task id.
        task_id: String,
    },
    /// Delete a push config.
    Delete {
        /// The task id.
        task_id: String,
        /// The config id.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PushCommand {
    /// Run a local webhook receiver and print each notification it accepts.
    Receive {
        /// The address to listen on (127.0.0.1 only unless you say otherwise).
        #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
        listen: String,
        /// Stop after this many notifications (default: run until Ctrl-C).
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Refuse notifications that do not carry this token (X-A2A-Notification-Token).
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The JSON-RPC method name (e.g. `tasks/search`).
    pub(crate) method: String,
    /// The params, a JSON object (default `{}`).
    #[arg(value_parser = parse_json)]
    pub(crate) params: Option<serde_json::Value>,
    /// The URI of the extension that adds the method.
    #[arg(long)]
    pub(crate) uri: String,
    /// The method's REST path below the interface URL (needed on HTTP+JSON).
    #[arg(long)]
    pub(crate) path: Option<String>,
}

pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 30, 1.5s, 500ms, 2m)"))?;
    if !value.is_finite() || value <= 0.0 || value * scale > 7.0 * 86_400.0 {
        return Err(format!(
            "{s:?}: a duration must be above 0 and at most a week"
        ));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

pub(crate) fn parse_json(s: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(s).map_err(|e| format!("not JSON: {e}"))
}

fn parse_object(s: &str) -> Result<Metadata, String> {
    match parse_json(s)? {
        serde_json::Value::Object(m) => Ok(Metadata(m)),
        _ => Err("must be a JSON object".into()),
    }
}

pub(crate) fn parse_state(s: &str) -> Result<TaskState, String> {
    let upper = s.trim().to_ascii_uppercase().replace('-', "_");
    let name = if upper.starts_with("TASK_STATE_") {
        upper
    } else {
        format!("TASK_STATE_{upper}")
    };
    name.parse::<TaskState>()
        .map_err(|_| format!("unknown task state {s:?} (e.g. working, completed, input-required)"))
}

fn parse_timestamp(s: &str) -> Result<Timestamp, String> {
    serde_json::from_value(serde_json::Value::String(s.to_owned()))
        .map_err(|e| format!("not an RFC 3339 time: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_and_states_parse() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0").is_err() && parse_duration("soon").is_err());
        assert!(parse_duration("NaN").is_err() && parse_duration("1e300").is_err());
        assert_eq!(parse_state("input-required"), Ok(TaskState::InputRequired));
        assert_eq!(parse_state("TASK_STATE_FAILED"), Ok(TaskState::Failed));
        assert!(parse_state("sleeping").is_err());
    }
}
