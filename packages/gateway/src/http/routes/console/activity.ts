import { Type } from 'typebox';
import { readWorkspaceActivity } from '../../../services/console/activity.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { presentActivity } from '../../presenters/console-activity.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { ActivityEntrySchema, ActivityPaging, CONSOLE_READ_ERRORS } from './access-schemas.ts';

export const ACTIVITY_EXAMPLE = {
  id: 'act_01KAT3Q1A2B3C4D5E6F7G8H9J0',
  at: '2026-11-24T03:12:09.551Z',
  actor: { kind: 'console_user', id: 'usr_01KAT2Z9A1B2C3D4E5F6G7H8J9', email: 'chu@hoasen.vn' },
  action: 'api_key.webhook_change',
  target: 'key_01KAT30A1B2C3D4E5F6G7H8J9K',
  before: { webhook_url: 'https://hoasen.vn/webhooks/tms' },
  after: { webhook_url: 'https://api.hoasen.vn/tms/delivery' },
};

/** The workspace's activity log (owners): every change made in the console or by the operator. */
export function registerConsoleActivity(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/activity',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleListActivity',
        summary: 'Every change made to the workspace in the console or by the operator, newest first',
        querystring: ActivityPaging,
        response: { 200: Type.Object({ entries: Type.Array(ActivityEntrySchema), has_more: Type.Boolean() }) },
        'x-parameter-examples': { limit: 50, offset: 0 },
        'x-responses': { 200: { description: 'One page of the log.', examples: { page: { summary: 'A webhook URL changed', value: { entries: [ACTIVITY_EXAMPLE], has_more: false } } } } },
        'x-error-types': ['invalid_request', ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'owner'),
    },
    async (request) => {
      const ctx = consoleContextOf(request, route);
      return presentActivity(await readWorkspaceActivity({ ctx, input: { workspaceId: ctx.caller.workspaceId, ...request.query } }));
    },
  );
}
