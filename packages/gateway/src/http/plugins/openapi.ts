import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../schemas.ts';

interface OpenApiOperation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: { type?: unknown } }[];
  requestBody?: { content?: Record<string, { schema?: SchemaObject }> };
  responses?: Record<string, { description?: string }>;
}

interface SchemaObject {
  type?: unknown;
  description?: string;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  items?: SchemaObject;
  anyOf?: SchemaObject[];
  const?: unknown;
  maxItems?: number;
  minItems?: number;
  maxLength?: number;
  pattern?: string;
}

/** The contract's rules and our decisions where it says "not shown" (decisions.md), for integrators. */
const API_DESCRIPTION = [
  'Send pre-approved Zalo ZNS templates to Vietnamese phone numbers. Production only: every 202 is a real, charged message, committed before the answer.',
  '',
  'Authentication: `Authorization: Bearer <API key>` or `X-API-Key: <API key>`. Missing, wrong or revoked key: 401. Missing scope or suspended workspace: 403. Another workspace\'s resource: 404.',
  'Errors: `{ "error": { "code": <HTTP status>, "message": "…" } }` everywhere, unknown routes and malformed JSON included. Statuses: 400, 401, 402, 403, 404, 409, 413 (body over 1 MiB), 415 (not JSON), 422 (Idempotency-Key reused with another body), 429, 500, 503.',
  'Timestamps in responses: ISO 8601 UTC with milliseconds, except quota `reset_at`, written in Vietnam time (+07:00).',
  '`send_at`: ISO 8601; without an offset it is Vietnam time; at most 60 days ahead (else 400); a past value means now (`scheduled_at: null`).',
  'Phones: spaces, dots, dashes and parentheses are stripped; `+84…` and `0…` become `84…`; anything else gets `84` in front. Nothing else is validated: a wrong number fails at the platform. `carrier` comes from the prefix (Viettel, Mobifone, Vinaphone, Vietnamobile, Gmobile, Itel, Reddi) or is null.',
  '`template_data`: every required param present, values strings within min_length..max_length, no unknown keys (400 on send; `invalid_template_data` per recipient on batch and RSA).',
  'Money: whole VND. Each message is charged its template price when queued; cancel and failure refund it. Wallet too low or account cap reached: 402, saying which; a batch that does not fit is refused whole.',
  "Daily quota: the platform's (see `GET /api/v1/quota`), reserved per sender account for the Vietnam day the message is sent. Batch and RSA recipients past it get `daily_quota_exceeded`; a single send is counted but never refused for it.",
  'Per-recipient errors start with a stable code and a colon: `invalid_template_data`, `missing_phone`, `daily_quota_exceeded`, `rsa_phone_invalid`. `rsa_phone` is standard base64 of RSA-OAEP (SHA-256, MGF1 SHA-1).',
  'Cancel: only `queued` messages (deleted and refunded); any other state 409; unknown or already cancelled 404.',
  'Listing: newest first; `limit` 1..200 (default 50), `offset` ≥ 0; `count` is the page size; `has_more` tells whether more exist. Extra filters: `template_id`, `oa_id`, `to`.',
  '`Idempotency-Key` (any POST, up to 255 characters): the same key and body within 24 hours returns the first response (header `Idempotent-Replayed: true`) and creates nothing; another body 422; still in flight 409. Only successful responses are remembered.',
  'Rate limit per API key (default 50/s, burst 100): 429 with `Retry-After` seconds. Every response carries `X-Request-Id`.',
  'Failures send no webhook: find them with `GET /api/v1/messages?status=failed&from=…`.',
].join('\n\n');

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'TMS: template messaging gateway',
        version: '1.0.0',
        description: API_DESCRIPTION,
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API key (or the operator token on /admin/v1)' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }, { apiKeyHeader: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`) },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(renderReference(app.swagger() as unknown as OpenApiDocument)),
  );
}

interface OpenApiDocument {
  info: { title: string; description?: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

/** Blank-line-separated paragraphs with `code`, as the descriptions are written. */
function renderProse(text: string): string {
  return text
    .split('\n\n')
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
    .join('\n');
}

function describeType(schema: SchemaObject | undefined): string {
  if (!schema) return '';
  if (schema.anyOf) return schema.anyOf.map(describeType).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === 'array') return `array of ${describeType(schema.items)}`;
  return String(schema.type ?? 'object');
}

function renderFields(schema: SchemaObject | undefined, prefix = ''): string {
  if (!schema?.properties) return '';
  return Object.entries(schema.properties)
    .map(([name, field]) => {
      const required = schema.required?.includes(name) ? 'yes' : 'no';
      const notes = [field.description, field.maxLength ? `max ${field.maxLength} chars` : '', field.maxItems ? `${field.minItems ?? 0}–${field.maxItems} items` : '']
        .filter(Boolean)
        .join('; ');
      const nested = field.type === 'array' ? renderFields(field.items, `${prefix}${name}[].`) : renderFields(field, `${prefix}${name}.`);
      return `<tr><td><code>${escapeHtml(prefix + name)}</code></td><td>${escapeHtml(describeType(field))}</td><td>${required}</td><td>${escapeHtml(notes)}</td></tr>${nested}`;
    })
    .join('');
}

/** A plain, script-free API reference rendered from the same OpenAPI document. */
export function renderReference(document: OpenApiDocument): string {
  const sections = Object.entries(document.paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => {
        const parameters = (operation.parameters ?? [])
          .map((parameter) => `<tr><td><code>${escapeHtml(parameter.name)}</code> (${parameter.in})</td><td>${escapeHtml(describeType(parameter.schema as SchemaObject))}</td><td>${parameter.required ? 'yes' : 'no'}</td><td>${escapeHtml(parameter.description ?? '')}</td></tr>`)
          .join('');
        const body = renderFields(operation.requestBody?.content?.['application/json']?.schema);
        const statuses = Object.keys(operation.responses ?? {}).join(', ');
        return `<section><h2><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h2>
<p><strong>${escapeHtml(operation.summary ?? '')}</strong></p>${renderProse(operation.description ?? '')}
${parameters ? `<h3>Parameters</h3><table><tr><th>name</th><th>type</th><th>required</th><th>notes</th></tr>${parameters}</table>` : ''}
${body ? `<h3>Body</h3><table><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr>${body}</table>` : ''}
<p>Statuses: ${escapeHtml(statuses)}</p></section>`;
      }),
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.4}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}.method{background:#234;color:#fff;padding:0 .4rem;border-radius:3px}section{border-top:1px solid #ddd;margin-top:1.5rem}</style></head>
<body><h1>${escapeHtml(document.info.title)} <small>v${escapeHtml(document.info.version)}</small></h1>${renderProse(document.info.description ?? '')}
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${sections}</body></html>`;
}
