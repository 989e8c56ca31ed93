import { ReloginRequiredError } from '../../caches/access-tokens.ts';
import { MAX_INT32, MAX_PRICE_VND } from '../../lib/limits.ts';
import type { SenderAccountRow, TemplateRow, TemplateStatus } from '../../store/schema.ts';
import { findSenderAccount } from '../../store/sender-accounts.ts';
import { findTemplate, findTemplateWorkspace, listTemplates as selectTemplates, upsertTemplate, type TemplateWithOaName } from '../../store/templates.ts';
import { callAsAccount } from '../account-calls.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { parseTemplateParams, type TemplateParam } from '../template-data.ts';
import { isTemplateStatus, paramsOfDetail } from '../template-sync.ts';
import { refusalOf, rethrowAsUnavailable } from './platform-checks.ts';
import { requireWholeNumber, requireWorkspace } from './preconditions.ts';

export interface RegisterTemplateInput {
  template_id: string;
  /** Required with `verify: false`; otherwise the platform's name, status, params and preview are stored. */
  name?: string;
  status?: TemplateStatus;
  template_type: number;
  oa_id: string;
  preview_url?: string;
  params?: TemplateParam[];
  price: number;
  /**
   * Whether to ask the platform first (default true): its template info for this sender account.
   * A template it does not know for the account is refused; one it knows is stored as it says,
   * with the operator's price and template_type. False only for set-up without the platform.
   */
  verify?: boolean;
}

/** What the template is, as the platform or (unchecked) the operator describes it. */
interface TemplateDescription {
  name: string;
  status: TemplateStatus;
  params: TemplateParam[];
  previewUrl: string;
  /** When the platform said so; null for the operator's word. */
  checkedAt: number | null;
}

function requireValidParams(params: readonly TemplateParam[]): void {
  const names = new Set<string>();
  for (const param of params) {
    requireWholeNumber(param.max_length, `param "${param.name}" max_length`, 0, MAX_INT32);
    requireWholeNumber(param.min_length, `param "${param.name}" min_length`, 0, MAX_INT32);
    if (names.has(param.name)) throw badRequest(`param "${param.name}" is listed twice`);
    names.add(param.name);
    if (param.min_length > param.max_length) throw badRequest(`param "${param.name}" has min_length above max_length`);
  }
}

function describedByOperator(input: RegisterTemplateInput): TemplateDescription {
  const { name, status, params } = input;
  if (name === undefined || status === undefined || params === undefined) throw badRequest('name, status and params are required when the template is not checked with the platform (verify=false)');
  requireValidParams(params);
  return { name, status, params, previewUrl: input.preview_url ?? '', checkedAt: null };
}

/** The template as the platform's template info describes it for the sender account. */
async function describedByPlatform(ctx: Context<OperatorCaller>, account: SenderAccountRow, templateId: string): Promise<TemplateDescription> {
  const what = `check template ${templateId} with the platform`;
  // Asked of the row, not the token cache: a warm access token outlives a disconnect.
  if (account.status !== 'connected') {
    throw new ApiError('sender_account_not_connected', `template ${templateId} cannot be checked: sender account ${account.oa_id} is ${account.status}`);
  }
  let answer;
  try {
    answer = await callAsAccount(ctx.parts.accessTokens, account.oa_id, (token) => ctx.parts.platform.getTemplateInfo(token, templateId));
  } catch (error) {
    if (error instanceof ReloginRequiredError) {
      throw new ApiError('sender_account_not_connected', `template ${templateId} cannot be checked: sender account ${account.oa_id} cannot call the platform (${error.reason})`);
    }
    return rethrowAsUnavailable(what, error);
  }
  if (!answer.ok) throw refusalOf(answer, 'template_refused', what, `the platform refused the template info of ${templateId} for sender account ${account.oa_id}`);
  const detail = answer.data;
  if (!isTemplateStatus(detail.status)) throw new ApiError('template_refused', `the platform reports template ${templateId} with status ${detail.status}, which the gateway does not know. Nothing was stored.`);
  const params = paramsOfDetail(detail);
  try {
    requireValidParams(params);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError('template_refused', `the platform describes template ${templateId} with params the gateway cannot enforce (${error.message}). Nothing was stored.`);
  }
  return { name: detail.templateName, status: detail.status, params, previewUrl: detail.previewUrl, checkedAt: ctx.clock() };
}

/** A template as the audit log keeps it, before and after a change: everything but its text's details (params by name). */
function auditedTemplate(row: TemplateRow): Record<string, unknown> {
  const params = parseTemplateParams(row.params);
  return {
    oa_id: row.oa_id,
    name: row.name,
    status: row.status,
    template_type: row.template_type,
    price: row.price,
    price_source: row.price_source,
    params: params.map((param) => param.name),
    verified: row.synced_at !== null,
  };
}

function templateTaken(templateId: string): ApiError {
  return new ApiError('template_taken', `template ${templateId} belongs to another workspace`);
}

/** Registers a template with the operator's price, or updates one of the workspace's. */
export async function registerTemplate({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string } & RegisterTemplateInput>): Promise<TemplateWithOaName> {
  const { workspaceId } = input;
  requireWholeNumber(input.price, 'price', 0, MAX_PRICE_VND);
  requireWholeNumber(input.template_type, 'template_type', 0, MAX_INT32);
  await requireWorkspace(ctx, workspaceId);
  const account = await findSenderAccount(ctx.store.db, workspaceId, input.oa_id);
  if (!account) throw new ApiError('sender_account_not_found', `sender account ${input.oa_id} not found in workspace ${workspaceId}`);
  const owner = await findTemplateWorkspace(ctx.store.db, input.template_id);
  if (owner !== undefined && owner !== workspaceId) throw templateTaken(input.template_id);
  const description = input.verify === false ? describedByOperator(input) : await describedByPlatform(ctx, account, input.template_id);
  const previous = await findTemplate(ctx.store.db, workspaceId, input.template_id);
  const now = ctx.clock();
  const row: TemplateRow = {
    template_id: input.template_id,
    workspace_id: workspaceId,
    oa_id: input.oa_id,
    name: description.name,
    status: description.status,
    template_type: input.template_type,
    preview_url: description.previewUrl,
    params: JSON.stringify(description.params),
    price: input.price,
    price_source: 'operator',
    synced_at: description.checkedAt,
    created_at: now,
    updated_at: now,
  };
  const saved = await upsertTemplate(ctx.store.db, row);
  if (!saved) throw templateTaken(input.template_id);
  ctx.parts.catalog.forgetTemplate(workspaceId, input.template_id);
  await recordAudit(ctx, { action: 'template.register', workspaceId, target: saved.template_id, before: previous ? auditedTemplate(previous) : null, after: auditedTemplate(saved) });
  return { ...saved, oa_name: account.name };
}

/** A workspace's templates, whatever their status. */
export async function listWorkspaceTemplates({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string }>): Promise<TemplateWithOaName[]> {
  await requireWorkspace(ctx, input.workspaceId);
  return selectTemplates(ctx.store.db, input.workspaceId, {});
}
