import { MAX_INT32, MAX_PRICE_VND } from '../../lib/limits.ts';
import type { TemplateRow, TemplateStatus } from '../../store/schema.ts';
import { findSenderAccount } from '../../store/sender-accounts.ts';
import { listTemplates as selectTemplates, upsertTemplate, type TemplateWithOaName } from '../../store/templates.ts';
import { recordAudit } from '../audit.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { TemplateParam } from '../template-data.ts';
import { requireWholeNumber, requireWorkspace } from './preconditions.ts';

export interface RegisterTemplateInput {
  template_id: string;
  name: string;
  status: TemplateStatus;
  template_type: number;
  oa_id: string;
  preview_url?: string;
  params: TemplateParam[];
  price: number;
}

/** Registers a template with the operator's price, or updates one of the workspace's. */
export async function registerTemplate({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string } & RegisterTemplateInput>): Promise<TemplateWithOaName> {
  const { workspaceId } = input;
  requireWholeNumber(input.price, 'price', 0, MAX_PRICE_VND);
  requireWholeNumber(input.template_type, 'template_type', 0, MAX_INT32);
  for (const param of input.params) {
    requireWholeNumber(param.max_length, `param "${param.name}" max_length`, 0, MAX_INT32);
    requireWholeNumber(param.min_length, `param "${param.name}" min_length`, 0, MAX_INT32);
  }
  await requireWorkspace(ctx, workspaceId);
  const account = await findSenderAccount(ctx.store.db, workspaceId, input.oa_id);
  if (!account) throw new ApiError('sender_account_not_found', `sender account ${input.oa_id} not found in workspace ${workspaceId}`);
  const names = new Set<string>();
  for (const param of input.params) {
    if (names.has(param.name)) throw badRequest(`param "${param.name}" is listed twice`);
    names.add(param.name);
    if (param.min_length > param.max_length) throw badRequest(`param "${param.name}" has min_length above max_length`);
  }
  const now = ctx.clock();
  const row: TemplateRow = {
    template_id: input.template_id,
    workspace_id: workspaceId,
    oa_id: input.oa_id,
    name: input.name,
    status: input.status,
    template_type: input.template_type,
    preview_url: input.preview_url ?? '',
    params: JSON.stringify(input.params),
    price: input.price,
    price_source: 'operator',
    synced_at: null,
    created_at: now,
    updated_at: now,
  };
  const saved = await upsertTemplate(ctx.store.db, row);
  if (!saved) throw new ApiError('template_taken', `template ${input.template_id} belongs to another workspace`);
  ctx.parts.catalog.forgetTemplate(workspaceId, input.template_id);
  await recordAudit(ctx, {
    action: 'template.register',
    workspaceId,
    target: saved.template_id,
    before: null,
    after: { oa_id: saved.oa_id, name: saved.name, status: saved.status, price: saved.price, params: input.params.map((param) => param.name) },
  });
  return { ...saved, oa_name: account.name };
}

/** A workspace's templates, whatever their status. */
export async function listWorkspaceTemplates({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string }>): Promise<TemplateWithOaName[]> {
  await requireWorkspace(ctx, input.workspaceId);
  return selectTemplates(ctx.store.db, input.workspaceId, {});
}
