-- Named operator tokens: each operator (or automation) has its own, so the audit log says who did
-- what. TMS_ADMIN_TOKEN stays as the bootstrap token. Stored as a SHA-256 hash (the token is 32
-- random bytes: a slow hash adds nothing), shown once at creation.
CREATE TABLE operator_tokens (
  id text PRIMARY KEY,
  name text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  -- The first characters of the token, to tell tokens apart in lists.
  token_prefix text NOT NULL,
  -- Who created it (an operator's name, the bootstrap token or `tms admin` on a host).
  created_by text NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
-- Two operators with the same name would make the audit log ambiguous.
CREATE UNIQUE INDEX operator_tokens_active_name ON operator_tokens (name) WHERE revoked_at IS NULL;
