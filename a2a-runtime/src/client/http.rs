//! The HTTP client the bindings share (TLS from the options) and the agent card's GET.

use reqwest::header::{ACCEPT, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use serde_json::Value;

use super::answer::{MAX_DEPTH, transport_error};
use super::error::ClientError;
use super::options::ClientOptions;
use crate::compat::v0_3;
use crate::error::A2aError;
use crate::types::AgentCard;

/// The HTTP client of the options: their connect timeout, TLS roots and client identity.
pub(crate) fn http_client(options: &ClientOptions) -> Result<reqwest::Client, ClientError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.timeout)
        .tcp_nodelay(true);
    if let Some(tls) = &options.tls {
        let bad = |what: &str, e: reqwest::Error| {
            ClientError::Local(A2aError::Internal(format!("client TLS: {what}: {e}")))
        };
        if let Some(pem) = &tls.root_ca_pem {
            let roots = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| bad("the root CA bundle is not valid PEM", e))?;
            if roots.is_empty() {
                return Err(ClientError::Local(A2aError::Internal(
                    "client TLS: the root CA bundle holds no certificate".into(),
                )));
            }
            builder = builder.tls_certs_only(roots);
        }
        if let Some((cert, key)) = &tls.identity {
            let mut pem = cert.clone();
            pem.push(b'\n');
            pem.extend_from_slice(key);
            let identity = reqwest::Identity::from_pem(&pem)
                .map_err(|e| bad("the client certificate and key are not usable", e))?;
            builder = builder.identity(identity);
        }
        if tls.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
    }
    builder.build().map_err(|e| {
        ClientError::Local(A2aError::Internal(format!(
            "could not build the HTTP client: {e}"
        )))
    })
}

/// A card as fetched: typed, as received (for its signatures), and its validators.
pub(crate) struct Fetched {
    pub(crate) card: AgentCard,
    pub(crate) json: Value,
    pub(crate) etag: Option<String>,
    pub(crate) last_modified: Option<String>,
}

/// GETs a card; `None` on 304 Not Modified.
pub(crate) async fn fetch_card(
    http: &reqwest::Client,
    options: &ClientOptions,
    url: &str,
    etag: Option<&str>,
    last_modified: Option<&str>,
) -> Result<Option<Fetched>, ClientError> {
    let mut req = http
        .get(url)
        .timeout(options.timeout)
        .header(ACCEPT, "application/json");
    if let Some(e) = etag {
        req = req.header(IF_NONE_MATCH, e);
    }
    if let Some(lm) = last_modified {
        req = req.header(IF_MODIFIED_SINCE, lm);
    }
    for (k, v) in &options.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let resp = req
        .send()
        .await
        .map_err(|e| transport_error(url, e, options.timeout))?;
    if resp.status() == reqwest::StatusCode::NOT_MODIFIED {
        return Ok(None);
    }
    let header = |name| {
        resp.headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
    let status = resp.status();
    let body = super::transport::read_body(
        resp,
        url,
        options.limits.max_response_bytes,
        options.timeout,
    )
    .await?;
    if !status.is_success() {
        return Err(ClientError::http(url, status.as_u16(), &body));
    }
    let invalid = |e: A2aError| {
        ClientError::InvalidResponse(format!("the agent card at {url} is not valid: {e}"))
    };
    // A v0.3 card (no `supportedInterfaces`) is read as v1.0's, its interfaces at version 0.3.
    let json: Value = crate::json::decode(&body, MAX_DEPTH).map_err(invalid)?;
    let card: AgentCard =
        crate::json::from_value(v0_3::convert::card_in(json.clone())).map_err(invalid)?;
    Ok(Some(Fetched {
        card,
        json,
        etag,
        last_modified,
    }))
}
