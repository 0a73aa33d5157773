import { isDeepStrictEqual } from 'node:util';
import type { Key } from '../../storage/store.js';
import { sessionMarksOf } from '../../auth/revocation.js';
import type { UserContext } from '../../../machines/user.machine.js';
import { counterMatchesRecount, type Invariant } from '../../verify/invariants.js';
import { addressesOf } from './addresses.js';
import { isFileDescriptor } from './profile-files.js';
import { encodeGroupEntries } from './view-record.js';
import { USER_KIND, userCountKey } from './directory.js';

interface StoredUser {
  snapshot: { context: UserContext };
}

/** What must hold between user records, their count, their lookup index and their read model. */
export const userInvariants: Invariant[] = [
  {
    name: 'user count',
    check: (deps) => counterMatchesRecount(deps, 'users', deps.runtime.table(USER_KIND), userCountKey),
  },
  {
    name: 'user lookup index',
    check(deps) {
      const problems: string[] = [];
      const lookup = deps.store.db<true>('user_lookup');
      const expected = new Set<string>();
      for (const { value } of deps.runtime.table(USER_KIND).getRange({})) {
        const c = (value as unknown as StoredUser).snapshot.context;
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
    name: 'profile read model',
    check(deps) {
      const problems: string[] = [];
      const users = deps.runtime.table(USER_KIND);
      for (const key of users.getKeys({})) {
        const [appId, userId] = key as [string, string];
        const prepared = deps.profiles.platformBytes(appId, userId);
        const user = deps.users.get(appId, userId)!;
        const { platformHead, tail } = deps.profiles.renderBodies(user, deps.apps.require(appId).schema);
        const fresh = platformHead + deps.profiles.groupsJson(appId, userId) + tail;
        const access = deps.profiles.signedInView(appId, userId)?.access;
        const listed = encodeGroupEntries(deps.profiles.groupEntries(appId, userId));
        if (!prepared) problems.push(`user ${userId} of ${appId} has no prepared profile`);
        else if (Buffer.from(prepared).toString('utf8') !== fresh) problems.push(`prepared profile of ${userId} is stale`);
        else if (!deps.profiles.storedGroups(appId, userId)!.equals(listed)) problems.push(`stored groups of ${userId} of ${appId} are stale`);
        else if (!isDeepStrictEqual(access, { state: user.state, ...sessionMarksOf(user.context) })) {
          problems.push(`access marks of ${userId} of ${appId} are stale`);
        }
      }
      for (const key of deps.profiles.records.getKeys({})) {
        if (!users.doesExist(key)) problems.push(`prepared profile ${JSON.stringify(key)} belongs to no user`);
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
