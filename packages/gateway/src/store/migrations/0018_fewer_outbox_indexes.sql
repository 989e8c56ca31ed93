-- Two indexes of the delivery-report outbox that served rare work and cost an entry for every
-- report written (on PostgreSQL, for every row version a report takes while it is indexed):
-- - the pending reports by API key: a key change (revoked, webhook URL removed or changed) now finds
--   the key's pending reports through webhook_deliveries_by_workspace, whose (workspace_id, status)
--   prefix holds its workspace's pending reports;
-- - the finished reports by their last change: the hourly retention purge now walks the primary
--   key, oldest first (a delivery id begins with its creation time).
DROP INDEX webhook_deliveries_pending_by_key;
DROP INDEX webhook_deliveries_finished;
