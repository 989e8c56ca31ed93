/**
 * The three reference documents, cut from the one @fastify/swagger generates from the routes: the
 * public API (`/api/v1` and its delivery-report webhook), the console's (`/console/api`, the
 * routes tagged Console) and the operator's (everything else).
 * Each operation gets its examples, documented headers and one error response per status of the
 * error types its route declares, and each document keeps only the components it uses.
 */
import type { ErrorType } from '../../services/errors.ts';
import { CONSOLE_DESCRIPTION, CONSOLE_TAGS, OPERATOR_DESCRIPTION, OPERATOR_TAGS, PUBLIC_DESCRIPTION, PUBLIC_TAGS } from './descriptions.ts';
import type { OpenApiDocument, OperationObject, ParameterObject, PathItem, Reference, ResponseObject, TagObject } from './document-types.ts';
import { errorExamples, groupByStatus } from './error-responses.ts';
import { reshapeDocumentSchemas } from './schema-shapes.ts';
import { HEADERS, PARAMETERS, SECURITY, SECURITY_SCHEMES, headerRef, parameterRef, type Audience } from './shared-components.ts';
import { addDeliveryReportWebhook, type WebhookRules } from './webhooks.ts';

export type { Audience } from './shared-components.ts';

export interface ReferenceDocuments {
  public: OpenApiDocument;
  operator: OpenApiDocument;
  console: OpenApiDocument;
}

const TITLE: Record<Audience, string> = { public: 'TMS: template messaging API', operator: 'TMS: operator API', console: 'TMS: console API' };
const DESCRIPTION: Record<Audience, string> = { public: PUBLIC_DESCRIPTION, operator: OPERATOR_DESCRIPTION, console: CONSOLE_DESCRIPTION };
const TAGS: Record<Audience, TagObject[]> = { public: PUBLIC_TAGS, operator: OPERATOR_TAGS, console: CONSOLE_TAGS };

const isUnder = (path: string, prefix: string): boolean => path === prefix || path.startsWith(`${prefix}/`);

function audienceOf(path: string): Audience {
  if (isUnder(path, '/api/v1')) return 'public';
  if (isUnder(path, '/console/api')) return 'console';
  return 'operator';
}

/** How each audience's guard words its refusals (guards.ts), under the route's own wording. */
const AUDIENCE_ERROR_MESSAGES: Record<Audience, Partial<Record<ErrorType, string>>> = {
  public: {},
  operator: { unauthenticated: 'missing or wrong operator token' },
  console: { unauthenticated: 'no session, or it has expired: sign in again' },
};

/** The POSTs of /api/v1, and the console's sends, read Idempotency-Key (route-support.ts idempotencyOf). */
function readsIdempotencyKey(place: { audience: Audience; method: string; path: string }): boolean {
  if (place.method !== 'post') return false;
  if (place.audience === 'public') return true;
  return place.audience === 'console' && (place.path.endsWith('/messages/send') || place.path.endsWith('/messages/batch') || place.path.endsWith('/cancel'));
}

/** A console route that works without a session (sign-in, invitations) is one that never answers 401. */
const isOpenConsoleRoute = (errorTypes: readonly ErrorType[] | undefined): boolean => !(errorTypes ?? []).includes('unauthenticated');

const CHANGING_METHODS = new Set(['post', 'put', 'patch', 'delete']);

interface OperationPlace {
  audience: Audience;
  method: string;
  path: string;
}

/** X-Request-Id always; on the public API the rate-limit figures once the key is known (not on 401 and 403), the replay flag on a POST's success. */
function responseHeaders(place: OperationPlace, status: string): Record<string, Reference> {
  const headers: Record<string, Reference> = { 'X-Request-Id': headerRef('RequestId') };
  if (place.audience !== 'public') return headers;
  if (status !== '401' && status !== '403') {
    headers['X-RateLimit-Limit'] = headerRef('RateLimitLimit');
    headers['X-RateLimit-Remaining'] = headerRef('RateLimitRemaining');
  }
  if (status === '429') headers['Retry-After'] = headerRef('RetryAfter');
  if (status.startsWith('2') && readsIdempotencyKey(place)) headers['Idempotent-Replayed'] = headerRef('IdempotentReplayed');
  return headers;
}

function errorResponse(types: readonly ErrorType[], messages: Partial<Record<ErrorType, string>> | undefined): ResponseObject {
  return {
    description: types.map((type) => `\`${type}\``).join(', '),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' }, examples: errorExamples(types, messages) } },
  };
}

/** The error types by status; each response's examples explain them one by one. */
function errorTable(types: readonly ErrorType[]): string {
  const rows = [...groupByStatus(types)].map(([status, group]) => `| ${status} | ${group.map((type) => `\`${type}\``).join(', ')} |`);
  return ['**Error types** (see the responses for what each means and what to do)', '', '| Status | Types |', '| --- | --- |', ...rows].join('\n');
}

/** Turns a route's documentation keys into examples, headers and error responses, and removes them. */
function completeOperation(operation: OperationObject, place: OperationPlace): void {
  const {
    'x-request-headers': requestHeaders,
    'x-parameter-examples': parameterExamples,
    'x-optional-body': optionalBody,
    'x-request-examples': requestExamples,
    'x-responses': successes,
    'x-error-types': errorTypes,
    'x-error-messages': errorMessages,
  } = operation;
  delete operation['x-request-headers'];
  delete operation['x-parameter-examples'];
  delete operation['x-error-messages'];
  delete operation['x-optional-body'];
  delete operation['x-request-examples'];
  delete operation['x-responses'];
  delete operation['x-error-types'];

  for (const parameter of operation.parameters ?? []) {
    if ('name' in parameter && parameterExamples && Object.hasOwn(parameterExamples, parameter.name)) parameter.example = parameterExamples[parameter.name];
  }
  const parameters: (ParameterObject | Reference)[] = [...(operation.parameters ?? []), parameterRef('RequestId')];
  if (readsIdempotencyKey(place)) parameters.push(parameterRef('IdempotencyKey'));
  if (place.audience === 'console') {
    if (isOpenConsoleRoute(errorTypes)) operation.security = [];
    else if (CHANGING_METHODS.has(place.method)) parameters.push(parameterRef('CsrfToken'));
  }
  for (const [name, header] of Object.entries(requestHeaders ?? {})) {
    parameters.push({ name, in: 'header', required: true, description: header.description, schema: { type: 'string' }, example: header.example });
  }
  operation.parameters = parameters;

  if (requestExamples) {
    // A route that parses its own body (the platform events keep the raw bytes) declares no body schema.
    operation.requestBody ??= { required: true, content: { 'application/json': { schema: { type: 'object' } } } };
    const json = operation.requestBody.content['application/json'];
    if (json) json.examples = requestExamples;
  }
  if (optionalBody && operation.requestBody) operation.requestBody.required = false;

  for (const [status, docs] of Object.entries(successes ?? {})) {
    const mediaType = docs.mediaType ?? 'application/json';
    const response: ResponseObject = operation.responses[status] ?? { description: docs.description };
    response.description = docs.description;
    // A body that is not JSON has no response schema (it would be serialised as JSON): it is text, unless the route says otherwise.
    response.content ??= { [mediaType]: { schema: docs.schema ?? { type: 'string' } } };
    const media = response.content[mediaType];
    if (media) media.examples = docs.examples;
    if (docs.headers) response.headers = { ...response.headers, ...docs.headers };
    operation.responses[status] = response;
  }

  if (errorTypes && errorTypes.length > 0) {
    for (const [status, types] of groupByStatus(errorTypes)) operation.responses[String(status)] = errorResponse(types, { ...AUDIENCE_ERROR_MESSAGES[place.audience], ...errorMessages });
    operation.description = [operation.description, errorTable(errorTypes)].filter(Boolean).join('\n\n');
  }
  for (const [status, response] of Object.entries(operation.responses)) response.headers = { ...response.headers, ...responseHeaders(place, status) };
  operation.responses = Object.fromEntries(Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** The `$ref`s a document uses, as "kind/name" (schemas/ErrorBody). */
function usedComponents(document: OpenApiDocument): Set<string> {
  const used = new Set<string>();
  for (const match of JSON.stringify({ ...document, components: undefined }).matchAll(/"#\/components\/(\w+)\/([\w.-]+)"/g)) used.add(`${match[1]}/${match[2]}`);
  // Components may refer to each other: follow them until nothing new turns up.
  let size = -1;
  while (used.size !== size) {
    size = used.size;
    for (const entry of [...used]) {
      const [kind, name] = entry.split('/') as [keyof OpenApiDocument['components'], string];
      const component = document.components[kind]?.[name];
      for (const match of JSON.stringify(component ?? {}).matchAll(/"#\/components\/(\w+)\/([\w.-]+)"/g)) used.add(`${match[1]}/${match[2]}`);
    }
  }
  return used;
}

function keepUsed<T>(components: Record<string, T> | undefined, kind: string, used: Set<string>): Record<string, T> | undefined {
  const kept = Object.entries(components ?? {}).filter(([name]) => used.has(`${kind}/${name}`));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

function buildDocument(generated: OpenApiDocument, audience: Audience, rules: WebhookRules): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  for (const [path, item] of Object.entries(structuredClone(generated.paths))) {
    if (audienceOf(path) !== audience) continue;
    for (const [method, operation] of Object.entries(item)) completeOperation(operation, { audience, method, path });
    paths[path] = item;
  }
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: TITLE[audience], version: generated.info.version, description: DESCRIPTION[audience] },
    servers: [{ url: '/', description: 'This gateway' }],
    security: SECURITY[audience],
    tags: [],
    paths,
    components: {
      schemas: structuredClone(generated.components.schemas ?? {}),
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES[audience],
    },
  };
  if (audience === 'public') addDeliveryReportWebhook(document, rules);
  const usedTags = new Set([...Object.values(document.paths), ...Object.values(document.webhooks ?? {})].flatMap((item) => Object.values(item).flatMap((operation) => operation.tags ?? [])));
  document.tags = TAGS[audience].filter((tag) => usedTags.has(tag.name));
  const used = usedComponents(document);
  document.components = {
    schemas: keepUsed(document.components.schemas, 'schemas', used),
    parameters: keepUsed(document.components.parameters, 'parameters', used),
    headers: keepUsed(document.components.headers, 'headers', used),
    securitySchemes: document.components.securitySchemes,
  };
  reshapeDocumentSchemas(document);
  return JSON.parse(JSON.stringify(document)) as OpenApiDocument;
}

/** The three documents from the one @fastify/swagger generated for every route. */
export function buildReferenceDocuments(generated: OpenApiDocument, rules: WebhookRules): ReferenceDocuments {
  return { public: buildDocument(generated, 'public', rules), operator: buildDocument(generated, 'operator', rules), console: buildDocument(generated, 'console', rules) };
}
