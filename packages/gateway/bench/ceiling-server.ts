/**
 * The benchmark's ceiling: a bare Fastify 5 app that validates the same body as
 * POST /api/v1/messages/send (a copy of its TypeBox shape, compiled by an Ajv with the gateway's
 * body options) and answers 202 with a fixed small body through the same response schema.
 * No auth, no database, no logging. Started as a child process by run.ts; listens on PORT.
 */
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import { Type } from 'typebox';

const TrackingId = Type.String({ maxLength: 48, pattern: '^[A-Za-z0-9._-]+$' });
const TemplateData = Type.Record(Type.String(), Type.String());

const SendBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1 }),
    phone: Type.String({ minLength: 1 }),
    template_data: Type.Optional(TemplateData),
    tracking_id: Type.Optional(TrackingId),
    send_at: Type.Optional(Type.String()),
    mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('hashphone')])),
  },
  { additionalProperties: false },
);

const Accepted = Type.Object({
  msg_id: Type.String(),
  tracking_id: Type.String(),
  status: Type.Literal('queued'),
  scheduled_at: Type.Union([Type.String(), Type.Null()]),
});

const FIXED = { msg_id: 'msg_ceiling', tracking_id: 'msg_ceiling', status: 'queued', scheduled_at: null } as const;

const bodyAjv = new Ajv({ allErrors: false, useDefaults: true, removeAdditional: false, strict: false, coerceTypes: false });

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 }).withTypeProvider<TypeBoxTypeProvider>();
app.setValidatorCompiler(({ schema }) => bodyAjv.compile(schema));
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/api/v1/messages/send', { schema: { body: SendBody, response: { 202: Accepted } } }, async (_request, reply) => reply.code(202).send(FIXED));

const port = Number(process.env.PORT ?? 0);
await app.listen({ host: '127.0.0.1', port });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
