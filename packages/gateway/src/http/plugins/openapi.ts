import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { WebhookRules } from '../openapi/webhooks.ts';
import { buildReferenceDocuments, type ReferenceDocuments } from '../openapi/documents.ts';
import type { OpenApiDocument } from '../openapi/document-types.ts';
import { registerReferencePages } from '../openapi/pages.ts';
import { ALL_SECURITY_SCHEMES } from '../openapi/shared-components.ts';
import { ErrorBody } from '../schemas.ts';
import type { RequestGuard } from './guards.ts';

export const PUBLIC_DOCUMENT_URL = '/openapi.json';
export const OPERATOR_DOCUMENT_URL = '/admin/v1/openapi.json';
export const CONSOLE_DOCUMENT_URL = '/console/api/openapi.json';

export interface OpenApiSettings {
  /** Guards the operator document, like the operator API it describes. */
  requireOperator: RequestGuard;
  /** The delivery-report rules the public document states. */
  webhooks: WebhookRules;
}

/**
 * The references: /openapi.json (the public API, open), /console/api/openapi.json (the console's
 * API, open like the console's pages) and /admin/v1/openapi.json (the operator API, behind the
 * operator token), generated from the routes' schemas, and the pages of the first and last.
 */
export async function registerOpenApi(app: FastifyInstance, settings: OpenApiSettings): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', info: { title: 'TMS', version: '1.0.0' }, components: { securitySchemes: ALL_SECURITY_SCHEMES } },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`) },
  });

  // Built on first use, once every route is registered, then kept: the routes do not change.
  let documents: ReferenceDocuments | undefined;
  const documentsOf = (): ReferenceDocuments => {
    documents ??= buildReferenceDocuments(app.swagger() as unknown as OpenApiDocument, settings.webhooks);
    return documents;
  };

  app.get(PUBLIC_DOCUMENT_URL, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('x-content-type-options', 'nosniff').send(documentsOf().public),
  );
  app.get(CONSOLE_DOCUMENT_URL, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('x-content-type-options', 'nosniff').send(documentsOf().console),
  );
  app.get(OPERATOR_DOCUMENT_URL, { schema: { hide: true }, onRequest: settings.requireOperator }, async (_request, reply) =>
    reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-store').send(documentsOf().operator),
  );
  registerReferencePages(app, { publicUrl: PUBLIC_DOCUMENT_URL, operatorUrl: OPERATOR_DOCUMENT_URL });
}
