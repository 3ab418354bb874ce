-- Tasks, their event logs, and push notification configs (see src/store/sql.rs).
CREATE TABLE a2a_tasks (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_ms BIGINT NOT NULL,
    version BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, owner, id)
);

-- ListTasks: newest status timestamp first, keyset-paged.
CREATE INDEX a2a_tasks_listing ON a2a_tasks (tenant, owner, status_ms DESC, id DESC);
CREATE INDEX a2a_tasks_context ON a2a_tasks (tenant, owner, context_id, status_ms DESC, id DESC);
-- Retention: finished tasks by age, untouched live tasks by age.
CREATE INDEX a2a_tasks_updated ON a2a_tasks (updated_ms);

CREATE TABLE a2a_events (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, owner, task_id, seq)
);

CREATE TABLE a2a_push_configs (
    ord BIGSERIAL,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, owner, task_id, id)
);
