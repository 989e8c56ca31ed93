-- A claim whose worker died leaves the send's outcome unknown: the platform may have taken it.
-- The reconciler first marks such a message unconfirmed and waits for a trace of it (a delivery
-- event); only when none comes within the grace period is it sent again (README).
ALTER TABLE messages ADD COLUMN unconfirmed_since bigint;

-- Sent messages whose delivery event is overdue are checked with the platform's status endpoint
-- (by the provider msg_id, which a sent message has): when the last check was made.
ALTER TABLE messages ADD COLUMN status_checked_at bigint;
CREATE INDEX messages_awaiting_delivery ON messages (sent_at) WHERE status = 'sent';
