//! Files and secrets at rest: a SQLite store's files are its owner's alone, and push
//! credentials are sealed with the operator's key on SQLite (end to end, over real HTTP) and on
//! PostgreSQL: not in the stored bytes, whole when read back, a clear error with another key.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use a2a_runtime::protocol::Principal;
use a2a_runtime::server::A2aServer;
use a2a_runtime::store::{
    PostgresStore, PushConfigStore, Scope, SecretKey, SqliteStore, StoreError, TaskStore,
    connect_with_secret_key,
};
use a2a_runtime::test::{Binding, TestServer, agent_card};
use a2a_runtime::types::{AuthenticationInfo, TaskPushNotificationConfig};
use a2a_tests::agent::script_agent;
use a2a_tests::params::{id, msg};
use a2a_tests::pg::PgDatabase;
use serde_json::json;

use super::*;

const TOKEN: &str = "tok-9f8e7d6c-plaintext";
const CREDENTIALS: &str = "cred-5a4b3c2d-plaintext";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The database file and the WAL and shared-memory files beside it.
fn files(db: &Path) -> [PathBuf; 3] {
    let with = |suffix: &str| {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p)
    };
    [db.to_owned(), with("-wal"), with("-shm")]
}

/// Every byte the store holds on disk (the database and its WAL).
fn bytes_at_rest(db: &Path) -> Vec<u8> {
    let [db, wal, _] = files(db);
    let mut all = std::fs::read(db).unwrap();
    all.extend(std::fs::read(wal).unwrap_or_default());
    all
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn sqlite_files_and_the_directories_made_for_them_are_owner_only() {
    let f = SqliteFile::new();
    let store = SqliteStore::open(&f.url()).await.unwrap();
    let t = task("t-modes", "c", TaskState::Working, 1);
    store
        .create(
            &Scope::new("", "alice"),
            &t,
            Some(&status_event(&t, TaskState::Working)),
        )
        .await
        .unwrap();
    let db = store.path();
    for file in files(&db) {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    // Both directories of `…/nested/tasks.db` were made by the store.
    assert_eq!(mode(db.parent().unwrap()), 0o700);
    assert_eq!(mode(&f.dir), 0o700);
    store.pool().close().await;

    // A file the operator made keeps its mode (the store warns about it).
    let g = SqliteFile::new();
    std::fs::create_dir_all(&g.dir).unwrap();
    std::fs::set_permissions(&g.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let own = g.dir.join("own.db");
    std::fs::write(&own, b"").unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o640)).unwrap();
    let store = SqliteStore::open(&format!("sqlite://{}", own.display()))
        .await
        .unwrap();
    assert_eq!(mode(&own), 0o640);
    assert_eq!(mode(&g.dir), 0o755);
    store.pool().close().await;
}

/// Over real HTTP on a SQLite store opened with a key: the webhook credentials are in no byte
/// of the database or its WAL, GetTaskPushNotificationConfig returns them whole, and the same
/// file read with another key, or with none, is a clear error.
#[tokio::test]
async fn push_credentials_are_sealed_in_the_sqlite_file_and_read_back_whole() {
    let f = SqliteFile::new();
    let key = SecretKey::from_bytes(&[42; 32]);
    let stores = connect_with_secret_key(&f.url(), key.clone())
        .await
        .unwrap();
    let db = PathBuf::from(&stores.location);
    let (agent, _control) = script_agent();
    let mut card = agent_card("sealed");
    card.capabilities.push_notifications = Some(true);
    let server = TestServer::start(
        A2aServer::builder()
            .card(card)
            .executor(agent)
            .stores(stores)
            .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true)),
    )
    .await;
    let binding = Binding::Rest;
    let task_id = id(&server.send_task(binding, msg("ask")).await);
    let created = server
        .ok(
            binding,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "url": "http://127.0.0.1:9/hook", "token": TOKEN,
                   "authentication": {"scheme": "Bearer", "credentials": CREDENTIALS}}),
        )
        .await;
    let config_id = created["id"].as_str().unwrap().to_owned();
    let got = server
        .ok(
            binding,
            "GetTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": config_id}),
        )
        .await;
    assert_eq!(got["token"], TOKEN, "{got}");
    assert_eq!(got["authentication"]["credentials"], CREDENTIALS, "{got}");
    server.stop().await;

    let at_rest = bytes_at_rest(&db);
    assert!(
        contains(&at_rest, "sealed:v1:"),
        "the sealed values are stored"
    );
    assert!(
        !contains(&at_rest, TOKEN),
        "the token is stored in plain text"
    );
    assert!(
        !contains(&at_rest, CREDENTIALS),
        "the credentials are stored in plain text"
    );

    let scope = Scope::new("", Principal::ANONYMOUS_ID);
    let (task_id, config_id) = (task_id.as_str().into(), config_id.as_str().into());
    let url = f.url();
    let wrong = SqliteStore::open(&url)
        .await
        .unwrap()
        .with_secret_key(SecretKey::from_bytes(&[7; 32]));
    let e = PushConfigStore::get(&wrong, &scope, &task_id, &config_id)
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Secrets(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("does not open with this store's secret key"),
        "{e}"
    );
    assert!(!e.to_string().contains("plaintext"), "{e}");
    let keyless = SqliteStore::open(&url).await.unwrap();
    let e = PushConfigStore::list(&keyless, &scope, &task_id)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("encrypted at rest"), "{e}");
    let right = SqliteStore::open(&url).await.unwrap().with_secret_key(key);
    let back = PushConfigStore::get(&right, &scope, &task_id, &config_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(back.token, TOKEN);
    for s in [wrong, keyless, right] {
        s.pool().close().await;
    }
}

#[tokio::test]
async fn push_credentials_are_sealed_in_postgres() {
    let pg = PgDatabase::create().await;
    let key = SecretKey::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").unwrap();
    let store = PostgresStore::connect(&pg.url)
        .await
        .unwrap()
        .with_secret_key(key.clone());
    let scope = Scope::new("tenant-a", "alice");
    let config = TaskPushNotificationConfig {
        id: "cfg-1".into(),
        task_id: "task-1".into(),
        url: "https://hooks.example/a2a".into(),
        token: TOKEN.into(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: CREDENTIALS.into(),
        }),
        ..Default::default()
    };
    PushConfigStore::put(&store, &scope, &config).await.unwrap();
    let body: String = sqlx::query_scalar("SELECT body FROM a2a_push_configs")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert!(
        !body.contains(TOKEN) && !body.contains(CREDENTIALS),
        "{body}"
    );
    assert!(body.contains("https://hooks.example/a2a"), "{body}");
    let back = PushConfigStore::get(&store, &scope, &config.task_id, &config.id)
        .await
        .unwrap();
    assert_eq!(back, Some(config.clone()));
    // A sealed value moved to another row does not open there.
    sqlx::query("UPDATE a2a_push_configs SET owner = 'mallory'")
        .execute(store.pool())
        .await
        .unwrap();
    let e = PushConfigStore::list(&store, &Scope::new("tenant-a", "mallory"), &config.task_id)
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Secrets(_)), "{e:?}");
    let other = PostgresStore::connect(&pg.url)
        .await
        .unwrap()
        .with_secret_key(SecretKey::from_bytes(&[9; 32]));
    let e = PushConfigStore::list(&other, &Scope::new("tenant-a", "mallory"), &config.task_id)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("secret key"), "{e}");
    store.pool().close().await;
    other.pool().close().await;
}
