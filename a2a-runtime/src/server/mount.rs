//! Where the card's interfaces point: the URLs of the bindings, from the builder's `.url()`, the
//! address [`A2aServer::start`](super::A2aServer::start) bound, or — for a server mounted into
//! an App without either — the request's `Host` and the mount path.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use actix_web::HttpRequest;

use super::card::{CardDoc, Decorate, WELL_KNOWN_PATH};
use crate::types::{AgentCard, AgentInterface, ProtocolBinding};

/// How many cards derived from distinct `Host` values and mount paths are kept (others are
/// built per request: a client sending a new `Host` on every request cannot grow memory).
const DERIVED_CARDS: usize = 16;

/// The card as configured, and the cards derived from requests.
pub(crate) struct CardUrls {
    /// The card before the served interfaces are added (the user's own interfaces kept).
    raw: AgentCard,
    jsonrpc_path: String,
    rest_path: String,
    max_age: Duration,
    /// Whether the URLs are fixed (`.url()`, or the bound address of `start`).
    fixed: std::sync::atomic::AtomicBool,
    /// The path given to [`A2aServer::mount`](super::A2aServer::mount).
    mount: OnceLock<String>,
    /// Cards derived per base URL (bounded by [`DERIVED_CARDS`]).
    derived: Mutex<Vec<(String, Arc<CardDoc>)>>,
    /// The fields of other protocol versions to add to the served JSON.
    decorate: Decorate,
    /// Signs every card served (re-signed whenever its URLs change).
    #[cfg(feature = "jwt")]
    signer: Option<crate::auth::signing::CardSigner>,
}

impl CardUrls {
    pub(crate) fn new(
        raw: AgentCard,
        jsonrpc_path: String,
        rest_path: String,
        max_age: Duration,
        fixed: bool,
        decorate: Decorate,
    ) -> Self {
        Self {
            raw,
            jsonrpc_path,
            rest_path,
            max_age,
            fixed: fixed.into(),
            mount: OnceLock::new(),
            derived: Mutex::new(Vec::new()),
            decorate,
            #[cfg(feature = "jwt")]
            signer: None,
        }
    }

    /// Signs the served cards with `signer`.
    #[cfg(feature = "jwt")]
    pub(crate) fn signed_by(mut self, signer: crate::auth::signing::CardSigner) -> Self {
        self.signer = Some(signer);
        self
    }

    /// The card as served: signed when a signer is configured (a card that cannot be signed
    /// is served unsigned, and the failure logged).
    pub(crate) fn sign(&self, card: AgentCard) -> AgentCard {
        #[cfg(feature = "jwt")]
        if let Some(signer) = &self.signer {
            let mut card = card;
            card.signatures.clear();
            // Over the JSON as served: with the members of other protocol versions too.
            let signed = serde_json::to_value(&card)
                .map_err(|e| e.to_string())
                .and_then(|mut value| {
                    if let Some(object) = value.as_object_mut() {
                        crate::compat::v0_3::convert::add_missing(object, (self.decorate)(&card));
                    }
                    signer.signature(&value).map_err(|e| e.to_string())
                });
            match signed {
                Ok(signature) => card.signatures.push(signature),
                Err(e) => tracing::error!(error = %e, "could not sign the agent card"),
            }
            return card;
        }
        card
    }

    /// The served card for the bindings at `base` (e.g. `http://host:8080/a2a`).
    pub(crate) fn doc_at(&self, base: &str) -> CardDoc {
        let card = with_interfaces(self.raw.clone(), base, &self.jsonrpc_path, &self.rest_path);
        CardDoc::with_json(self.sign(card), self.max_age, self.decorate)
    }

    /// Fixes the URLs (the card served is then the one given to the server).
    pub(crate) fn fix(&self) {
        self.fixed.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn is_fixed(&self) -> bool {
        self.fixed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records the path the bindings are mounted at; `false` when another one was recorded.
    pub(crate) fn set_mount(&self, path: &str) -> bool {
        let path = normalize(path);
        self.mount.get_or_init(|| path.clone()) == &path
    }

    pub(crate) fn mount(&self) -> Option<&str> {
        self.mount.get().map(String::as_str)
    }

    /// The card for a request when the URLs are not fixed: `scheme://host` of the request and
    /// `mount` (`None`: the path the card was requested under).
    pub(crate) fn derived(&self, req: &HttpRequest, mount: Option<&str>) -> Arc<CardDoc> {
        let info = req.connection_info();
        let host = info.host();
        let scheme = match info.scheme() {
            "https" => "https",
            _ => "http",
        };
        // A `Host` that is not an authority (a hostile or broken client) gets the default.
        let host = if is_authority(host) {
            host
        } else {
            "127.0.0.1:8080"
        };
        let mount = match mount {
            Some(m) => m.to_owned(),
            None => normalize(req.path().strip_suffix(WELL_KNOWN_PATH).unwrap_or_default()),
        };
        let base = format!("{scheme}://{host}{mount}");
        let mut cache = self.derived.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, doc)) = cache.iter().find(|(b, _)| *b == base) {
            return doc.clone();
        }
        let doc = Arc::new(self.doc_at(&base));
        if cache.len() < DERIVED_CARDS {
            cache.push((base, doc.clone()));
        }
        doc
    }
}

/// `/a2a/` and `a2a` → `/a2a`; `/` and `` → ``.
fn normalize(path: &str) -> String {
    let p = path.trim_matches('/');
    if p.is_empty() {
        String::new()
    } else {
        format!("/{p}")
    }
}

/// Whether `host` is a plain `host[:port]` (letters, digits, `.-_:[]`), nothing else.
pub(super) fn is_authority(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'[' | b']')
        })
}

/// The card with the interfaces this server serves first, then the user's own (an interface of
/// the user's that equals one of ours is listed once).
///
/// A URL never ends with a slash: clients join it with a REST path by concatenation, so a root
/// mount is `http://host:port`, and `http://host:port` + `/message:send` reaches the route.
pub(crate) fn with_interfaces(
    mut card: AgentCard,
    base: &str,
    jsonrpc_path: &str,
    rest_path: &str,
) -> AgentCard {
    let base = base.trim_end_matches('/');
    let join = |p: &str| format!("{base}{}", normalize(p));
    let ours = [
        AgentInterface::new(join(jsonrpc_path), ProtocolBinding::JsonRpc),
        AgentInterface::new(join(rest_path), ProtocolBinding::HttpJson),
    ];
    card.supported_interfaces.retain(|i| !ours.contains(i));
    card.supported_interfaces.splice(0..0, ours);
    card
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_have_no_trailing_slash_and_keep_the_users_interfaces() {
        let mut card = AgentCard::default();
        let theirs = AgentInterface::new("grpc.example.com:443", ProtocolBinding::Grpc);
        card.supported_interfaces = vec![
            theirs.clone(),
            AgentInterface::new("http://h:1", ProtocolBinding::JsonRpc),
        ];
        let card = with_interfaces(card, "http://h:1/", "/", "");
        let urls: Vec<_> = card
            .supported_interfaces
            .iter()
            .map(|i| (i.url.as_str(), i.protocol_binding.clone()))
            .collect();
        assert_eq!(
            urls,
            [
                ("http://h:1", ProtocolBinding::JsonRpc),
                ("http://h:1", ProtocolBinding::HttpJson),
                ("grpc.example.com:443", ProtocolBinding::Grpc),
            ]
        );
        let card = with_interfaces(AgentCard::default(), "http://h/a2a/", "rpc/", "/api");
        assert_eq!(card.supported_interfaces[0].url, "http://h/a2a/rpc");
        assert_eq!(card.supported_interfaces[1].url, "http://h/a2a/api");
    }

    #[test]
    fn only_plain_authorities_are_reflected() {
        assert!(is_authority("agent.example.com:8443"));
        assert!(is_authority("[::1]:80"));
        for bad in ["", "a/b", "a b", "a@b", "h?x", "h#x"] {
            assert!(!is_authority(bad), "{bad}");
        }
    }
}
