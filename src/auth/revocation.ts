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

export const sessionMarksOf = (user: UserContext): SessionMarks => ({
  createdAt: Date.parse(user.meta.created),
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
 * Whether a session of this user is over: it started before the user was created (a user ID reused
 * after a deletion inherits nothing), at or before the user's last sign-out-everywhere (`<=`: the same
 * millisecond counts; sessions started after it are stamped past it by SessionStore.start), or it was
 * revoked on its own.
 */
export function sessionRevoked(marks: SessionMarks, sid: string, started = sessionStart(sid)): boolean {
  return (
    started <= marks.revokedBefore || started < marks.createdAt || marks.revokedSessions.some((s) => s.sid === sid)
  );
}

/** A `/me` caller's session, as its access token names it. */
export interface SessionOf {
  userId: string;
  sessionId: string;
}

/** The 401 for a token whose user is gone (`undefined`) or disabled, or whose session is over. */
export function assertSessionHolds(user: (SessionMarks & { state: string }) | undefined, sid: string, started = sessionStart(sid)): void {
  if (!user) throw tokenRefused('The user of this token no longer exists');
  if (user.state === 'disabled') throw tokenRefused('The user is disabled', 'E_USER_DISABLED');
  if (sessionRevoked(user, sid, started)) throw tokenRefused('The access token has been revoked', 'E_TOKEN_REVOKED');
}
