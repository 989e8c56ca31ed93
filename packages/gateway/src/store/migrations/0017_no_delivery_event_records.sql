-- Delivery events (user_received_message) are no longer recorded: a message's own state makes them
-- idempotent (only a queued, sending or sent message can become delivered), and their rows, one per
-- delivered message and never read again, were 1.1 GB (SQLite) to 1.3 GB (PostgreSQL) per 4,200,000
-- messages with nothing ever removing them. Template status events keep theirs: an old retried event
-- must not undo a newer status. Measured: 8 s (SQLite) and 4 s (PostgreSQL) for 4,200,000 rows; the
-- space is reused by the store (PostgreSQL once autovacuum has passed), the files do not shrink.
DELETE FROM platform_events WHERE event_name = 'user_received_message';
