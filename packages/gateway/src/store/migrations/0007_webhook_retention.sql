-- Finished delivery reports (delivered, failed, cancelled) and their attempt logs are purged after
-- TMS_WEBHOOK_RETENTION_DAYS; this index finds them by age without reading the pending ones.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status IN ('delivered', 'failed', 'cancelled');
