//! [`A2aClient::from_catalog`]: an agent found by name in a host's AI Catalog.

use reqwest::header::ACCEPT;

use super::answer::{MAX_DEPTH, transport_error};
use super::{A2aClient, ClientError, ClientOptions, Target};
use crate::types::{AI_CATALOG_MEDIA_TYPE, AI_CATALOG_PATH, AiCatalog};

impl A2aClient {
    /// Finds the agent `name` in the AI Catalog at `url` (a catalog's URL, or an origin such
    /// as `https://agents.example.com`, whose `/.well-known/ai-catalog.json` is read) and
    /// connects to it as [`discover`](Self::discover) does: from the card the entry holds, or
    /// the one it points at.
    ///
    /// An entry is the agent `name` when the last segment of its identifier (after the last
    /// `:` or `/`), its identifier, its display name or its inline card's name is `name`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), a2a_runtime::client::ClientError> {
    /// use a2a_runtime::client::{A2aClient, ClientOptions};
    ///
    /// let echo = A2aClient::from_catalog("http://127.0.0.1:8080", "echo", ClientOptions::default()).await?;
    /// println!("{}", echo.card().name);
    /// # Ok(()) }
    /// ```
    pub async fn from_catalog(
        url: &str,
        name: &str,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let url = catalog_url(url);
        let catalog = fetch_catalog(&url, &options).await?;
        let entry = catalog.agent(name).ok_or_else(|| {
            let names: Vec<&str> = catalog
                .entries
                .iter()
                .filter(|e| e.media_type == crate::types::A2A_AGENT_CARD_TYPE)
                .map(|e| e.identifier.as_str())
                .collect();
            ClientError::InvalidResponse(format!(
                "the AI Catalog at {url} lists no agent {name:?} (its agents: {})",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ))
        })?;
        let card = match (&entry.data, &entry.url) {
            (Some(_), _) => entry.card().ok_or_else(|| {
                ClientError::InvalidResponse(format!(
                    "the AI Catalog at {url} holds agent {name:?} inline, but not as an agent card"
                ))
            })?,
            // As any card: within the client's limits, its signature checked when asked.
            (None, Some(card_url)) => A2aClient::fetch_card(card_url, &options).await?.into_card(),
            (None, None) => {
                return Err(ClientError::InvalidResponse(format!(
                    "the AI Catalog at {url} gives agent {name:?} neither a url nor data"
                )));
            }
        };
        Self::new(Target::Card(Box::new(card)), options).await
    }
}

/// The catalog's URL: `url` itself when it names a JSON document, else its well-known path.
fn catalog_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    if url.ends_with(".json") {
        url.to_owned()
    } else {
        format!("{url}{AI_CATALOG_PATH}")
    }
}

/// Reads and checks the catalog at `url` (at most the client's `max_response_bytes`).
async fn fetch_catalog(url: &str, options: &ClientOptions) -> Result<AiCatalog, ClientError> {
    let http = super::http::http_client(options)?;
    let mut req = http
        .get(url)
        .timeout(options.timeout)
        .header(ACCEPT, format!("{AI_CATALOG_MEDIA_TYPE}, application/json"));
    for (k, v) in &options.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let resp = req
        .send()
        .await
        .map_err(|e| transport_error(url, e, options.timeout))?;
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
    let invalid = |e: String| {
        ClientError::InvalidResponse(format!("the AI Catalog at {url} is not valid: {e}"))
    };
    let value = crate::json::decode(&body, MAX_DEPTH).map_err(|e| invalid(e.to_string()))?;
    let catalog: AiCatalog = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
    catalog.check().map_err(invalid)?;
    Ok(catalog)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_reads_the_well_known_catalog() {
        assert_eq!(
            catalog_url("http://h:1/"),
            "http://h:1/.well-known/ai-catalog.json"
        );
        assert_eq!(catalog_url("http://h/c/ai.json"), "http://h/c/ai.json");
    }
}
