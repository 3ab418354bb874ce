-- The push delivery outbox (see src/store/outbox.rs and src/store/sql.rs): one row per
-- notification waiting to be sent, keyed by an increasing id. Each (tenant, owner, task,
-- config) goes out in id order: only its oldest row is ever claimed, under a lease
-- (`lease_owner`, `lease_until_ms`) that another instance may take once it expired.
CREATE TABLE a2a_push_outbox (
    id BIGSERIAL PRIMARY KEY,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    payload BYTEA NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    enqueued_ms BIGINT NOT NULL,
    next_ms BIGINT NOT NULL,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_until_ms BIGINT NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT ''
);
-- A pair's oldest row (is there an older one of the same pair?).
CREATE INDEX a2a_push_outbox_pair ON a2a_push_outbox (tenant, owner, task_id, config_id, id);

-- Deliveries given up on, newest `ord` first; bounded by the store (oldest removed).
CREATE TABLE a2a_push_dead (
    ord BIGSERIAL PRIMARY KEY,
    id BIGINT NOT NULL,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    payload BYTEA NOT NULL,
    attempts BIGINT NOT NULL,
    enqueued_ms BIGINT NOT NULL,
    next_ms BIGINT NOT NULL,
    last_error TEXT NOT NULL,
    dead_ms BIGINT NOT NULL
);
