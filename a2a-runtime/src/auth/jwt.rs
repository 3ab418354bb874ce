//! JWT bearer authentication ([`JwtAuthenticator`]) with keys pinned or fetched from a JWKS
//! over HTTPS ([`Jwks`]), and the algorithms shared with card signing.
//!
//! The algorithm is fixed by configuration: a token whose header names another one (or
//! `none`) is refused before any key is looked up. `exp` is required; `nbf`, `iss` and `aud`
//! are checked when present or configured, with a leeway for clock skew.
//!
//! ```no_run
//! use a2a_runtime::auth::jwt::{Algorithm, Jwks, JwtAuthenticator};
//! # fn f() -> Result<(), a2a_runtime::auth::jwt::JwksError> {
//! let jwks = Jwks::new("https://issuer.example.com/.well-known/jwks.json")?;
//! let jwt = JwtAuthenticator::new(Algorithm::Es256, jwks)
//!     .issuer("https://issuer.example.com")
//!     .audience("my-agent")
//!     .tenants_claim("tenants");
//! # let _ = jwt; Ok(()) }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Map, Value};

use super::{AuthError, AuthRequest, Authenticator};
use crate::protocol::Principal;
use crate::types::{HttpAuthSecurityScheme, SecurityScheme};

/// A signature algorithm (JWTs and card signatures).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// Ed25519.
    EdDsa,
}

impl Algorithm {
    /// The JOSE name (`RS256`, `ES256`, `EdDSA`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Es256 => "ES256",
            Self::EdDsa => "EdDSA",
        }
    }

    /// The algorithm with this JOSE name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "RS256" => Some(Self::Rs256),
            "ES256" => Some(Self::Es256),
            "EdDSA" => Some(Self::EdDsa),
            _ => None,
        }
    }

    pub(crate) const fn jose(self) -> jsonwebtoken::Algorithm {
        match self {
            Self::Rs256 => jsonwebtoken::Algorithm::RS256,
            Self::Es256 => jsonwebtoken::Algorithm::ES256,
            Self::EdDsa => jsonwebtoken::Algorithm::EdDSA,
        }
    }

    /// The public key in `pem` (SPKI), for this algorithm.
    pub fn public_key_pem(self, pem: &[u8]) -> Result<VerifyingKey, JwksError> {
        let key = match self {
            Self::Rs256 => DecodingKey::from_rsa_pem(pem),
            Self::Es256 => DecodingKey::from_ec_pem(pem),
            Self::EdDsa => DecodingKey::from_ed_pem(pem),
        }
        .map_err(|e| JwksError(format!("not a {} public key: {e}", self.name())))?;
        Ok(VerifyingKey {
            algorithm: self,
            key: Arc::new(key),
        })
    }

    /// The public key of a JWK (JSON), for this algorithm.
    pub fn public_key_jwk(self, jwk: &Value) -> Result<VerifyingKey, JwksError> {
        let jwk: Jwk = serde_json::from_value(jwk.clone())
            .map_err(|e| JwksError(format!("not a JWK: {e}")))?;
        self.key_of(&jwk)
    }

    fn key_of(self, jwk: &Jwk) -> Result<VerifyingKey, JwksError> {
        use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve};
        let fits = match (&jwk.algorithm, self) {
            (AlgorithmParameters::RSA(_), Self::Rs256) => true,
            (AlgorithmParameters::EllipticCurve(p), Self::Es256) => p.curve == EllipticCurve::P256,
            (AlgorithmParameters::OctetKeyPair(p), Self::EdDsa) => {
                p.curve == EllipticCurve::Ed25519
            }
            _ => false,
        };
        // A key that names its algorithm must name ours.
        let named = jwk
            .common
            .key_algorithm
            .map(|a| format!("{a:?}"))
            .is_none_or(|a| a == self.name());
        if !fits || !named {
            return Err(JwksError(format!("the key is not a {} key", self.name())));
        }
        let key = DecodingKey::from_jwk(jwk).map_err(|e| JwksError(format!("bad JWK: {e}")))?;
        Ok(VerifyingKey {
            algorithm: self,
            key: Arc::new(key),
        })
    }
}

/// A public key for one algorithm.
#[derive(Clone)]
pub struct VerifyingKey {
    pub(crate) algorithm: Algorithm,
    pub(crate) key: Arc<DecodingKey>,
}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl VerifyingKey {
    /// The algorithm this key verifies.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

/// A key set could not be configured, fetched or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("JWKS: {0}")]
pub struct JwksError(pub(crate) String);

/// The most bytes a JWKS response may have.
const MAX_JWKS_BYTES: usize = 256 * 1024;
/// The most keys kept from one JWKS.
const MAX_JWKS_KEYS: usize = 64;

/// A JSON Web Key Set fetched over HTTPS and cached.
///
/// Keys are looked up by `kid`. The set is fetched on first use, again once it is older than
/// [`refresh_every`](Self::refresh_every), and when an unknown `kid` shows up (at most once
/// per [`min_refetch_interval`](Self::min_refetch_interval), so unknown ids cannot make it
/// hammer the endpoint). While the endpoint is down the keys fetched last are used for at most
/// [`max_stale`](Self::max_stale) more; an unknown key is never accepted.
pub struct Jwks {
    url: String,
    client: reqwest::Client,
    refresh_every: Duration,
    min_refetch: Duration,
    max_stale: Duration,
    state: RwLock<JwksState>,
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct JwksState {
    /// By `kid`, each read once when fetched (a JWK fits one algorithm).
    keys: HashMap<String, VerifyingKey>,
    fetched: Option<Instant>,
    attempted: Option<Instant>,
}

impl fmt::Debug for Jwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Jwks")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Jwks {
    /// The key set at `url` (HTTPS only), trusting the system's root certificates.
    pub fn new(url: impl Into<String>) -> Result<Self, JwksError> {
        Self::build(url.into(), reqwest::Client::builder())
    }

    /// The key set at `url` (HTTPS only), trusting only the root certificates in `pem` (for a
    /// private issuer).
    pub fn with_roots(url: impl Into<String>, pem: &[u8]) -> Result<Self, JwksError> {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| JwksError(format!("bad root certificates: {e}")))?;
        Self::build(url.into(), reqwest::Client::builder().tls_certs_only(certs))
    }

    fn build(url: String, builder: reqwest::ClientBuilder) -> Result<Self, JwksError> {
        if !url.starts_with("https://") {
            return Err(JwksError(format!("{url} is not an https URL")));
        }
        let client = builder
            .https_only(true)
            .timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| JwksError(format!("HTTP client: {e}")))?;
        Ok(Self {
            url,
            client,
            refresh_every: Duration::from_secs(300),
            min_refetch: Duration::from_secs(10),
            max_stale: Duration::from_secs(3600),
            state: RwLock::new(JwksState::default()),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    /// How old the set may get before it is fetched again (default 5 minutes).
    pub fn refresh_every(mut self, every: Duration) -> Self {
        self.refresh_every = every;
        self
    }

    /// The least time between two fetches caused by unknown key ids (default 10 s).
    pub fn min_refetch_interval(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    /// How long past its refresh the last set is used while the endpoint cannot be reached
    /// (default 1 hour).
    pub fn max_stale(mut self, max: Duration) -> Self {
        self.max_stale = max;
        self
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The key `kid` for `algorithm`, fetching the set when needed.
    pub async fn key(&self, kid: &str, algorithm: Algorithm) -> Result<VerifyingKey, JwksError> {
        let (known, fresh, may_refetch) = self.lookup(kid);
        if let (Some(key), true) = (&known, fresh) {
            return fitting(key, algorithm);
        }
        if known.is_none() && !may_refetch && fresh {
            return Err(JwksError(format!("unknown key {kid:?}")));
        }
        {
            let _one = self.fetching.lock().await;
            // Another request may have fetched meanwhile.
            let (known, fresh, may_refetch) = self.lookup(kid);
            match (&known, fresh) {
                (Some(key), true) => return fitting(key, algorithm),
                (None, true) if !may_refetch => {
                    return Err(JwksError(format!("unknown key {kid:?}")));
                }
                _ => {}
            }
            let fetched = self.fetch().await;
            let now = Instant::now();
            let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
            state.attempted = Some(now);
            match fetched {
                Ok(keys) => {
                    state.keys = keys;
                    state.fetched = Some(now);
                }
                Err(e) => {
                    tracing::warn!(url = %self.url, error = %e, "could not fetch the JWKS");
                    let expired = state.fetched.is_none_or(|t| {
                        now.duration_since(t) > self.refresh_every + self.max_stale
                    });
                    if expired {
                        state.keys.clear();
                    }
                }
            }
        }
        let (known, _, _) = self.lookup(kid);
        match known {
            Some(key) => fitting(&key, algorithm),
            None => Err(JwksError(format!("unknown key {kid:?}"))),
        }
    }

    /// The key `kid` if known; whether the set is fresh; whether an unknown id may trigger a
    /// fetch now.
    fn lookup(&self, kid: &str) -> (Option<VerifyingKey>, bool, bool) {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let fresh = state
            .fetched
            .is_some_and(|t| now.duration_since(t) < self.refresh_every);
        let may_refetch = state
            .attempted
            .is_none_or(|t| now.duration_since(t) >= self.min_refetch);
        (state.keys.get(kid).cloned(), fresh, may_refetch)
    }

    async fn fetch(&self) -> Result<HashMap<String, VerifyingKey>, JwksError> {
        let fail = |e: reqwest::Error| JwksError(format!("{}: {e}", self.url));
        let mut resp = self.client.get(&self.url).send().await.map_err(fail)?;
        if !resp.status().is_success() {
            return Err(JwksError(format!(
                "{} answered {}",
                self.url,
                resp.status()
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(fail)? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(JwksError(format!(
                    "{} sent more than {MAX_JWKS_BYTES} bytes",
                    self.url
                )));
            }
            body.extend_from_slice(&chunk);
        }
        parse_jwks(&body)
    }
}

/// `key` if it is for `algorithm`.
fn fitting(key: &VerifyingKey, algorithm: Algorithm) -> Result<VerifyingKey, JwksError> {
    if key.algorithm == algorithm {
        Ok(key.clone())
    } else {
        Err(JwksError(format!(
            "the key is a {} key, not {}",
            key.algorithm.name(),
            algorithm.name()
        )))
    }
}

/// The signing keys with a `kid` of a JWKS document (keys this crate cannot read, or that fit
/// none of [`Algorithm`], are skipped).
fn parse_jwks(body: &[u8]) -> Result<HashMap<String, VerifyingKey>, JwksError> {
    let doc: Value =
        serde_json::from_slice(body).map_err(|e| JwksError(format!("not JSON: {e}")))?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| JwksError("no \"keys\" array".into()))?;
    let mut out = HashMap::new();
    for key in keys {
        if out.len() == MAX_JWKS_KEYS {
            break;
        }
        if key
            .get("use")
            .and_then(Value::as_str)
            .is_some_and(|u| u != "sig")
        {
            continue;
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(key.clone()) else {
            continue;
        };
        let Some(kid) = jwk.common.key_id.clone() else {
            continue;
        };
        if let Some(key) = [Algorithm::Rs256, Algorithm::Es256, Algorithm::EdDsa]
            .into_iter()
            .find_map(|a| a.key_of(&jwk).ok())
        {
            out.insert(kid, key);
        }
    }
    Ok(out)
}

/// Where a [`JwtAuthenticator`] finds its keys.
#[derive(Clone, Debug)]
enum Keys {
    /// Pinned keys by `kid` (a token without `kid` is checked against each).
    Pinned(Vec<(Option<String>, VerifyingKey)>),
    /// A JWKS endpoint.
    Jwks(Arc<Jwks>),
}

/// Authenticates `Authorization: Bearer <JWT>`: the token's signature (with the configured
/// algorithm only), `exp`, `nbf`, and `iss`/`aud` when configured. The principal's id is the
/// `sub` claim (or [`id_claim`](Self::id_claim)); tenants and roles come from the claims
/// named with [`tenants_claim`](Self::tenants_claim) and [`roles_claim`](Self::roles_claim).
///
/// A verified token is remembered (by its SHA-256) until it expires, for at most a minute, so
/// that a client sending the same token on every request pays for one signature check a
/// minute; see [`verified_tokens`](Self::verified_tokens).
#[derive(Clone, Debug)]
pub struct JwtAuthenticator {
    algorithm: Algorithm,
    keys: Keys,
    validation: Validation,
    id_claim: String,
    tenants_claim: Option<String>,
    roles_claim: Option<String>,
    scheme_name: String,
    /// The required `iss`, when configured (the namespace of the ids: one per issuer).
    issuer: Option<String>,
    verified: Arc<Verified>,
}

/// How long a verified token is remembered at most, in seconds.
const VERIFIED_TTL: u64 = 60;

/// Tokens verified lately: the SHA-256 of the token to its principal and until when (Unix
/// seconds) it may be served from here. Bounded: when full, the expired entries go, and if
/// none had, all of them.
struct Verified {
    capacity: usize,
    entries: std::sync::Mutex<HashMap<[u8; 32], (Principal, u64)>>,
}

impl fmt::Debug for Verified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verified")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Verified {
    fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: std::sync::Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, digest: &[u8; 32], now: u64) -> Option<Principal> {
        if self.capacity == 0 {
            return None;
        }
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(digest)
            .filter(|(_, until)| now < *until)
            .map(|(p, _)| p.clone())
    }

    fn put(&self, digest: [u8; 32], principal: Principal, until: u64, now: u64) {
        if self.capacity == 0 || until <= now {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity {
            entries.retain(|_, (_, u)| *u > now);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(digest, (principal, until));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or_default()
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl JwtAuthenticator {
    /// Tokens signed with `algorithm` by a key of `jwks`.
    pub fn new(algorithm: Algorithm, jwks: Jwks) -> Self {
        Self::with_keys(algorithm, Keys::Jwks(Arc::new(jwks)))
    }

    /// Tokens signed with `algorithm` by a key of a shared `jwks`.
    pub fn shared(algorithm: Algorithm, jwks: Arc<Jwks>) -> Self {
        Self::with_keys(algorithm, Keys::Jwks(jwks))
    }

    /// Tokens signed by `key` (its algorithm), named `kid` when given.
    pub fn pinned(key: VerifyingKey, kid: Option<String>) -> Self {
        Self::with_keys(key.algorithm, Keys::Pinned(vec![(kid, key)]))
    }

    /// Also accepts tokens signed by `key` (pinned keys only; it must use the same
    /// algorithm, or it is never used).
    pub fn and_pinned(mut self, key: VerifyingKey, kid: Option<String>) -> Self {
        if let Keys::Pinned(keys) = &mut self.keys
            && key.algorithm == self.algorithm
        {
            keys.push((kid, key));
        }
        self
    }

    fn with_keys(algorithm: Algorithm, keys: Keys) -> Self {
        let mut validation = Validation::new(algorithm.jose());
        validation.leeway = 30;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        Self {
            algorithm,
            keys,
            validation,
            id_claim: "sub".into(),
            tenants_claim: None,
            roles_claim: None,
            scheme_name: "jwt".into(),
            issuer: None,
            verified: Arc::new(Verified::new(4096)),
        }
    }

    /// How many verified tokens are remembered (default 4096; 0: every request checks its
    /// token's signature).
    pub fn verified_tokens(mut self, capacity: usize) -> Self {
        self.verified = Arc::new(Verified::new(capacity));
        self
    }

    /// The required `iss`.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        self.validation.set_issuer(&[issuer.as_str()]);
        self.issuer = Some(issuer);
        self.require("iss");
        self
    }

    /// The required `aud` (one of the token's audiences).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.validation.set_audience(&[audience.into()]);
        self.validation.validate_aud = true;
        self.require("aud");
        self
    }

    fn require(&mut self, claim: &str) {
        self.validation
            .required_spec_claims
            .insert(claim.to_owned());
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.validation.leeway = leeway.as_secs();
        self
    }

    /// The claim holding the principal's id (default `sub`).
    pub fn id_claim(mut self, claim: impl Into<String>) -> Self {
        self.id_claim = claim.into();
        self
    }

    /// The claim listing the caller's tenants (an array of strings, or one space-separated
    /// string).
    pub fn tenants_claim(mut self, claim: impl Into<String>) -> Self {
        self.tenants_claim = Some(claim.into());
        self
    }

    /// The claim listing the caller's roles (e.g. `roles`, or `scope` for OAuth scopes).
    pub fn roles_claim(mut self, claim: impl Into<String>) -> Self {
        self.roles_claim = Some(claim.into());
        self
    }

    /// The name the scheme is declared under on the card (default `jwt`).
    pub fn scheme_name(mut self, name: impl Into<String>) -> Self {
        self.scheme_name = name.into();
        self
    }

    /// Verifies `token` and returns its principal.
    pub async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        use sha2::Digest as _;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let now = unix_now();
        if let Some(p) = self.verified.get(&digest, now) {
            return Ok(p);
        }
        let principal = self.verify_signed(token).await?;
        // Until it expires (no leeway here: after that, the full check decides), within the
        // TTL, and only once it is valid (`nbf`).
        let claim = |name: &str| {
            principal
                .claims
                .as_ref()
                .and_then(|c| c.get(name))
                .and_then(Value::as_u64)
        };
        if claim("nbf").is_none_or(|nbf| nbf <= now)
            && let Some(exp) = claim("exp")
        {
            let until = exp.min(now + VERIFIED_TTL);
            self.verified.put(digest, principal.clone(), until, now);
        }
        Ok(principal)
    }

    async fn verify_signed(&self, token: &str) -> Result<Principal, AuthError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| AuthError::new(format!("unreadable JWT header: {e}")))?;
        if header.alg != self.algorithm.jose() {
            return Err(AuthError::new(format!(
                "JWT algorithm {:?} is not the configured {}",
                header.alg,
                self.algorithm.name()
            )));
        }
        let claims = match &self.keys {
            Keys::Jwks(jwks) => {
                let kid = header
                    .kid
                    .as_deref()
                    .ok_or_else(|| AuthError::new("JWT without kid"))?;
                let key = jwks
                    .key(kid, self.algorithm)
                    .await
                    .map_err(|e| AuthError::new(e.to_string()))?;
                self.decode(token, &key)?
            }
            Keys::Pinned(keys) => {
                let mut last = AuthError::new("no pinned key matches the JWT's kid");
                let mut found = None;
                for (kid, key) in keys {
                    if kid.is_some() && header.kid.is_some() && kid != &header.kid {
                        continue;
                    }
                    match self.decode(token, key) {
                        Ok(c) => {
                            found = Some(c);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                found.ok_or(last)?
            }
        };
        self.principal(claims)
    }

    fn decode(&self, token: &str, key: &VerifyingKey) -> Result<Map<String, Value>, AuthError> {
        jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| AuthError::new(format!("JWT refused: {e}")))
    }

    fn principal(&self, claims: Map<String, Value>) -> Result<Principal, AuthError> {
        let id = claims
            .get(&self.id_claim)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| AuthError::new(format!("JWT without a {} claim", self.id_claim)))?;
        let list = |name: &Option<String>| -> Vec<String> {
            match name.as_ref().and_then(|n| claims.get(n)) {
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
                _ => Vec::new(),
            }
        };
        let tenants = list(&self.tenants_claim);
        let roles = list(&self.roles_claim);
        Ok(Principal::authenticated(id)
            .with_tenants(tenants)
            .with_roles(roles)
            .with_claims(claims))
    }
}

#[async_trait::async_trait]
impl Authenticator for JwtAuthenticator {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        let token = super::tokens::bearer_token(req)?;
        self.verify(token).await
    }

    fn security_schemes(&self) -> Vec<(String, SecurityScheme)> {
        vec![(
            self.scheme_name.clone(),
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                bearer_format: "JWT".into(),
                ..Default::default()
            }),
        )]
    }

    fn challenge(&self) -> String {
        "Bearer realm=\"a2a\"".into()
    }

    /// The scheme's name, and the required issuer when there is one (`jwt:https://idp`): ids
    /// of two issuers are two namespaces.
    fn namespace(&self) -> String {
        match &self.issuer {
            Some(iss) => format!("{}:{iss}", self.scheme_name),
            None => self.scheme_name.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_jwks_keeps_signing_keys_with_an_id_only() {
        let doc = serde_json::json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "a"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "enc", "use": "enc"},
            {"kty": "weird", "kid": "w"},
        ]});
        let keys = parse_jwks(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let cache = Verified::new(2);
        let p = Principal::authenticated("p");
        cache.put([1; 32], p.clone(), 100, 10);
        cache.put([2; 32], p.clone(), 20, 10);
        assert_eq!(cache.get(&[1; 32], 50), Some(p.clone()));
        assert_eq!(cache.get(&[2; 32], 20), None, "expired");
        // Full: the expired entry goes.
        cache.put([3; 32], p.clone(), 100, 30);
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&[1; 32], 31).is_some());
        // Full of live entries: all go.
        cache.put([4; 32], p.clone(), 100, 31);
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&[4; 32], 31).is_some());
        cache.put([5; 32], p, 10, 31);
        assert!(
            cache.get(&[5; 32], 31).is_none(),
            "already expired: not kept"
        );
        assert_eq!(keys.keys().collect::<Vec<_>>(), ["a"]);
        assert!(fitting(&keys["a"], Algorithm::EdDsa).is_ok());
        assert!(fitting(&keys["a"], Algorithm::Es256).is_err());
        assert!(parse_jwks(b"[]").is_err());
        assert!(Jwks::new("http://issuer/jwks").is_err());
    }
}
