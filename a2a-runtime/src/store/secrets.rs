//! [`SecretKey`]: the key the SQL stores encrypt webhook credentials with at rest (feature
//! `encryption`): a push config's `token` and `authentication.credentials` are stored sealed
//! with AES-256-GCM (aws-lc-rs, the provider already in the TLS tree), each under a random
//! nonce and bound to its row and field, so a value copied to another row or field does not
//! open.
//!
//! A sealed value is `sealed:v1:` and the base64 of nonce, ciphertext and tag. A value stored
//! before the key was set reads as it is, and is sealed when its config is written again.

use std::fmt;
use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Scope, StoreError};
use crate::types::TaskPushNotificationConfig;

/// What a sealed value begins with.
const PREFIX: &str = "sealed:v1:";

/// A 256-bit key, supplied by the operator, that seals webhook credentials at rest.
/// Its `Debug` shows no key material.
///
/// ```
/// use a2a_runtime::store::SecretKey;
/// let key = SecretKey::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").unwrap();
/// assert_eq!(format!("{key:?}"), "SecretKey(<redacted>)");
/// assert!(SecretKey::from_base64("c2hvcnQ=").is_err());
/// ```
#[derive(Clone)]
pub struct SecretKey(Arc<RandomizedNonceKey>);

impl SecretKey {
    /// The key of these 32 bytes.
    pub fn from_bytes(bytes: &[u8; 32]) -> Self {
        match RandomizedNonceKey::new(&AES_256_GCM, bytes) {
            Ok(key) => Self(Arc::new(key)),
            // AES-256-GCM takes any 32 bytes.
            Err(_) => unreachable!("a 32-byte AES-256-GCM key is always valid"),
        }
    }

    /// The key whose 32 bytes `text` holds in base64 (standard alphabet, padded), as an
    /// operator keeps it in a secret file or variable (`openssl rand -base64 32`).
    pub fn from_base64(text: &str) -> Result<Self, StoreError> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| StoreError::Secrets("the secret key is not base64".into()))?;
        let bytes: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            StoreError::Secrets(format!(
                "the secret key holds {} bytes; AES-256-GCM needs 32",
                bytes.len()
            ))
        })?;
        Ok(Self::from_bytes(&bytes))
    }

    /// `plain` sealed for `field` of the config `at`.
    fn seal(&self, at: &Row<'_>, field: &str, plain: &str) -> Result<String, StoreError> {
        let mut data = plain.as_bytes().to_vec();
        let nonce = self
            .0
            .seal_in_place_append_tag(Aad::from(at.aad(field)), &mut data)
            .map_err(|_| StoreError::Secrets("sealing a push config secret failed".into()))?;
        let mut out = nonce.as_ref().to_vec();
        out.extend_from_slice(&data);
        Ok(format!("{PREFIX}{}", STANDARD.encode(out)))
    }

    /// The value `stored` of `field` of the config `at`, opened.
    fn open(&self, at: &Row<'_>, field: &str, stored: &str) -> Result<String, StoreError> {
        let Some(sealed) = stored.strip_prefix(PREFIX) else {
            return Ok(stored.to_owned());
        };
        let wrong = || {
            StoreError::Secrets(format!(
                "the {field} of push config {:?} of task {:?} does not open with this store's \
                 secret key (sealed with another key, or altered)",
                at.config.id.as_str(),
                at.config.task_id.as_str()
            ))
        };
        let mut data = STANDARD.decode(sealed).map_err(|_| wrong())?;
        if data.len() < NONCE_LEN {
            return Err(wrong());
        }
        let body = data.split_off(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = data.as_slice().try_into().map_err(|_| wrong())?;
        let mut body = body;
        let plain = self
            .0
            .open_in_place(Nonce::from(&nonce), Aad::from(at.aad(field)), &mut body)
            .map_err(|_| wrong())?;
        String::from_utf8(plain.to_vec()).map_err(|_| wrong())
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// The row a config is stored in: what its sealed values are bound to.
struct Row<'a> {
    scope: &'a Scope,
    config: &'a TaskPushNotificationConfig,
}

impl Row<'_> {
    fn aad(&self, field: &str) -> Vec<u8> {
        let parts = [
            self.scope.tenant(),
            self.scope.owner(),
            self.config.task_id.as_str(),
            self.config.id.as_str(),
            field,
        ];
        // Each part with its length: no two rows give the same bytes.
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
        for p in parts {
            out.extend_from_slice(&(p.len() as u64).to_be_bytes());
            out.extend_from_slice(p.as_bytes());
        }
        out
    }
}

/// `config` as stored: its secrets sealed with `key` (as it is without a key).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(in crate::store) fn seal(
    key: Option<&SecretKey>,
    scope: &Scope,
    config: &TaskPushNotificationConfig,
) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
    let Some(key) = key else { return Ok(None) };
    let at = Row { scope, config };
    let mut sealed = config.clone();
    if !config.token.is_empty() {
        sealed.token = key.seal(&at, "token", &config.token)?;
    }
    if let Some(auth) = sealed.authentication.as_mut()
        && !auth.credentials.is_empty()
    {
        auth.credentials = key.seal(&at, "credentials", &auth.credentials)?;
    }
    Ok(Some(sealed))
}

/// `config` as read from the store, its sealed secrets opened with `key`.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(in crate::store) fn open(
    key: Option<&SecretKey>,
    scope: &Scope,
    mut config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, StoreError> {
    let sealed = |v: &str| v.starts_with(PREFIX);
    let any_sealed = sealed(&config.token)
        || config
            .authentication
            .as_ref()
            .is_some_and(|a| sealed(&a.credentials));
    if !any_sealed {
        return Ok(config);
    }
    let Some(key) = key else {
        return Err(StoreError::Secrets(format!(
            "push config {:?} of task {:?} is encrypted at rest: open the store with its secret key",
            config.id.as_str(),
            config.task_id.as_str()
        )));
    };
    let plain = {
        let at = Row {
            scope,
            config: &config,
        };
        let token = key.open(&at, "token", &config.token)?;
        let credentials = match &config.authentication {
            Some(a) => Some(key.open(&at, "credentials", &a.credentials)?),
            None => None,
        };
        (token, credentials)
    };
    config.token = plain.0;
    if let (Some(auth), Some(credentials)) = (config.authentication.as_mut(), plain.1) {
        auth.credentials = credentials;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::AuthenticationInfo;

    fn config() -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            id: "c-1".into(),
            task_id: "t-1".into(),
            url: "https://hooks.example/a2a".into(),
            token: "tok-secret".into(),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: "cred-secret".into(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn secrets_round_trip_and_bind_to_their_row() {
        let key = SecretKey::from_bytes(&[7; 32]);
        let scope = Scope::new("tenant-a", "alice");
        let sealed = seal(Some(&key), &scope, &config()).unwrap().unwrap();
        let text = serde_json::to_string(&sealed).unwrap();
        assert!(
            !text.contains("tok-secret") && !text.contains("cred-secret"),
            "{text}"
        );
        assert!(sealed.token.starts_with(PREFIX));
        assert_eq!(open(Some(&key), &scope, sealed.clone()).unwrap(), config());
        // Another owner's row, another key, no key: clear errors.
        let other = Scope::new("tenant-a", "mallory");
        assert!(matches!(
            open(Some(&key), &other, sealed.clone()),
            Err(StoreError::Secrets(_))
        ));
        let wrong = SecretKey::from_bytes(&[8; 32]);
        let e = open(Some(&wrong), &scope, sealed.clone()).unwrap_err();
        assert!(
            e.to_string()
                .contains("does not open with this store's secret key"),
            "{e}"
        );
        assert!(!e.to_string().contains("secret\""), "{e}");
        let e = open(None, &scope, sealed).unwrap_err();
        assert!(e.to_string().contains("encrypted at rest"), "{e}");
        // A plain config (stored before the key was set) reads as it is.
        assert_eq!(open(Some(&key), &scope, config()).unwrap(), config());
        assert!(seal(None, &scope, &config()).unwrap().is_none());
    }

    #[test]
    fn a_key_is_32_bytes_of_base64() {
        assert!(SecretKey::from_base64(&STANDARD.encode([1u8; 32])).is_ok());
        let e = SecretKey::from_base64(&STANDARD.encode([1u8; 16])).unwrap_err();
        assert!(e.to_string().contains("16 bytes"), "{e}");
        assert!(SecretKey::from_base64("not base64!").is_err());
    }
}
