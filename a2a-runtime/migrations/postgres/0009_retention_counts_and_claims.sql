-- Retention by count and idempotent sends (see src/store/sql/retention.rs).

-- Dead push deliveries are removed with their task: found by task.
CREATE INDEX a2a_push_dead_task ON a2a_push_dead (tenant, owner, task_id);

-- The message ids that started tasks, per principal: a SendMessage repeated with the same
-- `messageId` answers with the task the first one started (the key decides between racing
-- claims). Bounded by age (the idempotency window) and by count, oldest first.
CREATE TABLE a2a_message_claims (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    message_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner, message_id)
);
CREATE INDEX a2a_message_claims_age ON a2a_message_claims (created_ms);
