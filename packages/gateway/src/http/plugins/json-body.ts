import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from '../../services/errors.ts';

/**
 * JSON bodies through secure-json-parse (no prototype poisoning). An empty body counts as no
 * body, so bodiless POSTs such as cancel work whatever Content-Type the client library adds.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new ApiError(400, 'request body is not valid JSON'), undefined);
    }
  });
}
