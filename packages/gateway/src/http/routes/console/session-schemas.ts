import { Type } from 'typebox';
import { DateTime } from '../../schemas.ts';

export const ConsoleRoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('developer'), Type.Literal('viewer')]);

export const SessionView = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), role: ConsoleRoleSchema }),
  workspace: Type.Object({ id: Type.String(), name: Type.String() }),
  csrf_token: Type.String({ description: 'Send it in `X-CSRF-Token` with every change' }),
  expires_at: DateTime,
});
