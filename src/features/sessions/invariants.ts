import type { Invariant } from '../../verify/invariants.js';
import type { Key } from '../../storage/store.js';
import { NEWEST_SESSIONS_DB, type RefreshRecord } from './session-store.js';

/** Sessions, refresh tokens and the per-session chain agree (see SessionStore for the tables). */
export const sessionInvariants: Invariant[] = [
  {
    name: 'refresh token chains',
    check(deps) {
      const problems: string[] = [];
      const sessions = deps.store.db<{ current: string }>('sessions');
      const tokens = deps.store.db<RefreshRecord>('refresh_tokens');
      const chain = deps.store.db<true>('session_tokens');
      const chained = new Set<string>();
      for (const key of chain.getKeys({})) {
        const [appId, userId, sid, expiresAt, hash] = key as Key[];
        chained.add(String(hash));
        const token = tokens.get(hash);
        if (!token) problems.push(`chain entry of session ${String(sid)} names no refresh token`);
        else if (token.appId !== appId || token.userId !== userId || token.sid !== sid || token.expiresAt !== expiresAt) {
          problems.push(`refresh token of session ${String(sid)} disagrees with its chain entry`);
        }
        if (!sessions.doesExist([appId, userId, sid])) problems.push(`chain entry names no session ${String(sid)}`);
      }
      for (const hash of tokens.getKeys({})) {
        if (!chained.has(String(hash))) problems.push('a refresh token is in no session chain');
      }
      for (const { key, value } of sessions.getRange({})) {
        const [appId, userId, sid] = key as [string, string, string];
        const token = tokens.get(value.current);
        if (!token || token.sid !== sid) problems.push(`session ${sid} has no current refresh token`);
        // Deleting a user ends its sessions.
        if (!deps.users.exists(appId, userId)) problems.push(`session ${sid} belongs to user ${userId} of ${appId}, which does not exist`);
      }
      return problems;
    },
  },
  {
    name: 'newest sessions',
    check(deps) {
      const problems: string[] = [];
      const newest = deps.store.db<string>(NEWEST_SESSIONS_DB);
      for (const key of deps.store.db('sessions').getKeys({})) {
        const [appId, userId, sid] = key as [string, string, string];
        const recorded = newest.get([appId, userId]);
        // A session's start is in its ID, so the newest one's ID sorts last (SessionStore.start).
        if (recorded === undefined || recorded < sid) problems.push(`session ${sid} is newer than its user's newest session`);
      }
      for (const key of newest.getKeys({})) {
        const [appId, userId] = key as [string, string];
        if (!deps.users.exists(appId, userId)) problems.push(`newest session of user ${userId} of ${appId}, which does not exist`);
      }
      return problems;
    },
  },
];
