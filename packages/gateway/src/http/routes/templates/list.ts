import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';
import { listTemplates } from '../../../services/catalog.ts';
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
        tags: ['catalog'],
        summary: 'List templates',
        description: 'Scope templates:read. Call before sending to learn parameter names. Only ENABLE templates can be sent.',
        querystring: Type.Object({ status: Type.Optional(TemplateStatusSchema), oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: { 200: Type.Object({ templates: Type.Array(TemplateSchema), count: Type.Integer() }), ...errorResponses(400, 401, 403, 429) },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'templates:read'),
    },
    async (request) => listTemplates({ ctx: contextOf(request, route.deps), query: request.query }),
  );
}
