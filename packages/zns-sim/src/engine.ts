/**
 * The simulator's state and behaviour, free of HTTP: OAuth tokens, templates, quotas, sends, message status,
 * RSA keys, the received log and the counters. The HTTP layer (server.ts) maps requests onto these methods.
 *
 * Hot path (plain send): Map lookups, a few comparisons, one random-pool slice for msg_id, one heap push for
 * the delivery event. No logging, no crypto.
 */
import { createHash, createHmac, randomBytes, randomFillSync } from 'node:crypto';
import { OAUTH_ERRORS, znsError, type OAuthErrorBody, type ZnsErrorBody } from './errors.ts';
import { EventDispatcher, type EventAttempt, type EventStats } from './events.ts';
import { DEFAULT_FAULTS, faultsActive, mergeFaults, type Faults } from './faults.ts';
import { generateRsaKey, oaepDecrypt, rsaKeyFromPem, type RsaKey } from './rsa.ts';
import { Scheduler } from './scheduler.ts';
import { STATE_FILE_MESSAGE_LIMIT, STATE_FILE_VERSION, type PersistedAccessToken, type PersistedMessage, type PersistedState } from './state.ts';
import {
  parseEventSettings,
  parseRecipientRule,
  TEMPLATE_QUALITIES,
  TEMPLATE_STATUSES,
  type EventSettings,
  type NormalizedSeed,
  type SeedButton,
  type SeedParam,
  type SeedPromotionQuota,
  type SeedRecipientRule,
  type Settings,
  type TemplateQuality,
  type TemplateStatus,
} from './seed.ts';

const VN_OFFSET_MS = 7 * 3600 * 1000;
const DAY_MS = 86_400_000;
const PHONE_STRICT = /^84\d{9}$/;
const HASH_PHONE = /^[0-9a-fA-F]{64}$/;
const MSG_ID = /^[0-9a-f]{20}$/;

export function vietnamDay(nowMs: number): number {
  return Math.floor((nowMs + VN_OFFSET_MS) / DAY_MS);
}

export function vietnamDayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export class ControlError extends Error {
  override name = 'ControlError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface TokenRecord {
  oa: OaState;
  expiresAt: number;
  proof: string | null;
}

interface RefreshRecord {
  token: string;
  expiresAt: number;
}

interface CodeRecord {
  oa: OaState;
  expiresAt: number;
  codeChallenge: string | null;
}

export interface OaState {
  readonly oa_id: string;
  readonly name: string;
  readonly app_id: string;
  readonly app_secret: string;
  oa_secret_key: string;
  daily_quota: number;
  dailyStr: string;
  used: number;
  day: number;
  promotion: SeedPromotionQuota | null;
  readonly devAdmins: Set<string>;
  readonly devAdminHashes: Set<string>;
  allowMode3: boolean;
  rsa: RsaKey | null;
  rsaGenerating: boolean;
  refresh: RefreshRecord | null;
  readonly accessTokens: Set<string>;
}

interface CompiledParam {
  name: string;
  type: string;
  required: boolean;
  min: number;
  max: number;
  acceptNull: boolean;
}

export interface TemplateState {
  template_id: string;
  idNum: number;
  oa: OaState;
  name: string;
  status: TemplateStatus;
  reason: string;
  template_type: number;
  template_tag: string;
  quality: TemplateQuality | null;
  price: string;
  price_sdt?: string;
  price_uid?: string;
  timeout_ms: number;
  preview_url: string;
  created_time: number;
  params: CompiledParam[];
  buttons: SeedButton[];
}

type Outcome = 'deliver' | 'never' | 'error';

interface CompiledRule {
  suffix: string | null;
  phones: Set<string> | null;
  hashes: Set<string> | null;
  outcome: Outcome;
  error: number;
  delay: number | null;
}

interface MessageRecord {
  id: string;
  oa: OaState;
  rcpt: string;
  phone: string | null;
  tid: string;
  sent: number;
  /** 0 = not delivered yet. */
  dlv: number;
  never: boolean;
}

export interface ReceivedEntry {
  seq: number;
  time: number;
  path: string;
  oa_id: string | null;
  tracking_id: string | null;
  body: unknown;
  /** The JSON body the simulator answered (or would have answered, for an after-processing fault); null when the request was not processed. */
  response: unknown;
  http_status: number | null;
  fault: 'http_5xx' | 'timeout' | 'unknown_error' | 'outage' | null;
}

export interface ReceivedFilter {
  tracking_id?: string;
  path?: string;
  oa_id?: string;
  since_seq?: number;
  limit?: number;
}

export interface SendMeta {
  oa_id: string | null;
  tracking_id: string | null;
  accepted: boolean;
  code: number;
}

export interface SendResult {
  body: object;
  meta: SendMeta;
}

export type SendKind = 'phone' | 'hash' | 'rsa';

export interface SuccessBody<T> {
  error: 0;
  message: string;
  data: T;
}

export interface QuotaView {
  oa_id: string;
  daily_quota: number;
  used_today: number;
  remaining_quota: number;
  vietnam_day: string;
}

export interface OaView extends QuotaView {
  name: string;
  app_id: string;
  oa_secret_key: string;
  refresh_token: string | null;
  refresh_token_expires_at: number | null;
  access_tokens_valid: number;
  rsa_key: boolean;
  allow_sending_mode_3: boolean;
  dev_admins: string[];
}

export interface TemplateView {
  template_id: string;
  oa_id: string;
  name: string;
  status: TemplateStatus;
  reason: string;
  quality: TemplateQuality | null;
  template_type: number;
  template_tag: string;
  price: string;
  params: SeedParam[];
}

export interface MessageView {
  msg_id: string;
  oa_id: string;
  recipient: string;
  tracking_id: string;
  sent_time: number;
  delivery_time: number | null;
  status: -1 | 0 | 1;
  never_delivered: boolean;
}

export interface MessageFilter {
  tracking_id?: string;
  oa_id?: string;
}

export interface TemplatePatch {
  status?: TemplateStatus;
  reason?: string;
  quality?: TemplateQuality | null;
  price?: string;
  name?: string;
  params?: SeedParam[];
}

export interface Stats {
  started_at: number;
  uptime_ms: number;
  requests: { total: number; by_route: Record<string, number> };
  sends: {
    received: number;
    accepted: number;
    rejected: number;
    by_error: Record<string, number>;
    duplicate_tracking_ids: number;
    duplicate_accepts: number;
  };
  faults: { http_5xx: number; timeouts: number; unknown_errors: number; outage: number };
  tokens: { issued: number; token_requests_rejected: number; invalid_access_token: number };
  messages: { stored: number; delivered: number; never_delivered: number; pending_delivery: number };
  events: EventStats;
  received_log: { size: number; limit: number; dropped: number };
}

class RandomHex {
  private buf = Buffer.alloc(10_240);
  private off = this.buf.length;

  next10(): string {
    if (this.off + 10 > this.buf.length) {
      randomFillSync(this.buf);
      this.off = 0;
    }
    const s = this.buf.toString('hex', this.off, this.off + 10);
    this.off += 10;
    return s;
  }
}

function randomToken(prefix: string): string {
  return prefix + randomBytes(24).toString('base64url');
}

function countChars(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface EngineOptions {
  now?: () => number;
  /** A saved state to continue from (see importState). */
  state?: PersistedState | null;
}

export class Engine {
  readonly settings: Settings;
  readonly now: () => number;
  readonly scheduler = new Scheduler();
  readonly events: EventDispatcher;
  faults: Faults = { ...DEFAULT_FAULTS };
  faultsOn = false;
  /**
   * Told about every change worth keeping across a restart (see state.ts). `urgent`: the change is about to
   * be answered to a client (a new token pair, a new RSA key), so it must be stored first; a throw refuses it.
   */
  onStateChange: ((urgent: boolean) => void) | null = null;
  /**
   * Accepted sends are stored (urgent) before they are answered, as a real platform would, so a crash of
   * the simulator never forgets a send it answered. Off by default: each send then costs a state write.
   */
  durableSends = false;

  private readonly oas = new Map<string, OaState>();
  private readonly apps = new Map<string, string>();
  private readonly templates = new Map<string, TemplateState>();
  private readonly accessTokens = new Map<string, TokenRecord>();
  private readonly refreshTokens = new Map<string, OaState>();
  private readonly codes = new Map<string, CodeRecord>();
  private rules: CompiledRule[] = [];
  private readonly messages = new Map<string, MessageRecord>();
  private readonly ids = new RandomHex();

  private received: ReceivedEntry[] = [];
  private receivedNext = 0;
  private receivedSeq = 0;
  private receivedDropped = 0;
  private trackingCounts = new Map<string, number>();

  readonly startedAt: number;
  readonly routeCounters = new Map<string, { n: number }>();
  private counters = this.freshCounters();

  private constructor(seed: NormalizedSeed, options: EngineOptions) {
    this.settings = seed.settings;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.events = new EventDispatcher(() => this.settings.events, this.scheduler);
    const day = vietnamDay(this.now());
    for (const o of seed.oas) {
      const oa: OaState = {
        oa_id: o.oa_id,
        name: o.name,
        app_id: o.app_id,
        app_secret: o.app_secret,
        oa_secret_key: o.oa_secret_key,
        daily_quota: o.daily_quota ?? 5000,
        dailyStr: String(o.daily_quota ?? 5000),
        used: 0,
        day,
        promotion: o.promotion_quota ?? null,
        devAdmins: new Set(o.dev_admins ?? []),
        devAdminHashes: new Set((o.dev_admins ?? []).map(sha256Hex)),
        allowMode3: o.allow_sending_mode_3 ?? false,
        rsa: null,
        rsaGenerating: false,
        refresh: { token: o.refresh_token, expiresAt: this.now() + this.settings.refresh_token_lifetime_s * 1000 },
        accessTokens: new Set(),
      };
      this.oas.set(oa.oa_id, oa);
      this.apps.set(oa.app_id, oa.app_secret);
      this.refreshTokens.set(o.refresh_token, oa);
      if (o.access_token) this.addAccessToken(oa, o.access_token);
      for (const t of o.templates ?? []) {
        this.templates.set(t.template_id, {
          template_id: t.template_id,
          idNum: Number(t.template_id),
          oa,
          name: t.name,
          status: t.status ?? 'ENABLE',
          reason: t.reason ?? '',
          template_type: t.template_type ?? 1,
          template_tag: t.template_tag ?? 'TRANSACTION',
          quality: t.quality === undefined ? 'HIGH' : t.quality,
          price: t.price ?? '300',
          ...(t.price_sdt !== undefined ? { price_sdt: t.price_sdt } : {}),
          ...(t.price_uid !== undefined ? { price_uid: t.price_uid } : {}),
          timeout_ms: t.timeout_ms ?? 7_200_000,
          preview_url: t.preview_url ?? '',
          created_time: t.created_time ?? this.startedAt,
          params: (t.params ?? []).map(compileParam),
          buttons: t.buttons ?? [],
        });
      }
    }
    this.rules = seed.recipient_rules.map(compileRule);
  }

  static async create(seed: NormalizedSeed, options: EngineOptions = {}): Promise<Engine> {
    const engine = new Engine(seed, options);
    const saved = new Set((options.state?.oas ?? []).map((o) => o.oa_id));
    await Promise.all(
      seed.oas.map(async (o) => {
        const oa = engine.oas.get(o.oa_id) as OaState;
        // A saved OA brings its own key (or none): a new one would not match what clients already fetched.
        if (o.rsa === null || saved.has(o.oa_id)) return;
        if (o.rsa === undefined || o.rsa === 'generate') oa.rsa = await generateRsaKey(engine.settings.rsa_key_bits);
        else oa.rsa = rsaKeyFromPem(o.rsa.private_key_pem);
      }),
    );
    if (options.state) engine.importState(options.state);
    return engine;
  }

  async close(): Promise<void> {
    this.scheduler.close();
    await this.events.close();
  }

  // ---------------------------------------------------------------- OAuth

  private addAccessToken(oa: OaState, token: string): number {
    const expiresAt = this.now() + this.settings.access_token_lifetime_s * 1000;
    this.accessTokens.set(token, { oa, expiresAt, proof: null });
    oa.accessTokens.add(token);
    return expiresAt;
  }

  private pruneAccessTokens(oa: OaState): void {
    const now = this.now();
    for (const t of oa.accessTokens) {
      const rec = this.accessTokens.get(t);
      if (!rec || rec.expiresAt <= now) {
        this.accessTokens.delete(t);
        oa.accessTokens.delete(t);
      }
    }
  }

  private issuePair(oa: OaState): { access_token: string; refresh_token: string; expires_in: string } {
    this.pruneAccessTokens(oa);
    const previous = oa.refresh;
    if (previous) this.refreshTokens.delete(previous.token);
    const access = randomToken('sim-at-');
    const refresh = randomToken('sim-rt-');
    this.addAccessToken(oa, access);
    oa.refresh = { token: refresh, expiresAt: this.now() + this.settings.refresh_token_lifetime_s * 1000 };
    this.refreshTokens.set(refresh, oa);
    try {
      this.stateChanged(true);
    } catch (err) {
      // Not stored, so not issued: the old refresh token stays the valid one, as if the request never came.
      this.refreshTokens.delete(refresh);
      this.accessTokens.delete(access);
      oa.accessTokens.delete(access);
      oa.refresh = previous;
      if (previous) this.refreshTokens.set(previous.token, oa);
      throw err;
    }
    this.counters.tokensIssued++;
    return { access_token: access, refresh_token: refresh, expires_in: String(this.settings.access_token_lifetime_s) };
  }

  private stateChanged(urgent: boolean): void {
    if (this.onStateChange) this.onStateChange(urgent);
  }

  /** POST /v4/oa/access_token. `form` is the parsed x-www-form-urlencoded body. */
  token(secretKey: string | undefined, form: Record<string, string> | null): OAuthErrorBody | { access_token: string; refresh_token: string; expires_in: string } {
    const reject = (e: OAuthErrorBody): OAuthErrorBody => {
      this.counters.tokenRejected++;
      return e;
    };
    if (!form) return reject(OAUTH_ERRORS.invalidRequest);
    const appId = form.app_id;
    if (!appId) return reject(OAUTH_ERRORS.invalidAppId);
    const secret = this.apps.get(appId);
    if (secret === undefined) return reject(OAUTH_ERRORS.invalidAppId);
    if (secretKey !== secret) return reject(OAUTH_ERRORS.invalidSecretKey);
    const grant = form.grant_type;
    if (grant === 'refresh_token') {
      const rt = form.refresh_token;
      if (!rt) return reject(OAUTH_ERRORS.invalidRequest);
      const oa = this.refreshTokens.get(rt);
      if (!oa || oa.app_id !== appId || !oa.refresh || oa.refresh.token !== rt) return reject(OAUTH_ERRORS.invalidRefreshToken);
      if (oa.refresh.expiresAt <= this.now()) {
        this.refreshTokens.delete(rt);
        oa.refresh = null;
        this.stateChanged(false);
        return reject(OAUTH_ERRORS.invalidRefreshToken);
      }
      return this.issuePair(oa);
    }
    if (grant === 'authorization_code') {
      const code = form.code;
      if (!code) return reject(OAUTH_ERRORS.invalidRequest);
      const rec = this.codes.get(code);
      if (!rec || rec.oa.app_id !== appId) return reject(OAUTH_ERRORS.invalidCode);
      this.codes.delete(code);
      if (rec.expiresAt <= this.now()) return reject(OAUTH_ERRORS.invalidCode);
      if (rec.codeChallenge !== null) {
        const verifier = form.code_verifier ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== rec.codeChallenge) return reject(OAUTH_ERRORS.invalidCodeVerifier);
      }
      return this.issuePair(rec.oa);
    }
    return reject(OAUTH_ERRORS.invalidRequest);
  }

  /** Resolves the `access_token` header; returns the OA or the -124 / -1241 error body. */
  auth(token: string | undefined, proof: string | undefined): OaState | ZnsErrorBody {
    if (!token) {
      this.counters.invalidAccessToken++;
      return znsError(-124);
    }
    const rec = this.accessTokens.get(token);
    if (!rec || rec.expiresAt <= this.now()) {
      this.counters.invalidAccessToken++;
      return znsError(-124);
    }
    if (proof !== undefined) {
      if (rec.proof === null) rec.proof = createHmac('sha256', rec.oa.app_secret).update(token).digest('hex');
      if (proof.toLowerCase() !== rec.proof) return znsError(-1241);
    }
    return rec.oa;
  }

  // ---------------------------------------------------------------- sending

  private quotaRoll(oa: OaState, now: number): void {
    const day = vietnamDay(now);
    if (day !== oa.day) {
      oa.day = day;
      oa.used = 0;
    }
  }

  /** First matching rule in seed order. Phone sends match `phones`/`suffix`; hashphone sends match `hash_phones`. */
  private ruleFor(phone: string | null, hash: string): CompiledRule | null {
    for (const r of this.rules) {
      if (phone !== null) {
        if (r.phones !== null && r.phones.has(phone)) return r;
        if (r.suffix !== null && phone.endsWith(r.suffix)) return r;
      } else if (r.hashes !== null && r.hashes.has(hash)) return r;
    }
    return null;
  }

  private normalizePhone(v: unknown): string | null {
    if (typeof v === 'string') {
      if (PHONE_STRICT.test(v)) return v;
      if (this.settings.phone_format === 'lenient') {
        const t = v.replace(/[\s.-]/g, '');
        if (/^\+84\d{9}$/.test(t)) return t.slice(1);
        if (/^0\d{9}$/.test(t)) return `84${t.slice(1)}`;
        if (/^\d{9}$/.test(t)) return `84${t}`;
        if (PHONE_STRICT.test(t)) return t;
      }
      return null;
    }
    if (typeof v === 'number' && this.settings.phone_format === 'lenient') return this.normalizePhone(String(v));
    return null;
  }

  /** 0 when template_data is acceptable, else the ZNS error code. */
  private checkParams(tpl: TemplateState, data: unknown, rsa: RsaKey | null): number {
    if (!isObj(data)) return tpl.params.length === 0 && (data === undefined || data === null) ? 0 : -111;
    for (const p of tpl.params) {
      const v = data[p.name];
      if (v === undefined || v === null || v === '') {
        if (p.required) return -1122;
        if (v === null && !p.acceptNull) return -1124;
        continue;
      }
      let s: string;
      if (typeof v === 'string') s = v;
      else if (typeof v === 'number' && Number.isFinite(v)) s = String(v);
      else return -1124;
      if (rsa) {
        const mode = this.settings.rsa_template_data;
        if (mode === 'encrypted' || (mode === 'auto' && looksLikeCiphertext(s, rsa.modulusBytes))) {
          const plain = oaepDecrypt(rsa, s);
          if (!plain) return -123;
          s = plain.toString('utf8');
        }
      }
      let len = s.length;
      if (len > p.max || len < p.min * 2) len = countChars(s);
      if (len > p.max || len < p.min) return -1121;
    }
    return 0;
  }

  /** One send (normal / hashphone / RSA / development mode). */
  send(kind: SendKind, token: string | undefined, proof: string | undefined, body: unknown, forceDev = false): SendResult {
    this.counters.sendsReceived++;
    const trackingRaw = isObj(body) ? body.tracking_id : undefined;
    const tracking = typeof trackingRaw === 'string' ? trackingRaw : typeof trackingRaw === 'number' ? String(trackingRaw) : null;
    const auth = this.auth(token, proof);
    if (!('oa_id' in auth)) return this.reject(auth, null, tracking);
    const oa = auth;
    if (!isObj(body)) return this.reject(znsError(-122), oa, tracking);

    // recipient
    let phone: string | null = null;
    let hash = '';
    if (kind === 'phone') {
      phone = this.normalizePhone(body.phone);
      if (phone === null) return this.reject(znsError(-108), oa, tracking);
    } else if (kind === 'hash') {
      const h = body.hash_phone;
      if (typeof h !== 'string' || !HASH_PHONE.test(h)) return this.reject(znsError(-108), oa, tracking);
      hash = h.toLowerCase();
    } else {
      if (!oa.rsa) return this.reject(znsError(-128), oa, tracking);
      const c = body.rsa_phone;
      if (typeof c !== 'string') return this.reject(znsError(-108), oa, tracking);
      const plain = oaepDecrypt(oa.rsa, c);
      if (!plain) return this.reject(znsError(-123), oa, tracking);
      phone = this.normalizePhone(plain.toString('utf8'));
      if (phone === null) return this.reject(znsError(-108), oa, tracking);
    }

    // template
    const tid = body.template_id;
    const tpl = typeof tid === 'string' || typeof tid === 'number' ? this.templates.get(String(tid)) : undefined;
    if (!tpl) return this.reject(znsError(-109), oa, tracking);
    if (tpl.oa !== oa) return this.reject(znsError(-117), oa, tracking);
    if (tpl.status !== 'ENABLE') return this.reject(znsError(tpl.status === 'DISABLE' && tpl.quality === 'LOW' ? -146 : -131), oa, tracking);

    // mode and sending_mode
    const mode = body.mode;
    if (mode !== undefined && mode !== 'development' && mode !== 'production') return this.reject(znsError(-132), oa, tracking);
    const dev = forceDev || mode === 'development';
    let sendingMode = '1';
    const sm = body.sending_mode;
    if (sm !== undefined && sm !== null) {
      sendingMode = String(sm);
      if (sendingMode !== '1' && sendingMode !== '3') return this.reject(znsError(-161), oa, tracking);
      if (sendingMode === '3') {
        if (!oa.allowMode3) return this.reject(znsError(-120), oa, tracking);
        if (tpl.template_tag === 'TRANSACTION' || tpl.template_tag === 'CUSTOMER_CARE' || tpl.template_tag === 'OTP' || tpl.template_tag === 'IN_TRANSACTION') {
          return this.reject(znsError(-162), oa, tracking);
        }
      }
    }
    if (dev && !(phone !== null ? oa.devAdmins.has(phone) : oa.devAdminHashes.has(hash))) return this.reject(znsError(-127), oa, tracking);

    // params, tracking id
    const paramError = this.checkParams(tpl, body.template_data, kind === 'rsa' ? oa.rsa : null);
    if (paramError !== 0) return this.reject(znsError(paramError), oa, tracking);
    if (trackingRaw !== undefined && trackingRaw !== null && (tracking === null || tracking.length > 48)) return this.reject(znsError(-153), oa, tracking);

    // recipient rules
    const rule = this.rules.length > 0 ? this.ruleFor(phone, hash) : null;
    if (rule !== null && rule.outcome === 'error') return this.reject(znsError(rule.error), oa, tracking);

    // quota
    const now = this.now();
    if (!dev) {
      this.quotaRoll(oa, now);
      if (sendingMode !== '3') {
        if (oa.used >= oa.daily_quota) return this.reject(znsError(-144), oa, tracking);
      }
      oa.used++;
    }

    // accepted
    const msgId = this.ids.next10();
    const rec: MessageRecord = {
      id: msgId,
      oa,
      rcpt: phone !== null && kind !== 'hash' ? phone : hash,
      phone,
      tid: tracking ?? '',
      sent: now,
      dlv: 0,
      never: rule !== null && rule.outcome === 'never',
    };
    this.storeMessage(rec);
    if (this.durableSends) {
      try {
        this.stateChanged(true);
      } catch (err) {
        // Not stored, so not accepted: as if the request never came (the client gets an HTTP 500).
        this.messages.delete(msgId);
        if (!dev) oa.used--;
        throw err;
      }
    } else this.stateChanged(false);
    if (!rec.never) {
      const delay = rule !== null && rule.delay !== null ? rule.delay : this.settings.events.delay_ms;
      this.scheduler.after(delay, () => this.deliver(rec));
    }
    this.counters.sendsAccepted++;
    if (tracking !== null && tracking !== '') {
      const n = (this.trackingCounts.get(tracking) ?? 0) + 1;
      this.trackingCounts.set(tracking, n);
      if (n === 1 && this.trackingCounts.size > this.settings.message_retention) {
        const oldest = this.trackingCounts.keys().next();
        if (!oldest.done) this.trackingCounts.delete(oldest.value);
      }
      if (n === 2) this.counters.duplicateTrackingIds++;
      if (n >= 2) this.counters.duplicateAccepts++;
    }
    const sentTime = String(now);
    let data: object;
    if (dev || kind === 'rsa') data = { msg_id: msgId, sent_time: sentTime };
    else {
      const remaining = Math.max(0, oa.daily_quota - oa.used);
      data = { msg_id: msgId, sent_time: sentTime, sending_mode: sendingMode, quota: { dailyQuota: oa.dailyStr, remainingQuota: String(remaining) } };
    }
    return { body: { error: 0, message: 'Success', data }, meta: { oa_id: oa.oa_id, tracking_id: tracking, accepted: true, code: 0 } };
  }

  private reject(err: ZnsErrorBody, oa: OaState | null, tracking: string | null): SendResult {
    this.counters.sendsRejected++;
    const k = String(err.error);
    this.counters.byError[k] = (this.counters.byError[k] ?? 0) + 1;
    return { body: err, meta: { oa_id: oa ? oa.oa_id : null, tracking_id: tracking, accepted: false, code: err.error } };
  }

  private storeMessage(rec: MessageRecord): void {
    this.messages.set(rec.id, rec);
    if (this.messages.size > this.settings.message_retention) {
      const oldest = this.messages.keys().next();
      if (!oldest.done) this.messages.delete(oldest.value);
    }
  }

  private deliver(rec: MessageRecord): void {
    rec.dlv = this.now();
    this.stateChanged(false);
    this.counters.delivered++;
    this.events.emit({
      app_id: rec.oa.app_id,
      oa_id: rec.oa.oa_id,
      oa_secret_key: rec.oa.oa_secret_key,
      recipient: rec.rcpt,
      msg_id: rec.id,
      delivery_time: rec.dlv,
      tracking_id: rec.tid,
    });
  }

  // ---------------------------------------------------------------- reads

  quotaBody(oa: OaState): SuccessBody<Record<string, string | number | null>> {
    this.quotaRoll(oa, this.now());
    const p = oa.promotion;
    return {
      error: 0,
      message: 'success',
      data: {
        dailyQuota: oa.dailyStr,
        remainingQuota: String(Math.max(0, oa.daily_quota - oa.used)),
        dailyQuotaPromotion: p ? String(p.daily_quota) : null,
        remainingQuotaPromotion: p ? String(p.daily_quota) : null,
        monthlyPromotionQuota: p ? p.monthly_quota : null,
        remainingMonthlyPromotionQuota: p ? p.monthly_quota : null,
        estimatedNextMonthPromotionQuota: p ? (p.estimated_next_month ?? p.monthly_quota) : null,
      },
    };
  }

  templateList(oa: OaState, query: Record<string, string | undefined>): object {
    const offset = parseNonNegInt(query.offset);
    const limit = parseNonNegInt(query.limit);
    if (offset === null || limit === null || limit < 1 || limit > 100) return znsError(-132);
    let statusFilter: TemplateStatus | null = null;
    if (query.status !== undefined && query.status !== '') {
      const s = parseNonNegInt(query.status);
      const map: Record<number, TemplateStatus> = { 1: 'ENABLE', 2: 'PENDING_REVIEW', 3: 'REJECT', 4: 'DISABLE', 5: 'DELETE' };
      if (s === null || !map[s]) return { error: -132, message: 'Invalid status', data: null };
      statusFilter = map[s] as TemplateStatus;
    }
    const all: TemplateState[] = [];
    for (const t of this.templates.values()) {
      if (t.oa === oa && (statusFilter === null ? t.status !== 'DELETE' : t.status === statusFilter)) all.push(t);
    }
    all.sort((a, b) => b.created_time - a.created_time || b.idNum - a.idNum);
    const page = all.slice(offset, offset + limit).map((t) => ({
      templateId: t.idNum,
      templateName: t.name,
      createdTime: t.created_time,
      status: t.status,
      templateQuality: t.quality,
    }));
    return { error: 0, message: 'Success', data: page, metadata: { total: all.length } };
  }

  templateInfo(oa: OaState, templateId: string | undefined): object {
    const t = templateId ? this.templates.get(templateId) : undefined;
    if (!t) return znsError(-109);
    if (t.oa !== oa) return znsError(-117);
    const data: Record<string, unknown> = {
      templateId: t.idNum,
      templateName: t.name,
      status: t.status,
      reason: t.reason,
      listParams: t.params.map((p) => ({ name: p.name, require: p.required, type: p.type, maxLength: p.max, minLength: p.min, acceptNull: p.acceptNull })),
      listButtons: t.buttons.map((b) => ({ type: b.type, title: b.title, content: b.content })),
      timeout: t.timeout_ms,
      previewUrl: t.preview_url,
      templateQuality: t.quality,
      templateTag: t.template_tag,
      price: t.price,
    };
    if (t.price_sdt !== undefined) data.price_sdt = t.price_sdt;
    if (t.price_uid !== undefined) data.price_uid = t.price_uid;
    return { error: 0, message: 'Success', data };
  }

  messageStatus(oa: OaState, messageId: string | undefined, phone: string | undefined): object {
    if (!messageId || !MSG_ID.test(messageId)) return znsError(-107);
    const m = this.messages.get(messageId);
    if (!m || m.oa !== oa || (phone !== undefined && phone !== '' && m.phone !== null && this.normalizePhone(phone) !== m.phone)) {
      return { error: 0, message: 'Success', data: { delivery_time: null, message: 'The message does not exist', status: -1 } };
    }
    if (m.dlv > 0) {
      return { error: 0, message: 'Success', data: { delivery_time: String(m.dlv), message: "The message was delivered to the user's phone", status: 1 } };
    }
    return { error: 0, message: 'Success', data: { delivery_time: null, message: 'The message was sent to Zalo but has not been delivered to the user yet', status: 0 } };
  }

  rsaKeyGet(oa: OaState): object {
    if (!oa.rsa) return znsError(-142);
    return { error: 0, message: 'Success', data: { public_key: this.publicKeyText(oa.rsa) } };
  }

  async rsaKeyGen(oa: OaState): Promise<object> {
    if (oa.rsa || oa.rsaGenerating) return znsError(-143);
    oa.rsaGenerating = true;
    try {
      oa.rsa = await generateRsaKey(this.settings.rsa_key_bits);
      this.stateChanged(true);
    } catch {
      oa.rsa = null;
      return znsError(-129);
    } finally {
      oa.rsaGenerating = false;
    }
    return { error: 0, message: 'Success', data: { public_key: this.publicKeyText(oa.rsa) } };
  }

  private publicKeyText(k: RsaKey): string {
    return this.settings.rsa_public_key_encoding === 'pem' ? k.publicKeyPem : k.publicKeyDerBase64;
  }

  // ---------------------------------------------------------------- received log

  logReceived(e: Omit<ReceivedEntry, 'seq'>): void {
    const limit = this.settings.received_limit;
    if (limit === 0) {
      this.receivedDropped++;
      return;
    }
    const entry: ReceivedEntry = { seq: ++this.receivedSeq, ...e };
    if (this.received.length < limit) this.received.push(entry);
    else {
      this.received[this.receivedNext] = entry;
      this.receivedNext = (this.receivedNext + 1) % limit;
      this.receivedDropped++;
    }
  }

  countFault(kind: 'http_5xx' | 'timeout' | 'unknown_error' | 'outage'): void {
    if (kind === 'http_5xx') this.counters.faults5xx++;
    else if (kind === 'timeout') this.counters.faultsTimeout++;
    else if (kind === 'unknown_error') this.counters.faultsUnknown++;
    else this.counters.faultsOutage++;
  }

  // ---------------------------------------------------------------- control

  private oaOr404(oaId: string): OaState {
    const oa = this.oas.get(oaId);
    if (!oa) throw new ControlError(404, `unknown oa_id ${oaId}`);
    return oa;
  }

  receivedEntries(filter: ReceivedFilter = {}): ReceivedEntry[] {
    const all = this.received.length < this.settings.received_limit || this.receivedNext === 0 ? this.received : [...this.received.slice(this.receivedNext), ...this.received.slice(0, this.receivedNext)];
    const out: ReceivedEntry[] = [];
    const limit = filter.limit ?? Infinity;
    for (const e of all) {
      if (filter.since_seq !== undefined && e.seq <= filter.since_seq) continue;
      if (filter.tracking_id !== undefined && e.tracking_id !== filter.tracking_id) continue;
      if (filter.path !== undefined && e.path !== filter.path) continue;
      if (filter.oa_id !== undefined && e.oa_id !== filter.oa_id) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return out;
  }

  clearReceived(): void {
    this.received = [];
    this.receivedNext = 0;
    this.receivedDropped = 0;
    this.trackingCounts = new Map();
    this.counters.duplicateTrackingIds = 0;
    this.counters.duplicateAccepts = 0;
  }

  setFaults(patch: unknown): Faults {
    this.faults = mergeFaults(this.faults, patch);
    this.faultsOn = faultsActive(this.faults);
    return { ...this.faults };
  }

  clearFaults(): Faults {
    this.faults = { ...DEFAULT_FAULTS };
    this.faultsOn = false;
    return { ...this.faults };
  }

  quotaView(oa: OaState): QuotaView {
    this.quotaRoll(oa, this.now());
    return {
      oa_id: oa.oa_id,
      daily_quota: oa.daily_quota,
      used_today: oa.used,
      remaining_quota: Math.max(0, oa.daily_quota - oa.used),
      vietnam_day: vietnamDayString(oa.day),
    };
  }

  setQuota(oaId: string, patch: unknown): QuotaView {
    const oa = this.oaOr404(oaId);
    if (!isObj(patch)) throw new ControlError(400, 'body must be a JSON object');
    const dq = patch.daily_quota;
    const rq = patch.remaining_quota;
    const used = patch.used_today;
    for (const [k, v] of [['daily_quota', dq], ['remaining_quota', rq], ['used_today', used]] as const) {
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0)) throw new ControlError(400, `${k} must be a non-negative integer`);
    }
    for (const k of Object.keys(patch)) {
      if (!['daily_quota', 'remaining_quota', 'used_today'].includes(k)) throw new ControlError(400, `unknown field ${k}`);
    }
    this.quotaRoll(oa, this.now());
    if (typeof dq === 'number') {
      oa.daily_quota = dq;
      oa.dailyStr = String(dq);
    }
    if (typeof used === 'number') oa.used = used;
    if (typeof rq === 'number') oa.used = Math.max(0, oa.daily_quota - rq);
    this.stateChanged(false);
    return this.quotaView(oa);
  }

  templateView(t: TemplateState): TemplateView {
    return {
      template_id: t.template_id,
      oa_id: t.oa.oa_id,
      name: t.name,
      status: t.status,
      reason: t.reason,
      quality: t.quality,
      template_type: t.template_type,
      template_tag: t.template_tag,
      price: t.price,
      params: t.params.map((p) => ({ name: p.name, type: p.type, required: p.required, min_length: p.min, max_length: p.max, accept_null: p.acceptNull })),
    };
  }

  updateTemplate(id: string, patch: unknown): TemplateView {
    const t = this.templates.get(id);
    if (!t) throw new ControlError(404, `unknown template_id ${id}`);
    if (!isObj(patch)) throw new ControlError(400, 'body must be a JSON object');
    const next = { ...t };
    for (const [k, v] of Object.entries(patch)) {
      switch (k) {
        case 'status':
          if (typeof v !== 'string' || !TEMPLATE_STATUSES.includes(v as TemplateStatus)) throw new ControlError(400, `status must be one of ${TEMPLATE_STATUSES.join(', ')}`);
          next.status = v as TemplateStatus;
          break;
        case 'quality':
          if (v !== null && (typeof v !== 'string' || !TEMPLATE_QUALITIES.includes(v as TemplateQuality))) throw new ControlError(400, `quality must be null or one of ${TEMPLATE_QUALITIES.join(', ')}`);
          next.quality = v as TemplateQuality | null;
          break;
        case 'reason':
        case 'price':
        case 'name':
          if (typeof v !== 'string') throw new ControlError(400, `${k} must be a string`);
          next[k] = v;
          break;
        case 'params':
          if (!Array.isArray(v)) throw new ControlError(400, 'params must be an array');
          next.params = v.map((p, i) => {
            if (!isObj(p) || typeof p.name !== 'string' || typeof p.max_length !== 'number') throw new ControlError(400, `params[${i}] needs name and max_length`);
            return compileParam(p as unknown as SeedParam);
          });
          break;
        default:
          throw new ControlError(400, `unknown template field ${k}`);
      }
    }
    Object.assign(t, next);
    return this.templateView(t);
  }

  template(id: string): TemplateView | null {
    const t = this.templates.get(id);
    return t ? this.templateView(t) : null;
  }

  eventSettings(): EventSettings {
    return { ...this.settings.events, retry_delays_ms: [...this.settings.events.retry_delays_ms] };
  }

  setEvents(patch: unknown): EventSettings {
    try {
      this.settings.events = parseEventSettings(patch, 'events', this.settings.events);
    } catch (err) {
      throw new ControlError(400, (err as Error).message.replace(/^seed: /, ''));
    }
    return this.eventSettings();
  }

  setRecipientRules(rules: unknown): SeedRecipientRule[] {
    if (!Array.isArray(rules)) throw new ControlError(400, 'recipient_rules must be an array');
    let parsed: SeedRecipientRule[];
    try {
      parsed = rules.map((r, i) => parseRecipientRule(r, `recipient_rules[${i}]`));
    } catch (err) {
      throw new ControlError(400, (err as Error).message.replace(/^seed: /, ''));
    }
    this.rules = parsed.map(compileRule);
    return parsed;
  }

  /** Expires every access token of the OA now. Returns how many were valid. */
  expireAccessTokens(oaId: string): number {
    const oa = this.oaOr404(oaId);
    const now = this.now();
    let n = 0;
    for (const t of oa.accessTokens) {
      const rec = this.accessTokens.get(t);
      if (rec && rec.expiresAt > now) n++;
      this.accessTokens.delete(t);
    }
    oa.accessTokens.clear();
    this.stateChanged(true);
    return n;
  }

  /** Kills the OA's current refresh token (as if it expired or the OA admin revoked the app). */
  revokeRefreshToken(oaId: string): void {
    const oa = this.oaOr404(oaId);
    if (oa.refresh) this.refreshTokens.delete(oa.refresh.token);
    oa.refresh = null;
    this.stateChanged(true);
  }

  /** Sets a known refresh token for the OA (replacing the current one). */
  setRefreshToken(oaId: string, token: unknown): void {
    const oa = this.oaOr404(oaId);
    if (typeof token !== 'string' || token.length === 0) throw new ControlError(400, 'refresh_token must be a non-empty string');
    const other = this.refreshTokens.get(token);
    if (other && other !== oa) throw new ControlError(409, 'refresh_token belongs to another OA');
    if (oa.refresh) this.refreshTokens.delete(oa.refresh.token);
    oa.refresh = { token, expiresAt: this.now() + this.settings.refresh_token_lifetime_s * 1000 };
    this.refreshTokens.set(token, oa);
    this.stateChanged(true);
  }

  /** Issues an OAuth authorization code for the OA (what the consent redirect would carry). */
  issueAuthorizationCode(oaId: string, codeChallenge?: unknown): { code: string; oa_id: string; expires_in: number } {
    const oa = this.oaOr404(oaId);
    if (codeChallenge !== undefined && codeChallenge !== null && typeof codeChallenge !== 'string') throw new ControlError(400, 'code_challenge must be a string');
    const code = randomToken('sim-code-');
    this.codes.set(code, { oa, expiresAt: this.now() + this.settings.authorization_code_lifetime_s * 1000, codeChallenge: typeof codeChallenge === 'string' ? codeChallenge : null });
    return { code, oa_id: oa.oa_id, expires_in: this.settings.authorization_code_lifetime_s };
  }

  oaView(oaId: string): OaView {
    const oa = this.oaOr404(oaId);
    this.pruneAccessTokens(oa);
    return {
      ...this.quotaView(oa),
      name: oa.name,
      app_id: oa.app_id,
      oa_secret_key: oa.oa_secret_key,
      refresh_token: oa.refresh?.token ?? null,
      refresh_token_expires_at: oa.refresh?.expiresAt ?? null,
      access_tokens_valid: oa.accessTokens.size,
      rsa_key: oa.rsa !== null,
      allow_sending_mode_3: oa.allowMode3,
      dev_admins: [...oa.devAdmins],
    };
  }

  oaViews(): OaView[] {
    return [...this.oas.keys()].map((id) => this.oaView(id));
  }

  /** The RSA public key of the OA in both encodings (for tests and clients that need it out of band). */
  rsaPublicKey(oaId: string): { pem: string; der_base64: string } | null {
    const oa = this.oaOr404(oaId);
    return oa.rsa ? { pem: oa.rsa.publicKeyPem, der_base64: oa.rsa.publicKeyDerBase64 } : null;
  }

  message(msgId: string): MessageView | null {
    const m = this.messages.get(msgId);
    return m ? messageView(m) : null;
  }

  /** Every message the platform knows (what /message/status answers for), oldest first, optionally filtered. */
  messageList(filter: MessageFilter = {}): MessageView[] {
    const out: MessageView[] = [];
    for (const m of this.messages.values()) {
      if (filter.tracking_id !== undefined && m.tid !== filter.tracking_id) continue;
      if (filter.oa_id !== undefined && m.oa.oa_id !== filter.oa_id) continue;
      out.push(messageView(m));
    }
    return out;
  }

  eventAttempts(): EventAttempt[] {
    return this.events.attempts();
  }

  stats(): Stats {
    const byRoute: Record<string, number> = {};
    let total = 0;
    for (const [k, c] of this.routeCounters) {
      if (c.n > 0) byRoute[k] = c.n;
      total += c.n;
    }
    let pending = 0;
    let never = 0;
    for (const m of this.messages.values()) {
      if (m.never) never++;
      else if (m.dlv === 0) pending++;
    }
    const c = this.counters;
    return {
      started_at: this.startedAt,
      uptime_ms: this.now() - this.startedAt,
      requests: { total, by_route: byRoute },
      sends: {
        received: c.sendsReceived,
        accepted: c.sendsAccepted,
        rejected: c.sendsRejected,
        by_error: { ...c.byError },
        duplicate_tracking_ids: c.duplicateTrackingIds,
        duplicate_accepts: c.duplicateAccepts,
      },
      faults: { http_5xx: c.faults5xx, timeouts: c.faultsTimeout, unknown_errors: c.faultsUnknown, outage: c.faultsOutage },
      tokens: { issued: c.tokensIssued, token_requests_rejected: c.tokenRejected, invalid_access_token: c.invalidAccessToken },
      messages: { stored: this.messages.size, delivered: c.delivered, never_delivered: never, pending_delivery: pending },
      events: { ...this.events.stats },
      received_log: { size: this.received.length, limit: this.settings.received_limit, dropped: this.receivedDropped },
    };
  }

  /** Clears the received log, counters, event attempt log and faults. OAs, tokens, quotas and messages stay. */
  resetStats(): void {
    this.clearReceived();
    this.counters = this.freshCounters();
    for (const c of this.routeCounters.values()) c.n = 0;
    this.events.resetStats();
    this.events.clearLog();
  }

  // ---------------------------------------------------------------- state file

  /** What the state file keeps (see state.ts): tokens, quota, RSA keys and the most recent messages. */
  exportState(): PersistedState {
    const now = this.now();
    const oas = [...this.oas.values()].map((oa) => {
      const accessTokens: PersistedAccessToken[] = [];
      for (const token of oa.accessTokens) {
        const rec = this.accessTokens.get(token);
        if (rec && rec.expiresAt > now) accessTokens.push({ token, expires_at: rec.expiresAt });
      }
      return {
        oa_id: oa.oa_id,
        refresh_token: oa.refresh?.token ?? null,
        refresh_token_expires_at: oa.refresh?.expiresAt ?? null,
        access_tokens: accessTokens,
        daily_quota: oa.daily_quota,
        quota_day: oa.day,
        used_today: oa.used,
        rsa_private_key_pem: oa.rsa ? oa.rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() : null,
      };
    });
    const messages: PersistedMessage[] = [];
    let skip = this.messages.size - STATE_FILE_MESSAGE_LIMIT;
    for (const m of this.messages.values()) {
      if (skip-- > 0) continue;
      messages.push([m.id, m.oa.oa_id, m.rcpt, m.phone, m.tid, m.sent, m.dlv, m.never]);
    }
    return { version: STATE_FILE_VERSION, saved_at: now, oas, messages };
  }

  /**
   * Continues from a saved state: for every OA of the seed that the state knows, its tokens, quota and RSA
   * key replace the seed's; OAs the seed no longer has are ignored. Messages not yet delivered are delivered
   * `events.delay_ms` from now (their delivery was due while the simulator was down).
   */
  importState(state: PersistedState): void {
    const now = this.now();
    for (const saved of state.oas) {
      const oa = this.oas.get(saved.oa_id);
      if (!oa) continue;
      if (oa.refresh) this.refreshTokens.delete(oa.refresh.token);
      oa.refresh = null;
      if (saved.refresh_token !== null && saved.refresh_token_expires_at !== null) {
        oa.refresh = { token: saved.refresh_token, expiresAt: saved.refresh_token_expires_at };
        this.refreshTokens.set(saved.refresh_token, oa);
      }
      for (const token of oa.accessTokens) this.accessTokens.delete(token);
      oa.accessTokens.clear();
      for (const t of saved.access_tokens) {
        if (t.expires_at <= now) continue;
        this.accessTokens.set(t.token, { oa, expiresAt: t.expires_at, proof: null });
        oa.accessTokens.add(t.token);
      }
      oa.daily_quota = saved.daily_quota;
      oa.dailyStr = String(saved.daily_quota);
      oa.day = saved.quota_day;
      oa.used = saved.used_today;
      this.quotaRoll(oa, now);
      oa.rsa = saved.rsa_private_key_pem === null ? null : rsaKeyFromPem(saved.rsa_private_key_pem);
    }
    for (const [id, oaId, rcpt, phone, tid, sent, dlv, never] of state.messages) {
      const oa = this.oas.get(oaId);
      if (!oa) continue;
      const rec: MessageRecord = { id, oa, rcpt, phone, tid, sent, dlv, never };
      this.storeMessage(rec);
      if (dlv === 0 && !never) this.scheduler.after(this.settings.events.delay_ms, () => this.deliver(rec));
    }
  }

  private freshCounters() {
    return {
      sendsReceived: 0,
      sendsAccepted: 0,
      sendsRejected: 0,
      byError: {} as Record<string, number>,
      duplicateTrackingIds: 0,
      duplicateAccepts: 0,
      faults5xx: 0,
      faultsTimeout: 0,
      faultsUnknown: 0,
      faultsOutage: 0,
      tokensIssued: 0,
      tokenRejected: 0,
      invalidAccessToken: 0,
      delivered: 0,
    };
  }
}

function messageView(m: MessageRecord): MessageView {
  return {
    msg_id: m.id,
    oa_id: m.oa.oa_id,
    recipient: m.rcpt,
    tracking_id: m.tid,
    sent_time: m.sent,
    delivery_time: m.dlv > 0 ? m.dlv : null,
    status: m.dlv > 0 ? 1 : 0,
    never_delivered: m.never,
  };
}

function compileParam(p: SeedParam): CompiledParam {
  const required = p.required ?? true;
  return {
    name: p.name,
    type: p.type ?? 'STRING',
    required,
    min: p.min_length ?? 0,
    max: p.max_length,
    acceptNull: p.accept_null ?? !required,
  };
}

function compileRule(r: SeedRecipientRule): CompiledRule {
  return {
    suffix: r.suffix ?? null,
    phones: r.phones ? new Set(r.phones) : null,
    hashes: r.hash_phones ? new Set(r.hash_phones.map((h) => h.toLowerCase())) : null,
    outcome: r.result === 'error' ? 'error' : r.result === 'never_deliver' ? 'never' : 'deliver',
    error: r.error ?? -118,
    delay: r.delivery_delay_ms ?? null,
  };
}

function parseNonNegInt(v: string | undefined): number | null {
  if (v === undefined || !/^\d{1,9}$/.test(v)) return null;
  return Number(v);
}

function looksLikeCiphertext(s: string, modulusBytes: number): boolean {
  const padded = 4 * Math.ceil(modulusBytes / 3);
  const unpadded = Math.ceil((modulusBytes * 4) / 3);
  return s.length === padded || s.length === unpadded;
}
