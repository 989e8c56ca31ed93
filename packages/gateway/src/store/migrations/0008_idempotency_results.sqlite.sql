-- An idempotency record keeps what its request did (an acceptance's result, a cancelled message's
-- id) as data, and the response is built from it on every answer. Records written before keep the
-- response they answered with, so their columns become optional; they expire within 24 hours.
-- SQLite cannot drop NOT NULL in place: the table is rebuilt, keeping every row.
CREATE TABLE idempotency_records_rebuilt (
  workspace_id text NOT NULL,
  idempotency_key text NOT NULL,
  request_hash text NOT NULL,
  status_code integer,
  response_body text,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  result text,
  PRIMARY KEY (workspace_id, idempotency_key)
);
INSERT INTO idempotency_records_rebuilt (workspace_id, idempotency_key, request_hash, status_code, response_body, created_at, expires_at)
  SELECT workspace_id, idempotency_key, request_hash, status_code, response_body, created_at, expires_at FROM idempotency_records;
DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_rebuilt RENAME TO idempotency_records;
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);
