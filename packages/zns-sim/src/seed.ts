/**
 * The seed file: OAs with their app credentials, templates, daily quotas, recipient rules and settings.
 * The format is documented in packages/zns-sim/README.md; `parseSeed` (seed-parser.ts) validates it and fills defaults.
 */

export type TemplateStatus = 'ENABLE' | 'PENDING_REVIEW' | 'REJECT' | 'DISABLE' | 'DELETE';
export type TemplateQuality = 'HIGH' | 'MEDIUM' | 'LOW' | 'UNDEFINED';
export const TEMPLATE_STATUSES: readonly TemplateStatus[] = ['ENABLE', 'PENDING_REVIEW', 'REJECT', 'DISABLE', 'DELETE'];
export const TEMPLATE_QUALITIES: readonly TemplateQuality[] = ['HIGH', 'MEDIUM', 'LOW', 'UNDEFINED'];

export interface SeedParam {
  name: string;
  type?: string;
  required?: boolean;
  min_length?: number;
  max_length: number;
  accept_null?: boolean;
}

export interface SeedButton {
  type: number;
  title: string;
  content: string;
}

export interface SeedTemplate {
  template_id: string;
  name: string;
  status?: TemplateStatus;
  reason?: string;
  template_type?: number;
  template_tag?: string;
  quality?: TemplateQuality | null;
  price?: string;
  price_sdt?: string;
  price_uid?: string;
  timeout_ms?: number;
  preview_url?: string;
  created_time?: number;
  params?: SeedParam[];
  buttons?: SeedButton[];
}

export interface SeedPromotionQuota {
  daily_quota: number;
  monthly_quota: number;
  estimated_next_month?: number;
}

export interface SeedOa {
  oa_id: string;
  name: string;
  app_id: string;
  app_secret: string;
  /** The "OA Secret Key" used to sign webhook events (X-ZEvent-Signature). */
  oa_secret_key: string;
  /** Initial refresh token (single-use, like every refresh token). */
  refresh_token: string;
  /** Optional initial access token, valid for settings.access_token_lifetime_s from start. */
  access_token?: string;
  daily_quota?: number;
  promotion_quota?: SeedPromotionQuota | null;
  /** Phones (84…) that count as app/OA admins for development-mode sends. */
  dev_admins?: string[];
  /** Whether sending_mode "3" (send beyond quota) is allow-listed for this OA. */
  allow_sending_mode_3?: boolean;
  /** Absent or "generate": a key pair is generated at start; null: no key (rsa/key/gen creates one); or a PKCS#8/PKCS#1 PEM. */
  rsa?: 'generate' | null | { private_key_pem: string };
  templates?: SeedTemplate[];
}

export type RecipientResult = 'deliver' | 'never_deliver' | 'error';

export interface SeedRecipientRule {
  suffix?: string;
  phones?: string[];
  hash_phones?: string[];
  result: RecipientResult;
  /** ZNS error code when result is "error". */
  error?: number;
  /** Delivery delay override for result "deliver". */
  delivery_delay_ms?: number;
}

export interface SeedEventSettings {
  url?: string | null;
  delay_ms?: number;
  drop_rate?: number;
  retry_delays_ms?: number[];
  timeout_ms?: number;
  max_in_flight?: number;
}

export interface SeedSettings {
  access_token_lifetime_s?: number;
  refresh_token_lifetime_s?: number;
  authorization_code_lifetime_s?: number;
  phone_format?: 'strict' | 'lenient';
  rsa_key_bits?: number;
  rsa_public_key_encoding?: 'pem' | 'der_base64';
  rsa_template_data?: 'auto' | 'plain' | 'encrypted';
  received_limit?: number;
  message_retention?: number;
  events?: SeedEventSettings;
}

export interface Seed {
  settings?: SeedSettings;
  oas: SeedOa[];
  recipient_rules?: SeedRecipientRule[];
}

export interface EventSettings {
  url: string | null;
  delay_ms: number;
  drop_rate: number;
  retry_delays_ms: number[];
  timeout_ms: number;
  max_in_flight: number;
}

export interface Settings {
  access_token_lifetime_s: number;
  refresh_token_lifetime_s: number;
  authorization_code_lifetime_s: number;
  phone_format: 'strict' | 'lenient';
  rsa_key_bits: number;
  rsa_public_key_encoding: 'pem' | 'der_base64';
  rsa_template_data: 'auto' | 'plain' | 'encrypted';
  received_limit: number;
  message_retention: number;
  events: EventSettings;
}

export const DEFAULT_EVENT_SETTINGS: Readonly<EventSettings> = Object.freeze({
  url: null,
  delay_ms: 1000,
  drop_rate: 0,
  // The platform's ladder is 30 s, 5 min, 15 min, 30 min, 1 h; compressed for tests and benchmarks.
  retry_delays_ms: [1000, 5000, 15000, 30000, 60000],
  timeout_ms: 2000,
  max_in_flight: 64,
});

export const DEFAULT_SETTINGS: Readonly<Omit<Settings, 'events'>> = Object.freeze({
  access_token_lifetime_s: 90_000,
  refresh_token_lifetime_s: 7_776_000,
  authorization_code_lifetime_s: 600,
  phone_format: 'strict',
  rsa_key_bits: 2048,
  rsa_public_key_encoding: 'pem',
  rsa_template_data: 'auto',
  received_limit: 100_000,
  message_retention: 1_000_000,
});

export const DEFAULT_RECIPIENT_RULES: readonly SeedRecipientRule[] = Object.freeze([
  { suffix: '000', result: 'error', error: -118 },
  { suffix: '999', result: 'never_deliver' },
]);

export interface NormalizedSeed {
  settings: Settings;
  oas: SeedOa[];
  recipient_rules: SeedRecipientRule[];
}

export class SeedError extends Error {
  override name = 'SeedError';
}
