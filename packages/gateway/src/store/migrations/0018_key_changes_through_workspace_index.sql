-- A key's pending delivery reports (cancelled when the key is revoked or loses its webhook URL,
-- readdressed when the URL changes) are found through webhook_deliveries_by_workspace, whose
-- (workspace_id, status) prefix holds the pending reports of the key's workspace. Their own index
-- cost an entry for every report written, and one more for every row version PostgreSQL writes
-- while a report is pending (its claim), for a change an operator makes a few times a year.
DROP INDEX webhook_deliveries_pending_by_key;
