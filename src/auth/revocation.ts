import { decodeTime } from 'ulid';
import type { UserContext } from '../../machines/user.machine.js';

/** The start of a session, from its ULID-based ID (0 for a malformed one). */
function sessionStart(sid: string): number {
  try {
    return decodeTime(sid.slice(sid.indexOf('_') + 1));
  } catch {
    return 0;
  }
}

/**
 * Whether a session of this user is over: it started before the user was created (a user ID reused
 * after a deletion inherits nothing), at or before the user's last sign-out-everywhere (`<=`: the same
 * millisecond counts; sessions started after it are stamped past it by SessionStore.start), or it was
 * revoked on its own.
 */
export function sessionRevoked(user: UserContext, sid: string): boolean {
  const started = sessionStart(sid);
  return (
    started <= user.revokedBefore ||
    started < Date.parse(user.meta.created) ||
    user.revokedSessions.some((s) => s.sid === sid)
  );
}
