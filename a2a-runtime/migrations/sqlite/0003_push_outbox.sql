-- The push delivery outbox (see src/store/outbox.rs and src/store/sql.rs): one row per
-- notification waiting to be sent, keyed by an increasing id. Each (tenant, owner, task,
-- config) goes out in id order: only its oldest row is ever claimed, under a lease
-- (`lease_owner`, `lease_until_ms`) that another instance may take once it expired.
CREATE TABLE a2a_push_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload BLOB NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    enqueued_ms INTEGER NOT NULL,
    next_ms INTEGER NOT NULL,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_until_ms INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT ''
);
-- A pair's oldest row (is there an older one of the same pair?).
CREATE INDEX a2a_push_outbox_pair ON a2a_push_outbox (tenant, owner, task_id, config_id, id);

-- Deliveries given up on, newest `ord` first; bounded by the store (oldest removed).
CREATE TABLE a2a_push_dead (
    ord INTEGER PRIMARY KEY AUTOINCREMENT,
    id INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload BLOB NOT NULL,
    attempts INTEGER NOT NULL,
    enqueued_ms INTEGER NOT NULL,
    next_ms INTEGER NOT NULL,
    last_error TEXT NOT NULL,
    dead_ms INTEGER NOT NULL
);
