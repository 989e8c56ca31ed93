import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { API_KEY_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE, ORDER_TEMPLATE, OTP_TEMPLATE } from '../../openapi/example-data.ts';
import { listTemplates } from '../../../services/catalog.ts';
import { presentTemplate } from '../../presenters/catalog.ts';
import { TEMPLATE_STATUSES } from '../../../services/vocabulary.ts';

export const TemplateStatusSchema = Type.Enum(TEMPLATE_STATUSES);

export const TemplateSchema = Type.Object({
  template_id: Type.String(),
  name: Type.String(),
  status: TemplateStatusSchema,
  template_type: Type.Integer(),
  oa_id: Type.String(),
  oa_name: Type.String(),
  preview_url: Type.String(),
  price: Type.Integer({ description: 'VND charged per message' }),
  params: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.String(),
      required: Type.Boolean(),
      max_length: Type.Integer(),
      min_length: Type.Integer(),
    }),
  ),
});

export function registerListTemplates(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/templates',
    {
      schema: {
        tags: ['Catalog'],
        operationId: 'listTemplates',
        summary: 'List templates',
        description: 'Scope `templates:read`. Call before sending to learn parameter names. Only ENABLE templates can be sent.',
        querystring: Type.Object({ status: Type.Optional(TemplateStatusSchema), oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: { 200: Type.Object({ templates: Type.Array(TemplateSchema), count: Type.Integer() }) },
        'x-parameter-examples': { status: 'ENABLE', oa_id: EXAMPLE.oaId },
        'x-responses': {
          200: {
            description: "The workspace's templates with their params and price (VND per message).",
            examples: { templates: { summary: 'An order confirmation and an OTP template', value: { templates: [ORDER_TEMPLATE, OTP_TEMPLATE], count: 2 } } },
          },
        },
        'x-error-types': ['invalid_request', ...API_KEY_ERRORS],
      },
      onRequest: requireScope(route, 'templates:read'),
    },
    async (request) => {
      const templates = await listTemplates({ ctx: apiContextOf(request, route), input: request.query });
      return { templates: templates.map(presentTemplate), count: templates.length };
    },
  );
}
