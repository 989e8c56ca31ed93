-- The platform side and the customer-webhook outbox.

-- The OA Secret Key that signs the platform's webhook events (X-ZEvent-Signature), encrypted.
ALTER TABLE sender_accounts ADD COLUMN encrypted_oa_secret_key text;
-- One token refresh at a time per OA across processes: a lease claimed with a conditional UPDATE.
ALTER TABLE sender_accounts ADD COLUMN token_refresh_lease_until bigint;
-- Why the OA needs the operator (status relogin_required), for the operator to read.
ALTER TABLE sender_accounts ADD COLUMN token_problem text;

-- Delivery events arrive at least once; each is applied once (key: event name and platform msg_id).
CREATE TABLE platform_events (
  event_key text PRIMARY KEY,
  event_name text NOT NULL,
  oa_id text,
  message_id text,
  received_at bigint NOT NULL
);

-- Finding a message from the platform's id (status reconciliation, events without tracking_id).
CREATE INDEX messages_by_provider_id ON messages (provider_msg_id) WHERE provider_msg_id IS NOT NULL;

-- The outbox of delivery reports: written in the transaction that marks a message delivered,
-- drained by the webhook sender. The body is serialised once and resent byte for byte.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  message_id text NOT NULL UNIQUE,
  workspace_id text NOT NULL,
  api_key_id text NOT NULL,
  url text NOT NULL,
  body text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  lease_expires_at bigint,
  last_error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_workspace ON webhook_deliveries (workspace_id, status, created_at);
