/** The prose of the two documents: what integrators and operators read before the operations. */
import type { TagObject } from './document-types.ts';

const GUIDES =
  'This reference is generated from the schemas that validate requests. The full integration guide is `docs/api.md` ' +
  'and every error type, with what to do about it, is in `docs/errors.md` (both in the TMS repository).';

/** The contract's rules and our decisions where it is silent, for integrators. */
export const PUBLIC_DESCRIPTION = [
  'Send pre-approved Zalo ZNS templates to Vietnamese phone numbers. Production only: every 202 is a real, charged message, committed before the answer.',
  GUIDES,
  '## Authentication',
  "`Authorization: Bearer <API key>` or `X-API-Key: <API key>`. Missing, wrong or revoked key: 401. Missing scope or suspended workspace: 403. Another workspace's resource: 404.",
  '## Errors',
  'Every error, unknown routes and malformed JSON included, is `{ "error": { "code": <HTTP status>, "type": "<catalogued type>", "message": "…" } }`. Branch on `type`, never on `message`. Statuses: 400, 401, 402, 403, 404, 409, 413 (body over 1 MiB), 414, 415 (not JSON), 422 (Idempotency-Key reused with another body), 429, 431, 500, 503. Each operation lists the types it answers with.',
  '## Requests and responses',
  'Timestamps in responses: ISO 8601 UTC with milliseconds, except quota `reset_at`, written in Vietnam time (+07:00).',
  '`send_at`: ISO 8601; without an offset it is Vietnam time; at most 60 days ahead (else 400); a past value means now (`scheduled_at: null`).',
  'Phones: spaces, dots, dashes and parentheses are stripped; `+84…` and `0…` become `84…`; anything else gets `84` in front. Nothing else is validated: a wrong number fails at the platform. `carrier` comes from the prefix (Viettel, Mobifone, Vinaphone, Vietnamobile, Gmobile, Itel, Reddi) or is null.',
  '`template_data`: every required param present, values strings within min_length..max_length, no unknown keys (400 on send; `invalid_template_data` per recipient on batch and RSA).',
  'Listing: newest first; `limit` 1..200 (default 50), `offset` ≥ 0; `count` is the page size; `has_more` tells whether more exist. Extra filters: `template_id`, `oa_id`, `to`.',
  '## Money and quotas',
  'Money: whole VND. Each message is charged its template price when queued; cancel and failure refund it. Wallet too low or account cap reached: 402, saying which; a batch that does not fit is refused whole.',
  "Daily quota: the platform's (see `GET /api/v1/quota`), reserved per sender account for the Vietnam day the message is sent. Batch and RSA recipients past it get `daily_quota_exceeded`; a single send is counted but never refused for it.",
  'Per-recipient errors start with a stable code and a colon: `invalid_template_data`, `missing_phone`, `daily_quota_exceeded`, `rsa_phone_invalid`. `rsa_phone` is standard base64 of RSA-OAEP (SHA-256, MGF1 SHA-1).',
  'Cancel: only `queued` messages (deleted and refunded); any other state 409; unknown or already cancelled 404.',
  '## Idempotency and rate limits',
  '`Idempotency-Key` (any POST, up to 255 characters): the same key and body within 24 hours returns the first response (header `Idempotent-Replayed: true`) and creates nothing; another body 422; still in flight 409. Only successful responses are remembered.',
  'Rate limit per API key (default 50/s, burst 100): 429 with `Retry-After` seconds; `X-RateLimit-Limit` and `X-RateLimit-Remaining` on every authenticated answer. Every response carries `X-Request-Id` (yours when you send a safe one).',
  '## Deliveries and failures',
  'When a message is delivered, the gateway POSTs a signed report to the webhook URL of the API key that sent it (see *Webhooks* below). Failures send no webhook: find them with `GET /api/v1/messages?status=failed&from=…`.',
].join('\n\n');

export const OPERATOR_DESCRIPTION = [
  'The operator API of the TMS gateway: workspaces and their wallets, API keys, sender accounts and templates, delivery-report webhooks, and the endpoints that probes, Prometheus and the ZNS platform call.',
  GUIDES,
  '## Authentication',
  '`/admin/v1` and `/metrics` take `Authorization: Bearer <operator token>` (`TMS_ADMIN_TOKEN`); a missing or wrong token is 401 `unauthenticated`. `/healthz` and `/readyz` are open; `/platform/zns/events` is authenticated by the platform signature.',
  '## Errors',
  'Errors have the same envelope as the public API: `{ "error": { "code": <HTTP status>, "type": "<catalogued type>", "message": "…" } }`. Amounts are whole VND; timestamps are ISO 8601 UTC with milliseconds. The same verbs are on the `tms admin` command line.',
].join('\n\n');

export const PUBLIC_TAGS: TagObject[] = [
  { name: 'Messages', description: 'Send templates to one number, a batch or RSA-encrypted numbers; look messages up, list them and cancel queued ones.' },
  { name: 'Catalog', description: "What the key's workspace can send: its templates with their params and prices, its sender accounts (OAs) and their daily quotas." },
  { name: 'Delivery reports', description: 'The signed report the gateway POSTs to your webhook URL when a message is delivered.' },
];

export const OPERATOR_TAGS: TagObject[] = [
  { name: 'Workspaces', description: 'Customer workspaces: create, suspend and resume, the account-level message cap, the wallet and its ledger.' },
  { name: 'API keys', description: 'Keys of a workspace with their scopes, webhook URL and rate limit. A key is shown once, when it is created.' },
  { name: 'Sender accounts and templates', description: 'Zalo Official Accounts with their ZNS credentials, and the templates they send with their params and prices.' },
  { name: 'Webhook deliveries', description: 'The delivery-report outbox: each report with its attempt log, and redelivery after an outage.' },
  { name: 'Console users', description: "People of a workspace who sign in to the console (the operator invites the first owner), and the workspace's activity log." },
  { name: 'Support', description: "A customer's messages (by msg_id, tracking_id or phone, in one workspace or all) and quota, without the customer's API key." },
  { name: 'Operators and audit', description: 'Named operator tokens (each person and automation its own; TMS_ADMIN_TOKEN is the bootstrap token) and the audit log of every operator and console change.' },
  { name: 'Operations', description: 'Liveness and readiness probes, the Prometheus metrics, a backup of the embedded database, and the re-encryption step of a master key rotation.' },
  { name: 'Platform', description: 'Endpoints the ZNS platform calls (set in the Zalo app), not customers.' },
];

export const CONSOLE_DESCRIPTION = [
  "The API of the TMS console, the web application where a workspace's people manage its API keys, webhooks, sender accounts and messages. The console's own pages use it; it is documented so its behaviour can be checked, not for integrations (use the public API with an API key for those).",
  GUIDES,
  '## Authentication',
  'Sign in with `POST /console/api/session`: the answer sets the `tms_console_session` cookie (HttpOnly, SameSite=Strict, Path=/console, Secure behind https) and carries a `csrf_token`. Every change (POST, PUT, PATCH, DELETE) needs that token in the `X-CSRF-Token` header, else 403 `csrf_failed`. No session, or an expired one: 401 `unauthenticated`. A role without the right: 403 `forbidden_role`. Another workspace\'s ids: 404, as if they did not exist.',
  '## Roles',
  '`viewer` reads everything but the activity log; `developer` also sends, cancels, manages API keys and webhooks and redelivers reports; `owner` also manages the team and reads the activity log.',
  '## Errors',
  'Errors have the same envelope as the public API: `{ "error": { "code": <HTTP status>, "type": "<catalogued type>", "message": "…" } }`. Amounts are whole VND; timestamps are ISO 8601 UTC with milliseconds.',
].join('\n\n');

export const CONSOLE_TAGS: TagObject[] = [
  { name: 'Console', description: 'Sign-in and sessions, the overview, messages and sending, templates, sender accounts, the wallet, API keys, webhook deliveries, the team and the activity log of the signed-in workspace.' },
];
