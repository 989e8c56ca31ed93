-- A claim whose worker died leaves the send's outcome unknown: the platform may have taken it.
-- The reconciler first marks such a message unconfirmed and waits for a trace of it (a delivery
-- event); only when none comes within the grace period is it sent again (issue 3, README).
ALTER TABLE messages ADD COLUMN unconfirmed_since bigint;
