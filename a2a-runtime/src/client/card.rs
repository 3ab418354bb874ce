//! The agent card on the client side: fetched from a base URL or a card URL, revalidated with
//! its validators, and its signature verified against the caller's keys.

use serde_json::Value;

use super::error::ClientError;
use super::http;
use super::options::ClientOptions;
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

/// A card fetched by [`A2aClient::fetch_card`](super::A2aClient::fetch_card): the card, where it came from, and what its
/// signature showed.
#[derive(Clone, Debug)]
pub struct FetchedCard {
    pub(super) card: AgentCard,
    pub(super) url: String,
    pub(super) signature: CardSignature,
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
    pub(super) url: Option<String>,
    pub(super) etag: Option<String>,
    pub(super) last_modified: Option<String>,
    pub(super) signature: CardSignature,
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
pub(super) async fn verify(options: &ClientOptions, json: &Value) -> CardSignature {
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
pub(super) async fn verify(_: &ClientOptions, _: &Value) -> CardSignature {
    CardSignature::NotChecked
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
