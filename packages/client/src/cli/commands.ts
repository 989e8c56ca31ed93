/** The one-request commands: send, get, list, cancel, templates, oas, quota. */
import type { ListMessagesQuery, MessageRecord, MessageStatus, SendMessageRequest, SendMode, TemplateData, TemplateStatus } from '../types.ts';
import { EXIT_OK, UsageError, type CliContext } from './context.ts';
import { keyValues, table } from './output.ts';

/** Parsed flags, as node:util parseArgs returns them. */
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const MESSAGE_STATUSES: readonly MessageStatus[] = ['queued', 'sending', 'sent', 'delivered', 'failed'];
const TEMPLATE_STATUSES: readonly TemplateStatus[] = ['ENABLE', 'PENDING_REVIEW', 'REJECT', 'DISABLE', 'DELETE'];

export function stringOption(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function requiredOption(values: Values, name: string): string {
  const value = stringOption(values, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function integerOption(values: Values, name: string, min: number, max: number): number | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return Number(value);
}

function oneOf<T extends string>(values: Values, name: string, allowed: readonly T[]): T | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError(`expected exactly one ${what}`);
  return positionals[0];
}

/** `--param name=value` (repeatable) and `--data '{"name":"value"}'`, merged; values stay strings. */
function templateData(values: Values): TemplateData | undefined {
  const data: TemplateData = {};
  const json = stringOption(values, 'data');
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new UsageError('--data must be a JSON object of strings');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--data must be a JSON object of strings');
    for (const [name, value] of Object.entries(parsed)) {
      if (typeof value !== 'string') throw new UsageError(`--data: the value of ${name} must be a string`);
      data[name] = value;
    }
  }
  const params = values.param;
  for (const pair of Array.isArray(params) ? params : []) {
    if (typeof pair !== 'string') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--param must be name=value (got ${pair})`);
    data[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return Object.keys(data).length > 0 || json !== undefined ? data : undefined;
}

export async function sendCommand(ctx: CliContext, _positionals: string[], values: Values): Promise<number> {
  const body: SendMessageRequest = { template_id: requiredOption(values, 'template'), phone: requiredOption(values, 'phone') };
  const data = templateData(values);
  if (data) body.template_data = data;
  const trackingId = stringOption(values, 'tracking-id');
  if (trackingId !== undefined) body.tracking_id = trackingId;
  const sendAt = stringOption(values, 'send-at');
  if (sendAt !== undefined) body.send_at = sendAt;
  const mode = oneOf<SendMode>(values, 'mode', ['plain', 'hashphone']);
  if (mode) body.mode = mode;
  const sent = await ctx.client().messages.send(body);
  ctx.print(sent, () =>
    sent.scheduled_at
      ? `scheduled ${sent.msg_id} (tracking_id ${sent.tracking_id}) for ${sent.scheduled_at}\n`
      : `queued ${sent.msg_id} (tracking_id ${sent.tracking_id})\n`,
  );
  return EXIT_OK;
}

function messageDetails(message: MessageRecord): string {
  return keyValues([
    ['msg_id', message.msg_id],
    ['tracking_id', message.tracking_id],
    ['status', message.status],
    ['phone', message.phone],
    ['carrier', message.carrier],
    ['template_id', message.template_id],
    ['oa_id', message.oa_id],
    ['source', message.source],
    ['provider_msg_id', message.provider_msg_id],
    ['error_code', message.error_code],
    ['error_message', message.error_message],
    ['error_reason', message.error_reason],
    ['scheduled_at', message.scheduled_at],
    ['created_at', message.created_at],
    ['sent_at', message.sent_at],
    ['delivered_at', message.delivered_at],
    ['failed_at', message.failed_at],
  ]);
}

export async function getCommand(ctx: CliContext, positionals: string[]): Promise<number> {
  const message = await ctx.client().messages.get(onePositional(positionals, 'message id'));
  ctx.print(message, () => messageDetails(message));
  return EXIT_OK;
}

function listQuery(values: Values): ListMessagesQuery {
  const query: ListMessagesQuery = {};
  const status = oneOf(values, 'status', MESSAGE_STATUSES);
  if (status) query.status = status;
  const filters: [keyof ListMessagesQuery, string][] = [
    ['phone', 'phone'],
    ['tracking_id', 'tracking-id'],
    ['template_id', 'template'],
    ['oa_id', 'oa'],
    ['from', 'from'],
    ['to', 'to'],
  ];
  for (const [field, flag] of filters) {
    const value = stringOption(values, flag);
    if (value !== undefined) (query as Record<string, string>)[field] = value;
  }
  const limit = integerOption(values, 'limit', 1, 200);
  if (limit !== undefined) query.limit = limit;
  const offset = integerOption(values, 'offset', 0, Number.MAX_SAFE_INTEGER);
  if (offset !== undefined) query.offset = offset;
  return query;
}

function messagesTable(messages: MessageRecord[]): string {
  return table(
    ['MSG_ID', 'STATUS', 'PHONE', 'TEMPLATE', 'TRACKING_ID', 'CREATED_AT', 'ERROR'],
    messages.map((m) => [m.msg_id, m.status, m.phone, m.template_id, m.tracking_id, m.created_at, m.error_code === null ? null : `${m.error_code} ${m.error_message ?? ''}`.trim()]),
  );
}

export async function listCommand(ctx: CliContext, _positionals: string[], values: Values): Promise<number> {
  const query = listQuery(values);
  if (values.all === true) {
    // Every page; --limit then sets the page size.
    const messages: MessageRecord[] = [];
    const { limit, ...filters } = query;
    for await (const message of ctx.client().messages.iterate(filters, { pageSize: limit ?? 200 })) messages.push(message);
    ctx.print({ messages, count: messages.length }, () => `${messagesTable(messages)}${messages.length} messages\n`);
    return EXIT_OK;
  }
  const page = await ctx.client().messages.list(query);
  ctx.print(page, () => {
    const more = page.has_more ? ` (more: --offset ${page.offset + page.count}, or --all)` : '';
    return `${messagesTable(page.messages)}${page.count} messages from offset ${page.offset}${more}\n`;
  });
  return EXIT_OK;
}

export async function cancelCommand(ctx: CliContext, positionals: string[]): Promise<number> {
  const result = await ctx.client().messages.cancel(onePositional(positionals, 'message id'));
  ctx.print(result, () => `cancelled ${result.msg_id} (deleted and refunded)\n`);
  return EXIT_OK;
}

export async function templatesCommand(ctx: CliContext, _positionals: string[], values: Values): Promise<number> {
  const status = oneOf(values, 'status', TEMPLATE_STATUSES);
  const oaId = stringOption(values, 'oa');
  const list = await ctx.client().templates.list({ ...(status ? { status } : {}), ...(oaId ? { oa_id: oaId } : {}) });
  ctx.print(list, () =>
    table(
      ['TEMPLATE_ID', 'STATUS', 'NAME', 'OA_ID', 'PRICE', 'PARAMS (* required, min..max)'],
      list.templates.map((t) => [
        t.template_id,
        t.status,
        t.name,
        t.oa_id,
        t.price,
        t.params.map((p) => `${p.name}${p.required ? '*' : ''} ${p.min_length}..${p.max_length}`).join(', '),
      ]),
    ),
  );
  return EXIT_OK;
}

export async function oasCommand(ctx: CliContext): Promise<number> {
  const list = await ctx.client().oas.list();
  ctx.print(list, () => table(['OA_ID', 'NAME'], list.oas.map((oa) => [oa.oa_id, oa.name])));
  return EXIT_OK;
}

export async function quotaCommand(ctx: CliContext, _positionals: string[], values: Values): Promise<number> {
  const oaId = stringOption(values, 'oa');
  const list = await ctx.client().quota.get(oaId ? { oa_id: oaId } : {});
  ctx.print(list, () =>
    table(
      ['OA_ID', 'NAME', 'DAILY_QUOTA', 'USED', 'REMAINING', 'RESET_AT', 'ERROR'],
      list.quotas.map((q) => [q.oa_id, q.oa_name, q.daily_quota, q.used, q.remaining, q.reset_at, q.error]),
    ),
  );
  return EXIT_OK;
}
