-- Messages were found by recipient through an index keyed by the whole number. Numbers arrive in
-- no order, so each new message wrote its entry to a random page of that index, and each commit
-- wrote about one whole index page to the log per message it held. The index now leads with the
-- number's last two digits, then the creation time and the id, and holds the number: a workspace's
-- new messages go to the ends of at most 100 runs, and a lookup reads one run, newest first,
-- without the table. `phone % 100` rather than substr(): an index on a function's result gives
-- every multi-row insert a statement journal (a copy of each page it touches).
DROP INDEX messages_by_workspace_phone;
CREATE INDEX messages_by_workspace_phone_suffix ON messages (workspace_id, phone % 100, created_at, id, phone);
