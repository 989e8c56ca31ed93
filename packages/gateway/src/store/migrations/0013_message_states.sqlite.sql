-- A message's state (status, due time, lease, attempts, the platform's id, times, errors) moves to
-- a narrow table of its own, keyed by the message id. Every send changes the state three times;
-- while it lived in messages, each change was a new version of the whole row with an entry in most
-- of its twelve indexes. message_states carries its own copy of the few fixed columns its indexes
-- and the queue's reads need (workspace, sender account, quota day, creation time), so a change
-- writes a narrow row and five indexes, and messages is written once, at acceptance.
-- SQLite drops a column by rewriting the table, once per column: messages is rebuilt once instead,
-- keeping its fixed columns (no foreign key points at it).
CREATE TABLE message_states (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  oa_id text NOT NULL,
  quota_day text,
  created_at bigint NOT NULL,
  status text NOT NULL,
  due_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  lease_expires_at bigint,
  unconfirmed_since bigint,
  provider_msg_id text,
  sent_at bigint,
  status_checked_at bigint,
  delivered_at bigint,
  failed_at bigint,
  error_code integer,
  error_message text,
  error_reason text,
  updated_at bigint NOT NULL
);
INSERT INTO message_states (id, workspace_id, oa_id, quota_day, created_at, status, due_at, attempts, lease_expires_at,
    unconfirmed_since, provider_msg_id, sent_at, status_checked_at, delivered_at, failed_at, error_code, error_message,
    error_reason, updated_at)
  SELECT id, workspace_id, oa_id, quota_day, created_at, status, due_at, attempts, lease_expires_at,
    unconfirmed_since, provider_msg_id, sent_at, status_checked_at, delivered_at, failed_at, error_code, error_message,
    error_reason, updated_at
  FROM messages;
-- The queue's and the lists' status indexes, now on the table whose rows change with the status.
CREATE INDEX message_states_by_workspace_status ON message_states (workspace_id, status, created_at);
CREATE INDEX message_states_due ON message_states (due_at) WHERE status = 'queued';
CREATE INDEX message_states_leased ON message_states (lease_expires_at) WHERE status = 'sending';
CREATE INDEX message_states_awaiting_delivery ON message_states (sent_at) WHERE status = 'sent';
CREATE INDEX message_states_sent_by_provider_id ON message_states (provider_msg_id) WHERE status = 'sent';
CREATE TABLE messages_rebuilt (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  api_key_id text NOT NULL,
  tracking_id text NOT NULL,
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
  scheduled_at bigint,
  created_at bigint NOT NULL
);
INSERT INTO messages_rebuilt (id, workspace_id, api_key_id, tracking_id, mode, phone, carrier, rsa_phone, source, template_id,
    oa_id, template_data, price, quota_day, scheduled_at, created_at)
  SELECT id, workspace_id, api_key_id, tracking_id, mode, phone, carrier, rsa_phone, source, template_id,
    oa_id, template_data, price, quota_day, scheduled_at, created_at
  FROM messages;
DROP TABLE messages;
ALTER TABLE messages_rebuilt RENAME TO messages;
CREATE INDEX messages_by_workspace_time ON messages (workspace_id, created_at, id);
CREATE INDEX messages_by_workspace_tracking ON messages (workspace_id, tracking_id);
CREATE INDEX messages_by_workspace_phone ON messages (workspace_id, phone);
CREATE INDEX messages_by_workspace_template ON messages (workspace_id, template_id, created_at);
CREATE INDEX messages_by_workspace_oa ON messages (workspace_id, oa_id, created_at);
CREATE INDEX messages_holding_personal_data ON messages (created_at) WHERE template_data <> 'null';
