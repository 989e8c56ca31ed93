import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../services/errors.ts';

const MESSAGE_BY_STATUS: Record<number, string> = {
  413: 'request body is larger than 1 MiB',
  415: 'request body must be JSON (Content-Type: application/json)',
};

export function sendError(reply: FastifyReply, statusCode: number, message: string): FastifyReply {
  return reply.code(statusCode).type('application/json').send({ error: { code: statusCode, message } });
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

/** Every failure leaves in the contract's error shape (section 2.7). */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: ValidationIssue[] }, request, reply) => {
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return sendError(reply, error.statusCode, error.message);
    }
    if (error.validation) return sendError(reply, 400, describeValidation(error));
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return sendError(reply, status === 503 ? 503 : 500, status === 503 ? 'service unavailable' : 'internal error');
    }
    return sendError(reply, status, MESSAGE_BY_STATUS[status] ?? error.message);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, 404, `no route ${request.method} ${request.url.split('?')[0]}`));
}
