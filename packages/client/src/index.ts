/**
 * @tms/client: the SDK of the TMS template messaging API (/api/v1).
 * Runs wherever the global `fetch` and WebCrypto exist: Node 20+, Bun, Deno, edge runtimes.
 */
export { Client, MessagesApi, QuotaApi, SenderAccountsApi, TemplatesApi, type ClientOptions } from './client.ts';
export { TMS_ERROR_TYPES, TmsError, isTmsError, type TmsErrorKind, type TmsErrorType } from './errors.ts';
export type { CallOptions, FetchLike, RetryEvent } from './transport.ts';
export type { RetryPolicy } from './retry.ts';
export type { IterateOptions } from './pagination.ts';
export {
  DEFAULT_CHUNK_SIZE,
  MAX_BATCH_SIZE,
  MAX_DAYS_AHEAD,
  type SendLargeChunk,
  type SendLargeDay,
  type SendLargeOptions,
  type SendLargeOutcome,
  type SendLargeProgress,
  type SendLargeReport,
} from './send-large.ts';
export type { ReconcileOptions, ReconcileReport } from './reconcile.ts';
export { SIGNATURE_HEADER, WebhookError, parseDeliveryReport, signWebhook, verifyWebhook, type SignatureHeader, type WebhookErrorReason } from './webhook.ts';
export type { RawBody } from './bytes.ts';
export { encryptPhone, normalizePhone, parseRsaPublicKey, type EncryptPhoneOptions, type RsaPublicKey } from './rsa.ts';
export type * from './types.ts';
