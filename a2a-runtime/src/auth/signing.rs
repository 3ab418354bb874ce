//! Signed agent cards: JWS with a detached payload over the card's canonical form.
//!
//! The payload is the card without `signatures`, with empty strings, arrays and objects left
//! out (as the proto's presence rules leave out defaults), canonicalized with RFC 8785 ([jcs]).
//! The protected header carries `alg`, `typ: "JOSE"` and `kid` (and `jku` when configured).
//! A [`CardVerifier`] checks a card against the keys its user trusts — pinned keys or a JWKS
//! the user names; a `jku` in a signature's header is never followed.
//!
//! ```
//! use a2a_runtime::auth::jwt::Algorithm;
//! use a2a_runtime::auth::signing::{CardSigner, CardVerifier};
//! # let (private_pem, public_pem) = (include_str!("../../tests/data/ed25519.pem"), include_str!("../../tests/data/ed25519.pub.pem"));
//! let signer = CardSigner::from_pem(Algorithm::EdDsa, private_pem.as_bytes(), "key-1").unwrap();
//! let card = a2a_runtime::types::AgentCard { name: "n".into(), ..Default::default() };
//! let signed = signer.sign(card).unwrap();
//! let verifier = CardVerifier::pinned().key("key-1", Algorithm::EdDsa.public_key_pem(public_pem.as_bytes()).unwrap());
//! # tokio_test_block_on(async {
//! assert_eq!(verifier.verify_card(&signed).await.unwrap(), "key-1");
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output { futures::executor::block_on(f) }
//! ```
//!
//! [jcs]: super::jcs

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::EncodingKey;
use serde_json::{Map, Value};

use super::jcs;
use super::jwt::{Algorithm, Jwks, VerifyingKey};
use crate::types::{AgentCard, AgentCardSignature};

/// A card could not be signed, or no signature of it could be verified.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The signing key is unusable.
    #[error("bad signing key: {0}")]
    Key(String),
    /// The card has no canonical form (e.g. a number that is not finite).
    #[error(transparent)]
    Canonical(#[from] jcs::CanonicalizationError),
    /// The card carries no signature.
    #[error("the card is not signed")]
    Unsigned,
    /// No signature verifies with a trusted key (each one's reason, in order).
    #[error("no valid signature: {}", .0.join("; "))]
    Invalid(Vec<String>),
}

/// The bytes a card signature covers: the card (JSON) without `signatures`, without empty
/// values, canonicalized.
pub fn signing_payload(card: &Value) -> Result<String, SignatureError> {
    let mut card = card.clone();
    if let Value::Object(m) = &mut card {
        m.remove("signatures");
    }
    let cleaned = without_empty(card).unwrap_or(Value::Object(Map::new()));
    Ok(jcs::to_string(&cleaned)?)
}

/// `value` without empty strings, arrays and objects, recursively (`None`: empty itself).
fn without_empty(value: Value) -> Option<Value> {
    match value {
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(without_empty).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(m) => {
            let m: Map<String, Value> = m
                .into_iter()
                .filter_map(|(k, v)| without_empty(v).map(|v| (k, v)))
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        Value::Null => None,
        other => Some(other),
    }
}

/// Signs agent cards with one private key.
#[derive(Clone)]
pub struct CardSigner {
    algorithm: Algorithm,
    key: Arc<EncodingKey>,
    kid: String,
    jku: Option<String>,
}

impl fmt::Debug for CardSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CardSigner")
            .field("algorithm", &self.algorithm)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl CardSigner {
    /// A signer with the private key in `pem` (PKCS#8), published under `kid`.
    pub fn from_pem(
        algorithm: Algorithm,
        pem: &[u8],
        kid: impl Into<String>,
    ) -> Result<Self, SignatureError> {
        let key = match algorithm {
            Algorithm::Rs256 => EncodingKey::from_rsa_pem(pem),
            Algorithm::Es256 => EncodingKey::from_ec_pem(pem),
            Algorithm::EdDsa => EncodingKey::from_ed_pem(pem),
        }
        .map_err(|e| SignatureError::Key(e.to_string()))?;
        let signer = Self {
            algorithm,
            key: Arc::new(key),
            kid: kid.into(),
            jku: None,
        };
        // A key of another kind is found out now, not on the first request.
        signer.sign_payload(b"probe")?;
        Ok(signer)
    }

    /// Names the JWKS where verifiers may find the public key (`jku`).
    pub fn jku(mut self, url: impl Into<String>) -> Self {
        self.jku = Some(url.into());
        self
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    fn sign_payload(&self, payload: &[u8]) -> Result<AgentCardSignature, SignatureError> {
        let mut header = Map::new();
        header.insert("alg".into(), self.algorithm.name().into());
        header.insert("kid".into(), self.kid.clone().into());
        header.insert("typ".into(), "JOSE".into());
        if let Some(jku) = &self.jku {
            header.insert("jku".into(), jku.clone().into());
        }
        let header = serde_json::to_vec(&header).map_err(|e| SignatureError::Key(e.to_string()))?;
        let protected = URL_SAFE_NO_PAD.encode(header);
        let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
        let signature =
            jsonwebtoken::crypto::sign(input.as_bytes(), &self.key, self.algorithm.jose())
                .map_err(|e| SignatureError::Key(e.to_string()))?;
        Ok(AgentCardSignature {
            protected,
            signature,
            ..Default::default()
        })
    }

    /// The signature of a card given as JSON.
    pub fn signature(&self, card: &Value) -> Result<AgentCardSignature, SignatureError> {
        self.sign_payload(signing_payload(card)?.as_bytes())
    }

    /// `card` with this signer's signature appended (after any it had).
    pub fn sign(&self, mut card: AgentCard) -> Result<AgentCard, SignatureError> {
        let json = serde_json::to_value(&card).map_err(|e| SignatureError::Key(e.to_string()))?;
        let signature = self.signature(&json)?;
        card.signatures.push(signature);
        Ok(card)
    }
}

/// The keys a [`CardVerifier`] trusts.
#[derive(Clone, Debug)]
enum Trust {
    Pinned(Vec<(String, VerifyingKey)>),
    Jwks(Arc<Jwks>, Vec<Algorithm>),
}

/// Verifies card signatures against a trust root chosen by its user.
#[derive(Clone, Debug)]
pub struct CardVerifier {
    trust: Trust,
}

impl CardVerifier {
    /// Trusts only the keys added with [`key`](Self::key).
    pub fn pinned() -> Self {
        Self {
            trust: Trust::Pinned(Vec::new()),
        }
    }

    /// Trusts `key` under the id `kid` (for its algorithm only).
    pub fn key(mut self, kid: impl Into<String>, key: VerifyingKey) -> Self {
        if let Trust::Pinned(keys) = &mut self.trust {
            keys.push((kid.into(), key));
        }
        self
    }

    /// Trusts the keys of `jwks` (a URL the caller chose, never the card's `jku`), for the
    /// `algorithms` given.
    pub fn jwks(jwks: Arc<Jwks>, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        Self {
            trust: Trust::Jwks(jwks, algorithms.into_iter().collect()),
        }
    }

    /// Verifies a typed card; returns the `kid` of the first valid signature.
    pub async fn verify_card(&self, card: &AgentCard) -> Result<String, SignatureError> {
        let json = serde_json::to_value(card).map_err(|e| SignatureError::Key(e.to_string()))?;
        self.verify(&json).await
    }

    /// Verifies a card as received (JSON); returns the `kid` of the first valid signature.
    pub async fn verify(&self, card: &Value) -> Result<String, SignatureError> {
        let signatures = card
            .get("signatures")
            .and_then(Value::as_array)
            .filter(|s| !s.is_empty())
            .ok_or(SignatureError::Unsigned)?;
        let payload = URL_SAFE_NO_PAD.encode(signing_payload(card)?);
        let mut reasons = Vec::new();
        for (i, sig) in signatures.iter().enumerate() {
            match self.check(sig, &payload).await {
                Ok(kid) => return Ok(kid),
                Err(reason) => reasons.push(format!("signature {i}: {reason}")),
            }
        }
        Err(SignatureError::Invalid(reasons))
    }

    async fn check(&self, sig: &Value, payload: &str) -> Result<String, String> {
        let protected = sig
            .get("protected")
            .and_then(Value::as_str)
            .ok_or("no protected header")?;
        let signature = sig
            .get("signature")
            .and_then(Value::as_str)
            .ok_or("no signature")?;
        let header = URL_SAFE_NO_PAD
            .decode(protected)
            .map_err(|_| "the protected header is not base64url".to_owned())?;
        let header: Map<String, Value> = serde_json::from_slice(&header)
            .map_err(|_| "the protected header is not a JSON object".to_owned())?;
        if header.contains_key("crit") {
            return Err("critical header parameters are not supported".into());
        }
        let alg = header.get("alg").and_then(Value::as_str).ok_or("no alg")?;
        let algorithm =
            Algorithm::from_name(alg).ok_or_else(|| format!("algorithm {alg:?} refused"))?;
        let kid = header.get("kid").and_then(Value::as_str).ok_or("no kid")?;
        let key = match &self.trust {
            Trust::Pinned(keys) => keys
                .iter()
                .find(|(k, key)| k == kid && key.algorithm == algorithm)
                .map(|(_, key)| key.clone())
                .ok_or_else(|| format!("no trusted {alg} key {kid:?}"))?,
            Trust::Jwks(jwks, algorithms) => {
                if !algorithms.contains(&algorithm) {
                    return Err(format!("algorithm {alg} not accepted"));
                }
                jwks.key(kid, algorithm).await.map_err(|e| e.to_string())?
            }
        };
        let input = format!("{protected}.{payload}");
        match jsonwebtoken::crypto::verify(signature, input.as_bytes(), &key.key, algorithm.jose())
        {
            Ok(true) => Ok(kid.to_owned()),
            Ok(false) => Err(format!("does not verify with key {kid:?}")),
            Err(e) => Err(format!("does not verify with key {kid:?}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const ED_PRIVATE: &str = include_str!("../../tests/data/ed25519.pem");
    const ED_PUBLIC: &str = include_str!("../../tests/data/ed25519.pub.pem");
    const EC_PRIVATE: &str = include_str!("../../tests/data/p256.pem");
    const EC_PUBLIC: &str = include_str!("../../tests/data/p256.pub.pem");

    fn card() -> AgentCard {
        AgentCard {
            name: "Signed".into(),
            description: "A signed card".into(),
            version: "1.0.0".into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_payload_leaves_out_signatures_and_empty_values() {
        let v = serde_json::json!({"name": "n", "signatures": [{"protected": "x"}], "skills": [],
            "capabilities": {"extensions": [], "streaming": false}, "description": "", "n": 0});
        assert_eq!(
            signing_payload(&v).unwrap(),
            r#"{"capabilities":{"streaming":false},"n":0,"name":"n"}"#
        );
    }

    #[tokio::test]
    async fn round_trip_tamper_and_wrong_key() {
        for (alg, private, public) in [
            (Algorithm::EdDsa, ED_PRIVATE, ED_PUBLIC),
            (Algorithm::Es256, EC_PRIVATE, EC_PUBLIC),
        ] {
            let signer = CardSigner::from_pem(alg, private.as_bytes(), "k1").unwrap();
            let signed = signer.sign(card()).unwrap();
            let key = alg.public_key_pem(public.as_bytes()).unwrap();
            let verifier = CardVerifier::pinned().key("k1", key.clone());
            assert_eq!(verifier.verify_card(&signed).await.unwrap(), "k1");
            // Tampered.
            let mut tampered = signed.clone();
            tampered.description = "A tampered card".into();
            assert!(matches!(
                verifier.verify_card(&tampered).await,
                Err(SignatureError::Invalid(_))
            ));
            // Unsigned.
            assert_eq!(
                verifier.verify_card(&card()).await,
                Err(SignatureError::Unsigned)
            );
            // Another kid, another key.
            assert!(
                CardVerifier::pinned()
                    .key("k2", key)
                    .verify_card(&signed)
                    .await
                    .is_err()
            );
            let (other_alg, other_pub) = if alg == Algorithm::EdDsa {
                (Algorithm::Es256, EC_PUBLIC)
            } else {
                (Algorithm::EdDsa, ED_PUBLIC)
            };
            let wrong = other_alg.public_key_pem(other_pub.as_bytes()).unwrap();
            assert!(
                CardVerifier::pinned()
                    .key("k1", wrong)
                    .verify_card(&signed)
                    .await
                    .is_err()
            );
        }
        // A key of the wrong kind is refused up front.
        assert!(CardSigner::from_pem(Algorithm::Es256, ED_PRIVATE.as_bytes(), "k").is_err());
    }

    #[tokio::test]
    async fn the_header_is_jose_with_kid_and_a_jku_is_not_followed() {
        let signer = CardSigner::from_pem(Algorithm::EdDsa, ED_PRIVATE.as_bytes(), "k1")
            .unwrap()
            .jku("https://attacker.example/jwks.json");
        let signed = signer.sign(card()).unwrap();
        let header: Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(&signed.signatures[0].protected)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["alg"], "EdDSA");
        assert_eq!(header["typ"], "JOSE");
        assert_eq!(header["kid"], "k1");
        // Only pinned keys count: the jku is never fetched.
        assert!(CardVerifier::pinned().verify_card(&signed).await.is_err());
    }
}
