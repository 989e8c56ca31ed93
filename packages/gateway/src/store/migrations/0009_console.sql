-- The customers' console: its users (one workspace each, by role), their sign-in sessions, and an
-- audit log of every change made in the console or by the operator. API keys learn when they were
-- last used, for the console's key list.
CREATE TABLE console_users (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  -- Lower-cased; one workspace per person, so sign-in needs only the e-mail address.
  email text NOT NULL UNIQUE,
  role text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  -- scrypt, null until the invitation is accepted.
  password_hash text,
  -- SHA-256 of the one-time invitation token; null once used.
  invitation_hash text UNIQUE,
  invitation_expires_at bigint,
  last_sign_in_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX console_users_by_workspace ON console_users (workspace_id, created_at);

CREATE TABLE console_sessions (
  -- SHA-256 of the cookie's value: a copy of this table signs nobody in.
  id_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
  workspace_id text NOT NULL,
  csrf_token text NOT NULL,
  created_at bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  -- The absolute expiry; the idle one is last_seen_at plus the configured idle time.
  expires_at bigint NOT NULL
);
CREATE INDEX console_sessions_by_user ON console_sessions (user_id);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

CREATE TABLE audit_log (
  id text PRIMARY KEY,
  workspace_id text,
  -- console_user or operator
  actor_kind text NOT NULL,
  actor_id text,
  actor_label text,
  action text NOT NULL,
  target text,
  -- JSON of the values before and after the change, never secrets.
  before_state text,
  after_state text,
  created_at bigint NOT NULL
);
CREATE INDEX audit_log_by_workspace ON audit_log (workspace_id, id);

ALTER TABLE api_keys ADD COLUMN last_used_at bigint;
