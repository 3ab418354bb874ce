//! [`StaticTokens`]: bearer tokens or API keys configured up front.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use sha2::{Digest as _, Sha256};

use super::{AuthError, AuthRequest, Authenticator};
use crate::protocol::Principal;
use crate::types::{ApiKeySecurityScheme, HttpAuthSecurityScheme, SecurityScheme};

/// Where the credential travels.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Carrier {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// `<header>: <key>` (the header name lowercase).
    ApiKey(String),
}

/// A fixed set of bearer tokens (or API keys), each naming the principal it authenticates.
///
/// Only the SHA-256 of each token is kept in memory; a presented token is hashed and looked up
/// by its hash, so how long the lookup takes says nothing about the configured tokens.
#[derive(Clone)]
pub struct StaticTokens {
    carrier: Carrier,
    scheme_name: String,
    // Keyed by the token's hash: the lookup's timing depends on the hash only. Comparing hashes
    // with `==` can at most tell an attacker how many leading bytes of the SHA-256 of their
    // guess match a stored one's, which brings them no closer to a token (a constant-time
    // compare after the lookup bought nothing: ~330 instructions a request under callgrind).
    principals: HashMap<TokenDigest, Principal, BuildHasherDefault<DigestHasher>>,
}

impl fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticTokens")
            .field("carrier", &self.carrier)
            .field("tokens", &self.principals.len())
            .finish()
    }
}

/// The SHA-256 of a token.
#[derive(Clone, Copy, PartialEq, Eq)]
struct TokenDigest([u8; 32]);

impl Hash for TokenDigest {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(head));
    }
}

/// The digest is already uniformly distributed: its first 8 bytes are the map's hash (SipHash
/// over it again cost ~190 instructions a request). Only configured tokens are stored, so a
/// caller cannot crowd a bucket.
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not reached by `TokenDigest` (it writes one u64); kept total for any other input.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn digest(token: &[u8]) -> TokenDigest {
    TokenDigest(Sha256::digest(token).into())
}

impl StaticTokens {
    /// Bearer tokens (`Authorization: Bearer <token>`), declared as the scheme `bearer`.
    pub fn bearer() -> Self {
        Self {
            carrier: Carrier::Bearer,
            scheme_name: "bearer".into(),
            principals: HashMap::default(),
        }
    }

    /// API keys in the header `header` (e.g. `X-API-Key`), declared as the scheme `apiKey`.
    pub fn api_key(header: impl Into<String>) -> Self {
        Self {
            carrier: Carrier::ApiKey(header.into().to_ascii_lowercase()),
            scheme_name: "apiKey".into(),
            principals: HashMap::default(),
        }
    }

    /// The name the scheme is declared under on the card.
    pub fn scheme_name(mut self, name: impl Into<String>) -> Self {
        self.scheme_name = name.into();
        self
    }

    /// Accepts `token` as the principal `id`.
    pub fn token(self, id: impl Into<String>, token: impl AsRef<[u8]>) -> Self {
        self.principal(Principal::authenticated(id), token)
    }

    /// Accepts `token` as `principal` (with its tenants and roles).
    pub fn principal(mut self, principal: Principal, token: impl AsRef<[u8]>) -> Self {
        self.principals.insert(digest(token.as_ref()), principal);
        self
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.principals.len()
    }

    /// True when no token is configured (every request is refused).
    pub fn is_empty(&self) -> bool {
        self.principals.is_empty()
    }

    /// The credential of a request, as sent.
    fn credential<'a>(&self, req: &AuthRequest<'a>) -> Result<&'a str, AuthError> {
        match &self.carrier {
            Carrier::Bearer => bearer_token(req),
            Carrier::ApiKey(header) => {
                let mut values = req.headers.get_all(header);
                let value = values
                    .next()
                    .ok_or_else(|| AuthError::new(format!("no {header} header")))?;
                if values.next().is_some() {
                    return Err(AuthError::new(format!("several {header} headers")));
                }
                Ok(value.trim())
            }
        }
    }
}

/// The token of `Authorization: Bearer <token>` (exactly one such header).
pub(super) fn bearer_token<'a>(req: &AuthRequest<'a>) -> Result<&'a str, AuthError> {
    let mut values = req.headers.get_all("authorization");
    let value = values
        .next()
        .ok_or_else(|| AuthError::new("no Authorization header"))?;
    if values.next().is_some() {
        return Err(AuthError::new("several Authorization headers"));
    }
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or_else(|| AuthError::new("Authorization is not `Bearer <token>`"))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::new("Authorization is not a Bearer credential"));
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(AuthError::new("empty bearer token"));
    }
    Ok(token)
}

#[async_trait::async_trait]
impl Authenticator for StaticTokens {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        let token = self.credential(req)?;
        if token.is_empty() {
            return Err(AuthError::new("empty credential"));
        }
        let hash = digest(token.as_bytes());
        match self.principals.get(&hash) {
            Some(principal) => Ok(principal.clone()),
            None => Err(AuthError::new("unknown credential")),
        }
    }

    fn security_schemes(&self) -> Vec<(String, SecurityScheme)> {
        let scheme = match &self.carrier {
            Carrier::Bearer => SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                ..Default::default()
            }),
            Carrier::ApiKey(header) => SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                location: "header".into(),
                name: header.clone(),
                ..Default::default()
            }),
        };
        vec![(self.scheme_name.clone(), scheme)]
    }

    fn challenge(&self) -> String {
        match &self.carrier {
            Carrier::Bearer => "Bearer realm=\"a2a\"".into(),
            // No standard challenge for API keys: name the header.
            Carrier::ApiKey(header) => format!("ApiKey realm=\"a2a\", header=\"{header}\""),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::protocol::RequestHeaders;

    async fn auth(a: &StaticTokens, headers: &[(&str, &str)]) -> Result<Principal, AuthError> {
        let headers: RequestHeaders = headers.iter().copied().collect();
        a.authenticate(&AuthRequest {
            headers: &headers,
            peer: None,
            peer_certificate: None,
            tenant: None,
            operation: None,
        })
        .await
    }

    #[tokio::test]
    async fn bearer_tokens_name_their_principal_and_anything_else_is_refused() {
        let a = StaticTokens::bearer()
            .token("alice", "tok-alice")
            .principal(
                Principal::authenticated("bob").with_tenants(["acme"]),
                "tok-bob",
            );
        assert_eq!(a.len(), 2);
        let p = auth(&a, &[("Authorization", "Bearer tok-alice")])
            .await
            .unwrap();
        assert_eq!(p.id, "alice");
        assert!(p.authenticated);
        let p = auth(&a, &[("authorization", "bearer  tok-bob ")])
            .await
            .unwrap();
        assert!(p.belongs_to("acme"));
        for bad in [
            vec![],
            vec![("Authorization", "Bearer tok-carol")],
            vec![("Authorization", "Basic !!!garbage!!!")],
            vec![("Authorization", "Bearer")],
            vec![("Authorization", "Bearer ")],
            vec![("Authorization", "tok-alice")],
            vec![
                ("Authorization", "Bearer tok-alice"),
                ("Authorization", "Bearer tok-bob"),
            ],
            vec![("X-API-Key", "tok-alice")],
        ] {
            assert!(auth(&a, &bad).await.is_err(), "{bad:?}");
        }
        // Only hashes are kept.
        assert!(!format!("{a:?}").contains("tok-alice"));
    }

    #[tokio::test]
    async fn each_of_many_tokens_finds_its_own_principal() {
        let a = (0..1_000).fold(StaticTokens::bearer(), |a, i| {
            a.token(format!("p{i}"), format!("tok-{i}"))
        });
        assert_eq!(a.len(), 1_000);
        for i in [0, 1, 499, 999] {
            let bearer = format!("Bearer tok-{i}");
            let p = auth(&a, &[("authorization", &bearer)]).await.unwrap();
            assert_eq!(p.id, format!("p{i}"));
        }
        assert!(
            auth(&a, &[("authorization", "Bearer tok-1000")])
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn api_keys_are_read_from_their_header() {
        let a = StaticTokens::api_key("X-API-Key").token("svc", "k1");
        assert_eq!(auth(&a, &[("x-api-key", "k1")]).await.unwrap().id, "svc");
        assert!(auth(&a, &[("Authorization", "Bearer k1")]).await.is_err());
        assert!(auth(&a, &[("x-api-key", "k2")]).await.is_err());
        let (name, scheme) = a.security_schemes().remove(0);
        assert_eq!(name, "apiKey");
        assert!(
            matches!(scheme, SecurityScheme::ApiKeySecurityScheme(s) if s.name == "x-api-key" && s.location == "header")
        );
    }
}
