/** Control-API reads and changes of a template: what review, quality scoring or an OA admin would do to it. */
import { ControlError } from '../control-error.ts';
import { isJsonObject } from '../json-object.ts';
import { TEMPLATE_QUALITIES, TEMPLATE_STATUSES, type SeedParam, type TemplateQuality, type TemplateStatus } from '../seed.ts';
import type { Platform } from './platform-state.ts';
import { templateParamFromSeed, type TemplateState } from './templates.ts';

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

export interface TemplatePatch {
  status?: TemplateStatus;
  reason?: string;
  quality?: TemplateQuality | null;
  price?: string;
  name?: string;
  params?: SeedParam[];
}

function templateView(template: TemplateState): TemplateView {
  return {
    template_id: template.template_id,
    oa_id: template.oa.oa_id,
    name: template.name,
    status: template.status,
    reason: template.reason,
    quality: template.quality,
    template_type: template.template_type,
    template_tag: template.template_tag,
    price: template.price,
    params: template.params.map((param) => ({ name: param.name, type: param.type, required: param.required, min_length: param.minLength, max_length: param.maxLength, accept_null: param.acceptNull })),
  };
}

export function findTemplate(platform: Platform, templateId: string): TemplateView | null {
  const template = platform.templates.get(templateId);
  return template ? templateView(template) : null;
}

/** Applies every field of `patch` or, when one is bad, none. */
export function updateTemplate(platform: Platform, templateId: string, patch: unknown): TemplateView {
  const template = platform.templates.get(templateId);
  if (!template) throw new ControlError(404, `unknown template_id ${templateId}`);
  if (!isJsonObject(patch)) throw new ControlError(400, 'body must be a JSON object');
  const next = { ...template };
  for (const [field, value] of Object.entries(patch)) {
    switch (field) {
      case 'status':
        if (typeof value !== 'string' || !TEMPLATE_STATUSES.includes(value as TemplateStatus)) throw new ControlError(400, `status must be one of ${TEMPLATE_STATUSES.join(', ')}`);
        next.status = value as TemplateStatus;
        break;
      case 'quality':
        if (value !== null && (typeof value !== 'string' || !TEMPLATE_QUALITIES.includes(value as TemplateQuality))) throw new ControlError(400, `quality must be null or one of ${TEMPLATE_QUALITIES.join(', ')}`);
        next.quality = value as TemplateQuality | null;
        break;
      case 'reason':
      case 'price':
      case 'name':
        if (typeof value !== 'string') throw new ControlError(400, `${field} must be a string`);
        next[field] = value;
        break;
      case 'params':
        if (!Array.isArray(value)) throw new ControlError(400, 'params must be an array');
        next.params = value.map((param: unknown, index) => {
          if (!isJsonObject(param) || typeof param.name !== 'string' || typeof param.max_length !== 'number') throw new ControlError(400, `params[${index}] needs name and max_length`);
          return templateParamFromSeed(param as unknown as SeedParam);
        });
        break;
      default:
        throw new ControlError(400, `unknown template field ${field}`);
    }
  }
  Object.assign(template, next);
  return templateView(template);
}
