-- The webhook sender drains webhook_deliveries (created by 0002).
--
-- Statuses: pending (due at next_attempt_at; while a worker holds it, next_attempt_at equals
-- lease_expires_at, so a dead worker's claim simply falls due again), delivered (a 2xx answer),
-- failed (no 2xx after the last retry; the operator may redeliver) and cancelled (its key was
-- revoked or lost its webhook URL).

-- The retry ladder restarts at a redelivery: the attempt number counts on, so the ladder position
-- is attempts - attempts_at_redelivery.
ALTER TABLE webhook_deliveries ADD COLUMN attempts_at_redelivery integer NOT NULL DEFAULT 0;
-- The last answer's HTTP status (null: no answer, see last_error).
ALTER TABLE webhook_deliveries ADD COLUMN last_status_code integer;
ALTER TABLE webhook_deliveries ADD COLUMN delivered_at bigint;
ALTER TABLE webhook_deliveries ADD COLUMN failed_at bigint;

-- "Redeliver every failed delivery since T" and the operator's list of failures.
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (failed_at) WHERE status = 'failed';
-- Readdressing or cancelling a key's pending deliveries when its webhook URL changes or it is revoked.
CREATE INDEX webhook_deliveries_pending_by_key ON webhook_deliveries (api_key_id) WHERE status = 'pending';

-- One row per attempt, for the operator: when, where, how long, what came back.
CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL,
  id text NOT NULL,
  attempt integer NOT NULL,
  url text NOT NULL,
  started_at bigint NOT NULL,
  latency_ms integer NOT NULL,
  status_code integer,
  error text,
  -- delivered, retry, failed or released (not counted: the worker stopped before it could finish)
  outcome text NOT NULL,
  PRIMARY KEY (delivery_id, id)
);
