import { ERROR_CATALOGUE, ERROR_TYPES, type ErrorType } from './errors.ts';

/** Where the generated page lives, from the repository root. */
export const ERROR_DOCS_FILE = 'docs/errors.md';

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function recipientFormOf(type: ErrorType): 'also' | 'only' | undefined {
  return (ERROR_CATALOGUE[type] as { recipient?: 'also' | 'only' }).recipient;
}

function statusCell(type: ErrorType): string {
  return recipientFormOf(type) === 'only' ? 'per recipient only' : String(ERROR_CATALOGUE[type].status);
}

/** docs/errors.md, generated from ERROR_CATALOGUE so the page cannot drift from the code. */
export function renderErrorCatalogueMarkdown(): string {
  const rows = ERROR_TYPES.map((type) => {
    const entry = ERROR_CATALOGUE[type];
    return `| \`${type}\` | ${statusCell(type)} | ${cell(entry.meaning)} | ${cell(entry.action)} |`;
  });
  const recipientRows = ERROR_TYPES.filter((type) => recipientFormOf(type) !== undefined).map((type) => {
    const entry = ERROR_CATALOGUE[type];
    const where = recipientFormOf(type) === 'only' ? 'per recipient only' : `also a whole-request ${entry.status} (single send)`;
    return `| \`${type}\` | ${where} | ${cell(entry.meaning)} | ${cell(entry.action)} |`;
  });
  return [
    '# Errors',
    '',
    '<!-- Generated from packages/gateway/src/services/errors.ts by `npm run docs:errors`. Do not edit by hand. -->',
    '',
    'Every error answer of the gateway, on `/api/v1`, `/admin/v1` and everywhere else, has the same body:',
    '',
    '```json',
    '{ "error": { "code": 402, "type": "insufficient_balance", "message": "insufficient wallet balance: 600 VND needed, 100 VND available" } }',
    '```',
    '',
    '- `type` names the error. It comes from the closed list below and does not change once published.',
    '- `code` is the HTTP status of the answer.',
    '- `message` is one sentence for people: it explains this case, and its wording may change.',
    '- Every answer carries an `X-Request-Id` header; quote it when asking for help.',
    '',
    '**Branch on `type`, never on `message`.** The SDK (`@tms/client`) exposes it as `TmsError.type`.',
    '',
    '## Error types',
    '',
    '| Type | HTTP status | Meaning | What to do |',
    '|---|---|---|---|',
    ...rows,
    '',
    '## Per-recipient errors',
    '',
    'A batch (`POST /api/v1/messages/batch`) or RSA (`POST /api/v1/messages/rsa`) request can succeed',
    '(`202`) while some of its recipients are not queued. Each such recipient has `"status": "error"` in',
    '`results` and an `error` string: the type, a colon, a space and an explanation, for example',
    '`"daily_quota_exceeded: sender account 4318269720189301001 has no daily quota left for 2026-11-21 (daily quota 2000)"`.',
    'Branch on the part before the first colon. These types appear there:',
    '',
    '| Type | Where | Meaning | What to do |',
    '|---|---|---|---|',
    ...recipientRows,
    '',
  ].join('\n');
}
