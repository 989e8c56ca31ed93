import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../../services/errors.ts';
import { receivePlatformEvent } from '../../../services/platform-events.ts';
import { requestLog, type App, type RouteDependencies } from '../../route-support.ts';
import type { PlatformCaller } from '../../../services/context.ts';
import { GATEWAY_FAILURES } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { parseJsonBody } from '../../plugins/json-body.ts';

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
    // The bounds of every other body (nesting, non-finite numbers, NUL) hold here too.
    done(null, { raw, json: parseJsonBody(raw.toString('utf8'), 'remove') } satisfies SignedBody);
  } catch (error) {
    done(error as ApiError, undefined);
  }
}

/**
 * POST /platform/zns/events: the ZNS app's webhook URL. No API key: the X-ZEvent-Signature is
 * the authentication. Registered in its own plugin context so that its body parsers (which keep
 * the raw bytes, whatever the Content-Type) do not replace the rest of the app's.
 */
const PLATFORM: PlatformCaller = { kind: 'platform' };

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
          tags: ['Platform'],
          operationId: 'receivePlatformEvent',
          summary: 'Receive the ZNS platform webhook events (set this URL in the Zalo app)',
          description: [
            'Called by the platform, not by customers. Authenticated by `X-ZEvent-Signature: mac=<sha256 hex of app_id + raw body + timestamp + OA Secret Key>` (plain SHA-256, not HMAC; the `mac=` prefix is optional and `oa_id` is accepted in place of `app_id`), with the OA Secret Key given when the sender account was connected.',
            '`user_received_message` with `message.delivery_time` marks a queued, sending or sent message delivered (a repeated event changes nothing) and queues its delivery report for the customer webhook; `change_template_status` updates the template status; `change_oa_daily_quota` makes the next quota lookup of that sender account ask the platform again. Other events, duplicates and events for unknown messages are answered 200 and ignored.',
            'Missing or wrong signature, or a sender account that is not connected or has no OA Secret Key: 401. A body that is not JSON: 400.',
          ].join('\n\n'),
          security: [],
          response: { 200: Type.Object({ ok: Type.Literal(true) }) },
          'x-request-headers': {
            'X-ZEvent-Signature': {
              description: 'mac= and the lowercase hex SHA-256 of app_id + raw body + timestamp + OA Secret Key',
              example: 'mac=9a4e1f0c2b7d8e3a5f6c1d2e3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a',
            },
          },
          'x-request-examples': {
            delivered: {
              summary: 'A message was delivered to the phone',
              value: {
                app_id: '2074138120372622001',
                event_name: 'user_received_message',
                sender: { id: EXAMPLE.oaId },
                recipient: { id: '8757029114925470412' },
                message: { msg_id: EXAMPLE.providerMessageId, delivery_time: '1795918533518', tracking_id: EXAMPLE.messageId },
                timestamp: '1795918533600',
              },
            },
            templateStatus: {
              summary: 'A template was disabled by the platform',
              value: {
                app_id: '2074138120372622001',
                event_name: 'change_template_status',
                oa_id: EXAMPLE.oaId,
                template_id: EXAMPLE.orderTemplateId,
                status: { prev_status: 'ENABLE', new_status: 'DISABLE' },
                reason: 'Vi phạm chính sách nội dung',
                timestamp: '1795918600000',
              },
            },
          },
          'x-responses': {
            200: { description: 'Verified: applied, or ignored when it is a duplicate or not ours. The platform stops retrying it.', examples: { ok: { summary: 'Received', value: { ok: true } } } },
          },
          'x-error-types': ['invalid_request', 'invalid_json', 'invalid_event_signature', 'payload_too_large', ...GATEWAY_FAILURES],
        },
      },
      async (request) => {
        const body = request.body;
        if (!isSignedBody(body)) throw new ApiError('invalid_request', 'request body must be a JSON event');
        const signature = request.headers['x-zevent-signature'];
        const ctx = route.contextFor(PLATFORM, requestLog(request));
        await receivePlatformEvent({ ctx, input: { rawBody: body.raw, event: body.json, signature: typeof signature === 'string' ? signature : undefined } });
        return { ok: true as const };
      },
    );
  });
}
