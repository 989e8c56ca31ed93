import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { presentRegisteredTemplate, presentTemplateList, presentTemplateSync } from '../http/presenters/admin-templates.ts';
import { presentApiKey, presentApiKeyList, presentCreatedApiKey } from '../http/presenters/api-keys.ts';
import { presentActivityForOperator } from '../http/presenters/console-activity.ts';
import { presentInvitation, presentTeamForOperator } from '../http/presenters/console-team.ts';
import { presentSenderAccount, presentSenderAccountList } from '../http/presenters/sender-accounts.ts';
import { presentDeliveryList, presentDeliveryWithLog, presentFailedRedelivery } from '../http/presenters/webhook-deliveries.ts';
import { presentAuditPage, presentCreatedOperatorToken, presentOperatorToken, presentOperatorTokenList } from '../http/presenters/operators.ts';
import { presentOperatorMessage, presentOperatorMessageList, presentWorkspaceQuota } from '../http/presenters/support.ts';
import { presentBalanceChange, presentWallet, presentWorkspace, presentWorkspaceList } from '../http/presenters/workspaces.ts';
import { runBackupCommand } from './backup-command.ts';
import { changeApiKey, createApiKey, listApiKeys } from '../services/admin/api-keys.ts';
import { connectSenderAccount, disconnectSenderAccount, listSenderAccounts, reconnectSenderAccount, type ConnectSenderAccountInput } from '../services/admin/sender-accounts.ts';
import { readMasterKeyIds, reEncryptStoredSecrets, runMasterKeyFileStep } from '../services/admin/rotate-master-key.ts';
import { presentMasterKeyRotation } from '../http/presenters/master-key-rotation.ts';
import { MAX_ACTIVITY_PAGE_SIZE, MAX_INT32, MAX_OPERATOR_PAGE_SIZE } from '../lib/limits.ts';
import { listWorkspaceTemplates, registerTemplate, type RegisterTemplateInput } from '../services/admin/templates.ts';
import { findMessageAnywhere, readWorkspaceQuota, searchMessages } from '../services/admin/support.ts';
import { adjustWallet, readWallet, topUp } from '../services/admin/wallets.ts';
import { changeWorkspace, createWorkspace, getWorkspace, listWorkspaces } from '../services/admin/workspaces.ts';
import { purgeWorkspacePersonalData } from '../services/admin/personal-data.ts';
import { presentPersonalDataPurge } from '../http/presenters/personal-data.ts';
import { SCOPES, type Scope } from '../services/authentication.ts';
import { readWorkspaceActivity } from '../services/console/activity.ts';
import { CONSOLE_ROLES, inviteConsoleUser, listTeam } from '../services/console/users.ts';
import type { Context, OperatorCaller } from '../services/context.ts';
import { badRequest } from '../services/errors.ts';
import { readSenderAccountSecretVariables, SENDER_ACCOUNT_SECRET_VARIABLES, type SenderAccountSecretField } from '../config/sender-account-secrets.ts';
import { listOperatorAudit } from '../services/audit.ts';
import { createOperatorToken, listOperatorTokens, revokeOperatorToken } from '../services/operator-tokens.ts';
import { syncTemplates } from '../services/template-sync.ts';
import { getWebhookDelivery, listWebhookDeliveries, redeliverFailedWebhooks, redeliverWebhook } from '../services/webhook-deliveries.ts';
import { TEMPLATE_STATUSES, type ConsoleRole } from '../services/vocabulary.ts';

export const ADMIN_USAGE = `tms admin <resource> <verb> [arguments] [--json]

  workspaces create --name NAME [--message-cap N]
  workspaces list | show ID | suspend ID | resume ID
              (list: newest first, [--limit N] [--offset N])
  workspaces set-cap ID (N | none)
  workspaces purge-personal-data WORKSPACE_ID [--phone PHONE] [--before TIME]
              (erases phones and template data of its finished messages now: a data subject's request
              or the end of a contract; only PHONE's, only those created before TIME when given)
  wallet top-up WORKSPACE_ID AMOUNT_VND [--note TEXT]
  wallet credit WORKSPACE_ID AMOUNT_VND --reason TEXT
  wallet debit WORKSPACE_ID AMOUNT_VND --reason TEXT
              (a correction, with its reason in the ledger; a debit never takes the balance below 0)
  wallet show WORKSPACE_ID [--limit N] [--offset N]
  keys create WORKSPACE_ID --scopes messages:send,messages:read,templates:read [--name NAME]
              [--webhook-url URL] [--rate-limit PER_SECOND]
  keys list WORKSPACE_ID | revoke KEY_ID
  keys set-webhook KEY_ID (URL | none)
  keys set-rate-limit KEY_ID (PER_SECOND | none)
              (requests per second for this key; none: the gateway's TMS_RATE_LIMIT_PER_SECOND)
  sender-accounts connect WORKSPACE_ID --oa-id ID --name NAME --daily-quota N --app-id ID
              (--secrets-file FILE | --secrets-env) [--default-mode plain|hashphone]
              [--rsa-public-key-file FILE] [--no-verify]
              (FILE, or - for standard input: JSON with app_secret, refresh_token and optionally
              oa_secret_key; --secrets-env: TMS_ZNS_APP_SECRET, TMS_ZNS_REFRESH_TOKEN and optionally
              TMS_ZNS_OA_SECRET_KEY. --app-secret, --refresh-token and --oa-secret-key also work,
              with a warning: any user of the machine can read command-line arguments in ps. The
              credentials are checked with a token refresh first, and the new tokens it gives are
              stored; --no-verify stores them unchecked, for set-up where the platform cannot be reached)
  sender-accounts disconnect WORKSPACE_ID OA_ID   (new sends refused; queued ones fail with a refund)
  sender-accounts reconnect WORKSPACE_ID OA_ID [--no-verify]
              (a disconnected account, with the credentials it has, once the platform accepts them)
  sender-accounts list WORKSPACE_ID
  templates register WORKSPACE_ID --file TEMPLATE.json [--no-verify]
              (fields: template_id, oa_id, price, template_type, and with --no-verify name, status,
              params and optionally preview_url; otherwise those come from the platform's
              template info, and a template it does not know for the account is refused)
  templates list WORKSPACE_ID
  templates sync WORKSPACE_ID [--oa-id ID]
              (from the platform: every connected sender account, or the one given)
  messages show MSG_ID                        (in whichever workspace it is)
  messages find (--tracking-id ID | --phone PHONE) [--workspace ID] [--limit N]
              (newest first; every workspace unless --workspace)
  quota WORKSPACE_ID [--oa-id ID]             (today's quota per sender account, as the workspace sees it)
  webhooks list [--workspace ID] [--status pending|delivered|failed|cancelled] [--since TIME]
              [--until TIME] [--limit N] [--offset N]   (delivery-report webhooks, newest first)
  webhooks show DELIVERY_ID                   (the body sent and the attempt log)
  webhooks redeliver DELIVERY_ID              (again, to the key's current URL)
  webhooks redeliver-failed --since TIME [--workspace ID]
              (every delivery that failed at or after TIME; ISO 8601, no offset = Vietnam time)
  users invite WORKSPACE_ID --email ADDRESS --role owner|developer|viewer
              (a console user; prints the one-time link to set a password, valid TMS_CONSOLE_INVITATION_HOURS)
  users list WORKSPACE_ID
  rotate-master-key [--generate-key | --forget-previous]
              (re-encrypts every stored secret under TMS_MASTER_KEY, reading it under TMS_MASTER_KEY_PREVIOUS
              too; safe to repeat; also POST /admin/v1/master-key/rotation. Embedded key in secrets.json:
              --generate-key stages a new one first, --forget-previous drops the old one last (these two
              only here). See the README, Rotating the master key)
  master-key-ids              (the ids of the master keys this command holds: TMS_MASTER_KEY and
              TMS_MASTER_KEY_PREVIOUS, or secrets.json's; what POST /admin/v1/master-key/rotation names)
  operators create --name NAME                (a named operator token, shown once; TMS_ADMIN_TOKEN stays the bootstrap)
  operators list | revoke TOKEN_ID
  audit [--workspace ID] [--limit N] [--offset N]
              (every operator and console change: who, what, when, before and after; newest first)
  activity WORKSPACE_ID [--limit N] [--offset N]
              (the workspace's activity log: changes made in the console or by the operator, newest first)
  backup FILE [--force]
              (SQLite: a consistent copy of the database while the service runs, mode 0600; an existing
              FILE is refused unless --force; GET /admin/v1/backup streams the same copy.
              PostgreSQL: use pg_dump or PITR, see docs/operations.md)`;

const OPTIONS = {
  json: { type: 'boolean' },
  name: { type: 'string' },
  'message-cap': { type: 'string' },
  note: { type: 'string' },
  reason: { type: 'string' },
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
  'secrets-file': { type: 'string' },
  'secrets-env': { type: 'boolean' },
  file: { type: 'string' },
  workspace: { type: 'string' },
  status: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  offset: { type: 'string' },
  'tracking-id': { type: 'string' },
  phone: { type: 'string' },
  before: { type: 'string' },
  'generate-key': { type: 'boolean' },
  'forget-previous': { type: 'boolean' },
  force: { type: 'boolean' },
  'no-verify': { type: 'boolean' },
} as const;

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

function wholeNumber(text: string | undefined, what: string): number {
  if (text === undefined || !/^\d+$/.test(text)) throw badRequest(`${what} must be a whole number`);
  return Number(text);
}

/** --limit (1 to `maxLimit`, the HTTP list's own bound) and --offset, as the HTTP lists take them; absent ones are left to the verb. */
function paging(values: Values, maxLimit: number): { limit?: number; offset?: number } {
  const limit = values.limit === undefined ? undefined : wholeNumber(optional(values, 'limit'), '--limit');
  const offset = values.offset === undefined ? undefined : wholeNumber(optional(values, 'offset'), '--offset');
  if (limit !== undefined && (limit < 1 || limit > maxLimit)) throw badRequest(`--limit must be 1 to ${maxLimit}`);
  if (offset !== undefined && offset > MAX_INT32) throw badRequest(`--offset must be at most ${MAX_INT32}`);
  return { limit, offset };
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

/** A template file's fields, checked as far as the verb does not check them itself. */
function parseTemplateFile(file: string): RegisterTemplateInput {
  const input = JSON.parse(readFileSync(file, 'utf8')) as RegisterTemplateInput;
  for (const field of ['template_id', 'oa_id'] as const) if (typeof input[field] !== 'string' || input[field] === '') throw badRequest(`${field} is required`);
  if (input.status !== undefined && !TEMPLATE_STATUSES.includes(input.status)) throw badRequest(`status must be one of ${TEMPLATE_STATUSES.join(', ')}`);
  if (input.name !== undefined && (typeof input.name !== 'string' || input.name === '')) throw badRequest('name must be a non-empty string');
  if (!Number.isInteger(input.price) || input.price < 0) throw badRequest('price must be a whole number of VND, 0 or more');
  if (!Number.isInteger(input.template_type)) throw badRequest('template_type must be an integer');
  if (input.params === undefined) return input;
  if (!Array.isArray(input.params)) throw badRequest('params must be an array');
  return { ...input, params: input.params.map((param) => ({ ...param, type: param.type ?? 'STRING' })) };
}

/** The secrets of a sender account, from one place only. */
type SenderAccountSecrets = Pick<ConnectSenderAccountInput, 'app_secret' | 'refresh_token' | 'oa_secret_key'>;

const SECRET_FLAGS = ['app-secret', 'refresh-token', 'oa-secret-key'] as const;

/** The secrets as JSON fields or variables give them: each a non-empty string, or absent. */
function checkedSecrets(source: string, fields: Record<string, unknown>, nameOf: (field: SenderAccountSecretField) => string): SenderAccountSecrets {
  const text = (field: SenderAccountSecretField, isRequired: boolean): string | null => {
    const value = fields[field];
    if (typeof value === 'string' && value !== '') return value;
    if (value === undefined || value === null) {
      if (isRequired) throw badRequest(`${source} needs ${nameOf(field)}`);
      return null;
    }
    throw badRequest(`${source}: ${nameOf(field)} must be a non-empty string`);
  };
  return { app_secret: text('app_secret', true)!, refresh_token: text('refresh_token', true)!, oa_secret_key: text('oa_secret_key', false) };
}

function secretsFromFile(file: string): SenderAccountSecrets {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
  } catch (error) {
    throw badRequest(`--secrets-file ${file === '-' ? '(standard input)' : file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return checkedSecrets('--secrets-file', (parsed ?? {}) as Record<string, unknown>, (field) => field);
}

/**
 * A sender account's secrets, from exactly one place: --secrets-file (a JSON file, or - for
 * standard input) or --secrets-env (TMS_ZNS_APP_SECRET, TMS_ZNS_REFRESH_TOKEN and optionally
 * TMS_ZNS_OA_SECRET_KEY), where no other user of the machine can read them, or the command-line
 * flags, which `ps` shows to every user: those still work, with a warning on standard error.
 */
function readSenderAccountSecrets(values: Values): SenderAccountSecrets {
  const file = optional(values, 'secrets-file');
  const fromEnvironment = values['secrets-env'] === true;
  const flags = SECRET_FLAGS.filter((flag) => values[flag] !== undefined);
  const sources = [file !== undefined, fromEnvironment, flags.length > 0].filter(Boolean).length;
  if (sources > 1) throw badRequest('give the secrets in one place only: --secrets-file, --secrets-env, or the flags --app-secret, --refresh-token and --oa-secret-key');
  if (file !== undefined) return secretsFromFile(file);
  if (fromEnvironment) return checkedSecrets('--secrets-env', readSenderAccountSecretVariables(), (field) => SENDER_ACCOUNT_SECRET_VARIABLES[field]);
  if (flags.length === 0) throw badRequest('the secrets are required: --secrets-file FILE (- for standard input) or --secrets-env');
  const secrets = { app_secret: required(values, 'app-secret'), refresh_token: required(values, 'refresh-token'), oa_secret_key: optional(values, 'oa-secret-key') ?? null };
  console.error(`warning: ${flags.map((flag) => `--${flag}`).join(', ')} on the command line can be read by every user of this machine (ps); use --secrets-file or --secrets-env`);
  return secrets;
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
    const input = { workspaceId: positional(positionals, 1, 'workspace id'), ...paging(values, MAX_ACTIVITY_PAGE_SIZE) };
    return presentActivityForOperator(await readWorkspaceActivity({ ctx, input }));
  }
  if (resource === 'audit') {
    const input = { workspaceId: optional(values, 'workspace'), ...paging(values, MAX_OPERATOR_PAGE_SIZE) };
    return presentAuditPage(await listOperatorAudit({ ctx, input }));
  }
  // `quota WORKSPACE_ID` has no verb either: reading it is all there is.
  if (resource === 'quota') {
    const workspaceId = positional(positionals, 1, 'workspace id');
    return presentWorkspaceQuota(workspaceId, await readWorkspaceQuota({ ctx, input: { workspaceId, oa_id: optional(values, 'oa-id') } }));
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
      return presentWorkspaceList(await listWorkspaces({ ctx, input: paging(values, MAX_OPERATOR_PAGE_SIZE) }));
    case 'workspaces show':
      return presentWorkspace(await getWorkspace({ ctx, input: { id: positional(args, 0, 'workspace id') } }));
    case 'workspaces suspend':
      return presentWorkspace(await changeWorkspace({ ctx, input: { id: positional(args, 0, 'workspace id'), status: 'suspended' } }));
    case 'workspaces resume':
      return presentWorkspace(await changeWorkspace({ ctx, input: { id: positional(args, 0, 'workspace id'), status: 'active' } }));
    case 'workspaces purge-personal-data': {
      const input = { workspaceId: positional(args, 0, 'workspace id'), phone: optional(values, 'phone'), before: optional(values, 'before') };
      return presentPersonalDataPurge(await purgeWorkspacePersonalData({ ctx, input }));
    }
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
      return presentBalanceChange(await topUp({ ctx, input }));
    }
    case 'wallet credit':
    case 'wallet debit': {
      const amount = wholeNumber(positional(args, 1, 'amount'), 'amount');
      const input = { workspaceId: positional(args, 0, 'workspace id'), amount: verb === 'debit' ? -amount : amount, reason: required(values, 'reason') };
      return presentBalanceChange(await adjustWallet({ ctx, input }));
    }
    case 'wallet show': {
      const input = { workspaceId: positional(args, 0, 'workspace id'), ...paging(values, MAX_OPERATOR_PAGE_SIZE) };
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
    case 'keys set-rate-limit': {
      const limit = positional(args, 1, 'rate limit (requests per second, or none)');
      const input = { id: positional(args, 0, 'key id'), rate_limit_per_second: limit === 'none' ? null : wholeNumber(limit, 'rate limit') };
      return presentApiKey(await changeApiKey({ ctx, input }));
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
        ...readSenderAccountSecrets(values),
        rsa_public_key: typeof keyFile === 'string' ? readFileSync(keyFile, 'utf8').trim() : null,
        verify: values['no-verify'] !== true,
      };
      return presentSenderAccount(await connectSenderAccount({ ctx, input }));
    }
    case 'sender-accounts disconnect':
    case 'sender-accounts reconnect': {
      const input = { workspaceId: positional(args, 0, 'workspace id'), oaId: positional(args, 1, 'oa id'), verify: values['no-verify'] !== true };
      return presentSenderAccount(verb === 'disconnect' ? await disconnectSenderAccount({ ctx, input }) : await reconnectSenderAccount({ ctx, input }));
    }
    case 'sender-accounts list':
      return presentSenderAccountList(await listSenderAccounts({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    case 'templates register': {
      const workspaceId = positional(args, 0, 'workspace id');
      const input = { ...parseTemplateFile(required(values, 'file')), workspaceId, verify: values['no-verify'] !== true };
      return presentRegisteredTemplate(await registerTemplate({ ctx, input }));
    }
    case 'templates list':
      return presentTemplateList(await listWorkspaceTemplates({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    case 'templates sync': {
      const workspaceId = positional(args, 0, 'workspace id');
      const oaId = values['oa-id'] === undefined ? undefined : required(values, 'oa-id');
      return presentTemplateSync(workspaceId, await syncTemplates({ ctx, input: { workspaceId, oaId } }));
    }
    case 'operators create':
      return presentCreatedOperatorToken(await createOperatorToken({ ctx, input: { name: required(values, 'name') } }));
    case 'operators list':
      return presentOperatorTokenList(await listOperatorTokens({ ctx, input: {} }));
    case 'operators revoke':
      return presentOperatorToken(await revokeOperatorToken({ ctx, input: { id: positional(args, 0, 'operator token id') } }));
    case 'messages show':
      return presentOperatorMessage(await findMessageAnywhere({ ctx, input: { id: positional(args, 0, 'msg_id') } }));
    case 'messages find': {
      const input = {
        workspaceId: optional(values, 'workspace'),
        trackingId: optional(values, 'tracking-id'),
        phone: optional(values, 'phone'),
        limit: values.limit ? wholeNumber(optional(values, 'limit'), '--limit') : undefined,
      };
      return presentOperatorMessageList(await searchMessages({ ctx, input }));
    }
    case 'webhooks list': {
      const input = {
        workspace_id: optional(values, 'workspace'),
        status: optional(values, 'status'),
        since: optional(values, 'since'),
        until: optional(values, 'until'),
        ...paging(values, MAX_OPERATOR_PAGE_SIZE),
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
    // `rotate-master-key` has no verb: its steps are flags.
    case 'rotate-master-key ': {
      const generateKey = values['generate-key'] === true;
      const forgetPrevious = values['forget-previous'] === true;
      if (generateKey && forgetPrevious) throw badRequest('--generate-key and --forget-previous are separate steps: give one at a time');
      if (generateKey || forgetPrevious) return runMasterKeyFileStep({ ctx, input: { step: generateKey ? 'generate-key' : 'forget-previous' } });
      return presentMasterKeyRotation(await reEncryptStoredSecrets({ ctx, input: {} }));
    }
    // `master-key-ids` has no verb either: reading them is all there is.
    case 'master-key-ids ':
      return readMasterKeyIds({ ctx, input: {} });
    case 'users list':
      return presentTeamForOperator(await listTeam({ ctx, input: { workspaceId: positional(args, 0, 'workspace id') } }));
    // `backup FILE` has no verb: the file takes its place.
    case `backup ${verb ?? ''}`:
      return runBackupCommand(ctx, verb, values.force === true);
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
