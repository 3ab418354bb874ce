//! The servers under test: how each one is served (`a2a-bench serve <kind> <port>`), started as
//! a pinned child process, checked, and stopped.

mod floor;
mod grpc_floor;
mod official;
pub(crate) mod ours;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::load::{self, Req};
use crate::wire;

/// A server under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// a2a-runtime, echo agent, in-memory store, one worker.
    Ours,
    /// The same with three extensions activated on every request.
    Ours3Ext,
    /// The same with ten no-op extensions (hooks on request, response and event) activated on
    /// every request: what activation itself costs.
    Ours10Ext,
    /// `ours` with the bearer-token authenticator (one token), sent on every request.
    OursBearer,
    /// `ours` with the JWT authenticator (ES256, key known), one token sent on every request.
    OursJwt,
    /// The official Rust SDK (`a2a-server-lf`).
    Official,
    /// The official Rust SDK's gRPC binding (`a2a-grpc` over `a2a-server-lf`): gRPC only, no
    /// HTTP listener, so it is loaded by `a2a-bench grpc` alone.
    OfficialGrpc,
    /// The official Python SDK (`a2a-sdk`) under uvicorn, one worker.
    Python,
    /// Bare actix-web: parse the body, answer a canned reply.
    Floor,
    /// Bare tonic: decode the request, answer canned messages; gRPC only, loaded by
    /// `a2a-bench grpc` alone.
    GrpcFloor,
}

impl Kind {
    pub(crate) const ALL: [Kind; 6] = [
        Kind::Ours,
        Kind::Ours3Ext,
        Kind::Ours10Ext,
        Kind::Official,
        Kind::Python,
        Kind::Floor,
    ];

    /// Servers measured only when named with `--servers`.
    pub(crate) const EXTRA: [Kind; 2] = [Kind::OursBearer, Kind::OursJwt];

    /// The name on the command line.
    pub(crate) fn arg(self) -> &'static str {
        match self {
            Kind::OursBearer => "oursbearer",
            Kind::OursJwt => "oursjwt",
            Kind::Ours => "ours",
            Kind::Ours3Ext => "ours3ext",
            Kind::Ours10Ext => "ours10ext",
            Kind::Official => "official",
            Kind::OfficialGrpc => "officialgrpc",
            Kind::Python => "python",
            Kind::Floor => "floor",
            Kind::GrpcFloor => "grpcfloor",
        }
    }

    /// The name in the table.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Ours => "ours",
            Kind::Ours3Ext => "ours+3ext",
            Kind::Ours10Ext => "ours+10ext",
            Kind::OursBearer => "ours+bearer",
            Kind::OursJwt => "ours+jwt",
            Kind::Official => "official Rust (a2a-server-lf 0.5.3)",
            Kind::OfficialGrpc => "official Rust gRPC (a2a-grpc 0.3.11)",
            Kind::Python => "official Python (a2a-sdk 1.3.0)",
            Kind::Floor => "floor (bare actix-web)",
            Kind::GrpcFloor => "gRPC floor (bare tonic)",
        }
    }

    /// A server with a gRPC listener only (no card over HTTP to wait for).
    pub(crate) fn grpc_only(self) -> bool {
        matches!(self, Kind::OfficialGrpc | Kind::GrpcFloor)
    }

    /// One of a2a-runtime's servers.
    pub(crate) fn is_ours(self) -> bool {
        matches!(
            self,
            Kind::Ours | Kind::Ours3Ext | Kind::Ours10Ext | Kind::OursBearer | Kind::OursJwt
        )
    }

    /// The extension URIs this server's clients ask for on every request.
    pub(crate) fn extensions(self) -> Vec<&'static str> {
        match self {
            Kind::Ours3Ext => ours::EXTENSIONS.to_vec(),
            Kind::Ours10Ext => ours::NOOP_EXTENSIONS.to_vec(),
            _ => Vec::new(),
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .chain(Kind::EXTRA)
            .find(|k| k.arg() == s || k.label() == s)
    }

    /// Decorates a request the way this server's clients do (`ours+3ext` and `ours+10ext` ask
    /// for their extensions on every request).
    pub(crate) fn request(self, req: Req) -> Req {
        let req = match self {
            Kind::OursBearer => {
                req.with_header("authorization", &format!("Bearer {}", ours::BEARER))
            }
            Kind::OursJwt => req.with_header("authorization", &format!("Bearer {}", ours::JWT)),
            _ => req,
        };
        let uris = self.extensions();
        if uris.is_empty() {
            req
        } else {
            req.with_header("a2a-extensions", &uris.join(", "))
        }
    }
}

/// `a2a-bench serve <kind> <port>`: serve one server until killed.
pub(crate) fn serve(args: &[String]) -> Result<(), String> {
    let (Some(kind), Some(port)) = (args.first(), args.get(1)) else {
        return Err(
            "usage: a2a-bench serve <ours|ours3ext|ours10ext|official|officialgrpc|floor|grpcfloor> \
                    <port> [--retain N] [--grpc PORT]"
                .into(),
        );
    };
    let port: u16 = port.parse().map_err(|e| format!("port {port:?}: {e}"))?;
    // `--retain N`: finished tasks our in-memory store keeps (default: the runtime's default).
    // `--grpc PORT`: our servers also serve the gRPC binding on 127.0.0.1:PORT.
    let mut retain = None;
    let mut grpc = None;
    let mut opts = args[2..].iter();
    while let Some(opt) = opts.next() {
        let value = opts
            .next()
            .ok_or_else(|| format!("serve option {opt:?} needs a value"))?;
        match opt.as_str() {
            "--retain" => {
                retain = Some(
                    value
                        .parse()
                        .map_err(|e| format!("--retain {value:?}: {e}"))?,
                );
            }
            "--grpc" => {
                grpc = Some(
                    value
                        .parse()
                        .map_err(|e| format!("--grpc {value:?}: {e}"))?,
                );
            }
            other => return Err(format!("unknown serve option {other:?}")),
        }
    }
    // The gRPC-only servers are not among the harness's HTTP servers (`Kind::parse`).
    let parsed = [Kind::OfficialGrpc, Kind::GrpcFloor]
        .into_iter()
        .find(|k| k.arg() == kind)
        .or_else(|| Kind::parse(kind));
    let serve_ours = |extensions| ours::serve(port, extensions, retain, grpc);
    match parsed {
        Some(Kind::Ours) => serve_ours(ours::Extensions::None),
        Some(Kind::OursBearer) => serve_ours(ours::Extensions::Bearer),
        Some(Kind::OursJwt) => serve_ours(ours::Extensions::Jwt),
        Some(Kind::Ours3Ext) => serve_ours(ours::Extensions::Three),
        Some(Kind::Ours10Ext) => serve_ours(ours::Extensions::TenNoop),
        Some(Kind::Official) => official::serve(port),
        Some(Kind::OfficialGrpc) => official::serve_grpc(port),
        Some(Kind::Floor) => floor::serve(port),
        Some(Kind::GrpcFloor) => grpc_floor::serve(port),
        Some(Kind::Python) => Err("the Python server runs under its own interpreter".into()),
        None => Err(format!("unknown server {kind:?}")),
    }
}

/// Where and how servers are started.
#[derive(Debug)]
pub(crate) struct Env {
    /// This binary (for `serve`).
    pub(crate) exe: PathBuf,
    /// The workspace root.
    pub(crate) root: PathBuf,
    /// Pin servers to core 0 with taskset.
    pub(crate) pin: bool,
    /// The venv's python, when the Python server is set up.
    pub(crate) python: Option<PathBuf>,
    /// Where server logs go.
    pub(crate) logs: PathBuf,
}

/// A running server (a child process; killed on drop).
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) kind: Kind,
    pub(crate) addr: SocketAddr,
    pub(crate) pid: u32,
    child: Child,
}

/// A port on 127.0.0.1 that was free a moment ago.
pub(crate) fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port on 127.0.0.1: {e}"))
}

impl Server {
    /// Starts `kind` on a free loopback port and waits until it serves its card (60 s at most;
    /// the gRPC-only server: until it accepts a connection).
    pub(crate) async fn start(kind: Kind, env: &Env, extra: &[String]) -> Result<Server, String> {
        let port = free_port()?;
        let mut argv: Vec<String> = Vec::new();
        if env.pin {
            argv.extend(["taskset".into(), "-c".into(), "0".into()]);
        }
        match kind {
            Kind::Python => {
                let python = env
                    .python
                    .as_ref()
                    .ok_or("the Python server was not set up")?;
                argv.push(python.display().to_string());
                argv.push(
                    env.root
                        .join("bench/python/echo_server.py")
                        .display()
                        .to_string(),
                );
            }
            _ => {
                argv.push(env.exe.display().to_string());
                argv.push("serve".into());
                argv.push(kind.arg().into());
            }
        }
        argv.push(port.to_string());
        argv.extend(extra.iter().cloned());
        std::fs::create_dir_all(&env.logs).map_err(|e| format!("{}: {e}", env.logs.display()))?;
        let log_path = env.logs.join(format!("{}.log", kind.arg()));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .env("PYTHONUNBUFFERED", "1")
            .spawn()
            .map_err(|e| format!("starting {}: {e}", argv.join(" ")))?;
        let mut server = Server {
            kind,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            pid: child.id(),
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let card = Req::get(wire::CARD_PATH);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!(
                    "{} exited ({status}) before serving; see {}:\n{}",
                    kind.label(),
                    log_path.display(),
                    tail(&log_path)
                ));
            }
            if kind.grpc_only() {
                if tokio::net::TcpStream::connect(server.addr).await.is_ok() {
                    return Ok(server);
                }
            } else if let Ok((s, _, _)) = load::one_shot(server.addr, &card).await
                && s.is_success()
            {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not serve its card within 60 s; see {}",
                    kind.label(),
                    log_path.display()
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the server (SIGKILL to its own PID) and reaps it.
    pub(crate) fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// What the correctness check saw.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checked {
    pub(crate) send_bytes: usize,
    pub(crate) card_bytes: usize,
    pub(crate) stream_bytes: usize,
    pub(crate) stream_events: usize,
}

/// Checks a server's answers before anything is timed: the card, SendMessage (a COMPLETED task
/// echoing the text; `ours+3ext` also echoes its three extensions), and a 100-chunk stream.
pub(crate) async fn check(server: &Server) -> Result<Checked, String> {
    let kind = server.kind;
    let label = kind.label();
    let (status, _, card) = load::one_shot(server.addr, &Req::get(wire::CARD_PATH)).await?;
    if !status.is_success() {
        return Err(format!("{label}: GET card answered {status}"));
    }
    wire::check_card(&card).map_err(|e| format!("{label}: card: {e}"))?;

    let req = kind.request(Req::rpc(wire::send_body()));
    let (status, headers, body) = load::one_shot(server.addr, &req).await?;
    if !status.is_success() {
        return Err(format!(
            "{label}: SendMessage answered {status}: {}",
            wire::preview(&body)
        ));
    }
    wire::check_send_reply(&body).map_err(|e| format!("{label}: SendMessage: {e}"))?;
    if !kind.extensions().is_empty() {
        let echoed = headers
            .get("a2a-extensions")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if let Some(missing) = kind.extensions().iter().find(|u| !echoed.contains(**u)) {
            return Err(format!(
                "{label}: extension {missing} was not activated (A2A-Extensions: {echoed:?})"
            ));
        }
    }

    let req = kind.request(Req::rpc(wire::stream_body()));
    let (status, headers, stream) = load::one_shot(server.addr, &req).await?;
    let ctype = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !status.is_success() || !ctype.starts_with("text/event-stream") {
        return Err(format!(
            "{label}: SendStreamingMessage answered {status} {ctype:?}: {}",
            wire::preview(&stream)
        ));
    }
    wire::check_stream(&stream).map_err(|e| format!("{label}: stream: {e}"))?;
    let mut lines = load::DataLines::default();
    lines.feed(&stream);
    Ok(Checked {
        send_bytes: body.len(),
        card_bytes: card.len(),
        stream_bytes: stream.len(),
        stream_events: usize::try_from(lines.count).unwrap_or(usize::MAX),
    })
}

/// The Python requirements (pinned), relative to the workspace root.
const REQUIREMENTS: &str = "bench/python/requirements.txt";

/// Creates (once) the venv for the Python server under `<target>/bench-venv` and returns its
/// python; reinstalls when `bench/python/requirements.txt` changed.
pub(crate) fn python_env(root: &Path, target: &Path) -> Result<PathBuf, String> {
    let venv = target.join("bench-venv");
    let python = venv.join("bin/python");
    let reqs_path = root.join(REQUIREMENTS);
    let reqs =
        std::fs::read_to_string(&reqs_path).map_err(|e| format!("{}: {e}", reqs_path.display()))?;
    let marker = venv.join(".a2a-bench-requirements");
    if python.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == reqs) {
        return Ok(python);
    }
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" | ")
            ))
        }
    };
    eprintln!("setting up the Python SDK venv in {} ...", venv.display());
    if !python.exists() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
        )?;
    }
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
            .arg(&reqs_path),
        "pip install -r bench/python/requirements.txt",
    )?;
    std::fs::write(&marker, reqs).map_err(|e| format!("{}: {e}", marker.display()))?;
    Ok(python)
}
