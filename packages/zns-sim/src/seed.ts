/**
 * The seed file: OAs with their app credentials, templates, daily quotas, recipient rules and settings.
 * The format is documented in packages/zns-sim/README.md; `parseSeed` validates it and fills defaults.
 */
import { readFile } from 'node:fs/promises';
import { isKnownZnsCode } from './errors.ts';

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

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail(path: string, what: string): never {
  throw new SeedError(`seed: ${path} ${what}`);
}

function str(o: Obj, key: string, path: string, opts: { optional?: boolean; nonEmpty?: boolean } = {}): string | undefined {
  const v = o[key];
  if (v === undefined && opts.optional) return undefined;
  if (typeof v !== 'string') fail(`${path}.${key}`, 'must be a string');
  if (opts.nonEmpty !== false && v.length === 0) fail(`${path}.${key}`, 'must not be empty');
  return v;
}

function int(o: Obj, key: string, path: string, min: number, max: number, optional = true): number | undefined {
  const v = o[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${path}.${key}`, `must be an integer in ${min}..${max}`);
  return v;
}

function rate(o: Obj, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) fail(`${path}.${key}`, 'must be a number in 0..1');
  return v;
}

function oneOf<T extends string>(o: Obj, key: string, path: string, values: readonly T[]): T | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !values.includes(v as T)) fail(`${path}.${key}`, `must be one of ${values.join(', ')}`);
  return v as T;
}

function strArray(o: Obj, key: string, path: string): string[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) fail(`${path}.${key}`, 'must be an array of strings');
  return v as string[];
}

function checkKeys(o: Obj, allowed: readonly string[], path: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) fail(`${path}.${k}`, 'is not a known field');
  }
}

export function parseEventSettings(v: unknown, path: string, base: EventSettings): EventSettings {
  if (!isObj(v)) fail(path, 'must be an object');
  checkKeys(v, ['url', 'delay_ms', 'drop_rate', 'retry_delays_ms', 'timeout_ms', 'max_in_flight'], path);
  const out: EventSettings = { ...base, retry_delays_ms: [...base.retry_delays_ms] };
  if (v.url !== undefined) {
    if (v.url !== null && (typeof v.url !== 'string' || !/^https?:\/\//.test(v.url))) fail(`${path}.url`, 'must be an http(s) URL or null');
    out.url = v.url as string | null;
  }
  out.delay_ms = int(v, 'delay_ms', path, 0, 86_400_000) ?? out.delay_ms;
  out.drop_rate = rate(v, 'drop_rate', path) ?? out.drop_rate;
  out.timeout_ms = int(v, 'timeout_ms', path, 1, 600_000) ?? out.timeout_ms;
  out.max_in_flight = int(v, 'max_in_flight', path, 1, 10_000) ?? out.max_in_flight;
  if (v.retry_delays_ms !== undefined) {
    const r = v.retry_delays_ms;
    if (!Array.isArray(r) || r.some((x) => typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 86_400_000)) {
      fail(`${path}.retry_delays_ms`, 'must be an array of integers (ms)');
    }
    out.retry_delays_ms = [...(r as number[])];
  }
  return out;
}

function parseParam(v: unknown, path: string): SeedParam {
  if (!isObj(v)) fail(path, 'must be an object');
  checkKeys(v, ['name', 'type', 'required', 'min_length', 'max_length', 'accept_null'], path);
  const name = str(v, 'name', path) as string;
  const type = str(v, 'type', path, { optional: true }) ?? 'STRING';
  if (v.required !== undefined && typeof v.required !== 'boolean') fail(`${path}.required`, 'must be a boolean');
  if (v.accept_null !== undefined && typeof v.accept_null !== 'boolean') fail(`${path}.accept_null`, 'must be a boolean');
  const required = (v.required as boolean | undefined) ?? true;
  const max_length = int(v, 'max_length', path, 0, 100_000, false) as number;
  const min_length = int(v, 'min_length', path, 0, 100_000) ?? 0;
  if (min_length > max_length) fail(path, 'min_length must be ≤ max_length');
  const accept_null = (v.accept_null as boolean | undefined) ?? !required;
  return { name, type, required, min_length, max_length, accept_null };
}

function parseTemplate(v: unknown, path: string): SeedTemplate {
  if (!isObj(v)) fail(path, 'must be an object');
  checkKeys(v, ['template_id', 'name', 'status', 'reason', 'template_type', 'template_tag', 'quality', 'price', 'price_sdt', 'price_uid', 'timeout_ms', 'preview_url', 'created_time', 'params', 'buttons'], path);
  const template_id = str(v, 'template_id', path) as string;
  if (!/^\d+$/.test(template_id)) fail(`${path}.template_id`, 'must be a string of digits (Zalo template ids are numeric)');
  const t: SeedTemplate = {
    template_id,
    name: str(v, 'name', path) as string,
    status: oneOf(v, 'status', path, TEMPLATE_STATUSES) ?? 'ENABLE',
    reason: str(v, 'reason', path, { optional: true, nonEmpty: false }) ?? '',
    template_type: int(v, 'template_type', path, 1, 99) ?? 1,
    template_tag: str(v, 'template_tag', path, { optional: true }) ?? 'TRANSACTION',
    price: str(v, 'price', path, { optional: true }) ?? '300',
    timeout_ms: int(v, 'timeout_ms', path, 0, 86_400_000) ?? 7_200_000,
    preview_url: str(v, 'preview_url', path, { optional: true, nonEmpty: false }) ?? '',
  };
  if (v.quality === null) t.quality = null;
  else t.quality = oneOf(v, 'quality', path, TEMPLATE_QUALITIES) ?? 'HIGH';
  const priceSdt = str(v, 'price_sdt', path, { optional: true });
  if (priceSdt !== undefined) t.price_sdt = priceSdt;
  const priceUid = str(v, 'price_uid', path, { optional: true });
  if (priceUid !== undefined) t.price_uid = priceUid;
  const created = int(v, 'created_time', path, 0, Number.MAX_SAFE_INTEGER);
  if (created !== undefined) t.created_time = created;
  if (v.params !== undefined && !Array.isArray(v.params)) fail(`${path}.params`, 'must be an array');
  t.params = ((v.params as unknown[] | undefined) ?? []).map((p, i) => parseParam(p, `${path}.params[${i}]`));
  const names = new Set<string>();
  for (const p of t.params) {
    if (names.has(p.name)) fail(`${path}.params`, `has a duplicate param "${p.name}"`);
    names.add(p.name);
  }
  if (v.buttons !== undefined && !Array.isArray(v.buttons)) fail(`${path}.buttons`, 'must be an array');
  t.buttons = ((v.buttons as unknown[] | undefined) ?? []).map((b, i) => {
    const bp = `${path}.buttons[${i}]`;
    if (!isObj(b)) fail(bp, 'must be an object');
    return { type: int(b, 'type', bp, 1, 99, false) as number, title: str(b, 'title', bp) as string, content: str(b, 'content', bp, { nonEmpty: false }) as string };
  });
  return t;
}

function parseOa(v: unknown, path: string): SeedOa {
  if (!isObj(v)) fail(path, 'must be an object');
  checkKeys(v, ['oa_id', 'name', 'app_id', 'app_secret', 'oa_secret_key', 'refresh_token', 'access_token', 'daily_quota', 'promotion_quota', 'dev_admins', 'allow_sending_mode_3', 'rsa', 'templates'], path);
  const oa: SeedOa = {
    oa_id: str(v, 'oa_id', path) as string,
    name: str(v, 'name', path) as string,
    app_id: str(v, 'app_id', path) as string,
    app_secret: str(v, 'app_secret', path) as string,
    oa_secret_key: str(v, 'oa_secret_key', path) as string,
    refresh_token: str(v, 'refresh_token', path) as string,
    daily_quota: int(v, 'daily_quota', path, 0, 1_000_000_000) ?? 5000,
    dev_admins: strArray(v, 'dev_admins', path) ?? [],
    allow_sending_mode_3: false,
  };
  const at = str(v, 'access_token', path, { optional: true });
  if (at !== undefined) oa.access_token = at;
  if (v.allow_sending_mode_3 !== undefined) {
    if (typeof v.allow_sending_mode_3 !== 'boolean') fail(`${path}.allow_sending_mode_3`, 'must be a boolean');
    oa.allow_sending_mode_3 = v.allow_sending_mode_3;
  }
  if (v.promotion_quota === undefined || v.promotion_quota === null) oa.promotion_quota = null;
  else {
    const pq = v.promotion_quota;
    const pp = `${path}.promotion_quota`;
    if (!isObj(pq)) fail(pp, 'must be an object or null');
    oa.promotion_quota = {
      daily_quota: int(pq, 'daily_quota', pp, 0, 1_000_000_000, false) as number,
      monthly_quota: int(pq, 'monthly_quota', pp, 0, 1_000_000_000, false) as number,
    };
    const est = int(pq, 'estimated_next_month', pp, 0, 1_000_000_000);
    if (est !== undefined) oa.promotion_quota.estimated_next_month = est;
  }
  if (v.rsa === undefined || v.rsa === 'generate') oa.rsa = 'generate';
  else if (v.rsa === null) oa.rsa = null;
  else if (isObj(v.rsa) && typeof v.rsa.private_key_pem === 'string' && v.rsa.private_key_pem.includes('PRIVATE KEY')) {
    oa.rsa = { private_key_pem: v.rsa.private_key_pem };
  } else fail(`${path}.rsa`, 'must be "generate", null or { "private_key_pem": "-----BEGIN PRIVATE KEY-----…" }');
  if (v.templates !== undefined && !Array.isArray(v.templates)) fail(`${path}.templates`, 'must be an array');
  oa.templates = ((v.templates as unknown[] | undefined) ?? []).map((t, i) => parseTemplate(t, `${path}.templates[${i}]`));
  return oa;
}

export function parseRecipientRule(v: unknown, path: string): SeedRecipientRule {
  if (!isObj(v)) fail(path, 'must be an object');
  checkKeys(v, ['suffix', 'phones', 'hash_phones', 'result', 'error', 'delivery_delay_ms'], path);
  const result = oneOf(v, 'result', path, ['deliver', 'never_deliver', 'error'] as const);
  if (!result) fail(`${path}.result`, 'is required');
  const rule: SeedRecipientRule = { result };
  const suffix = str(v, 'suffix', path, { optional: true });
  if (suffix !== undefined) {
    if (!/^\d+$/.test(suffix)) fail(`${path}.suffix`, 'must be digits');
    rule.suffix = suffix;
  }
  const phones = strArray(v, 'phones', path);
  if (phones) rule.phones = phones;
  const hashes = strArray(v, 'hash_phones', path);
  if (hashes) rule.hash_phones = hashes.map((h) => h.toLowerCase());
  if (!rule.suffix && !rule.phones && !rule.hash_phones) fail(path, 'needs suffix, phones or hash_phones');
  if (result === 'error') {
    const code = int(v, 'error', path, -100_000, -1, false) as number;
    if (!isKnownZnsCode(code)) fail(`${path}.error`, `is not a ZNS error code the simulator knows (${code})`);
    rule.error = code;
  } else if (v.error !== undefined) fail(`${path}.error`, 'is only allowed with result "error"');
  const delay = int(v, 'delivery_delay_ms', path, 0, 86_400_000);
  if (delay !== undefined) rule.delivery_delay_ms = delay;
  return rule;
}

export function parseSeed(input: unknown): NormalizedSeed {
  if (!isObj(input)) fail('(root)', 'must be a JSON object');
  checkKeys(input, ['$comment', 'settings', 'oas', 'recipient_rules'], '(root)');
  const s = input.settings ?? {};
  if (!isObj(s)) fail('settings', 'must be an object');
  checkKeys(s, ['access_token_lifetime_s', 'refresh_token_lifetime_s', 'authorization_code_lifetime_s', 'phone_format', 'rsa_key_bits', 'rsa_public_key_encoding', 'rsa_template_data', 'received_limit', 'message_retention', 'events'], 'settings');
  const bits = int(s, 'rsa_key_bits', 'settings', 1024, 8192) ?? DEFAULT_SETTINGS.rsa_key_bits;
  if (bits % 8 !== 0) fail('settings.rsa_key_bits', 'must be a multiple of 8');
  const settings: Settings = {
    access_token_lifetime_s: int(s, 'access_token_lifetime_s', 'settings', 1, 100_000_000) ?? DEFAULT_SETTINGS.access_token_lifetime_s,
    refresh_token_lifetime_s: int(s, 'refresh_token_lifetime_s', 'settings', 1, 1_000_000_000) ?? DEFAULT_SETTINGS.refresh_token_lifetime_s,
    authorization_code_lifetime_s: int(s, 'authorization_code_lifetime_s', 'settings', 1, 100_000_000) ?? DEFAULT_SETTINGS.authorization_code_lifetime_s,
    phone_format: oneOf(s, 'phone_format', 'settings', ['strict', 'lenient'] as const) ?? DEFAULT_SETTINGS.phone_format,
    rsa_key_bits: bits,
    rsa_public_key_encoding: oneOf(s, 'rsa_public_key_encoding', 'settings', ['pem', 'der_base64'] as const) ?? DEFAULT_SETTINGS.rsa_public_key_encoding,
    rsa_template_data: oneOf(s, 'rsa_template_data', 'settings', ['auto', 'plain', 'encrypted'] as const) ?? DEFAULT_SETTINGS.rsa_template_data,
    received_limit: int(s, 'received_limit', 'settings', 0, 100_000_000) ?? DEFAULT_SETTINGS.received_limit,
    message_retention: int(s, 'message_retention', 'settings', 1, 100_000_000) ?? DEFAULT_SETTINGS.message_retention,
    events: s.events === undefined ? { ...DEFAULT_EVENT_SETTINGS, retry_delays_ms: [...DEFAULT_EVENT_SETTINGS.retry_delays_ms] } : parseEventSettings(s.events, 'settings.events', DEFAULT_EVENT_SETTINGS),
  };
  if (!Array.isArray(input.oas) || input.oas.length === 0) fail('oas', 'must be a non-empty array');
  const oas = input.oas.map((o, i) => parseOa(o, `oas[${i}]`));
  const oaIds = new Set<string>();
  const templateIds = new Set<string>();
  const refreshTokens = new Set<string>();
  const apps = new Map<string, string>();
  for (const oa of oas) {
    if (oaIds.has(oa.oa_id)) fail('oas', `has a duplicate oa_id ${oa.oa_id}`);
    oaIds.add(oa.oa_id);
    if (refreshTokens.has(oa.refresh_token)) fail('oas', `share a refresh_token (${oa.oa_id})`);
    refreshTokens.add(oa.refresh_token);
    const secret = apps.get(oa.app_id);
    if (secret !== undefined && secret !== oa.app_secret) fail('oas', `give app ${oa.app_id} two different app_secret values`);
    apps.set(oa.app_id, oa.app_secret);
    for (const t of oa.templates ?? []) {
      if (templateIds.has(t.template_id)) fail('oas', `have a duplicate template_id ${t.template_id} (template ids are global)`);
      templateIds.add(t.template_id);
    }
  }
  let rules: SeedRecipientRule[];
  if (input.recipient_rules === undefined) rules = DEFAULT_RECIPIENT_RULES.map((r) => ({ ...r }));
  else if (!Array.isArray(input.recipient_rules)) fail('recipient_rules', 'must be an array');
  else rules = input.recipient_rules.map((r, i) => parseRecipientRule(r, `recipient_rules[${i}]`));
  return { settings, oas, recipient_rules: rules };
}

export async function loadSeedFile(file: string): Promise<NormalizedSeed> {
  const text = await readFile(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SeedError(`seed: ${file} is not valid JSON (${(err as Error).message})`);
  }
  return parseSeed(json);
}
