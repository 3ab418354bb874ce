-- Retention (see src/store/sql.rs): finished tasks purged by age and interrupted tasks found
-- untouched, each pass a bounded range scan per state instead of a scan of every task.
CREATE INDEX a2a_tasks_state_age ON a2a_tasks (state, updated_ms);
