import type { Static } from 'typebox';
import { formatUtc } from '../../lib/vietnam-time.ts';
import type { ConsoleUserWithWorkspace } from '../../services/vocabulary.ts';
import type { SessionView } from '../routes/console/session-schemas.ts';

/** What the console knows of its signed-in user: who, in which workspace, and the CSRF token for changes. */
export function presentSession(session: { user: ConsoleUserWithWorkspace; csrfToken: string; expiresAt: number }): Static<typeof SessionView> {
  const { user } = session;
  return {
    user: { id: user.id, email: user.email, role: user.role },
    workspace: { id: user.workspace_id, name: user.workspace_name },
    csrf_token: session.csrfToken,
    expires_at: formatUtc(session.expiresAt),
  };
}
