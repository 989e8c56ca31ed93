import type { Config } from '../config/config.ts';
import type { DemoCredentials, DemoOwner } from '../services/demo.ts';

/** What `tms start` prints: where it listens, how to reach the operator API, and the demo's console sign-in and curl lines. */
export function printStartBanner(input: {
  config: Config;
  url: string;
  generated: string[];
  secretsFile: string | null;
  adminTokenFromFile: boolean;
  demo: DemoCredentials | null;
  demoOwner?: DemoOwner | null;
}): void {
  const { config, url, generated, secretsFile, adminTokenFromFile, demo, demoOwner } = input;
  const lines = [
    '',
    `TMS gateway listening on ${url}`,
    `  store:          ${config.database.kind === 'sqlite' ? `SQLite ${config.database.file}` : 'PostgreSQL (DATABASE_URL)'}`,
    `  API reference:  ${url}/docs   (OpenAPI: ${url}/openapi.json)`,
    `  operator reference: ${url}/admin/docs   (the operator token unlocks it)`,
    `  operator token: ${adminTokenFromFile ? `${config.adminToken} (from ${secretsFile})` : 'from TMS_ADMIN_TOKEN'}   (Authorization: Bearer … on ${url}/admin/v1)`,
  ];
  if (generated.length > 0) lines.push(`  generated ${generated.join(' and ')} into ${secretsFile} (mode 0600); set them in the environment to choose your own`);
  if (demo) {
    lines.push(
      '',
      `Demo workspace ${demo.workspaceId}${demo.created ? ' (created now)' : ''}: 1,000,000 VND, sender account 4318269720189301001, templates 250001-250003`,
      ...consoleSignIn(url, demoOwner ?? null),
      `  export TMS_API_KEY=${demo.apiKey}`,
      `  curl -s ${url}/api/v1/templates -H "Authorization: Bearer $TMS_API_KEY"`,
      `  curl -s ${url}/api/v1/messages/send -H "Authorization: Bearer $TMS_API_KEY" -H 'Content-Type: application/json' \\`,
      `       -d '{"template_id":"250002","phone":"0912345678","template_data":{"otp":"123456"}}'`,
      `  curl -s "${url}/api/v1/messages?limit=5" -H "Authorization: Bearer $TMS_API_KEY"`,
      '',
      ...webhookWalkthrough(input, demo),
    );
  }
  console.log(`${lines.join('\n')}\n`);
}

/** The console's address and the demo owner's sign-in. */
function consoleSignIn(url: string, owner: DemoOwner | null): string[] {
  if (!owner) return [];
  return [
    `  console:  ${url}/console`,
    `            e-mail ${owner.email}   password ${owner.password ?? '(changed since it was generated)'}`,
  ];
}

/** Where the demo key's delivery reports can go: a local `tms-client listen`, when private targets are allowed. */
function webhookWalkthrough(input: { config: Config; url: string; adminTokenFromFile: boolean }, demo: DemoCredentials): string[] {
  const { config, url, adminTokenFromFile } = input;
  if (!config.allowPrivateWebhookTargets) {
    return ['Delivery-report webhooks to this machine (tms-client listen) need TMS_WEBHOOK_ALLOW_PRIVATE=true.'];
  }
  return [
    'Delivery reports to a receiver on this machine (private webhook targets allowed: TMS_WEBHOOK_ALLOW_PRIVATE=true):',
    `  npx tms-client listen --port 4000 --api-key "$TMS_API_KEY"        # in a second terminal`,
    ...(adminTokenFromFile ? [`  export TMS_ADMIN_TOKEN=${config.adminToken}`] : []),
    `  curl -s -X PATCH ${url}/admin/v1/api-keys/${demo.apiKeyId} -H "Authorization: Bearer $TMS_ADMIN_TOKEN" \\`,
    `       -H 'Content-Type: application/json' -d '{"webhook_url":"http://127.0.0.1:4000/"}'`,
    '  then send again: the listener prints each report once its signature checks out.',
  ];
}
