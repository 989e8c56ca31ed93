import { Type } from 'typebox';
import { MAX_INT32 } from '../../../lib/limits.ts';
import { MESSAGE_STATUSES } from '../../../services/vocabulary.ts';
import { DateTime, Nullable, TemplateData, TrackingId } from '../../schemas.ts';

export const SendMode = Type.Union([Type.Literal('plain'), Type.Literal('hashphone')], {
  description: "plain or hashphone; the sender account's default when omitted",
});

export const SendAt = Type.String({
  description: 'ISO 8601; without an offset it is Vietnam time (UTC+7). At most 60 days ahead; a past time means now',
});

/** A single send's body fields (POST /api/v1/messages/send); the console's send takes them too. */
export const SEND_FIELDS = {
  template_id: Type.String({ minLength: 1 }),
  phone: Type.String({ minLength: 1, description: 'Local (0…), +84… or 84… form; normalised to 84…, not validated' }),
  template_data: Type.Optional(TemplateData),
  tracking_id: Type.Optional(TrackingId),
  send_at: Type.Optional(SendAt),
  mode: Type.Optional(SendMode),
};

export const SendBody = Type.Object(SEND_FIELDS, { additionalProperties: false });

export const SendResponse = Type.Object({ msg_id: Type.String(), tracking_id: Type.String(), status: Type.Literal('queued'), scheduled_at: Nullable(DateTime) });

/** A batch's body fields (POST /api/v1/messages/batch); the console's batch takes them too. */
export const BATCH_FIELDS = {
  template_id: Type.String({ minLength: 1 }),
  recipients: Type.Array(
    Type.Object(
      {
        phone: Type.Optional(Type.String({ description: 'Required; a recipient without one gets missing_phone' })),
        template_data: Type.Optional(TemplateData),
        tracking_id: Type.Optional(TrackingId),
      },
      { additionalProperties: false },
    ),
    { minItems: 1, maxItems: 500, description: '1 to 500 recipients; 100 to 200 per request is advised' },
  ),
  send_at: Type.Optional(SendAt),
  mode: Type.Optional(SendMode),
};

export const BatchBody = Type.Object(BATCH_FIELDS, { additionalProperties: false });

export const BatchResultItem = Type.Object({
  phone: Type.Optional(Type.String({ description: 'Normalised number (batch only, absent for RSA)' })),
  msg_id: Type.Optional(Type.String({ description: 'Present only when status is queued' })),
  tracking_id: Type.Optional(TrackingId),
  status: Type.Union([Type.Literal('queued'), Type.Literal('error')]),
  error: Type.Optional(
    Type.String({
      description: 'Present only when status is error: a stable code, a colon and an explanation. Codes: invalid_template_data, missing_phone, daily_quota_exceeded, rsa_phone_invalid',
    }),
  ),
});

export const BatchResponse = Type.Object({
  accepted: Type.Integer({ description: 'Number actually queued' }),
  total: Type.Integer(),
  scheduled_at: Nullable(DateTime),
  results: Type.Array(BatchResultItem, { description: 'One per recipient, in request order' }),
});

export const MessageStatusSchema = Type.Enum(MESSAGE_STATUSES);

export const MessageRecord = Type.Object({
  msg_id: Type.String(),
  tracking_id: Type.String(),
  status: MessageStatusSchema,
  phone: Nullable(Type.String({ description: 'Null for RSA messages' })),
  carrier: Nullable(Type.String({ description: 'Viettel, Mobifone, Vinaphone, Vietnamobile, Gmobile, Itel, Reddi; null when unknown or RSA' })),
  source: Type.String({ description: 'api for messages accepted through /api/v1, console for the console' }),
  template_id: Type.String(),
  oa_id: Type.String(),
  provider_msg_id: Nullable(Type.String({ description: 'Message code on the platform side, once sent' })),
  error_code: Nullable(Type.Integer({ description: "The platform's integer error code, or a negative code of the service's own" })),
  error_message: Nullable(Type.String()),
  error_reason: Nullable(Type.String({ description: 'Vietnamese explanation, only when failed' })),
  scheduled_at: Nullable(DateTime),
  sent_at: Nullable(DateTime),
  delivered_at: Nullable(DateTime),
  failed_at: Nullable(DateTime),
  created_at: DateTime,
});

/** GET /api/v1/messages and the console's message list: every filter, one page. */
export const ListMessagesQuery = Type.Object(
  {
    tracking_id: Type.Optional(Type.String({ description: 'Exact match' })),
    phone: Type.Optional(Type.String({ description: 'Exact match on the normalised number; RSA messages cannot be found this way' })),
    status: Type.Optional(MessageStatusSchema),
    template_id: Type.Optional(Type.String()),
    oa_id: Type.Optional(Type.String()),
    from: Type.Optional(Type.String({ description: 'Lower bound on created_at, ISO 8601 (Vietnam time without an offset)' })),
    to: Type.Optional(Type.String({ description: 'Upper bound on created_at' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32, default: 0, description: 'Records skipped, newest first' })),
  },
  { additionalProperties: false },
);

export const MessagePageSchema = Type.Object({
  messages: Type.Array(MessageRecord),
  limit: Type.Integer(),
  offset: Type.Integer(),
  count: Type.Integer({ description: 'Records in this page' }),
  has_more: Type.Boolean(),
});
