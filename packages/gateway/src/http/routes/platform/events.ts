import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import secureJson from 'secure-json-parse';
import { Type } from 'typebox';
import { ApiError } from '../../../services/errors.ts';
import { receivePlatformEvent } from '../../../services/platform-events.ts';
import type { App, RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';

/** What this route's parser hands on: the exact bytes (the signature covers them) and their JSON. */
interface SignedBody {
  raw: Buffer;
  json: unknown;
}

function isSignedBody(body: unknown): body is SignedBody {
  return typeof body === 'object' && body !== null && Buffer.isBuffer((body as Partial<SignedBody>).raw);
}

function parseSigned(_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void): void {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  try {
    done(null, { raw, json: secureJson.parse(raw.toString('utf8'), undefined, { protoAction: 'remove', constructorAction: 'remove' }) } satisfies SignedBody);
  } catch {
    done(new ApiError('invalid_json', 'request body is not valid JSON'), undefined);
  }
}

/**
 * POST /platform/zns/events: the ZNS app's webhook URL. No API key: the X-ZEvent-Signature is
 * the authentication. Registered in its own plugin context so that its body parsers (which keep
 * the raw bytes, whatever the Content-Type) do not replace the rest of the app's.
 */
export async function registerPlatformEvents(app: App, route: RouteDependencies): Promise<void> {
  await app.register(async (scope: FastifyInstance) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseSigned);
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, parseSigned);
    const scoped = scope as unknown as App;
    scoped.post(
      '/platform/zns/events',
      {
        schema: {
          tags: ['platform'],
          summary: 'Receive the ZNS platform webhook events (set this URL in the Zalo app)',
          description: [
            'Called by the platform, not by customers. Authenticated by `X-ZEvent-Signature: mac=<sha256 hex of app_id + raw body + timestamp + OA Secret Key>` (plain SHA-256, not HMAC; the `mac=` prefix is optional and `oa_id` is accepted in place of `app_id`), with the OA Secret Key given when the sender account was connected.',
            '`user_received_message` with `message.delivery_time` marks the message delivered (once per platform `msg_id`) and queues its delivery report for the customer webhook; `change_template_status` updates the template status; `change_oa_daily_quota` makes the next quota lookup of that sender account ask the platform again. Other events, duplicates and events for unknown messages are answered 200 and ignored.',
            'Missing or wrong signature, or a sender account that is not connected or has no OA Secret Key: 401. A body that is not JSON: 400.',
          ].join('\n\n'),
          security: [],
          response: { 200: Type.Object({ ok: Type.Literal(true) }), ...errorResponses(400, 401, 413) },
        },
      },
      async (request) => {
        const body = request.body;
        if (!isSignedBody(body)) throw new ApiError('invalid_request', 'request body must be a JSON event');
        const signature = request.headers['x-zevent-signature'];
        await receivePlatformEvent({
          deps: route.deps,
          log: request.log as unknown as Logger,
          rawBody: body.raw,
          event: body.json,
          signature: typeof signature === 'string' ? signature : undefined,
        });
        return { ok: true as const };
      },
    );
  });
}
