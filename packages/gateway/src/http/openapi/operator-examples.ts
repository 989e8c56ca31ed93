/** Records of the operator API as it answers them, for the examples of the operator reference. */
import { EXAMPLE, EXAMPLE_DELIVERY_REPORT } from './example-data.ts';

export const WORKSPACE = {
  id: EXAMPLE.workspaceId,
  name: EXAMPLE.workspaceName,
  status: 'active',
  balance: 2_500_000,
  message_cap: 100_000,
  messages_used: 8_214,
  is_demo: false,
  created_at: '2026-11-20T03:00:12.480Z',
} as const;

export const TOP_UP_ENTRY = {
  id: EXAMPLE.ledgerEntryId,
  kind: 'top_up',
  amount: 2_000_000,
  balance_after: 2_500_000,
  message_count: 0,
  reference: null,
  note: 'Chuyển khoản Vietcombank 24/11',
  created_at: '2026-11-24T01:30:00.000Z',
} as const;

export const CHARGE_ENTRY = {
  id: 'led_01KAT3M5Q9A2B4C6D8E0F2G4H6',
  kind: 'charge',
  amount: -600,
  balance_after: 2_499_400,
  message_count: 2,
  reference: EXAMPLE.messageId,
  note: null,
  created_at: EXAMPLE.createdAt,
} as const;

export const ADJUSTMENT_ENTRY = {
  id: 'led_01KAT4B2C4D6E8F0G2H4J6K8M0',
  kind: 'adjustment',
  amount: -150_000,
  balance_after: 2_349_400,
  message_count: 0,
  reference: null,
  note: 'Hoá đơn 2026-11 tính trùng: hoàn lại khoản nạp thừa',
  created_at: '2026-11-25T02:10:00.000Z',
} as const;

export const API_KEY = {
  id: EXAMPLE.apiKeyId,
  workspace_id: EXAMPLE.workspaceId,
  name: 'Website bán hàng',
  key_prefix: EXAMPLE.apiKeyPrefix,
  scopes: ['messages:send', 'messages:read', 'templates:read'],
  webhook_url: EXAMPLE.webhookUrl,
  rate_limit_per_second: null,
  revoked_at: null,
  created_at: '2026-11-20T03:05:44.019Z',
} as const;

export const SENDER_ACCOUNT = {
  oa_id: EXAMPLE.oaId,
  workspace_id: EXAMPLE.workspaceId,
  name: EXAMPLE.oaName,
  default_mode: 'plain',
  daily_quota: 5000,
  status: 'connected',
  token_problem: null,
  has_oa_secret_key: true,
  app_id: '2074138120372622001',
  rsa_public_key: null,
  created_at: '2026-11-20T03:02:10.733Z',
} as const;

export const WEBHOOK_DELIVERY = {
  id: EXAMPLE.deliveryId,
  message_id: EXAMPLE.messageId,
  workspace_id: EXAMPLE.workspaceId,
  api_key_id: EXAMPLE.apiKeyId,
  url: EXAMPLE.webhookUrl,
  status: 'failed',
  attempts: 6,
  next_attempt_at: null,
  last_status_code: 503,
  last_error: 'HTTP 503: upstream maintenance',
  delivered_at: null,
  failed_at: '2026-11-24T02:28:50.904Z',
  created_at: '2026-11-24T02:15:33.600Z',
  updated_at: '2026-11-24T02:28:50.904Z',
} as const;

export const DELIVERED_WEBHOOK = {
  ...WEBHOOK_DELIVERY,
  id: 'dlv_01KAT3P2W6S8D0F2G4H6J8K0M3',
  message_id: EXAMPLE.secondMessageId,
  status: 'delivered',
  attempts: 1,
  last_status_code: 200,
  last_error: null,
  delivered_at: '2026-11-24T02:16:05.212Z',
  failed_at: null,
  created_at: '2026-11-24T02:16:05.100Z',
  updated_at: '2026-11-24T02:16:05.212Z',
} as const;

const REPORT_BODY = JSON.stringify(EXAMPLE_DELIVERY_REPORT);

const attempt = (number: number, startedAt: string, outcome: string) => ({
  attempt: number,
  started_at: startedAt,
  url: EXAMPLE.webhookUrl,
  status_code: 503,
  latency_ms: 84,
  error: 'HTTP 503: upstream maintenance',
  outcome,
});

export const WEBHOOK_DELIVERY_DETAIL = {
  ...WEBHOOK_DELIVERY,
  body: REPORT_BODY,
  attempt_log: [
    attempt(1, '2026-11-24T02:15:33.610Z', 'retry'),
    attempt(2, '2026-11-24T02:15:34.702Z', 'retry'),
    attempt(3, '2026-11-24T02:15:39.795Z', 'retry'),
    attempt(4, '2026-11-24T02:16:09.887Z', 'retry'),
    attempt(5, '2026-11-24T02:18:09.973Z', 'retry'),
    attempt(6, '2026-11-24T02:28:50.820Z', 'failed'),
  ],
} as const;

export const REDELIVERED_WEBHOOK_DETAIL = {
  ...WEBHOOK_DELIVERY_DETAIL,
  status: 'pending',
  next_attempt_at: '2026-11-24T03:05:00.000Z',
  failed_at: null,
  updated_at: '2026-11-24T03:05:00.000Z',
} as const;
