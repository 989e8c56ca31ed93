import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { API_KEY_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { listOas } from '../../../services/catalog.ts';
import { presentOa } from '../../presenters/catalog.ts';

export function registerListOas(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/oas',
    {
      schema: {
        tags: ['Catalog'],
        operationId: 'listOas',
        summary: 'List sender accounts (OAs)',
        description: 'Scope `templates:read`. The Zalo Official Accounts the workspace sends from.',
        response: {
          200: Type.Object({ oas: Type.Array(Type.Object({ oa_id: Type.String(), name: Type.String() })), count: Type.Integer() }),
        },
        'x-responses': {
          200: {
            description: "The workspace's sender accounts.",
            examples: {
              accounts: {
                summary: 'Two Official Accounts',
                value: { oas: [{ oa_id: EXAMPLE.oaId, name: EXAMPLE.oaName }, { oa_id: '4318269720189301002', name: 'Hoa Sen Chi nhánh Đà Nẵng' }], count: 2 },
              },
            },
          },
        },
        'x-error-types': [...API_KEY_ERRORS],
      },
      onRequest: requireScope(route, 'templates:read'),
    },
    async (request) => {
      const accounts = await listOas({ ctx: apiContextOf(request, route), input: {} });
      return { oas: accounts.map(presentOa), count: accounts.length };
    },
  );
}
