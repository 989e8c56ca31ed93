import { Type } from 'typebox';
import { listTemplates } from '../../../services/catalog.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { CONSOLE_READ_ERRORS } from './access-schemas.ts';
import { presentTemplate } from '../../presenters/catalog.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { TemplateSchema, TemplateStatusSchema } from '../templates/list.ts';

export function registerConsoleTemplates(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/templates',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleListTemplates',
        summary: "The workspace's templates with their params, price and preview link",
        querystring: Type.Object({ status: Type.Optional(TemplateStatusSchema), oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: { 200: Type.Object({ templates: Type.Array(TemplateSchema) }) },
        'x-error-types': ['invalid_request', ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => {
      const templates = await listTemplates({ ctx: consoleContextOf(request, route), input: request.query });
      return { templates: templates.map(presentTemplate) };
    },
  );
}
