/**
 * Template sync: the platform's templates of a workspace's sender accounts become ours,
 * with their params, status and price. Runs on a schedule (workers/template-sync.ts), on
 * `tms admin templates sync` and on POST /admin/v1/workspaces/:id/templates/sync; single status
 * changes also arrive as change_template_status events (platform-events.ts).
 *
 * Per sender account:
 * 1. Read everything first: GET /template/all page by page (limit 100, until metadata.total), then
 *    GET /template/info/v2 for each listed template, and for each template we hold for that account
 *    that the list left out (the list hides deleted templates; info still answers with DELETE).
 *    A platform that is unavailable (transport failure, 5xx, a "try again later" code) or an account
 *    without a usable token ends the account here, in its `error`, with nothing written. A refused
 *    access token is refreshed once. Any other platform error on one template goes to `failed` and
 *    the others go on.
 * 2. Write, in one transaction per account:
 *    - a template we do not have is created with the platform's price (the integer VND of "800.0",
 *      0 when absent), price_source 'platform' and template_type 1 (the list has no type);
 *    - a template we have gets the platform's name, status, params, preview and sender account;
 *      its price only while price_source is 'platform' (the operator's price wins), its
 *      template_type stays ours;
 *    - a template id that belongs to another workspace is left alone and reported in `failed`.
 * 3. The catalog cache forgets every created or changed template.
 *
 * Templates we hold that the platform neither lists nor answers for (info says unknown template,
 * or not this account's) are LEFT AS THEY ARE, never deleted and never given a guessed status:
 * messages refer to them, and the platform only has authority over what it reports. They are
 * reported in `failed` so the operator sees the mismatch. The platform's status (DELETE included)
 * is applied to every template it does report, through the list or through info.
 */
import { describePlatformError } from '../platform/error-catalogue.ts';
import { PlatformUnavailableError, type TemplateDetail, type ZnsResult } from '../platform/zns-client.ts';
import { runInTransaction } from '../store/database.ts';
import { TEMPLATE_STATUSES, type SenderAccountRow, type TemplateRow, type TemplateStatus } from '../store/schema.ts';
import { listSenderAccounts } from '../store/sender-accounts.ts';
import {
  applySyncedTemplate,
  findTemplatesByIds,
  insertSyncedTemplate,
  listTemplateIdsOfAccount,
  listWorkspacesWithConnectedAccounts,
  markTemplatesSynced,
} from '../store/template-sync.ts';
import { findWorkspace } from '../store/workspaces.ts';
import { recordAudit } from './audit.ts';
import type { Context, OperatorCaller, TaskCaller, VerbCall } from './context.ts';
import { ApiError } from './errors.ts';
import { ReloginRequiredError } from '../caches/access-tokens.ts';
import { callAsAccount, type AccountTokens } from './account-calls.ts';
import type { TemplateParam } from './template-data.ts';

export interface TemplateSyncFailure {
  templateId: string;
  error: string;
}

/** What one sync did for one sender account. */
export interface TemplateSyncSummary {
  oaId: string;
  created: number;
  updated: number;
  unchanged: number;
  /** Templates that could not be synced (the others were). */
  failed: TemplateSyncFailure[];
  /** Set when the account could not be synced at all (no token, platform unavailable); nothing was written then. */
  error: string | null;
  /** Not synced because the account is not connected (`error` says how it stands). */
  skipped: boolean;
}

/** Who may sync: the operator on request, or the periodic task. */
type SyncCaller = OperatorCaller | TaskCaller;

/** The maximum page size of GET /template/all (docs/zns-platform.md). */
const PAGE_SIZE = 100;
/** A platform that keeps answering full pages stops being paged here (100 000 templates). */
const MAX_PAGES = 1000;
/** The template_type of a template first seen through sync: the list and info carry none; 1 = custom. */
const DEFAULT_TEMPLATE_TYPE = 1;

/** The account cannot be synced now: becomes the summary's `error`. */
class AccountSyncError extends Error {}
/** The worker stops: the account's remaining calls are not made (its sync writes nothing, the next run does it). */
class SyncStoppedError extends Error {}

/** What the platform answered for one template; `listed` is false for one of ours the list left out. */
type Fetched = { templateId: string; listed: boolean } & ({ detail: TemplateDetail } | { error: string });

function describeCode(code: number, message: string): string {
  const known = describePlatformError(code, message);
  return `${code} ${message || known.message}`;
}

/** The platform's price text ("800.0") as whole VND; 0 when absent or not a price. */
function platformPriceVnd(price: number | null): number {
  if (price === null || !Number.isFinite(price) || price < 0) return 0;
  return Math.trunc(price);
}

/** Params in our shape and key order, so equal params serialise to equal text. */
function canonicalParams(params: readonly TemplateParam[]): string {
  return JSON.stringify(
    params.map((param) => ({ name: param.name, type: param.type, required: param.required, max_length: param.max_length, min_length: param.min_length })),
  );
}

export function paramsOfDetail(detail: TemplateDetail): TemplateParam[] {
  return detail.params.map((param) => ({ name: param.name, type: param.type, required: param.required, max_length: param.maxLength, min_length: param.minLength }));
}

function sameParams(storedJson: string, canonical: string): boolean {
  if (storedJson === canonical) return true;
  try {
    return canonicalParams(JSON.parse(storedJson) as TemplateParam[]) === canonical;
  } catch {
    return false;
  }
}

export function isTemplateStatus(status: string): status is TemplateStatus {
  return (TEMPLATE_STATUSES as readonly string[]).includes(status);
}

/**
 * Told after each platform call of a sync: the periodic task's loop counts it as progress, so a
 * sync of many templates is not taken for a stalled one.
 */
type SyncProgress = () => void;

/** One sender account's platform calls: a refused access token is reported and replaced once. */
class AccountSession {
  private readonly tokens: AccountTokens;

  constructor(
    private readonly ctx: Context<SyncCaller>,
    readonly oaId: string,
    private readonly progress: SyncProgress | undefined,
    private readonly stopping: AbortSignal | undefined,
  ) {
    this.tokens = ctx.parts.accessTokens;
  }

  async call<T>(operation: (token: string) => Promise<ZnsResult<T>>): Promise<ZnsResult<T>> {
    if (this.stopping?.aborted) throw new SyncStoppedError('the worker is stopping');
    const result = await callAsAccount(this.tokens, this.oaId, operation);
    this.progress?.();
    return result;
  }

  /** Every template id the platform lists for the account, in its order, each once. */
  async listedTemplateIds(): Promise<string[]> {
    const ids = new Set<string>();
    let offset = 0;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const result = await this.call((token) => this.ctx.parts.platform.listTemplates(token, { offset, limit: PAGE_SIZE }));
      if (!result.ok) {
        const text = describeCode(result.code, result.message);
        const transient = describePlatformError(result.code, result.message).retry === 'backoff';
        throw new AccountSyncError(transient ? `the platform is unavailable: ${text}` : `the platform refused to list the templates: ${text}`);
      }
      for (const template of result.data.templates) ids.add(template.templateId);
      offset += result.data.templates.length;
      if (result.data.templates.length === 0 || offset >= result.data.total) break;
    }
    return [...ids];
  }

  async detail(templateId: string, listed: boolean): Promise<Fetched> {
    const result = await this.call((token) => this.ctx.parts.platform.getTemplateInfo(token, templateId));
    if (result.ok) return { templateId, listed, detail: result.data };
    const text = describeCode(result.code, result.message);
    // "Try again later": the platform is not answering properly now; retry the whole account later.
    if (describePlatformError(result.code, result.message).retry === 'backoff') throw new AccountSyncError(`the platform is unavailable: ${text}`);
    return { templateId, listed, error: text };
  }
}

async function requireWorkspace(ctx: Context<SyncCaller>, workspaceId: string): Promise<void> {
  if (!(await findWorkspace(ctx.store.db, workspaceId))) throw new ApiError('workspace_not_found', `workspace ${workspaceId} not found`);
}

/**
 * The operator's sync of a workspace's templates (`tms admin templates sync`, POST
 * /admin/v1/workspaces/:id/templates/sync): syncWorkspace, then an audit entry with what each
 * sender account's sync did.
 */
export async function syncTemplates({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; oaId?: string }>): Promise<TemplateSyncSummary[]> {
  const summaries = await syncWorkspace(ctx, input);
  await recordAudit(ctx, {
    action: 'template.sync',
    workspaceId: input.workspaceId,
    target: input.oaId ?? null,
    before: null,
    after: {
      accounts: summaries.map((summary) => ({
        oa_id: summary.oaId,
        created: summary.created,
        updated: summary.updated,
        unchanged: summary.unchanged,
        failed: summary.failed.length,
        error: summary.error,
      })),
    },
  });
  return summaries;
}

/**
 * Syncs the templates of the workspace's connected sender accounts, or of the one given. One
 * summary per account: one that is not connected is reported as skipped, with its status, rather
 * than left out unseen. The status is the row's, never a token this process still holds for the
 * account: a disconnected account is not synced, whoever asks.
 */
async function syncWorkspace(ctx: Context<SyncCaller>, input: { workspaceId: string; oaId?: string; progress?: SyncProgress; stopping?: AbortSignal }): Promise<TemplateSyncSummary[]> {
  const { workspaceId, oaId } = input;
  await requireWorkspace(ctx, workspaceId);
  const accounts = await listSenderAccounts(ctx.store.db, workspaceId, oaId);
  if (oaId !== undefined && accounts.length === 0) throw new ApiError('sender_account_not_found', `sender account ${oaId} not found in workspace ${workspaceId}`);
  const summaries: TemplateSyncSummary[] = [];
  // One account at a time: the platform's rate limits are per app, and this is background work.
  for (const account of accounts) {
    if (input.stopping?.aborted) break;
    if (account.status !== 'connected') summaries.push(skippedSummary(account));
    else summaries.push(await syncAccount(ctx, workspaceId, account.oa_id, input.progress, input.stopping));
  }
  return summaries;
}

function skippedSummary(account: SenderAccountRow): TemplateSyncSummary {
  const why = account.status === 'relogin_required' ? `it needs a new refresh token${account.token_problem ? ` (${account.token_problem})` : ''}` : 'it is disconnected';
  return { oaId: account.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: `skipped: ${why}`, skipped: true };
}

async function syncAccount(ctx: Context<SyncCaller>, workspaceId: string, oaId: string, progress: SyncProgress | undefined, stopping: AbortSignal | undefined): Promise<TemplateSyncSummary> {
  const summary: TemplateSyncSummary = { oaId, created: 0, updated: 0, unchanged: 0, failed: [], error: null, skipped: false };
  const session = new AccountSession(ctx, oaId, progress, stopping);
  let fetched: Fetched[];
  try {
    const listed = await session.listedTemplateIds();
    const listedSet = new Set(listed);
    const unlisted = (await listTemplateIdsOfAccount(ctx.store.db, workspaceId, oaId)).filter((id) => !listedSet.has(id));
    fetched = [];
    for (const templateId of listed) fetched.push(await session.detail(templateId, true));
    for (const templateId of unlisted) fetched.push(await session.detail(templateId, false));
  } catch (error) {
    if (error instanceof SyncStoppedError) return { ...summary, error: `skipped: ${error.message}`, skipped: true };
    if (error instanceof AccountSyncError) summary.error = error.message;
    else if (error instanceof ReloginRequiredError) summary.error = error.message;
    else if (error instanceof PlatformUnavailableError) summary.error = `the platform is unavailable: ${error.message}`;
    else throw error;
    ctx.log.warn({ oaId, workspaceId, problem: summary.error }, 'template sync skipped a sender account');
    return summary;
  }

  const outcome = await writeAccount(ctx, workspaceId, oaId, fetched);
  summary.created = outcome.created.length;
  summary.updated = outcome.updated.length;
  summary.unchanged = outcome.unchanged;
  summary.failed = outcome.failed;
  for (const templateId of [...outcome.created, ...outcome.updated]) ctx.parts.catalog.forgetTemplate(workspaceId, templateId);
  return summary;
}

interface WriteOutcome {
  created: string[];
  updated: string[];
  unchanged: number;
  failed: TemplateSyncFailure[];
}

/** Step 2, in one transaction; it only touches the database, so PostgreSQL may rerun it whole. */
async function writeAccount(ctx: Context<SyncCaller>, workspaceId: string, oaId: string, fetched: readonly Fetched[]): Promise<WriteOutcome> {
  return runInTransaction(ctx.store, async (trx) => {
    const outcome: WriteOutcome = { created: [], updated: [], unchanged: 0, failed: [] };
    const now = ctx.clock();
    const existing = new Map((await findTemplatesByIds(trx, fetched.map((entry) => entry.templateId))).map((row) => [row.template_id, row]));
    const confirmed: string[] = [];
    for (const entry of fetched) {
      const row = existing.get(entry.templateId);
      if ('error' in entry) {
        const error = entry.listed
          ? `the platform lists it but its details were refused: ${entry.error}${row ? '; left as it is' : ''}`
          : `the platform does not list it for sender account ${oaId} and answers ${entry.error}; left as it is`;
        outcome.failed.push({ templateId: entry.templateId, error });
        continue;
      }
      const { detail } = entry;
      if (!isTemplateStatus(detail.status)) {
        outcome.failed.push({ templateId: entry.templateId, error: `the platform reports the unknown status "${detail.status}"; left as it is` });
        continue;
      }
      const params = canonicalParams(paramsOfDetail(detail));
      const price = platformPriceVnd(detail.price);
      if (!row) {
        const created = await insertSyncedTemplate(trx, {
          template_id: entry.templateId,
          workspace_id: workspaceId,
          oa_id: oaId,
          name: detail.templateName,
          status: detail.status,
          template_type: DEFAULT_TEMPLATE_TYPE,
          preview_url: detail.previewUrl,
          params,
          price,
          price_source: 'platform',
          synced_at: now,
          created_at: now,
          updated_at: now,
        });
        if (created) outcome.created.push(entry.templateId);
        else outcome.failed.push({ templateId: entry.templateId, error: 'the template was registered while the sync ran; it is synced next time' });
        continue;
      }
      if (row.workspace_id !== workspaceId) {
        outcome.failed.push({ templateId: entry.templateId, error: 'the template id is registered in another workspace; left as it is' });
        continue;
      }
      if (isUnchanged(row, { oaId, name: detail.templateName, status: detail.status, previewUrl: detail.previewUrl, params, price })) {
        confirmed.push(entry.templateId);
        outcome.unchanged += 1;
        continue;
      }
      await applySyncedTemplate(trx, {
        workspaceId,
        templateId: entry.templateId,
        oaId,
        name: detail.templateName,
        status: detail.status,
        previewUrl: detail.previewUrl,
        params,
        platformPrice: price,
        now,
      });
      outcome.updated.push(entry.templateId);
    }
    await markTemplatesSynced(trx, workspaceId, confirmed, now);
    return outcome;
  });
}

function isUnchanged(row: TemplateRow, platform: { oaId: string; name: string; status: TemplateStatus; previewUrl: string; params: string; price: number }): boolean {
  return (
    row.oa_id === platform.oaId &&
    row.name === platform.name &&
    row.status === platform.status &&
    row.preview_url === platform.previewUrl &&
    sameParams(row.params, platform.params) &&
    (row.price_source === 'operator' || row.price === platform.price)
  );
}

export interface WorkspaceTemplateSync {
  workspaceId: string;
  accounts: TemplateSyncSummary[];
}

/**
 * The periodic sync: every workspace with a connected sender account, one after the other. A
 * workspace whose sync throws (a database error, a secret that cannot be decrypted) is logged and
 * the others still run.
 */
export async function syncAllWorkspaces({ ctx, input }: VerbCall<TaskCaller, { progress?: SyncProgress; stopping?: AbortSignal }>): Promise<WorkspaceTemplateSync[]> {
  const results: WorkspaceTemplateSync[] = [];
  for (const workspaceId of await listWorkspacesWithConnectedAccounts(ctx.store.db)) {
    // A stopping worker makes no more platform calls (see AccountSession): a sync is idempotent, and the next run does the rest.
    if (input.stopping?.aborted) break;
    try {
      results.push({ workspaceId, accounts: await syncWorkspace(ctx, { workspaceId, progress: input.progress, stopping: input.stopping }) });
    } catch (error) {
      ctx.log.error({ err: error, workspaceId }, 'template sync of a workspace failed');
    }
  }
  return results;
}
