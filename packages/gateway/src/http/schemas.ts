import { Type, type TSchema } from 'typebox';
import { ERROR_TYPES } from '../services/errors.ts';

/** Section 2.7: every error, on every route, unknown routes included. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: 'Equals the HTTP status' }),
      type: Type.Union(ERROR_TYPES.map((type) => Type.Literal(type)), { description: 'Stable identifier from the error catalogue (docs/errors.md): branch on it, never on message' }),
      message: Type.String({ description: 'Human-readable explanation; its wording may change' }),
    }),
  },
  { $id: 'ErrorBody', description: 'The error body of docs/api.md' },
);

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const TrackingId = Type.String({
  maxLength: 48,
  pattern: '^[A-Za-z0-9._-]+$',
  description: 'Client reconciliation code: at most 48 letters, digits, dots, hyphens or underscores',
});

export const TemplateData = Type.Record(Type.String(), Type.String(), {
  description: 'Parameter name → string value, exactly the params of the template',
});

export const DateTime = Type.String({ description: 'ISO 8601 date-time, UTC with milliseconds' });
