//! One request pipeline behind every binding: the same scenario table (authentication matrix,
//! authorization by tenant, a required extension, a method extension, the activation echo,
//! version errors) run raw through JSON-RPC, HTTP+JSON, gRPC, v0.3 JSON-RPC, v0.3 HTTP+JSON,
//! and a line-delimited JSON binding written here on the public `service` API, against one
//! server. Every binding gets the outcome its dialect expects; no binding authenticates,
//! negotiates or authorizes by itself.
//!
//! v0.3 has no tenants and no extension methods: those rows are not sent over the v0.3
//! bindings. gRPC reaches extension methods through `a2a_runtime.extensions.v1.ExtensionMethods`.

use std::collections::BTreeSet;
use std::sync::Arc;

use a2a_runtime::auth::{DefaultAuthorizer, StaticTokens};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink, Limits};
use a2a_runtime::extension::{ExtensionHooks, ExtensionMethod, MethodEntry};
use a2a_runtime::grpc::extension_methods::ExtensionMethodRequest;
use a2a_runtime::grpc::extension_methods::extension_methods_client::ExtensionMethodsClient;
use a2a_runtime::grpc::pb;
use a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient;
use a2a_runtime::protocol::{A2aRequest, Operation, RequestHeaders};
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::service::{Answer, Decoded, Payload, Pipeline, RequestMeta, Target};
use a2a_runtime::test::{agent_card, within};
use a2a_runtime::types::{Artifact, Part};
use a2a_runtime::{A2aError, a2a_extension};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

const NEEDED: &str = "https://test.example/pipeline/needed/v1";
const EXTRA: &str = "https://test.example/pipeline/extra/v1";
const PINGER: &str = "https://test.example/pipeline/pinger/v1";
const TOKEN: &str = "alice-s3cret";

/// An extension every request must activate.
#[a2a_extension(uri = "https://test.example/pipeline/needed/v1", required = true)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Needed {}

impl ExtensionHooks for Needed {
    type Activation = ();
}

/// An optional extension.
#[a2a_extension(uri = "https://test.example/pipeline/extra/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Extra {}

impl ExtensionHooks for Extra {
    type Activation = ();
}

/// An extension with a method.
#[a2a_extension(uri = "https://test.example/pipeline/pinger/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Pinger {}

#[derive(Debug, Serialize, Deserialize)]
struct PingParams {
    say: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Pong {
    heard: String,
    caller: String,
}

struct Ping;

impl ExtensionMethod for Ping {
    type Extension = Pinger;
    const METHOD: &'static str = "pinger/ping";
    const REST_PATH: &'static str = "/extensions/pinger/v1/ping";
    type Params = PingParams;
    type Result = Pong;
}

impl ExtensionHooks for Pinger {
    type Activation = ();

    fn methods(&self) -> Vec<MethodEntry> {
        vec![MethodEntry::new::<Ping, _, _>(
            |ctx, params: PingParams| async move {
                Ok(Pong {
                    heard: params.say,
                    caller: ctx.request.principal.id().to_owned(),
                })
            },
        )]
    }
}

struct Echo;

impl AgentExecutor for Echo {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = format!("echo: {}", ctx.text());
        events.artifact(Artifact::new([Part::text(text)])).await?;
        events.complete().await
    }
}

/// The bindings of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binding {
    JsonRpc,
    Rest,
    Grpc,
    JsonRpcV03,
    RestV03,
    /// Line-delimited JSON over TCP, written below on the public pipeline API.
    Lines,
}

impl Binding {
    const ALL: [Self; 6] = [
        Self::JsonRpc,
        Self::Rest,
        Self::Grpc,
        Self::JsonRpcV03,
        Self::RestV03,
        Self::Lines,
    ];

    fn v0_3(self) -> bool {
        matches!(self, Self::JsonRpcV03 | Self::RestV03)
    }
}

/// What a row asks.
#[derive(Clone, Debug)]
enum Action {
    GetTask(&'static str),
    Send(&'static str),
    ListTasksIn(&'static str),
    Ping(&'static str),
}

/// A row's request: credential, `A2A-Version` (`None`: the header is left out; the v0.3
/// bindings then send none either, `Some("v1")` means "the binding's own version"), extensions.
struct Row {
    name: &'static str,
    token: Option<&'static str>,
    version: Version,
    extensions: &'static [&'static str],
    action: Action,
    /// The outcome on the v1.0 bindings.
    v1: Outcome,
    /// The outcome on the v0.3 bindings (`None`: v0.3 cannot carry the row).
    v0_3: Option<Outcome>,
    /// Where v0.3 JSON-RPC differs from v0.3 HTTP+JSON: a v0.3 method name is no method of
    /// another version, where a `/v1/…` path is also a path of tenant `v1` in v1.0.
    v0_3_jsonrpc: Option<Outcome>,
}

#[derive(Clone, Copy, Debug)]
enum Version {
    /// The binding's own version: `1.0`, or none for v0.3.
    Own,
    Missing,
    Given(&'static str),
}

/// A normalised outcome: `ok` with the echoed extensions (sorted) and what the answer says,
/// or the error's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Ok {
        echoed: BTreeSet<String>,
        says: String,
    },
    Err(&'static str),
}

fn ok(echoed: &[&str], says: &str) -> Outcome {
    Outcome::Ok {
        echoed: echoed.iter().map(|s| (*s).to_owned()).collect(),
        says: says.to_owned(),
    }
}

fn table() -> Vec<Row> {
    use Outcome::Err;
    let base = || Row {
        name: "",
        token: Some(TOKEN),
        version: Version::Own,
        extensions: &[NEEDED],
        action: Action::GetTask("no-such-task"),
        v1: Err("TASK_NOT_FOUND"),
        v0_3: Some(Err("TASK_NOT_FOUND")),
        v0_3_jsonrpc: None,
    };
    vec![
        Row {
            name: "no credential",
            token: None,
            v1: Err("UNAUTHENTICATED"),
            v0_3: Some(Err("UNAUTHENTICATED")),
            ..base()
        },
        Row {
            name: "a wrong credential",
            token: Some("not-the-token"),
            v1: Err("UNAUTHENTICATED"),
            v0_3: Some(Err("UNAUTHENTICATED")),
            ..base()
        },
        Row {
            name: "no credential, and no extension either: authentication first",
            token: None,
            extensions: &[],
            v1: Err("UNAUTHENTICATED"),
            v0_3: Some(Err("UNAUTHENTICATED")),
            ..base()
        },
        Row {
            name: "authenticated, a task that does not exist",
            ..base()
        },
        Row {
            name: "authenticated, send: activated extensions echoed",
            extensions: &[NEEDED, EXTRA],
            action: Action::Send("hello"),
            v1: ok(&[NEEDED, EXTRA], "echo: hello"),
            v0_3: Some(ok(&[NEEDED, EXTRA], "echo: hello")),
            ..base()
        },
        Row {
            name: "authenticated, send: an unknown extension is not echoed",
            extensions: &[NEEDED, "https://test.example/unknown/v1"],
            action: Action::Send("hi"),
            v1: ok(&[NEEDED], "echo: hi"),
            v0_3: Some(ok(&[NEEDED], "echo: hi")),
            ..base()
        },
        Row {
            name: "the required extension not requested",
            extensions: &[EXTRA],
            v1: Err("EXTENSION_SUPPORT_REQUIRED"),
            v0_3: Some(Err("EXTENSION_SUPPORT_REQUIRED")),
            ..base()
        },
        Row {
            name: "a tenant the caller is no member of",
            action: Action::ListTasksIn("globex"),
            v1: Err("PERMISSION_DENIED"),
            v0_3: None,
            ..base()
        },
        Row {
            name: "a method extension, activated",
            extensions: &[NEEDED, PINGER],
            action: Action::Ping("marco"),
            v1: ok(&[NEEDED, PINGER], "marco from alice"),
            v0_3: None,
            ..base()
        },
        Row {
            name: "a method extension, not activated",
            action: Action::Ping("marco"),
            v1: Err("METHOD_NOT_FOUND"),
            v0_3: None,
            ..base()
        },
        Row {
            name: "a method extension without credential",
            token: None,
            extensions: &[NEEDED, PINGER],
            action: Action::Ping("marco"),
            v1: Err("UNAUTHENTICATED"),
            v0_3: None,
            ..base()
        },
        Row {
            name: "no A2A-Version (0.3)",
            version: Version::Missing,
            v1: Err("VERSION_NOT_SUPPORTED"),
            // Without a version a request is v0.3's: served.
            v0_3: Some(Err("TASK_NOT_FOUND")),
            ..base()
        },
        Row {
            name: "an unsupported A2A-Version",
            version: Version::Given("99.0"),
            v1: Err("VERSION_NOT_SUPPORTED"),
            v0_3: Some(Err("VERSION_NOT_SUPPORTED")),
            v0_3_jsonrpc: Some(Err("METHOD_NOT_FOUND")),
            ..base()
        },
        Row {
            name: "a version error comes after authentication",
            token: None,
            version: Version::Given("99.0"),
            v1: Err("UNAUTHENTICATED"),
            v0_3: Some(Err("UNAUTHENTICATED")),
            ..base()
        },
    ]
}

/// The server of the table: bearer tokens, the default authorizer, three extensions, both
/// listeners; and the line binding on its pipeline.
async fn start() -> (RunningServer, std::net::SocketAddr) {
    let server = A2aServer::builder()
        .card(agent_card("pipeline table"))
        .executor(Echo)
        .workers(1)
        .linked_extensions(false)
        .extension(Needed::default())
        .extension(Extra::default())
        .extension(Pinger::default())
        .authenticator(StaticTokens::bearer().token("alice", TOKEN))
        .authorizer(DefaultAuthorizer::new())
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap();
    let lines = serve_lines(Arc::new(server.pipeline().clone())).await;
    (server.start("127.0.0.1:0").await.unwrap(), lines)
}

/// The `reason` of the first `ErrorInfo` in an error body, whatever its shape.
fn reason(v: &Value) -> Option<&'static str> {
    const KNOWN: [&str; 7] = [
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
        "TASK_NOT_FOUND",
        "EXTENSION_SUPPORT_REQUIRED",
        "METHOD_NOT_FOUND",
        "VERSION_NOT_SUPPORTED",
        "INVALID_ARGUMENT",
    ];
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("reason").and_then(Value::as_str) {
                return KNOWN.into_iter().find(|k| *k == r);
            }
            m.values().find_map(reason)
        }
        Value::Array(a) => a.iter().find_map(reason),
        _ => None,
    }
}

/// What a successful answer says: the agent's artifact text, or the method's reply.
fn says(result: &Value) -> String {
    if let Some(heard) = result.get("heard").and_then(Value::as_str) {
        return format!("{heard} from {}", result["caller"].as_str().unwrap_or("?"));
    }
    let task = result.get("task").unwrap_or(result);
    let text = task["artifacts"][0]["parts"][0]["text"].as_str();
    text.unwrap_or("(no artifact)").to_owned()
}

fn echoed(values: impl Iterator<Item = String>) -> BTreeSet<String> {
    values
        .flat_map(|v| {
            v.split(',')
                .map(|s| s.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// The row's request over an HTTP binding, and its normalised outcome.
async fn over_http(http: &reqwest::Client, url: &str, binding: Binding, row: &Row) -> Outcome {
    let v0_3 = binding.v0_3();
    let (method, path, body): (reqwest::Method, String, Option<Value>) = match (
        binding,
        &row.action,
    ) {
        (Binding::JsonRpc | Binding::JsonRpcV03, action) => {
            let (name, params) = match action {
                Action::GetTask(id) if v0_3 => ("tasks/get", json!({"id": id})),
                Action::GetTask(id) => ("GetTask", json!({"id": id})),
                Action::Send(text) if v0_3 => (
                    "message/send",
                    json!({"message": {"kind": "message", "messageId": a2a_tests::params::mid(), "role": "user",
                        "parts": [{"kind": "text", "text": text}]}}),
                ),
                Action::Send(text) => (
                    "SendMessage",
                    json!({"message": {"messageId": a2a_tests::params::mid(), "role": "ROLE_USER",
                        "parts": [{"text": text}]}}),
                ),
                Action::ListTasksIn(tenant) => ("ListTasks", json!({"tenant": tenant})),
                Action::Ping(say) => ("pinger/ping", json!({"say": say})),
            };
            let envelope = json!({"jsonrpc": "2.0", "id": 7, "method": name, "params": params});
            (reqwest::Method::POST, "/".to_owned(), Some(envelope))
        }
        (_, Action::GetTask(id)) if v0_3 => (reqwest::Method::GET, format!("/v1/tasks/{id}"), None),
        (_, Action::GetTask(id)) => (reqwest::Method::GET, format!("/tasks/{id}"), None),
        (_, Action::Send(text)) if v0_3 => (
            reqwest::Method::POST,
            "/v1/message:send".to_owned(),
            Some(
                json!({"message": {"messageId": a2a_tests::params::mid(), "role": "ROLE_USER",
                "content": [{"text": text}]}}),
            ),
        ),
        (_, Action::Send(text)) => (
            reqwest::Method::POST,
            "/message:send".to_owned(),
            Some(
                json!({"message": {"messageId": a2a_tests::params::mid(), "role": "ROLE_USER",
                "parts": [{"text": text}]}}),
            ),
        ),
        (_, Action::ListTasksIn(tenant)) => {
            (reqwest::Method::GET, format!("/{tenant}/tasks"), None)
        }
        (_, Action::Ping(say)) => (
            reqwest::Method::POST,
            "/extensions/pinger/v1/ping".to_owned(),
            Some(json!({"say": say})),
        ),
    };
    let mut req = http.request(method, format!("{url}{path}"));
    if let Some(token) = row.token {
        req = req.bearer_auth(token);
    }
    match row.version {
        Version::Own if !v0_3 => req = req.header("A2A-Version", "1.0"),
        Version::Own | Version::Missing => {}
        Version::Given(v) => req = req.header("A2A-Version", v),
    }
    if !row.extensions.is_empty() {
        req = req.header("A2A-Extensions", row.extensions.join(", "));
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = within("request", req.send()).await.unwrap();
    let headers = resp.headers().clone();
    let text = within("body", resp.text()).await.unwrap();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let result = match binding {
        Binding::JsonRpc | Binding::JsonRpcV03 => body.get("result").cloned(),
        _ => body.get("error").is_none().then(|| body.clone()),
    };
    let (Some(result), None) = (result, reason(&body)) else {
        return Outcome::Err(reason(&body).unwrap_or_else(|| panic!("{binding:?}: {text}")));
    };
    let values = headers
        .get_all("a2a-extensions")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned));
    let echo = echoed(values);
    if v0_3 {
        let legacy = headers
            .get_all("x-a2a-extensions")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned));
        assert_eq!(echoed(legacy), echo, "{binding:?}: X-A2A-Extensions");
    }
    Outcome::Ok {
        echoed: echo,
        says: says(&result),
    }
}

/// `req` with the row's credential, version and extensions in its metadata.
fn dress<T>(row: &Row, mut req: tonic::Request<T>) -> tonic::Request<T> {
    let meta = req.metadata_mut();
    if let Some(token) = row.token {
        meta.insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    match row.version {
        Version::Own => {
            meta.insert("a2a-version", "1.0".parse().unwrap());
        }
        Version::Missing => {}
        Version::Given(v) => {
            meta.insert("a2a-version", v.parse().unwrap());
        }
    }
    if !row.extensions.is_empty() {
        meta.insert("a2a-extensions", row.extensions.join(",").parse().unwrap());
    }
    req
}

/// The row's request over gRPC.
async fn over_grpc(addr: std::net::SocketAddr, row: &Row) -> Outcome {
    let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
    let channel = within("connect", endpoint.connect()).await.unwrap();
    let mut client = A2aServiceClient::new(channel.clone());
    let answer = match &row.action {
        Action::GetTask(id) => {
            let req = pb::GetTaskRequest {
                id: (*id).to_owned(),
                ..Default::default()
            };
            client
                .get_task(dress(row, tonic::Request::new(req)))
                .await
                .map(|r| {
                    let (meta, task, _) = r.into_parts();
                    let task: a2a_runtime::types::Task = task.into();
                    (meta, serde_json::to_value(task).unwrap())
                })
        }
        Action::Send(text) => {
            let req = a2a_runtime::types::SendMessageRequest {
                message: a2a_runtime::types::Message::user_text(*text),
                ..Default::default()
            };
            let req = pb::SendMessageRequest::from(req);
            client
                .send_message(dress(row, tonic::Request::new(req)))
                .await
                .map(|r| {
                    let (meta, reply, _) = r.into_parts();
                    let reply: a2a_runtime::types::SendMessageResponse = reply.try_into().unwrap();
                    (meta, serde_json::to_value(reply).unwrap())
                })
        }
        Action::ListTasksIn(tenant) => {
            let req = pb::ListTasksRequest {
                tenant: (*tenant).to_owned(),
                ..Default::default()
            };
            client
                .list_tasks(dress(row, tonic::Request::new(req)))
                .await
                .map(|r| {
                    let (meta, _, _) = r.into_parts();
                    (meta, json!({}))
                })
        }
        Action::Ping(say) => {
            let mut methods = ExtensionMethodsClient::new(channel);
            let params = prost_types::Struct {
                fields: [("say".to_owned(), text_value(say))].into(),
            };
            let req = ExtensionMethodRequest {
                method: "pinger/ping".into(),
                params: Some(params),
                tenant: String::new(),
            };
            methods
                .call(dress(row, tonic::Request::new(req)))
                .await
                .map(|r| {
                    let (meta, result, _) = r.into_parts();
                    (meta, json_of(result))
                })
        }
    };
    match answer {
        Err(status) => {
            let details = tonic_types::StatusExt::get_error_details(&status);
            let reason = details
                .error_info()
                .map(|i| i.reason.clone())
                .unwrap_or_default();
            Outcome::Err(reason_of(&reason).unwrap_or_else(|| panic!("gRPC: {status:?}")))
        }
        Ok((meta, result)) => {
            let values = meta
                .get_all("a2a-extensions")
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_owned));
            Outcome::Ok {
                echoed: echoed(values),
                says: says(&result),
            }
        }
    }
}

fn text_value(text: &str) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(text.to_owned())),
    }
}

/// The JSON of a `google.protobuf.Value`.
fn json_of(v: prost_types::Value) -> Value {
    use prost_types::value::Kind;
    match v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => json!(b),
        Some(Kind::NumberValue(n)) => json!(n),
        Some(Kind::StringValue(s)) => json!(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.into_iter().map(json_of).collect()),
        Some(Kind::StructValue(s)) => {
            Value::Object(s.fields.into_iter().map(|(k, v)| (k, json_of(v))).collect())
        }
    }
}

fn reason_of(r: &str) -> Option<&'static str> {
    reason(&json!({"reason": r}))
}

// ---- a binding written on the public pipeline API --------------------------------------------

/// One request of the line binding: `{"headers": {..}, "method": "..", "params": {..}}`.
#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    headers: serde_json::Map<String, Value>,
    method: String,
    #[serde(default)]
    params: Value,
}

/// The line binding's payload: decoded already, read once the pipeline asks.
struct LinePayload {
    method: String,
    params: Value,
}

impl Payload for LinePayload {
    async fn target(&mut self, _: &Limits) -> Result<Target, A2aError> {
        Ok(match Operation::from_method(&self.method) {
            Some(op) => Target::Operation(op),
            None => Target::Method(self.method.clone()),
        })
    }

    async fn decode(&mut self, target: &Target, _: &Limits) -> Result<Decoded, A2aError> {
        let params = std::mem::take(&mut self.params);
        match target {
            Target::Operation(op) => A2aRequest::from_params(*op, params).map(Decoded::Operation),
            _ => Ok(Decoded::Method(params)),
        }
    }
}

/// Serves the line binding on a free local port: it decodes and encodes, nothing else.
async fn serve_lines(pipeline: Arc<Pipeline>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, peer)) = listener.accept().await {
            let pipeline = pipeline.clone();
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let reply = match serde_json::from_str::<Line>(&line) {
                        Err(e) => {
                            json!({"error": {"reason": "INVALID_ARGUMENT", "message": e.to_string()}})
                        }
                        Ok(line) => {
                            let mut headers = RequestHeaders::new();
                            for (name, value) in &line.headers {
                                headers.push(name, value.as_str().unwrap_or_default());
                            }
                            let mut meta = RequestMeta::from_headers(headers);
                            meta.peer = Some(peer);
                            let mut payload = LinePayload {
                                method: line.method,
                                params: line.params,
                            };
                            encode(pipeline.serve(meta, &mut payload).await)
                        }
                    };
                    let mut out = reply.to_string();
                    out.push('\n');
                    if write.write_all(out.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

fn encode(answer: Result<Answer, A2aError>) -> Value {
    match answer {
        Err(e) => json!({"error": {"reason": e.reason(), "message": e.to_string()}}),
        Ok(Answer::Method { result, activated }) => {
            json!({"result": result, "extensions": activated.uris().collect::<Vec<_>>()})
        }
        Ok(Answer::Operation(served)) => {
            let result = served.response().to_json().and_then(Result::ok);
            let result: Value = result
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .unwrap_or(Value::Null);
            json!({"result": result, "extensions": served.activated.uris().collect::<Vec<_>>()})
        }
    }
}

/// The row's request over the line binding.
async fn over_lines(addr: std::net::SocketAddr, row: &Row) -> Outcome {
    let mut headers = serde_json::Map::new();
    if let Some(token) = row.token {
        headers.insert("Authorization".into(), json!(format!("Bearer {token}")));
    }
    match row.version {
        Version::Own => {
            headers.insert("A2A-Version".into(), json!("1.0"));
        }
        Version::Missing => {}
        Version::Given(v) => {
            headers.insert("A2A-Version".into(), json!(v));
        }
    }
    if !row.extensions.is_empty() {
        headers.insert("A2A-Extensions".into(), json!(row.extensions.join(", ")));
    }
    let (method, params) = match &row.action {
        Action::GetTask(id) => ("GetTask", json!({"id": id})),
        Action::Send(text) => (
            "SendMessage",
            json!({"message": {"messageId": a2a_tests::params::mid(), "role": "ROLE_USER", "parts": [{"text": text}]}}),
        ),
        Action::ListTasksIn(tenant) => ("ListTasks", json!({"tenant": tenant})),
        Action::Ping(say) => ("pinger/ping", json!({"say": say})),
    };
    let request = json!({"headers": headers, "method": method, "params": params});
    let mut socket = within("connect", tokio::net::TcpStream::connect(addr))
        .await
        .unwrap();
    socket
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(socket).lines();
    let line = within("reply", lines.next_line()).await.unwrap().unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap();
    if let Some(error) = reply.get("error") {
        return Outcome::Err(reason(error).unwrap_or_else(|| panic!("lines: {line}")));
    }
    let values = reply["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned());
    Outcome::Ok {
        echoed: echoed(values),
        says: says(&reply["result"]),
    }
}

#[tokio::test]
async fn every_binding_gets_the_same_outcomes_from_the_one_pipeline() {
    let (running, lines) = start().await;
    let url = running.url();
    let grpc = running.grpc_addr().unwrap();
    let http = reqwest::Client::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for row in table() {
        for binding in Binding::ALL {
            let expected = if binding.v0_3() {
                let v0_3 = match binding {
                    Binding::JsonRpcV03 => row.v0_3_jsonrpc.as_ref().or(row.v0_3.as_ref()),
                    _ => row.v0_3.as_ref(),
                };
                match v0_3 {
                    Some(o) => o.clone(),
                    None => continue,
                }
            } else {
                row.v1.clone()
            };
            let got = match binding {
                Binding::Grpc => over_grpc(grpc, &row).await,
                Binding::Lines => over_lines(lines, &row).await,
                _ => over_http(&http, &url, binding, &row).await,
            };
            checked += 1;
            if got != expected {
                failures.push(format!(
                    "{}: {binding:?}: got {got:?}, expected {expected:?}",
                    row.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, 76, "cells checked");
    running.stop().await;
}
