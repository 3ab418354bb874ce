//! Choosing a store by URL.

use std::sync::Arc;

use super::{
    InMemoryPushConfigStore, InMemoryPushOutbox, InMemoryTaskStore, PushConfigStore, PushOutbox,
    StoreError, TaskStore,
};

/// A task store, a push config store and a push outbox on one backend, as [`connect`] opens
/// them.
#[derive(Clone, Debug)]
pub struct Stores {
    /// Tasks and their event logs.
    pub tasks: Arc<dyn TaskStore>,
    /// Push notification configs.
    pub push_configs: Arc<dyn PushConfigStore>,
    /// Where push deliveries wait to be sent: in the database for SQLite and PostgreSQL (they
    /// survive a restart, and instances sharing the database each send a delivery once), in
    /// memory for `memory:`. It is the task store's [`push_outbox`](TaskStore::push_outbox):
    /// each delivery is written there with its event, in the same write.
    pub outbox: Arc<dyn PushOutbox>,
    /// Where the data lives, for startup logs (the URL, or the file of a SQLite store).
    pub location: String,
    /// How instances sharing the store coordinate: set for PostgreSQL (many instances);
    /// `None` for memory and SQLite (one instance).
    pub cluster: Option<Arc<dyn super::Cluster>>,
}

/// Opens the stores named by `url`:
/// - `memory:` — in process memory (nothing survives a restart);
/// - `sqlite://path` or `sqlite:path` — a SQLite file, created when missing (feature `sqlite`);
/// - `postgres://…` or `postgresql://…` — a PostgreSQL database (feature `postgres`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let stores = a2a_runtime::store::connect("memory:").await.unwrap();
/// assert_eq!(stores.location, "memory:");
/// # }
/// ```
pub async fn connect(url: &str) -> Result<Stores, StoreError> {
    open(url, None).await
}

/// [`connect`], with the webhook credentials of push configs sealed at rest with `key` in a
/// SQLite or PostgreSQL store (see [`SqliteStore::with_secret_key`](super::SqliteStore)); the
/// `memory:` store keeps nothing at rest.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use a2a_runtime::store::{SecretKey, connect_with_secret_key};
/// let key = SecretKey::from_bytes(&[7; 32]);
/// let stores = connect_with_secret_key("memory:", key).await.unwrap();
/// # }
/// ```
#[cfg(feature = "encryption")]
pub async fn connect_with_secret_key(
    url: &str,
    key: super::SecretKey,
) -> Result<Stores, StoreError> {
    open(url, Some(key)).await
}

/// The key a store seals push credentials with (none without the feature `encryption`).
#[cfg(feature = "encryption")]
type Key = super::SecretKey;
#[cfg(not(feature = "encryption"))]
type Key = std::convert::Infallible;

/// Opens the stores of `url`, the SQL stores' push credentials sealed with `key`.
async fn open(url: &str, key: Option<Key>) -> Result<Stores, StoreError> {
    #[cfg(not(feature = "encryption"))]
    let _: Option<Key> = key;
    let scheme = url.split_once(':').map_or("", |(s, _)| s);
    match scheme {
        "memory" => {
            let push_configs = Arc::new(InMemoryPushConfigStore::new());
            let outbox = Arc::new(InMemoryPushOutbox::new());
            let tasks = InMemoryTaskStore::new()
                .with_push_configs(push_configs.clone())
                .with_push_outbox(outbox.clone());
            Ok(Stores {
                tasks: Arc::new(tasks),
                push_configs,
                outbox,
                location: "memory:".into(),
                cluster: None,
            })
        }
        #[cfg(feature = "sqlite")]
        "sqlite" => {
            let store = super::SqliteStore::open(url).await?;
            #[cfg(feature = "encryption")]
            let store = match key {
                Some(key) => store.with_secret_key(key),
                None => store,
            };
            let store = Arc::new(store);
            Ok(Stores {
                location: store.path().display().to_string(),
                tasks: store.clone(),
                push_configs: store.clone(),
                outbox: store,
                cluster: None,
            })
        }
        #[cfg(feature = "postgres")]
        "postgres" | "postgresql" => {
            let store = super::PostgresStore::connect(url).await?;
            #[cfg(feature = "encryption")]
            let store = match key {
                Some(key) => store.with_secret_key(key),
                None => store,
            };
            let store = Arc::new(store);
            Ok(Stores {
                location: redact(url),
                tasks: store.clone(),
                push_configs: store.clone(),
                outbox: store.clone(),
                cluster: Some(store),
            })
        }
        #[cfg(not(feature = "sqlite"))]
        "sqlite" => Err(missing_feature(scheme)),
        #[cfg(not(feature = "postgres"))]
        "postgres" | "postgresql" => Err(missing_feature(scheme)),
        _ => Err(StoreError::Backend(format!(
            "unknown store URL {:?}: expected memory:, sqlite://path or postgres://…",
            redact(url)
        ))),
    }
}

/// The error for a store whose cargo feature is off.
#[allow(dead_code)]
fn missing_feature(scheme: &str) -> StoreError {
    let feature = if scheme == "sqlite" {
        "sqlite"
    } else {
        "postgres"
    };
    StoreError::Backend(format!(
        "store {scheme:?} needs the cargo feature `{feature}` of a2a-runtime"
    ))
}

/// `url` without a password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(start), Some(at)) if at > start => {
            let userinfo = &url[start + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..start + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}
