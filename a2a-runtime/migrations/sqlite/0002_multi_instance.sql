-- Leases of running executions (see src/store/cluster.rs), as in the PostgreSQL schema. A
-- SQLite file serves one instance, whose in-process fan-out needs no notifications.
CREATE TABLE a2a_leases (
    instance TEXT NOT NULL,
    execution BIGINT NOT NULL,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    expires_ms BIGINT NOT NULL,
    PRIMARY KEY (instance, execution)
);
CREATE INDEX a2a_leases_expiry ON a2a_leases (expires_ms);
