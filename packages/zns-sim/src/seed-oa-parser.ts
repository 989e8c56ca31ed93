/** Parses the `oas` of a seed: each OA with its templates and their params. */
import { isJsonObject } from './json-object.ts';
import { checkKnownFields, fail, integerField, oneOfField, stringArrayField, stringField } from './seed-fields.ts';
import { TEMPLATE_QUALITIES, TEMPLATE_STATUSES, type SeedOa, type SeedParam, type SeedTemplate } from './seed.ts';

function parseParam(v: unknown, path: string): SeedParam {
  if (!isJsonObject(v)) fail(path, 'must be an object');
  checkKnownFields(v, ['name', 'type', 'required', 'min_length', 'max_length', 'accept_null'], path);
  const name = stringField(v, 'name', path) as string;
  const type = stringField(v, 'type', path, { optional: true }) ?? 'STRING';
  if (v.required !== undefined && typeof v.required !== 'boolean') fail(`${path}.required`, 'must be a boolean');
  if (v.accept_null !== undefined && typeof v.accept_null !== 'boolean') fail(`${path}.accept_null`, 'must be a boolean');
  const required = (v.required as boolean | undefined) ?? true;
  const max_length = integerField(v, 'max_length', path, 0, 100_000, false) as number;
  const min_length = integerField(v, 'min_length', path, 0, 100_000) ?? 0;
  if (min_length > max_length) fail(path, 'min_length must be ≤ max_length');
  const accept_null = (v.accept_null as boolean | undefined) ?? !required;
  return { name, type, required, min_length, max_length, accept_null };
}

function parseTemplate(v: unknown, path: string): SeedTemplate {
  if (!isJsonObject(v)) fail(path, 'must be an object');
  checkKnownFields(v, ['template_id', 'name', 'status', 'reason', 'template_type', 'template_tag', 'quality', 'price', 'price_sdt', 'price_uid', 'timeout_ms', 'preview_url', 'created_time', 'params', 'buttons'], path);
  const template_id = stringField(v, 'template_id', path) as string;
  if (!/^\d+$/.test(template_id)) fail(`${path}.template_id`, 'must be a string of digits (Zalo template ids are numeric)');
  const t: SeedTemplate = {
    template_id,
    name: stringField(v, 'name', path) as string,
    status: oneOfField(v, 'status', path, TEMPLATE_STATUSES) ?? 'ENABLE',
    reason: stringField(v, 'reason', path, { optional: true, nonEmpty: false }) ?? '',
    template_type: integerField(v, 'template_type', path, 1, 99) ?? 1,
    template_tag: stringField(v, 'template_tag', path, { optional: true }) ?? 'TRANSACTION',
    price: stringField(v, 'price', path, { optional: true }) ?? '300',
    timeout_ms: integerField(v, 'timeout_ms', path, 0, 86_400_000) ?? 7_200_000,
    preview_url: stringField(v, 'preview_url', path, { optional: true, nonEmpty: false }) ?? '',
  };
  if (v.quality === null) t.quality = null;
  else t.quality = oneOfField(v, 'quality', path, TEMPLATE_QUALITIES) ?? 'HIGH';
  const priceSdt = stringField(v, 'price_sdt', path, { optional: true });
  if (priceSdt !== undefined) t.price_sdt = priceSdt;
  const priceUid = stringField(v, 'price_uid', path, { optional: true });
  if (priceUid !== undefined) t.price_uid = priceUid;
  const created = integerField(v, 'created_time', path, 0, Number.MAX_SAFE_INTEGER);
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
    if (!isJsonObject(b)) fail(bp, 'must be an object');
    return { type: integerField(b, 'type', bp, 1, 99, false) as number, title: stringField(b, 'title', bp) as string, content: stringField(b, 'content', bp, { nonEmpty: false }) as string };
  });
  return t;
}

export function parseOa(v: unknown, path: string): SeedOa {
  if (!isJsonObject(v)) fail(path, 'must be an object');
  checkKnownFields(v, ['oa_id', 'name', 'app_id', 'app_secret', 'oa_secret_key', 'refresh_token', 'access_token', 'daily_quota', 'promotion_quota', 'dev_admins', 'allow_sending_mode_3', 'rsa', 'templates'], path);
  const oa: SeedOa = {
    oa_id: stringField(v, 'oa_id', path) as string,
    name: stringField(v, 'name', path) as string,
    app_id: stringField(v, 'app_id', path) as string,
    app_secret: stringField(v, 'app_secret', path) as string,
    oa_secret_key: stringField(v, 'oa_secret_key', path) as string,
    refresh_token: stringField(v, 'refresh_token', path) as string,
    daily_quota: integerField(v, 'daily_quota', path, 0, 1_000_000_000) ?? 5000,
    dev_admins: stringArrayField(v, 'dev_admins', path) ?? [],
    allow_sending_mode_3: false,
  };
  const at = stringField(v, 'access_token', path, { optional: true });
  if (at !== undefined) oa.access_token = at;
  if (v.allow_sending_mode_3 !== undefined) {
    if (typeof v.allow_sending_mode_3 !== 'boolean') fail(`${path}.allow_sending_mode_3`, 'must be a boolean');
    oa.allow_sending_mode_3 = v.allow_sending_mode_3;
  }
  if (v.promotion_quota === undefined || v.promotion_quota === null) oa.promotion_quota = null;
  else {
    const pq = v.promotion_quota;
    const pp = `${path}.promotion_quota`;
    if (!isJsonObject(pq)) fail(pp, 'must be an object or null');
    oa.promotion_quota = {
      daily_quota: integerField(pq, 'daily_quota', pp, 0, 1_000_000_000, false) as number,
      monthly_quota: integerField(pq, 'monthly_quota', pp, 0, 1_000_000_000, false) as number,
    };
    const est = integerField(pq, 'estimated_next_month', pp, 0, 1_000_000_000);
    if (est !== undefined) oa.promotion_quota.estimated_next_month = est;
  }
  if (v.rsa === undefined || v.rsa === 'generate') oa.rsa = 'generate';
  else if (v.rsa === null) oa.rsa = null;
  else if (isJsonObject(v.rsa) && typeof v.rsa.private_key_pem === 'string' && v.rsa.private_key_pem.includes('PRIVATE KEY')) {
    oa.rsa = { private_key_pem: v.rsa.private_key_pem };
  } else fail(`${path}.rsa`, 'must be "generate", null or { "private_key_pem": "-----BEGIN PRIVATE KEY-----…" }');
  if (v.templates !== undefined && !Array.isArray(v.templates)) fail(`${path}.templates`, 'must be an array');
  oa.templates = ((v.templates as unknown[] | undefined) ?? []).map((t, i) => parseTemplate(t, `${path}.templates[${i}]`));
  return oa;
}
