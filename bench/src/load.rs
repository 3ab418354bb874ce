//! The load generator: a fixed number of HTTP/1.1 keep-alive connections (hyper 1, TCP_NODELAY),
//! each sending requests back to back, with an HDR histogram of latencies; and a single-stream
//! SSE client that counts events and the time to the first one.
//!
//! Every loop is bounded by a deadline and, where given, a request count.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Latencies are recorded in nanoseconds, from 1 µs to 60 s, 3 significant digits.
pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// What each request of a run looks like.
#[derive(Clone, Debug)]
pub(crate) struct Req {
    pub(crate) method: Method,
    pub(crate) path: &'static str,
    pub(crate) body: Bytes,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// `(before, first, after)`: the n-th request of a run (from 0) goes to the path
    /// `{before}{first + n}{after}` instead of `path` (a tenant of its own per request, say).
    pub(crate) numbered: Option<(&'static str, u64, &'static str)>,
}

impl Req {
    /// A JSON-RPC POST of `body` with `A2A-Version: 1.0`.
    pub(crate) fn rpc(body: Bytes) -> Self {
        Req {
            method: Method::POST,
            path: crate::wire::RPC_PATH,
            body,
            headers: vec![
                (CONTENT_TYPE, HeaderValue::from_static("application/json")),
                (
                    HeaderName::from_static("a2a-version"),
                    HeaderValue::from_static("1.0"),
                ),
            ],
            numbered: None,
        }
    }

    /// A GET of `path`.
    pub(crate) fn get(path: &'static str) -> Self {
        Req {
            method: Method::GET,
            path,
            body: Bytes::new(),
            headers: Vec::new(),
            numbered: None,
        }
    }

    /// A JSON POST of `body` to `path`, with `A2A-Version: 1.0` (the HTTP+JSON binding).
    pub(crate) fn post(path: &'static str, body: Bytes) -> Self {
        Req {
            path,
            ..Self::rpc(body)
        }
    }

    /// Sends the n-th request of a run (from 0) to `{before}{first + n}{after}`.
    pub(crate) fn numbered(
        mut self,
        before: &'static str,
        first: u64,
        after: &'static str,
    ) -> Self {
        self.numbered = Some((before, first, after));
        self
    }

    /// Adds a header.
    pub(crate) fn with_header(mut self, name: &'static str, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((HeaderName::from_static(name), v));
        }
        self
    }

    /// The request, as the `n`-th of its run.
    fn build(&self, host: &HeaderValue, n: u64) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(unique_message_id(&self.body)));
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = match self.numbered {
            Some((before, first, after)) => {
                hyper::Uri::try_from(format!("{before}{}{after}", first.saturating_add(n)))
                    .unwrap_or_else(|_| hyper::Uri::from_static(self.path))
            }
            None => hyper::Uri::from_static(self.path),
        };
        let h = req.headers_mut();
        h.insert(HOST, host.clone());
        for (k, v) in &self.headers {
            h.insert(k.clone(), v.clone());
        }
        req
    }
}

/// The message id of the bodies built by [`crate::wire::rpc_body`]: each request sends its
/// own (see [`unique_message_id`]).
pub(crate) const MESSAGE_ID: &str = "bench-message";

/// `body` with its `"bench-message"` id made unique for this process and request: a server
/// answers a SendMessage repeating a message id with the task the first one started, without
/// running the agent (issue 48), which is not the work measured. Other bodies go as they are.
fn unique_message_id(body: &Bytes) -> Bytes {
    let marker = b"\"bench-message\"";
    let Some(at) = body.windows(marker.len()).position(|w| w == marker) else {
        return body.clone();
    };
    let mut out = Vec::with_capacity(body.len() + 40);
    out.extend_from_slice(&body[..at + 1]);
    out.extend_from_slice(next_message_id().as_bytes());
    out.extend_from_slice(&body[at + marker.len() - 1..]);
    Bytes::from(out)
}

/// A message id no other request of this process sent, nor of another run.
pub(crate) fn next_message_id() -> String {
    use std::sync::LazyLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static RUN: LazyLock<u128> = LazyLock::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    });
    format!(
        "{MESSAGE_ID}-{:x}-{}",
        *RUN,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// How each reply under load is checked (cheaply).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Check {
    /// 200 and a COMPLETED task somewhere in the body.
    Completed,
    /// 200.
    Ok,
}

/// How long (or how many requests) a run lasts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub(crate) conns: usize,
    /// Unmeasured time before the measured window.
    pub(crate) warmup: Duration,
    /// The measured window (a safety cap when `count` is set).
    pub(crate) duration: Duration,
    /// Send exactly this many requests (all measured), then stop.
    pub(crate) count: Option<u64>,
}

/// The outcome of a run.
#[derive(Debug)]
pub(crate) struct LoadResult {
    pub(crate) requests: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    pub(crate) elapsed: Duration,
    pub(crate) latency: Histogram<u64>,
}

impl LoadResult {
    pub(crate) fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    stream
        .set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY: {e}"))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// One request on a fresh connection: status, headers, whole body.
pub(crate) async fn one_shot(
    addr: SocketAddr,
    req: &Req,
) -> Result<(StatusCode, HeaderMap, Bytes), String> {
    let host = host_header(addr);
    let mut sender = connect(addr).await?;
    let resp = tokio::time::timeout(Duration::from_secs(10), async {
        sender.ready().await.map_err(|e| e.to_string())?;
        let resp = sender
            .send_request(req.build(&host, 0))
            .await
            .map_err(|e| e.to_string())?;
        let (parts, body) = resp.into_parts();
        let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
        Ok::<_, String>((parts.status, parts.headers, body))
    })
    .await
    .map_err(|_| format!("{} {} timed out after 10 s", req.method, req.path))??;
    Ok(resp)
}

fn host_header(addr: SocketAddr) -> HeaderValue {
    HeaderValue::from_str(&addr.to_string())
        .unwrap_or_else(|_| HeaderValue::from_static("127.0.0.1"))
}

struct ConnOutcome {
    requests: u64,
    errors: u64,
    first_error: Option<String>,
    latency: Histogram<u64>,
    last: Instant,
}

/// Runs `plan` against `addr`: `plan.conns` connections, each sending `req` back to back.
pub(crate) async fn run(addr: SocketAddr, req: Req, check: Check, plan: Plan) -> LoadResult {
    let start = Instant::now();
    let (measure_from, deadline) = match plan.count {
        Some(_) => (start, start + plan.duration),
        None => (start + plan.warmup, start + plan.warmup + plan.duration),
    };
    let total = plan.count.unwrap_or(u64::MAX);
    let remaining = Arc::new(AtomicU64::new(total));
    let req = Arc::new(req);
    let host = host_header(addr);
    let mut tasks = Vec::with_capacity(plan.conns);
    for _ in 0..plan.conns {
        let (req, host, remaining) = (req.clone(), host.clone(), remaining.clone());
        tasks.push(tokio::spawn(async move {
            let counter = Counter {
                total,
                remaining: &remaining,
            };
            connection(addr, &req, &host, check, measure_from, deadline, counter).await
        }));
    }
    let mut result = LoadResult {
        requests: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latency: histogram(),
    };
    let mut last = measure_from;
    for t in tasks {
        match t.await {
            Ok(o) => {
                result.requests += o.requests;
                result.errors += o.errors;
                if result.first_error.is_none() {
                    result.first_error = o.first_error;
                }
                let _ = result.latency.add(&o.latency);
                last = last.max(o.last);
            }
            Err(e) => {
                result.errors += 1;
                result
                    .first_error
                    .get_or_insert_with(|| format!("load task failed: {e}"));
            }
        }
    }
    result.elapsed = last.saturating_duration_since(measure_from);
    result
}

/// The requests left to send in a run, of `total`.
struct Counter<'a> {
    total: u64,
    remaining: &'a AtomicU64,
}

impl Counter<'_> {
    /// Takes the next request's number (from 0), or `None` when none is left.
    fn next(&self) -> Option<u64> {
        self.remaining
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .ok()
            .map(|left| self.total - left)
    }
}

async fn connection(
    addr: SocketAddr,
    req: &Req,
    host: &HeaderValue,
    check: Check,
    measure_from: Instant,
    deadline: Instant,
    counter: Counter<'_>,
) -> ConnOutcome {
    let mut out = ConnOutcome {
        requests: 0,
        errors: 0,
        first_error: None,
        latency: histogram(),
        last: measure_from,
    };
    let fail = |out: &mut ConnOutcome, e: String| {
        out.errors += 1;
        out.first_error.get_or_insert(e);
    };
    let mut sender: Option<SendRequest<Full<Bytes>>> = None;
    // A connection that keeps failing gives up rather than spinning.
    while out.errors < 1_000 {
        if Instant::now() >= deadline {
            break;
        }
        let Some(n) = counter.next() else {
            break;
        };
        let s = match sender.as_mut() {
            Some(s) => s,
            None => match connect(addr).await {
                Ok(s) => sender.insert(s),
                Err(e) => {
                    fail(&mut out, e);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let t0 = Instant::now();
        let outcome = async {
            s.ready().await.map_err(|e| format!("connection: {e}"))?;
            let resp = s
                .send_request(req.build(host, n))
                .await
                .map_err(|e| format!("request: {e}"))?;
            let status = resp.status();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e}"))?
                .to_bytes();
            if status != StatusCode::OK {
                return Err(format!("HTTP {status}: {}", crate::wire::preview(&body)));
            }
            if matches!(check, Check::Completed) && !crate::wire::looks_completed(&body) {
                return Err(format!(
                    "not a completed task: {}",
                    crate::wire::preview(&body)
                ));
            }
            Ok(())
        }
        .await;
        let done = Instant::now();
        match outcome {
            Ok(()) => {
                if t0 >= measure_from {
                    out.requests += 1;
                    let _ = out.latency.record(nanos(done - t0));
                    out.last = done;
                }
            }
            Err(e) => {
                fail(&mut out, e);
                sender = None;
            }
        }
    }
    out
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1_000)
}

/// Counts SSE `data:` lines across chunk boundaries (any of `\n`, `\r`, `\r\n` end a line).
#[derive(Debug, Default)]
pub(crate) struct DataLines {
    mid_line: bool,
    matched: usize,
    pub(crate) count: u64,
}

impl DataLines {
    const PREFIX: &'static [u8] = b"data:";

    /// Feeds a chunk; returns how many `data:` lines started in it.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> u64 {
        let before = self.count;
        for &b in chunk {
            if b == b'\n' || b == b'\r' {
                self.mid_line = false;
                self.matched = 0;
            } else if !self.mid_line {
                if b == Self::PREFIX[self.matched] {
                    self.matched += 1;
                    if self.matched == Self::PREFIX.len() {
                        self.count += 1;
                        self.mid_line = true;
                        self.matched = 0;
                    }
                } else {
                    self.mid_line = true;
                    self.matched = 0;
                }
            }
        }
        self.count - before
    }
}

/// The outcome of the single-stream run.
#[derive(Debug)]
pub(crate) struct StreamResult {
    /// Streams (requests) completed in the measured window.
    pub(crate) streams: u64,
    /// SSE events received in the measured window.
    pub(crate) events: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    pub(crate) elapsed: Duration,
    /// Time from sending the request to the first SSE event, per stream.
    pub(crate) first_event: Histogram<u64>,
    /// Whole-stream time, per stream.
    pub(crate) latency: Histogram<u64>,
}

impl StreamResult {
    pub(crate) fn events_per_sec(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One connection sending `req` (a streaming request) back to back; each stream must carry at
/// least `min_events` events.
pub(crate) async fn stream_run(
    addr: SocketAddr,
    req: Req,
    min_events: u64,
    warmup: Duration,
    duration: Duration,
) -> StreamResult {
    let start = Instant::now();
    let measure_from = start + warmup;
    let deadline = measure_from + duration;
    let host = host_header(addr);
    let mut r = StreamResult {
        streams: 0,
        events: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        first_event: histogram(),
        latency: histogram(),
    };
    let mut last = measure_from;
    let mut sender: Option<SendRequest<Full<Bytes>>> = None;
    while r.errors < 100 && Instant::now() < deadline {
        let s = match sender.as_mut() {
            Some(s) => s,
            None => match connect(addr).await {
                Ok(s) => sender.insert(s),
                Err(e) => {
                    r.errors += 1;
                    r.first_error.get_or_insert(e);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let t0 = Instant::now();
        let outcome = async {
            s.ready().await.map_err(|e| format!("connection: {e}"))?;
            let resp = s
                .send_request(req.build(&host, 0))
                .await
                .map_err(|e| format!("request: {e}"))?;
            if resp.status() != StatusCode::OK {
                return Err(format!("HTTP {}", resp.status()));
            }
            let mut body = resp.into_body();
            let mut lines = DataLines::default();
            let mut first = None;
            // A stream that stalls is an error, not a hang.
            let stall = Duration::from_secs(10);
            while let Some(frame) = tokio::time::timeout(stall, body.frame())
                .await
                .map_err(|_| "the stream stalled for 10 s".to_owned())?
            {
                let frame = frame.map_err(|e| format!("body: {e}"))?;
                if let Some(data) = frame.data_ref()
                    && lines.feed(data) > 0
                    && first.is_none()
                {
                    first = Some(Instant::now());
                }
            }
            if lines.count < min_events {
                return Err(format!(
                    "{} events, expected at least {min_events}",
                    lines.count
                ));
            }
            Ok((lines.count, first.unwrap_or(t0)))
        }
        .await;
        let done = Instant::now();
        match outcome {
            Ok((events, first)) => {
                if t0 >= measure_from {
                    r.streams += 1;
                    r.events += events;
                    let _ = r.first_event.record(nanos(first - t0));
                    let _ = r.latency.record(nanos(done - t0));
                    last = done;
                }
            }
            Err(e) => {
                r.errors += 1;
                r.first_error.get_or_insert(e);
                sender = None;
            }
        }
    }
    r.elapsed = last.saturating_duration_since(measure_from);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_data_lines_across_chunks() {
        let mut d = DataLines::default();
        assert_eq!(d.feed(b"id: 1\ndata: {}\n\nda"), 1);
        assert_eq!(d.feed(b"ta: {}\r\n\r\n: keep-alive\n"), 1);
        assert_eq!(d.feed(b"event: x\ndata:{\"data:\"}\r\r"), 1);
        assert_eq!(d.count, 3);
    }
}
