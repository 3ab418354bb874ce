//! Reaching the agent: the card reference resolved (host, card URL, `file://` or path), the
//! protocol version checked (1.x, or 0.3 only when asked for), the transport chosen in the
//! caller's order then the card's, credentials attached per the card's security schemes, and
//! `--debug` diagnostics with every credential redacted.

use std::sync::Arc;
use std::time::Instant;

use a2a_runtime::A2aError;
use a2a_runtime::client::{
    A2aClient, Auth, ClientError, ClientOptions, ClientTls, ExtensionCheck, OutgoingRequest,
    RequestInterceptor,
};
use a2a_runtime::types::{AgentCard, AgentInterface, ProtocolBinding, SecurityScheme};
use serde_json::Value;

use crate::args::{Binding, Global};
use crate::failure::{
    self, CARD_INVALID, CARD_NOT_FOUND, EXIT_FAILURE, EXIT_UNREACHABLE, Failure, UNREACHABLE,
};

const WELL_KNOWN: &str = "/.well-known/agent-card.json";
const AI_CATALOG_PATH: &str = a2a_runtime::types::AI_CATALOG_PATH;
const REDACTED: &str = "<redacted>";

/// A resolved card: the parsed card, the JSON it came as, where it came from, and what its
/// signature check found (`absent`, `verified (kid …)`, or `unverifiable …`).
pub(crate) struct ResolvedCard {
    pub(crate) card: AgentCard,
    pub(crate) raw: Value,
    pub(crate) source: String,
    pub(crate) signature: String,
}

/// Checks the card's signatures (A2A §8.4.3) against `--card-key`. Never reports a card as
/// verified without a signature that verified; a signature that fails to verify refuses the
/// card; an absent one is only reported (signing is optional).
async fn check_signature(g: &Global, raw: &Value, card: &AgentCard) -> Result<String, Failure> {
    use a2a_runtime::auth::jwt::Algorithm;
    use a2a_runtime::auth::signing::{CardVerifier, SignatureError};
    if card.signatures.is_empty() {
        return Ok("absent".into());
    }
    let Some(path) = &g.card_key else {
        return Ok(format!(
            "unverifiable ({} signature(s); no trusted key: pass --card-key)",
            card.signatures.len()
        ));
    };
    let pem = std::fs::read(path)
        .map_err(|e| Failure::usage(format!("--card-key {}: {e}", path.display())))?;
    let key = [Algorithm::Es256, Algorithm::Rs256, Algorithm::EdDsa]
        .into_iter()
        .find_map(|a| a.public_key_pem(&pem).ok())
        .ok_or_else(|| {
            Failure::usage(format!(
                "--card-key {}: not a PEM public key (ES256, RS256 or EdDSA)",
                path.display()
            ))
        })?;
    // The key is trusted whatever key id a signature names: it is the key that must verify.
    let mut verifier = CardVerifier::pinned();
    for kid in signature_kids(raw) {
        verifier = verifier.key(kid, key.clone());
    }
    match verifier.verify(raw).await {
        Ok(kid) => Ok(format!("verified (kid {kid})")),
        Err(SignatureError::Unsigned) => Ok("absent".into()),
        Err(e) => Err(Failure::new(
            CARD_INVALID,
            EXIT_FAILURE,
            format!("the card's signature does not verify with --card-key: {e}"),
        )
        .hint("check --card-key, or that the card was not altered")),
    }
}

/// The `kid` of each signature's protected header.
fn signature_kids(raw: &Value) -> Vec<String> {
    use base64::Engine as _;
    raw.get("signatures")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("protected").and_then(Value::as_str))
        .filter_map(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .ok()
        })
        .filter_map(|h| serde_json::from_slice::<Value>(&h).ok())
        .filter_map(|h| h.get("kid").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Where a card reference points.
#[derive(Debug, PartialEq, Eq)]
enum CardRef {
    Url(String),
    File(String),
    /// The agent `name` of the AI Catalog at `catalog` (a URL or a file): `REFERENCE#NAME`.
    Catalog {
        catalog: Box<CardRef>,
        name: String,
    },
}

fn classify(reference: &str) -> CardRef {
    // A fragment is never sent to a server: on a reference it names an agent of a catalog.
    if let Some((location, name)) = reference.rsplit_once('#')
        && !name.is_empty()
    {
        return CardRef::Catalog {
            catalog: Box::new(classify_plain(location, AI_CATALOG_PATH)),
            name: name.to_owned(),
        };
    }
    classify_plain(reference, WELL_KNOWN)
}

/// A URL, a file or a bare host; `well_known` is the path a URL without one gets.
fn classify_plain(reference: &str, well_known: &str) -> CardRef {
    if let Some(path) = reference.strip_prefix("file://") {
        return CardRef::File(path.to_owned());
    }
    if reference.starts_with("http://") || reference.starts_with("https://") {
        let after_scheme = reference.split_once("://").map_or("", |(_, r)| r);
        let has_path = after_scheme
            .split_once('/')
            .is_some_and(|(_, p)| !p.trim_matches('/').is_empty());
        return if has_path {
            CardRef::Url(reference.to_owned())
        } else {
            CardRef::Url(format!("{}{well_known}", reference.trim_end_matches('/')))
        };
    }
    if std::path::Path::new(reference).exists() || reference.contains('/') {
        return CardRef::File(reference.to_owned());
    }
    // A bare host (`example.com`, `127.0.0.1:8080`): loopback speaks plain HTTP.
    let host = reference.split(':').next().unwrap_or_default();
    let scheme = if matches!(host, "localhost" | "127.0.0.1" | "[::1]") {
        "http"
    } else {
        "https"
    };
    CardRef::Url(format!("{scheme}://{reference}{well_known}"))
}

/// Reads a reference's bytes: a file, or a URL fetched without credentials.
async fn read(g: &Global, reference: CardRef) -> Result<(Vec<u8>, String), Failure> {
    match reference {
        CardRef::File(path) => {
            let bytes = std::fs::read(&path).map_err(|e| {
                Failure::new(
                    CARD_NOT_FOUND,
                    EXIT_UNREACHABLE,
                    format!("could not read the file {path}: {e}"),
                )
            })?;
            Ok((bytes, format!("file://{path}")))
        }
        CardRef::Url(url) => Ok((fetch(g, &url).await?, url)),
        CardRef::Catalog { .. } => Err(Failure::usage("a catalog entry cannot name a catalog")),
    }
}

/// The card of agent `name` in the AI Catalog at `catalog`: inline in the catalog, or fetched
/// from the URL its entry gives (relative to the catalog's).
async fn from_catalog(
    g: &Global,
    catalog: CardRef,
    name: &str,
) -> Result<(Vec<u8>, String), Failure> {
    let (bytes, location) = read(g, catalog).await?;
    let invalid = |why: String| {
        Failure::new(
            CARD_INVALID,
            EXIT_FAILURE,
            format!("the AI Catalog at {location} is not valid: {why}"),
        )
    };
    let parsed: a2a_runtime::types::AiCatalog =
        serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    parsed.check().map_err(invalid)?;
    let entry = parsed.agent(name).ok_or_else(|| {
        let names: Vec<&str> = parsed
            .entries
            .iter()
            .map(|e| e.identifier.as_str())
            .collect();
        Failure::new(
            CARD_NOT_FOUND,
            EXIT_UNREACHABLE,
            format!("the AI Catalog at {location} lists no agent {name:?}"),
        )
        .hint(format!("its entries: {}", names.join(", ")))
    })?;
    debug(
        g,
        &format!("catalog {location}: {name} -> {}", entry.identifier),
    );
    let source = format!("{location}#{name}");
    if let Some(card) = &entry.data {
        let bytes = serde_json::to_vec(card)
            .map_err(|e| Failure::internal(format!("the catalog's card: {e}")))?;
        return Ok((bytes, source));
    }
    let Some(url) = &entry.url else {
        return Err(invalid(format!(
            "agent {name:?} has neither a url nor data"
        )));
    };
    // A relative URL is relative to the catalog's own (an absolute one stands alone).
    let url = match reqwest::Url::parse(&location).and_then(|base| base.join(url)) {
        Ok(joined) if location.starts_with("http") => joined.to_string(),
        _ => url.clone(),
    };
    let (bytes, _) = read(g, classify_plain(&url, WELL_KNOWN)).await?;
    Ok((bytes, source))
}

/// Reads the card the reference names. No credential is ever sent to fetch a public card.
pub(crate) async fn resolve_card(g: &Global) -> Result<ResolvedCard, Failure> {
    let reference = classify(g.agent_card.trim());
    debug(
        g,
        &format!("card reference {:?} -> {reference:?}", g.agent_card),
    );
    let (bytes, source) = match reference {
        CardRef::Catalog { catalog, name } => from_catalog(g, *catalog, &name).await?,
        CardRef::File(path) => read(g, CardRef::File(path)).await.map_err(|f| {
            f.hint("give a card file, a card URL or the agent's base URL with --agent-card")
        })?,
        url => read(g, url).await?,
    };
    let raw: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Failure::new(
            CARD_INVALID,
            EXIT_FAILURE,
            format!("the card at {source} is not JSON: {e}"),
        )
    })?;
    let card: AgentCard = serde_json::from_value(raw.clone()).map_err(|e| {
        Failure::new(
            CARD_INVALID,
            EXIT_FAILURE,
            format!("the card at {source} is not an agent card: {e}"),
        )
        .hint("run `a2a card get --validate` for the details")
    })?;
    let signature = check_signature(g, &raw, &card).await?;
    debug(g, &format!("card signature: {signature}"));
    Ok(ResolvedCard {
        card,
        raw,
        source,
        signature,
    })
}

/// The PEM files of `--ca-cert`, `--cert` and `--key`, and `--insecure`.
struct TlsFiles {
    ca: Option<Vec<u8>>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
    insecure: bool,
}

fn tls_files(g: &Global) -> Result<Option<TlsFiles>, Failure> {
    let read = |flag: &str, p: &std::path::Path| {
        std::fs::read(p).map_err(|e| Failure::usage(format!("{flag} {}: {e}", p.display())))
    };
    let ca = g
        .ca_cert
        .as_deref()
        .map(|p| read("--ca-cert", p))
        .transpose()?;
    let identity = match (&g.cert, &g.key) {
        (Some(c), Some(k)) => Some((read("--cert", c)?, read("--key", k)?)),
        _ => None,
    };
    let insecure = g.insecure;
    Ok(
        (ca.is_some() || identity.is_some() || insecure).then_some(TlsFiles {
            ca,
            identity,
            insecure,
        }),
    )
}

fn client_tls(files: Option<TlsFiles>) -> Option<ClientTls> {
    let files = files?;
    let mut tls = ClientTls::new();
    if let Some(ca) = files.ca {
        tls = tls.root_ca(ca);
    }
    if let Some((cert, key)) = files.identity {
        tls = tls.identity(cert, key);
    }
    Some(tls.danger_accept_invalid_certs(files.insecure))
}

async fn fetch(g: &Global, url: &str) -> Result<Vec<u8>, Failure> {
    let started = Instant::now();
    let mut builder = reqwest::Client::builder().timeout(g.request_timeout);
    if let Some(files) = tls_files(g)? {
        let bad = |what: &str, e: reqwest::Error| Failure::usage(format!("{what}: {e}"));
        if let Some(ca) = &files.ca {
            let roots = reqwest::Certificate::from_pem_bundle(ca)
                .map_err(|e| bad("--ca-cert is not a PEM bundle", e))?;
            builder = builder.tls_certs_only(roots);
        }
        if let Some((cert, key)) = &files.identity {
            let mut pem = cert.clone();
            pem.push(b'\n');
            pem.extend_from_slice(key);
            builder =
                builder
                    .identity(reqwest::Identity::from_pem(&pem).map_err(|e| {
                        bad("--cert/--key are not a usable certificate and key", e)
                    })?);
        }
        if files.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
    }
    let http = builder
        .build()
        .map_err(|e| Failure::internal(format!("could not build an HTTP client: {e}")))?;
    let answer = http
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| {
            let (code, exit) = if e.is_timeout() {
                (failure::TIMEOUT, failure::EXIT_TIMEOUT)
            } else {
                (UNREACHABLE, EXIT_UNREACHABLE)
            };
            Failure::new(
                code,
                exit,
                format!(
                    "could not fetch the card {url}: {}",
                    failure::with_causes(&e)
                ),
            )
            .hint("check --agent-card and that the agent is running")
        })?;
    let status = answer.status();
    debug(
        g,
        &format!("GET {url} -> HTTP {status} in {:?}", started.elapsed()),
    );
    if !status.is_success() {
        let mut f = Failure::new(
            CARD_NOT_FOUND,
            EXIT_UNREACHABLE,
            format!("no agent card at {url}: HTTP {status}"),
        )
        .hint("give the card URL itself, or the agent's base URL, with --agent-card");
        f.a2a_code = Some(Value::from(status.as_u16()));
        return Err(f);
    }
    let bytes = answer.bytes().await.map_err(|e| {
        Failure::new(
            UNREACHABLE,
            EXIT_UNREACHABLE,
            format!("the card {url} broke off: {}", failure::with_causes(&e)),
        )
    })?;
    Ok(bytes.to_vec())
}

fn binding_of(b: Binding) -> ProtocolBinding {
    match b {
        Binding::JsonRpc => ProtocolBinding::JsonRpc,
        Binding::Rest => ProtocolBinding::HttpJson,
        Binding::Grpc => ProtocolBinding::Grpc,
    }
}

fn is_v1(i: &AgentInterface) -> bool {
    i.protocol_version.is_empty() || i.protocol_version.split('.').next() == Some("1")
}

/// The interface the client will use, checked before connecting: the caller's preferred
/// bindings in order, then the card's order, among the interfaces of the version spoken.
pub(crate) fn choose(g: &Global, card: &AgentCard) -> Result<AgentInterface, Failure> {
    let legacy = match g.a2a_version.trim() {
        v if v.split('.').next() == Some("1") => false,
        "0.3" => true,
        other => {
            return Err(Failure::usage(format!(
                "--a2a-version {other}: this tool speaks 1.x, or 0.3 when asked for"
            )));
        }
    };
    let speakable = |i: &&AgentInterface| {
        matches!(
            i.protocol_binding,
            ProtocolBinding::JsonRpc | ProtocolBinding::HttpJson | ProtocolBinding::Grpc
        )
    };
    let v1: Vec<&AgentInterface> = card
        .supported_interfaces
        .iter()
        .filter(speakable)
        .filter(|i| is_v1(i))
        .collect();
    let candidates = if v1.is_empty() && legacy {
        card.supported_interfaces
            .iter()
            .filter(|i| {
                i.protocol_version.starts_with("0.3") && i.protocol_binding != ProtocolBinding::Grpc
            })
            .collect()
    } else {
        v1
    };
    if candidates.is_empty() {
        let versions: Vec<&str> = card
            .supported_interfaces
            .iter()
            .map(|i| i.protocol_version.as_str())
            .collect();
        let mut f = Failure::new(
            "VersionNotSupportedError",
            EXIT_FAILURE,
            format!(
                "agent {} offers no A2A 1.x interface this tool speaks (its versions: {versions:?})",
                card.name
            ),
        );
        if versions.iter().any(|v| v.starts_with("0.3")) {
            f = f.hint("to talk A2A v0.3 to this agent, pass --a2a-version 0.3");
        }
        return Err(f);
    }
    let preferred = g
        .transports
        .iter()
        .find_map(|b| {
            candidates
                .iter()
                .find(|i| i.protocol_binding == binding_of(*b))
        })
        .or_else(|| candidates.first())
        .copied()
        .cloned();
    preferred.ok_or_else(|| Failure::internal("no interface"))
}

/// Connects to the agent of a resolved card.
pub(crate) async fn connect(g: &Global, card: &AgentCard) -> Result<A2aClient, Failure> {
    let interface = choose(g, card)?;
    debug(
        g,
        &format!(
            "transport {} at {} (protocol {}{})",
            interface.protocol_binding.as_str(),
            interface.url,
            if interface.protocol_version.is_empty() {
                "1.0"
            } else {
                interface.protocol_version.as_str()
            },
            if interface.tenant.is_empty() {
                String::new()
            } else {
                format!(", tenant {}", interface.tenant)
            }
        ),
    );
    let mut headers = Vec::new();
    for p in &g.svc_params {
        headers.push(parse_svc_param(p)?);
    }
    let credentials = Credentials::for_card(g, card);
    let options = ClientOptions {
        headers,
        timeout: g.request_timeout,
        stream_idle_timeout: g.request_timeout,
        auth: Some(Auth::Interceptor(Arc::new(credentials))),
        preferred_binding: Some(interface.protocol_binding.clone()),
        extension_check: ExtensionCheck::Warn,
        tls: client_tls(tls_files(g)?),
        ..ClientOptions::default()
    };
    let mut builder = A2aClient::builder().options(options);
    for uri in &g.extensions {
        builder = builder.activate_uri(uri.as_str());
    }
    builder
        .connect(card.clone())
        .await
        .map_err(|e| failure::from_client(e, g.has_credentials()))
}

/// Resolves the card and connects.
pub(crate) async fn open(g: &Global) -> Result<(A2aClient, AgentCard), Failure> {
    let resolved = resolve_card(g).await?;
    let client = connect(g, &resolved.card).await?;
    Ok((client, resolved.card))
}

pub(crate) fn parse_svc_param(p: &str) -> Result<(String, String), Failure> {
    let usage =
        |why: &str| Failure::usage(format!("--svc-param {p:?}: {why} (expected `key:value`)"));
    let (name, value) = p.split_once(':').ok_or_else(|| usage("no colon"))?;
    let name = name.trim();
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid {
        return Err(usage("not a parameter name"));
    }
    Ok((name.to_ascii_lowercase(), value.trim().to_owned()))
}

/// Where the card says an API key goes.
#[derive(Debug, Clone)]
enum KeyPlace {
    Header(String),
    Query(String),
    Cookie(String),
}

/// Attaches the caller's credentials per the card's security schemes, and (with `--debug`)
/// logs each request with every credential and service parameter value redacted.
#[derive(Clone)]
struct Credentials {
    bearer: Option<String>,
    api_key: Option<(KeyPlace, String)>,
    debug: bool,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<redacted>)")
    }
}

impl Credentials {
    fn for_card(g: &Global, card: &AgentCard) -> Self {
        let schemes = &card.security_schemes;
        let bearer_ok = schemes.is_empty()
            || schemes.values().any(|s| {
                matches!(
                    s,
                    SecurityScheme::HttpAuthSecurityScheme(_)
                        | SecurityScheme::Oauth2SecurityScheme(_)
                        | SecurityScheme::OpenIdConnectSecurityScheme(_)
                )
            });
        let place = schemes.values().find_map(|s| match s {
            SecurityScheme::ApiKeySecurityScheme(k) => Some(match k.location.as_str() {
                "query" => KeyPlace::Query(k.name.clone()),
                "cookie" => KeyPlace::Cookie(k.name.clone()),
                _ => KeyPlace::Header(k.name.clone()),
            }),
            _ => None,
        });
        let bearer = match (&g.bearer, bearer_ok) {
            (Some(t), true) => Some(t.clone()),
            (Some(_), false) => {
                eprintln!(
                    "a2a: warning: the card declares no bearer-capable security scheme; --bearer is not sent"
                );
                None
            }
            (None, _) => None,
        };
        let api_key = match (&g.api_key, place) {
            (Some(k), Some(p)) => Some((p, k.clone())),
            (Some(k), None) if schemes.is_empty() => {
                Some((KeyPlace::Header("x-api-key".into()), k.clone()))
            }
            (Some(_), None) => {
                eprintln!(
                    "a2a: warning: the card declares no apiKey security scheme; --api-key is not sent"
                );
                None
            }
            (None, _) => None,
        };
        Self {
            bearer,
            api_key,
            debug: g.debug,
        }
    }
}

impl RequestInterceptor for Credentials {
    fn intercept(&self, request: &mut OutgoingRequest) -> Result<(), A2aError> {
        if let Some(token) = &self.bearer {
            request
                .headers
                .push(("authorization".into(), format!("Bearer {token}")));
        }
        if let Some((place, key)) = &self.api_key {
            match place {
                KeyPlace::Header(name) => {
                    request
                        .headers
                        .push((name.to_ascii_lowercase(), key.clone()));
                }
                KeyPlace::Cookie(name) => {
                    request
                        .headers
                        .push(("cookie".into(), format!("{name}={key}")));
                }
                KeyPlace::Query(name) => {
                    let sep = if request.url.contains('?') { '&' } else { '?' };
                    request.url = format!("{}{sep}{name}={}", request.url, encode(key));
                }
            }
        }
        if self.debug {
            let mut url = request.url.clone();
            if let Some((KeyPlace::Query(_), key)) = &self.api_key {
                url = url.replace(&encode(key), REDACTED);
            }
            let headers: Vec<String> = request
                .headers
                .iter()
                // Every service parameter's value is redacted too: any may carry a credential.
                .map(|(n, _)| format!("{n}: {REDACTED}"))
                .collect();
            eprintln!(
                "a2a: debug: -> {} {url} [{}] a2a-version: 1.0",
                request.method,
                headers.join(", ")
            );
        }
        Ok(())
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A diagnostic line on stderr under `--debug`.
pub(crate) fn debug(g: &Global, line: &str) {
    if g.debug {
        eprintln!("a2a: debug: {}", redact(g, line));
    }
}

/// A protocol object exchanged, on stderr under `--debug`, credentials redacted.
pub(crate) fn debug_json<T: serde::Serialize>(g: &Global, what: &str, value: &T) {
    if g.debug {
        let text = serde_json::to_string(value).unwrap_or_default();
        eprintln!("a2a: debug: {what} {}", redact(g, &text));
    }
}

/// Replaces every credential the caller gave with `<redacted>`.
pub(crate) fn redact(g: &Global, text: &str) -> String {
    let mut out = text.to_owned();
    let secrets = g.bearer.iter().chain(g.api_key.iter()).cloned().chain(
        g.svc_params
            .iter()
            .filter_map(|p| p.split_once(':').map(|(_, v)| v.trim().to_owned())),
    );
    for secret in secrets {
        if secret.len() >= 3 {
            out = out.replace(&secret, REDACTED);
        }
    }
    out
}

/// Refuses, before any call, an operation the card does not declare.
pub(crate) fn require(card: &AgentCard, what: Capability) -> Result<(), Failure> {
    let (declared, name, error) = match what {
        Capability::Streaming => (
            card.capabilities.streaming,
            "streaming",
            "UnsupportedOperationError",
        ),
        Capability::Push => (
            card.capabilities.push_notifications,
            "push notifications",
            "PushNotificationNotSupportedError",
        ),
        Capability::ExtendedCard => (
            card.capabilities.extended_agent_card,
            "an extended agent card",
            "ExtendedAgentCardNotConfiguredError",
        ),
    };
    if declared == Some(true) {
        return Ok(());
    }
    Err(Failure::new(
        error,
        EXIT_FAILURE,
        format!(
            "agent {} does not declare {name} on its card (checked before calling)",
            card.name
        ),
    )
    .hint(match what {
        Capability::Streaming => {
            "drop --stream (a blocking send polls instead), or use `a2a task get --wait`"
        }
        Capability::Push => "poll with `a2a task get --wait TASK_ID` instead",
        Capability::ExtendedCard => "use `a2a card get` for the public card",
    }))
}

/// A capability the card declares.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Capability {
    Streaming,
    Push,
    ExtendedCard,
}

/// Maps a client error (credentials known from the options).
pub(crate) fn fail(g: &Global) -> impl Fn(ClientError) -> Failure + '_ {
    move |e| failure::from_client(e, g.has_credentials())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_references_are_classified() {
        let url = |s: &str| CardRef::Url(s.to_owned());
        assert_eq!(
            classify("http://h:1"),
            url("http://h:1/.well-known/agent-card.json")
        );
        assert_eq!(
            classify("https://h/"),
            url("https://h/.well-known/agent-card.json")
        );
        assert_eq!(
            classify("https://h/cards/a.json"),
            url("https://h/cards/a.json")
        );
        assert_eq!(
            classify("127.0.0.1:8080"),
            url("http://127.0.0.1:8080/.well-known/agent-card.json")
        );
        assert_eq!(
            classify("agent.example.com"),
            url("https://agent.example.com/.well-known/agent-card.json")
        );
        assert_eq!(
            classify("file:///tmp/c.json"),
            CardRef::File("/tmp/c.json".into())
        );
        assert_eq!(classify("./card.json"), CardRef::File("./card.json".into()));
    }

    #[test]
    fn service_parameters_parse() {
        let (n, v) = parse_svc_param("X-Api-Key:  k1 ")
            .map_err(|f| f.message)
            .unwrap_or_default();
        assert_eq!((n.as_str(), v.as_str()), ("x-api-key", "k1"));
        assert!(parse_svc_param("no colon").is_err());
        assert!(parse_svc_param("bad name: x").is_err());
    }
}
