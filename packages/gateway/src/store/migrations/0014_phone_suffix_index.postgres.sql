-- Messages were found by recipient through an index keyed by the whole number. Numbers arrive in
-- no order, so each new message wrote its entry to a random page of that index, and each commit
-- wrote about one index page per message it held. The index now leads with the number's last two
-- digits, then the creation time and the id, and holds the number: a workspace's new messages go
-- to the ends of at most 100 runs, and a lookup reads one run, newest first, from the index alone.
DROP INDEX messages_by_workspace_phone;
CREATE INDEX messages_by_workspace_phone_suffix ON messages (workspace_id, right(phone, 2), created_at, id) INCLUDE (phone);
