import { unauthorized } from '../../lib/errors.js';
import type { RequestContext } from '../../http/context.js';

/** Who changes a group: a signed-in user (`/me`) with owner rights checked, or the application. */
export type Acting = { kind: 'app'; appId: string } | { kind: 'user'; appId: string; userId: string; sessionId: string };

export function actingOf(ctx: RequestContext): Acting {
  const caller = ctx.caller;
  if (caller?.kind === 'user') return { kind: 'user', appId: caller.appId, userId: caller.userId, sessionId: caller.sessionId };
  if (caller?.kind === 'app') return { kind: 'app', appId: caller.appId };
  throw unauthorized();
}

/** `invited_by`/`added_by` (ADDENDUM §5): `user:<id>` or `app:<app id>`. */
export const partyOf = (acting: Acting) => (acting.kind === 'user' ? `user:${acting.userId}` : `app:${acting.appId}`);

/** `created_by`/`updated_by`: the user's ID, or `app:<app id>` when no user acted. */
export const authorOf = (acting: Acting) => (acting.kind === 'user' ? acting.userId : `app:${acting.appId}`);
