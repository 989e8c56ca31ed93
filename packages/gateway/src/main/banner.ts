import type { Config } from '../config/config.ts';
import type { DemoCredentials } from '../services/demo.ts';

/** What `tms start` prints: where it listens, how to reach the operator API, and the demo's curl lines. */
export function printStartBanner(input: {
  config: Config;
  url: string;
  generated: string[];
  secretsFile: string | null;
  adminTokenFromFile: boolean;
  demo: DemoCredentials | null;
}): void {
  const { config, url, generated, secretsFile, adminTokenFromFile, demo } = input;
  const lines = [
    '',
    `TMS gateway listening on ${url}`,
    `  store:          ${config.database.kind === 'sqlite' ? `SQLite ${config.database.file}` : 'PostgreSQL (DATABASE_URL)'}`,
    `  API reference:  ${url}/docs   (OpenAPI: ${url}/openapi.json)`,
    `  operator token: ${adminTokenFromFile ? `${config.adminToken} (from ${secretsFile})` : 'from TMS_ADMIN_TOKEN'}   (Authorization: Bearer … on ${url}/admin/v1)`,
  ];
  if (generated.length > 0) lines.push(`  generated ${generated.join(' and ')} into ${secretsFile} (mode 0600); set them in the environment to choose your own`);
  if (demo) {
    lines.push(
      '',
      `Demo workspace ${demo.workspaceId}${demo.created ? ' (created now)' : ''}: 1,000,000 VND, sender account 4318269720189301001, templates 250001-250003`,
      `  export TMS_API_KEY=${demo.apiKey}`,
      `  curl -s ${url}/api/v1/templates -H "Authorization: Bearer $TMS_API_KEY"`,
      `  curl -s ${url}/api/v1/messages/send -H "Authorization: Bearer $TMS_API_KEY" -H 'Content-Type: application/json' \\`,
      `       -d '{"template_id":"250002","phone":"0912345678","template_data":{"otp":"123456"}}'`,
      `  curl -s "${url}/api/v1/messages?limit=5" -H "Authorization: Bearer $TMS_API_KEY"`,
    );
  }
  console.log(`${lines.join('\n')}\n`);
}
