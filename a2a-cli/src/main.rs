//! `a2a`: talk to an A2A agent from the command line.
//!
//! Every operation of the protocol on JSON-RPC, HTTP+JSON or gRPC (and JSON-RPC to agents that
//! speak only A2A v0.3, detected from their card), human output by default and one JSON
//! document per line with `--json`. Run `a2a --help` for the commands, the exit codes and
//! examples.

mod render;

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::client::{
    A2aClient, Auth, CallOptions, ClientError, ClientOptions, ClientStream, ExtensionCheck,
    SendOptions,
};
use a2a_runtime::types::{
    ListTasksRequest, Message, Metadata, Part, ProtocolBinding, PushConfigId,
    SendMessageConfiguration, TaskPushNotificationConfig, TaskState, Timestamp,
};
use clap::{Args, CommandFactory as _, Parser, Subcommand, ValueEnum};
use futures::StreamExt as _;

use render::Renderer;

const AFTER_HELP: &str = "\
Exit codes:
  0  success
  1  other error (bad input file, could not write output)
  2  usage error (unknown flag, missing argument, malformed value)
  3  connection failed (refused, reset, DNS, TLS)
  4  timeout (no answer, or a silent stream, within --timeout)
  5  HTTP error status without an A2A error in the body
  6  invalid response (not JSON, wrong shape, truncated stream)
  7  the agent answered with an A2A error (the code and reason are printed)
  8  refused locally before sending (e.g. an extension the agent requires is not activated,
     or an operation the agent's protocol version or binding lacks)
  9  authentication or authorization refused (no valid credential: see --bearer, --header)

Examples:
  a2a --url http://127.0.0.1:8080 discover
  a2a send 'hello'
  a2a --binding rest --json send 'hello' | jq .task.status.state
  a2a --binding grpc get TASK_ID
  a2a --bearer TOKEN -H 'X-Request-Source: cli' send 'hello'
  a2a stream 'stream one two three'
  a2a --extension https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1 send hi
  a2a list --status working --page-size 20
  a2a subscribe TASK_ID --last-event-id 7
  a2a push set TASK_ID https://example.com/webhook --token secret
  a2a call tasks/search '{\"query\":\"x\"}' --uri https://example.com/ext/search/v1 \\
      --path /extensions/search/v1/tasks:search
  a2a completions bash > /etc/bash_completion.d/a2a

Logs go to stderr; set RUST_LOG (e.g. RUST_LOG=debug) for more.";

/// Talk to an A2A agent: read its card, send messages, stream replies, manage tasks.
#[derive(Debug, Parser)]
#[command(name = "a2a", version, about, after_long_help = AFTER_HELP, after_help = "Run `a2a --help` for exit codes and examples.")]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Args)]
struct Global {
    /// The agent's base URL (its card is read from /.well-known/agent-card.json below it).
    #[arg(
        long,
        env = "A2A_URL",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    url: String,
    /// The binding to use when the card offers several (default: the card's order). Agents
    /// that speak only A2A v0.3 are reached over JSON-RPC.
    #[arg(long, value_enum, global = true)]
    binding: Option<Binding>,
    /// An extra request header, `Name: value` (repeatable).
    #[arg(
        long = "header",
        short = 'H',
        value_name = "NAME: VALUE",
        global = true
    )]
    headers: Vec<String>,
    /// Authenticate with `Authorization: Bearer TOKEN`.
    #[arg(
        long,
        env = "A2A_BEARER",
        value_name = "TOKEN",
        hide_env_values = true,
        global = true
    )]
    bearer: Option<String>,
    /// Activate an extension by URI on every call (repeatable).
    #[arg(long = "extension", short = 'e', value_name = "URI", global = true)]
    extensions: Vec<String>,
    /// Machine output: one JSON document per line (one per event for streams).
    #[arg(long, global = true)]
    json: bool,
    /// Timeout of each call, and the longest silence tolerated on a stream (`30`, `1.5s`,
    /// `500ms`, `2m`).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration, global = true)]
    timeout: Duration,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Binding {
    /// JSON-RPC 2.0.
    #[value(name = "jsonrpc", alias = "json-rpc")]
    JsonRpc,
    /// HTTP+JSON (REST).
    #[value(name = "rest", alias = "http-json", alias = "http+json")]
    Rest,
    /// gRPC (`lf.a2a.v1.A2AService`).
    #[value(name = "grpc")]
    Grpc,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the agent card: interfaces, capabilities, extensions with their params, skills.
    Discover,
    /// Send a message and print the task (or the agent's direct reply).
    Send(SendArgs),
    /// Send a message and print the events as they arrive.
    Stream(SendArgs),
    /// Show a task.
    Get {
        /// The task id.
        task_id: String,
        /// How many history messages to include.
        #[arg(long)]
        history_length: Option<i32>,
    },
    /// List tasks, newest first, one page (or every page with --all).
    List(ListArgs),
    /// Cancel a task.
    Cancel {
        /// The task id.
        task_id: String,
    },
    /// Follow a task's events until it is final.
    Subscribe {
        /// The task id.
        task_id: String,
        /// Resume after this event id (sent as the Last-Event-ID header).
        #[arg(long)]
        last_event_id: Option<String>,
    },
    /// Manage a task's push notification configs.
    #[command(subcommand)]
    Push(PushCommand),
    /// Call a method added by an extension (its extension is activated for the call).
    Call(CallArgs),
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
struct SendArgs {
    /// The message text.
    text: String,
    /// Continue this task.
    #[arg(long)]
    task_id: Option<String>,
    /// In this context.
    #[arg(long)]
    context_id: Option<String>,
    /// A JSON value to send as a data part after the text (repeatable).
    #[arg(long = "data", value_name = "JSON", value_parser = parse_json)]
    data: Vec<serde_json::Value>,
    /// Message metadata, a JSON object.
    #[arg(long, value_name = "JSON", value_parser = parse_object)]
    metadata: Option<Metadata>,
    /// How many history messages the task should carry.
    #[arg(long)]
    history_length: Option<i32>,
    /// Answer as soon as the task exists instead of waiting for it to finish (send only).
    #[arg(long)]
    return_immediately: bool,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Only tasks of this context.
    #[arg(long)]
    context_id: Option<String>,
    /// Only tasks in this state (`working`, `completed`, `TASK_STATE_FAILED`, …).
    #[arg(long, value_parser = parse_state)]
    status: Option<TaskState>,
    /// Tasks per page.
    #[arg(long)]
    page_size: Option<i32>,
    /// The page to read (from a previous answer's next page token).
    #[arg(long)]
    page_token: Option<String>,
    /// Only tasks whose status changed after this time (RFC 3339).
    #[arg(long, value_name = "TIME", value_parser = parse_timestamp)]
    updated_after: Option<Timestamp>,
    /// History messages per task.
    #[arg(long)]
    history_length: Option<i32>,
    /// Include the tasks' artifacts.
    #[arg(long)]
    include_artifacts: bool,
    /// Walk every page (following next page tokens).
    #[arg(long)]
    all: bool,
}

#[derive(Debug, Subcommand)]
enum PushCommand {
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

#[derive(Debug, Args)]
struct CallArgs {
    /// The JSON-RPC method name (e.g. `tasks/search`).
    method: String,
    /// The params, a JSON object (default `{}`).
    #[arg(value_parser = parse_json)]
    params: Option<serde_json::Value>,
    /// The URI of the extension that adds the method.
    #[arg(long)]
    uri: String,
    /// The method's REST path below the interface URL (needed on HTTP+JSON).
    #[arg(long)]
    path: Option<String>,
}

/// How the command failed: the exit code and what to print.
#[derive(Debug)]
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn other(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: message.into(),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        let code = match &e {
            ClientError::Transport { .. } => 3,
            ClientError::Timeout { .. } => 4,
            ClientError::Http {
                status: 401 | 403, ..
            } => 9,
            ClientError::Http { .. } => 5,
            ClientError::InvalidResponse(_) => 6,
            ClientError::Agent(a) if refused_credentials(a.error()) => 9,
            ClientError::Agent(_) => 7,
            ClientError::Local(_) => 8,
            _ => 1,
        };
        let message = match &e {
            ClientError::Agent(a) => {
                let reason = a.reason().map(|r| format!(" {r}")).unwrap_or_default();
                let meta = if a.metadata().is_empty() {
                    String::new()
                } else {
                    format!(" {}", serde_json::Value::Object(a.metadata().clone()))
                };
                format!(
                    "the agent answered {}{reason}: {}{meta}",
                    a.code(),
                    a.message()
                )
            }
            other => other.to_string(),
        };
        Self { code, message }
    }
}

/// The agent refused the caller's credentials (or their lack): exit code 9.
fn refused_credentials(e: &A2aError) -> bool {
    matches!(
        e,
        A2aError::Unauthenticated { .. } | A2aError::PermissionDenied(_)
    )
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Self::other(format!("could not write the output: {e}"))
    }
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 30, 1.5s, 500ms, 2m)"))?;
    if !value.is_finite() || value <= 0.0 || value * scale > 86_400.0 {
        return Err(format!(
            "{s:?}: a duration must be above 0 and at most a day"
        ));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

fn parse_json(s: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(s).map_err(|e| format!("not JSON: {e}"))
}

fn parse_object(s: &str) -> Result<Metadata, String> {
    match parse_json(s)? {
        serde_json::Value::Object(m) => Ok(Metadata(m)),
        _ => Err("must be a JSON object".into()),
    }
}

fn parse_state(s: &str) -> Result<TaskState, String> {
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

fn parse_header(h: &str) -> Result<(String, String), Failure> {
    let usage = |why: &str| Failure {
        code: 2,
        message: format!("--header {h:?}: {why} (expected `Name: value`)"),
    };
    let (name, value) = h.split_once(':').ok_or_else(|| usage("no colon"))?;
    let name = name.trim();
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid {
        return Err(usage("not a header name"));
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

fn options(g: &Global) -> Result<ClientOptions, Failure> {
    let headers = g
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ClientOptions {
        headers,
        timeout: g.timeout,
        stream_idle_timeout: g.timeout,
        auth: g.bearer.clone().map(Auth::Bearer),
        preferred_binding: g.binding.map(|b| match b {
            Binding::JsonRpc => ProtocolBinding::JsonRpc,
            Binding::Rest => ProtocolBinding::HttpJson,
            Binding::Grpc => ProtocolBinding::Grpc,
        }),
        extension_check: ExtensionCheck::Warn,
        ..ClientOptions::default()
    })
}

async fn connect(g: &Global) -> Result<A2aClient, Failure> {
    let mut builder = A2aClient::builder().options(options(g)?);
    for uri in &g.extensions {
        builder = builder.activate_uri(uri.as_str());
    }
    Ok(builder.connect(g.url.as_str()).await?)
}

fn message(args: &SendArgs) -> Message {
    let mut parts = vec![Part::text(args.text.as_str())];
    parts.extend(args.data.iter().cloned().map(Part::data));
    let mut message = Message::new(a2a_runtime::types::Role::User, parts);
    if let Some(metadata) = &args.metadata {
        message.metadata = metadata.clone();
    }
    message
}

fn send_options(args: &SendArgs, streaming: bool) -> SendOptions {
    let configuration = (args.return_immediately && !streaming).then(|| SendMessageConfiguration {
        return_immediately: true,
        ..SendMessageConfiguration::default()
    });
    SendOptions {
        task_id: args.task_id.clone(),
        context_id: args.context_id.clone(),
        configuration,
        history_length: args.history_length,
        ..SendOptions::default()
    }
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let g = &cli.global;
    let mut out = Renderer::new(g.json);
    match cli.command {
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "a2a", &mut std::io::stdout());
        }
        Command::Discover => {
            let client = connect(g).await?;
            out.card(&client.card(), client.interface())?;
        }
        Command::Send(args) => {
            let client = connect(g).await?;
            let sent = client
                .send_message(message(&args), send_options(&args, false))
                .await?;
            out.sent(sent.get_ref())?;
        }
        Command::Stream(args) => {
            let client = connect(g).await?;
            let events = client
                .stream_message(message(&args), send_options(&args, true))
                .await?
                .into_inner();
            follow(events, &mut out).await?;
        }
        Command::Get {
            task_id,
            history_length,
        } => {
            let client = connect(g).await?;
            out.task(client.get_task(&task_id, history_length).await?.get_ref())?;
        }
        Command::List(args) => {
            let client = connect(g).await?;
            let req = ListTasksRequest {
                context_id: args.context_id.as_deref().unwrap_or_default().into(),
                status: args.status.unwrap_or_default(),
                page_size: args.page_size,
                page_token: args.page_token.clone().unwrap_or_default(),
                history_length: args.history_length,
                status_timestamp_after: args.updated_after,
                include_artifacts: args.include_artifacts.then_some(true),
                ..ListTasksRequest::default()
            };
            if args.all {
                let mut tasks = std::pin::pin!(client.list_all_tasks(req));
                while let Some(task) = tasks.next().await {
                    out.task_row(&task?)?;
                }
            } else {
                out.page(client.list_tasks(req).await?.get_ref())?;
            }
        }
        Command::Cancel { task_id } => {
            let client = connect(g).await?;
            out.task(client.cancel_task(&task_id).await?.get_ref())?;
        }
        Command::Subscribe {
            task_id,
            last_event_id,
        } => {
            let client = connect(g).await?;
            let headers = last_event_id
                .map(|id| vec![("last-event-id".to_owned(), id)])
                .unwrap_or_default();
            let events = client
                .resubscribe_with(
                    &task_id,
                    CallOptions {
                        headers,
                        ..CallOptions::default()
                    },
                )
                .await?
                .into_inner();
            follow(events, &mut out).await?;
        }
        Command::Push(cmd) => {
            let client = connect(g).await?;
            match cmd {
                PushCommand::Set {
                    task_id,
                    webhook,
                    id,
                    token,
                } => {
                    let config = TaskPushNotificationConfig {
                        task_id: task_id.as_str().into(),
                        id: PushConfigId::from(id.as_deref().unwrap_or_default()),
                        url: webhook,
                        token: token.unwrap_or_default(),
                        ..TaskPushNotificationConfig::default()
                    };
                    out.push_config(client.set_push_config(config).await?.get_ref())?;
                }
                PushCommand::Get { task_id, id } => {
                    out.push_config(client.get_push_config(&task_id, &id).await?.get_ref())?;
                }
                PushCommand::List { task_id } => {
                    let list = client.list_push_configs(&task_id).await?.into_inner();
                    out.push_configs(&list.configs)?;
                }
                PushCommand::Delete { task_id, id } => {
                    client.delete_push_config(&task_id, &id).await?;
                    out.deleted(&task_id, &id)?;
                }
            }
        }
        Command::Call(args) => {
            let client = connect(g).await?;
            let rest = client.interface().protocol_binding == ProtocolBinding::HttpJson;
            let path = match (&args.path, rest) {
                (Some(p), _) => p.clone(),
                (None, false) => String::new(),
                (None, true) => {
                    return Err(Failure {
                        code: 2,
                        message:
                            "call on HTTP+JSON needs the method's REST path: --path /extensions/…"
                                .into(),
                    });
                }
            };
            // One call per process: the names live as long as it does.
            let method: &'static str = Box::leak(args.method.into_boxed_str());
            let path: &'static str = Box::leak(path.into_boxed_str());
            let uri: &'static str = Box::leak(args.uri.into_boxed_str());
            let params = args
                .params
                .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
            let result = client
                .call_raw(method, path, uri, params, CallOptions::default())
                .await?;
            out.value(result.get_ref())?;
        }
    }
    Ok(())
}

/// Renders a stream's events as they arrive, with a progress line on a terminal.
async fn follow(mut events: ClientStream, out: &mut Renderer) -> Result<(), Failure> {
    let progress = !out.is_json() && std::io::stderr().is_terminal();
    let started = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(120));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut frame = 0usize;
    loop {
        tokio::select! {
            event = events.next() => {
                if progress {
                    render::clear_progress();
                }
                match event {
                    None => break,
                    Some(Ok(event)) => out.event(&event)?,
                    Some(Err(e)) => {
                        out.finish_stream()?;
                        return Err(e.into());
                    }
                }
            }
            _ = tick.tick(), if progress => {
                frame += 1;
                render::progress(frame, started.elapsed(), out.waiting_on());
            }
        }
    }
    out.finish_stream()?;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("a2a: could not start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("a2a: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_states_and_headers_parse() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0").is_err() && parse_duration("soon").is_err());
        assert!(parse_duration("NaN").is_err() && parse_duration("1e300").is_err());
        assert_eq!(parse_state("input-required"), Ok(TaskState::InputRequired));
        assert_eq!(parse_state("TASK_STATE_FAILED"), Ok(TaskState::Failed));
        assert!(parse_state("sleeping").is_err());
        let (n, v) = parse_header("X-Api-Key:  k1 ")
            .map_err(|f| f.message)
            .unwrap_or_default();
        assert_eq!((n.as_str(), v.as_str()), ("X-Api-Key", "k1"));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header("bad name: x").is_err());
    }
}
