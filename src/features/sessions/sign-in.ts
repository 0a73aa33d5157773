import type { Turn } from '../../runtime/runtime.js';
import type { UserView } from '../users/directory.js';
import { endSession, type SignOutDeps } from './sign-out.js';

/**
 * Starts a session of `user` inside a turn holding the user's lock (SessionStore.start). A user already
 * holding LIVE_SESSIONS_PER_USER_LIMIT live sessions first loses its oldest, ended as a sign-out of that
 * one session ends it. The cap bounds what a sign-in or a sign-out goes through in its one turn.
 */
export function startSession(deps: SignOutDeps, turn: Turn, user: UserView): { sid: string; refreshToken: string } {
  const { appId, id: userId } = user.context;
  for (const sid of deps.sessions.crowdedOut(turn, appId, userId)) endSession(deps, turn, appId, userId, sid);
  return deps.sessions.start(turn, user);
}
