-- The push outbox's due rows (see src/store/sql_outbox.rs): a claim takes the rows whose
-- time has come (`next_ms <= now`, lease free), earliest due first (then oldest); this index
-- serves that range in that order, instead of walking every waiting row by id (deliveries
-- waiting for a retry far ahead are never read by a claim).
CREATE INDEX a2a_push_outbox_due ON a2a_push_outbox (next_ms, id);
