import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from '../../services/errors.ts';

/**
 * JSON bodies through secure-json-parse (no prototype poisoning). An empty body counts as no
 * body, so bodiless POSTs such as cancel work whatever Content-Type the client library adds.
 * Fastify's other built-in parser (text/plain) is removed: a non-empty body that is not JSON is 415.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new ApiError('invalid_json', 'request body is not valid JSON'), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    done(new ApiError('unsupported_media_type', 'request body must be JSON (Content-Type: application/json)'), undefined);
  });
}
