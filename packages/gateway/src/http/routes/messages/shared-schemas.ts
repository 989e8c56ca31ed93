import { Type } from 'typebox';
import { MESSAGE_STATUSES } from '../../../services/vocabulary.ts';
import { DateTime, Nullable, TrackingId } from '../../schemas.ts';

export const SendMode = Type.Union([Type.Literal('plain'), Type.Literal('hashphone')], {
  description: "plain or hashphone; the sender account's default when omitted",
});

export const SendAt = Type.String({
  description: 'ISO 8601; without an offset it is Vietnam time (UTC+7). At most 60 days ahead; a past time means now',
});

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
