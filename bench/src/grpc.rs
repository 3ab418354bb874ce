//! `a2a-bench grpc`: SendMessage over gRPC against our server, the official Rust SDK's gRPC
//! binding (`a2a-grpc`) and a bare tonic floor (canned replies), with our and the official
//! JSON-RPC beside them, at 1, 16 and 64 concurrent calls; then the events per second of one
//! server stream on each (gRPC and SSE).
//!
//! Every gRPC lane is driven by the same client: tonic's generated `A2aServiceClient` on our
//! `lf.a2a.v1` messages, one HTTP/2 connection per server with the calls as concurrent streams
//! on it, each call carrying `a2a-version: 1.0`. The JSON-RPC lanes use the harness's HTTP/1.1
//! load generator ([`load::run`]), one connection per concurrent call. Each step is cut into
//! short slices and the lanes take turns slice by slice (in rotating order), so that drift of
//! the host hits every lane alike. All servers are child processes on 127.0.0.1 pinned to core 0
//! (as in the main harness), the driver runs on core 1, and every loop is bounded in time.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_runtime::grpc::pb;
use a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

use crate::cli::parse_duration;
use crate::load::{self, Check, LoadResult, Plan, Req};
use crate::procfs;
use crate::servers::{self, Env, Kind, Server};
use crate::wire::{self, STREAM_CHUNKS, STREAM_TEXT, TEXT};

pub(crate) const USAGE: &str = "\
usage: a2a-bench grpc [--duration 3s] [--slice 500ms] [--no-pin]
  --duration D   measured time per lane and step (default 3s, at most 60s)
  --slice D      the lanes take turns every D (default 500ms)
  --no-pin       do not pin the servers to core 0 and the driver to core 1";

/// The concurrency steps.
const STEPS: [usize; 3] = [1, 16, 64];

/// Unmeasured load at the start of every slice (the JSON-RPC lanes connect in it).
const SLICE_WARMUP: Duration = Duration::from_millis(50);

/// A stream that sends nothing for this long is an error, not a hang.
const STALL: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug)]
struct Opts {
    duration: Duration,
    slice: Duration,
    pin: bool,
}

fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let mut o = Opts {
        duration: Duration::from_secs(3),
        slice: Duration::from_millis(500),
        pin: true,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--no-pin" => o.pin = false,
            "--duration" => o.duration = parse_duration(value()?)?,
            "--slice" => o.slice = parse_duration(value()?)?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.duration.is_zero() || o.duration > Duration::from_secs(60) {
        return Err("--duration must be between 1 ms and 60 s".into());
    }
    if o.slice < Duration::from_millis(100) || o.slice > o.duration {
        return Err("--slice must be at least 100 ms and at most --duration".into());
    }
    Ok(Some(o))
}

/// `a2a-bench grpc [options]`: runs the comparison and prints its tables (markdown).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let Some(opts) = parse(args)? else {
        println!("{USAGE}");
        return Ok(());
    };
    // Read before pinning (pinning narrows what this process sees as its cores).
    let machine = procfs::machine();
    let pinned = crate::run::pin_self(opts.pin);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(run_async(opts, pinned, machine))
}

/// One of the four lanes of a step.
#[derive(Clone, Debug)]
enum Lane {
    /// gRPC, on one channel to the server.
    Grpc(&'static str, A2aServiceClient<Channel>),
    /// JSON-RPC over HTTP/1.1 at this address.
    JsonRpc(&'static str, SocketAddr),
}

impl Lane {
    fn label(&self) -> &'static str {
        match self {
            Lane::Grpc(l, _) | Lane::JsonRpc(l, _) => l,
        }
    }
}

async fn run_async(opts: Opts, pinned: bool, machine: String) -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .ok_or("no workspace root")?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let env = Env {
        exe: std::env::current_exe().map_err(|e| format!("current exe: {e}"))?,
        root,
        pin: pinned,
        python: None,
        logs: target.join("bench-grpc/logs"),
    };
    let load_at_start = procfs::loadavg();

    // Our server with both listeners, and the official SDK's two bindings (one process each).
    let ours_grpc_port = servers::free_port()?;
    let ours = Server::start(
        Kind::Ours,
        &env,
        &["--grpc".into(), ours_grpc_port.to_string()],
    )
    .await?;
    let official_grpc = Server::start(Kind::OfficialGrpc, &env, &[]).await?;
    let official = Server::start(Kind::Official, &env, &[]).await?;
    let grpc_floor = Server::start(Kind::GrpcFloor, &env, &[]).await?;
    let ours_grpc = connect(SocketAddr::from(([127, 0, 0, 1], ours_grpc_port))).await?;
    let theirs_grpc = connect(official_grpc.addr).await?;
    let floor_grpc = connect(grpc_floor.addr).await?;

    // Every server answers correctly before anything is timed.
    let ours_sse = servers::check(&ours).await?.stream_events;
    let theirs_sse = servers::check(&official).await?.stream_events;
    let ours_events = check(&ours_grpc)
        .await
        .map_err(|e| format!("ours (gRPC): {e}"))?;
    let theirs_events = check(&theirs_grpc)
        .await
        .map_err(|e| format!("{}: {e}", Kind::OfficialGrpc.label()))?;
    let floor_events = check(&floor_grpc)
        .await
        .map_err(|e| format!("{}: {e}", Kind::GrpcFloor.label()))?;

    let lanes = [
        Lane::Grpc("ours gRPC", ours_grpc.clone()),
        Lane::Grpc("official gRPC", theirs_grpc.clone()),
        Lane::JsonRpc("ours JSON-RPC", ours.addr),
        Lane::JsonRpc("official JSON-RPC", official.addr),
        Lane::Grpc("floor gRPC", floor_grpc.clone()),
    ];
    let slices = (opts.duration.as_secs_f64() / opts.slice.as_secs_f64())
        .ceil()
        .max(1.0) as usize;

    println!("## a2a-bench grpc\n");
    println!("- machine: {machine}");
    println!(
        "- {}; {} slices of {} per lane and step, lanes taking turns in rotating order; \
         load average at start {load_at_start}",
        if pinned {
            "servers pinned to core 0 (taskset), driver to core 1"
        } else {
            "no pinning"
        },
        slices,
        fmt(opts.slice),
    );
    println!(
        "- gRPC: one HTTP/2 connection per server, N concurrent calls on it (tonic client on \
         our lf.a2a.v1 types, a2a-version: 1.0); JSON-RPC: N HTTP/1.1 keep-alive connections"
    );
    println!(
        "- servers: ours = a2a-runtime (one actix worker; gRPC listener on the same process), \
         official = a2a-server-lf 0.5.3 (JSON-RPC, axum) and a2a-grpc 0.3.11 (tonic), \
         floor = bare tonic decoding the request and answering canned messages, \
         each on a single-threaded tokio runtime\n"
    );
    println!("### SendMessage, req/s (p50 ms)\n");
    println!(
        "| concurrent calls | ours gRPC | official gRPC | ours ÷ official (gRPC) | floor gRPC | ours ÷ floor (gRPC) | ours JSON-RPC | official JSON-RPC | ours ÷ official (JSON-RPC) | ours gRPC ÷ ours JSON-RPC |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in STEPS {
        // Unmeasured: every lane warms up at this concurrency.
        for lane in &lanes {
            send(
                lane,
                n,
                Duration::from_millis(300),
                Duration::from_millis(100),
            )
            .await?;
        }
        let mut totals: Vec<Total> = lanes.iter().map(|_| Total::default()).collect();
        for s in 0..slices {
            for k in 0..lanes.len() {
                let i = (k + s) % lanes.len();
                let r = send(&lanes[i], n, SLICE_WARMUP, opts.slice).await?;
                totals[i].add(&r);
            }
        }
        let rate = |i: usize| totals[i].rate();
        let cell = |i: usize| format!("{:.0} ({:.3})", rate(i), totals[i].p50_ms());
        println!(
            "| {n} | {} | {} | **{:.2}×** | {} | **{:.2}×** | {} | {} | {:.2}× | {:.2}× |",
            cell(0),
            cell(1),
            rate(0) / rate(1),
            cell(4),
            rate(0) / rate(4),
            cell(2),
            cell(3),
            rate(2) / rate(3),
            rate(0) / rate(2),
        );
    }

    // One stream at a time: SendStreamingMessage of `stream100` back to back.
    println!(
        "\n### One server stream at a time ({STREAM_TEXT}: {STREAM_CHUNKS} artifact chunks, then COMPLETED), events/s\n"
    );
    println!(
        "events per stream: gRPC ours {ours_events}, official {theirs_events}, floor {floor_events}; SSE ours {ours_sse}, official {theirs_sse}\n"
    );
    println!("| stream | ours | official | ours ÷ official |\n|---|---:|---:|---:|");
    let streams = [
        StreamLane::Grpc(ours_grpc),
        StreamLane::Grpc(theirs_grpc),
        StreamLane::Sse(ours.addr),
        StreamLane::Sse(official.addr),
        StreamLane::Grpc(floor_grpc),
    ];
    for lane in &streams {
        stream(lane, Duration::from_millis(300)).await?;
    }
    let mut events = [(0u64, Duration::ZERO); 5];
    for s in 0..slices {
        for k in 0..streams.len() {
            let i = (k + s) % streams.len();
            let (n, elapsed) = stream(&streams[i], opts.slice).await?;
            events[i].0 += n;
            events[i].1 += elapsed;
        }
    }
    let eps = |i: usize| events[i].0 as f64 / events[i].1.as_secs_f64().max(1e-9);
    println!(
        "| gRPC (server stream) | {:.0} | {:.0} | **{:.2}×** |",
        eps(0),
        eps(1),
        eps(0) / eps(1)
    );
    println!(
        "| JSON-RPC (SSE) | {:.0} | {:.0} | {:.2}× |",
        eps(2),
        eps(3),
        eps(2) / eps(3)
    );
    println!(
        "\ngRPC stream: floor {:.0} events/s; ours ÷ floor **{:.2}×**; ours gRPC ÷ ours SSE **{:.2}×**",
        eps(4),
        eps(0) / eps(4),
        eps(0) / eps(2)
    );
    println!("\nload average at the end {}", procfs::loadavg());
    for server in [ours, official_grpc, official, grpc_floor] {
        server.stop();
    }
    Ok(())
}

/// Requests and time, added over slices.
#[derive(Debug, Default)]
struct Total {
    requests: u64,
    elapsed: Duration,
    latency: Option<hdrhistogram::Histogram<u64>>,
}

impl Total {
    fn add(&mut self, r: &LoadResult) {
        self.requests += r.requests;
        self.elapsed += r.elapsed;
        match &mut self.latency {
            Some(h) => {
                let _ = h.add(&r.latency);
            }
            None => self.latency = Some(r.latency.clone()),
        }
    }

    fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn p50_ms(&self) -> f64 {
        self.latency
            .as_ref()
            .map_or(0.0, |h| h.value_at_quantile(0.5) as f64 / 1e6)
    }
}

fn fmt(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// One HTTP/2 (h2c) connection to a gRPC server.
async fn connect(addr: SocketAddr) -> Result<A2aServiceClient<Channel>, String> {
    let channel = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| e.to_string())?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .map_err(|e| format!("gRPC connect {addr}: {e}"))?;
    Ok(A2aServiceClient::new(channel))
}

/// A call with the `a2a-version: 1.0` metadata.
fn call<T>(message: T) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    req.metadata_mut()
        .insert("a2a-version", MetadataValue::from_static("1.0"));
    req
}

/// SendMessage (or SendStreamingMessage) of a one-text-part user message, with a message id of
/// its own: a repeated id is answered with the first task, the agent not run (issue 48).
fn send_request(text: &str) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        message: Some(pb::Message {
            message_id: crate::load::next_message_id(),
            role: pb::Role::User as i32,
            parts: vec![pb::Part {
                content: Some(pb::part::Content::Text(text.into())),
                ..pb::Part::default()
            }],
            ..pb::Message::default()
        }),
        ..pb::SendMessageRequest::default()
    }
}

fn completed(status: Option<&pb::TaskStatus>) -> bool {
    status.is_some_and(|s| s.state == pb::TaskState::Completed as i32)
}

/// The check before timing: SendMessage of `hello` returns a COMPLETED task whose artifact says
/// `echo: hello`; SendStreamingMessage of `stream100` yields at least 100 events and ends
/// COMPLETED. Returns the events of that stream.
async fn check(client: &A2aServiceClient<Channel>) -> Result<usize, String> {
    let reply = client
        .clone()
        .send_message(call(send_request(TEXT)))
        .await
        .map_err(|e| format!("SendMessage: {e}"))?
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = reply.payload else {
        return Err(format!("SendMessage: not a task: {reply:?}"));
    };
    if !completed(task.status.as_ref()) {
        return Err(format!("SendMessage: the task is not completed: {task:?}"));
    }
    let want = format!("echo: {TEXT}");
    let echoed = task
        .artifacts
        .iter()
        .flat_map(|a| &a.parts)
        .any(|p| matches!(&p.content, Some(pb::part::Content::Text(t)) if *t == want));
    if !echoed {
        return Err(format!("SendMessage: no artifact says {want:?}: {task:?}"));
    }
    let mut stream = client
        .clone()
        .send_streaming_message(call(send_request(STREAM_TEXT)))
        .await
        .map_err(|e| format!("SendStreamingMessage: {e}"))?
        .into_inner();
    let mut events = Vec::new();
    while let Some(event) = tokio::time::timeout(STALL, stream.message())
        .await
        .map_err(|_| "SendStreamingMessage: the stream stalled for 10 s".to_owned())?
        .map_err(|e| format!("SendStreamingMessage: {e}"))?
    {
        events.push(event);
    }
    if events.len() < STREAM_CHUNKS {
        return Err(format!(
            "SendStreamingMessage: {} events, expected at least {STREAM_CHUNKS}",
            events.len()
        ));
    }
    let done = match events.last().and_then(|e| e.payload.as_ref()) {
        Some(pb::stream_response::Payload::StatusUpdate(u)) => completed(u.status.as_ref()),
        Some(pb::stream_response::Payload::Task(t)) => completed(t.status.as_ref()),
        _ => false,
    };
    if !done {
        return Err(format!(
            "SendStreamingMessage: the last event is not COMPLETED: {:?}",
            events.last()
        ));
    }
    Ok(events.len())
}

/// `n` concurrent SendMessage calls on `lane` for `warmup` (unmeasured) then `duration`; an
/// error or a reply that is not a completed task fails the run.
async fn send(
    lane: &Lane,
    n: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<LoadResult, String> {
    let r = match lane {
        Lane::JsonRpc(_, addr) => {
            load::run(
                *addr,
                Req::rpc(wire::send_body()),
                Check::Completed,
                Plan {
                    conns: n,
                    warmup,
                    duration,
                    count: None,
                },
            )
            .await
        }
        Lane::Grpc(_, client) => grpc_send(client, n, warmup, duration).await,
    };
    if r.errors > 0 || r.requests == 0 {
        return Err(format!(
            "{}: {} errors, {} requests at {n} concurrent calls; first error: {}",
            lane.label(),
            r.errors,
            r.requests,
            r.first_error.unwrap_or_default()
        ));
    }
    Ok(r)
}

async fn grpc_send(
    client: &A2aServiceClient<Channel>,
    n: usize,
    warmup: Duration,
    duration: Duration,
) -> LoadResult {
    let measure_from = Instant::now() + warmup;
    let deadline = measure_from + duration;
    let message = Arc::new(send_request(TEXT));
    let workers: Vec<_> = (0..n)
        .map(|_| {
            let mut client = client.clone();
            let message = message.clone();
            tokio::spawn(async move {
                let mut r = LoadResult {
                    requests: 0,
                    errors: 0,
                    first_error: None,
                    elapsed: Duration::ZERO,
                    latency: load::histogram(),
                };
                let mut last = measure_from;
                // A lane that keeps failing gives up rather than spinning.
                while r.errors < 100 && Instant::now() < deadline {
                    let t0 = Instant::now();
                    let mut each = (*message).clone();
                    // A message id of its own per call (a repeated one answers with its first
                    // task: see `load::unique_message_id`).
                    if let Some(m) = each.message.as_mut() {
                        m.message_id = crate::load::next_message_id();
                    }
                    let outcome = match client.send_message(call(each)).await {
                        Ok(reply) => match reply.into_inner().payload {
                            Some(pb::send_message_response::Payload::Task(t))
                                if completed(t.status.as_ref()) =>
                            {
                                Ok(())
                            }
                            other => Err(format!("not a completed task: {other:?}")),
                        },
                        Err(status) => Err(format!("status: {status}")),
                    };
                    let done = Instant::now();
                    match outcome {
                        Ok(()) if t0 >= measure_from => {
                            r.requests += 1;
                            let _ = r.latency.record(
                                u64::try_from((done - t0).as_nanos())
                                    .unwrap_or(u64::MAX)
                                    .max(1_000),
                            );
                            last = done;
                        }
                        Ok(()) => {}
                        Err(e) => {
                            r.errors += 1;
                            r.first_error.get_or_insert(e);
                        }
                    }
                }
                r.elapsed = last.saturating_duration_since(measure_from);
                r
            })
        })
        .collect();
    let mut total = LoadResult {
        requests: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latency: load::histogram(),
    };
    for w in workers {
        match w.await {
            Ok(r) => {
                total.requests += r.requests;
                total.errors += r.errors;
                if total.first_error.is_none() {
                    total.first_error = r.first_error;
                }
                let _ = total.latency.add(&r.latency);
                total.elapsed = total.elapsed.max(r.elapsed);
            }
            Err(e) => {
                total.errors += 1;
                total
                    .first_error
                    .get_or_insert_with(|| format!("load task failed: {e}"));
            }
        }
    }
    total
}

/// One stream lane.
#[derive(Clone, Debug)]
enum StreamLane {
    /// SendStreamingMessage over gRPC on this channel.
    Grpc(A2aServiceClient<Channel>),
    /// SendStreamingMessage over JSON-RPC (SSE) at this address.
    Sse(SocketAddr),
}

/// Streams of `stream100` back to back, one at a time, for `duration`: (events, elapsed).
async fn stream(lane: &StreamLane, duration: Duration) -> Result<(u64, Duration), String> {
    match lane {
        StreamLane::Sse(addr) => {
            let r = load::stream_run(
                *addr,
                Req::rpc(wire::stream_body()),
                STREAM_CHUNKS as u64,
                Duration::ZERO,
                duration,
            )
            .await;
            if r.errors > 0 || r.streams == 0 {
                return Err(format!(
                    "SSE stream on {addr}: {} errors; first: {}",
                    r.errors,
                    r.first_error.unwrap_or_default()
                ));
            }
            Ok((r.events, r.elapsed))
        }
        StreamLane::Grpc(client) => {
            let mut client = client.clone();
            let start = Instant::now();
            let deadline = start + duration;
            let mut events = 0u64;
            while Instant::now() < deadline {
                let mut stream = client
                    .send_streaming_message(call(send_request(STREAM_TEXT)))
                    .await
                    .map_err(|e| format!("gRPC stream: {e}"))?
                    .into_inner();
                let mut n = 0u64;
                while tokio::time::timeout(STALL, stream.message())
                    .await
                    .map_err(|_| "gRPC stream stalled for 10 s".to_owned())?
                    .map_err(|e| format!("gRPC stream: {e}"))?
                    .is_some()
                {
                    n += 1;
                }
                if n < STREAM_CHUNKS as u64 {
                    return Err(format!(
                        "gRPC stream: {n} events, expected at least {STREAM_CHUNKS}"
                    ));
                }
                events += n;
            }
            Ok((events, start.elapsed()))
        }
    }
}
