import { userLock } from '../users/directory.js';
import type { Turn } from '../../runtime/runtime.js';
import type { Deps } from '../../deps.js';
import type { SessionOf } from '../../auth/revocation.js';

export type SignOutDeps = Pick<Deps, 'runtime' | 'users' | 'sessions' | 'magicLinks'>;

/**
 * How much of a user's sign-in state a sign-out ends (ADDENDUM §4):
 * - `everywhere`: every session, refresh token, pending link and access token, from the next request on;
 * - `refresh`: every refresh token and pending link; access tokens run to expiry;
 * - `session`: one session, its refresh tokens and its access tokens.
 */
export type SignOutScope = { kind: 'everywhere' } | { kind: 'refresh' } | { kind: 'session'; sid: string };

/** Ends one session inside a turn holding the user's lock: its access tokens are refused until they expire anyway. */
export function endSession(deps: SignOutDeps, turn: Turn, appId: string, userId: string, sid: string): void {
  const until = deps.sessions.revocationUntil(appId, userId, sid, turn.now);
  deps.users.change(turn, appId, userId, { type: 'user.revokeSession', sid, until, at: turn.now });
  deps.sessions.endSession(turn, appId, userId, sid);
}

/**
 * Signs a user out; 404 `E_USER_NOT_FOUND` for an unknown user. A user signing itself out (`caller`)
 * is checked again in the turn, as every `/me` write is.
 */
export async function signOut(deps: SignOutDeps, appId: string, userId: string, scope: SignOutScope, caller?: SessionOf): Promise<void> {
  await deps.runtime.run([userLock(appId, userId)], (turn) => {
    const user = caller ? deps.users.requireCaller(turn, appId, caller) : deps.users.require(appId, userId);
    if (scope.kind === 'session') return endSession(deps, turn, appId, userId, scope.sid);
    if (scope.kind === 'everywhere') {
      // Past the watermark, like any session started since the last sign-out (SessionStore.start), and
      // not before a session it ends: one started before the clock was stepped back (NTP) reads as later.
      const at = Math.max(turn.now, user.context.revokedBefore + 1, deps.sessions.newestStart(appId, userId));
      deps.users.change(turn, appId, userId, { type: 'user.revokeAll', at });
    }
    deps.sessions.endAll(turn, appId, userId);
    deps.magicLinks.revokeAll(turn, appId, userId);
  });
}
