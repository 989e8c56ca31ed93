import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { presentRegisteredTemplate, presentTemplateList, presentTemplateSync } from '../http/presenters/admin-templates.ts';
import { presentApiKey, presentApiKeyList, presentCreatedApiKey } from '../http/presenters/api-keys.ts';
import { presentActivityForOperator } from '../http/presenters/console-activity.ts';
import { presentInvitation, presentTeamForOperator } from '../http/presenters/console-team.ts';
import { presentSenderAccount, presentSenderAccountList } from '../http/presenters/sender-accounts.ts';
import { presentDeliveryList, presentDeliveryWithLog, presentFailedRedelivery } from '../http/presenters/webhook-deliveries.ts';
import { presentTopUp, presentWallet, presentWorkspace, presentWorkspaceList } from '../http/presenters/workspaces.ts';
import { changeApiKey, createApiKey, listApiKeys } from '../services/admin/api-keys.ts';
import { connectSenderAccount, listSenderAccounts, type ConnectSenderAccountInput } from '../services/admin/sender-accounts.ts';
import { listWorkspaceTemplates, registerTemplate, type RegisterTemplateInput } from '../services/admin/templates.ts';
import { readWallet, topUp } from '../services/admin/wallets.ts';
import { changeWorkspace, createWorkspace, getWorkspace, listWorkspaces } from '../services/admin/workspaces.ts';
import { SCOPES, type Scope } from '../services/authentication.ts';
import { readWorkspaceActivity } from '../services/console/activity.ts';
import { CONSOLE_ROLES, inviteConsoleUser, listTeam } from '../services/console/users.ts';
import type { Context, OperatorCaller } from '../services/context.ts';
import { badRequest } from '../services/errors.ts';
import { syncTemplates } from '../services/template-sync.ts';
import { getWebhookDelivery, listWebhookDeliveries, redeliverFailedWebhooks, redeliverWebhook } from '../services/webhook-deliveries.ts';
import { TEMPLATE_STATUSES, type ConsoleRole, type TemplateStatus } from '../services/vocabulary.ts';

export const ADMIN_USAGE = `tms admin <resource> <verb> [arguments] [--json]

  workspaces create --name NAME [--message-cap N]
  workspaces list | show ID | suspend ID | resume ID
  workspaces set-cap ID (N | none)
  wallet top-up WORKSPACE_ID AMOUNT_VND [--note TEXT]
  wallet show WORKSPACE_ID [--limit N]
  keys create WORKSPACE_ID --scopes messages:send,messages:read,templates:read [--name NAME]
              [--webhook-url URL] [--rate-limit PER_SECOND]
  keys list WORKSPACE_ID | revoke KEY_ID
  keys set-webhook KEY_ID (URL | none)
  sender-accounts connect WORKSPACE_ID --oa-id ID --name NAME --daily-quota N --app-id ID
              --app-secret SECRET --refresh-token TOKEN [--oa-secret-key KEY] [--default-mode plain|hashphone]
              [--rsa-public-key-file FILE]
  sender-accounts list WORKSPACE_ID
  templates register WORKSPACE_ID --file TEMPLATE.json
              (fields: template_id, name, status, template_type, oa_id, preview_url, price, params)
  templates list WORKSPACE_ID
  templates sync WORKSPACE_ID [--oa-id ID]
              (from the platform: every connected sender account, or the one given)
  webhooks list [--workspace ID] [--status pending|delivered|failed|cancelled] [--since TIME]
              [--until TIME] [--limit N]        (delivery-report webhooks, newest first)
  webhooks show DELIVERY_ID                   (the body sent and the attempt log)
  webhooks redeliver DELIVERY_ID              (again, to the key's current URL)
  webhooks redeliver-failed --since TIME [--workspace ID]
              (every delivery that failed at or after TIME; ISO 8601, no offset = Vietnam time)
  users invite WORKSPACE_ID --email ADDRESS --role owner|developer|viewer
              (a console user; prints the one-time link to set a password, valid TMS_CONSOLE_INVITATION_HOURS)
  users list WORKSPACE_ID
  activity WORKSPACE_ID [--limit N] [--offset N]
              (the workspace's activity log: changes made in the console or by the operator, newest first)`;

const OPTIONS = {
  json: { type: 'boolean' },
  name: { type: 'string' },
  'message-cap': { type: 'string' },
  note: { type: 'string' },
  limit: { type: 'string' },
  scopes: { type: 'string' },
  'webhook-url': { type: 'string' },
  'rate-limit': { type: 'string' },
  'oa-id': { type: 'string' },
  'daily-quota': { type: 'string' },
  'app-id': { type: 'string' },
  'app-secret': { type: 'string' },
  'refresh-token': { type: 'string' },
  'oa-secret-key': { type: 'string' },
  'default-mode': { type: 'string' },
  'rsa-public-key-file': { type: 'string' },
  file: { type: 'string' },
  workspace: { type: 'string' },
  status: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  offset: { type: 'string' },
} as const;

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

function wholeNumber(text: string | undefined, what: string): number {
  if (text === undefined || !/^\d+$/.test(text)) throw badRequest(`${what} must be a whole number`);
  return Number(text);
}

function required(values: Values, name: keyof typeof OPTIONS): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw badRequest(`--${name} is required`);
  return value;
}

function optional(values: Values, name: keyof typeof OPTIONS): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function positional(args: string[], index: number, what: string): string {
  const value = args[index];
  if (!value) throw badRequest(`${what} is required`);
  return value;
}

function parseScopes(text: string): Scope[] {
  const scopes = text.split(',').map((scope) => scope.trim()).filter(Boolean);
  for (const scope of scopes) if (!(SCOPES as readonly string[]).includes(scope)) throw badRequest(`unknown scope "${scope}"; scopes are ${SCOPES.join(', ')}`);
  if (scopes.length === 0) throw badRequest('--scopes needs at least one scope');
  return scopes as Scope[];
}

function parseRole(text: string): ConsoleRole {
  if (!(CONSOLE_ROLES as readonly string[]).includes(text)) throw badRequest(`--role must be one of ${CONSOLE_ROLES.join(', ')}`);
  return text as ConsoleRole;
}

/** Where invitation links point when TMS_PUBLIC_URL is unset: the address the service listens on. */
function listenOrigin(ctx: Context<OperatorCaller>): string {
  const { host, port } = ctx.parts.config;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

function parseTemplateFile(file: string): Omit<RegisterTemplateInput, never> {
  const input = JSON.parse(readFileSync(file, 'utf8')) as RegisterTemplateInput;
  if (!TEMPLATE_STATUSES.includes(input.status as TemplateStatus)) throw badRequest(`status must be one of ${TEMPLATE_STATUSES.join(', ')}`);
  for (const field of ['template_id', 'name', 'oa_id'] as const) if (typeof input[field] !== 'string' || input[field] === '') throw badRequest(`${field} is required`);
  if (!Number.isInteger(input.price) || input.price < 0) throw badRequest('price must be a whole number of VND, 0 or more');
  if (!Number.isInteger(input.template_type)) throw badRequest('template_type must be an integer');
  if (!Array.isArray(input.params)) throw badRequest('params must be an array');
  return { ...input, params: input.params.map((param) => ({ ...param, type: param.type ?? 'STRING' })) };
}

/**
 * Runs one `tms admin` verb through the same verbs as /admin/v1, and answers what /admin/v1 would
 * (the same presenters), for --json and the human format alike.
 */
export async function runAdminCommand(ctx: Context<OperatorCaller>, argv: string[]): Promise<unknown> {
  // parseArgs would read "-5000" as an option; say what is really wrong with it.
  const negative = argv.find((arg) => /^-\d/.test(arg));
  if (negative) throw badRequest(`${negative}: amounts, caps and limits are whole numbers, 0 or more`);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // An unknown or malformed option is a usage error, not a crash: no stack trace for the operator.
    if ((error as { code?: unknown }).code?.toString().startsWith('ERR_PARSE_ARGS')) throw badRequest(`${(error as Error).message}\n\n${ADMIN_USAGE}`);
    throw error;
  }
  const { values, positionals } = parsed;
  const [resource, verb, ...args] = positionals;
  // `activity WORKSPACE_ID` has no verb: the log is all there is to do with it.
  if (resource === 'activity') {
    const input = {
      workspaceId: positional(positionals, 1, 'workspace id'),
      limit: values.limit ? wholeNumber(optional(values, 'limit'), '--limit') : undefined,
      offset: values.offset ? wholeNumber(optional(values, 'offset'), '--offset') : undefined,
    };
    if (input.limit !== undefined && (input.limit < 1 || input.limit > 200)) throw badRequest('--limit must be 1 to 200');
    return presentActivityForOperator(await readWorkspaceActivity({ ctx, input }));
  }
  const command = `${resource ?? ''} ${verb ?? ''}`;
  switch (command) {
    case 'workspaces create': {
      const input = {
        name: required(values, 'name'),
        message_cap: values['message-cap'] === undefined ? null : wholeNumber(values['message-cap'], '--message-cap'),
      };
      return presentWorkspace(await createWorkspace({ ctx, input }));
    }
    case 'workspaces list':
      return presentWorkspaceList(await listWorkspaces({ ctx, input: { limit: values.limit ? wholeNumber(values.limit, '--limit') : undefined } }));
    case 'workspaces show':
      return presentWorkspace(await getWorkspace({ ctx, input: { id: positional(args, 0, 'workspace id') } }));
    case 'workspaces suspend':
      return presentWorkspace(await changeWorkspace({ ctx, input: { id: positional(args, 0, 'workspace id'), status: 'suspended' } }));
    case 'workspaces resume':
      return presentWorkspace(await changeWorkspace({ ctx, input: { id: positional(args, 0, 'workspace id'), status: 'active' } }));
    case 'workspaces set-cap': {
      const cap = positional(args, 1, 'cap (a number or none)');
      const input = { id: positional(args, 0, 'workspace id'), message_cap: cap === 'none' ? null : wholeNumber(cap, 'cap') };
      return presentWorkspace(await changeWorkspace({ ctx, input }));
    }
    case 'wallet top-up': {
      const input = {
        workspaceId: positional(args, 0, 'workspace id'),
        amount: wholeNumber(positional(args, 1, 'amount'), 'amount'),
        note: typeof values.note === 'string' ? values.note : undefined,
      };
      return presentTopUp(await topUp({ ctx, input }));
    }
    case 'wallet show': {
      const input = { workspaceId: positional(args, 0, 'workspace id'), limit: values.limit ? wholeNumber(values.limit, '--limit') : undefined };
      return presentWallet(await readWallet({ ctx, input }));
    }
    case 'keys create': {
      const input = {
        workspaceId: positional(args, 0, 'workspace id'),
        name: typeof values.name === 'string' ? values.name : undefined,
        scopes: parseScopes(required(values, 'scopes')),
        webhook_url: typeof values['webhook-url'] === 'string' ? values['webhook-url'] : null,
        rate_limit_per_second: values['rate-limit'] === undefined ? null : wholeNumber(values['rate-limit'], '--rate-limit'),
      };
      return presentCreatedApiKey(await createApiKey({ ctx, input }));
    }
    case 'keys list':
      return presentApiKeyList(await listApiKeys({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    case 'keys revoke':
      return presentApiKey(await changeApiKey({ ctx, input: { id: positional(args, 0, 'key id'), revoke: true } }));
    case 'keys set-webhook': {
      const url = positional(args, 1, 'webhook URL (or none)');
      return presentApiKey(await changeApiKey({ ctx, input: { id: positional(args, 0, 'key id'), webhook_url: url === 'none' ? null : url } }));
    }
    case 'sender-accounts connect': {
      const mode = values['default-mode'] ?? 'plain';
      if (mode !== 'plain' && mode !== 'hashphone') throw badRequest('--default-mode must be plain or hashphone');
      const keyFile = values['rsa-public-key-file'];
      const input: ConnectSenderAccountInput & { workspaceId: string } = {
        workspaceId: positional(args, 0, 'workspace id'),
        oa_id: required(values, 'oa-id'),
        name: required(values, 'name'),
        default_mode: mode,
        daily_quota: wholeNumber(required(values, 'daily-quota'), '--daily-quota'),
        app_id: required(values, 'app-id'),
        app_secret: required(values, 'app-secret'),
        refresh_token: required(values, 'refresh-token'),
        oa_secret_key: typeof values['oa-secret-key'] === 'string' ? values['oa-secret-key'] : null,
        rsa_public_key: typeof keyFile === 'string' ? readFileSync(keyFile, 'utf8').trim() : null,
      };
      return presentSenderAccount(await connectSenderAccount({ ctx, input }));
    }
    case 'sender-accounts list':
      return presentSenderAccountList(await listSenderAccounts({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    case 'templates register': {
      const workspaceId = positional(args, 0, 'workspace id');
      const input = { ...parseTemplateFile(required(values, 'file')), workspaceId };
      return presentRegisteredTemplate(await registerTemplate({ ctx, input }));
    }
    case 'templates list':
      return presentTemplateList(await listWorkspaceTemplates({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    case 'templates sync': {
      const workspaceId = positional(args, 0, 'workspace id');
      const oaId = values['oa-id'] === undefined ? undefined : required(values, 'oa-id');
      return presentTemplateSync(workspaceId, await syncTemplates({ ctx, input: { workspaceId, oaId } }));
    }
    case 'webhooks list': {
      const input = {
        workspace_id: optional(values, 'workspace'),
        status: optional(values, 'status'),
        since: optional(values, 'since'),
        until: optional(values, 'until'),
        limit: values.limit ? wholeNumber(values.limit, '--limit') : undefined,
      };
      return presentDeliveryList(await listWebhookDeliveries({ ctx, input }));
    }
    case 'webhooks show':
      return presentDeliveryWithLog(await getWebhookDelivery({ ctx, input: { id: positional(args, 0, 'delivery id') } }));
    case 'webhooks redeliver':
      return presentDeliveryWithLog(await redeliverWebhook({ ctx, input: { id: positional(args, 0, 'delivery id') } }));
    case 'webhooks redeliver-failed': {
      const input = { failed_since: required(values, 'since'), workspace_id: optional(values, 'workspace') };
      return presentFailedRedelivery(await redeliverFailedWebhooks({ ctx, input }));
    }
    case 'users invite': {
      const input = { workspaceId: positional(args, 0, 'workspace id'), email: required(values, 'email'), role: parseRole(required(values, 'role')), origin: listenOrigin(ctx) };
      return presentInvitation(await inviteConsoleUser({ ctx, input }));
    }
    case 'users list':
      return presentTeamForOperator(await listTeam({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    default:
      throw badRequest(`unknown command "tms admin ${command.trim()}"\n\n${ADMIN_USAGE}`);
  }
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Human output: one "field: value" block per object, or a table for lists. */
export function formatForHumans(result: unknown): string {
  if (result === null || typeof result !== 'object') return formatValue(result);
  const entries = Object.entries(result as Record<string, unknown>);
  const list = entries.find(([, value]) => Array.isArray(value));
  if (list && entries.some(([name]) => name === 'count')) {
    const rows = list[1] as Record<string, unknown>[];
    const header = entries.filter(([name, value]) => !Array.isArray(value) && name !== 'count').map(([name, value]) => `${name}: ${formatValue(value)}`);
    if (rows.length === 0) return [...header, `(no ${list[0]})`].join('\n');
    // Lists inside rows (scopes, params) would make the table unreadable; small records (who did
    // something, a change's before and after) are shown as JSON.
    const columns = Object.keys(rows[0]!).filter((column) => !Array.isArray(rows[0]![column]));
    const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => formatValue(row[column]).length)));
    const line = (cells: string[]) => cells.map((cell, index) => cell.padEnd(widths[index]!)).join('  ').trimEnd();
    return [...header, line(columns), ...rows.map((row) => line(columns.map((column) => formatValue(row[column]))))].join('\n');
  }
  const width = Math.max(...entries.map(([name]) => name.length));
  return entries.map(([name, value]) => `${name.padEnd(width)}  ${formatValue(value)}`).join('\n');
}
