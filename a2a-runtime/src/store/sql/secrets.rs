//! The push configs' credentials as the SQL stores keep them: sealed with the store's
//! [`SecretKey`](crate::store::SecretKey) (feature `encryption`), or as they are.

use crate::store::{Scope, StoreError};
use crate::types::TaskPushNotificationConfig;

/// The key a store seals credentials with.
#[cfg(feature = "encryption")]
pub(in crate::store) type Key = crate::store::SecretKey;
/// Without the feature `encryption`, a store has none.
#[cfg(not(feature = "encryption"))]
pub(in crate::store) type Key = std::convert::Infallible;

/// `config` as it is to be stored, when it differs (its credentials sealed with `key`).
pub(in crate::store) fn seal(
    key: Option<&Key>,
    scope: &Scope,
    config: &TaskPushNotificationConfig,
) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
    #[cfg(feature = "encryption")]
    return crate::store::secrets::seal(key, scope, config);
    #[cfg(not(feature = "encryption"))]
    {
        let _ = (scope, config);
        match key {
            None => Ok(None),
            Some(never) => match *never {},
        }
    }
}

/// `config` as read back: its sealed credentials opened with `key`. Without the feature, a
/// sealed credential is an error that says so.
pub(in crate::store) fn open(
    key: Option<&Key>,
    scope: &Scope,
    config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, StoreError> {
    #[cfg(feature = "encryption")]
    return crate::store::secrets::open(key, scope, config);
    #[cfg(not(feature = "encryption"))]
    {
        let _ = (key, scope);
        let sealed = |v: &str| v.starts_with("sealed:v1:");
        if sealed(&config.token)
            || config
                .authentication
                .as_ref()
                .is_some_and(|a| sealed(&a.credentials))
        {
            return Err(StoreError::Secrets(
                "a push config is encrypted at rest: build a2a-runtime with the feature \
                 `encryption` and open the store with its secret key"
                    .into(),
            ));
        }
        Ok(config)
    }
}
