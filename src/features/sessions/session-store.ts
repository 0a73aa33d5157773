import { newSessionId, sessionIdAfter } from '../../auth/access-tokens.js';
import { sessionStart, userCreatedAt } from '../../auth/revocation.js';
import { MAX_ACCESS_TOKEN_TTL_SECONDS } from '../../config.js';
import { randomToken } from '../../lib/ids.js';
import { tokenKey } from '../../lib/secrets.js';
import type { Turn } from '../../runtime/runtime.js';
import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { UserView } from '../users/directory.js';

/** A refresh token lives this long after it was issued; each refresh issues a new one (sliding). */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;

/** How many live sessions a user holds at most in an application: a sign-in past it ends the oldest. */
export const LIVE_SESSIONS_PER_USER_LIMIT = 100;

/** Where each user's newest session ID is kept (`SessionStore`). */
export const NEWEST_SESSIONS_DB = 'newest_sessions';

/** A session's start is in its ID (`sessionStart`). */
interface SessionRecord {
  /** Hash of the one refresh token of this session that may still be used. */
  current: string;
  /** When `current` expires: after that the session is over. */
  expiresAt: number;
  /**
   * When the session's access tokens have all expired, by the lifetime each was issued with: an ended
   * session's revocation is kept until then, whatever lifetime is configured by the time it ends.
   * Absent in sessions started before it was kept.
   */
  accessUntil?: number;
}

/** An access token is signed just after the turn that records its session: its `exp` may be that much later. */
const SIGNING_MARGIN_MS = 60_000;

/** What a refresh token's hash points at; kept after use, so a second use is recognised as reuse. */
export interface RefreshRecord {
  appId: string;
  userId: string;
  sid: string;
  expiresAt: number;
}

export type Rotation =
  | { kind: 'rotated'; sid: string; refreshToken: string }
  /** The token was valid once and has been used: its session must die. */
  | { kind: 'reused'; sid: string }
  | { kind: 'invalid' };

/**
 * Sessions and their refresh tokens. A session is one sign-in; its refresh tokens form a chain in
 * which only the newest may be used. Tokens are stored only as HMACs under the pepper. Every write
 * runs in a turn holding the user's lock, so reads of committed state inside it are current.
 *
 * Tables: `sessions` [appId, userId, sid] → SessionRecord; `refresh_tokens` [hash] → RefreshRecord;
 * `session_tokens` [appId, userId, sid, expiresAt, hash]: the chain, so a user's or a session's
 * tokens are a key range, and expired ones a range prefix; `newest_sessions` [appId, userId] → the ID of
 * the newest session the user ever started, kept when that session ends.
 */
export class SessionStore {
  private readonly sessions: Database<SessionRecord, Key>;
  private readonly tokens: Database<RefreshRecord, Key>;
  private readonly chain: Database<true, Key>;
  private readonly newest: Database<string, Key>;

  constructor(
    store: Store,
    private readonly pepper: Buffer,
    private readonly accessTokenTtlMs: number,
  ) {
    this.sessions = store.db<SessionRecord>('sessions');
    this.tokens = store.db<RefreshRecord>('refresh_tokens');
    this.chain = store.db<true>('session_tokens');
    this.newest = store.db<string>(NEWEST_SESSIONS_DB);
  }

  /** The committed record of a refresh token, to know whose lock to take. */
  lookup(refreshToken: string): RefreshRecord | undefined {
    return this.tokens.get(tokenKey(this.pepper, refreshToken));
  }

  /**
   * Starts a session for `user` and answers its first refresh token. A session starts after the
   * user's sign-out-everywhere watermark, even within the same millisecond as that sign-out, and not
   * before the user's creation, though the clock was stepped back since (NTP): either would read as revoked.
   * Its ID sorts after the user's newest session's, ended or not, so that the order of a user's session
   * IDs is the order they started in (ULIDs of one millisecond sort at random): the cap ends the oldest.
   * Within that session's millisecond it starts in the same one, never later, so as not to outlive a
   * sign-out-everywhere of that millisecond (which reads `newestStart`).
   */
  start(turn: Turn, user: UserView): { sid: string; refreshToken: string } {
    const { appId, id: userId, revokedBefore } = user.context;
    const newest = this.newest.get([appId, userId]);
    const newestStart = newest === undefined ? 0 : sessionStart(newest);
    const at = Math.max(turn.now, revokedBefore + 1, userCreatedAt(user.context), newestStart);
    // The next millisecond only when the newest ID's random part is the largest there is: never in practice.
    const sid = at === newestStart ? (sessionIdAfter(newest!) ?? newSessionId(at + 1)) : newSessionId(at);
    const refreshToken = this.issue(turn, appId, userId, sid);
    turn.put(this.newest, [appId, userId], sid);
    return { sid, refreshToken };
  }

  /** Spends `refreshToken` for its successor (the turn holds the token's user lock). */
  rotate(turn: Turn, refreshToken: string): Rotation {
    const hash = tokenKey(this.pepper, refreshToken);
    const record = this.tokens.get(hash);
    if (!record || record.expiresAt <= turn.now) return { kind: 'invalid' };
    const session = this.sessions.get([record.appId, record.userId, record.sid]);
    if (!session) return { kind: 'invalid' };
    if (session.current !== hash) return { kind: 'reused', sid: record.sid };
    this.pruneChain(turn, record.appId, record.userId, record.sid, turn.now);
    const successor = this.issue(turn, record.appId, record.userId, record.sid);
    return { kind: 'rotated', sid: record.sid, refreshToken: successor };
  }

  /**
   * When the user's newest session started (0 for none), though it has ended: a refresh sign-out leaves
   * its access tokens alive. A session starts at its clock reading, which may be stepped back since.
   */
  newestStart(appId: string, userId: string): number {
    const newest = this.newest.get([appId, userId]);
    return newest === undefined ? 0 : sessionStart(newest);
  }

  /** Until when an access token of the session may still be presented, so its revocation must be kept. */
  revocationUntil(appId: string, userId: string, sid: string, now: number): number {
    return this.sessions.get([appId, userId, sid])?.accessUntil ?? now + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000;
  }

  /** Whether the session may still be refreshed: not ended, not expired. */
  isLive(appId: string, userId: string, sid: string, now: number): boolean {
    const session = this.sessions.get([appId, userId, sid]);
    return session !== undefined && session.expiresAt > now;
  }

  /** Ends one session: none of its refresh tokens works any more. */
  endSession(turn: Turn, appId: string, userId: string, sid: string): void {
    turn.del(this.sessions, [appId, userId, sid]);
    this.pruneChain(turn, appId, userId, sid, Infinity);
  }

  /** Ends every session of a user. */
  endAll(turn: Turn, appId: string, userId: string): void {
    for (const sid of this.sessions.getKeys({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] })) {
      this.endSession(turn, appId, userId, (sid as Key[])[2] as string);
    }
  }

  /** Ends every session of a deleted user and forgets its newest. */
  forgetAll(turn: Turn, appId: string, userId: string): void {
    this.endAll(turn, appId, userId);
    turn.del(this.newest, [appId, userId]);
  }

  private issue(turn: Turn, appId: string, userId: string, sid: string): string {
    const refreshToken = randomToken();
    const hash = tokenKey(this.pepper, refreshToken);
    const expiresAt = turn.now + REFRESH_TOKEN_TTL_MS;
    const issued = this.sessions.get([appId, userId, sid])?.accessUntil ?? 0;
    const accessUntil = Math.max(issued, turn.now + this.accessTokenTtlMs + SIGNING_MARGIN_MS);
    turn.put(this.sessions, [appId, userId, sid], { current: hash, expiresAt, accessUntil } satisfies SessionRecord);
    turn.put(this.tokens, hash, { appId, userId, sid, expiresAt } satisfies RefreshRecord);
    turn.put(this.chain, [appId, userId, sid, expiresAt, hash], true);
    return refreshToken;
  }

  /** Drops the session's tokens that expire before `until` (all of them for `Infinity`). */
  private pruneChain(turn: Turn, appId: string, userId: string, sid: string, until: number): void {
    const end = until === Infinity ? [appId, userId, sid, HIGH_KEY] : [appId, userId, sid, until];
    for (const key of this.chain.getKeys({ start: [appId, userId, sid, 0], end })) {
      turn.del(this.chain, key as Key[]);
      turn.del(this.tokens, (key as Key[])[4]);
    }
  }

  /**
   * The user's live sessions a new one would put past LIVE_SESSIONS_PER_USER_LIMIT, oldest first
   * (ended ones are gone from the index). Sessions whose last refresh token has expired are over:
   * they are forgotten here and take no place.
   */
  crowdedOut(turn: Turn, appId: string, userId: string): string[] {
    const live: string[] = [];
    for (const { key, value } of this.sessions.getRange({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] })) {
      const sid = (key as Key[])[2] as string;
      if (value.expiresAt <= turn.now) this.endSession(turn, appId, userId, sid);
      else live.push(sid);
    }
    return live.slice(0, Math.max(0, live.length - LIVE_SESSIONS_PER_USER_LIMIT + 1));
  }
}

/**
 * Format 11 → 12: each user's newest session ID is kept in `newest_sessions`; format 11 read it from its
 * live sessions, so each user's newest live one is recorded (the starts of those ended before are not known).
 */
export function recordFormat11NewestSessions(store: Store): void {
  const newest = store.db<string>(NEWEST_SESSIONS_DB);
  // Keys sort by user, then session ID: each user's last one is its newest.
  for (const key of store.db<SessionRecord>('sessions').getKeys({})) {
    const [appId, userId, sid] = key as [string, string, string];
    newest.put([appId, userId], sid);
  }
}
