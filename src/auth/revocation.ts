import { decodeTime } from 'ulid';
import { tokenRefused } from '../lib/errors.js';
import type { RevokedSession, UserContext } from '../../machines/user.machine.js';

/** What decides whether a user's sessions still hold: a few fields of the user, kept apart for the hot path. */
export interface SessionMarks {
  /** When the user was created (ms): a reused user ID inherits no session. */
  createdAt: number;
  revokedBefore: number;
  revokedSessions: RevokedSession[];
}

/** When the user was created (ms). `meta.created` is set once, when the user is made, and never changes. */
export const userCreatedAt = (user: UserContext): number => Date.parse(user.meta.created);

export const sessionMarksOf = (user: UserContext): SessionMarks => ({
  createdAt: userCreatedAt(user),
  revokedBefore: user.revokedBefore,
  revokedSessions: user.revokedSessions,
});

/** The start of a session, from its ULID-based ID (0 for a malformed one). */
export function sessionStart(sid: string): number {
  try {
    return decodeTime(sid.slice(sid.indexOf('_') + 1));
  } catch {
    return 0;
  }
}

/**
 * Whether a session of this user is over: it is another user's (a user ID reused after a deletion
 * inherits nothing), it started at or before the user's last sign-out-everywhere (`<=`: the same
 * millisecond counts; sessions started after it are stamped past it by SessionStore.start), or it was
 * revoked on its own. `issuedFor` is the creation instant of the user the token was issued for: any
 * other than this user's is an earlier user's, whatever the clock read then (stepped back, or the same
 * millisecond). Without it, a session started before the user was created is an earlier user's: for a
 * refresh token (whose session dies with its user, so this only restates it), and for an access token
 * issued before tokens carried the instant, a use that lives only until the longest access-token
 * lifetime (MAX_ACCESS_TOKEN_TTL_SECONDS) has passed since the upgrade.
 */
export function sessionRevoked(marks: SessionMarks, sid: string, issuedFor?: number, started = sessionStart(sid)): boolean {
  return (
    started <= marks.revokedBefore ||
    (issuedFor === undefined ? started < marks.createdAt : issuedFor !== marks.createdAt) ||
    marks.revokedSessions.some((s) => s.sid === sid)
  );
}

/** A `/me` caller's session, as its access token names it. */
export interface SessionOf {
  userId: string;
  sessionId: string;
  /**
   * When the user the request was authenticated as was created (ms): the token's own claim, or for a
   * token without one the user that passed its time check. A user made again under its ID since is another.
   */
  userCreatedAt: number;
}

/** The 401 for a token whose user is gone (`undefined`) or disabled, or whose session is over (`sessionRevoked`). */
export function assertSessionHolds(
  user: (SessionMarks & { state: string }) | undefined,
  sid: string,
  issuedFor?: number,
  started = sessionStart(sid),
): void {
  if (!user) throw tokenRefused('The user of this token no longer exists');
  if (user.state === 'disabled') throw tokenRefused('The user is disabled', 'E_USER_DISABLED');
  if (sessionRevoked(user, sid, issuedFor, started)) throw tokenRefused('The access token has been revoked', 'E_TOKEN_REVOKED');
}
