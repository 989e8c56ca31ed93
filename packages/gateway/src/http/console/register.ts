import type { App, RouteDependencies } from '../route-support.ts';
import { registerConsoleSession } from '../routes/console/session.ts';
import { registerConsoleApp } from './static-app.ts';
import { registerConsoleMessages } from '../routes/console/messages.ts';
import { registerConsoleOverview } from '../routes/console/overview.ts';
import { registerConsoleSenderAccounts } from '../routes/console/sender-accounts.ts';
import { registerConsoleSending } from '../routes/console/sending.ts';
import { registerConsoleTemplates } from '../routes/console/templates.ts';
import { registerConsoleWallet } from '../routes/console/wallet.ts';
import { registerConsoleActivity } from '../routes/console/activity.ts';
import { registerConsoleApiKeys } from '../routes/console/api-keys.ts';
import { registerConsoleTeam } from '../routes/console/team.ts';
import { registerConsoleWebhookDeliveries } from '../routes/console/webhook-deliveries.ts';

/** The customers' console: its API under /console/api and the single-page app at /console. */
export function registerConsole(app: App, route: RouteDependencies): void {
  registerConsoleApp(app);
  registerConsoleSession(app, route);
  // Route modules of the console API, one line each:
  registerConsoleOverview(app, route);
  registerConsoleMessages(app, route);
  registerConsoleSending(app, route);
  registerConsoleTemplates(app, route);
  registerConsoleSenderAccounts(app, route);
  registerConsoleWallet(app, route);
  registerConsoleApiKeys(app, route);
  registerConsoleWebhookDeliveries(app, route);
  registerConsoleTeam(app, route);
  registerConsoleActivity(app, route);
}
