-- Recovery (see src/core/recovery.rs): a SUBMITTED or WORKING task that no lease names has no
-- executor on any instance; the pass finds such tasks by state and age (`a2a_tasks_state_age`)
-- and looks each one's leases up here.
CREATE INDEX a2a_leases_task ON a2a_leases (tenant, owner, task_id);
