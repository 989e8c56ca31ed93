/**
 * Every loop a worker reports to /readyz and tms_worker_loop_last_round_age_seconds when template
 * sync is off (TMS_TEMPLATE_SYNC_MS=0): dispatch, webhooks and the other periodic tasks, sorted.
 */
export const WORKER_LOOPS_WITHOUT_TEMPLATE_SYNC = [
  'delivery_check',
  'dispatch_claims',
  'dispatch_reconcile',
  'dispatch_sends',
  'erase_personal_data',
  'purge_console_sessions',
  'purge_idempotency_records',
  'purge_webhook_deliveries',
  'webhook_claims',
  'webhook_deliveries',
];
