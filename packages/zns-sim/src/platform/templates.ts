/** ZNS templates: what the platform keeps for each, built from the seed, and the two template reads of the API. */
import { znsError } from '../errors.ts';
import type { SeedButton, SeedParam, SeedTemplate, TemplateQuality, TemplateStatus } from '../seed.ts';
import type { OaState } from './accounts.ts';
import type { Platform } from './platform-state.ts';

export interface TemplateParam {
  name: string;
  type: string;
  required: boolean;
  minLength: number;
  maxLength: number;
  acceptNull: boolean;
}

export interface TemplateState {
  template_id: string;
  /** template_id as a number: the API answers it as one, and it breaks ties when listing. */
  idNumber: number;
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
  params: TemplateParam[];
  buttons: SeedButton[];
}

/** The `status` query values of GET /template/all. */
const STATUS_BY_NUMBER: Record<number, TemplateStatus> = { 1: 'ENABLE', 2: 'PENDING_REVIEW', 3: 'REJECT', 4: 'DISABLE', 5: 'DELETE' };

export function templateParamFromSeed(param: SeedParam): TemplateParam {
  const required = param.required ?? true;
  return {
    name: param.name,
    type: param.type ?? 'STRING',
    required,
    minLength: param.min_length ?? 0,
    maxLength: param.max_length,
    acceptNull: param.accept_null ?? !required,
  };
}

/** The template as the seed describes it; `createdTime` stands in for a missing created_time. */
export function templateFromSeed(seed: SeedTemplate, oa: OaState, createdTime: number): TemplateState {
  return {
    template_id: seed.template_id,
    idNumber: Number(seed.template_id),
    oa,
    name: seed.name,
    status: seed.status ?? 'ENABLE',
    reason: seed.reason ?? '',
    template_type: seed.template_type ?? 1,
    template_tag: seed.template_tag ?? 'TRANSACTION',
    quality: seed.quality === undefined ? 'HIGH' : seed.quality,
    price: seed.price ?? '300',
    ...(seed.price_sdt !== undefined ? { price_sdt: seed.price_sdt } : {}),
    ...(seed.price_uid !== undefined ? { price_uid: seed.price_uid } : {}),
    timeout_ms: seed.timeout_ms ?? 7_200_000,
    preview_url: seed.preview_url ?? '',
    created_time: seed.created_time ?? createdTime,
    params: (seed.params ?? []).map(templateParamFromSeed),
    buttons: seed.buttons ?? [],
  };
}

function parseNonNegativeInteger(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,9}$/.test(value)) return null;
  return Number(value);
}

/** GET /template/all: the OA's templates, newest first, one page of them. */
export function templateList(platform: Platform, oa: OaState, query: Record<string, string | undefined>): object {
  const offset = parseNonNegativeInteger(query.offset);
  const limit = parseNonNegativeInteger(query.limit);
  if (offset === null || limit === null || limit < 1 || limit > 100) return znsError(-132);
  let statusFilter: TemplateStatus | null = null;
  if (query.status !== undefined && query.status !== '') {
    const statusNumber = parseNonNegativeInteger(query.status);
    const status = statusNumber === null ? undefined : STATUS_BY_NUMBER[statusNumber];
    if (status === undefined) return { error: -132, message: 'Invalid status', data: null };
    statusFilter = status;
  }
  const all: TemplateState[] = [];
  for (const template of platform.templates.values()) {
    if (template.oa === oa && (statusFilter === null ? template.status !== 'DELETE' : template.status === statusFilter)) all.push(template);
  }
  all.sort((a, b) => b.created_time - a.created_time || b.idNumber - a.idNumber);
  const page = all.slice(offset, offset + limit).map((template) => ({
    templateId: template.idNumber,
    templateName: template.name,
    createdTime: template.created_time,
    status: template.status,
    templateQuality: template.quality,
  }));
  return { error: 0, message: 'Success', data: page, metadata: { total: all.length } };
}

/** GET /template/info/v2. */
export function templateInfo(platform: Platform, oa: OaState, templateId: string | undefined): object {
  const template = templateId ? platform.templates.get(templateId) : undefined;
  if (!template) return znsError(-109);
  if (template.oa !== oa) return znsError(-117);
  const data: Record<string, unknown> = {
    templateId: template.idNumber,
    templateName: template.name,
    status: template.status,
    reason: template.reason,
    listParams: template.params.map((param) => ({ name: param.name, require: param.required, type: param.type, maxLength: param.maxLength, minLength: param.minLength, acceptNull: param.acceptNull })),
    listButtons: template.buttons.map((button) => ({ type: button.type, title: button.title, content: button.content })),
    timeout: template.timeout_ms,
    previewUrl: template.preview_url,
    templateQuality: template.quality,
    templateTag: template.template_tag,
    price: template.price,
  };
  if (template.price_sdt !== undefined) data.price_sdt = template.price_sdt;
  if (template.price_uid !== undefined) data.price_uid = template.price_uid;
  return { error: 0, message: 'Success', data };
}
