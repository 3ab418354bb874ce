//! The agent card on the client side: fetched from a base URL or a card URL, revalidated with
//! its validators, and its signature verified against the caller's keys.

use std::sync::atomic::Ordering;

use serde_json::Value;

use super::A2aClient;
use super::error::ClientError;
use super::http::{self, Fetched};
use super::options::ClientOptions;
use crate::error::A2aError;
use crate::types::AgentCard;

/// What the signature of a fetched card showed (see
/// [`ClientOptions::card_verifier`](super::ClientOptions)).
///
/// Only [`Verified`](Self::Verified) means a trusted key signed this very card; a card given
/// to the client (not fetched) is [`NotChecked`](Self::NotChecked).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CardSignature {
    /// A signature verifies with a trusted key: its `kid`.
    Verified {
        /// The id of the key that verified it.
        kid: String,
    },
    /// The card is signed, but no signature verifies with the trusted keys (a card changed
    /// after signing, an unknown or wrong key, an unusable signature): why.
    Unverifiable(String),
    /// The card carries no signature.
    Absent,
    /// No keys were given, or the card was not fetched: nothing was checked.
    NotChecked,
}

impl CardSignature {
    /// True only for a card a trusted key signed.
    pub fn is_verified(&self) -> bool {
        matches!(self, Self::Verified { .. })
    }
}

/// A card fetched by [`A2aClient::fetch_card`]: the card, where it came from, and what its
/// signature showed.
#[derive(Clone, Debug)]
pub struct FetchedCard {
    card: AgentCard,
    url: String,
    signature: CardSignature,
}

impl FetchedCard {
    /// The card.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The card, owned.
    pub fn into_card(self) -> AgentCard {
        self.card
    }

    /// The URL it was fetched from.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What its signature showed.
    pub fn signature(&self) -> &CardSignature {
        &self.signature
    }
}

/// The card URL of `url`: `url` itself when it names a card (its path ends in `.json` or goes
/// through `/.well-known/`), else `url` + `card_path` (a base URL).
pub(super) fn card_url(url: &str, card_path: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    let path = trimmed
        .split_once("://")
        .map_or(trimmed, |(_, rest)| rest)
        .split_once('/')
        .map_or("", |(_, p)| p);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if path.ends_with(".json") || path.contains(".well-known/") {
        url.to_owned()
    } else {
        format!("{trimmed}{card_path}")
    }
}

/// The card a client works with, and how to revalidate it.
#[derive(Debug)]
pub(super) struct CardCache {
    pub(super) card: AgentCard,
    /// Where the card was fetched from (none for a card given to the client).
    url: Option<String>,
    etag: Option<String>,
    last_modified: Option<String>,
    signature: CardSignature,
}

impl CardCache {
    /// A card given to the client.
    pub(super) fn given(card: AgentCard) -> Self {
        Self {
            card,
            url: None,
            etag: None,
            last_modified: None,
            signature: CardSignature::NotChecked,
        }
    }

    /// The card at `url` (a base URL or a card URL), its signature verified.
    pub(super) async fn fetch(
        http: &reqwest::Client,
        options: &ClientOptions,
        url: &str,
    ) -> Result<Self, ClientError> {
        let url = card_url(url, &options.card_path);
        let Some(fetched) = http::fetch_card(http, options, &url, None, None).await? else {
            return Err(ClientError::InvalidResponse(
                "the agent card request answered 304 without a cached card".into(),
            ));
        };
        let signature = verify(options, &fetched.json).await;
        Ok(Self {
            card: fetched.card,
            url: Some(url),
            etag: fetched.etag,
            last_modified: fetched.last_modified,
            signature,
        })
    }
}

/// What the signature of `json` (a card as received) shows with the options' keys.
#[cfg(feature = "jwt")]
async fn verify(options: &ClientOptions, json: &Value) -> CardSignature {
    use crate::auth::signing::SignatureError;
    let Some(verifier) = &options.card_verifier else {
        return CardSignature::NotChecked;
    };
    match verifier.verify(json).await {
        Ok(kid) => CardSignature::Verified { kid },
        Err(SignatureError::Unsigned) => CardSignature::Absent,
        Err(e) => CardSignature::Unverifiable(e.to_string()),
    }
}

/// Without the `jwt` feature no keys can be given: nothing is checked.
#[cfg(not(feature = "jwt"))]
async fn verify(_: &ClientOptions, _: &Value) -> CardSignature {
    CardSignature::NotChecked
}

impl A2aClient {
    /// Fetches the agent card at `url` without building a client: `url` is a base URL (the
    /// card is at `options.card_path` below it) or the card's own URL (a path ending in
    /// `.json`, or through `/.well-known/`). With
    /// [`ClientOptions::card_verifier`](super::ClientOptions) set, its signature is verified.
    ///
    /// ```no_run
    /// use a2a_runtime::client::{A2aClient, ClientOptions};
    ///
    /// # async fn run() -> Result<(), a2a_runtime::client::ClientError> {
    /// let fetched = A2aClient::fetch_card("http://127.0.0.1:8080", &ClientOptions::default()).await?;
    /// println!("{} ({:?})", fetched.card().name, fetched.signature());
    /// # Ok(()) }
    /// ```
    pub async fn fetch_card(
        url: &str,
        options: &ClientOptions,
    ) -> Result<FetchedCard, ClientError> {
        let http = http::http_client(options)?;
        let cache = CardCache::fetch(&http, options, url).await?;
        Ok(FetchedCard {
            card: cache.card,
            url: cache.url.unwrap_or_default(),
            signature: cache.signature,
        })
    }

    /// The agent card the client was built from (or last refreshed).
    pub fn card(&self) -> AgentCard {
        self.card
            .read()
            .map(|c| c.card.clone())
            .unwrap_or_else(|p| p.into_inner().card.clone())
    }

    /// What the signature of the card showed when it was fetched (or last refreshed).
    pub fn card_signature(&self) -> CardSignature {
        self.card
            .read()
            .map(|c| c.signature.clone())
            .unwrap_or_else(|p| p.into_inner().signature.clone())
    }

    /// Revalidates the card with `If-None-Match` / `If-Modified-Since`; returns true when it
    /// changed (its signature is verified again). The transport stays on the interface chosen
    /// at build time.
    pub async fn refresh_card(&self) -> Result<bool, ClientError> {
        let poisoned = || ClientError::Local(A2aError::Internal("card cache poisoned".into()));
        let (url, etag, lm) = {
            let c = self.card.read().map_err(|_| poisoned())?;
            let Some(url) = &c.url else {
                return Ok(false);
            };
            (url.clone(), c.etag.clone(), c.last_modified.clone())
        };
        let options = &self.transport.options;
        let fetched = http::fetch_card(
            &self.transport.http,
            options,
            &url,
            etag.as_deref(),
            lm.as_deref(),
        )
        .await?;
        let Some(Fetched {
            card,
            json,
            etag,
            last_modified,
        }) = fetched
        else {
            return Ok(false);
        };
        let signature = verify(options, &json).await;
        let mut c = self.card.write().map_err(|_| poisoned())?;
        let changed = c.card != card;
        c.card = card;
        c.etag = etag;
        c.last_modified = last_modified;
        c.signature = signature;
        if changed {
            self.checked.store(false, Ordering::Release);
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_and_card_urls() {
        let path = "/.well-known/agent-card.json";
        assert_eq!(
            card_url("http://h:1", path),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(
            card_url("http://h:1/agents/a/", "/card.json"),
            "http://h:1/agents/a/card.json"
        );
        assert_eq!(
            card_url("http://h:1/x/card.json", path),
            "http://h:1/x/card.json"
        );
        assert_eq!(
            card_url("https://h/.well-known/agent-card.json?v=2", path),
            "https://h/.well-known/agent-card.json?v=2"
        );
    }
}
