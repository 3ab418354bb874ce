-- Large tasks kept in items (see src/store/layout.rs): the row's body is then the task
-- without history and artifacts, and each message, artifact and part is a row of its own.
ALTER TABLE a2a_tasks ADD COLUMN split BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE a2a_task_items (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    a INTEGER NOT NULL,
    p INTEGER NOT NULL,
    digest BLOB NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, owner, task_id, kind, a, p)
) WITHOUT ROWID;
