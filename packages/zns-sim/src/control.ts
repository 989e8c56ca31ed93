/**
 * The control API: the same operations as a programmatic object (`createControl`) and as JSON routes under
 * /_control (`registerControlRoutes`). Tests use it to read what the simulator received and to change its
 * behaviour at run time. It is not part of ZNS and has no authentication: bind the simulator to loopback.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ControlError } from './control-error.ts';
import type { EventAttempt } from './events.ts';
import type { Faults } from './faults.ts';
import { oaView, oaViews, type OaView } from './platform/accounts.ts';
import { eventAttempts, eventSettings, setEventSettings } from './platform/event-settings.ts';
import { clearFaults, setFaults } from './platform/fault-settings.ts';
import { findMessage, listMessages, type MessageFilter, type MessageView } from './platform/messages.ts';
import { expireAccessTokens, issueAuthorizationCode, revokeRefreshToken, setRefreshToken } from './platform/oauth-control.ts';
import type { Platform } from './platform/platform-state.ts';
import { setQuota, type QuotaView } from './platform/quota.ts';
import { clearReceived, type ReceivedEntry, type ReceivedFilter } from './platform/received-log.ts';
import { setRecipientRules } from './platform/recipient-rules.ts';
import { rsaPublicKey } from './platform/rsa-keys.ts';
import { collectStats, resetStats, type Stats } from './platform/stats.ts';
import { findTemplate, updateTemplate, type TemplatePatch, type TemplateView } from './platform/template-control.ts';
import type { EventSettings, SeedRecipientRule } from './seed.ts';

export interface SimulatorControl {
  /** Every send request received (oldest first), optionally filtered. */
  received(filter?: ReceivedFilter): ReceivedEntry[];
  clearReceived(): void;
  stats(): Stats;
  /** Clears the received log, the counters and the event attempt log, and removes all faults. */
  reset(): void;
  getFaults(): Faults;
  /** Partial update; unknown fields or bad values throw. */
  setFaults(patch: Partial<Faults>): Faults;
  clearFaults(): Faults;
  oas(): OaView[];
  oa(oaId: string): OaView;
  getQuota(oaId: string): QuotaView;
  /** `daily_quota` changes the tier; `remaining_quota` or `used_today` set today's usage. */
  setQuota(oaId: string, patch: { daily_quota?: number; remaining_quota?: number; used_today?: number }): QuotaView;
  template(templateId: string): TemplateView | null;
  updateTemplate(templateId: string, patch: TemplatePatch): TemplateView;
  getEvents(): EventSettings;
  setEvents(patch: Partial<EventSettings>): EventSettings;
  eventAttempts(): EventAttempt[];
  setRecipientRules(rules: SeedRecipientRule[]): SeedRecipientRule[];
  /** Expires every access token of the OA now; returns how many were still valid. */
  expireAccessTokens(oaId: string): number;
  revokeRefreshToken(oaId: string): void;
  setRefreshToken(oaId: string, refreshToken: string): void;
  issueAuthorizationCode(oaId: string, codeChallenge?: string): { code: string; oa_id: string; expires_in: number };
  rsaPublicKey(oaId: string): { pem: string; der_base64: string } | null;
  message(msgId: string): MessageView | null;
  /**
   * Every message the platform knows, oldest first: those accepted since the start and, with a state file,
   * those it kept from before a restart (unlike `received`, which starts empty at each start).
   */
  messages(filter?: MessageFilter): MessageView[];
}

export function createControl(platform: Platform): SimulatorControl {
  return {
    received: (filter) => platform.received.find(filter),
    clearReceived: () => clearReceived(platform),
    stats: () => collectStats(platform),
    reset: () => {
      resetStats(platform);
      clearFaults(platform);
    },
    getFaults: () => ({ ...platform.faults }),
    setFaults: (patch) => setFaults(platform, patch),
    clearFaults: () => clearFaults(platform),
    oas: () => oaViews(platform),
    oa: (oaId) => oaView(platform, oaId),
    getQuota: (oaId) => {
      const v = oaView(platform, oaId);
      return { oa_id: v.oa_id, daily_quota: v.daily_quota, used_today: v.used_today, remaining_quota: v.remaining_quota, vietnam_day: v.vietnam_day };
    },
    setQuota: (oaId, patch) => setQuota(platform, oaId, patch),
    template: (id) => findTemplate(platform, id),
    updateTemplate: (id, patch) => updateTemplate(platform, id, patch),
    getEvents: () => eventSettings(platform),
    setEvents: (patch) => setEventSettings(platform, patch),
    eventAttempts: () => eventAttempts(platform),
    setRecipientRules: (rules) => setRecipientRules(platform, rules),
    expireAccessTokens: (oaId) => expireAccessTokens(platform, oaId),
    revokeRefreshToken: (oaId) => revokeRefreshToken(platform, oaId),
    setRefreshToken: (oaId, token) => setRefreshToken(platform, oaId, token),
    issueAuthorizationCode: (oaId, challenge) => issueAuthorizationCode(platform, oaId, challenge),
    rsaPublicKey: (oaId) => rsaPublicKey(platform, oaId),
    message: (msgId) => findMessage(platform, msgId),
    messages: (filter) => listMessages(platform, filter),
  };
}

function jsonBody(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  if (b === undefined || b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b) || b.constructor !== Object) throw new ControlError(400, 'body must be a JSON object');
  return b as Record<string, unknown>;
}

function param(req: FastifyRequest, name: string): string {
  return (req.params as Record<string, string>)[name] ?? '';
}

function intQuery(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new ControlError(400, `${name} must be a non-negative integer`);
  return Number(v);
}

export function registerControlRoutes(app: FastifyInstance, platform: Platform): void {
  const c = createControl(platform);
  const P = '/_control';

  app.get(`${P}/received`, async (req) => {
    const q = req.query as Record<string, string | undefined>;
    const filter: ReceivedFilter = {};
    if (q.tracking_id !== undefined) filter.tracking_id = q.tracking_id;
    if (q.path !== undefined) filter.path = q.path;
    if (q.oa_id !== undefined) filter.oa_id = q.oa_id;
    const since = intQuery(q.since_seq, 'since_seq');
    if (since !== undefined) filter.since_seq = since;
    const limit = intQuery(q.limit, 'limit');
    if (limit !== undefined) filter.limit = limit;
    const entries = c.received(filter);
    return { count: entries.length, entries };
  });
  app.delete(`${P}/received`, async (_req, reply) => {
    c.clearReceived();
    return reply.code(204).send();
  });

  app.get(`${P}/stats`, async () => c.stats());
  app.post(`${P}/reset`, async (_req, reply) => {
    c.reset();
    return reply.code(204).send();
  });

  app.get(`${P}/faults`, async () => c.getFaults());
  app.put(`${P}/faults`, async (req) => c.setFaults(jsonBody(req) as Partial<Faults>));
  app.delete(`${P}/faults`, async () => c.clearFaults());

  app.get(`${P}/oas`, async () => c.oas());
  app.get(`${P}/oas/:oa_id`, async (req) => c.oa(param(req, 'oa_id')));
  app.get(`${P}/oas/:oa_id/quota`, async (req) => c.getQuota(param(req, 'oa_id')));
  app.put(`${P}/oas/:oa_id/quota`, async (req) => c.setQuota(param(req, 'oa_id'), jsonBody(req)));
  app.get(`${P}/oas/:oa_id/rsa-key`, async (req, reply) => {
    const k = c.rsaPublicKey(param(req, 'oa_id'));
    return k ?? reply.code(404).send({ error: 'the OA has no RSA key' });
  });
  app.post(`${P}/oas/:oa_id/authorization-code`, async (req) => {
    const b = jsonBody(req);
    if (b.code_challenge !== undefined && typeof b.code_challenge !== 'string') throw new ControlError(400, 'code_challenge must be a string');
    return c.issueAuthorizationCode(param(req, 'oa_id'), b.code_challenge as string | undefined);
  });
  app.put(`${P}/oas/:oa_id/refresh-token`, async (req, reply) => {
    c.setRefreshToken(param(req, 'oa_id'), jsonBody(req).refresh_token as string);
    return reply.code(204).send();
  });

  app.post(`${P}/tokens/:oa_id/expire`, async (req) => ({ expired: c.expireAccessTokens(param(req, 'oa_id')) }));
  app.post(`${P}/tokens/:oa_id/revoke-refresh`, async (req, reply) => {
    c.revokeRefreshToken(param(req, 'oa_id'));
    return reply.code(204).send();
  });

  app.get(`${P}/templates/:id`, async (req, reply) => c.template(param(req, 'id')) ?? reply.code(404).send({ error: 'unknown template_id' }));
  app.put(`${P}/templates/:id`, async (req) => c.updateTemplate(param(req, 'id'), jsonBody(req) as TemplatePatch));

  app.get(`${P}/events`, async () => c.getEvents());
  app.put(`${P}/events`, async (req) => c.setEvents(jsonBody(req) as Partial<EventSettings>));
  app.get(`${P}/events/attempts`, async () => c.eventAttempts());

  app.put(`${P}/recipient-rules`, async (req) => {
    const b = req.body;
    return c.setRecipientRules((Array.isArray(b) ? b : jsonBody(req).recipient_rules) as SeedRecipientRule[]);
  });

  app.get(`${P}/messages`, async (req) => {
    const q = req.query as Record<string, string | undefined>;
    const filter: MessageFilter = {};
    if (q.tracking_id !== undefined) filter.tracking_id = q.tracking_id;
    if (q.oa_id !== undefined) filter.oa_id = q.oa_id;
    const messages = c.messages(filter);
    return { count: messages.length, messages };
  });
  app.get(`${P}/messages/:msg_id`, async (req, reply) => c.message(param(req, 'msg_id')) ?? reply.code(404).send({ error: 'unknown msg_id' }));
}
