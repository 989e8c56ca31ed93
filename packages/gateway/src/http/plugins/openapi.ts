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

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'TMS: template messaging gateway',
        version: '1.0.0',
        description:
          'Send pre-approved Zalo ZNS templates to Vietnamese phone numbers. Every accepted request is a real, charged message. Authenticate with Authorization: Bearer <API key> or X-API-Key. Errors are { "error": { "code", "message" } } with code equal to the HTTP status. POSTs accept an Idempotency-Key header (24 hours).',
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
<p><strong>${escapeHtml(operation.summary ?? '')}</strong></p><p>${escapeHtml(operation.description ?? '')}</p>
${parameters ? `<h3>Parameters</h3><table><tr><th>name</th><th>type</th><th>required</th><th>notes</th></tr>${parameters}</table>` : ''}
${body ? `<h3>Body</h3><table><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr>${body}</table>` : ''}
<p>Statuses: ${escapeHtml(statuses)}</p></section>`;
      }),
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.4}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}.method{background:#234;color:#fff;padding:0 .4rem;border-radius:3px}section{border-top:1px solid #ddd;margin-top:1.5rem}</style></head>
<body><h1>${escapeHtml(document.info.title)} <small>v${escapeHtml(document.info.version)}</small></h1><p>${escapeHtml(document.info.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${sections}</body></html>`;
}
