-- Portable SQL for SQLite and PostgreSQL: times are epoch milliseconds (bigint), ids and JSON are
-- text, booleans are integers.

CREATE TABLE workspaces (
  id text PRIMARY KEY,
  name text NOT NULL,
  status text NOT NULL,
  balance bigint NOT NULL DEFAULT 0,
  message_cap bigint,
  messages_accepted bigint NOT NULL DEFAULT 0,
  is_demo integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CHECK (balance >= 0)
);

CREATE TABLE wallet_ledger (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  kind text NOT NULL,
  amount bigint NOT NULL,
  balance_after bigint NOT NULL,
  message_count bigint NOT NULL DEFAULT 0,
  reference text,
  note text,
  created_at bigint NOT NULL
);
CREATE INDEX wallet_ledger_by_workspace ON wallet_ledger (workspace_id, id);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  encrypted_key text NOT NULL,
  scopes text NOT NULL,
  webhook_url text,
  rate_limit_per_second integer,
  revoked_at bigint,
  created_at bigint NOT NULL
);
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, id);

CREATE TABLE sender_accounts (
  oa_id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  name text NOT NULL,
  default_mode text NOT NULL,
  daily_quota bigint NOT NULL,
  status text NOT NULL,
  app_id text NOT NULL,
  encrypted_app_secret text NOT NULL,
  encrypted_refresh_token text NOT NULL,
  encrypted_access_token text,
  access_token_expires_at bigint,
  rsa_public_key text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX sender_accounts_by_workspace ON sender_accounts (workspace_id, oa_id);

CREATE TABLE templates (
  template_id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  oa_id text NOT NULL REFERENCES sender_accounts(oa_id),
  name text NOT NULL,
  status text NOT NULL,
  template_type integer NOT NULL,
  preview_url text NOT NULL,
  params text NOT NULL,
  price bigint NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX templates_by_workspace ON templates (workspace_id, oa_id, status);

-- The messages table is the queue (README, Architecture): acceptance inserts rows 'queued' with due_at.
CREATE TABLE messages (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  api_key_id text NOT NULL,
  tracking_id text NOT NULL,
  status text NOT NULL,
  mode text NOT NULL,
  phone text,
  carrier text,
  rsa_phone text,
  source text NOT NULL,
  template_id text NOT NULL,
  oa_id text NOT NULL,
  template_data text NOT NULL,
  price bigint NOT NULL,
  quota_day text,
  provider_msg_id text,
  error_code integer,
  error_message text,
  error_reason text,
  due_at bigint NOT NULL,
  scheduled_at bigint,
  attempts integer NOT NULL DEFAULT 0,
  lease_expires_at bigint,
  sent_at bigint,
  delivered_at bigint,
  failed_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
-- Listing is always per workspace, newest first; each filter has an index that serves it.
CREATE INDEX messages_by_workspace_time ON messages (workspace_id, created_at, id);
CREATE INDEX messages_by_workspace_status ON messages (workspace_id, status, created_at);
CREATE INDEX messages_by_workspace_tracking ON messages (workspace_id, tracking_id);
CREATE INDEX messages_by_workspace_phone ON messages (workspace_id, phone);
CREATE INDEX messages_by_workspace_template ON messages (workspace_id, template_id, created_at);
CREATE INDEX messages_by_workspace_oa ON messages (workspace_id, oa_id, created_at);
-- The dispatcher's claim (due queued rows) and the reaper's scan (expired leases).
CREATE INDEX messages_due ON messages (due_at) WHERE status = 'queued';
CREATE INDEX messages_leased ON messages (lease_expires_at) WHERE status = 'sending';

-- Per sender account, per Vietnam calendar day: messages reserved at acceptance.
CREATE TABLE quota_reservations (
  oa_id text NOT NULL,
  day text NOT NULL,
  reserved bigint NOT NULL,
  PRIMARY KEY (oa_id, day)
);

CREATE TABLE idempotency_records (
  workspace_id text NOT NULL,
  idempotency_key text NOT NULL,
  request_hash text NOT NULL,
  status_code integer NOT NULL,
  response_body text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (workspace_id, idempotency_key)
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);
