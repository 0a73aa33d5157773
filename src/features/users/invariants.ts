import { isDeepStrictEqual } from 'node:util';
import type { Key } from '../../storage/store.js';
import { sessionMarksOf } from '../../auth/revocation.js';
import { counterMatchesRecount, type Invariant } from '../../verify/invariants.js';
import { addressesOf } from './addresses.js';
import { isFileDescriptor } from './profile-files.js';
import { encodeGroupEntries } from './view-record.js';
import { userCountKey } from './directory.js';

/** What must hold between user records, their count, their lookup index and their read model. */
export const userInvariants: Invariant[] = [
  {
    name: 'user count',
    check: (deps) => counterMatchesRecount(deps, 'users', deps.profiles.records, userCountKey),
  },
  {
    name: 'user lookup index',
    check(deps) {
      const problems: string[] = [];
      const lookup = deps.store.db<true>('user_lookup');
      const expected = new Set<string>();
      for (const key of deps.profiles.records.getKeys({})) {
        const [appId, userId] = key as [string, string];
        const c = deps.users.get(appId, userId)!.context;
        for (const [kind, address] of addressesOf(c.data, c.verified_data)) {
          const key: Key = [c.appId, kind, address, Date.parse(c.meta.created), c.id];
          expected.add(JSON.stringify(key));
          if (!lookup.doesExist(key)) problems.push(`user ${c.id} of ${c.appId} is not indexed under ${kind} ${address}`);
        }
      }
      for (const key of lookup.getKeys({})) {
        if (!expected.has(JSON.stringify(key))) problems.push(`index entry ${JSON.stringify(key)} names no such user address`);
      }
      return problems;
    },
  },
  {
    // A record is also the user's stored state: what it serves must be what that state renders to.
    name: 'profile read model',
    check(deps) {
      const problems: string[] = [];
      for (const key of deps.profiles.records.getKeys({})) {
        const [appId, userId] = key as [string, string];
        const prepared = deps.profiles.platformBytes(appId, userId)!;
        const user = deps.users.get(appId, userId)!;
        const { platformHead, tail } = deps.profiles.renderBodies(user, deps.apps.require(appId).schema);
        const fresh = platformHead + deps.profiles.groupsJson(appId, userId) + tail;
        const access = deps.profiles.signedInView(appId, userId)?.access;
        const listed = encodeGroupEntries(deps.profiles.groupEntries(appId, userId));
        if (Buffer.from(prepared).toString('utf8') !== fresh) problems.push(`prepared profile of ${userId} is stale`);
        else if (!deps.profiles.storedGroups(appId, userId)!.equals(listed)) problems.push(`stored groups of ${userId} of ${appId} are stale`);
        else if (!isDeepStrictEqual(access, { state: user.state, ...sessionMarksOf(user.context) })) {
          problems.push(`access marks of ${userId} of ${appId} are stale`);
        }
      }
      return problems;
    },
  },
  {
    name: 'profile files',
    // Profile writes rely on it: they look for files to drop among the descriptors in `data`.
    check(deps) {
      const problems: string[] = [];
      const files = deps.store.db<{ sha256: string }>('user_files');
      for (const { key, value } of files.getRange({})) {
        const [appId, userId, field] = key as [string, string, string];
        const described = deps.users.get(appId, userId)?.context.data[field];
        if (!isFileDescriptor(described) || described.sha256 !== value.sha256) {
          problems.push(`stored file ${field} of ${userId} of ${appId} is not what its profile describes`);
        }
      }
      return problems;
    },
  },
];
