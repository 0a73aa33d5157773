import { callerUser } from '../../auth/bearer-auth.js';
import type { RequestContext } from '../../http/context.js';

/** A signed-in user acting on `/me`: the only kind that may answer an invite. */
export type UserActing = { kind: 'user'; appId: string; userId: string; sessionId: string; userCreatedAt: number };

/** Who changes a group: a signed-in user (`/me`) with owner rights checked, or the application. */
export type Acting = { kind: 'app'; appId: string } | UserActing;

/** The bearer caller as a user acting; 401 for any other caller. */
export function userActingOf(ctx: RequestContext): UserActing {
  const { appId, userId, sessionId, userCreatedAt } = callerUser(ctx);
  return { kind: 'user', appId, userId, sessionId, userCreatedAt };
}

export function actingOf(ctx: RequestContext): Acting {
  const caller = ctx.caller;
  if (caller?.kind === 'app') return { kind: 'app', appId: caller.appId };
  return userActingOf(ctx);
}

/** `invited_by`/`added_by` (ADDENDUM §5): `user:<id>` or `app:<app id>`. */
export const partyOf = (acting: Acting) => (acting.kind === 'user' ? `user:${acting.userId}` : `app:${acting.appId}`);

/** `created_by`/`updated_by`: the user's ID, or `app:<app id>` when no user acted. */
export const authorOf = (acting: Acting) => (acting.kind === 'user' ? acting.userId : `app:${acting.appId}`);
