/** Parses a seed: settings, OAs and recipient rules, checked and with defaults filled in. */
import { readFile } from 'node:fs/promises';
import { isKnownZnsCode } from './errors.ts';
import { isJsonObject } from './json-object.ts';
import { checkKnownFields, fail, integerField, oneOfField, rateField, stringArrayField, stringField } from './seed-fields.ts';
import { parseOa } from './seed-oa-parser.ts';
import { DEFAULT_EVENT_SETTINGS, DEFAULT_RECIPIENT_RULES, DEFAULT_SETTINGS, SeedError, type EventSettings, type NormalizedSeed, type SeedRecipientRule, type Settings } from './seed.ts';

export function parseEventSettings(v: unknown, path: string, base: EventSettings): EventSettings {
  if (!isJsonObject(v)) fail(path, 'must be an object');
  checkKnownFields(v, ['url', 'delay_ms', 'drop_rate', 'retry_delays_ms', 'timeout_ms', 'max_in_flight'], path);
  const out: EventSettings = { ...base, retry_delays_ms: [...base.retry_delays_ms] };
  if (v.url !== undefined) {
    if (v.url !== null && (typeof v.url !== 'string' || !/^https?:\/\//.test(v.url))) fail(`${path}.url`, 'must be an http(s) URL or null');
    out.url = v.url as string | null;
  }
  out.delay_ms = integerField(v, 'delay_ms', path, 0, 86_400_000) ?? out.delay_ms;
  out.drop_rate = rateField(v, 'drop_rate', path) ?? out.drop_rate;
  out.timeout_ms = integerField(v, 'timeout_ms', path, 1, 600_000) ?? out.timeout_ms;
  out.max_in_flight = integerField(v, 'max_in_flight', path, 1, 10_000) ?? out.max_in_flight;
  if (v.retry_delays_ms !== undefined) {
    const r = v.retry_delays_ms;
    if (!Array.isArray(r) || r.some((x) => typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 86_400_000)) {
      fail(`${path}.retry_delays_ms`, 'must be an array of integers (ms)');
    }
    out.retry_delays_ms = [...(r as number[])];
  }
  return out;
}

export function parseRecipientRule(v: unknown, path: string): SeedRecipientRule {
  if (!isJsonObject(v)) fail(path, 'must be an object');
  checkKnownFields(v, ['suffix', 'phones', 'hash_phones', 'result', 'error', 'delivery_delay_ms'], path);
  const result = oneOfField(v, 'result', path, ['deliver', 'never_deliver', 'error'] as const);
  if (!result) fail(`${path}.result`, 'is required');
  const rule: SeedRecipientRule = { result };
  const suffix = stringField(v, 'suffix', path, { optional: true });
  if (suffix !== undefined) {
    if (!/^\d+$/.test(suffix)) fail(`${path}.suffix`, 'must be digits');
    rule.suffix = suffix;
  }
  const phones = stringArrayField(v, 'phones', path);
  if (phones) rule.phones = phones;
  const hashes = stringArrayField(v, 'hash_phones', path);
  if (hashes) rule.hash_phones = hashes.map((h) => h.toLowerCase());
  if (!rule.suffix && !rule.phones && !rule.hash_phones) fail(path, 'needs suffix, phones or hash_phones');
  if (result === 'error') {
    const code = integerField(v, 'error', path, -100_000, -1, false) as number;
    if (!isKnownZnsCode(code)) fail(`${path}.error`, `is not a ZNS error code the simulator knows (${code})`);
    rule.error = code;
  } else if (v.error !== undefined) fail(`${path}.error`, 'is only allowed with result "error"');
  const delay = integerField(v, 'delivery_delay_ms', path, 0, 86_400_000);
  if (delay !== undefined) rule.delivery_delay_ms = delay;
  return rule;
}

export function parseSeed(input: unknown): NormalizedSeed {
  if (!isJsonObject(input)) fail('(root)', 'must be a JSON object');
  checkKnownFields(input, ['$comment', 'settings', 'oas', 'recipient_rules'], '(root)');
  const s = input.settings ?? {};
  if (!isJsonObject(s)) fail('settings', 'must be an object');
  checkKnownFields(s, ['access_token_lifetime_s', 'refresh_token_lifetime_s', 'authorization_code_lifetime_s', 'phone_format', 'rsa_key_bits', 'rsa_public_key_encoding', 'rsa_template_data', 'received_limit', 'message_retention', 'events'], 'settings');
  const bits = integerField(s, 'rsa_key_bits', 'settings', 1024, 8192) ?? DEFAULT_SETTINGS.rsa_key_bits;
  if (bits % 8 !== 0) fail('settings.rsa_key_bits', 'must be a multiple of 8');
  const settings: Settings = {
    access_token_lifetime_s: integerField(s, 'access_token_lifetime_s', 'settings', 1, 100_000_000) ?? DEFAULT_SETTINGS.access_token_lifetime_s,
    refresh_token_lifetime_s: integerField(s, 'refresh_token_lifetime_s', 'settings', 1, 1_000_000_000) ?? DEFAULT_SETTINGS.refresh_token_lifetime_s,
    authorization_code_lifetime_s: integerField(s, 'authorization_code_lifetime_s', 'settings', 1, 100_000_000) ?? DEFAULT_SETTINGS.authorization_code_lifetime_s,
    phone_format: oneOfField(s, 'phone_format', 'settings', ['strict', 'lenient'] as const) ?? DEFAULT_SETTINGS.phone_format,
    rsa_key_bits: bits,
    rsa_public_key_encoding: oneOfField(s, 'rsa_public_key_encoding', 'settings', ['pem', 'der_base64'] as const) ?? DEFAULT_SETTINGS.rsa_public_key_encoding,
    rsa_template_data: oneOfField(s, 'rsa_template_data', 'settings', ['auto', 'plain', 'encrypted'] as const) ?? DEFAULT_SETTINGS.rsa_template_data,
    received_limit: integerField(s, 'received_limit', 'settings', 0, 100_000_000) ?? DEFAULT_SETTINGS.received_limit,
    message_retention: integerField(s, 'message_retention', 'settings', 1, 100_000_000) ?? DEFAULT_SETTINGS.message_retention,
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

/** The JSON of a seed file, not yet checked. */
export async function readSeedJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new SeedError(`seed: ${file} is not valid JSON (${(err as Error).message})`);
  }
}

export async function loadSeedFile(file: string): Promise<NormalizedSeed> {
  return parseSeed(await readSeedJson(file));
}
