import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { ApiError, ERROR_CATALOGUE, type ErrorType } from '../../services/errors.ts';

/** The framework's own client errors, by status, as catalogued types with our wording. */
const FRAMEWORK_ERRORS: Record<number, { type: ErrorType; message?: string }> = {
  400: { type: 'invalid_request' },
  404: { type: 'route_not_found' },
  413: { type: 'payload_too_large', message: 'request body is larger than 1 MiB' },
  414: { type: 'uri_too_long', message: 'the request path is too long' },
  415: { type: 'unsupported_media_type', message: 'request body must be JSON (Content-Type: application/json)' },
  431: { type: 'headers_too_large', message: 'the request headers are too large' },
};

export interface ErrorBody {
  error: { code: number; type: ErrorType; message: string };
}

/** The contract's error body with the catalogued type; `code` is the type's status. */
export function errorBody(type: ErrorType, message: string): ErrorBody {
  return { error: { code: ERROR_CATALOGUE[type].status, type, message } };
}

/** Answers with the contract's error body; the status comes from the catalogue. */
export function sendError(reply: FastifyReply, type: ErrorType, message: string): FastifyReply {
  const body = errorBody(type, message);
  return reply.code(body.error.code).type('application/json').send(body);
}

interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** Turns a schema violation into one plain sentence naming the field. */
function describeValidation(error: FastifyError & { validation?: ValidationIssue[]; validationContext?: string }): string {
  const issue = error.validation?.[0];
  if (!issue) return error.message;
  const field = `${error.validationContext ?? 'body'}${issue.instancePath.replaceAll('/', '.').replace(/^\./, '.')}`;
  if (issue.instancePath.endsWith('/tracking_id')) {
    return `${field} must be at most 48 characters of letters, digits, dot, hyphen or underscore`;
  }
  if (issue.keyword === 'additionalProperties') return `${field} has an unknown field "${String(issue.params.additionalProperty)}"`;
  return `${field} ${issue.message ?? 'is invalid'}`;
}

function validationType(error: { validation?: ValidationIssue[] }): ErrorType {
  return error.validation?.[0]?.instancePath.endsWith('/tracking_id') ? 'invalid_tracking_id' : 'invalid_request';
}

/** Every failure leaves in the contract's error shape (docs/api.md). */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: ValidationIssue[] }, request, reply) => {
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return sendError(reply, error.type, error.message);
    }
    if (error.validation) return sendError(reply, validationType(error), describeValidation(error));
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return status === 503 ? sendError(reply, 'service_unavailable', 'service unavailable') : sendError(reply, 'internal_error', 'internal error');
    }
    const known = FRAMEWORK_ERRORS[status] ?? FRAMEWORK_ERRORS[400]!;
    return sendError(reply, known.type, known.message ?? error.message);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, 'route_not_found', `no route ${request.method} ${request.url.split('?')[0]}`));
}
