-- Batched writes (see src/store/sql_writer.rs) and cheaper listings.

-- The number of tasks of each owner, kept by the writes that create and delete tasks: an
-- unfiltered listing's first page reads its total here instead of counting every task.
CREATE TABLE a2a_task_counts (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner)
);
INSERT INTO a2a_task_counts (tenant, owner, n)
    SELECT tenant, owner, COUNT(*) FROM a2a_tasks GROUP BY tenant, owner;

-- Retention reads `a2a_tasks_state_age`; this index served no statement and moved at every
-- write.
DROP INDEX a2a_tasks_updated;

-- ListTasks filtered by state: its pages (and its total) from the index, instead of walking
-- every task of the owner for the few in that state.
CREATE INDEX a2a_tasks_state ON a2a_tasks (tenant, owner, state, status_ms DESC, id DESC);

-- Each batch of writes now notifies once, listing the tasks it wrote (one notifying commit
-- per batch instead of one per task write: PostgreSQL serializes notifying commits).
DROP TRIGGER a2a_tasks_notify ON a2a_tasks;
DROP FUNCTION a2a_notify_task();
