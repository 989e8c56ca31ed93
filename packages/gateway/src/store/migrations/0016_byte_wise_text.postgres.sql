-- Every text column of our tables compares byte by byte (COLLATE "C"), whatever collation the
-- database was created with. TMS compares text only as identifiers and codes (ids, phone numbers,
-- statuses, keys): it never sorts human text nor changes its case in SQL. Under a linguistic
-- collation (a database created with en_US.UTF-8, or ICU's vi-VN), each comparison in a B-tree
-- goes through the locale's rules: inserting 500 messages into a database created with ICU vi-VN
-- took 10-17% longer than into the same tables with byte-wise columns (README, Architecture).
-- Only the collation changes: PostgreSQL rewrites no table, but rebuilds every index that holds a
-- text column while the migration holds its tables (74 s for 5,000,000 messages: README, Upgrading).
ALTER TABLE api_keys
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN name TYPE text COLLATE "C",
  ALTER COLUMN key_hash TYPE text COLLATE "C",
  ALTER COLUMN key_prefix TYPE text COLLATE "C",
  ALTER COLUMN encrypted_key TYPE text COLLATE "C",
  ALTER COLUMN scopes TYPE text COLLATE "C",
  ALTER COLUMN webhook_url TYPE text COLLATE "C";
ALTER TABLE audit_log
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN actor_kind TYPE text COLLATE "C",
  ALTER COLUMN actor_id TYPE text COLLATE "C",
  ALTER COLUMN actor_label TYPE text COLLATE "C",
  ALTER COLUMN action TYPE text COLLATE "C",
  ALTER COLUMN target TYPE text COLLATE "C",
  ALTER COLUMN before_state TYPE text COLLATE "C",
  ALTER COLUMN after_state TYPE text COLLATE "C";
ALTER TABLE console_sessions
  ALTER COLUMN id_hash TYPE text COLLATE "C",
  ALTER COLUMN user_id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN csrf_token TYPE text COLLATE "C";
ALTER TABLE console_users
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN email TYPE text COLLATE "C",
  ALTER COLUMN role TYPE text COLLATE "C",
  ALTER COLUMN password_hash TYPE text COLLATE "C",
  ALTER COLUMN invitation_hash TYPE text COLLATE "C";
ALTER TABLE idempotency_records
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN idempotency_key TYPE text COLLATE "C",
  ALTER COLUMN request_hash TYPE text COLLATE "C",
  ALTER COLUMN response_body TYPE text COLLATE "C",
  ALTER COLUMN result TYPE text COLLATE "C";
ALTER TABLE message_states
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN oa_id TYPE text COLLATE "C",
  ALTER COLUMN quota_day TYPE text COLLATE "C",
  ALTER COLUMN status TYPE text COLLATE "C",
  ALTER COLUMN provider_msg_id TYPE text COLLATE "C",
  ALTER COLUMN error_message TYPE text COLLATE "C",
  ALTER COLUMN error_reason TYPE text COLLATE "C";
ALTER TABLE messages
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN api_key_id TYPE text COLLATE "C",
  ALTER COLUMN tracking_id TYPE text COLLATE "C",
  ALTER COLUMN mode TYPE text COLLATE "C",
  ALTER COLUMN phone TYPE text COLLATE "C",
  ALTER COLUMN carrier TYPE text COLLATE "C",
  ALTER COLUMN rsa_phone TYPE text COLLATE "C",
  ALTER COLUMN source TYPE text COLLATE "C",
  ALTER COLUMN template_id TYPE text COLLATE "C",
  ALTER COLUMN oa_id TYPE text COLLATE "C",
  ALTER COLUMN template_data TYPE text COLLATE "C",
  ALTER COLUMN quota_day TYPE text COLLATE "C";
ALTER TABLE operator_tokens
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN name TYPE text COLLATE "C",
  ALTER COLUMN token_hash TYPE text COLLATE "C",
  ALTER COLUMN token_prefix TYPE text COLLATE "C",
  ALTER COLUMN created_by TYPE text COLLATE "C";
ALTER TABLE platform_events
  ALTER COLUMN event_key TYPE text COLLATE "C",
  ALTER COLUMN event_name TYPE text COLLATE "C",
  ALTER COLUMN oa_id TYPE text COLLATE "C",
  ALTER COLUMN message_id TYPE text COLLATE "C";
ALTER TABLE quota_reservations
  ALTER COLUMN oa_id TYPE text COLLATE "C",
  ALTER COLUMN day TYPE text COLLATE "C";
ALTER TABLE sender_accounts
  ALTER COLUMN oa_id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN name TYPE text COLLATE "C",
  ALTER COLUMN default_mode TYPE text COLLATE "C",
  ALTER COLUMN status TYPE text COLLATE "C",
  ALTER COLUMN app_id TYPE text COLLATE "C",
  ALTER COLUMN encrypted_app_secret TYPE text COLLATE "C",
  ALTER COLUMN encrypted_refresh_token TYPE text COLLATE "C",
  ALTER COLUMN encrypted_access_token TYPE text COLLATE "C",
  ALTER COLUMN rsa_public_key TYPE text COLLATE "C",
  ALTER COLUMN encrypted_oa_secret_key TYPE text COLLATE "C",
  ALTER COLUMN token_problem TYPE text COLLATE "C";
ALTER TABLE templates
  ALTER COLUMN template_id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN oa_id TYPE text COLLATE "C",
  ALTER COLUMN name TYPE text COLLATE "C",
  ALTER COLUMN status TYPE text COLLATE "C",
  ALTER COLUMN preview_url TYPE text COLLATE "C",
  ALTER COLUMN params TYPE text COLLATE "C",
  ALTER COLUMN price_source TYPE text COLLATE "C";
ALTER TABLE wallet_ledger
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN kind TYPE text COLLATE "C",
  ALTER COLUMN reference TYPE text COLLATE "C",
  ALTER COLUMN note TYPE text COLLATE "C";
ALTER TABLE webhook_attempts
  ALTER COLUMN delivery_id TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN url TYPE text COLLATE "C",
  ALTER COLUMN error TYPE text COLLATE "C",
  ALTER COLUMN outcome TYPE text COLLATE "C";
ALTER TABLE webhook_deliveries
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN message_id TYPE text COLLATE "C",
  ALTER COLUMN workspace_id TYPE text COLLATE "C",
  ALTER COLUMN api_key_id TYPE text COLLATE "C",
  ALTER COLUMN url TYPE text COLLATE "C",
  ALTER COLUMN body TYPE text COLLATE "C",
  ALTER COLUMN status TYPE text COLLATE "C",
  ALTER COLUMN last_error TYPE text COLLATE "C";
ALTER TABLE workspaces
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN name TYPE text COLLATE "C",
  ALTER COLUMN status TYPE text COLLATE "C";
