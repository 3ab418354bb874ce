-- Many instances on one database (see src/store/postgres.rs and src/store/cluster.rs).

-- Every committed task write wakes the other instances: the payload names the task and its
-- new version. NOTIFY is only a wake-up (the event log is the truth); a payload too long for
-- NOTIFY is sent empty, and listeners then re-read every task they follow.
CREATE FUNCTION a2a_notify_task() RETURNS trigger AS $$
DECLARE
    payload TEXT := json_build_array(NEW.tenant, NEW.owner, NEW.id, NEW.version)::text;
BEGIN
    IF octet_length(payload) > 7900 THEN
        payload := '';
    END IF;
    PERFORM pg_notify('a2a_tasks', payload);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER a2a_tasks_notify AFTER INSERT OR UPDATE ON a2a_tasks
    FOR EACH ROW EXECUTE FUNCTION a2a_notify_task();

-- One row per running execution of an agent: the instance running it renews `expires_ms`
-- by heartbeats; a lease past its expiry belongs to an instance that died, and another
-- instance ends its task.
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
